#!/bin/sh
# Put dpdesk in this user's application menu (and its "Open with" lists for plans, package ledgers and tables):
#   ./install-desktop-entry.sh            run once after unpacking (again after moving the folder)
#   ./install-desktop-entry.sh --remove   take it out again
# It never makes dpdesk the default program for any file type. Any folder name works: the menu entry runs a
# small launcher in the user's data folder, which holds this folder's path quoted for sh, and the entry's Exec
# line quotes the launcher's path by the Desktop Entry spec's rules (double quotes; \ " ` $ escaped; % doubled;
# then the key file's own backslash escape). A path with a newline is refused.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
apps=$data/applications
icons=$data/icons/hicolor
launcher=$data/dpdesk/dpdesk
case "$here$data" in
  *'
'*) echo "install-desktop-entry.sh: a folder name with a line break cannot be put in a menu entry; move dpdesk to another folder" >&2; exit 2 ;;
esac

# the Desktop Entry spec's quoting of one Exec argument, then the string escape of the key file
exec_arg() {
  printf '%s' "$1" | sed -e 's/[\\"`$]/\\&/g' -e 's/^/"/' -e 's/$/"/' -e 's/%/%%/g' -e 's/\\/\\\\/g'
}
# the key file's string escape only (TryExec, Icon)
string_value() {
  printf '%s' "$1" | sed -e 's/\\/\\\\/g'
}
# sh single quotes: ' becomes '\''
sh_quote() {
  printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

if [ "${1:-}" = "--remove" ]; then
  rm -f "$apps/dpdesk.desktop" "$launcher" "$data/mime/packages/dpdesk.xml"
  for d in "$icons"/*/apps; do rm -f "$d/dpdesk.png" "$d/dpdesk.svg"; done
  rmdir "$data/dpdesk" 2>/dev/null || true
else
  mkdir -p "$apps" "$data/dpdesk" "$data/mime/packages"
  for png in "$here"/icons/*.png; do
    [ -e "$png" ] || continue
    size=$(basename "$png" .png)
    mkdir -p "$icons/${size}x${size}/apps"
    cp "$png" "$icons/${size}x${size}/apps/dpdesk.png"
  done
  if [ -e "$here/icons/dpdesk.svg" ]; then
    mkdir -p "$icons/scalable/apps" && cp "$here/icons/dpdesk.svg" "$icons/scalable/apps/dpdesk.svg"
  fi
  cp "$here/dpdesk-mime.xml" "$data/mime/packages/dpdesk.xml"
  printf '#!/bin/sh\n# written by %s\nexec %s "$@"\n' "install-desktop-entry.sh" "$(sh_quote "$here/dpdesk")" > "$launcher.tmp"
  chmod 755 "$launcher.tmp" && mv -f "$launcher.tmp" "$launcher"
  EXEC_LINE="Exec=$(exec_arg "$launcher") %f" TRY_LINE="TryExec=$(string_value "$launcher")" \
    awk '/^(Exec|TryExec)=/ { next } { print } /^\[Desktop Entry\]$/ { print ENVIRON["EXEC_LINE"]; print ENVIRON["TRY_LINE"] }' \
    "$here/dpdesk.desktop" > "$apps/dpdesk.desktop.tmp"
  chmod 644 "$apps/dpdesk.desktop.tmp" && mv -f "$apps/dpdesk.desktop.tmp" "$apps/dpdesk.desktop"
fi
command -v update-mime-database >/dev/null 2>&1 && update-mime-database "$data/mime" >/dev/null 2>&1 || true
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$apps" 2>/dev/null || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q "$icons" 2>/dev/null || true
if [ "${1:-}" = "--remove" ]; then echo "dpdesk desktop entry removed"; else echo "dpdesk desktop entry installed in $apps"; fi
