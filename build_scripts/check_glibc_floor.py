"""Fail when a bundled ELF file needs a newer C or C++ runtime than the oldest Linux dpdesk supports.

    python build_scripts/check_glibc_floor.py BUNDLE_DIR [--glibc 2.35] [--glibcxx 3.4.30] [--cxxabi 1.3.13]
                                              [--gcc 12.0.0] [--forbid libstdc++.so.6 ...] [-v]

The floor is Ubuntu 22.04 (glibc 2.35). The bundle takes the C library and, since issue 25, the C++ runtime
(libstdc++.so.6, libgcc_s.so.1) from the user's system: a library built on a newer distribution asks the dynamic
loader for symbol versions the older system lacks ("version `GLIBC_2.36' not found") and the app does not start.
This script reads the version needs (``readelf -VW``, binutils: the ``.gnu.version_r`` section, per needed file)
of every ELF file under BUNDLE_DIR and fails (exit 1) when any of them needs

* ``GLIBC_x.y`` above ``--glibc`` (default 2.35: Ubuntu 22.04's glibc 2.35-0ubuntu3);
* ``GLIBCXX_``/``CXXABI_`` above ``--glibcxx``/``--cxxabi`` (default 3.4.30 and 1.3.13: Ubuntu 22.04's
  libstdc++6 is GCC 12's, 12.3.0-1ubuntu1~22.04, and the libstdc++ manual's ABI history lists
  "GCC 12.1.0: GLIBCXX_3.4.30, CXXABI_1.3.13", https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html);
* ``GCC_x.y.z`` (libgcc_s) above ``--gcc`` (default 12.0.0: the newest version node of GCC 12's
  libgcc-std.ver, which Ubuntu 22.04's libgcc-s1 12.3.0 carries);

or when a library named by ``--forbid`` is in the bundle (default: libstdc++.so.6, libgcc_s.so.1,
libexpat.so.1: the build host's copies need glibc 2.36 on Debian 12; every target system has its own).
Exit 0 and a one-line summary otherwise; 2 for bad usage (no such folder, no readelf).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

#: symbol-version prefix -> (option name, the runtime that defines it)
FAMILIES = {
    "GLIBC": ("glibc", "the C library"),
    "GLIBCXX": ("glibcxx", "libstdc++"),
    "CXXABI": ("cxxabi", "libstdc++"),
    "GCC": ("gcc", "libgcc_s"),
}
DEFAULTS = {"glibc": "2.35", "glibcxx": "3.4.30", "cxxabi": "1.3.13", "gcc": "12.0.0"}
DEFAULT_FORBID = ("libstdc++.so.6", "libgcc_s.so.1", "libexpat.so.1")
NEED = re.compile(r"Name: (GLIBC|GLIBCXX|CXXABI|GCC)_(\d+(?:\.\d+)*)\b")


def version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def version_needs(files: list[Path]) -> dict[Path, set[tuple[str, tuple[int, ...]]]]:
    """{file: {(family, version)}} from ``readelf -VW``: only the needs (``.gnu.version_r``), never the
    versions a library itself defines."""
    needs: dict[Path, set[tuple[str, tuple[int, ...]]]] = {}
    for i in range(0, len(files), 100):
        batch = files[i : i + 100]
        text = subprocess.run(
            ["readelf", "-VW", *map(str, batch)],
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        ).stdout
        current: Path | None = batch[0] if len(batch) == 1 else None
        in_needs = False
        for line in text.splitlines():
            if line.startswith("File: "):
                current, in_needs = Path(line[6:].strip()), False
            elif line.startswith("Version needs section"):
                in_needs = True
            elif line.startswith(("Version definition section", "Version symbols section")):
                in_needs = False
            elif in_needs and current is not None:
                m = NEED.search(line)
                if m:
                    needs.setdefault(current, set()).add((m.group(1), version(m.group(2))))
    return needs


def check(
    bundle: Path, limits: dict[str, tuple[int, ...]], forbid: tuple[str, ...], verbose: bool = False
) -> list[str]:
    """The problems found (empty: the bundle runs on the floor)."""
    files = sorted(p for p in bundle.rglob("*") if p.is_file() and not p.is_symlink() and is_elf(p))
    problems = [
        f"{p.relative_to(bundle)} is bundled: the system's copy must be used (it needs a newer glibc as built "
        "here, and every supported system has its own); drop it in build_scripts/dpdesk.spec"
        for p in sorted(bundle.rglob("*"))
        if any(p.name == f or p.name.startswith(f + ".") for f in forbid)
    ]
    needs = version_needs(files)
    highest: dict[str, tuple[tuple[int, ...], Path]] = {}
    for path, wanted in sorted(needs.items()):
        for family, v in sorted(wanted):
            option, runtime = FAMILIES[family]
            if v > highest.get(family, ((0,), path))[0]:
                highest[family] = (v, path)
            if v > limits[option]:
                shown = ".".join(map(str, limits[option]))
                problems.append(
                    f"{path.relative_to(bundle)} needs {family}_{'.'.join(map(str, v))} of {runtime}, "
                    f"above the floor's {family}_{shown} (--{option}): build it on an older system "
                    "(build_scripts/README.md, 'glibc floor')"
                )
    summary = ", ".join(
        f"{fam}_{'.'.join(map(str, v))} ({p.relative_to(bundle)})" for fam, (v, p) in sorted(highest.items())
    )
    print(f"glibc floor: {len(files)} ELF files; highest needs: {summary or 'none'}")
    if verbose:
        for path, wanted in sorted(needs.items()):
            print(
                f"  {path.relative_to(bundle)}: "
                + " ".join(f"{f}_{'.'.join(map(str, v))}" for f, v in sorted(wanted))
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bundle", type=Path)
    for option, default in DEFAULTS.items():
        p.add_argument(f"--{option}", default=default, help=f"highest version allowed (default {default})")
    p.add_argument(
        "--forbid",
        action="append",
        metavar="LIBRARY",
        help="a library file name that must not be bundled (repeatable; default: "
        + ", ".join(DEFAULT_FORBID)
        + ")",
    )
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    if not args.bundle.is_dir():
        p.error(f"{args.bundle} is not a folder: give the unpacked bundle (the folder holding dpdesk)")
    if not shutil.which("readelf"):
        p.error("readelf not found: install binutils (Debian/Ubuntu: apt install binutils)")
    limits = {}
    for option in DEFAULTS:
        text = getattr(args, option)
        if not re.fullmatch(r"\d+(\.\d+)*", text):
            p.error(f"--{option} {text!r} is not a version like {DEFAULTS[option]}")
        limits[option] = version(text)
    forbid = tuple(args.forbid) if args.forbid is not None else DEFAULT_FORBID
    problems = check(args.bundle.resolve(), limits, forbid, args.verbose)
    floor = ", ".join(f"{o} {getattr(args, o)}" for o in DEFAULTS)
    for problem in problems:
        print(f"  ! {problem}")
    print(f"glibc floor ({floor}): {'FAIL, ' + str(len(problems)) + ' problem(s)' if problems else 'OK'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
