"""Check and measure a Linux dpdesk bundle (the folder holding ``dpdesk`` and ``_internal/``).

    python build_scripts/bundle_report.py dist/dpdesk [--tar dist/dpdesk-linux-x86_64.tar.gz] [--itemise]

Checks (exit 1 if one fails):
* every ELF file's loadable segments pass the dynamic loader's alignment checks (a bad ``strip`` breaks them);
* no X11/xcb/xkbcommon library that Qt's xcb plugin needs is left to the user's machine: each such
  ``NEEDED`` name is a file in the bundle, core ``libxcb.so.1`` included (the spec collects it although
  PyInstaller leaves it out). From the system come only the C library, the dynamic loader, the OpenGL/EGL
  driver stack and ``libwayland-client/cursor`` (Wayland sessions only): they are listed, not failed.
  ``check_bundle_libs.py`` checks the same at run time, from what the running app has mapped.

Prints: unpacked size, the .tar.gz size, the glibc floor (highest ``GLIBC_x.y`` version any ELF file
in the bundle needs, and which file), libraries taken from the system, and with ``--itemise`` a table of
what each component contributes unpacked and gzip-compressed (gzip -6 of each file, which is within a
few per cent of its share of the .tar.gz).
"""

from __future__ import annotations

import argparse
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

# Libraries every Linux desktop provides and that must come from it (driver stack, C library, and since issue 25
# the C++ runtime and expat: the build host's copies would raise the glibc floor above Ubuntu 22.04's).
SYSTEM_OK = re.compile(
    r"^(ld-linux.*|libc|libm|libdl|libpthread|librt|libutil|libresolv|libGL|libEGL|libGLX|libOpenGL|libGLdispatch"
    r"|libgbm|libdrm|libvulkan|libwayland-egl|libstdc\+\+|libgcc_s|libexpat)\.so(\.\d+)*$"
)
# Left out by PyInstaller on purpose (PyInstaller/depend/dylib.py) and by AppImage's excludelist: Mesa's
# libxcb-dri2/dri3 and libwayland belong to the system's graphics stack (Qt uses libwayland only on a
# Wayland session). The core libxcb is *not* here any more: dpdesk.spec bundles it (check_bundle_libs.py).
SYSTEM_BY_DESIGN = re.compile(r"^(libxcb-dri\d?|libwayland-(client|cursor|egl|server))\.so(\.\d+)*$")
MUST_BUNDLE = re.compile(r"^lib(xcb|X11|Xau|Xdmcp|xkbcommon|Xext|Xrender|Xi|Xfixes|SM|ICE)[-\w]*\.so")

# component -> patterns of paths relative to _internal/ (first match wins; top-level libs by name)
COMPONENTS: list[tuple[str, re.Pattern[str]]] = [
    ("OpenDP (native library)", re.compile(r"^opendp/")),
    ("polars (+ runtime)", re.compile(r"^(polars|_polars_runtime_\w+)/")),
    ("fastexcel (.xlsx reader)", re.compile(r"^fastexcel/")),
    ("Qt: PySide6 + Qt libraries, plugins", re.compile(r"^(PySide6|shiboken6)/")),
    (
        "Qt: host libraries it needs (X11/xcb, ICU, glib, fontconfig, ...)",
        re.compile(
            r"^lib(xcb|X|xkb|icu|glib|gobject|gio|gmodule|gthread|dbus|fontconfig|freetype|png16|harfbuzz"
            r"|graphite|brotli|expat|pcre|ffi|mount|blkid|selinux|systemd|lz4|lzma|zstd|gcrypt|gpg-error"
            r"|capability|cap|wayland|EGL|bsd|md|uuid|Xau|Xdmcp|bz2)[^/]*$"
        ),
    ),
    ("numpy (+ OpenBLAS)", re.compile(r"^numpy(\.libs)?/")),
    (
        "matplotlib (+ Pillow, kiwisolver, contourpy, fontTools)",
        re.compile(r"^(matplotlib|mpl_toolkits|PIL|pillow\.libs|kiwisolver|contourpy|fontTools)/"),
    ),
    ("reportlab", re.compile(r"^reportlab/")),
    ("dpdesk resources: CJK font", re.compile(r"^resources/fonts/")),
    ("dpdesk resources: samples, icons", re.compile(r"^resources/")),
    ("launcher (carries the bytecode of all Python code, PYZ)", re.compile(r"^\.\./dpdesk$")),
    (
        "Python (libpython, stdlib extensions, base_library.zip, ssl, sqlite, stdc++)",
        re.compile(
            r"^(libpython|python3|base_library\.zip|lib-dynload|libcrypto|libssl|libsqlite|libstdc|libgcc_s"
            r"|libz\.|libuuid|libreadline|libncurses|libtinfo|libffi|libmpdec)"
        ),
    ),
    ("desktop entry, icon, build info (next to the launcher)", re.compile(r"^\.\./")),
]


def is_elf(p: Path) -> bool:
    try:
        with p.open("rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def segments_ok(path: Path) -> bool:
    """PT_LOAD alignment checks of the dynamic loader (see dpdesk.spec)."""
    with path.open("rb") as f:
        head = f.read(64)
        is64, end = head[4] == 2, "<" if head[5] == 1 else ">"
        if is64:
            (phoff,) = struct.unpack(end + "Q", head[32:40])
            phentsize, phnum = struct.unpack(end + "HH", head[54:58])
        else:
            (phoff,) = struct.unpack(end + "I", head[28:32])
            phentsize, phnum = struct.unpack(end + "HH", head[42:46])
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    for i in range(phnum):
        ph = table[i * phentsize : (i + 1) * phentsize]
        if is64:
            p_type, _, p_offset, p_vaddr, _, _, _, p_align = struct.unpack(end + "IIQQQQQQ", ph[:56])
        else:
            p_type, p_offset, p_vaddr, _, _, _, _, p_align = struct.unpack(end + "IIIIIIII", ph[:32])
        if p_type == 1 and (p_align < 4096 or p_align % 4096 or (p_vaddr - p_offset) % p_align):
            return False
    return True


def readelf(args: list[str], files: list[Path]) -> dict[Path, str]:
    """readelf output per file, in batches."""
    out: dict[Path, str] = {}
    for i in range(0, len(files), 150):
        batch = files[i : i + 150]
        text = subprocess.run(
            ["readelf", *args, *map(str, batch)],
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        ).stdout
        if len(batch) == 1:
            out[batch[0]] = text
            continue
        current = None
        chunks: dict[str, list[str]] = {}
        for line in text.splitlines():
            if line.startswith("File: "):
                current = line[6:].strip()
                chunks[current] = []
            elif current is not None:
                chunks[current].append(line)
        for f in batch:
            out[f] = "\n".join(chunks.get(str(f), []))
    return out


def du(path: Path) -> int:
    """Bytes on disk as `du -sk` counts them (1 KiB blocks; symlinks are not followed)."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(path):
        for n in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, n))
            total += st.st_blocks * 512
    return total + os.lstat(path).st_blocks * 512


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bundle", type=Path)
    p.add_argument("--tar", type=Path)
    p.add_argument("--itemise", action="store_true")
    args = p.parse_args(argv)
    bundle: Path = args.bundle
    internal = bundle / "_internal"
    files = [f for f in bundle.rglob("*") if f.is_file() and not f.is_symlink()]
    elves = [f for f in files if is_elf(f)]
    ok = True

    bad = [f for f in elves if not segments_ok(f)]
    print(f"ELF files: {len(elves)}; with segments the loader would refuse: {len(bad)}")
    for f in bad:
        print(f"  ! {f.relative_to(bundle)}")
    ok &= not bad

    names = {f.name for f in bundle.rglob("*")}  # files and symlinks
    dyn = readelf(["-dW"], elves)
    borrowed: dict[str, set[str]] = {}
    for f, text in dyn.items():
        for need in re.findall(r"\(NEEDED\).*\[(.+?)\]", text):
            if need not in names and not SYSTEM_OK.match(need):
                borrowed.setdefault(need, set()).add(str(f.relative_to(bundle)))
    by_design = sorted(n for n in borrowed if SYSTEM_BY_DESIGN.match(n))
    print(
        "from the user's system, as in every PyInstaller build: libc, the loader, the GL/EGL drivers and "
        + ", ".join(by_design)
    )
    other = {n: u for n, u in borrowed.items() if n not in by_design}
    print(f"other libraries taken from the user's system: {len(other)}")
    for need, users in sorted(other.items()):
        flag = "!" if MUST_BUNDLE.match(need) else "-"
        print(f"  {flag} {need} (needed by {len(users)}, e.g. {min(users)})")
    missing_x = [n for n in other if MUST_BUNDLE.match(n)]
    if missing_x:
        print("FAIL: X11/xcb libraries are not bundled; install them on the build host (see build_linux.sh)")
    ok &= not missing_x

    versions = readelf(["-VW"], elves)
    floor, who = (0, 0), ""
    for f, text in versions.items():
        for v in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", text):
            t = (int(v[0]), int(v[1]))
            if t > floor:
                floor, who = t, str(f.relative_to(bundle))
    print(f"glibc floor: GLIBC_{floor[0]}.{floor[1]} (first needed by {who})")

    print(f"unpacked: {mib(du(bundle))} in {len(files)} files")
    if args.tar:
        print(f"{args.tar.name}: {mib(args.tar.stat().st_size)}")

    if args.itemise:
        sizes: dict[str, list[float]] = {}
        for f in files:
            rel = (
                str(f.relative_to(internal)) if internal in f.parents else "../" + str(f.relative_to(bundle))
            )
            comp = next((name for name, rx in COMPONENTS if rx.search(rel)), "other")
            data = f.read_bytes()
            s = sizes.setdefault(comp, [0, 0, 0])
            s[0] += len(data)
            s[1] += len(zlib.compress(data, 6))
            s[2] += 1
        print("\n| component | unpacked | gzip -6 | files |\n|---|---:|---:|---:|")
        for comp, (raw, gz, n) in sorted(sizes.items(), key=lambda kv: -kv[1][0]):
            print(f"| {comp} | {raw / 2**20:.1f} MiB | {gz / 2**20:.1f} MiB | {n} |")
        print(
            f"| **total** | **{sum(v[0] for v in sizes.values()) / 2**20:.1f} MiB** | "
            f"**{sum(v[1] for v in sizes.values()) / 2**20:.1f} MiB** | {len(files)} |"
        )
        others = [
            str(f.relative_to(bundle))
            for f in files
            if not any(
                rx.search(str(f.relative_to(internal)) if internal in f.parents else "../" + f.name)
                for _, rx in COMPONENTS
            )
        ]
        if others:
            print("other: " + ", ".join(sorted(others)[:40]))
    print("bundle checks: " + ("OK" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
