"""Reading a PostgreSQL table: dpdesk's COPY through psycopg into a CSV file, against connectorx and ADBC into polars.

Run with a scratch venv holding the contenders (never the product's dependencies)::

    python3 -m venv /work/benchvenv
    /work/benchvenv/bin/pip install connectorx adbc-driver-postgresql adbc-driver-manager pyarrow polars psycopg[binary]
    PYTHONPATH=$PWD .venv/bin/python benchmarks/pgread.py --python /work/benchvenv/bin/python --rows 3000000

A throwaway server (``tests/pgserver.py``, TCP on 127.0.0.1: every contender over the same transport) holds a
table of ``--rows`` rows of a census-like schema (int, float8, text). Each measurement is a fresh process, the
contenders interleaved round by round; the figure is the median wall time and the peak RSS of the child.

* ``copy-file``: :func:`dpdesk.core.loading.database.copy_to_file` (what ``--data postgresql://...`` does before
  the CSV reader takes over);
* ``copy+polars``: the same, then ``polars.read_csv`` of the file (rows in a DataFrame, to compare with the two
  below, which end there);
* ``connectorx``: ``connectorx.read_sql(..., return_type="polars")``;
* ``adbc``: ADBC's PostgreSQL driver, ``fetch_arrow_table``, then ``polars.from_arrow``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, resource, sys, time, tempfile, os
from pathlib import Path
kind, url = sys.argv[1], sys.argv[2]
import polars as pl
if kind in ("copy-file", "copy+polars"):
    from dpdesk.core.loading.database import copy_to_file, parse_source
    import psycopg
elif kind == "connectorx":
    import connectorx as cx
else:
    import adbc_driver_postgresql.dbapi as adbc
t0 = time.perf_counter()  # the read alone, each library imported
rows = None
if kind in ("copy-file", "copy+polars"):
    folder = Path(tempfile.mkdtemp())
    dest = folder / "t.csv"
    copy_to_file(parse_source(url + "?table=people"), dest)
    if kind == "copy+polars":
        rows = pl.read_csv(dest).height
    dest.unlink(); folder.rmdir()
elif kind == "connectorx":
    rows = cx.read_sql(url, "SELECT * FROM people", return_type="polars").height
elif kind == "adbc":
    with adbc.connect(url) as conn, conn.cursor() as cur:
        cur.execute("SELECT * FROM people")
        rows = pl.from_arrow(cur.fetch_arrow_table()).height
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"kind": kind, "wall": wall, "peak_mib": peak, "rows": rows}))
"""

KINDS = ("copy-file", "copy+polars", "connectorx", "adbc")


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=3_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--python", default="/work/benchvenv/bin/python", help="the scratch venv's interpreter")
    args = ap.parse_args()
    from tests.pgserver import PgServer

    server = PgServer(tcp=True).start()
    try:
        server.sql(
            "CREATE TABLE people AS SELECT (18 + i % 70)::int AS age, (i % 7919) * 1.37::float8 AS wage, "
            "(ARRAY['northeast','midwest','south','west'])[1 + i % 4] AS region, (i % 19)::int AS education, "
            f"(i % 1000) / 3.0::float8 AS weight FROM generate_series(1, {args.rows}) AS i"
        )
        size = server.sql("SELECT pg_size_pretty(pg_total_relation_size('people'))")[0][0]
        url = f"postgresql://admin@127.0.0.1:{server.port}/postgres"
        results: dict[str, list[dict[str, float]]] = {k: [] for k in KINDS}
        loads = [load_average()]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        for _round in range(args.repeats):
            for kind in KINDS:
                got = subprocess.run(
                    [args.python, "-c", CHILD, kind, url],
                    capture_output=True,
                    text=True,
                    env=env,
                    check=False,
                )
                if got.returncode:
                    raise SystemExit(f"{kind} failed: {got.stderr[-2000:]}")
                out = got.stdout
                results[kind].append(json.loads(out.strip().splitlines()[-1]))
            loads.append(load_average())
        base = statistics.median(r["wall"] for r in results["copy-file"])
        print(f"rows {args.rows}, table {size}, {args.repeats} rounds, load averages (1/5/15 min): {loads}")
        print("| contender | median s | ratio to copy-file | rows/s | peak RSS MiB |")
        print("|---|---|---|---|---|")
        for kind in KINDS:
            walls = [r["wall"] for r in results[kind]]
            med = statistics.median(walls)
            peak = statistics.median(r["peak_mib"] for r in results[kind])
            print(f"| {kind} | {med:.2f} | {med / base:.2f} | {args.rows / med:,.0f} | {peak:.0f} |")
    finally:
        server.remove()


if __name__ == "__main__":
    main()
