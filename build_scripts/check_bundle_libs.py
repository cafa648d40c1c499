"""Where each shared library of a Linux dpdesk bundle comes from: the bundle, or the user's machine.

    python build_scripts/check_bundle_libs.py BUNDLE_DIR [--mode auto|ldd|run] [--masked] [--gl]
                                              [--env NAME=VALUE ...] [--display :N] [-v]

BUNDLE_DIR is the folder holding ``dpdesk`` and ``_internal/`` (best: unpacked from the .tar.gz).

* ``ldd`` mode: every ELF file of the bundle through ``ldd`` with ``LD_LIBRARY_PATH=BUNDLE/_internal``,
  the search path the PyInstaller bootloader gives the frozen app. Lists what Qt's xcb platform plugin
  (``libqxcb.so``, ``libQt6XcbQpa.so.6``) needs and where each resolves, and every library any bundled file
  needs that resolves outside the bundle.
* ``run`` mode: starts its own Xvfb (or uses ``--display``), runs ``BUNDLE/dpdesk`` in a clean environment with
  ``QT_QPA_PLATFORM=xcb DPDESK_STARTUP_PROBE=1``, stops it (SIGSTOP) when the main window is shown and again
  when all views are built, reads ``/proc/PID/maps`` and classifies every mapped shared object; the app must
  then exit 0 with no loader or Qt plugin errors in its output. ``auto`` (default): ldd, then run when Xvfb
  or a display is available.
* ``--masked``: one more run in a private mount namespace (``unshare -m`` as root, else ``unshare -Urm``)
  with ``/dev/null`` bind-mounted over every X11/xcb/xkbcommon library of the host, so the app can only use
  the bundled ones. Skipped with a note when namespaces are not available.
* ``--gl``: a GL probe: ``glxgears`` (mesa-utils) with the bundle's search path and ``LIBGL_ALWAYS_SOFTWARE=1``
  on the same display, so the host's Mesa driver runs on top of the bundled libX11/libxcb. dpdesk itself
  draws with Qt's raster engine (the spec drops the xcb GL integrations): it maps the glvnd dispatch
  libraries (libGL, libEGL, libGLX, libGLdispatch) but never loads a driver, so this probe is what exercises
  a real driver against the bundled X libraries. Skipped with a note without glxgears.

Exit status 1 when: an X11/xcb/xkbcommon library resolves or is mapped from outside the bundle (unless only
the GL driver needs it, as Mesa's libxcb-dri3/present/glx); any other library comes from the system and is not
on the allow-list below; a needed library is not found; the app fails, prints loader/plugin errors, or shows
no window. Always prints the glibc floor: the highest ``GLIBC_x.y`` version any bundled ELF file needs,
next to the build host's glibc.

What may come from the user's machine, and why (the allow-list, ``SYSTEM_ALLOWED``):
* the GNU C library (libc, libm, libpthread, libdl, librt, ld-linux, libresolv, libnss_*, gconv modules):
  it is tied to the running kernel and to the dynamic loader, which is always the system's; no packager
  bundles it (PyInstaller ``depend/dylib.py`` ``_unix_excludes``; the AppImage ``excludelist``: "part of
  the GNU C Library which should never be bundled"). Hence the glibc floor;
* the OpenGL/EGL/Vulkan driver stack (glvnd's libGL/libEGL/libGLX/libOpenGL/libGLdispatch, Mesa's or NVIDIA's
  vendor libraries, libglapi, libgallium, ``*_dri.so``, libdrm, libgbm): it must match the user's GPU and
  kernel driver (PyInstaller: "graphical interface libraries come with graphical stack (see libglvnd)";
  AppImage excludelist: libGL/libEGL "part of the video driver ... Known to cause issues if it's bundled",
  libGLX/libGLdispatch/libOpenGL/libglapi/libgbm/libdrm likewise). Whatever only these need is allowed too
  (found through the NEEDED graph of what is mapped): e.g. Mesa's libxcb-dri2/dri3/present/glx, which
  PyInstaller and AppImage both leave to the system (AppImage/AppImages#348, linuxdeployqt#331);
* the C++ runtime (libstdc++, libgcc_s) and libexpat: every system at the floor (Ubuntu 22.04) has them, and
  the build host's copies would raise the floor (Debian 12's need glibc 2.36); check_glibc_floor.py fails the
  build if a bundled file needs a newer GLIBCXX/CXXABI/GCC version than Ubuntu 22.04's;
* libwayland-client/cursor/egl: used only on a Wayland session by Qt's wayland plugin and Mesa; PyInstaller
  excludes them ("system running a Wayland compositor should already have these libraries") and AppImage
  excludes libwayland-client (mesa/mesa#11316).
Everything else, in particular every X11/xcb/xkbcommon library Qt's xcb plugin needs, core libxcb.so.1
included, must be in the bundle (``dpdesk.spec`` collects them from the build host).
"""

from __future__ import annotations

import argparse
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contextlib

from bundle_report import is_elf  # one definition for both bundle checks

X11_FAMILY = re.compile(
    r"^lib(xcb|X11|Xau|Xdmcp|xkbcommon|Xext|Xfixes|Xrender|Xi|Xrandr|Xcursor|Xxf86vm|xshmfence"
    r"|SM|ICE)([-_][\w-]*)?\.so"
)
SYSTEM_ALLOWED: list[tuple[str, re.Pattern[str]]] = [
    (
        "glibc",
        re.compile(
            r"^(ld-linux(-x86-64|-aarch64|-armhf)?|libc|libm|libmvec|libpthread|libdl|librt|libutil|libresolv|libanl"
            r"|libnss_\w+|libthread_db|libBrokenLocale|libcidn|libc_malloc_debug|libmemusage|libpcprofile)\.so"
        ),
    ),
    (
        "GL driver stack",
        re.compile(
            r"^(libGL|libGLX|libGLX_\w+|libEGL|libEGL_\w+|libGLdispatch|libOpenGL|libGLESv1_CM|libGLESv2|libglapi"
            r"|libgallium[-\w.]*|[\w]+_dri|libdri|libgbm|libdrm(_\w+)?|libvulkan|libnvidia-[\w-]+|libcuda)\.so"
        ),
    ),
    ("Wayland client (Wayland sessions only)", re.compile(r"^libwayland-(client|cursor|egl|server)\.so")),
    # issue 25: the host's copies need glibc 2.36; every supported system (glibc 2.35+) has GCC 12's C++ runtime
    # and expat. check_glibc_floor.py checks that nothing bundled needs newer symbol versions than Ubuntu 22.04's.
    ("C++ runtime and expat (floor: Ubuntu 22.04)", re.compile(r"^(libstdc\+\+|libgcc_s|libexpat)\.so")),
]
GL_STACK = "GL driver stack"
GCONV = re.compile(r"/gconv/[^/]+\.so$")  # glibc's iconv modules
# what a loader or Qt says when a library does not fit (in the app's stdout/stderr)
TROUBLE = re.compile(
    r"undefined symbol|symbol lookup error|version `[^']+' not found|cannot open shared object|error while loading"
    r"|wrong ELF class|file too short|libGL error|MESA-LOADER|failed to load driver|Could not load the Qt platform"
    r"|qt\.qpa\.plugin|xcb_connection_has_error|Segmentation fault|Aborted|core dumped",
    re.IGNORECASE,
)


def so_name(path: str) -> str:
    return os.path.basename(path)


def readelf_dynamic(paths: list[str]) -> dict[str, tuple[str | None, list[str]]]:
    """{path: (soname, [NEEDED...])}."""
    out: dict[str, tuple[str | None, list[str]]] = {}
    for i in range(0, len(paths), 150):
        batch = paths[i : i + 150]
        text = subprocess.run(
            ["readelf", "-dW", *batch], capture_output=True, text=True, errors="replace", check=False
        ).stdout
        current = batch[0] if len(batch) == 1 else None
        if current:
            out[current] = (None, [])
        for line in text.splitlines():
            if line.startswith("File: "):
                current = line[6:].strip()
                out[current] = (None, [])
            elif current is not None and "(NEEDED)" in line:
                out[current][1].append(line.rsplit("[", 1)[1].rstrip("]"))
            elif current is not None and "(SONAME)" in line:
                out[current] = (line.rsplit("[", 1)[1].rstrip("]"), out[current][1])
    return out


class Graph:
    """Shared objects (real paths), whether each is bundled, and who needs whom (NEEDED, by soname)."""

    def __init__(self, bundle: Path, paths: set[str], extra_parents: dict[str, list[str]] | None = None):
        self.bundle = bundle.resolve()
        self.paths = sorted(paths)
        dyn = readelf_dynamic(self.paths)
        self.needed = {p: dyn.get(p, (None, []))[1] for p in self.paths}
        self.names: dict[str, str] = {}
        for p in self.paths:
            for n in {so_name(p), dyn.get(p, (None, []))[0]} - {None}:
                # a bundled object wins: with the bundle first on the search path, it is the one loaded
                if n not in self.names or self.bundled(p):
                    self.names[n] = p
        self.parents: dict[str, set[str]] = {p: set() for p in self.paths}
        for p, needs in list(self.needed.items()) + list((extra_parents or {}).items()):
            for n in needs:
                if n in self.names:
                    self.parents.setdefault(self.names[n], set()).add(p)

    def bundled(self, path: str) -> bool:
        return Path(path).resolve().is_relative_to(self.bundle)

    def classify(self) -> dict[str, tuple[str, str]]:
        """{system path: (verdict, why)}; verdict is 'ok' or 'FAIL'."""
        system = [p for p in self.paths if not self.bundled(p)]
        allowed: dict[str, str] = {}
        for p in system:
            name = so_name(p)
            if GCONV.search(p):
                allowed[p] = "glibc"
                continue
            for label, rx in SYSTEM_ALLOWED:
                if rx.match(name):
                    allowed[p] = label
                    break
        # needed only by the GL driver stack (or by such libraries), never by the bundle or the program
        gl_only: set[str] = set()
        changed = True
        while changed:
            changed = False
            for p in system:
                if p in allowed or p in gl_only:
                    continue
                par = self.parents.get(p, set())
                if par and all(allowed.get(q) == GL_STACK or q in gl_only for q in par):
                    gl_only.add(p)
                    changed = True
        out: dict[str, tuple[str, str]] = {}
        for p in system:
            name = so_name(p)
            if p in allowed:
                out[p] = ("ok", allowed[p])
            elif p in gl_only:
                users = ", ".join(sorted(so_name(q) for q in self.parents[p]))
                out[p] = ("ok", f"needed only by the GL driver stack ({users})")
            else:
                users = sorted(so_name(q) for q in self.parents.get(p, ()))
                what = "X11/xcb library" if X11_FAMILY.match(name) else "library"
                via = (
                    f"needed by {', '.join(users[:4])}{' ...' if len(users) > 4 else ''}"
                    if users
                    else "dlopen'ed"
                )
                out[p] = ("FAIL", f"{what} from the system, {via}: bundle it")
        return out


def print_classes(title: str, graph: Graph, classes: dict[str, tuple[str, str]], verbose: bool) -> bool:
    bundled = [p for p in graph.paths if graph.bundled(p)]
    print(
        f"{title}: {len(graph.paths)} shared objects, {len(bundled)} from the bundle, {len(classes)} from the system"
    )
    if verbose:
        for p in bundled:
            print(f"    bundle  {Path(p).resolve().relative_to(graph.bundle)}")
    for p, (verdict, why) in sorted(classes.items(), key=lambda kv: (kv[1][0] != "FAIL", kv[1][1], kv[0])):
        print(f"  {'!' if verdict == 'FAIL' else ' '} system  {p}  [{why}]")
    bad = [p for p, (v, _) in classes.items() if v == "FAIL"]
    x11_bundled = sorted(so_name(p) for p in bundled if X11_FAMILY.match(so_name(p)))
    print(f"  X11/xcb/xkbcommon from the bundle ({len(x11_bundled)}): {', '.join(x11_bundled) or '-'}")
    return not bad


# ----------------------------------------------------------------------------- ldd mode
def ldd(path: Path, env: dict[str, str]) -> tuple[dict[str, str | None], str]:
    """{needed name: resolved real path or None (not found)} for the whole closure ldd reports."""
    r = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env, check=False)
    res: dict[str, str | None] = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (not found|(\S+) \(0x[0-9a-f]+\))", line)
        if m:
            res[m.group(1)] = None if m.group(2) == "not found" else os.path.realpath(m.group(3))
            continue
        m = re.match(r"\s*(/\S+) \(0x[0-9a-f]+\)", line)  # the loader itself
        if m:
            res[so_name(m.group(1))] = os.path.realpath(m.group(1))
    return res, r.stderr


def ldd_mode(bundle: Path, verbose: bool) -> bool:
    internal = bundle / "_internal"
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LD_LIBRARY_PATH": str(internal)}
    elves = sorted(p for p in bundle.rglob("*") if p.is_file() and not p.is_symlink() and is_elf(p))
    resolved: dict[Path, dict[str, str | None]] = {}
    for p in elves:
        resolved[p], _ = ldd(p, env)
    print(f"\n== ldd mode (LD_LIBRARY_PATH={internal}): {len(elves)} ELF files")
    ok = True
    for rel in (
        "_internal/PySide6/Qt/plugins/platforms/libqxcb.so",
        "_internal/PySide6/Qt/lib/libQt6XcbQpa.so.6",
    ):
        p = bundle / rel
        if p not in resolved:
            print(f"  ! {rel} is not in the bundle")
            ok = False
            continue
        print(f"-- {rel} needs (whole closure, as ldd resolves it):")
        for name, where in sorted(resolved[p].items()):
            if where is None:
                loc = "NOT FOUND"
            elif Path(where).is_relative_to(bundle.resolve()):
                loc = "bundle  " + str(Path(where).relative_to(bundle.resolve()))
            else:
                loc = "system  " + where
            print(f"     {name:28s} {loc}")
    paths = {str(p.resolve()) for p in elves} | {w for r in resolved.values() for w in r.values() if w}
    graph = Graph(bundle, paths)
    classes = graph.classify()
    ok &= print_classes("-- every bundled ELF file's closure", graph, classes, verbose)
    missing: dict[str, set[str]] = {}
    for p, r in resolved.items():
        for name, where in r.items():
            if where is None:
                missing.setdefault(name, set()).add(str(p.relative_to(bundle)))
    for name, users in sorted(missing.items()):
        tolerated = any(rx.match(name) for _, rx in SYSTEM_ALLOWED)
        flag = " " if tolerated else "!"
        note = "(system library, absent on this host)" if tolerated else "NOT FOUND"
        print(f"  {flag} {name}: {note}, needed by {len(users)}, e.g. {min(users)}")
        ok &= tolerated
    return ok


# ----------------------------------------------------------------------------- run mode
class Xvfb:
    """Our own X server on the first free display (Xvfb -displayfd)."""

    def __init__(self) -> None:
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        # The read end of -displayfd stays open while Xvfb runs: closed right after reading the number, Xvfb
        # died now and then with "Cannot write display number to fd" (seen on this build host).
        self._r, w = os.pipe()
        self.proc = subprocess.Popen(
            ["Xvfb", "-displayfd", str(w), "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"],
            pass_fds=(w,),
            stdout=self.log,
            stderr=self.log,
        )
        os.close(w)
        got, deadline = b"", time.monotonic() + 30
        while not got.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([self._r], [], [], 1)
            if ready:
                chunk = os.read(self._r, 32)
                if not chunk:
                    break
                got += chunk
        if not got.strip().isdigit() or self.proc.poll() is not None:
            out = self.output()
            self.stop()
            raise RuntimeError("Xvfb did not start: " + out)
        self.display = ":" + got.decode().strip()

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace").strip()[-2000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        os.close(self._r)
        self.log.close()


def _local_path(path: str, inode: int) -> str:
    """The path of a mapped file as this process sees it. A process in another mount namespace (a --masked run
    inside a chroot) shows paths from that namespace's root, e.g. /srv/chroot/usr/lib/...: drop leading
    components until the file with that inode is found."""
    parts = Path(path).parts
    for i in range(1, len(parts) - 1):
        cand = os.path.join("/", *parts[i:])
        try:
            if os.stat(cand).st_ino == inode:
                return os.path.realpath(cand)
        except OSError:
            continue
    return os.path.realpath(path)


def mapped_objects(pid: int) -> set[str]:
    """Real paths of the shared objects mapped into pid (from /proc/PID/maps)."""
    out = set()
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path, inode = parts[5].strip(), int(parts[4])
                if (
                    not path.startswith("/")
                    or path.endswith(" (deleted)")
                    or not re.search(r"\.so(\.|$)", so_name(path))
                ):
                    continue
                try:
                    same = os.stat(path).st_ino == inode
                except OSError:
                    same = False
                out.add(os.path.realpath(path) if same else _local_path(path, inode))
    except (FileNotFoundError, ProcessLookupError):
        pass
    return out


def process_tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return pids


def windows_on(display: str) -> list[str]:
    if not shutil.which("xwininfo"):
        return []
    r = subprocess.run(
        ["xwininfo", "-root", "-tree", "-display", display], capture_output=True, text=True, check=False
    )
    wins = [line.strip() for line in r.stdout.splitlines() if '"dpdesk' in line]

    def area(w: str) -> int:
        m = re.search(r"\s(\d+)x(\d+)[+-]", w)
        return int(m.group(1)) * int(m.group(2)) if m else 0

    return sorted(wins, key=area, reverse=True)  # the main window first


def x11_files_of_host() -> list[str]:
    """Real paths of every X11 family library on this host (what --masked hides)."""
    found = set()
    text = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=False).stdout
    cands = [m.group(1) for m in re.finditer(r"=> (\S+)", text)]
    for d in (
        "/lib",
        "/lib64",
        "/usr/lib",
        "/usr/lib64",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib/aarch64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/local/lib",
    ):
        if os.path.isdir(d):
            cands += [os.path.join(d, n) for n in os.listdir(d)]
    for c in cands:
        if X11_FAMILY.match(so_name(c)) and os.path.exists(c):
            real = os.path.realpath(c)
            if os.path.isfile(real):
                found.add(real)
    return sorted(found)


def namespace_prefix() -> tuple[list[str] | None, str]:
    """The unshare command that gives a private mount namespace here, or None and why not."""
    if not shutil.which("unshare"):
        return None, "no unshare"
    why = []
    for cmd in (
        ["unshare", "-m", "--propagation", "private"],
        ["unshare", "-Urm", "--propagation", "private"],
    ):
        if cmd[1] == "-m" and os.geteuid() != 0:
            continue
        r = subprocess.run(
            [*cmd, "sh", "-c", "mount --bind /dev/null /dev/null"],
            capture_output=True,
            text=True,
            check=False,
        )
        if r.returncode == 0:
            return cmd, ""
        why.append(f"{' '.join(cmd[:2])}: {r.stderr.strip()}")
    return None, "no private mount namespace here (" + "; ".join(why) + ")"


def clean_env(home: Path, display: str, extra: dict[str, str]) -> dict[str, str]:
    runtime = home / "xdg-runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "DPDESK_HOME": str(home / "dpdesk"),
        "XDG_RUNTIME_DIR": str(runtime),
        "DISPLAY": display,
        "QT_QPA_PLATFORM": "xcb",
    }
    env.update(extra)
    return env


def run_app(
    bundle: Path, display: str, extra: dict[str, str], masked: list[str] | None, verbose: bool, label: str
) -> bool:
    exe = bundle / "dpdesk"
    with tempfile.TemporaryDirectory(prefix="dpdesk-libs-") as tmp:
        env = clean_env(Path(tmp), display, {"DPDESK_STARTUP_PROBE": "1", **extra})
        cmd = [str(exe)]
        hidden = []
        if masked is not None:
            hidden = x11_files_of_host()
            script = (
                'for f in "$@"; do case "$f" in --) break;; esac; mount --bind /dev/null "$f" || exit 97;'
                ' [ -s "$f" ] && exit 98; shift; done; shift; exec "$@"'
            )
            cmd = [*masked, "sh", "-c", script, "sh", *hidden, "--", str(exe)]
        shown_env = " ".join(f"{k}={v}" for k, v in extra.items())
        print(f"\n== run: {label}: DISPLAY={display} QT_QPA_PLATFORM=xcb {shown_env}".rstrip())
        if masked is not None:
            print(
                f"   {len(hidden)} host X11/xcb/xkbcommon files hidden behind /dev/null, e.g. "
                + ", ".join(hidden[:3])
            )
        errf = Path(tmp) / "stderr"
        t0 = time.monotonic()
        with errf.open("w") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env, text=True, cwd=tmp)
            seen: set[str] = set()
            lines, events, wins = [], [], []
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line.rstrip())
                tag = line.split(" ", 1)[0]
                if tag in ("WINDOW_SHOWN", "VIEWS_READY"):
                    pids = process_tree(proc.pid)
                    for p in pids:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(p, signal.SIGSTOP)
                    for p in pids:
                        seen |= mapped_objects(p)
                    if tag == "VIEWS_READY":
                        wins = windows_on(display)
                    for p in pids:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(p, signal.SIGCONT)
                    events.append(f"{line.strip()} (at {time.monotonic() - t0:.1f} s wall)")
            try:
                rc = proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = -9
        stderr = errf.read_text(errors="replace")
    ok = True
    print("   " + "; ".join(events) if events else "   no WINDOW_SHOWN/VIEWS_READY line")
    if wins:
        print(f"   window on {display} while stopped: {wins[0]}")
    if rc != 0 or "VIEWS_READY" not in " ".join(events):
        print(f"  ! the app exited with {rc} without showing its window; output:")
        print("\n".join("    " + x for x in (lines + stderr.splitlines())[-40:]))
        ok = False
    trouble = [x for x in (lines + stderr.splitlines()) if TROUBLE.search(x)]
    if trouble:
        print("  ! loader/plugin errors in the app's output:")
        print("\n".join("    " + x for x in trouble[:20]))
        ok = False
    elif verbose and stderr.strip():
        print("   stderr: " + " | ".join(stderr.strip().splitlines()[:10]))
    if not seen:
        print("  ! nothing mapped was read")
        return False
    graph = Graph(bundle, seen)
    ok &= print_classes("   mapped while the window was up", graph, graph.classify(), verbose)
    gl = sorted(
        so_name(p) for p in seen if re.match(r"^(libGLX_|libEGL_|libgallium|\w+_dri\.so)", so_name(p))
    )
    print(f"   GL driver loaded by the app: {', '.join(gl) if gl else 'none (Qt paints with raster)'}")
    return ok


def _glxgears(
    gears: str, libdir: Path, display: str, extra: dict[str, str]
) -> tuple[str, bool, str, set[str]]:
    """Run glxgears with libdir first on the search path: (GL_RENDERER, still running, output, mapped)."""
    with tempfile.TemporaryDirectory(prefix="dpdesk-gl-") as tmp:
        env = clean_env(Path(tmp), display, {"LIBGL_ALWAYS_SOFTWARE": "1", **extra})
        env["LD_LIBRARY_PATH"] = str(libdir)
        env.pop("QT_QPA_PLATFORM")
        outf = Path(tmp) / "out"
        with outf.open("w") as out:
            proc = subprocess.Popen([gears, "-info"], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp)
            seen: set[str] = set()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.5)
                seen |= mapped_objects(proc.pid)
                if "GL_RENDERER" in outf.read_text(errors="replace"):
                    time.sleep(1.5)  # let it draw some frames
                    seen |= mapped_objects(proc.pid)
                    break
            alive = proc.poll() is None
            if alive:
                proc.terminate()
                proc.wait(timeout=10)
        text = outf.read_text(errors="replace")
    renderer = next(
        (x.split("=", 1)[1].strip() for x in text.splitlines() if x.startswith("GL_RENDERER")), ""
    )
    return renderer, alive, text, seen


def gl_probe(bundle: Path, display: str, extra: dict[str, str], verbose: bool) -> bool:
    gears = shutil.which("glxgears")
    print("\n== GL probe: glxgears with the bundle's libraries first (LD_LIBRARY_PATH=_internal, as the app)")
    if not gears:
        print("   skipped: no glxgears (mesa-utils) on this host")
        return True
    renderer, alive, text, seen = _glxgears(gears, bundle / "_internal", display, extra)
    ok = alive and bool(renderer)
    trouble = [x for x in text.splitlines() if TROUBLE.search(x)]
    print(f"   GL_RENDERER = {renderer or '?'}; {'running' if alive else 'exited early'}")
    if trouble or not ok:
        print("  ! glxgears failed or printed loader errors:")
        print("\n".join("    " + x for x in (trouble or text.splitlines())[:20]))
        ok = False
        # which part of the bundle breaks the driver: the X11 family alone, or something else?
        with tempfile.TemporaryDirectory(prefix="dpdesk-x11only-") as only:
            internal = bundle / "_internal"
            for f in internal.glob("lib*.so*"):
                if X11_FAMILY.match(f.name) or re.match(r"^lib(bsd|md)\.so", f.name):
                    os.symlink(f.resolve(), Path(only) / f.name)
            r2, alive2, text2, _ = _glxgears(gears, Path(only), display, extra)
            if alive2 and r2 and not any(TROUBLE.search(x) for x in text2.splitlines()):
                print(
                    f"   with only the bundle's X11/xcb libraries first it works ({r2}): the X11 libraries fit this"
                )
                print(
                    "   driver; another bundled library breaks it (ldd on the driver with LD_LIBRARY_PATH=_internal"
                )
                print(
                    "   names it; typically the bundled libstdc++.so.6 older than the driver's C++ runtime)"
                )
            else:
                print(
                    "  ! it fails with only the bundle's X11/xcb libraries too: they do not fit this GL driver"
                )
    if seen:
        graph = Graph(bundle, seen, extra_parents={gears: readelf_dynamic([gears])[gears][1]})
        ok &= print_classes("   mapped by glxgears", graph, graph.classify(), verbose)
    return ok


# ----------------------------------------------------------------------------- glibc floor
GLIBC_FILES = re.compile(r"^(libc|libm|libpthread|libdl|librt|libutil|libresolv|libanl|ld-linux[-\w]*)\.so")


def glibc_floor(bundle: Path) -> None:
    elves = sorted(str(p) for p in bundle.rglob("*") if p.is_file() and not p.is_symlink() and is_elf(p))
    per_file: dict[str, tuple[int, int]] = {}
    for i in range(0, len(elves), 150):
        batch = elves[i : i + 150]
        text = subprocess.run(
            ["readelf", "-VW", *batch], capture_output=True, text=True, errors="replace", check=False
        ).stdout
        current, in_glibc = batch[0] if len(batch) == 1 else None, False
        for line in text.splitlines():
            if line.startswith("File: "):
                current, in_glibc = line[6:].strip(), False
            m = re.search(r"Version: \d+\s+File: (\S+)", line)
            if m:
                in_glibc = bool(GLIBC_FILES.match(m.group(1)))
                continue
            m = re.search(r"Name: GLIBC_(\d+)\.(\d+)", line)
            if m and in_glibc and current:
                v = (int(m.group(1)), int(m.group(2)))
                if v > per_file.get(current, (0, 0)):
                    per_file[current] = v
    floor = max(per_file.values(), default=(0, 0))
    top = sorted((f for f, v in per_file.items() if v == floor))
    host = os.confstr("CS_GNU_LIBC_VERSION") or "glibc ?"  # e.g. "glibc 2.36"
    ldd_line = subprocess.run(["ldd", "--version"], capture_output=True, text=True, check=False).stdout
    print("\n== glibc floor")
    print(
        f"   bundle needs GLIBC_{floor[0]}.{floor[1]}: the highest GLIBC_x.y any of its {len(elves)} ELF files "
        f"needs ({len(top)} need it, e.g. {', '.join(str(Path(f).relative_to(bundle)) for f in top[:3])})"
    )
    counts: dict[tuple[int, int], int] = {}
    for v in per_file.values():
        counts[v] = counts.get(v, 0) + 1
    print(
        "   ELF files by the highest version they need: "
        + ", ".join(f"{a}.{b}: {n}" for (a, b), n in sorted(counts.items(), reverse=True)[:6])
    )
    print(
        f"   this host (the build host when build_linux.sh runs it): {host} ({ldd_line.splitlines()[0].strip() if ldd_line else 'ldd --version: ?'})"
    )
    m = re.search(r"(\d+)\.(\d+)", host)
    if m and (int(m.group(1)), int(m.group(2))) < floor:
        print(
            "  ! the bundle needs a newer glibc than the build host has: it was built from files of another host"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bundle", type=Path)
    p.add_argument("--mode", choices=("auto", "ldd", "run"), default="auto")
    p.add_argument("--masked", action="store_true", help="also run with the host's X11 libraries hidden")
    p.add_argument("--gl", action="store_true", help="also run the glxgears GL probe")
    p.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="extra environment for runs"
    )
    p.add_argument("--display", help="use this X display instead of starting Xvfb")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    bundle: Path = args.bundle.resolve()
    if not (bundle / "dpdesk").is_file() or not (bundle / "_internal").is_dir():
        p.error(f"{bundle} does not hold dpdesk and _internal/")
    extra = dict(e.split("=", 1) for e in args.env)
    if args.mode == "run" and not (args.display or shutil.which("Xvfb")):
        p.error("--mode run needs Xvfb or --display")
    results: dict[str, bool | None] = {}
    if args.mode in ("auto", "ldd"):
        results["ldd"] = ldd_mode(bundle, args.verbose)
    can_run = bool(args.display or shutil.which("Xvfb"))
    want_run = args.mode == "run" or (args.mode == "auto" and can_run)
    if args.mode == "auto" and not can_run:
        print(
            "\n(no Xvfb and no --display: only the ldd mode ran; the app, --masked and --gl need an X server)"
        )
    elif args.mode == "ldd" and (args.masked or args.gl):
        print("\n(--mode ldd: --masked and --gl not run)")
    if can_run and (want_run or ((args.masked or args.gl) and args.mode != "ldd")):
        xvfb = None
        display = args.display
        if not display:
            xvfb = Xvfb()
            display = xvfb.display
        try:
            if want_run:
                results["run"] = run_app(bundle, display, extra, None, args.verbose, "the app on X (xcb)")
            if args.masked:
                prefix, why = namespace_prefix()
                if prefix is None:
                    print(f"\n== masked run skipped: {why}")
                    results["masked"] = None
                else:
                    results["masked"] = run_app(
                        bundle,
                        display,
                        extra,
                        prefix,
                        args.verbose,
                        "the app with the host's X11/xcb libraries hidden",
                    )
            if args.gl:
                results["gl"] = gl_probe(bundle, display, extra, args.verbose)
            if xvfb and xvfb.proc.poll() is not None:
                print(f"! Xvfb {display} died during the runs:\n{xvfb.output()}")
                results["xvfb"] = False
        finally:
            if xvfb:
                xvfb.stop()
    glibc_floor(bundle)
    summary = ", ".join(
        f"{k}: {'OK' if v else 'skipped' if v is None else 'FAIL'}" for k, v in results.items()
    )
    ok = all(v is not False for v in results.values())
    print(f"\nbundle libraries: {'OK' if ok else 'FAIL'} ({summary})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
