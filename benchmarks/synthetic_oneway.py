#!/usr/bin/env python3
"""When should the adaptive synthesiser measure its one-way marginals again? A sweep of ``aim.ONE_WAY_NOISE``.

A script, not a test (see benchmarks/README.md). The adaptive synthesiser measures every one-way marginal, and again
when their noise alone, by their own released counts, is expected above ``ONE_WAY_NOISE`` in total-variation
distance (``aim.second_one_way_sigma``). This runs the real rounds and fit on the tables and bins of
``synthetic_opendp.py`` (its 80% private split) for each threshold given, ``inf`` being "never again" (the rule
before it), and reports the mean two- and three-way TVD over the runs with their standard deviation.

The noise and the selection are numpy stand-ins here (seeded: every threshold sees the same seeds), not OpenDP's
samplers: the distances depend on the noise's distribution, not on where it is drawn, and the release path is
measured by ``synthetic_opendp.py``. Results: ``--results`` (default: printed only).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def one(codes: np.ndarray, sizes: tuple[int, ...], eps: float, delta: float, seed: int) -> dict[str, float]:
    from synthetic_opendp import tvd

    from dpdesk.core.dp.statistics.synthetic import aim_budget
    from dpdesk.core.dp.synthetic import aim
    from dpdesk.core.dp.synthetic.pgm import sample_model

    rng = np.random.default_rng(seed)

    def noise(values: list[int], _l2: float, sigma: float) -> list[int]:
        return [round(v + float(rng.normal(0.0, sigma))) for v in values]

    def pick(scores: list[float], sensitivity: float, epsilon: float) -> int:
        # the exponential mechanism as Gumbel noisy max: exp(eps u / (2 Du))
        return int(
            np.argmax(np.asarray(scores) * epsilon / (2.0 * sensitivity) + rng.gumbel(size=len(scores)))
        )

    released, _model = aim.adaptive_measure(
        codes, sizes, aim_budget(eps, delta, len(sizes), False, 1), noise=noise, pick=pick
    )
    model = aim.final_fit(released)
    fake = sample_model(model, round(model.marginals.total), rng)
    starts = sum(1 for r in released.rounds if r.select_epsilon == 0)
    return {
        "tvd2": tvd(codes, fake, sizes, 2),
        "tvd3": tvd(codes, fake, sizes, 3),
        "again": float(starts > len(sizes)),
        "rounds": float(len(released.rounds) - starts),
    }


def main() -> int:
    from synthetic_opendp import load_table, split

    from dpdesk.core.dp.synthetic import aim

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default="acs12,wage,diamonds")
    ap.add_argument("--eps", default="0.3,1,3")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--thresholds", default="inf,0.02,0.025,0.035,0.05")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--results", type=Path, default=None)
    a = ap.parse_args()
    lines = [
        "| table | ε | ONE_WAY_NOISE | runs | 2-way TVD (sd) | 3-way TVD | measured again | adaptive rounds |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for table in a.tables.split(","):
        _header, sizes, codes = load_table(table)
        train, _test = split(codes)
        for eps in (float(x) for x in a.eps.split(",")):
            for th in (float(x) for x in a.thresholds.split(",")):
                aim.ONE_WAY_NOISE = th
                runs = [one(train, tuple(sizes), eps, a.delta, 1000 + r) for r in range(a.runs)]
                t2 = [r["tvd2"] for r in runs]
                row = {
                    "table": table,
                    "eps": eps,
                    "threshold": th,
                    "tvd2": statistics.mean(t2),
                    "sd2": statistics.stdev(t2) if len(t2) > 1 else 0.0,
                    "tvd3": statistics.mean(r["tvd3"] for r in runs),
                    "again": statistics.mean(r["again"] for r in runs),
                    "rounds": statistics.mean(r["rounds"] for r in runs),
                }
                print(json.dumps(row), flush=True)
                shown = "never" if math.isinf(th) else f"{th:g}"
                lines.append(
                    f"| {table} | {eps:g} | {shown} | {a.runs} | {row['tvd2']:.4f} ({row['sd2']:.4f}) | "
                    f"{row['tvd3']:.4f} | {100 * row['again']:.0f}% | {row['rounds']:.1f} |"
                )
    if a.results is not None:
        a.results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
