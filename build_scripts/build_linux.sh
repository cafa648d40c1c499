#!/usr/bin/env bash
# Build the Linux bundle of dpdesk and prove it works after unpacking: dist/dpdesk-linux-<arch>.tar.gz
#
#   build_scripts/build_linux.sh                 # build venv in build/venv (created if missing)
#   DPDESK_BUILD_VENV=/path/venv build_scripts/build_linux.sh   # use that venv (created if missing)
#   PYTHON=python3.11 build_scripts/build_linux.sh               # interpreter for a new venv
#   DPDESK_SKIP_APT=1 ...                        # do not apt-get install the system libraries (check only)
#   PIP_CONSTRAINT=constraints.txt ...           # pip's own variable: pin every dependency
#
# Steps: system libraries Qt needs (so PyInstaller bundles them) -> venv with dpdesk + PyInstaller ->
# PyInstaller (build_scripts/dpdesk.spec) -> .desktop entry, icon, build info -> .tar.gz -> unpack into an
# empty folder and run `dpdesk --selftest` and the main window offscreen from there -> where every library
# comes from (check_bundle_libs.py: ldd, then on Xvfb with the xcb plugin, again with the host's X11 libraries
# hidden, and a GL probe) -> bundle checks, sizes and the glibc floor. Any failure stops with non-zero.
#
# The bundle runs on Linux with the build host's glibc or newer (printed at the end): build on the oldest
# distribution to support (PySide6 6.12 wheels need glibc 2.34 anyway).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
ARCH=$(uname -m)
VENV=${DPDESK_BUILD_VENV:-$ROOT/build/venv}
PYTHON=${PYTHON:-python3}
PYINSTALLER_VERSION=6.22.3
DIST=$ROOT/dist
WORK=$ROOT/build/pyinstaller
BUNDLE=$DIST/dpdesk
TARBALL=$DIST/dpdesk-linux-$ARCH.tar.gz
T_START=$(date +%s)

step() { printf '\n== %s  [%ss]\n' "$*" "$(( $(date +%s) - T_START ))"; }
die() { echo "build_linux.sh: $*" >&2; exit 1; }

# --------------------------------------------------------------------------- 1. system libraries
# Qt's xcb platform plugin needs these at build time so the spec copies them into the bundle (all of them,
# core libxcb1 included; the spec stops if one is missing, check_bundle_libs.py below fails the build if one
# is still taken from the system at run time). xvfb, x11-utils (xwininfo): to test on a real X server;
# mesa-utils (glxgears): the GL probe, the host's Mesa driver on top of the bundled X11 libraries.
DEBS="binutils file libxcb1 libx11-6 libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
 libxcb-randr0 libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1
 libxcb-xfixes0 libxcb-xkb1 libxcb-xinput0 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libfreetype6
 libdbus-1-3 libglib2.0-0 libegl1 libgl1 libwayland-client0 libwayland-cursor0 xvfb xauth x11-utils mesa-utils"
step "system libraries"
if [ -z "${DPDESK_SKIP_APT:-}" ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $DEBS >/dev/null
else
  echo "not installing system packages (DPDESK_SKIP_APT or no apt-get): the bundle check below still applies"
fi
for tool in readelf strip tar gzip; do command -v "$tool" >/dev/null || die "$tool is required"; done

# --------------------------------------------------------------------------- 2. build venv
step "build venv $VENV"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
PY=$VENV/bin/python
"$PY" -c 'import sys; assert sys.version_info >= (3, 11), sys.version' || die "Python >= 3.11 needed"
"$PY" -c 'import sysconfig, sys; sys.exit(0 if sysconfig.get_config_var("Py_ENABLE_SHARED") else 1)' \
  || die "this Python has no shared libpython (PyInstaller needs one: pyenv: PYTHON_CONFIGURE_OPTS=--enable-shared)"
"$PY" -m pip install -q -e "$ROOT" "pyinstaller==$PYINSTALLER_VERSION" pyinstaller-hooks-contrib \
  || die "pip install failed"
"$PY" -m pip check >/dev/null || die "broken dependencies in $VENV (pip check)"
"$PY" -c 'import dpdesk, PyInstaller, opendp, polars, PySide6.QtSvg' || die "the build venv lacks dependencies"

# --------------------------------------------------------------------------- 3. PyInstaller
step "PyInstaller $PYINSTALLER_VERSION"
rm -rf "$BUNDLE" "$TARBALL"
"$VENV/bin/pyinstaller" --noconfirm --log-level WARN --distpath "$DIST" --workpath "$WORK" \
  "$ROOT/build_scripts/dpdesk.spec"
[ -x "$BUNDLE/dpdesk" ] || die "PyInstaller did not produce $BUNDLE/dpdesk"

# --------------------------------------------------------------------------- 4. desktop entry, icon, build info
step "desktop entry, icon"
cp "$ROOT/resources/icons/dpdesk.png" "$BUNDLE/dpdesk.png"
cat > "$BUNDLE/dpdesk.desktop" <<'EOF'
[Desktop Entry]
Type=Application
Name=dpdesk
GenericName=Differential privacy releases
Comment=Publish statistics from a sensitive table under differential privacy
Exec=dpdesk %f
TryExec=dpdesk
Icon=dpdesk
Terminal=false
Categories=Office;
Keywords=privacy;statistics;differential privacy;census;
MimeType=application/json;text/csv;application/vnd.openxmlformats-officedocument.spreadsheetml.sheet;application/vnd.apache.parquet;
StartupWMClass=dpdesk
EOF
cat > "$BUNDLE/install-desktop-entry.sh" <<'EOF'
#!/bin/sh
# Put dpdesk in this user's application menu (and its "Open with" lists for plans and tables):
#   ./install-desktop-entry.sh            run once after unpacking (again after moving the folder)
#   ./install-desktop-entry.sh --remove   take it out again
# It never makes dpdesk the default program for any file type.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
apps=$data/applications
icons=$data/icons/hicolor/256x256/apps
if [ "${1:-}" = "--remove" ]; then
  rm -f "$apps/dpdesk.desktop" "$icons/dpdesk.png"
else
  mkdir -p "$apps" "$icons"
  cp "$here/dpdesk.png" "$icons/dpdesk.png"
  esc=$(printf '%s' "$here" | sed 's/[&|\\]/\\&/g')
  sed -e "s|^Exec=.*|Exec=\"$esc/dpdesk\" %f|" -e "s|^TryExec=.*|TryExec=$esc/dpdesk|" \
    "$here/dpdesk.desktop" > "$apps/dpdesk.desktop"
  chmod 644 "$apps/dpdesk.desktop"
fi
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$apps" 2>/dev/null || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q "$data/icons/hicolor" 2>/dev/null || true
if [ "${1:-}" = "--remove" ]; then echo "dpdesk desktop entry removed"; else echo "dpdesk desktop entry installed in $apps"; fi
EOF
chmod 755 "$BUNDLE/install-desktop-entry.sh"
if command -v desktop-file-validate >/dev/null 2>&1; then
  desktop-file-validate "$BUNDLE/dpdesk.desktop" || die "invalid .desktop file"
fi
{
  echo "dpdesk $("$PY" -c 'import dpdesk; print(dpdesk.__version__)') for Linux $ARCH"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%MZ) on $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
  echo "needs: Linux $ARCH with glibc $(ldd --version | head -1 | grep -oE '[0-9]+\.[0-9]+$') or newer, an X11 or Wayland desktop with OpenGL/EGL drivers (libGL/libEGL)"
  echo "start: ./dpdesk   (./dpdesk --help for the command line; ./install-desktop-entry.sh for the menu)"
  echo
  echo "Python packages:"
  "$PY" -m pip freeze --exclude-editable 2>/dev/null | grep -v "^pyinstaller"
} > "$BUNDLE/BUILD-INFO.txt"

# --------------------------------------------------------------------------- 5. pack
step "pack $TARBALL"
tar -C "$DIST" -cf - dpdesk | gzip -6 > "$TARBALL"

# --------------------------------------------------------------------------- 6. run it from an unpacked copy
step "unpack into an empty folder and run"
TRY=$(mktemp -d "${TMPDIR:-/tmp}/dpdesk-try.XXXXXX")
trap 'rm -rf "$TRY"' EXIT
tar -C "$TRY" -xzf "$TARBALL"
mkdir "$TRY/home"
(
  cd "$TRY"
  # PATH without the venv and PYTHONPATH unset: nothing from the build may leak into the run
  run() { env -i HOME="$TRY/home" PATH=/usr/bin:/bin LANG=C.UTF-8 DPDESK_HOME="$TRY/home/dpdesk" "$@"; }
  echo "-- ./dpdesk/dpdesk --selftest (offscreen, no DPDESK_HOME: it must make its own)"
  env -i HOME="$TRY/home" PATH=/usr/bin:/bin LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen \
    timeout 600 ./dpdesk/dpdesk --selftest || die "self-test failed"
  [ ! -e "$TRY/home/.local/share/dpdesk" ] || die "the self-test wrote into the user's dpdesk folder"
  echo "-- ./dpdesk/dpdesk --version"
  run timeout 120 ./dpdesk/dpdesk --version || die "dpdesk --version failed"
  echo "-- main window (offscreen)"
  out=$(run QT_QPA_PLATFORM=offscreen DPDESK_STARTUP_PROBE=1 timeout 300 ./dpdesk/dpdesk 2>&1) \
    || { echo "$out"; die "the main window did not open offscreen"; }
  echo "$out" | grep -E "^(WINDOW_SHOWN|VIEWS_READY) " || { echo "$out"; die "no WINDOW_SHOWN line"; }
)

# --------------------------------------------------------------------------- 7. where each library comes from
# ldd over every bundled file; with Xvfb: the main window on the xcb plugin (every mapped library classified
# from /proc/PID/maps), again with the host's X11/xcb/xkbcommon libraries hidden (private mount namespace;
# skipped where there is none), and glxgears with the bundle's search path (software Mesa). Without Xvfb,
# ldd only. Fails if an X11/xcb library comes from the system. Prints the glibc floor.
step "bundle libraries: bundled or from the system"
"$PY" "$ROOT/build_scripts/check_bundle_libs.py" "$TRY/dpdesk" --masked --gl \
  || die "library check failed: a library comes from the system, or the app did not open on X (see above)"

# --------------------------------------------------------------------------- 8. checks, sizes, glibc floor
step "bundle checks and sizes"
"$PY" "$ROOT/build_scripts/bundle_report.py" "$TRY/dpdesk" --tar "$TARBALL" ${DPDESK_ITEMISE:+--itemise} \
  || die "bundle checks failed"
echo "tar.gz: $(du -k "$TARBALL" | cut -f1) KiB  unpacked: $(du -sk "$TRY/dpdesk" | cut -f1) KiB"

# --------------------------------------------------------------------------- 9. the record of this build
# The build is too slow for every CI run; each change to the build is run with this script and its record
# committed (build_scripts/LAST_BUILD.md), so the repository says which commit was last proven.
RECORD=$ROOT/build_scripts/LAST_BUILD.md
COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
git -C "$ROOT" diff --quiet HEAD -- dpdesk build_scripts resources pyproject.toml ':!build_scripts/LAST_BUILD.md' 2>/dev/null \
  || COMMIT="$COMMIT (with uncommitted changes)"
{
  echo "# Last Linux build"
  echo
  echo "Written by \`build_scripts/build_linux.sh\` when every step above passed (self-test from an unpacked copy,"
  echo "main window offscreen, library check, bundle checks)."
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| date (UTC) | $(date -u '+%Y-%m-%d %H:%M') |"
  echo "| commit | $COMMIT |"
  echo "| build host | $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(ldd --version | head -1 | awk '{print $NF}'), $(nproc) CPUs |"
  echo "| build time | $(( $(date +%s) - T_START )) s |"
  echo "| unpacked | $(( $(du -sk "$TRY/dpdesk" | cut -f1) / 1024 )) MiB (limit 520) |"
  echo "| .tar.gz | $(( $(du -k "$TARBALL" | cut -f1) / 1024 )) MiB (limit 175) |"
} > "$RECORD"
step "done: $TARBALL (record: $RECORD)"
