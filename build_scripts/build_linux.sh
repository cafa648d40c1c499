#!/usr/bin/env bash
# Build the Linux bundle of dpdesk and prove it works after unpacking and installed from its .deb:
# dist/dpdesk-<version>-linux-<arch>.tar.gz, dist/dpdesk_<version>_<debarch>.deb, dist/SHA256SUMS (+ .sig, .minisig)
#
#   build_scripts/build_linux.sh                 # build venv in build/venv (created if missing)
#   DPDESK_BUILD_VENV=/path/venv build_scripts/build_linux.sh   # use that venv (created if missing)
#   PYTHON=python3.11 build_scripts/build_linux.sh               # interpreter for a new venv
#   DPDESK_SKIP_APT=1 ...                        # do not apt-get install the system libraries (check only)
#   PIP_CONSTRAINT=constraints.txt ...           # pip's own variable: pin every dependency
#   DPDESK_RELEASE_KEY=/path/key ...             # sign SHA256SUMS with the release key (else: checksums only)
#   DPDESK_SKIP_DEB_TEST=1 ...                   # build the .deb but do not install it (the test needs root)
#
# Steps: system libraries Qt needs (so PyInstaller bundles them) -> venv with dpdesk + PyInstaller ->
# PyInstaller (build_scripts/dpdesk.spec) -> .desktop entry, icons, MIME types, licences, build info -> .tar.gz ->
# unpack into an empty folder and run `dpdesk --selftest` and the main window offscreen from there -> where every
# library comes from (check_bundle_libs.py: ldd, then on Xvfb with the xcb plugin, again with the host's X11
# libraries hidden, and a GL probe) -> the glibc floor (check_glibc_floor.py: nothing needs more than Ubuntu
# 22.04's glibc 2.35 and C++ runtime) -> bundle checks and sizes -> .deb (make_deb.sh), installed, run and
# removed with dpkg -> SHA256SUMS and its signature, checked with sha256sum and openssl. Any failure stops.
#
# The floor is Ubuntu 22.04 (glibc 2.35) although this host may be newer: the spec drops the host's C++ runtime
# and expat, and check_glibc_floor.py fails the build if anything left needs more (build_scripts/README.md).
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
for tool in readelf objdump strip tar gzip dpkg-deb sha256sum; do command -v "$tool" >/dev/null || die "$tool is required"; done

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
VERSION=$("$PY" -c 'import importlib.metadata as m; print(m.version("dpdesk"))')
TARBALL=$DIST/dpdesk-$VERSION-linux-$ARCH.tar.gz
echo "dpdesk $VERSION (installed metadata of the build venv)"
rm -rf "$BUNDLE" "$DIST"/dpdesk-*-linux-*.tar.gz "$DIST"/dpdesk-linux-*.tar.gz "$DIST"/dpdesk_*.deb "$DIST"/SHA256SUMS*
"$VENV/bin/pyinstaller" --noconfirm --log-level WARN --distpath "$DIST" --workpath "$WORK" \
  "$ROOT/build_scripts/dpdesk.spec"
[ -x "$BUNDLE/dpdesk" ] || die "PyInstaller did not produce $BUNDLE/dpdesk"

# --------------------------------------------------------------------------- 4. desktop entry, icons, licences, build info
step "desktop entry, icons, MIME types, licences"
# icons/<size>.png for every hicolor size (Qt renders the SVG) and the SVG: the .deb and install-desktop-entry.sh
QT_QPA_PLATFORM=offscreen "$PY" "$ROOT/build_scripts/make_icons.py" --out "$WORK/icons-unused" \
  --png-dir "$BUNDLE/icons" >/dev/null || die "make_icons.py failed"
rm -f "$BUNDLE/icons/1024.png"
cp "$ROOT/resources/icons/dpdesk.svg" "$BUNDLE/icons/dpdesk.svg"
cp "$ROOT/build_scripts/linux/dpdesk.desktop" "$ROOT/build_scripts/linux/dpdesk-mime.xml" \
  "$ROOT/build_scripts/linux/install-desktop-entry.sh" "$BUNDLE/"
chmod 755 "$BUNDLE/install-desktop-entry.sh"
if command -v desktop-file-validate >/dev/null 2>&1; then
  desktop-file-validate "$BUNDLE/dpdesk.desktop" || die "invalid .desktop file"
fi
# third-party notices of what this bundle holds (the committed copy serves source runs)
"$PY" "$ROOT/build_scripts/third_party_notices.py" --check --bundle "$BUNDLE" \
  --out "$BUNDLE/_internal/resources/licenses/THIRD_PARTY_NOTICES.txt" || die "third-party notices failed"
[ -s "$BUNDLE/_internal/resources/licenses/QT_LGPL_NOTICE.txt" ] || die "the Qt LGPL notice is not in the bundle"
{
  echo "dpdesk $VERSION for Linux $ARCH"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%MZ) on $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
  echo "needs: Linux $ARCH with glibc 2.35 or newer (Ubuntu 22.04, Debian 12, Fedora 36 or later) and its C++ runtime (libstdc++6, libgcc-s1), an X11 or Wayland desktop with OpenGL/EGL drivers (libgl1 libegl1)"
  echo "start: ./dpdesk   (./dpdesk --help for the command line; ./install-desktop-entry.sh for the menu)"
  echo "licences: _internal/resources/licenses/ (THIRD_PARTY_NOTICES.txt, QT_LGPL_NOTICE.txt)"
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
# ldd only. Fails if an X11/xcb library comes from the system.
step "bundle libraries: bundled or from the system"
"$PY" "$ROOT/build_scripts/check_bundle_libs.py" "$TRY/dpdesk" --masked --gl \
  || die "library check failed: a library comes from the system, or the app did not open on X (see above)"

# --------------------------------------------------------------------------- 7b. glibc floor
step "glibc floor: Ubuntu 22.04 (glibc 2.35, GLIBCXX_3.4.30, CXXABI_1.3.13, GCC_12.0.0)"
FLOOR=$("$PY" "$ROOT/build_scripts/check_glibc_floor.py" "$TRY/dpdesk") || { echo "$FLOOR"; die "the bundle needs more than the floor"; }
echo "$FLOOR"

# --------------------------------------------------------------------------- 8. checks, sizes
step "bundle checks and sizes"
"$PY" "$ROOT/build_scripts/bundle_report.py" "$TRY/dpdesk" --tar "$TARBALL" ${DPDESK_ITEMISE:+--itemise} \
  || die "bundle checks failed"
echo "tar.gz: $(du -k "$TARBALL" | cut -f1) KiB  unpacked: $(du -sk "$TRY/dpdesk" | cut -f1) KiB"

# --------------------------------------------------------------------------- 9. .deb: build, install, run, remove
step ".deb (dpkg-deb)"
DEB=$("$ROOT/build_scripts/make_deb.sh" "$BUNDLE" "$VERSION" "$BUNDLE/icons" "$DIST") || die "make_deb.sh failed"
echo "$DEB: $(du -k "$DEB" | cut -f1) KiB"
DEB_TEST="not run"
if [ -n "${DPDESK_SKIP_DEB_TEST:-}" ]; then
  echo "not installing the .deb (DPDESK_SKIP_DEB_TEST)"
elif [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
  $SUDO "$ROOT/build_scripts/make_deb.sh" --test "$DEB" || die "the .deb did not install, run or remove cleanly"
  DEB_TEST="installed with dpkg -i, dpdesk --version and --selftest from /usr/bin, ledger.json typed application/x-dpdesk-ledger, removed with dpkg -r: nothing left"
else
  echo "not installing the .deb: needs root (or sudo without a password)"
fi

# --------------------------------------------------------------------------- 10. checksums and signature
step "SHA256SUMS and signature"
"$PY" "$ROOT/build_scripts/sign_release.py" "$DIST" "$TARBALL" "$DEB" || die "sign_release.py failed"
(cd "$DIST" && sha256sum -c SHA256SUMS) || die "sha256sum -c failed on the fresh SHA256SUMS"
SIGNED="not signed (DPDESK_RELEASE_KEY not set)"
if [ -e "$DIST/SHA256SUMS.sig" ]; then
  (cd "$DIST" && openssl pkeyutl -verify -pubin -inkey "$ROOT/resources/release-key.pub.pem" -rawin \
    -in SHA256SUMS -sigfile SHA256SUMS.sig) || die "SHA256SUMS.sig does not verify with resources/release-key.pub.pem"
  SIGNED="signed; sha256sum -c and openssl pkeyutl -verify -rawin with resources/release-key.pub.pem: verified"
  if command -v minisign >/dev/null; then
    (cd "$DIST" && minisign -Vm SHA256SUMS -p "$ROOT/resources/release-key.minisign.pub") || die "SHA256SUMS.minisig does not verify"
    SIGNED="$SIGNED; minisign -V: verified"
  fi
fi

# --------------------------------------------------------------------------- 11. the record of this build
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
  echo "main window offscreen, library check, glibc floor, bundle checks, .deb, checksums)."
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| date (UTC) | $(date -u '+%Y-%m-%d %H:%M') |"
  echo "| commit | $COMMIT |"
  echo "| version | $VERSION |"
  echo "| build host | $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(ldd --version | head -1 | awk '{print $NF}'), $(nproc) CPUs |"
  echo "| build time | $(( $(date +%s) - T_START )) s |"
  echo "| unpacked | $(( $(du -sk "$TRY/dpdesk" | cut -f1) / 1024 )) MiB (limit 520) |"
  echo "| $(basename "$TARBALL") | $(( $(du -k "$TARBALL" | cut -f1) / 1024 )) MiB (limit 175) |"
  echo "| $(basename "$DEB") | $(( $(du -k "$DEB" | cut -f1) / 1024 )) MiB |"
  echo "| glibc floor | $(echo "$FLOOR" | tail -1 | sed 's/|/\\|/g'); $(echo "$FLOOR" | head -1 | sed 's/|/\\|/g') |"
  echo "| .deb test | $DEB_TEST |"
  echo "| checksums | $SIGNED |"
} > "$RECORD"
step "done: $TARBALL $DEB (record: $RECORD)"
