#!/usr/bin/env python3
"""dpdesk's synthesisers (MST-style, and the adaptive one, AIM-style) against the independent baseline.

A script, not a test. See benchmarks/README.md ("Synthetic tables"); results go to benchmarks/RESULTS-synth.md.

Two tables: ``survey`` (generated here: 28,000 rows, 7 columns of the issue's shape, one float in 20 public
bins, two ints in 19 and 14 bins, four categories of 2-4 levels, with correlations) and ``diamonds``
(../shared/data/diamonds.csv, 53,940 rows, 10 columns, public bins declared below). Methods:

* ``dpdesk``: :mod:`dpdesk.core.dp.synthetic` (measure, fit, sample) at (epsilon, delta): MST;
* ``aim``: the adaptive synthesiser (:mod:`dpdesk.core.dp.synthetic.aim`, the synthetic statistic's ``"mechanism":
  "aim"``): its rounds through dpdesk's mechanisms (OpenDP), with its default limits (``MAX_CELLS``,
  ``ROUND_ITERATIONS``, ``FINAL_ITERATIONS``), its final fit and the sampler of :mod:`.pgm`, at the same rho;
* ``independent``: each column sampled independently from its own noisy histogram at the same (epsilon,
  delta): the d one-way marginals measured with the whole budget (Gaussian, zCDP, through dpdesk's
  mechanisms), each projected onto the non-negative tables of the noisy total, sampled with the same sampler.

Utility: total-variation distance between the real and the synthetic table's marginals over the public
levels, averaged over every one-, two- and three-way set of columns (lower is better). Every run is a fresh
process; time is the child's wall time of (measure + fit + sample), peak memory its ru_maxrss (os.wait4).
Methods alternate run by run; the load of the machine (1-minute load average) is recorded per run.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DIAMONDS = Path("/work/shared/data/diamonds.csv")
RESULTS = HERE / "RESULTS-synth.md"

from dpdesk.core.dp import synthetic as syn  # noqa: E402
from dpdesk.core.dp.synthetic.domain import Attribute  # noqa: E402
from dpdesk.core.dp.synthetic.utility import tvd  # noqa: E402

# ----------------------------------------------------------------------------- the tables

#: Public bins of diamonds.csv's numeric columns (from the domain: carat weights, cut proportions in %,
#: prices in dollars, dimensions in mm), 10-17 bins each.
DIAMOND_BINS: dict[str, tuple[float, ...]] = {
    "carat": (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 5.01),
    "depth": (43, 56, 58, 59, 60, 60.5, 61, 61.5, 62, 62.5, 63, 64, 66, 79),
    "table": (43, 53, 54, 55, 56, 57, 58, 59, 60, 62, 65, 95),
    "price": (
        326,
        500,
        750,
        1000,
        1500,
        2000,
        2500,
        3000,
        4000,
        5000,
        6000,
        8000,
        10000,
        13000,
        16000,
        18823,
    ),
    "x": (0, 4, 4.25, 4.5, 4.75, 5, 5.5, 6, 6.25, 6.5, 7, 7.5, 8, 8.5, 10.74),
    "y": (0, 4, 4.25, 4.5, 4.75, 5, 5.5, 6, 6.25, 6.5, 7, 7.5, 8, 8.5, 58.9),
    "z": (0, 2.5, 2.75, 3, 3.25, 3.5, 3.75, 4, 4.25, 4.5, 5, 5.5, 31.8),
}
DIAMOND_CATEGORIES: dict[str, tuple[str, ...]] = {
    "cut": ("Fair", "Good", "Very Good", "Premium", "Ideal"),
    "color": ("D", "E", "F", "G", "H", "I", "J"),
    "clarity": ("I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"),
}


def diamonds() -> tuple[list[Attribute], np.ndarray]:
    """The diamonds table's attributes and levels (n x 10)."""
    with DIAMONDS.open(newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    attrs: list[Attribute] = []
    cols: list[np.ndarray] = []
    for j, name in enumerate(header):
        raw = [r[j] for r in body]
        if name in DIAMOND_CATEGORIES:
            cats = DIAMOND_CATEGORIES[name]
            a = Attribute(name, "category", categories=cats)
            cols.append(syn.encode(a, np.array([cats.index(v) for v in raw]), None))
        else:
            e = DIAMOND_BINS[name]
            a = Attribute(name, "float", edges=tuple(float(x) for x in e), bounds=(float(e[0]), float(e[-1])))
            cols.append(syn.encode(a, np.array(raw, dtype=np.float64), None))
        attrs.append(a)
    return attrs, np.stack(cols, axis=1)


def survey(n: int = 28_000, seed: int = 17) -> tuple[list[Attribute], np.ndarray]:
    """A generated survey of the issue's shape, with correlations (n x 7 levels).

    sex (2), region (4), education (4), employed (2); age int 16-90 (19 bins of 4 years), hours int 0-69
    (14 bins of 5), wage float 0-5000 (20 bins of 250). Education depends on age, employment on age and
    sex, hours on employment and sex, wage on hours, education and region.
    """
    rng = np.random.Generator(np.random.PCG64(seed))
    sex = rng.integers(0, 2, n)
    region = rng.choice(4, n, p=[0.18, 0.21, 0.38, 0.23])
    age = np.clip(np.round(rng.gamma(6.0, 7.0, n) + 16), 16, 90)
    edu_lat = 0.03 * np.minimum(age - 16, 30) + rng.normal(0, 0.8, n) + 0.2 * sex
    edu = np.digitize(edu_lat, [0.3, 0.9, 1.5])
    p_emp = 1 / (1 + np.exp(-(2.5 - 0.0012 * (age - 42) ** 2 + 0.4 * sex + 0.3 * edu - 1.0)))
    employed = (rng.random(n) < p_emp).astype(np.int64)
    hours = np.where(employed == 1, rng.normal(36 + 5 * sex, 9, n), rng.exponential(2.0, n))
    hours = np.clip(np.round(hours), 0, 69)
    wage = np.where(
        employed == 1,
        np.exp(5.2 + 0.028 * hours + 0.35 * edu + 0.1 * (region == 3) + rng.normal(0, 0.5, n)),
        0,
    )
    wage = np.clip(wage, 0, 5000)
    attrs = [
        Attribute("sex", "category", categories=("female", "male")),
        Attribute("region", "category", categories=("northeast", "midwest", "south", "west")),
        Attribute("education", "category", categories=("none", "school", "college", "degree")),
        Attribute("employed", "category", categories=("no", "yes")),
        Attribute("age", "int", edges=tuple(float(v) for v in range(16, 93, 4)), bounds=(16.0, 90.0)),
        Attribute("hours", "int", edges=tuple(float(v) for v in range(0, 71, 5)), bounds=(0.0, 69.0)),
        Attribute("wage", "float", edges=tuple(float(v) for v in range(0, 5001, 250)), bounds=(0.0, 5000.0)),
    ]
    raw = [sex, region, edu, employed, age, hours, wage]
    codes = np.stack([syn.encode(a, np.asarray(x), None) for a, x in zip(attrs, raw, strict=True)], axis=1)
    return attrs, codes


TABLES = {"survey": survey, "diamonds": diamonds}

# ----------------------------------------------------------------------------- methods and utility


def run_method(
    method: str, attrs: list[Attribute], codes: np.ndarray, eps: float, delta: float
) -> np.ndarray:
    """The synthetic table's levels (as many rows as the fitted model's total)."""
    rng = np.random.Generator(np.random.PCG64(secrets.randbits(128)))
    if method == "dpdesk":
        released = syn.measure(codes, attrs, syn.split_budget(eps, delta, len(attrs)))
    elif method == "independent":
        released = syn.measure_independent(codes, attrs, eps, delta)
    elif method == "aim":
        from dpdesk.core.dp.statistics.synthetic import aim_budget
        from dpdesk.core.dp.synthetic import aim
        from dpdesk.core.dp.synthetic.pgm import sample_model

        sizes = tuple(a.size for a in attrs)
        rounds, _model = aim.adaptive_measure(codes, sizes, aim_budget(eps, delta, len(attrs), False, 1))
        fitted = aim.final_fit(rounds)
        return sample_model(fitted, round(fitted.marginals.total), rng)
    else:
        raise ValueError(method)
    model = syn.fit(released)
    return syn.sample_codes(model, round(model.total), rng)


def worker(table: str, method: str, eps: float, delta: float) -> dict[str, Any]:
    attrs, codes = TABLES[table]()
    t0 = time.perf_counter()
    fake = run_method(method, attrs, codes, eps, delta)
    wall = time.perf_counter() - t0
    sizes = tuple(a.size for a in attrs)
    return {
        "wall": wall,
        "rows": len(fake),
        **{f"tvd{w}": tvd(codes, fake, sizes, w) for w in (1, 2, 3)},
    }


def run_child(args: list[str]) -> dict[str, Any]:
    """One fresh process: its JSON result, its peak RSS (MiB) and the load average."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    p = subprocess.Popen([sys.executable, __file__, "--worker", *args], stdout=subprocess.PIPE, env=env)
    assert p.stdout is not None
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise RuntimeError(f"worker {args} failed")
    res: dict[str, Any] = json.loads(out)
    res["rss_mib"] = ru.ru_maxrss / 1024.0
    res["load1"] = os.getloadavg()[0]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", nargs=4, metavar=("TABLE", "METHOD", "EPS", "DELTA"))
    ap.add_argument("--tables", default="survey,diamonds")
    ap.add_argument("--eps", default="0.3,1,3")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--methods", default="dpdesk,aim,independent")
    a = ap.parse_args()
    if a.worker:
        t, m, e, d = a.worker
        print(json.dumps(worker(t, m, float(e), float(d))))
        return
    methods = tuple(a.methods.split(","))
    results: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
    for table in a.tables.split(","):
        for eps in (float(x) for x in a.eps.split(",")):
            for run in range(a.runs):
                order = methods if run % 2 == 0 else methods[::-1]
                for m in order:
                    r = run_child([table, m, repr(eps), repr(a.delta)])
                    results.setdefault((table, m, eps), []).append(r)
                    print(table, m, eps, run, {k: round(v, 4) for k, v in r.items()}, flush=True)
    md = report(results, a)
    print(md)
    if not a.no_write:
        a.results.write_text(md, encoding="utf-8")


def _med(xs: list[float]) -> float:
    return float(statistics.median(xs))


def report(results: dict[tuple[str, str, float], list[dict[str, Any]]], a: argparse.Namespace) -> str:
    lines = [
        "# Synthetic tables: dpdesk's synthesisers (MST, adaptive) vs the independent baseline",
        "",
        (
            f"Written by `benchmarks/synthetic.py` on {_dt.datetime.now().isoformat(timespec='minutes')}, "
            f"{a.runs} runs per cell, delta = {a.delta:g}, each run a fresh process (methods alternated). "
            "TVD: mean total-variation distance over every one-, two- and three-way marginal (mean over the runs; "
            "lower is better). Time: wall time of measure + fit + sample, median (min). Memory: peak RSS of the "
            "process (median). Load: the machine's 1-minute load average during the runs (median; 2 cores shared "
            "with other engineers, so times are noisy)."
        ),
        "",
        "| table | epsilon | method | 1-way TVD | 2-way TVD | 3-way TVD | 2-way ratio | time s | peak MiB | load |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (table, m, eps), rs in results.items():
        base = results.get((table, "independent", eps), rs)
        t2 = statistics.mean(r["tvd2"] for r in rs)
        b2 = statistics.mean(r["tvd2"] for r in base)
        lines.append(
            f"| {table} | {eps:g} | {m} | {statistics.mean(r['tvd1'] for r in rs):.4f} | {t2:.4f} | "
            f"{statistics.mean(r['tvd3'] for r in rs):.4f} | {t2 / b2:.3f} | "
            f"{_med([r['wall'] for r in rs]):.2f} ({min(r['wall'] for r in rs):.2f}) | "
            f"{_med([r['rss_mib'] for r in rs]):.0f} | {_med([r['load1'] for r in rs]):.1f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
