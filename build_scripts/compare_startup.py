"""Time dpdesk's start to its main window, frozen bundle against source, in interleaved rounds.

    python build_scripts/compare_startup.py dist/dpdesk/dpdesk [--python /work/venv/bin/python] [--rounds 7]

Each run starts the program with ``DPDESK_STARTUP_PROBE=1`` and ``QT_QPA_PLATFORM=offscreen`` in a fresh
temporary ``DPDESK_HOME`` (never the user's), and records:

* ``launch->window``: wall time from spawning the process to its ``WINDOW_SHOWN`` line (what a user waits
  for; it includes the interpreter's start, which the app's own figure does not);
* ``WINDOW_SHOWN`` / ``VIEWS_READY``: the app's own figures (seconds since ``dpdesk.gui.app`` was imported);
* ``launch->exit``: until the process has exited.

Rounds alternate which variant goes first. Medians and ranges are printed as a Markdown table, with the
load average, because on a shared machine the spread matters as much as the median.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def one_run(cmd: list[str], cwd: Path) -> dict[str, float]:
    home = Path(tempfile.mkdtemp(prefix="dpdesk-startup-"))
    env = dict(
        os.environ, QT_QPA_PLATFORM="offscreen", DPDESK_STARTUP_PROBE="1", DPDESK_HOME=str(home / "dpdesk")
    )
    env.pop("PYTHONPATH", None)
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            parts = line.split()
            if len(parts) == 2 and parts[0] in ("WINDOW_SHOWN", "VIEWS_READY"):
                if parts[0] == "WINDOW_SHOWN":
                    out["launch->window"] = time.perf_counter() - t0
                out[parts[0]] = float(parts[1])
        rc = proc.wait(timeout=300)
        out["launch->exit"] = time.perf_counter() - t0
        if rc != 0 or "launch->window" not in out:
            raise RuntimeError(f"{cmd} exited {rc} with {out}")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("frozen", type=Path, help="the bundle's executable, e.g. dist/dpdesk/dpdesk")
    p.add_argument("--python", default=sys.executable, help="interpreter with dpdesk installed (source run)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--warmup", type=int, default=1, help="untimed rounds first (page cache)")
    args = p.parse_args(argv)
    variants = {
        "frozen": [str(args.frozen.resolve())],
        "source": [args.python, "-m", "dpdesk"],
    }
    cwd = Path(tempfile.gettempdir())
    for _ in range(args.warmup):
        for cmd in variants.values():
            one_run(cmd, cwd)
    results: dict[str, list[dict[str, float]]] = {k: [] for k in variants}
    loads = []
    for r in range(args.rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for name in order:
            results[name].append(one_run(variants[name], cwd))
        loads.append(os.getloadavg()[0])
        print(
            f"round {r + 1}: " + "  ".join(f"{n} {results[n][-1]['launch->window']:.2f}s" for n in variants),
            file=sys.stderr,
        )
    keys = ["launch->window", "WINDOW_SHOWN", "VIEWS_READY", "launch->exit"]
    print(
        f"\n{args.rounds} interleaved rounds after {args.warmup} warm-up, offscreen; "
        f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs\n"
    )
    print("| run | " + " | ".join(f"{k} median (min-max)" for k in keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for name, runs in results.items():
        cells = []
        for k in keys:
            xs = [x[k] for x in runs if k in x]
            cells.append(f"{statistics.median(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})" if xs else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")
    diffs = [
        f["launch->window"] - s["launch->window"]
        for f, s in zip(results["frozen"], results["source"], strict=True)
    ]
    print(
        f"\nfrozen minus source, launch->window, paired by round: median {statistics.median(diffs):+.3f} s "
        f"({sum(d < 0 for d in diffs)} of {len(diffs)} rounds frozen faster)"
    )
    for name, runs in results.items():
        print(f"{name} launch->window: " + " ".join(f"{x['launch->window']:.2f}" for x in runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
