"""Third-party notices for what a dpdesk bundle ships, from the installed distributions' own metadata.

    python build_scripts/third_party_notices.py [--out resources/licenses/THIRD_PARTY_NOTICES.txt]
                                                [--bundle dist/dpdesk] [--check]

Lists every Python distribution dpdesk needs at run time (dpdesk's ``Requires-Dist`` closure, extras left out,
markers evaluated here), each with its version, licence (``License-Expression``, else ``License``, else the
licence classifiers), home page and the full text of every licence file the distribution ships (PEP 639
``License-File`` entries, and any LICENSE/COPYING/NOTICE/AUTHORS file in its ``.dist-info``); then CPython's
licence and PyInstaller's bootloader exception. With ``--bundle`` (Linux): also each shared library copied into
the bundle from the build host, with its Debian package and that package's ``/usr/share/doc/PKG/copyright``.

Why importlib.metadata and not pip-licenses: both read the same ``.dist-info`` files; reading them directly
needs nothing installed beyond the build venv (pip-licenses would add itself and prettytable), follows exactly
the run-time requirement closure (pip-licenses lists everything in the venv, PyInstaller and the build tools
included, which are not shipped), and keeps the licence texts PEP 639 moved into ``.dist-info/licenses/``.
The build writes the file into the bundle (regenerated at each build); a copy is committed for source runs.
``--check`` exits 1 when a distribution has no licence at all (neither metadata nor file).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "licenses" / "THIRD_PARTY_NOTICES.txt"
LICENSE_NAME = re.compile(r"(?i)(licen[cs]e|copying|notice|authors|copyright)")
RULE = "=" * 100

PYINSTALLER_NOTE = """\
The bundle's launcher is PyInstaller's bootloader (https://pyinstaller.org), GPL-2.0-or-later with the
"bootloader exception": it may be distributed with any program, under the program's own licence. From
PyInstaller's COPYING.txt: "In addition to the permissions in the GNU General Public License, the authors give
you unlimited permission to link or embed compiled bootloader and related files into combinations with other
programs, and to distribute those combinations without any restriction coming from the use of those files."
"""


def runtime_closure(root: str = "dpdesk") -> list[md.Distribution]:
    """The distributions ``root`` needs at run time, itself excluded, sorted by name."""
    env = {**default_environment(), "extra": ""}
    seen: dict[str, md.Distribution] = {}
    todo = [root]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue  # an optional or platform-specific requirement not installed here
        seen[name] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate(env):
                todo.append(req.name)
    seen.pop(canonicalize_name(root), None)
    return sorted(seen.values(), key=lambda d: canonicalize_name(d.metadata["Name"]))


def licence_of(dist: md.Distribution) -> str:
    meta = dist.metadata
    expr = meta.get("License-Expression")
    if expr:
        return expr
    text = (meta.get("License") or "").strip()
    if text and len(text) < 200 and "\n" not in text:
        return text
    classifiers = [
        c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")
    ]
    if classifiers:
        return "; ".join(classifiers)
    return "see the licence text below" if text else ""


def licence_files(dist: md.Distribution) -> list[tuple[str, str]]:
    """(name, text) of the licence files the distribution ships in its .dist-info (PEP 639 or not)."""
    out = []
    for f in dist.files or []:
        parts = f.parts
        if not parts or not parts[0].endswith(".dist-info"):
            continue
        if len(parts) > 1 and (parts[1] == "licenses" or LICENSE_NAME.search(parts[-1])):
            try:
                raw = Path(str(f.locate())).read_bytes()
                out.append(("/".join(parts[1:]), raw.decode("utf-8", errors="replace").strip()))
            except OSError:
                continue
    meta_text = (dist.metadata.get("License") or "").strip()
    if not out and meta_text and "\n" in meta_text:
        out.append(("METADATA License field", meta_text))
    return out


def homepage(dist: md.Distribution) -> str:
    meta = dist.metadata
    if meta.get("Home-page"):
        return meta["Home-page"]
    for url in meta.get_all("Project-URL") or []:
        label, _, link = url.partition(",")
        if label.strip().lower() in ("homepage", "home", "source", "repository", "source code"):
            return link.strip()
    return ""


def python_licence() -> str:
    for base in (Path(sysconfig.get_paths()["stdlib"]), Path(sys.base_prefix) / "lib"):
        p = base / "LICENSE.txt"
        if p.is_file():
            return p.read_text(encoding="utf-8", errors="replace").strip()
    return "Python Software Foundation License Version 2 (https://docs.python.org/3/license.html)"


def host_libraries(bundle: Path) -> list[tuple[str, str, str]]:
    """(library, Debian package, copyright text) for shared libraries the build copied from this host."""
    internal = bundle / "_internal"
    out = []
    for lib in sorted(internal.glob("lib*.so*")):
        if lib.is_symlink() or lib.name.startswith("libpython"):
            continue
        r = subprocess.run(["dpkg", "-S", f"*/{lib.name}"], capture_output=True, text=True, check=False)
        line = next((x for x in r.stdout.splitlines() if re.search(r"/lib/", x)), "")
        pkg = line.split(":", 1)[0].strip() if line else ""
        if not pkg:
            continue  # not from a Debian package (a wheel's own library): covered by its distribution
        copyright_file = Path("/usr/share/doc") / pkg.split(":")[0] / "copyright"
        text = (
            copyright_file.read_text(encoding="utf-8", errors="replace").strip()
            if copyright_file.is_file()
            else ""
        )
        out.append((lib.name, pkg, text))
    return out


def render(bundle: Path | None) -> tuple[str, list[str]]:
    dists = runtime_closure()
    missing = []
    head = [
        "Third-party software in dpdesk",
        "",
        "dpdesk itself is under the MIT licence (LICENSE). The bundle also ships the software below, each under",
        "its own licence, reproduced here from the installed distribution's metadata by",
        "build_scripts/third_party_notices.py. Qt and Qt for Python (PySide6, shiboken6) are under the LGPL-3.0:",
        "QT_LGPL_NOTICE.txt beside this file says where they are in the bundle and how to replace them.",
        "psycopg and psycopg-binary (the team ledger's PostgreSQL client) are under the LGPL-3.0 too, unmodified, in",
        "_internal/psycopg/ and _internal/psycopg_binary*/ (replace them with your build of the same version);",
        "psycopg-binary carries libpq (PostgreSQL licence), OpenSSL (Apache-2.0), MIT Kerberos, OpenLDAP and Cyrus",
        "SASL, listed with their licences in its wheel's software bill of materials (psycopg_binary-*.dist-info/sboms).",
        "",
        "Summary:",
    ]
    rows = []
    body = []
    for d in dists:
        name, version = d.metadata["Name"], d.version
        lic = licence_of(d)
        files = licence_files(d)
        if not lic and not files:
            missing.append(name)
        rows.append(f"  {name} {version}: {lic or 'no licence metadata'}")
        body += [RULE, f"{name} {version}", f"Licence: {lic or '(none in the metadata)'}"]
        if homepage(d):
            body.append(f"Home page: {homepage(d)}")
        for fname, text in files:
            body += ["", f"--- {fname} ---", text]
        body.append("")
    body += [
        RULE,
        f"Python {sys.version.split()[0]} (the interpreter and standard library)",
        "",
        python_licence(),
        "",
    ]
    body += [RULE, "PyInstaller bootloader", "", PYINSTALLER_NOTE]
    if bundle is not None:
        libs = host_libraries(bundle)
        body += [RULE, "Shared libraries copied from the build system (Debian packages)", ""]
        body += [f"  {lib}: {pkg}" for lib, pkg, _ in libs]
        by_pkg: dict[str, str] = {}
        for _lib, pkg, text in libs:
            by_pkg.setdefault(pkg, text)
        for pkg, text in sorted(by_pkg.items()):
            body += [
                "",
                f"--- {pkg}: /usr/share/doc/{pkg.split(':')[0]}/copyright ---",
                text or "(not found)",
            ]
        body.append("")
    text = "\n".join(head + rows + [""] + body)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n", missing


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--bundle", type=Path, help="a built Linux bundle: add the host libraries it carries")
    p.add_argument("--check", action="store_true", help="exit 1 if a distribution has no licence at all")
    args = p.parse_args(argv)
    if args.bundle is not None and not (args.bundle / "_internal").is_dir():
        p.error(f"{args.bundle} is not a bundle folder (no _internal/ in it)")
    text, missing = render(args.bundle)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text) // 1024} KiB)")
    if missing:
        print("no licence found for: " + ", ".join(missing), file=sys.stderr)
        return 1 if args.check else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
