#!/usr/bin/env python3
"""dpdesk performance benchmark: CSV loading (vs polars with a declared schema) and the 20-query release.

A script, not a test. See benchmarks/README.md for how to run it; results go to benchmarks/RESULTS.md.

Methodology (as in the project's performance-baselines note):

* every load is a fresh process (``python bench.py --worker load ...``); its peak RSS is the
  child's ``ru_maxrss`` from ``os.wait4``; page cache warmed first;
* loaders run interleaved, round by round, in rotated order (A B C, B C A, C A B, ...), so a noisy
  neighbour hurts them alike; the table gives the median and the min, and ratios to polars;
* "other cores" is the CPU used by *other* processes during a measurement: (machine busy time from
  /proc/stat - the child's own user+system time) / wall time. 2.0 would be the whole 2-core machine;
* the release is measured in one fresh process per table size, after loading, alternating
  dpdesk's release and the numpy baseline for several repetitions (one unrecorded warm-up release first).

Loaders that are not installed (pandas, pyarrow in the product venv) are reported as skipped.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_OUT = HERE / "out"
RESULTS = HERE / "RESULTS.md"
NOTES_BEGIN = "<!-- BEGIN NOTES (kept by bench.py across reruns) -->"
NOTES_END = "<!-- END NOTES -->"

# ----------------------------------------------------------------------------- the declared schema

# the generator's own category lists, so the declared schema can never drift from the data
from dpdesk.core.preview.sample import COLUMNS, OCCUPATIONS, REGIONS, SEXES, STATES  # noqa: E402

#: Chinese labels for the GBK variant (declared as the categories of that variant).
ZH_LABELS: dict[str, dict[str, str]] = {
    "sex": {"female": "女", "male": "男"},
    "region": {"northeast": "东北", "midwest": "中西部", "south": "南部", "west": "西部"},
    "occupation": dict(
        zip(
            OCCUPATIONS,
            (
                "经理",
                "专业人员",
                "技术员",
                "销售",
                "文员",
                "服务",
                "农业",
                "建筑",
                "生产",
                "运输",
                "军人",
                "卫生",
                "教育",
                "艺术",
                "其他",
            ),
            strict=True,
        )
    ),
}


def schema(zh: bool = False) -> dict[str, dict[str, Any]]:
    """The public declaration of the 9 columns (bounds and full category lists), plan format."""
    cats = {"sex": SEXES, "occupation": OCCUPATIONS, "region": REGIONS, "state": STATES}
    if zh:
        cats = {k: tuple(ZH_LABELS[k][v] for v in vs) if k in ZH_LABELS else vs for k, vs in cats.items()}
    return {
        "age": {"type": "int", "bounds": [0, 100]},
        "sex": {"type": "category", "categories": list(cats["sex"])},
        "education": {"type": "int", "bounds": [0, 18]},
        "occupation": {"type": "category", "categories": list(cats["occupation"])},
        "hours": {"type": "int", "bounds": [0, 99]},
        "wage": {"type": "float", "bounds": [0, 5000]},
        "region": {"type": "category", "categories": list(cats["region"])},
        "state": {"type": "category", "categories": list(cats["state"])},
        "weight": {"type": "float", "bounds": [0, 5000]},
    }


def column_specs(zh: bool = False) -> dict[str, Any]:
    """dpdesk ColumnSpecs for the declared schema."""
    from dpdesk.core.model.spec import ColumnSpec

    out = {}
    for name, d in schema(zh).items():
        if d["type"] == "category":
            out[name] = ColumnSpec(name, "category", categories=tuple(d["categories"]))
        else:
            out[name] = ColumnSpec(name, d["type"], bounds=(float(d["bounds"][0]), float(d["bounds"][1])))
    return out


AGE_BINS = [0, 18, 25, 35, 45, 55, 65, 100]
WAGE_BINS = [0, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 5000]


def plan_dict() -> dict[str, Any]:
    """The 20-query plan: counts, sums, means, histograms, grouped statistics, quantiles, a mode."""
    lap = {"mechanism": "laplace", "epsilon": 1.0}
    gau = {"mechanism": "gaussian", "epsilon": 1.0, "delta": 1e-7, "calibration": "analytic"}
    exp = {"mechanism": "exponential", "epsilon": 1.0}
    q: list[dict[str, Any]] = [
        {"name": "people", "statistic": "count", **lap},
        {"name": "people (gaussian)", "statistic": "count", **gau},
        {"name": "total wage", "statistic": "sum", "column": "wage", **lap},
        {"name": "total hours", "statistic": "sum", "column": "hours", **gau},
        {"name": "mean wage", "statistic": "mean", "column": "wage", **lap},
        {"name": "mean age", "statistic": "mean", "column": "age", **gau},
        {"name": "regions", "statistic": "histogram", "column": "region", **lap},
        {"name": "occupations", "statistic": "histogram", "column": "occupation", **lap},
        {"name": "states", "statistic": "histogram", "column": "state", **gau},
        {"name": "age bands", "statistic": "histogram", "column": "age", "bins": AGE_BINS, **lap},
        {"name": "wage bands", "statistic": "histogram", "column": "wage", "bins": WAGE_BINS, **lap},
        {"name": "people by sex", "statistic": "count", "group_by": "sex", **lap},
        {"name": "people by state", "statistic": "count", "group_by": "state", **gau},
        {"name": "wage by region", "statistic": "sum", "column": "wage", "group_by": "region", **gau},
        {
            "name": "hours by occupation",
            "statistic": "sum",
            "column": "hours",
            "group_by": "occupation",
            **lap,
        },
        {"name": "mean wage by sex", "statistic": "mean", "column": "wage", "group_by": "sex", **lap},
        {"name": "mean hours by state", "statistic": "mean", "column": "hours", "group_by": "state", **lap},
        {
            "name": "occupation by region",
            "statistic": "histogram",
            "column": "occupation",
            "group_by": "region",
            **lap,
        },
        {"name": "median age", "statistic": "quantile", "column": "age", "q": 0.5, **exp},
        {"name": "wage p90", "statistic": "quantile", "column": "wage", "q": 0.9, **exp},
        {"name": "commonest occupation", "statistic": "mode", "column": "occupation", **exp},
    ]
    # 21 written above; drop the Gaussian duplicate count to make exactly 20
    q = [x for x in q if x["name"] != "people (gaussian)"]
    assert len(q) == 20
    return {
        "version": 1,
        "title": "benchmark: 20 queries",
        "budget": {"epsilon": 100, "delta": 1e-5},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "columns": schema(),
        "queries": q,
    }


# ----------------------------------------------------------------------------- data files


def data_files(out: Path) -> dict[str, Path]:
    return {
        "1M": out / "census_1M.csv",
        "10M": out / "census_10M.csv",
        "1M_utf16": out / "census_1M.utf16.csv",
        "1M_zh": out / "census_1M_zh.utf8.csv",
        "1M_zh_gbk": out / "census_1M_zh.gb18030.csv",
    }


def _write_if_missing(path: Path, make: Any) -> None:
    if path.exists() and path.stat().st_size > 0:
        print(f"  reuse {path.name} ({path.stat().st_size / 1e6:.1f} MB)", flush=True)
        return
    t0 = time.perf_counter()
    tmp = path.with_name(path.name + ".part")
    make(tmp)
    os.replace(tmp, path)
    print(
        f"  wrote {path.name} ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )


def _zh_text(src: Path) -> str:
    idx = {COLUMNS.index(c): m for c, m in ZH_LABELS.items()}
    lines = src.read_text(encoding="utf-8").split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        if not line:
            continue
        f = line.split(",")
        for i, m in idx.items():
            f[i] = m[f[i]]
        out.append(",".join(f))
    return "\n".join(out) + "\n"


def make_data(out: Path, sizes: list[str]) -> dict[str, Path]:
    from dpdesk.core.preview.sample import write_census_csv

    out.mkdir(parents=True, exist_ok=True)
    files = data_files(out)
    n = {"1M": 1_000_000, "10M": 10_000_000}
    for s in sizes:
        _write_if_missing(files[s], lambda p, s=s: write_census_csv(p, n[s]))
    if "1M" not in sizes:
        _write_if_missing(files["1M"], lambda p: write_census_csv(p, n["1M"]))
    _write_if_missing(
        files["1M_utf16"], lambda p: p.write_bytes(files["1M"].read_text("utf-8").encode("utf-16"))
    )
    _write_if_missing(files["1M_zh"], lambda p: p.write_bytes(_zh_text(files["1M"]).encode("utf-8")))
    _write_if_missing(
        files["1M_zh_gbk"], lambda p: p.write_bytes(files["1M_zh"].read_text("utf-8").encode("gb18030"))
    )
    return files


# ----------------------------------------------------------------------------- process helpers


def _status_kib(field: str) -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux clear_refs 5); False if not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _cpu_busy_s() -> float:
    """Machine-wide busy CPU seconds (all cores) from /proc/stat, or NaN."""
    try:
        with open("/proc/stat") as f:
            parts = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return float("nan")
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    return (sum(parts[:8]) - idle) / os.sysconf("SC_CLK_TCK")


CHILD_ENV: dict[str, str] = dict(os.environ)


def run_child(args: list[str]) -> dict[str, Any]:
    """Run ``bench.py --worker ...`` in a fresh interpreter; its JSON result plus peak RSS and other load."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", *args]
    busy0 = _cpu_busy_s()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=CHILD_ENV)
    out, err = p.stdout.read(), p.stderr.read()  # type: ignore[union-attr]
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    busy1 = _cpu_busy_s()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"worker {args} failed ({p.returncode}):\n{err.decode(errors='replace')[-3000:]}")
    res: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    res["peak_rss_mib"] = ru.ru_maxrss / 1024.0
    res["parent_hwm_mib"] = _status_kib("VmHWM") / 1024.0
    res["process_wall_s"] = wall
    res["child_cpu_s"] = ru.ru_utime + ru.ru_stime
    res["other_cores"] = max(0.0, (busy1 - busy0 - res["child_cpu_s"]) / wall) if wall > 0 else float("nan")
    return res


def warm_cache(path: Path) -> None:
    buf = bytearray(8 * 2**20)
    with path.open("rb", buffering=0) as f:
        while f.readinto(buf):
            pass


def loader_available(name: str) -> bool:
    mod = {
        "dpdesk": "dpdesk",
        "polars": "polars",
        "pandas": "pandas",
        "pyarrow": "pyarrow",
        "sketch": "polars",
        "sketch-whole": "polars",
    }[name]
    try:
        importlib.metadata.version(mod)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


# ----------------------------------------------------------------------------- workers (child processes)


def _polars_schema(pl: Any, zh: bool) -> dict[str, Any]:
    out = {}
    for name, d in schema(zh).items():
        if d["type"] == "category":
            out[name] = pl.Enum(d["categories"])
        elif d["type"] == "int":
            out[name] = pl.Int16
        else:
            out[name] = pl.Float64
    return out


def sketch_load(path: str, zh: bool) -> tuple[dict[str, Any], int, str]:
    """NOT dpdesk: a sketch of the loader fix suggested in RESULTS.md, measured for comparison (``--sketch``).

    Like dpdesk: 32 MiB blocks cut at the last newline, SHA-256 of the bytes, compact numpy columns (int16
    codes, ints clamped to their bounds in the smallest type, float64). Unlike dpdesk: each piece is parsed by
    polars *with the declared schema* (Enum / Int64 / Float64) instead of as strings post-processed column by
    column; the hash runs in a thread (hashlib releases the GIL); the columns are written into preallocated
    arrays (no final concatenation). A piece that fails the strict parse would go to dpdesk's existing
    string path (not implemented here: the benchmark data are clean; quotes are not handled either).
    """
    import hashlib
    import threading

    import numpy as np
    import polars as pl

    decl = schema(zh)
    names = list(decl)
    pl_types = {
        n: (
            pl.Enum(d["categories"])
            if d["type"] == "category"
            else pl.Int64
            if d["type"] == "int"
            else pl.Float64
        )
        for n, d in decl.items()
    }
    np_types = {
        n: (
            np.int16
            if d["type"] == "category"
            else np.float64
            if d["type"] == "float"
            else np.int8
            if max(map(abs, d["bounds"])) < 128
            else np.int32
        )
        for n, d in decl.items()
    }
    size = os.path.getsize(path)
    h = hashlib.sha256()
    out: dict[str, Any] = {}
    n = 0
    hasher: threading.Thread | None = None
    with open(path, "rb") as f:
        header = f.readline()
        h.update(header)
        rest = b""
        while True:
            block = f.read(32 * 2**20)
            if hasher is not None:
                hasher.join()
            hasher = threading.Thread(target=h.update, args=(block,))
            hasher.start()
            buf = rest + block if rest else block
            cut = buf.rfind(b"\n") + 1 if block else len(buf)
            piece, rest = buf[:cut], buf[cut:]
            if piece:
                df = pl.read_csv(piece, has_header=False, new_columns=names, schema=pl_types)
                m = df.height
                if not out:  # capacity from the first piece's bytes per row, +5 %
                    cap = int(size / (len(piece) / m) * 1.05) + m
                    out = {k: np.empty(cap, dtype=np_types[k]) for k in names}
                if n + m > len(out[names[0]]):
                    for k in names:
                        bigger = np.empty(max(2 * len(out[k]), n + m), dtype=np_types[k])
                        bigger[:n] = out[k][:n]
                        out[k] = bigger
                for k in names:
                    col = df.get_column(k)
                    dst = out[k][n : n + m]
                    if decl[k]["type"] == "category":
                        dst[:] = col.to_physical().fill_null(-1).to_numpy()
                    elif decl[k]["type"] == "int":
                        lo, hi = decl[k]["bounds"]
                        np.clip(col.fill_null(lo).to_numpy(), lo, hi, out=dst, casting="unsafe")
                    else:
                        dst[:] = col.to_numpy()  # nulls come back as NaN
                n += m
            if not block:
                break
    if hasher is not None:
        hasher.join()
    return {k: v[:n] for k, v in out.items()}, n, h.hexdigest()


def sketch_whole_load(path: str, zh: bool) -> tuple[dict[str, Any], int, str]:
    """NOT dpdesk: a second sketch (``--sketch``): one strict polars read of the whole file with the declared
    schema, the SHA-256 computed by a thread meanwhile, then the columns moved to dpdesk's numpy form one at a
    time (dropped from the frame as they go). On a parse error (dirty data) dpdesk would fall back to its
    robust block path; that fallback, progress and cancel are not sketched.
    """
    import hashlib
    import threading

    import numpy as np
    import polars as pl

    decl = schema(zh)
    h = hashlib.sha256()

    def hash_file() -> None:
        buf = bytearray(8 * 2**20)
        view = memoryview(buf)
        with open(path, "rb", buffering=0) as f:
            while n := f.readinto(buf):
                h.update(view[:n])

    hasher = threading.Thread(target=hash_file)
    hasher.start()
    df = pl.read_csv(path, schema=_polars_schema(pl, zh))
    n = df.height
    out: dict[str, Any] = {}
    for name, d in decl.items():
        s = df.get_column(name)
        if d["type"] == "category":
            out[name] = s.to_physical().fill_null(-1).to_numpy().astype(np.int16)
        elif d["type"] == "int":
            lo, hi = d["bounds"]
            dt = np.int8 if max(abs(lo), abs(hi)) < 128 else np.int32
            out[name] = np.clip(s.fill_null(lo).to_numpy(), lo, hi).astype(dt)
        else:
            out[name] = s.to_numpy()
        df = df.drop(name)
    hasher.join()
    return out, n, h.hexdigest()


_CPU = [0.0, 0.0]  # process CPU time (all threads) at the start and end of the last load


def _load(loader: str, path: str, zh: bool, encoding: str) -> tuple[Any, float, float, int, float]:
    """Import, then load. Returns (object, import s, load s, rows, table MiB)."""
    t0 = time.perf_counter()
    if loader == "dpdesk":
        # numpy and polars (imported lazily by load_table) are counted as imports, like the others'
        import numpy  # noqa: F401
        import polars

        from dpdesk.core.loading import load_table

        cols = column_specs(zh)
        t1, _CPU[0] = time.perf_counter(), time.process_time()
        table = load_table(path, cols)
        t2, _CPU[1] = time.perf_counter(), time.process_time()
        size = sum(
            c.values.nbytes + (c.missing_mask.nbytes if c.missing_mask is not None else 0)
            for c in table.columns.values()
        )
        return table, t1 - t0, t2 - t1, table.n_rows, size / 2**20
    if loader == "sketch-whole":
        import numpy as np
        import polars

        t1, _CPU[0] = time.perf_counter(), time.process_time()
        cols, rows, _ = sketch_whole_load(path, zh)
        t2, _CPU[1] = time.perf_counter(), time.process_time()
        return cols, t1 - t0, t2 - t1, rows, sum(v.nbytes for v in cols.values()) / 2**20
    if loader == "sketch":
        import numpy as np  # noqa: F401
        import polars  # noqa: F401

        t1, _CPU[0] = time.perf_counter(), time.process_time()
        cols, rows, _ = sketch_load(path, zh)
        t2, _CPU[1] = time.perf_counter(), time.process_time()
        return cols, t1 - t0, t2 - t1, rows, sum(v.nbytes for v in cols.values()) / 2**20
    if loader == "polars":
        import polars as pl

        sch = _polars_schema(pl, zh)
        t1, _CPU[0] = time.perf_counter(), time.process_time()
        df = pl.read_csv(path, schema=sch, encoding="utf8")
        t2, _CPU[1] = time.perf_counter(), time.process_time()
        return df, t1 - t0, t2 - t1, df.height, df.estimated_size() / 2**20
    if loader == "pandas":
        import pandas as pd

        dtypes: dict[str, Any] = {}
        for name, d in schema(zh).items():
            if d["type"] == "category":
                dtypes[name] = pd.CategoricalDtype(d["categories"])
            else:
                dtypes[name] = "int16" if d["type"] == "int" else "float64"
        t1, _CPU[0] = time.perf_counter(), time.process_time()
        df = pd.read_csv(path, dtype=dtypes, engine="c", encoding=encoding)
        t2, _CPU[1] = time.perf_counter(), time.process_time()
        return df, t1 - t0, t2 - t1, len(df), float(df.memory_usage(deep=True).sum()) / 2**20
    if loader == "pyarrow":
        import pyarrow as pa
        import pyarrow.csv as pacsv

        types: dict[str, Any] = {}
        for name, d in schema(zh).items():
            if d["type"] == "category":
                types[name] = pa.dictionary(pa.int32(), pa.string())
            else:
                types[name] = pa.int16() if d["type"] == "int" else pa.float64()
        t1, _CPU[0] = time.perf_counter(), time.process_time()
        tbl = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(encoding=encoding),
            convert_options=pacsv.ConvertOptions(column_types=types),
        )
        t2, _CPU[1] = time.perf_counter(), time.process_time()
        return tbl, t1 - t0, t2 - t1, tbl.num_rows, tbl.nbytes / 2**20
    raise ValueError(loader)


def worker_load(loader: str, path: str, zh: bool, encoding: str) -> dict[str, Any]:
    obj, t_imp, t_load, rows, size = _load(loader, path, zh, encoding)
    res = {
        "t_import": t_imp,
        "t_load": t_load,
        "rows": rows,
        "table_mib": size,
        "cpu_load": _CPU[1] - _CPU[0],
        "rss_after_mib": _status_kib("VmRSS") / 1024.0,
        "vmhwm_mib": _status_kib("VmHWM") / 1024.0,
    }
    del obj
    return res


def worker_polars_encoding(path: str) -> dict[str, Any]:
    """Show that polars cannot read a GBK / UTF-16 file (it reads UTF-8 only)."""
    import polars as pl

    try:
        df = pl.read_csv(path, schema=_polars_schema(pl, "zh" in Path(path).name))
        return {"ok": True, "rows": df.height, "note": "read without error (check the values)"}
    except Exception as exc:  # noqa: BLE001  (polars raises several types)
        return {"ok": False, "note": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:160]}"}


# ---- the release


def numpy_queries(cols: dict[str, Any]) -> dict[str, Any]:
    """The same 20 statistics, exact, with bare numpy on the loaded columns: one independent function per query.

    Straightforward, reasonably efficient numpy (no intermediate shared between queries): ``bincount`` on the
    int16 codes (``weights=`` for grouped sums), ``clip().sum()``, value counts of the int column ``age``
    for its bands and its quantile, ``searchsorted`` for the irregular wage bands, and for the wage quantile
    over its uniform grid of 1,001 candidates the candidate index by arithmetic with an exact fix-up
    (what ``np.histogram`` does for equal bins).
    """
    import numpy as np

    age, hours, wage = cols["age"], cols["hours"], cols["wage"]
    sex, occ, region, state = cols["sex"], cols["occupation"], cols["region"], cols["state"]
    n = len(age)

    def wsum() -> Any:
        return np.clip(wage, 0.0, 5000.0).sum()

    def hsum() -> Any:
        return np.clip(hours, 0, 99).sum(dtype=np.int64)

    def band(values: Any, lo: int, hi: int, edges: list[int]) -> Any:
        vc = np.bincount(np.clip(values, lo, hi) - lo, minlength=hi - lo + 1)  # value counts of an int column
        cut = np.clip(np.asarray(edges[1:-1]) - lo, 0, hi - lo + 1)
        return np.add.reduceat(np.concatenate((vc, [0])), np.concatenate(([0], cut)))[: len(edges) - 1]

    def wage_bands() -> Any:
        e = np.asarray(WAGE_BINS, dtype=np.float64)
        return np.bincount(
            np.clip(np.searchsorted(e, wage, "right") - 1, 0, len(e) - 2), minlength=len(e) - 1
        )

    def median_age() -> Any:
        a = np.bincount(np.clip(age, 0, 100), minlength=101)  # candidates 0..100
        c = np.cumsum(a)
        below, at_most = c - a, c
        return -np.maximum(0.0, np.maximum(below - 0.5 * n, 0.5 * n - at_most))  # tie-aware score

    def wage_p90() -> Any:
        cands = np.linspace(0.0, 5000.0, 1001)
        x = np.clip(wage, 0.0, 5000.0)
        i = np.minimum((x * (1 / 5.0)).astype(np.intp), 1000)  # candidate index: cands[i] <= x < cands[i + 1]
        i -= cands[i] > x  # fix-ups for rounding in x / 5
        i += (i < 1000) & (cands[np.minimum(i + 1, 1000)] <= x)
        le = np.bincount(i, minlength=1001)  # rows with largest candidate <= x at i
        eq = np.bincount(i[cands[i] == x], minlength=1001)  # rows equal to candidate i
        c = np.cumsum(le)
        below = c - le  # #(x < c_j) = rows of index < j
        at_most = below + eq  # #(x <= c_j): plus the rows equal to c_j
        return -np.maximum(0.0, np.maximum(below - 0.9 * n, 0.9 * n - at_most))  # tie-aware score

    return {
        "people": lambda: n,
        "total wage": wsum,
        "total hours": hsum,
        "mean wage": lambda: (n, wsum()),
        "mean age": lambda: (n, np.clip(age, 0, 100).sum(dtype=np.int64)),
        "regions": lambda: np.bincount(region, minlength=4),
        "occupations": lambda: np.bincount(occ, minlength=15),
        "states": lambda: np.bincount(state, minlength=50),
        "age bands": lambda: band(age, 0, 100, AGE_BINS),
        "wage bands": wage_bands,
        "people by sex": lambda: np.bincount(sex, minlength=2),
        "people by state": lambda: np.bincount(state, minlength=50),
        "wage by region": lambda: np.bincount(region, weights=np.clip(wage, 0.0, 5000.0), minlength=4),
        "hours by occupation": lambda: np.bincount(occ, weights=np.clip(hours, 0, 99), minlength=15),
        "mean wage by sex": lambda: (
            np.bincount(sex, minlength=2),
            np.bincount(sex, weights=np.clip(wage, 0.0, 5000.0), minlength=2),
        ),
        "mean hours by state": lambda: (
            np.bincount(state, minlength=50),
            np.bincount(state, weights=np.clip(hours, 0, 99), minlength=50),
        ),
        "occupation by region": lambda: np.bincount(region.astype(np.intp) * 15 + occ, minlength=60),
        "median age": median_age,
        "wage p90": wage_p90,
        "commonest occupation": lambda: int(np.argmax(np.bincount(occ, minlength=15))),
    }


def numpy_baseline(cols: dict[str, Any]) -> tuple[dict[str, Any], dict[str, float]]:
    """Run the 20 numpy queries; their results and per-query seconds."""
    out, times = {}, {}
    for name, fn in numpy_queries(cols).items():
        t = time.perf_counter()
        out[name] = fn()
        times[name] = time.perf_counter() - t
    return out, times


def _check_against_numpy(designs: list[Any], exacts: list[Any], base: dict[str, Any]) -> list[str]:
    """Compare dpdesk's exact vectors with the numpy baseline (counts exact, sums to 1e-6 relative)."""
    import numpy as np

    problems = []
    for d, ex in zip(designs, exacts, strict=True):
        name, stat = d.spec.name, d.spec.statistic
        b = base[name]
        try:
            if stat in ("count", "histogram"):
                ok = np.array_equal(np.asarray(ex.vectors[0]), np.atleast_1d(np.asarray(b)))
            elif stat == "sum":
                unit = d.components[0].unit
                ok = np.allclose(np.asarray(ex.vectors[0], dtype=float) * unit, np.atleast_1d(b), rtol=1e-6)
            elif stat == "mean":  # dpdesk sums x - mid on a grid of unit 2^-(s+1)
                cnt, tot = b
                col_lo, col_hi = schema()[d.spec.column]["bounds"]
                mid = (col_lo + col_hi) / 2.0
                sums = (
                    np.asarray(ex.vectors[1], dtype=float) * d.components[1].unit
                    + np.asarray(ex.vectors[0]) * mid
                )
                ok = np.array_equal(np.asarray(ex.vectors[0]), np.atleast_1d(cnt)) and np.allclose(
                    sums, np.atleast_1d(tot), rtol=1e-6
                )
            elif stat == "quantile":
                ok = np.allclose(np.asarray(ex.utilities), b, rtol=1e-9, atol=1e-6)
            else:  # mode
                ok = int(np.argmax(ex.utilities)) == b
        except Exception as exc:  # noqa: BLE001  (a shape mismatch is a problem to report, not a crash)
            ok = False
            name += f" ({exc})"
        if not ok:
            problems.append(name)
    return problems


def worker_release(path: str, reps: int) -> dict[str, Any]:
    """Load once, then alternate dpdesk's release with the numpy baseline.

    The split of each timed release into exact statistics, noise and the rest (designs, budget report,
    ledger) comes from timing wrappers put around ``exact_statistic`` and ``noisy_rows`` in the release
    module's namespace for the duration of the run (instrumentation only; dpdesk's code is unchanged).
    """
    import dpdesk.core.release.steps as rel_mod
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.loading import load_table
    from dpdesk.core.plan.reader import parse_plan

    plan = parse_plan(plan_dict())
    t0 = time.perf_counter()
    table = load_table(path, plan.columns)
    t_load = time.perf_counter() - t0
    cols = {n: c.values for n, c in table.columns.items()}
    rss_loaded = _status_kib("VmRSS") / 1024.0
    homes: list[str] = []
    np_per: list[dict[str, float]] = []
    cur: dict[str, dict[str, float]] = {}  # per query of the release being timed
    captured: list[Any] = []

    real_exact, real_noisy = rel_mod.exact_statistic, rel_mod.noisy_rows

    def timed_exact(design: Any, *args: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        ex = real_exact(design, *args, **kw)
        cur.setdefault(design.spec.name, {})["exact"] = time.perf_counter() - t
        captured.append(ex)
        return ex

    def timed_noisy(design: Any, *args: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        rows = real_noisy(design, *args, **kw)
        cur.setdefault(design.spec.name, {})["noise"] = time.perf_counter() - t
        return rows

    rel_mod.exact_statistic, rel_mod.noisy_rows = timed_exact, timed_noisy  # type: ignore[assignment]

    def one_release() -> tuple[float, float, dict[str, dict[str, float]]]:
        home = tempfile.mkdtemp(prefix="dpdesk-bench-home-")
        homes.append(home)
        cur.clear()
        captured.clear()
        rss0 = _status_kib("VmRSS")
        can = _reset_peak()
        t = time.perf_counter()
        r = rel_mod.release(plan, path, Path(home), out_dir=None, table=table)
        dt = time.perf_counter() - t
        extra = (_status_kib("VmHWM") - rss0) / 1024.0 if can else float("nan")
        assert len(r.rows) > 0
        return dt, extra, {k: dict(v) for k, v in cur.items()}

    def one_numpy() -> tuple[float, float, dict[str, Any]]:
        rss0 = _status_kib("VmRSS")
        can = _reset_peak()
        t = time.perf_counter()
        b, per = numpy_baseline(cols)
        dt = time.perf_counter() - t
        extra = (_status_kib("VmHWM") - rss0) / 1024.0 if can else float("nan")
        np_per.append(per)
        return dt, extra, b

    t_first, _, _ = (
        one_release()
    )  # includes OpenDP's import and first-call set-up: reported, not in the median
    exacts = list(captured)
    t_np_first, _, base = one_numpy()
    np_per.clear()
    rel_t, rel_mem, rel_split, np_t, np_mem = [], [], [], [], []
    for i in range(reps):
        order = ("dpdesk", "numpy") if i % 2 == 0 else ("numpy", "dpdesk")
        for which in order:
            if which == "dpdesk":
                dt, mem, split = one_release()
                rel_t.append(dt)
                rel_mem.append(mem)
                rel_split.append(split)
            else:
                dt, mem, _ = one_numpy()
                np_t.append(dt)
                np_mem.append(mem)
    rel_mod.exact_statistic, rel_mod.noisy_rows = real_exact, real_noisy  # type: ignore[assignment]

    designs = design_plan(plan)
    problems = _check_against_numpy(designs, exacts, base)
    for h in homes:
        shutil.rmtree(h, ignore_errors=True)
    names = [d.spec.name for d in designs]
    ex_tot = [sum(sp[n]["exact"] for n in names) for sp in rel_split]
    no_tot = [sum(sp[n]["noise"] for n in names) for sp in rel_split]
    return {
        "rows": table.n_rows,
        "t_load": t_load,
        "rss_loaded_mib": rss_loaded,
        "release_first_s": t_first,
        "numpy_first_s": t_np_first,
        "release_s": rel_t,
        "release_exact_s": ex_tot,
        "release_noise_s": no_tot,
        "release_rest_s": [t - e - n for t, e, n in zip(rel_t, ex_tot, no_tot, strict=True)],
        "release_extra_peak_mib": rel_mem,
        "numpy_s": np_t,
        "numpy_extra_peak_mib": np_mem,
        "per_query": {
            n: {
                "exact": statistics.median(sp[n]["exact"] for sp in rel_split),
                "noise": statistics.median(sp[n]["noise"] for sp in rel_split),
                "numpy": statistics.median(p[n] for p in np_per),
            }
            for n in names
        },
        "statistic_kinds": {d.spec.name: f"{d.spec.statistic}/{d.spec.mechanism}" for d in designs},
        "mismatches": problems,
    }


def worker_profile(kind: str, path: str, out: str) -> dict[str, Any]:
    """cProfile one dpdesk load (kind=load) or one release after loading (kind=release)."""
    import cProfile
    import io
    import pstats

    import polars  # noqa: F401  (imported lazily by load_table: not part of the profile)

    from dpdesk.core.loading import load_table
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.release.steps import release

    plan = parse_plan(plan_dict())
    prof = cProfile.Profile()
    if kind == "load":
        prof.enable()
        load_table(path, plan.columns)
        prof.disable()
    else:
        table = load_table(path, plan.columns)
        home = tempfile.mkdtemp(prefix="dpdesk-bench-home-")
        release(plan, path, Path(home), table=table)  # warm-up (OpenDP import)
        shutil.rmtree(home, ignore_errors=True)
        home = tempfile.mkdtemp(prefix="dpdesk-bench-home-")
        prof.enable()
        release(plan, path, Path(home), table=table)
        prof.disable()
        shutil.rmtree(home, ignore_errors=True)
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
    s2 = io.StringIO()
    pstats.Stats(prof, stream=s2).sort_stats("cumulative").print_stats(30)
    Path(out).write_text(s.getvalue() + "\n\n" + s2.getvalue())
    return {"written": out}


# ----------------------------------------------------------------------------- measurement driver


def med(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return statistics.median(xs) if xs else float("nan")


def run_load_rounds(title: str, entries: list[dict[str, Any]], rounds: int, log: list[str]) -> dict[str, Any]:
    """Interleaved rounds over ``entries`` (label, loader, file, zh, encoding); returns raw results."""
    avail = [e for e in entries if loader_available(e["loader"])]
    skipped = [e["label"] for e in entries if e not in avail]
    for f in {e["file"] for e in avail}:
        warm_cache(Path(f))
    raw: dict[str, list[dict[str, Any]]] = {e["label"]: [] for e in avail}
    print(
        f"\n== {title}: {len(avail)} loaders x {rounds} rounds (skipped: {', '.join(skipped) or 'none'})",
        flush=True,
    )
    for r in range(rounds):
        k = r % len(avail)
        order = avail[k:] + avail[:k]
        line = []
        for e in order:
            res = run_child(["load", e["loader"], e["file"], "zh" if e["zh"] else "-", e["encoding"]])
            res["round"] = r
            raw[e["label"]].append(res)
            line.append(f"{e['label']} {res['t_load']:.2f}s/{res['peak_rss_mib']:.0f}MiB")
        msg = f"  round {r + 1}/{rounds}: " + ", ".join(line)
        print(msg, flush=True)
        log.append(msg)
    rows = {lab: {res["rows"] for res in v} for lab, v in raw.items()}
    return {"title": title, "entries": avail, "skipped": skipped, "raw": raw, "rows": rows}


def summarise_loads(block: dict[str, Any], ref: str) -> list[dict[str, Any]]:
    raw = block["raw"]
    out = []
    ref_runs = raw.get(ref, [])
    ref_by_round = {x["round"]: x["t_load"] for x in ref_runs}
    ref_med = med([x["t_load"] for x in ref_runs]) if ref_runs else float("nan")
    ref_min = min([x["t_load"] for x in ref_runs]) if ref_runs else float("nan")
    ref_rss = med([x["peak_rss_mib"] for x in ref_runs]) if ref_runs else float("nan")
    ref_cpu = med([x["cpu_load"] for x in ref_runs]) if ref_runs else float("nan")
    for e in block["entries"]:
        runs = raw[e["label"]]
        t = [x["t_load"] for x in runs]
        paired = [x["t_load"] / ref_by_round[x["round"]] for x in runs if x["round"] in ref_by_round]
        rss = med([x["peak_rss_mib"] for x in runs])
        out.append(
            {
                "label": e["label"],
                "median_s": med(t),
                "min_s": min(t),
                "ratio_median": med(t) / ref_med,
                "ratio_min": min(t) / ref_min,
                "ratio_paired": med(paired),
                "peak_rss_mib": rss,
                "rss_ratio": rss / ref_rss,
                "rss_after_mib": med([x["rss_after_mib"] for x in runs]),
                "hwm_gap_mib": max(abs(x["peak_rss_mib"] - x["vmhwm_mib"]) for x in runs),
                "table_mib": med([x["table_mib"] for x in runs]),
                "import_s": med([x["t_import"] for x in runs]),
                "cpu_s": med([x["cpu_load"] for x in runs]),
                "cpu_ratio": med([x["cpu_load"] for x in runs]) / ref_cpu,
                "other_cores": med([x["other_cores"] for x in runs]),
                "mb_s": Path(e["file"]).stat().st_size / 1e6 / med(t),
                "n": len(t),
            }
        )
    return out


def load_table_md(rows: list[dict[str, Any]], ref: str) -> str:
    head = (
        f"| loader | median s | min s | x {ref} (median) | x {ref} (min) | x {ref} (paired rounds) | MB/s (median) "
        f"| peak RSS MiB | RSS x {ref} | RSS after load MiB | table MiB | CPU s (all threads) | CPU x {ref} | import s "
        "| other cores |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    body = ""
    for r in rows:
        body += (
            f"| {r['label']} | {r['median_s']:.3f} | {r['min_s']:.3f} | {r['ratio_median']:.2f} | {r['ratio_min']:.2f} "
            f"| {r['ratio_paired']:.2f} | {r['mb_s']:.0f} | {r['peak_rss_mib']:.0f} | {r['rss_ratio']:.2f} "
            f"| {r['rss_after_mib']:.0f} | {r['table_mib']:.0f} | {r['cpu_s']:.2f} | {r['cpu_ratio']:.2f} "
            f"| {r['import_s']:.2f} | {r['other_cores']:.2f} |\n"
        )
    return head + body


def load_entries(files: dict[str, Path], size: str, sketch: bool) -> list[dict[str, Any]]:
    f = str(files[size])
    extra = [
        {
            "label": "sketch: typed pieces (not dpdesk)",
            "loader": "sketch",
            "file": f,
            "zh": False,
            "encoding": "utf8",
        },
        {
            "label": "sketch: whole file (not dpdesk)",
            "loader": "sketch-whole",
            "file": f,
            "zh": False,
            "encoding": "utf8",
        },
    ]
    return (extra if sketch else []) + [
        {"label": "dpdesk load_table", "loader": "dpdesk", "file": f, "zh": False, "encoding": "utf8"},
        {"label": "polars declared", "loader": "polars", "file": f, "zh": False, "encoding": "utf8"},
        {"label": "pandas C declared", "loader": "pandas", "file": f, "zh": False, "encoding": "utf8"},
        {"label": "pyarrow.csv declared", "loader": "pyarrow", "file": f, "zh": False, "encoding": "utf8"},
    ]


def encoding_entries(files: dict[str, Path]) -> list[dict[str, Any]]:
    g, zh8 = str(files["1M_zh_gbk"]), str(files["1M_zh"])
    u16, u8 = str(files["1M_utf16"]), str(files["1M"])
    return [
        {
            "label": "dpdesk GB18030 (zh labels)",
            "loader": "dpdesk",
            "file": g,
            "zh": True,
            "encoding": "gb18030",
        },
        {
            "label": "dpdesk UTF-8 (zh labels)",
            "loader": "dpdesk",
            "file": zh8,
            "zh": True,
            "encoding": "utf8",
        },
        {
            "label": "polars UTF-8 (zh labels)",
            "loader": "polars",
            "file": zh8,
            "zh": True,
            "encoding": "utf8",
        },
        {
            "label": "pandas C GB18030 (zh labels)",
            "loader": "pandas",
            "file": g,
            "zh": True,
            "encoding": "gb18030",
        },
        {"label": "dpdesk UTF-16", "loader": "dpdesk", "file": u16, "zh": False, "encoding": "utf-16"},
        {"label": "dpdesk UTF-8", "loader": "dpdesk", "file": u8, "zh": False, "encoding": "utf8"},
        {"label": "polars UTF-8", "loader": "polars", "file": u8, "zh": False, "encoding": "utf8"},
        {"label": "pandas C UTF-16", "loader": "pandas", "file": u16, "zh": False, "encoding": "utf-16"},
    ]


def release_md(res: dict[str, Any], size: str) -> str:
    r_med, n_med = med(res["release_s"]), med(res["numpy_s"])
    r_min, n_min = min(res["release_s"]), min(res["numpy_s"])
    return (
        f"| {size} | {len(res['release_s'])} | {r_med:.3f} | {r_min:.3f} | {n_med:.3f} | {n_min:.3f} "
        f"| **{r_med / n_med:.1f}** | {r_min / n_min:.1f} | {med(res['release_exact_s']):.3f} "
        f"| {med(res['release_noise_s']):.3f} | {med(res['release_rest_s']):.3f} | {res['release_first_s']:.2f} "
        f"| {max(0.0, med(res['release_extra_peak_mib'])):.0f} | {max(0.0, med(res['numpy_extra_peak_mib'])):.0f} "
        f"| {'yes' if not res['mismatches'] else 'NO: ' + ', '.join(res['mismatches'])} |\n"
    )


RELEASE_HEAD = (
    "| rows | reps | dpdesk release median s | min s | numpy median s | min s | x numpy (median) | x numpy (min) "
    "| of which exact_statistic s (median) | noise (OpenDP) s | rest: designs, budget, ledger s | first release s (OpenDP import) "
    "| release extra peak MiB | numpy extra peak MiB | exact values = numpy |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
)


def per_query_md(res: dict[str, Any]) -> str:
    s = (
        "| query | statistic / mechanism | dpdesk exact_statistic ms | dpdesk noise ms | numpy ms "
        "| exact / numpy |\n|---|---|---|---|---|---|\n"
    )
    for name, v in res["per_query"].items():
        ratio = f"{v['exact'] / v['numpy']:.1f}" if v["numpy"] >= 1e-4 else "–"
        s += (
            f"| {name} | {res['statistic_kinds'][name]} | {v['exact'] * 1000:.1f} | {v['noise'] * 1000:.1f} "
            f"| {v['numpy'] * 1000:.1f} | {ratio} |\n"
        )
    tot_e = sum(v["exact"] for v in res["per_query"].values())
    tot_n = sum(v["noise"] for v in res["per_query"].values())
    tot_p = sum(v["numpy"] for v in res["per_query"].values())
    s += f"| **total** | | **{tot_e * 1000:.0f}** | **{tot_n * 1000:.0f}** | **{tot_p * 1000:.0f}** | {tot_e / tot_p:.1f} |\n"
    return s


def source_digest(root: Path) -> str:
    """A digest of the dpdesk/*.py sources under ``root``."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted((root / "dpdesk").rglob("*.py")):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def git_state() -> str:
    try:
        rev = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            check=False,
            capture_output=True,
            text=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "dpdesk"],
            check=False,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "git ?"
    return f"git {rev}{' + uncommitted changes in dpdesk/' if dirty else ''}"


def snapshot_sources(out: Path) -> Path:
    """Copy dpdesk/ as it is now, so that the whole run measures one version even if the tree changes meanwhile.

    Children get the copy first on PYTHONPATH (ahead of the editable install's path entry).
    """
    snap = out / "dpdesk-snapshot"
    shutil.rmtree(snap, ignore_errors=True)
    shutil.copytree(REPO / "dpdesk", snap / "dpdesk", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return snap


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for m in ("dpdesk", "numpy", "polars", "opendp", "pandas", "pyarrow"):
        try:
            out[m] = importlib.metadata.version(m)
        except importlib.metadata.PackageNotFoundError:
            out[m] = "not installed"
    return out


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{model}, {os.cpu_count()} logical CPUs, {mem:.0f} GiB RAM, {platform.system()} {platform.release()}"
    )


def _keep_notes(path: Path) -> str:
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if NOTES_BEGIN in text and NOTES_END in text:
            return text[text.index(NOTES_BEGIN) : text.index(NOTES_END) + len(NOTES_END)]
    return f"{NOTES_BEGIN}\n{NOTES_END}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="scratch folder for data files (default benchmarks/out)"
    )
    ap.add_argument("--quick", action="store_true", help="1M rows only, 2 rounds, 3 release repetitions")
    ap.add_argument(
        "--rounds", type=int, default=None, help="load rounds (default 6 at 10M, 7 at 1M; quick: 2)"
    )
    ap.add_argument("--reps", type=int, default=None, help="release repetitions (default 5; quick: 3)")
    ap.add_argument("--no-encodings", action="store_true", help="skip the GB18030 / UTF-16 section")
    ap.add_argument(
        "--sketch", action="store_true", help="also time a sketch of the suggested loader fix (not dpdesk)"
    )
    ap.add_argument(
        "--profile", action="store_true", help="also write cProfile reports of dpdesk's load and release"
    )
    ap.add_argument(
        "--results",
        type=Path,
        default=RESULTS,
        help="where to write the Markdown (default benchmarks/RESULTS.md)",
    )
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.worker:
        kind, *rest = a.worker
        if kind == "load":
            loader, path, zh, enc = rest
            res = worker_load(loader, path, zh == "zh", enc)
        elif kind == "release":
            res = worker_release(rest[0], int(rest[1]))
        elif kind == "where":
            import dpdesk

            res = {"dpdesk_file": dpdesk.__file__}
        elif kind == "make-data":
            make_data(Path(rest[0]), rest[1:])
            return 0
        elif kind == "polars-encoding":
            res = worker_polars_encoding(rest[0])
        elif kind == "profile":
            res = worker_profile(rest[0], rest[1], rest[2])
        else:
            raise SystemExit(f"unknown worker {kind}")
        print(json.dumps(res))
        return 0

    sizes = ["1M"] if a.quick else ["1M", "10M"]
    reps = a.reps or (3 if a.quick else 5)
    started = _dt.datetime.now().astimezone()
    t_start = time.perf_counter()
    load_before = os.getloadavg()
    cmdline = " ".join([Path(sys.executable).as_posix(), "benchmarks/bench.py", *sys.argv[1:]])
    print(f"dpdesk benchmark, {started:%Y-%m-%d %H:%M %Z}; load average {load_before}", flush=True)
    print("data files:", flush=True)
    # generated in a child: the parent must stay small, because a vfork()ed child's ru_maxrss
    # starts from the parent's high-water mark (Linux copies it at exec)
    gen = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", "make-data", str(a.out), *sizes],
        check=False,
    )
    if gen.returncode != 0:
        raise SystemExit("data generation failed")
    files = data_files(a.out)
    log: list[str] = []
    snap = snapshot_sources(a.out)
    CHILD_ENV["PYTHONPATH"] = os.pathsep.join([str(snap), *filter(None, [os.environ.get("PYTHONPATH")])])
    measured = f"{git_state()}, dpdesk/*.py digest {source_digest(snap)}"
    check = run_child(["where"])
    if Path(check["dpdesk_file"]).resolve().is_relative_to(snap.resolve()) is False:
        raise SystemExit(f"children import dpdesk from {check['dpdesk_file']}, not from the snapshot {snap}")
    print(f"measuring dpdesk as of the start: {measured} (a copy in {snap})", flush=True)

    load_blocks: dict[str, Any] = {}
    for size in reversed(sizes):  # the big one first, while the machine is (hopefully) as calm as it gets
        rounds = a.rounds or (2 if a.quick else (6 if size == "10M" else 7))
        load_blocks[size] = run_load_rounds(f"load {size}", load_entries(files, size, a.sketch), rounds, log)

    enc_block = None
    polars_enc: dict[str, Any] = {}
    if not a.no_encodings:
        rounds = a.rounds or (2 if a.quick else 5)
        enc_block = run_load_rounds("encodings (1M)", encoding_entries(files), rounds, log)
        if loader_available("polars"):
            for key in ("1M_zh_gbk", "1M_utf16"):
                polars_enc[key] = run_child(["polars-encoding", str(files[key])])

    rel: dict[str, Any] = {}
    for size in reversed(sizes):
        print(f"\n== release {size}: {reps} repetitions", flush=True)
        warm_cache(files[size])
        rel[size] = run_child(["release", str(files[size]), str(reps)])
        r = rel[size]
        msg = (
            f"  dpdesk release median {med(r['release_s']):.3f}s, numpy {med(r['numpy_s']):.3f}s, "
            f"ratio {med(r['release_s']) / med(r['numpy_s']):.1f}x; mismatches: {r['mismatches'] or 'none'}"
        )
        print(msg, flush=True)
        log.append(f"release {size}: {msg.strip()}")

    profiles: dict[str, str] = {}
    if a.profile:
        big = sizes[-1]
        for kind in ("load", "release"):
            out = a.out / f"profile_{kind}_{big}.txt"
            print(f"\n== cProfile dpdesk {kind} {big} -> {out}", flush=True)
            run_child(["profile", kind, str(files[big]), str(out)])
            profiles[kind] = str(out)

    tree_now = source_digest(REPO)
    load_after = os.getloadavg()
    elapsed = time.perf_counter() - t_start

    # ------------------------------------------------------------------ report
    ref = "polars declared"
    md: list[str] = []
    md.append("# dpdesk benchmark results\n")
    md.append(
        f"Run {started:%Y-%m-%d %H:%M %Z}, {elapsed / 60:.1f} min in total. Machine: {machine()}.  \n"
        f"Load average (1/5/15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; after: "
        f'{", ".join(f"{x:.2f}" for x in load_after)}. "other cores" = CPU used by other processes during a '
        "measurement (2.0 = the whole machine).  \n"
        f"Versions: {', '.join(f'{k} {v}' for k, v in versions().items())}.  \n"
        f"dpdesk measured: {measured} (a copy taken at the start of the run and imported by every child"
        + (
            ")"
            if tree_now == source_digest(snap)
            else "; the working tree changed during the run, to digest "
            + tree_now
            + ", which was not measured)"
        )
        + ".  \n"
        f"Command: `{cmdline}` (from the repository root).\n"
    )
    md.append(
        "Method: every load is a fresh process, peak RSS = the child's `ru_maxrss` (`os.wait4`), page cache warm; "
        'loaders interleaved round by round in rotated order; times exclude the imports (column "import s"). '
        '"paired rounds" = median over rounds of (loader time / polars time in the same round). '
        "dpdesk's time includes the file's SHA-256 (its ledger key), which the others do not compute. "
        "The release is timed in one process per size after loading, alternating with the numpy baseline; "
        "each release gets a fresh temporary home (ledger) and includes the ledger's fsynced write and OpenDP's noise.\n"
    )

    # targets
    md.append("## Targets\n")
    tgt_md = "| target | measured | met? |\n|---|---|---|\n"
    for size in reversed(sizes):
        rows = summarise_loads(load_blocks[size], ref)
        d = next((r for r in rows if r["label"].startswith("dpdesk")), None)
        if d is None:
            continue
        tgt_md += (
            f"| {size}: dpdesk load within 1.1x of polars declared | {d['ratio_median']:.2f}x median, "
            f"{d['ratio_min']:.2f}x min, {d['ratio_paired']:.2f}x paired rounds; CPU time {d['cpu_ratio']:.2f}x | "
            f"{'yes' if d['ratio_median'] <= 1.1 else 'no'} |\n"
            f"| {size}: dpdesk peak RSS no more than polars declared | {d['peak_rss_mib']:.0f} vs "
            f"{d['peak_rss_mib'] / d['rss_ratio']:.0f} MiB ({d['rss_ratio']:.2f}x) | "
            f"{'yes' if d['rss_ratio'] <= 1.0 else 'no'} |\n"
        )
    for size in reversed(sizes):
        r = rel[size]
        ratio = med(r["release_s"]) / med(r["numpy_s"])
        tgt = " (the target)" if size == "10M" else " (for reference)"
        tgt_md += (
            f"| {size}: 20-query release within 3x of bare numpy{tgt} | {ratio:.1f}x median "
            f"({med(r['release_s']):.3f} s vs {med(r['numpy_s']):.3f} s), "
            f"{min(r['release_s']) / min(r['numpy_s']):.1f}x min | {'yes' if ratio <= 3 else 'no'} |\n"
        )
    md.append(tgt_md)

    for size in reversed(sizes):
        b = load_blocks[size]
        fsize = Path(b["entries"][0]["file"]).stat().st_size / 1e6
        rows_seen = sorted({n for v in b["rows"].values() for n in v})
        md.append(f"## Load, {size} rows ({fsize:.0f} MB CSV), {len(next(iter(b['raw'].values())))} rounds\n")
        md.append(load_table_md(summarise_loads(b, ref), ref))
        gap = max(r["hwm_gap_mib"] for r in summarise_loads(b, ref))
        md.append(
            f"\nRows read by every loader: {rows_seen}. Skipped (not installed): {', '.join(b['skipped']) or 'none'}. "
            f"Peak RSS cross-check: `ru_maxrss` and the child's own VmHWM differ by at most {gap:.1f} MiB.\n"
        )

    if enc_block is not None:
        md.append(f"## Other encodings, 1M rows, {len(next(iter(enc_block['raw'].values())))} rounds\n")
        md.append(
            "GB18030 file = the 1M table with Chinese labels for sex, region and occupation (declared as such), "
            "encoded in GB18030; its reference is polars reading the UTF-8 version of the same table. UTF-16 file = "
            "the plain 1M table in UTF-16 (BOM); its reference is polars on the UTF-8 file. Ratios below are to "
            "the row's own reference.\n"
        )
        rows = summarise_loads(enc_block, "polars UTF-8 (zh labels)")
        rows16 = {r["label"]: r for r in summarise_loads(enc_block, "polars UTF-8")}
        tab = (
            "| loader | file | median s | min s | x polars UTF-8 (median) | x polars (min) | x polars (paired) "
            "| MB/s of the file | peak RSS MiB | RSS x polars | other cores |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
        )
        for r in rows:
            rr = r if ("zh" in r["label"]) else rows16[r["label"]]
            fname = Path(next(e["file"] for e in enc_block["entries"] if e["label"] == r["label"])).name
            tab += (
                f"| {r['label']} | {fname} | {rr['median_s']:.3f} | {rr['min_s']:.3f} | {rr['ratio_median']:.2f} "
                f"| {rr['ratio_min']:.2f} | {rr['ratio_paired']:.2f} | {rr['mb_s']:.0f} | {rr['peak_rss_mib']:.0f} "
                f"| {rr['rss_ratio']:.2f} | {rr['other_cores']:.2f} |\n"
            )
        md.append(tab)
        for key, v in polars_enc.items():
            md.append(
                f"\npolars `read_csv` on `{files[key].name}`: {'reads' if v['ok'] else 'fails'} — {v['note']}"
            )
        md.append(f"\nSkipped (not installed): {', '.join(enc_block['skipped']) or 'none'}.\n")

    md.append("## Release: 20 queries on the loaded table vs the same 20 statistics with bare numpy\n")
    md.append(
        "Plan: budget epsilon 100, delta 1e-5; 20 queries of epsilon 1 (Laplace, analytic Gaussian with delta 1e-7, "
        "exponential): counts, sums, means, histograms (categories and bins), grouped counts/sums/means, a 15x4 "
        "cross-tab, quantiles of age (101 candidates) and wage (1,001 candidates), a mode. numpy baseline: `bincount` "
        "on the int16 codes (with `weights=` for grouped sums), `clip().sum()`, value counts of the int column age "
        "for its bands and its quantile, `searchsorted` for the irregular wage bands, and for the wage quantile the "
        "candidate index by arithmetic with an exact fix-up (as `np.histogram` does for equal bins); each query "
        "computed independently (`numpy_queries()` in bench.py) — exact values, no noise, no ledger. "
        '"extra peak MiB" = peak RSS above the RSS before the call (Linux clear_refs).\n'
    )
    md.append(RELEASE_HEAD + "".join(release_md(rel[s], s) for s in reversed(sizes)))
    for size in reversed(sizes):
        md.append(f"\n### Release pieces per query, {size} rows (medians over the timed releases)\n")
        md.append(per_query_md(rel[size]))
    if profiles:
        md.append(
            "\n## cProfile (one run each, under the profiler; top by own time, then by cumulative time)\n"
        )
        for kind, p in profiles.items():
            blocks = [b for b in Path(p).read_text().split("\n\n\n") if b.strip()]
            lines = []
            for b in blocks[:2]:
                lines += [ln.rstrip() for ln in b.splitlines() if ln.strip() and "List reduced" not in ln][
                    :24
                ] + [""]
            md.append(f"### dpdesk {kind}, {sizes[-1]} rows\n\n```\n" + "\n".join(lines).rstrip() + "\n```\n")
    md.append("## Round log\n\n```\n" + "\n".join(log) + "\n```\n")
    md.append(_keep_notes(a.results) + "\n")
    text = "\n".join(md)
    a.results.write_text(text, encoding="utf-8")
    raw_path = a.out / f"results-{started:%Y%m%d-%H%M%S}.json"
    raw_path.write_text(
        json.dumps(
            {
                "loads": {k: v["raw"] for k, v in load_blocks.items()},
                "encodings": enc_block["raw"] if enc_block else None,
                "release": rel,
                "polars_encodings": polars_enc,
            },
            indent=1,
            default=str,
        )
    )
    print("\n" + text)
    print(f"written: {a.results} (raw: {raw_path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
