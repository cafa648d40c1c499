"""A ledger of any length: dpdesk's commands at 1, 1,000 and 5,000 past releases, before and after checkpoints.

Measures, side by side in one run, as fresh processes interleaved round by round (rotated order), peak RSS from
``os.wait4`` (the child's ``ru_maxrss``) and the other load on the machine recorded ((machine busy CPU from
/proc/stat - the child's own CPU) / wall; 2.0 = the whole 2-core machine):

* ``dpdesk budget PLAN --data CSV``: the budget meter of a dataset;
* ``dpdesk ledger``: the listing of every ledger of the home (no full verification asked for);
* ``dpdesk release PLAN --data CSV --out DIR``: the bundled 2,000-row sample table with the sample plan (its
  budget raised so that 5,001 releases fit), package written;
* the budget statement: ``dpdesk ledger statement --data CSV --out X.pdf`` as a whole (it verifies the whole
  chain by design), and ``write_budget_statement`` alone, timed inside a worker process;
* ``dpdesk ledger --data CSV``: one dataset's listing, every entry shown (``ledger_data``);
* a governed release (``governed``): ``dpdesk release PLAN --data CSV --out DIR --approval FILE`` on a dataset
  governed by an officer who requires signed plans, its plan approved at the head of the measured ledger. Its
  homes (``governed-<n>``) are built the same way, every release with its own approval (``--governed-sizes``,
  default the same sizes); the officer's keys and the approval of each measured home are made while building.

"before" is the code at the branch point (``git archive`` of ``--old``, default ``git merge-base main HEAD``),
"after" this working tree. The ledgers are built once by the "after" code through
:func:`dpdesk.core.release.steps.release` (no package; ``os.fsync`` skipped while building: the bytes written are the
same), then copied for the "before" code without their ``checkpoint`` entries (which it does not know), the
chain re-linked and re-hashed and the register's head moved to its end: the same releases, as the old code would
have written them. Every measured run gets a fresh copy of its home (made before the process starts, outside
the timing), since a release appends to it.

Run from the repository root (the product venv is enough)::

    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/ledger_length.py            # 5 rounds, ~15 min
    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/ledger_length.py --rounds 2 --sizes 1,1000

Writes ``benchmarks/RESULTS-ledger.md`` (``--results``); scratch in ``benchmarks/out/ledger_length/`` (``--out``;
the built homes are reused by later runs, delete the folder to rebuild).
"""

from __future__ import annotations

import argparse
import hashlib
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
SAMPLES = REPO / "resources" / "samples"
CSV = SAMPLES / "census_sample.csv"
PLAN = SAMPLES / "cps_wages_plan.json"
COMMANDS = ("budget", "ledger", "ledger_data", "release", "governed", "statement", "statement_pdf")
#: the commands measured on the governed homes
GOVERNED = frozenset({"governed"})
#: targets: time and peak RSS within this factor of the 1-release case (budget, ledger, release)
TARGET_RATIO = 1.10
#: target for write_budget_statement alone at 5,000 releases
TARGET_STATEMENT_S = 2.0


# ----------------------------------------------------------------------------- workers (in the measured process)


def worker_build(home: str, n: int, plan_path: str) -> dict[str, Any]:
    """``n`` releases of the plan on the sample table into ``home``, through the release code (no package)."""
    os.fsync = lambda _fd: None  # building only: the bytes are the same, durability is not what is measured
    from dpdesk.core.loading import load_table
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.release.steps import release

    plan = parse_plan(json.loads(Path(plan_path).read_text(encoding="utf-8")))
    table = load_table(CSV, plan.columns)
    t0 = time.perf_counter()
    for i in range(n):
        release(plan, CSV, Path(home), None, table=table)
        if (i + 1) % 500 == 0:
            print(f"  built {i + 1}/{n} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    return {"built": n, "seconds": time.perf_counter() - t0}


def worker_build_governed(home: str, n: int, plan_path: str) -> dict[str, Any]:
    """A dataset governed by an officer who requires signed plans, with ``n`` releases in ``home`` (the first before
    the governance, then each with its own approval at the head), through the release code (no package)."""
    os.fsync = lambda _fd: None  # building only, as worker_build
    os.environ["DPDESK_HOME"] = home
    from dpdesk.cli import main as cli
    from dpdesk.core.loading import load_table
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.release.steps import release

    keys = Path(home).parent / (Path(home).name + "-keys")
    shutil.rmtree(keys, ignore_errors=True)
    pf, rpf = keys / "pass.txt", keys / "rpass.txt"
    keys.mkdir(parents=True)
    pf.write_text("bench officer passphrase\n", encoding="utf-8")
    rpf.write_text("bench recovery passphrase\n", encoding="utf-8")
    argv = ["officer", "create", "--name", "Bench", "--out", str(keys / "k"), "--passphrase-file", str(pf)]
    assert cli([*argv, "--recovery-passphrase-file", str(rpf)]) == 0
    public = next((keys / "k").glob("*-public.json"))
    plan = parse_plan(json.loads(Path(plan_path).read_text(encoding="utf-8")))
    table = load_table(CSV, plan.columns)
    t0 = time.perf_counter()
    release(plan, CSV, Path(home), None, table=table)
    assert (
        cli(["ledger", "govern", "--data", str(CSV), "--officer", str(public), "--require-signed-plans"]) == 0
    )
    for i in range(n - 1):
        release(plan, CSV, Path(home), None, table=table, approval=approve_at_head(home, plan_path))
        if (i + 2) % 500 == 0:
            print(f"  built {i + 2}/{n} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    return {"built": n, "seconds": time.perf_counter() - t0}


def approve_at_head(home: str, plan_path: str) -> bytes:
    """The officer's approval of the plan at the head of the dataset's ledger in ``home`` (keys beside it)."""
    from dpdesk.core.governance.officer import LedgerHead, load_signer, plan_params, sign_approval
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.plan.reader import parse_plan

    keys = Path(home).parent / (Path(home).name + "-keys")
    signer = load_signer(next((keys / "k").glob("*-private.pem")), "bench officer passphrase")
    ledger = Ledger.for_dataset(Path(home), hashlib.sha256(CSV.read_bytes()).hexdigest())
    state = ledger.read()
    plan = parse_plan(json.loads(Path(plan_path).read_text(encoding="utf-8")))
    assert ledger.dataset is not None
    head = LedgerHead(state.seq, state.hash)
    return sign_approval(signer, ledger.dataset, head, "approve_plan", plan_params(plan))


def worker_approve(home: str, plan_path: str, out: str) -> dict[str, Any]:
    """Write the approval of the plan at the head of ``home``'s ledger to ``out`` (for the measured release)."""
    os.environ["DPDESK_HOME"] = home
    Path(out).write_bytes(approve_at_head(home, plan_path))
    return {"approval": out}


def worker_statement_pdf(home: str, out: str) -> dict[str, Any]:
    """``write_budget_statement`` alone (the ledger verified and the report computed first, not timed)."""
    os.environ["DPDESK_HOME"] = home
    try:  # the tree in wings
        from dpdesk.core.ledger.book import Ledger
        from dpdesk.core.ledger.budget import budget_report
        from dpdesk.core.plan.reader import parse_plan
        from dpdesk.core.publish.report import write_budget_statement
    except ImportError:  # a baseline from before the wings (flat dpdesk/core modules)
        from dpdesk.core.budget import budget_report  # type: ignore[no-redef]
        from dpdesk.core.report import write_budget_statement  # type: ignore[no-redef]

        from dpdesk.core.ledger import Ledger  # type: ignore[no-redef]
        from dpdesk.core.plan import parse_plan  # type: ignore[no-redef]

    key = hashlib.sha256(CSV.read_bytes()).hexdigest()
    entries = Ledger.for_dataset(Path(home), key).verify()
    spends = [e for e in entries if e["type"] == "spend"]
    rep = budget_report(parse_plan(spends[-1]["plan"]), entries)
    t0 = time.perf_counter()
    write_budget_statement(
        Path(out), dataset_name=CSV.name, entries=entries, report=rep, chain_status="chain verified"
    )
    return {
        "statement_s": time.perf_counter() - t0,
        "entries": len(entries),
        "pdf_bytes": Path(out).stat().st_size,
    }


# ----------------------------------------------------------------------------- helpers


def cpu_busy_s() -> float:
    """Machine-wide busy CPU seconds (all cores) from /proc/stat, or NaN (as benchmarks/bench.py)."""
    try:
        with open("/proc/stat") as f:
            parts = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return float("nan")
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    return (sum(parts[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def med(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return statistics.median(xs) if xs else float("nan")


def spawn_wait(argv: list[str], env: dict[str, str], cwd: str) -> tuple[int, bytes, bytes, Any]:
    """Start ``argv``, read its output, reap it with ``os.wait4`` (so its rusage is its own)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    assert p.stdout is not None and p.stderr is not None
    out, err = p.stdout.read(), p.stderr.read()
    _pid, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, out, err, ru


def measure(argv: list[str], src: Path, home: Path) -> dict[str, Any]:
    """One fresh process: wall time, peak RSS (``ru_maxrss`` from ``os.wait4``), the other load meanwhile."""
    env = {**os.environ, "PYTHONPATH": str(src), "DPDESK_HOME": str(home), "LANGUAGE": "en"}
    busy0 = cpu_busy_s()
    t0 = time.perf_counter()
    code, out, err, ru = spawn_wait(argv, env, str(home.parent))
    wall = time.perf_counter() - t0
    busy1 = cpu_busy_s()
    if code != 0:
        raise RuntimeError(f"{argv} failed ({code}):\n{err.decode(errors='replace')[-3000:]}")
    res: dict[str, Any] = {}
    lines = out.decode(errors="replace").strip().splitlines()
    if lines and lines[-1].startswith("{"):
        res.update(json.loads(lines[-1]))
    cpu = ru.ru_utime + ru.ru_stime
    res["wall_s"] = wall
    res["cpu_s"] = cpu  # the child's own user + system time: steadier than the wall time on a busy machine
    res["peak_rss_mib"] = ru.ru_maxrss / 1024.0
    res["other_cores"] = max(0.0, (busy1 - busy0 - cpu) / wall) if wall > 0 else float("nan")
    return res


def strip_checkpoints(src_home: Path, dst_home: Path) -> None:
    """A copy of ``src_home`` whose ledgers hold no ``checkpoint`` entries: re-linked, re-hashed (as
    :func:`dpdesk.core.ledger.book.entry_hash` does, unchanged since the branch point), the register's head moved."""
    from dpdesk.core.ledger.entries import entry_hash

    shutil.copytree(src_home, dst_home)
    for path in (dst_home / "ledgers").glob("ds-*.jsonl"):
        prev, out = "0" * 64, []
        for line in path.read_bytes().splitlines():
            e = json.loads(line)
            if e["type"] == "checkpoint":
                continue
            e["seq"], e["prev"] = len(out) + 1, prev
            e["hash"] = entry_hash(e)
            prev = e["hash"]
            out.append(
                json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            )
        path.write_bytes(b"".join(x + b"\n" for x in out))
        head = dst_home / "ledgers" / "heads" / (path.stem + ".json")
        rec = json.loads(head.read_text(encoding="utf-8"))
        rec["head"] = {"seq": len(out), "hash": prev}
        rec["ever"] = len(out)
        head.write_text(json.dumps(rec), encoding="utf-8")


def old_source(rev: str, out: Path) -> Path:
    """``git archive`` of ``rev`` into ``out/old-<rev>`` (reused)."""
    dst = out / f"old-{rev[:12]}"
    if not (dst / "dpdesk").is_dir():
        dst.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dst)], input=archive, check=True)
    return dst


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


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


# ----------------------------------------------------------------------------- the run


def command(cmd: str, plan: Path, home: Path) -> list[str]:
    py = [sys.executable]
    if cmd == "budget":
        return [*py, "-m", "dpdesk", "budget", str(plan), "--data", str(CSV)]
    if cmd == "ledger":
        return [*py, "-m", "dpdesk", "ledger"]
    if cmd == "ledger_data":
        return [*py, "-m", "dpdesk", "ledger", "--data", str(CSV)]
    if cmd == "governed":
        return [
            *py,
            "-m",
            "dpdesk",
            "release",
            str(plan),
            "--data",
            str(CSV),
            "--out",
            str(home.parent / "rel"),
            "--approval",
            str(home.parent / "approval.json"),
        ]
    if cmd == "release":
        return [
            *py,
            "-m",
            "dpdesk",
            "release",
            str(plan),
            "--data",
            str(CSV),
            "--out",
            str(home.parent / "rel"),
        ]
    if cmd == "statement":
        return [
            *py,
            "-m",
            "dpdesk",
            "ledger",
            "statement",
            "--data",
            str(CSV),
            "--out",
            str(home.parent / "s.pdf"),
        ]
    return [
        *py,
        str(Path(__file__).resolve()),
        "--worker",
        "statement_pdf",
        str(home),
        str(home.parent / "w.pdf"),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="0: build the homes only")
    ap.add_argument("--sizes", default="1,1000,5000")
    ap.add_argument("--commands", default=",".join(COMMANDS))
    ap.add_argument("--governed-sizes", default=None, help="sizes of the governed homes (default: --sizes)")
    ap.add_argument("--old", default=None, help="the 'before' revision (default: git merge-base main HEAD)")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "ledger_length")
    ap.add_argument("--results", type=Path, default=HERE / "RESULTS-ledger.md")
    ap.add_argument(
        "--strip-checkpoints",
        action="store_true",
        help="run 'before' on copies of the homes without their checkpoints (a baseline from before checkpoints)",
    )
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        kind, *rest = args.worker
        if kind == "build":
            res = worker_build(rest[0], int(rest[1]), rest[2])
        elif kind == "build_governed":
            res = worker_build_governed(rest[0], int(rest[1]), rest[2])
        elif kind == "approve":
            res = worker_approve(*rest)
        else:
            res = worker_statement_pdf(*rest)
        print(json.dumps(res))
        return 0

    sizes = [int(x) for x in args.sizes.split(",")]
    commands = [c for c in args.commands.split(",") if c]
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    rev = args.old or git("merge-base", "main", "HEAD")
    srcs = {"before": old_source(rev, out), "after": REPO}
    plan = out / "plan.json"
    raw = json.loads(PLAN.read_text(encoding="utf-8"))
    raw["budget"] = {"epsilon": 10000.0, "delta": 1e-3}  # 5,001 releases of epsilon 0.9 and delta 1e-7 fit
    plan.write_text(json.dumps(raw, indent=2), encoding="utf-8")

    homes: dict[tuple[str, int], Path] = {}
    gsizes = [int(x) for x in (args.governed_sizes or args.sizes).split(",")]
    wanted = [(False, n) for n in sizes if set(commands) - GOVERNED] + [
        (True, n) for n in gsizes if set(commands) & GOVERNED
    ]
    for governed, n in wanted:
        kind = "governed" if governed else "after"
        new, old = out / "homes" / f"{kind}-{n}", out / "homes" / f"before-{kind}-{n}"
        if not (new / "built").is_file():
            shutil.rmtree(new, ignore_errors=True)
            print(f"building a {kind} ledger of {n} releases ...", file=sys.stderr, flush=True)
            env = {**os.environ, "PYTHONPATH": str(REPO), "DPDESK_HOME": str(new)}
            worker = "build_governed" if governed else "build"
            me = str(Path(__file__).resolve())
            subprocess.run(
                [sys.executable, me, "--worker", worker, str(new), str(n), str(plan)], check=True, env=env
            )
            if governed:  # the approval of the measured release, at the head of the built ledger
                approval = str(out / "homes" / f"{kind}-{n}-approval.json")
                subprocess.run(
                    [sys.executable, me, "--worker", "approve", str(new), str(plan), approval],
                    check=True,
                    env=env,
                )
            (new / "built").write_text(str(n))
            shutil.rmtree(old, ignore_errors=True)
        if args.strip_checkpoints and not governed and not (old / "built").is_file():
            shutil.rmtree(old, ignore_errors=True)
            strip_checkpoints(new, old)
        key = -n if governed else n
        homes[("after", key)] = new
        homes[("before", key)] = old if args.strip_checkpoints and not governed else new

    if args.rounds == 0:
        return 0  # the homes only
    cases = [
        (v, -n if c in GOVERNED else n, c)
        for c in commands
        for n in (gsizes if c in GOVERNED else sizes)
        for v in ("before", "after")
    ]
    results: dict[tuple[str, int, str], list[dict[str, Any]]] = {k: [] for k in cases}
    scratch = Path(tempfile.mkdtemp(dir=out, prefix="run-"))
    loads: list[float] = []
    t_start = time.time()
    for r in range(-1, args.rounds):  # round -1: warm-up (page cache, .pyc), not reported
        shift = (r % len(cases)) if r >= 0 else 0
        for v, n, c in cases[shift:] + cases[:shift]:
            run_dir = scratch / "x"
            shutil.rmtree(run_dir, ignore_errors=True)
            run_dir.mkdir()
            home = run_dir / "home"
            shutil.copytree(homes[(v, n)], home)
            if n < 0:  # a governed home: its approval beside it
                shutil.copy(out / "homes" / f"governed-{-n}-approval.json", run_dir / "approval.json")
            res = measure(command(c, plan, home), srcs[v], home)
            if r >= 0:
                results[(v, n, c)].append(res)
            loads.append(os.getloadavg()[0])
        print(
            f"round {r + 1}/{args.rounds} done ({time.time() - t_start:.0f} s)", file=sys.stderr, flush=True
        )
    shutil.rmtree(scratch, ignore_errors=True)
    write_results(args, results, sizes, gsizes, commands, rev, loads)
    return 0


def write_results(
    args: argparse.Namespace,
    results: dict[tuple[str, int, str], list[dict[str, Any]]],
    sizes: list[int],
    gsizes: list[int],
    commands: list[str],
    rev: str,
    loads: list[float],
) -> None:
    names = {
        "budget": "`dpdesk budget PLAN --data CSV`",
        "ledger": "`dpdesk ledger` (listing)",
        "ledger_data": "`dpdesk ledger --data CSV` (one dataset, every entry)",
        "governed": "`dpdesk release --approval` (governed, signed plans)",
        "release": "`dpdesk release` (2,000 rows, package)",
        "statement": "`dpdesk ledger statement` (whole command)",
        "statement_pdf": "`write_budget_statement` alone",
    }
    lines = [
        "# A ledger of any length: results",
        "",
        (
            f"Generated by `benchmarks/ledger_length.py` on {time.strftime('%Y-%m-%d %H:%M')}, {machine()}. "
            f"Before: `{rev[:12]}` (the branch point); after: `{git('rev-parse', '--short', 'HEAD')}`"
            f"{' + uncommitted changes' if git('status', '--porcelain', 'dpdesk') else ''}. "
            f"{args.rounds} rounds, fresh processes interleaved round by round (rotated), peak RSS = the child's "
            "`ru_maxrss` (`os.wait4`). The machine is shared with other engineers' work: "
            f"load average during the run median {med(loads):.2f} (max {max(loads):.2f}); 'other cores' is the CPU "
            "used by other processes during each measurement (2.0 = the whole 2-core machine). Times are medians "
            "(min in brackets); 'CPU s' is the child's own user + system time (median), steadier than the wall time "
            "on a busy machine; ratios are to the same code's 1-release case (medians)."
        ),
        "",
        (
            f"Targets: budget, ledger and release within {TARGET_RATIO:.2f}x of the 1-release case in time and peak "
            f"RSS; the budget statement (`write_budget_statement`) under {TARGET_STATEMENT_S:g} s at 5,000 releases."
        ),
        "",
        "| command | code | releases | time s (min) | time ratio | CPU s | CPU ratio | peak RSS MiB | RSS ratio | other cores |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in commands:
        keys = [-n for n in gsizes] if c in GOVERNED else sizes
        for v in ("before", "after"):
            b = results[(v, keys[0], c)]
            bt, bm = med([x["wall_s"] for x in b]), med([x["peak_rss_mib"] for x in b])
            bc = med([x.get("cpu_s", float("nan")) for x in b])
            for n in keys:
                xs = results[(v, n, c)]
                t = med([x["wall_s"] for x in xs])
                m = med([x["peak_rss_mib"] for x in xs])
                cpu = med([x.get("cpu_s", float("nan")) for x in xs])
                extra = ""
                if c == "statement_pdf":
                    s = med([x["statement_s"] for x in xs])
                    extra = f" (in-process {s:.2f} s, min {min(x['statement_s'] for x in xs):.2f})"
                lines.append(
                    f"| {names[c]} | {v} | {abs(n):,} | {t:.2f} ({min(x['wall_s'] for x in xs):.2f}){extra} | "
                    f"{t / bt:.2f}x | {cpu:.2f} | {cpu / bc:.2f}x | {m:.0f} | {m / bm:.2f}x | {med([x['other_cores'] for x in xs]):.2f} |"
                )
    lines += ["", f"Raw runs: `{args.out / 'results.json'}`.", ""]
    raw = {f"{v}/{n}/{c}": xs for (v, n, c), xs in results.items()}
    (args.out / "results.json").write_text(json.dumps(raw, indent=1), encoding="utf-8")
    args.results.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
