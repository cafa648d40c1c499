"""Tests for the gaps the mutation check (tools/mutation/mutants.py) found: each kills a mutant the other tests let live.

* S12: a mean's two components each spending the query's whole epsilon;
* W03: the spend entry not fsynced before the values are written;
* K01, K02, K03: the ledger lock not taken, the ledger read before it, the budget checked on entries read
  before it (the two-process test races two spawned processes and can miss these);
* L02, L03: the true row count or the load notes (dropped-row counts) in the ledger;
* P03, P04: the release not stopping on undeclared or unparsable values; the data check's counts in the
  ledger;
* F02: '@', tab and carriage return left unneutralised in release.csv;
* R04: a numpy generator made at import time (the numpy.random test patches numpy after the import).
"""

from __future__ import annotations

import ast
import contextlib
import csv
import hashlib
import io
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.common.errors import BudgetExceeded
from dpdesk.core.dp import values as vals
from dpdesk.core.dp.queries import design_query
from dpdesk.core.ledger import filestore as filestore_mod
from dpdesk.core.ledger.book import Ledger, LedgerTransaction
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release import datacheck as dchk
from dpdesk.core.release import steps as rel
from tests.conftest import ROOT, SAMPLES

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="flock")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _plan(queries: list[dict[str, Any]], budget: float = 1.0, **columns: Any) -> Plan:
    return parse_plan(
        {
            "version": 1,
            "title": "gaps",
            "budget": {"epsilon": budget, "delta": 1e-6},
            "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
            "columns": columns
            or {
                "x": {"type": "float", "bounds": [0, 100]},
                "g": {"type": "category", "categories": ["a", "b"]},
            },
            "queries": queries,
        }
    )


COUNT = [{"name": "n", "statistic": "count", "mechanism": "laplace", "epsilon": 0.6}]


# ----------------------------------------------------------------------------- S12: composition inside a query


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize(
    "query",
    [
        {"statistic": "count", "mechanism": "laplace"},
        {"statistic": "sum", "column": "x", "mechanism": "laplace"},
        {"statistic": "mean", "column": "x", "mechanism": "laplace"},
        {"statistic": "mean", "column": "x", "group_by": "g", "mechanism": "gaussian", "delta": 1e-7},
        {
            "statistic": "mean",
            "column": "x",
            "mechanism": "gaussian",
            "calibration": "analytic",
            "delta": 1e-7,
        },
        {"statistic": "histogram", "column": "g", "mechanism": "gaussian", "delta": 1e-7},
        {"statistic": "mode", "column": "g", "mechanism": "exponential"},
    ],
    ids=[
        "count",
        "sum",
        "mean",
        "mean-by-group-gaussian",
        "mean-analytic-gaussian",
        "histogram-gaussian",
        "mode",
    ],
)
def test_the_components_of_a_query_spend_exactly_its_budget(query: dict[str, Any], relation: str) -> None:
    """A mean is a noisy sum and a noisy count; together (sequential composition) they spend the query's
    epsilon and delta, which is what the ledger charges, and each is calibrated to its own share."""
    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 10.0, "delta": 1e-5},
            "privacy_unit": {"neighbouring": relation, "max_rows_per_person": 2},
            "columns": {
                "x": {"type": "float", "bounds": [-5, 15]},
                "g": {"type": "category", "categories": ["a", "b"]},
            },
            "queries": [{"name": "q", "epsilon": 0.8, **query}],
        }
    )
    spec = plan.queries[0]
    design = design_query(spec, plan)
    assert sum(c.epsilon for c in design.components) == pytest.approx(spec.epsilon)
    assert sum(c.delta for c in design.components) == pytest.approx(spec.delta)
    for c in design.components:
        if c.mechanism == "laplace":
            assert c.scale == pytest.approx(c.l1 / c.epsilon)
            assert c.rho == pytest.approx(c.epsilon**2 / 2)
    if spec.statistic == "mean":
        assert [c.epsilon for c in design.components] == pytest.approx([spec.epsilon / 2] * 2)


# ----------------------------------------------------------------------------- W03: durable before reveal


def test_the_spend_entry_is_fsynced_before_any_value_is_written(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "d.csv"
    data.write_text("x,g\n1,a\n2,b\n", encoding="utf-8")
    synced: dict[int, int] = {}  # inode -> size at its last fsync
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        st = os.fstat(fd)
        synced[st.st_ino] = st.st_size

    monkeypatch.setattr(os, "fsync", fsync)
    real_write = rel.write_release_dir
    checked: list[bool] = []

    def write(*a: Any, **k: Any) -> None:
        ledger_path = Ledger.for_dataset(dpdesk_home, _sha(data)).path
        assert ledger_path is not None
        st = ledger_path.stat()
        assert synced.get(st.st_ino) == st.st_size, "the ledger holds bytes that were not fsynced"
        spends = [e for e in Ledger(ledger_path.stem, ledger_path).verify() if e.type == "spend"]
        assert len(spends) == 1
        if sys.platform != "win32":  # a new ledger's directory entry is made durable too
            assert ledger_path.parent.stat().st_ino in synced
        checked.append(True)
        real_write(*a, **k)

    monkeypatch.setattr(rel, "write_release_dir", write)
    rel.release(_plan(COUNT), data, dpdesk_home, tmp_path / "out")
    assert checked == [True]
    assert (tmp_path / "out" / "release.csv").exists()


# ----------------------------------------------------------------------------- K01, K02, K03: the lock


@contextlib.contextmanager
def _held(lock_path: Path) -> Iterator[None]:
    """Hold a ledger's lock as another process would (flock on a file description of our own)."""
    import fcntl

    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@pytest.mark.slow
@POSIX
def test_a_transaction_waits_for_the_lock_and_reads_the_ledger_under_it(dpdesk_home: Path) -> None:
    lg = Ledger.for_dataset(dpdesk_home, "ab" * 32)
    lg.ensure_id()
    entered = threading.Event()

    def writer() -> int:
        with lg.transaction() as tx:
            entered.set()
            seen = len(tx.entries)
            tx.append("simulate", {"runs": 2, "plan_hash": "x", "charged": None})
        return seen

    with ThreadPoolExecutor(1) as pool:
        with _held(lg.lock_path):
            fut = pool.submit(writer)
            assert not entered.wait(1.0), "a transaction ran while another writer held the ledger's lock"
            # the other writer appends while it holds the lock
            LedgerTransaction(lg, lg.verify()).append(
                "simulate", {"runs": 1, "plan_hash": "x", "charged": None}
            )
        assert fut.result(timeout=60) == 1, "the transaction saw the ledger as it was before it got the lock"
    assert [e.get("runs") for e in lg.verify()] == [1, 2]


@POSIX
def test_two_releases_queued_on_the_lock_never_overspend(
    dpdesk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic form of the two-process test: both releases have loaded and computed everything and
    wait on the lock before the first may charge; budget 1.0, 0.6 each: exactly one may run."""
    data = tmp_path / "d.csv"
    data.write_text("x,g\n" + "1,a\n" * 50, encoding="utf-8")
    lg = Ledger.for_dataset(dpdesk_home, _sha(data))
    lg.ensure_id()  # the dataset's public id exists, so each release only takes the ledger's lock
    arrived = threading.Semaphore(0)
    real_locked = filestore_mod.locked

    @contextlib.contextmanager
    def locked(path: Path) -> Iterator[None]:
        arrived.release()
        with real_locked(path):
            yield

    monkeypatch.setattr(filestore_mod, "locked", locked)  # the file store's writer lock

    def run(i: int) -> str:
        try:
            rel.release(_plan(COUNT), data, dpdesk_home, tmp_path / f"o{i}")
        except BudgetExceeded:
            return "refused"
        return "ok"

    with ThreadPoolExecutor(2) as pool:
        with _held(lg.lock_path):
            futures = [pool.submit(run, i) for i in range(2)]
            for _ in futures:
                assert arrived.acquire(timeout=120), "a release never reached the ledger's lock"
        results = sorted(f.result(timeout=120) for f in futures)
    assert results == ["ok", "refused"]
    assert len([e for e in lg.verify() if e.type == "spend"]) == 1
    assert sum((tmp_path / f"o{i}").exists() for i in range(2)) == 1


# ----------------------------------------------------------------------------- L02, L03: nothing read off the data


N_ROWS = 52817  # rows in the file
N_EMPTY = 3911  # of which x is empty (dropped)
N_MARS = 1289  # of which the region is undeclared (missing)
X = "17.25"


def _planted(tmp_path: Path) -> Path:
    lines = []
    for i in range(N_ROWS):
        x = "" if i % 13 == 0 and i // 13 < N_EMPTY else X
        region = "mars" if i % 7 == 1 and i // 7 < N_MARS else ("north" if i % 2 else "south")
        lines.append(f"{x},{region}")
    path = tmp_path / "planted.csv"
    path.write_text("x,region\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def _secrets(path: Path) -> dict[str, str]:
    """Numbers read off the planted file: row counts (all, kept, dropped, per group) and the true sums."""
    with path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == N_ROWS
    kept = [r for r in rows if r["x"]]
    assert len(rows) - len(kept) == N_EMPTY and sum(r["region"] == "mars" for r in rows) == N_MARS
    out = {
        "rows": str(N_ROWS),
        "kept": str(len(kept)),
        "empty": str(N_EMPTY),
        "undeclared": str(N_MARS),
        "sum": str(int(len(kept) * float(X))),
    }
    for g in ("north", "south"):
        out[f"rows {g}"] = str(sum(r["region"] == g for r in rows))
        out[f"kept {g}"] = str(sum(r["region"] == g for r in kept))
    return out


@pytest.mark.slow
def test_no_count_or_sum_read_off_the_data_reaches_the_ledger_or_the_package(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    from pypdf import PdfReader

    data = _planted(tmp_path)
    secret = _secrets(data)
    plan = _plan(
        [
            {"name": "total", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 0.5},
            {
                "name": "by region",
                "statistic": "sum",
                "column": "x",
                "group_by": "region",
                "mechanism": "gaussian",
                "epsilon": 0.5,
                "delta": 1e-7,
            },
            {"name": "average", "statistic": "mean", "column": "x", "mechanism": "laplace", "epsilon": 0.5},
            {
                "name": "median",
                "statistic": "quantile",
                "column": "x",
                "mechanism": "exponential",
                "epsilon": 0.5,
            },
        ],
        budget=5.0,
        x={"type": "float", "bounds": [0, 1000]},
        region={"type": "category", "categories": ["north", "south"]},
    )
    out = tmp_path / "pkg"
    res = rel.release(plan, data, dpdesk_home, out, accept_data_problems=True)  # "mars" is undeclared
    assert res.report_lines, "the curator's own load notes name the dropped values (shown to them only)"
    released = {c for r in res.rows for c in (r.value, r.ci_low, r.ci_high)}
    texts = {
        "ledger": Ledger.for_dataset(dpdesk_home, _sha(data)).path.read_text(encoding="utf-8"),
        **{
            name: (out / name).read_text(encoding="utf-8")
            for name in ("release.csv", "plan.json", "ledger.json")
        },
        "report.pdf": "\n".join(p.extract_text() or "" for p in PdfReader(str(out / "report.pdf")).pages),
    }
    for what, token in secret.items():
        if any(token in v for v in released):  # a noisy value may happen to contain it
            continue
        pattern = re.compile(rf"(?<![0-9A-Za-z.]){token}(?![0-9A-Za-z])")
        for where, text in texts.items():
            assert not pattern.search(text), f"the {what} ({token}) appears in {where}"


#: The data check's counts in a planted file: each distinctive, each shown to the curator, none ever written.
PLANTED_CHECK = {
    "x missing": 2713,
    "x unparsable": 1847,
    "x clamped": 3329,
    "k clamped": 4481,
    "region undeclared": 2957,
}
N_CHECK_ROWS = 40013


def _planted_problems(tmp_path: Path) -> Path:
    lines = []
    for i in range(N_CHECK_ROWS):
        j = i % 8
        x = (
            ""
            if j == 1 and i // 8 < 2713
            else "n/a"
            if j == 2 and i // 8 < 1847
            else ("2500" if i % 2 else "inf")
            if j == 3 and i // 8 < 3329
            else "17.25"
        )
        k = "77" if j in (4, 5) and i // 8 * 2 + (j - 4) < 4481 else "9"
        region = "mars" if j == 6 and i // 8 < 2957 else ("north" if i % 2 else "south")
        lines.append(f"{x},{k},{region}")
    path = tmp_path / "problems.csv"
    path.write_text("x,k,region\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_the_data_check_counts_reach_the_curator_and_never_the_ledger_or_the_package(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """Missing, undeclared, unparsable and clamped counts are exact counts of the private table: shown to the
    curator before the charge (P03 stops on them), written nowhere (P04 puts them in the spend entry)."""
    from pypdf import PdfReader

    data = _planted_problems(tmp_path)
    plan = _plan(
        [
            {"name": "total", "statistic": "sum", "column": "x", "mechanism": "laplace", "epsilon": 0.5},
            {
                "name": "k by region",
                "statistic": "sum",
                "column": "k",
                "group_by": "region",
                "mechanism": "laplace",
                "epsilon": 0.5,
            },
            {
                "name": "regions",
                "statistic": "histogram",
                "column": "region",
                "mechanism": "laplace",
                "epsilon": 0.5,
            },
        ],
        budget=5.0,
        x={"type": "float", "bounds": [0, 1000]},
        k={"type": "int", "bounds": [0, 50]},
        region={"type": "category", "categories": ["north", "south"]},
    )
    with pytest.raises(dchk.DataProblems):
        rel.release(plan, data, dpdesk_home, tmp_path / "refused")
    assert not Ledger.for_dataset(dpdesk_home, _sha(data)).exists()
    out = tmp_path / "pkg"
    shown: list[dchk.DataCheck] = []
    res = rel.release(plan, data, dpdesk_home, out, accept_data_problems=True, on_data_check=shown.append)
    (check,) = shown
    c = {col.name: col for col in check.columns}
    got = {
        "x missing": c["x"].missing,
        "x unparsable": c["x"].unparsable,
        "x clamped": c["x"].clamped,
        "k clamped": c["k"].clamped,
        "region undeclared": c["region"].undeclared,
    }
    assert got == PLANTED_CHECK
    released = {v for r in res.rows for v in (r.value, r.ci_low, r.ci_high)}
    package = ("release.csv", "plan.json", "ledger.json")
    texts = {
        "ledger": Ledger.for_dataset(dpdesk_home, _sha(data)).path.read_text(encoding="utf-8"),
        **{name: (out / name).read_text(encoding="utf-8") for name in package},
        "report.pdf": "\n".join(p.extract_text() or "" for p in PdfReader(str(out / "report.pdf")).pages),
    }
    for what, n in {**PLANTED_CHECK, "rows": N_CHECK_ROWS}.items():
        token = str(n)
        if any(token in v for v in released):  # a noisy value may happen to contain it
            continue
        pattern = re.compile(rf"(?<![0-9A-Za-z.]){token}(?![0-9A-Za-z])")
        for where, text in texts.items():
            assert not pattern.search(text), f"the {what} count ({token}) appears in {where}"


# ----------------------------------------------------------------------------- F02: formula neutralisation


def test_every_formula_prefix_is_neutralised_and_numbers_are_not() -> None:
    formulas = ["@SUM(A1:A9)", "\tcmd|' /C calc'!A0", "\r=1+1", "-2+3", '=HYPERLINK("x")', "+x", "-cmd"]
    numbers = ["-3.5", "+4", "1e5", "-0", ""]
    assert [vals.neutralise(c) for c in formulas] == ["'" + c for c in formulas]
    assert [vals.neutralise(c) for c in numbers] == numbers
    cells = ["@SUM(A1:A9)", "\tcmd", "-2+3", "=1", "+x", "-3.5", "+4", "1e5"]
    got = list(csv.reader(io.StringIO(vals.rows_to_csv([vals.Row(*cells)]).decode())))
    assert got[1] == ["'" + c for c in cells[:5]] + cells[5:]


# ----------------------------------------------------------------------------- R04: no numpy/random generator


_RELEASE_IN_A_PATCHED_PROCESS = r"""
import random, sys
from pathlib import Path
import numpy as np

import secrets

def forbidden(*_a, **_k):
    raise AssertionError("non-cryptographic randomness reached a release")

# The one exception: the synthesiser's sampler (post-processing of released marginals) makes numpy's PCG64 in
# dpdesk.core.dp.synthetic.pipeline.generator, from a seed that secrets drew; anything else is refused.
DRAWN = set()
_randbits = secrets.randbits

def randbits(k):
    v = _randbits(k)
    DRAWN.add(v)
    return v

secrets.randbits = randbits
_Generator, _PCG64 = np.random.Generator, np.random.PCG64

def _from_sampler():
    f = sys._getframe(2)
    return f.f_code.co_name == "generator" and f.f_globals.get("__name__") == "dpdesk.core.dp.synthetic.pipeline"

def Generator(bits):
    if not (_from_sampler() and isinstance(bits, _PCG64)):
        raise AssertionError("non-cryptographic randomness reached a release")
    return _Generator(bits)

def PCG64(seed=None):
    if not (_from_sampler() and seed in DRAWN):
        raise AssertionError("numpy's PCG64 outside the synthesiser's sampler, or not seeded from secrets")
    return _PCG64(seed)

for name in ("default_rng", "Generator", "RandomState", "random", "rand", "randn", "randint", "laplace",
             "normal", "gumbel", "choice", "uniform", "shuffle", "permutation", "integers", "seed", "PCG64"):
    if hasattr(np.random, name):
        setattr(np.random, name, forbidden)
np.random.Generator, np.random.PCG64 = Generator, PCG64
for name in ("random", "randint", "choice", "choices", "shuffle", "uniform", "gauss", "Random", "sample", "seed"):
    setattr(random, name, forbidden)

# only now is dpdesk imported: a generator made at import time is caught too
from dpdesk.core.plan.reader import load_plan, parse_plan
from dpdesk.core.release.steps import release

plan = load_plan(sys.argv[1])
synthetic = {"name": "table", "statistic": "synthetic", "columns": ["wage", "education", "region"],
             "epsilon": 0.05, "delta": 1e-7}  # two synthesisers share the 0.1 the plan leaves
adaptive = {**synthetic, "name": "adaptive", "mechanism": "aim"}
d = plan.to_dict()
plan = parse_plan({**d, "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 2,
                                         "id_column": "state"}, "queries": [*d["queries"], synthetic, adaptive]})
res = release(plan, sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))
print(len(res.rows))
"""


@pytest.mark.slow
def test_no_generator_of_numpy_or_random_exists_when_a_release_runs(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """Like test_release's numpy.random test, but numpy and random are disabled before dpdesk is imported."""
    env = {**os.environ, "DPDESK_HOME": str(dpdesk_home)}
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            _RELEASE_IN_A_PATCHED_PROCESS,
            str(SAMPLES / "cps_wages_plan.json"),
            str(SAMPLES / "census_sample.csv"),
            str(dpdesk_home),
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["14"]
    assert (tmp_path / "out" / "table.csv").exists()  # the synthetic table was drawn, by the one exception
    assert (tmp_path / "out" / "adaptive.csv").exists()  # the adaptive synthesiser's too, by the same one


def test_the_patched_process_refuses_a_pcg64_outside_the_sampler() -> None:
    """The exception above is exactly one: numpy's PCG64 anywhere else (or seeded otherwise) is refused."""
    script = _RELEASE_IN_A_PATCHED_PROCESS.split("# only now is dpdesk imported")[0] + (
        "from dpdesk.core.dp.synthetic.pipeline import generator\n"
        "try:\n    np.random.PCG64(1)\nexcept AssertionError:\n    print('refused')\n"
        "try:\n    generator(12345)\nexcept AssertionError:\n    print('refused unseeded')\n"
        "import secrets\ngenerator(secrets.randbits(128))\nprint('ok')\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert r.stdout.split("\n")[:3] == ["refused", "refused unseeded", "ok"], r.stderr[-2000:]


#: Where numpy.random may appear on the release path: nowhere (simulations and samples live outside it).
_ALLOWED: set[tuple[str, str | None]] = {  # simulations live in the previews' wing, off the release path
    # the synthesiser's sampler: numpy's PCG64 seeded from secrets, post-processing of released marginals only
    # (the runtime test above allows it there and nowhere else); decode and sample_codes only name its type
    ("dp/synthetic/pipeline.py", "generator"),
    ("dp/synthetic/domain.py", "decode"),
    # issue 30's array path: the same generator (pipeline.generator), only its type named
    ("dp/synthetic/domain.py", "decode_array"),
    ("dp/statistics/synthetic.py", "_draw_codes"),
    ("dp/synthetic/sample.py", "systematic_counts"),
    ("dp/synthetic/sample.py", "sample_codes"),
    # issue 33's adaptive synthesiser: the same generator (pipeline.generator), only its type named
    ("dp/synthetic/aim.py", "draw_codes"),
    ("dp/synthetic/pgm.py", "sample_model"),
}
#: Every module of the engine but the previews' wing (a module added later is scanned too).
_RELEASE_PATH = tuple(
    sorted(
        p.relative_to(ROOT / "dpdesk" / "core").as_posix()
        for p in (ROOT / "dpdesk" / "core").rglob("*.py")
        if p.relative_to(ROOT / "dpdesk" / "core").parts[0] != "preview"
    )
)
assert len(_RELEASE_PATH) > 60 and "dp/mechanisms.py" in _RELEASE_PATH


def _names_random(node: ast.AST) -> bool:
    """Whether a node is ``np.random`` / ``numpy.random`` or an import of random or numpy.random."""
    if isinstance(node, ast.Attribute):
        return node.attr == "random" and isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy")
    if isinstance(node, ast.Import):
        return any(a.name in ("random", "numpy.random") for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.module in ("random", "numpy.random") or (
            node.module == "numpy" and any(a.name == "random" for a in node.names)
        )
    return False


def _random_uses(tree: ast.AST) -> Iterator[tuple[int, str | None]]:
    """(line, outermost enclosing function) of every numpy.random / random use in a module."""

    def walk(node: ast.AST, func: str | None) -> Iterator[tuple[int, str | None]]:
        for child in ast.iter_child_nodes(node):
            inner = (
                child.name
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and func is None
                else func
            )
            if _names_random(child):
                yield child.lineno, inner  # type: ignore[attr-defined]
            yield from walk(child, inner)

    yield from walk(tree, None)


def test_the_release_path_never_names_numpy_random_or_random() -> None:
    """Static companion of the runtime tests: a generator in a branch no test runs is found too."""
    found = []
    for name in _RELEASE_PATH:
        path = ROOT / "dpdesk" / "core" / name
        for line, func in _random_uses(ast.parse(path.read_text(encoding="utf-8"))):
            if (name, func) not in _ALLOWED:
                found.append(f"{name}:{line} ({func or 'module level'})")
    assert not found, "numpy.random or random on the release path: " + ", ".join(found)


@pytest.mark.slow
def test_the_release_path_does_not_import_the_simulations() -> None:
    """Issue 12 (split by job): simulate.py, whose numpy generator draws preview noise, is imported by no module of
    the release path, so every module of that path is covered by the static scan above without exceptions."""
    found = []
    for name in _RELEASE_PATH:
        tree = ast.parse((ROOT / "dpdesk" / "core" / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            mods = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else ([a.name for a in node.names] if isinstance(node, ast.Import) else [])
            )
            names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
            if _imports_previews(mods, names):
                found.append(f"{name}:{node.lineno}")
    assert not found, "the release path imports the simulations: " + ", ".join(found)


def _imports_previews(mods: list[str], names: list[str]) -> bool:
    """Whether an import statement (its modules, and the names a ``from`` imports) reaches the previews' wing."""
    return any(m == "dpdesk.core.preview" or m.startswith("dpdesk.core.preview.") for m in mods) or (
        mods == ["dpdesk.core"] and "preview" in names
    )


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("from dpdesk.core.preview import simulate", True),
        ("from dpdesk.core.preview.simulate import simulate_releases", True),
        ("import dpdesk.core.preview.sample", True),
        ("from dpdesk.core import preview", True),
        ("from dpdesk.core.dp import mechanisms", False),
    ],
)
def test_the_scan_sees_every_form_of_importing_the_previews(code: str, found: bool) -> None:
    (node,) = ast.parse(code).body
    assert isinstance(node, (ast.Import, ast.ImportFrom))
    mods = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
    names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
    assert _imports_previews(mods, names) is found


def test_the_static_scan_sees_a_module_level_generator() -> None:
    tree = ast.parse("import numpy as np\n_RNG = np.random.default_rng()\ndef f():\n    import random\n")
    assert list(_random_uses(tree)) == [(2, None), (4, "f")]
