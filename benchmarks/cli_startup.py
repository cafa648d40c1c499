"""Start-up of the command line: ``dpdesk budget`` on the sample plan against ``python -c pass`` and ``import numpy``.

Issue 16's target: ``dpdesk budget`` on the sample plan within 3x (``python -c pass`` + the time to import numpy),
i.e. within 3x a fresh ``python -c "import numpy"``. Every measurement is a fresh process (wall time from the
parent, spawn to exit; peak RSS from ``os.wait4``), the three commands interleaved round by round in rotated order.
dpdesk's sources are copied to ``benchmarks/out/cli-snapshot/`` and compiled to bytecode first (an installed
dpdesk runs from bytecode; this machine sets PYTHONDONTWRITEBYTECODE, which would otherwise make every run
recompile dpdesk). Also timed: the same plan with its delta set to 0 (no zCDP column, so OpenDP is not loaded).
"Other cores" is the CPU other processes used during the run (from /proc/stat), 2.0 = the whole machine.

Run: python benchmarks/cli_startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _busy() -> float:
    with open("/proc/stat") as f:
        parts = [float(x) for x in f.readline().split()[1:]]
    return (sum(parts) - parts[3] - parts[4]) / os.sysconf("SC_CLK_TCK")


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS in MiB and the child's CPU seconds of one fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    snap = ROOT / "benchmarks" / "out" / "cli-snapshot"
    shutil.rmtree(snap, ignore_errors=True)
    shutil.copytree(ROOT / "dpdesk", snap / "dpdesk", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "resources", snap / "resources")
    compileall.compile_dir(snap / "dpdesk", quiet=1)
    plan = ROOT / "resources" / "samples" / "cps_wages_plan.json"
    tmp = Path(tempfile.mkdtemp())
    plan0 = tmp / "plan_delta0.json"
    p = json.loads(plan.read_text(encoding="utf-8"))
    p["budget"]["delta"] = 0
    p["queries"] = [q for q in p["queries"] if q.get("mechanism") != "gaussian"]
    plan0.write_text(json.dumps(p), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(snap), "DPDESK_HOME": str(tmp / "home")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    py = sys.executable
    cmds = {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import numpy'": [py, "-c", "import numpy"],
        "dpdesk budget (sample plan)": [py, "-m", "dpdesk", "budget", str(plan)],
        "dpdesk budget (delta 0)": [py, "-m", "dpdesk", "budget", str(plan0)],
    }
    for argv in cmds.values():  # warm the page cache
        run(argv, env)
    res: dict[str, list[tuple[float, float, float]]] = {k: [] for k in cmds}
    names = list(cmds)
    b0, w0 = _busy(), time.perf_counter()
    for r in range(args.rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            res[name].append(run(cmds[name], env))
    elapsed = time.perf_counter() - w0
    own = sum(c for v in res.values() for _, _, c in v)
    other = max(0.0, (_busy() - b0 - own) / elapsed)
    med = {k: statistics.median(w for w, _, _ in v) for k, v in res.items()}
    base = med["python -c 'import numpy'"]
    print(
        f"{args.rounds} interleaved rounds, fresh processes, bytecode compiled; other cores busy: {other:.2f}"
    )
    print("| command | median s | min s | peak RSS MiB | x (python -c pass + import numpy) |")
    print("|---|---|---|---|---|")
    for k, v in res.items():
        walls = [w for w, _, _ in v]
        rss = statistics.median(m for _, m, _ in v)
        print(f"| {k} | {med[k]:.3f} | {min(walls):.3f} | {rss:.0f} | {med[k] / base:.2f} |")
    ratio = med["dpdesk budget (sample plan)"] / base
    print(f"target: dpdesk budget within 3x -> {ratio:.2f}x {'met' if ratio <= 3 else 'NOT met'}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
