#!/usr/bin/env bash
# Package a built Linux bundle as a .deb with Debian's own tool (dpkg-deb), and optionally prove it installs,
# runs and removes with dpkg.
#
#   build_scripts/make_deb.sh BUNDLE_DIR VERSION ICON_DIR OUT_DIR        # prints the .deb's path
#   build_scripts/make_deb.sh --test DEB                                 # as root: dpkg -i, run, dpkg -r
#
# Layout: the bundle in /opt/dpdesk (read-only, owned by root), /usr/bin/dpdesk (a two-line launcher),
# /usr/share/applications/dpdesk.desktop (Exec=/opt/dpdesk/dpdesk %f: a fixed path, nothing to quote),
# the icon in every hicolor size from ICON_DIR (<size>.png, dpdesk.svg), dpdesk's MIME types
# (/usr/share/mime/packages/dpdesk.xml: a release package's ledger.json, plans) and /usr/share/doc/dpdesk/copyright.
# No maintainer scripts: dpkg's file triggers of shared-mime-info, desktop-file-utils and hicolor-icon-theme
# refresh the MIME, menu and icon caches. Depends on what the bundle takes from the system: glibc >= 2.35 and
# the C++ runtime (checked by check_glibc_floor.py), the OpenGL/EGL stack, and libexpat/zlib for fontconfig.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "make_deb.sh: $*" >&2; exit 1; }

if [ "${1:-}" = "--test" ]; then
  DEB=$(realpath "${2:?give the .deb to test}")
  [ "$(id -u)" = 0 ] || die "--test installs with dpkg: run it as root (or in a throw-away container)"
  if dpkg -s dpdesk >/dev/null 2>&1; then die "a dpdesk package is already installed here: remove it first (dpkg -r dpdesk)"; fi
  [ ! -e /opt/dpdesk ] || die "/opt/dpdesk exists and is not from a package: move it away first"
  TRY=$(mktemp -d "${TMPDIR:-/tmp}/dpdesk-deb.XXXXXX")
  cleanup() { dpkg -r dpdesk >/dev/null 2>&1 || true; rm -rf "$TRY"; }
  trap cleanup EXIT
  echo "-- dpkg -i $(basename "$DEB")"
  dpkg -i "$DEB" || die "dpkg -i failed"
  [ "$(dpkg-query -W -f='${Status}' dpdesk)" = "install ok installed" ] || die "not installed"
  mkdir -p "$TRY/home"
  run() { env -i HOME="$TRY/home" PATH=/usr/bin:/bin LANG=C.UTF-8 DPDESK_HOME="$TRY/home/dpdesk" QT_QPA_PLATFORM=offscreen "$@"; }
  echo "-- dpdesk --version (through /usr/bin/dpdesk)"
  run timeout 120 dpdesk --version || die "dpdesk --version failed"
  echo "-- dpdesk --selftest"
  run timeout 600 dpdesk --selftest || die "the installed dpdesk's self-test failed"
  if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate /usr/share/applications/dpdesk.desktop || die "invalid desktop entry"
  fi
  if command -v gio >/dev/null; then
    printf '{\n  "dataset": "ds-0",\n  "head": {}\n}\n' > "$TRY/ledger.json"
    t=$(gio info -a standard::content-type "$TRY/ledger.json" | sed -n 's/.*content-type: //p')
    [ "$t" = application/x-dpdesk-ledger ] || die "a package's ledger.json is typed $t, not application/x-dpdesk-ledger (MIME database not refreshed?)"
    echo "-- a package's ledger.json is $t"
  fi
  [ -z "$(find /opt/dpdesk ! -type l \( -perm /022 -o ! -user root \) -print -quit)" ] || die "/opt/dpdesk has files others can change"
  echo "-- dpkg -r dpdesk"
  dpkg -r dpdesk || die "dpkg -r failed"
  for p in /opt/dpdesk /usr/bin/dpdesk /usr/share/applications/dpdesk.desktop /usr/share/mime/packages/dpdesk.xml; do
    [ ! -e "$p" ] || die "$p is left after dpkg -r"
  done
  ! grep -rq dpdesk /usr/share/mime/application 2>/dev/null || die "the MIME database still lists dpdesk's types after removal"
  echo "deb test: installed, ran (--version, --selftest), removed; nothing left"
  exit 0
fi

BUNDLE=$(realpath "${1:?BUNDLE_DIR}")
VERSION=${2:?VERSION}
ICONS=$(realpath "${3:?ICON_DIR}")
OUT=$(realpath "${4:?OUT_DIR}")
command -v dpkg-deb >/dev/null || die "dpkg-deb is required (Debian/Ubuntu: it is part of dpkg)"
[ -x "$BUNDLE/dpdesk" ] || die "$BUNDLE holds no dpdesk executable"
ARCH=$(dpkg --print-architecture)
# Debian's version order: a PEP 440 pre-release or dev release sorts before the release with "~"
# (only in the public part: the local part after "+", a git hash, is kept as it is: gdfa520663 has an "a0")
PUBLIC=${VERSION%%+*}
LOCAL=${VERSION#"$PUBLIC"}
DEBVER=$(printf '%s' "$PUBLIC" | sed -E 's/\.?(dev|a|b|rc)([0-9]+)/~\1\2/g; s/[^A-Za-z0-9.+~-]/./g')
DEBVER="$DEBVER$(printf '%s' "$LOCAL" | sed -E 's/[^A-Za-z0-9.+~-]/./g')"
printf '%s' "$DEBVER" | grep -Eq '^[0-9]' || die "version $VERSION does not start with a digit"
DEB=$OUT/dpdesk_${DEBVER}_${ARCH}.deb
ROOTDIR=$(mktemp -d "${TMPDIR:-/tmp}/dpdesk-debroot.XXXXXX")
trap 'rm -rf "$ROOTDIR"' EXIT

mkdir -p "$ROOTDIR/opt" "$ROOTDIR/usr/bin" "$ROOTDIR/usr/share/applications" "$ROOTDIR/usr/share/mime/packages" \
  "$ROOTDIR/usr/share/doc/dpdesk" "$ROOTDIR/DEBIAN"
cp -a "$BUNDLE" "$ROOTDIR/opt/dpdesk"
# what only the tarball needs (the package puts these in /usr/share itself)
rm -rf "$ROOTDIR/opt/dpdesk/install-desktop-entry.sh" "$ROOTDIR/opt/dpdesk/dpdesk.desktop" \
  "$ROOTDIR/opt/dpdesk/dpdesk-mime.xml" "$ROOTDIR/opt/dpdesk/icons"
chmod -R u+rwX,go+rX,go-w "$ROOTDIR/opt/dpdesk"
printf '#!/bin/sh\nexec /opt/dpdesk/dpdesk "$@"\n' > "$ROOTDIR/usr/bin/dpdesk"
chmod 755 "$ROOTDIR/usr/bin/dpdesk"
sed -e 's|^Exec=.*|Exec=/opt/dpdesk/dpdesk %f|' -e 's|^TryExec=.*|TryExec=/opt/dpdesk/dpdesk|' \
  "$HERE/linux/dpdesk.desktop" > "$ROOTDIR/usr/share/applications/dpdesk.desktop"
cp "$HERE/linux/dpdesk-mime.xml" "$ROOTDIR/usr/share/mime/packages/dpdesk.xml"
for png in "$ICONS"/*.png; do
  s=$(basename "$png" .png)
  mkdir -p "$ROOTDIR/usr/share/icons/hicolor/${s}x${s}/apps"
  cp "$png" "$ROOTDIR/usr/share/icons/hicolor/${s}x${s}/apps/dpdesk.png"
done
if [ -e "$ICONS/dpdesk.svg" ]; then
  mkdir -p "$ROOTDIR/usr/share/icons/hicolor/scalable/apps"
  cp "$ICONS/dpdesk.svg" "$ROOTDIR/usr/share/icons/hicolor/scalable/apps/dpdesk.svg"
fi
cat > "$ROOTDIR/usr/share/doc/dpdesk/copyright" <<'COPYRIGHT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: dpdesk
Comment: dpdesk is under the MIT licence. The bundle in /opt/dpdesk also holds third-party software under its
 own licences: /opt/dpdesk/_internal/resources/licenses/THIRD_PARTY_NOTICES.txt lists each with its licence text;
 Qt and Qt for Python are under the LGPL-3.0: /opt/dpdesk/_internal/resources/licenses/QT_LGPL_NOTICE.txt says
 how to replace them.

Files: *
License: MIT
COPYRIGHT
chmod 644 "$ROOTDIR/usr/share/doc/dpdesk/copyright"
SIZE=$(du -sk --exclude=DEBIAN "$ROOTDIR" | cut -f1)
cat > "$ROOTDIR/DEBIAN/control" <<CONTROL
Package: dpdesk
Version: $DEBVER
Architecture: $ARCH
Maintainer: dpdesk maintainers <dpdesk@users.noreply.github.com>
Installed-Size: $SIZE
Depends: libc6 (>= 2.35), libstdc++6 (>= 12), libgcc-s1 (>= 12), libexpat1, zlib1g, libgl1, libegl1
Recommends: shared-mime-info, desktop-file-utils, hicolor-icon-theme
Section: science
Priority: optional
Description: publish statistics under differential privacy, with a budget ledger
 dpdesk publishes statistics from a sensitive table under differential privacy
 and keeps a durable, tamper-evident ledger of the privacy budget spent, per
 dataset. A desktop app and the dpdesk command; everything runs locally.
CONTROL
mkdir -p "$OUT"
rm -f "$DEB"
# gzip: fast, and read by every dpkg (xz would save ~20 % for ~2 minutes more here)
dpkg-deb --root-owner-group -Zgzip -z6 --build "$ROOTDIR" "$DEB" >/dev/null || die "dpkg-deb failed"
dpkg-deb --info "$DEB" >/dev/null || die "dpkg-deb cannot read $DEB back"
echo "$DEB"
