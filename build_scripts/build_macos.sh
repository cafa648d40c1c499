#!/usr/bin/env bash
# Build the macOS app of dpdesk: dist/dpdesk.app, packed as dist/dpdesk-<version>-macos-<arch>.dmg
#
#   build_scripts/build_macos.sh
#   DPDESK_BUILD_VENV=/path/venv PYTHON=python3.11 build_scripts/build_macos.sh
#   DPDESK_CODESIGN_IDENTITY="Developer ID Application: ..." build_scripts/build_macos.sh   # signed (see README)
#   + APPLE_ID, APPLE_TEAM_ID, APPLE_APP_PASSWORD (an app-specific password), or DPDESK_NOTARY_PROFILE (a
#     `xcrun notarytool store-credentials` keychain profile): the .dmg is notarised and stapled
#   DPDESK_TARGET_ARCH=x86_64 ...                # on an Intel runner (macos-13); universal2 is not possible
#                                                # with pip's wheels (numpy, polars, opendp ship one arch each)
#
# Without DPDESK_CODESIGN_IDENTITY the app is signed ad hoc and not notarised (said at the end): Gatekeeper on
# macOS 15 then asks the user to allow it in System Settings > Privacy & Security. With an identity, PyInstaller
# signs every binary with the hardened runtime and build_scripts/macos-entitlements.plist (what CPython needs).
#
# Steps: venv with dpdesk + PyInstaller -> PyInstaller (build_scripts/dpdesk.spec: COLLECT + BUNDLE, strip -S,
# ad-hoc or Developer ID signature) -> self-test and main window from the .app -> .dmg (hdiutil, with an
# /Applications link) -> mount the .dmg, copy the app into an empty folder, run the self-test there.
# The .app is built for the machine's own architecture (arm64 on Apple silicon runners).
# Not run in this repository's own checks (no Mac); kept consistent with dpdesk.spec, which the Linux build
# exercises.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
[ "$(uname -s)" = Darwin ] || { echo "build_macos.sh: run this on macOS" >&2; exit 1; }
ARCH=${DPDESK_TARGET_ARCH:-$(uname -m)}
[ "$ARCH" = "$(uname -m)" ] || { echo "build_macos.sh: build $ARCH on a $ARCH machine (pip installs this machine's wheels)" >&2; exit 1; }
VENV=${DPDESK_BUILD_VENV:-$ROOT/build/venv-macos}
PYTHON=${PYTHON:-python3}
PYINSTALLER_VERSION=6.22.3
DIST=$ROOT/dist
WORK=$ROOT/build/pyinstaller
APP=$DIST/dpdesk.app
T_START=$(date +%s)

step() { printf '\n== %s  [%ss]\n' "$*" "$(( $(date +%s) - T_START ))"; }
die() { echo "build_macos.sh: $*" >&2; exit 1; }

# Run the app's executable from a .app: self-test, then the main window offscreen.
try_app() {
  local app=$1 home
  home=$(mktemp -d "${TMPDIR:-/tmp}/dpdesk-home.XXXXXX")
  echo "-- $app: --selftest"
  env -u DPDESK_HOME QT_QPA_PLATFORM=offscreen "$app/Contents/MacOS/dpdesk" --selftest || die "self-test failed ($app)"
  echo "-- $app: main window (offscreen)"
  out=$(QT_QPA_PLATFORM=offscreen DPDESK_STARTUP_PROBE=1 DPDESK_HOME="$home/dpdesk" "$app/Contents/MacOS/dpdesk" 2>&1) \
    || { echo "$out"; die "the main window did not open ($app)"; }
  echo "$out" | grep -E "^(WINDOW_SHOWN|VIEWS_READY) " || { echo "$out"; die "no WINDOW_SHOWN line ($app)"; }
  rm -rf "$home"
}

# --------------------------------------------------------------------------- 1. build venv
step "build venv $VENV"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PY=$VENV/bin/python
"$PY" -c 'import sys; assert sys.version_info >= (3, 11), sys.version' || die "Python >= 3.11 needed"
"$PY" -m pip install -q -e "$ROOT" "pyinstaller==$PYINSTALLER_VERSION" pyinstaller-hooks-contrib
"$PY" -m pip check >/dev/null || die "broken dependencies in $VENV (pip check)"
VERSION=$("$PY" -c 'import dpdesk; print(dpdesk.__version__)')

# --------------------------------------------------------------------------- 2. PyInstaller (.app)
step "PyInstaller $PYINSTALLER_VERSION"
rm -rf "$APP" "$DIST/dpdesk"
"$VENV/bin/pyinstaller" --noconfirm --log-level WARN --distpath "$DIST" --workpath "$WORK" \
  "$ROOT/build_scripts/dpdesk.spec"
[ -x "$APP/Contents/MacOS/dpdesk" ] || die "PyInstaller did not produce $APP"
[ -f "$APP/Contents/Resources/dpdesk.icns" ] || die "the .app has no icon"
{
  echo "dpdesk $VERSION for macOS $ARCH"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "built: $(date -u +%Y-%m-%dT%H:%MZ) on macOS $(sw_vers -productVersion)"
  echo
  echo "Python packages:"
  "$PY" -m pip freeze --exclude-editable | grep -v "^pyinstaller"
} > "$DIST/BUILD-INFO-macos.txt"
# Signing: PyInstaller signed every binary and the bundle (ad hoc, or with DPDESK_CODESIGN_IDENTITY).
codesign --verify --deep --strict --verbose=1 "$APP" || die "the .app's signature does not verify"

# --------------------------------------------------------------------------- 3. run it
step "self-test and main window from $APP"
try_app "$APP"

# --------------------------------------------------------------------------- 4. .dmg
step "dmg"
DMG=$DIST/dpdesk-$VERSION-macos-$ARCH.dmg
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/dpdesk-dmg.XXXXXX")
MNT=$(mktemp -d "${TMPDIR:-/tmp}/dpdesk-mnt.XXXXXX")
TRY=$(mktemp -d "${TMPDIR:-/tmp}/dpdesk-try.XXXXXX")
cleanup() { hdiutil detach -quiet "$MNT" 2>/dev/null || true; rm -rf "$STAGE" "$TRY"; rmdir "$MNT" 2>/dev/null || true; }
trap cleanup EXIT
ditto "$APP" "$STAGE/dpdesk.app"            # ditto keeps symlinks, extended attributes and signatures
ln -s /Applications "$STAGE/Applications"
rm -f "$DMG"
hdiutil create -quiet -volname "dpdesk $VERSION" -srcfolder "$STAGE" -fs HFS+ -format UDZO \
  -imagekey zlib-level=9 -ov "$DMG" || die "hdiutil create failed"
hdiutil verify -quiet "$DMG" || die "the .dmg does not verify"

# --------------------------------------------------------------------------- 5. from the .dmg, in an empty folder
step "mount the .dmg, copy the app out, run it"
hdiutil attach -quiet -nobrowse -readonly -mountpoint "$MNT" "$DMG" || die "cannot mount $DMG"
ditto "$MNT/dpdesk.app" "$TRY/dpdesk.app"
hdiutil detach -quiet "$MNT"
try_app "$TRY/dpdesk.app"

# --------------------------------------------------------------------------- 6. notarisation (secrets only)
step "notarisation"
NOTARY=()
if [ -n "${DPDESK_NOTARY_PROFILE:-}" ]; then
  NOTARY=(--keychain-profile "$DPDESK_NOTARY_PROFILE")
elif [ -n "${APPLE_ID:-}" ] && [ -n "${APPLE_TEAM_ID:-}" ] && [ -n "${APPLE_APP_PASSWORD:-}" ]; then
  NOTARY=(--apple-id "$APPLE_ID" --team-id "$APPLE_TEAM_ID" --password "$APPLE_APP_PASSWORD")
fi
if [ -z "${DPDESK_CODESIGN_IDENTITY:-}" ]; then
  echo "not notarised: the app is signed ad hoc (set DPDESK_CODESIGN_IDENTITY to a Developer ID Application identity)"
elif [ ${#NOTARY[@]} -eq 0 ]; then
  echo "not notarised: set DPDESK_NOTARY_PROFILE, or APPLE_ID, APPLE_TEAM_ID and APPLE_APP_PASSWORD"
else
  codesign --force --timestamp --sign "$DPDESK_CODESIGN_IDENTITY" "$DMG" || die "cannot sign $DMG"
  xcrun notarytool submit "$DMG" "${NOTARY[@]}" --wait || die "notarisation failed (xcrun notarytool log <id> says why)"
  xcrun stapler staple "$DMG" || die "cannot staple the notarisation ticket to $DMG"
  spctl --assess --type open --context context:primary-signature --verbose "$DMG" || die "Gatekeeper refuses $DMG"
  echo "notarised and stapled: $DMG"
fi

step "sizes"
echo "app: $(du -sk "$APP" | cut -f1) KiB  dmg: $(du -k "$DMG" | cut -f1) KiB"
echo "minimum macOS of the main executable: $(otool -l "$APP/Contents/MacOS/dpdesk" | awk '/LC_BUILD_VERSION/{f=1} f&&/minos/{print $2; exit}')"
step "done: $DMG"
