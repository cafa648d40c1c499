"""Translation catalogue tools for dpdesk's one gettext domain (``dpdesk``); standard library only.

Usage (from the repository root)::

    python build_scripts/i18n.py extract    # dpdesk/**.py -> resources/i18n/dpdesk.pot
    python build_scripts/i18n.py update     # extract, then merge into zh_CN/LC_MESSAGES/dpdesk.po
    python build_scripts/i18n.py compile    # dpdesk.po -> dpdesk.mo (GNU .mo, UTF-8, plural forms)
    python build_scripts/i18n.py check      # exit 1 if a message lacks a translation or the .mo is stale

``extract`` reads the code with :mod:`ast` (nothing is imported or run) and collects the string
literals passed to ``_()`` and ``ngettext()``; a call with anything else than a literal is reported,
because a translator could never see it. ``update`` keeps existing translations, offers the closest
retired translation of a changed message as *fuzzy* (fuzzy translations are not used), and keeps
messages no longer in the code as obsolete ``#~`` entries (``--drop-obsolete`` removes them).
``compile`` writes the .mo the way CPython's ``Tools/i18n/msgfmt.py`` does: keys sorted by their
bytes, no hash table, plural forms separated by NUL. ``check`` also refuses a translation whose
``{placeholders}`` differ from the English ones (``str.format`` would raise) and an .mo that is not
exactly what ``compile`` makes from the .po today.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import os
import re
import string
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dpdesk"
I18N = ROOT / "resources" / "i18n"
DOMAIN = "dpdesk"
POT = I18N / f"{DOMAIN}.pot"
LANGUAGES = ("zh_CN",)
PLURAL_FORMS = {"zh_CN": "nplurals=1; plural=0;"}
KEYWORDS = {"_": 1, "ngettext": 2}  # function name -> number of leading message arguments
WIDTH = 79


def po_path(lang: str) -> Path:
    """The catalogue of one language."""
    return I18N / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(lang: str) -> Path:
    """The compiled catalogue of one language, next to its .po."""
    return po_path(lang).with_suffix(".mo")


# ----------------------------------------------------------------------------- catalogue entries


@dataclass
class Entry:
    """One catalogue message (a .pot or .po entry)."""

    msgid: str
    msgid_plural: str | None = None
    msgstr: list[str] = field(default_factory=lambda: [""])
    msgctxt: str | None = None
    references: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)  # translator comments ("# ...")
    extracted: list[str] = field(default_factory=list)  # "#. ..." comments
    previous: list[str] = field(default_factory=list)  # "#| ..." lines
    obsolete: bool = False

    @property
    def key(self) -> tuple[str | None, str]:
        """Identity of a message: its context and its msgid."""
        return self.msgctxt, self.msgid

    @property
    def fuzzy(self) -> bool:
        """A guess by ``update`` that a translator has not confirmed (not compiled, not counted)."""
        return "fuzzy" in self.flags

    def translated(self, nplurals: int = 1) -> bool:
        """Every form has a non-empty translation that is not fuzzy."""
        if self.fuzzy or self.obsolete:
            return False
        forms = self.msgstr if self.msgid_plural is None else self.msgstr[: max(1, nplurals)]
        if self.msgid_plural is not None and len(forms) < max(1, nplurals):
            return False
        return all(s != "" for s in forms)


# ----------------------------------------------------------------------------- extraction


class ExtractError(Exception):
    """A translation call whose message is not a string literal."""


def _literal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def extract_file(path: Path, rel: str) -> tuple[list[Entry], list[str]]:
    """Messages of one source file, in source order, and the problems found (non-literal calls)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Entry] = []
    problems: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        n = KEYWORDS.get(node.func.id)
        if n is None:
            continue
        args = [_literal(a) for a in node.args[:n]]
        if len(node.args) < n or any(a is None for a in args):
            problems.append(
                f"{rel}:{node.lineno}: {node.func.id}() needs string literals, got {ast.unparse(node)[:80]}"
            )
            continue
        ref = f"{rel}:{node.lineno}"
        if n == 1:
            found.append(Entry(str(args[0]), references=[ref]))
        else:
            found.append(Entry(str(args[0]), str(args[1]), msgstr=["", ""], references=[ref]))
    found.sort(key=lambda e: int(e.references[0].rsplit(":", 1)[1]))
    return found, problems


def extract(package: Path = PACKAGE) -> tuple[list[Entry], list[str]]:
    """All messages of the package: one entry per msgid, references in file and line order."""
    entries: dict[tuple[str | None, str], Entry] = {}
    problems: list[str] = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).as_posix()
        found, bad = extract_file(path, rel)
        problems += bad
        for e in found:
            old = entries.get(e.key)
            if old is None:
                entries[e.key] = e
            else:
                old.references += e.references
                if old.msgid_plural is None and e.msgid_plural is not None:
                    old.msgid_plural, old.msgstr = e.msgid_plural, e.msgstr
    out = list(entries.values())
    for e in out:
        if placeholders(e.msgid) or (e.msgid_plural and placeholders(e.msgid_plural)):
            e.flags = ["python-brace-format"]
    return out, problems


# ----------------------------------------------------------------------------- placeholders


def placeholders(text: str) -> list[str]:
    """The ``str.format`` fields of a message, as written (``{e}``, ``{x:.3g}``), sorted.

    A message whose braces are not a valid format string gives ``["<invalid>"]``.
    """
    try:
        fields = [
            "{" + name + ("!" + conv if conv else "") + (":" + spec if spec else "") + "}"
            for _lit, name, spec, conv in string.Formatter().parse(text)
            if name is not None
        ]
    except ValueError:
        return ["<invalid>"]
    return sorted(fields)


def placeholder_problems(entries: Iterable[Entry]) -> list[str]:
    """Translations whose placeholders differ from their English message's.

    A plural message's forms must each carry the fields of the English singular and plural together
    (with one form, as in Chinese, the one translation stands for both).
    """
    out = []
    for e in entries:
        if e.obsolete or not e.msgid:
            continue
        if e.msgid_plural is None:
            expected = placeholders(e.msgid)
        else:
            expected = sorted(set(placeholders(e.msgid)) | set(placeholders(e.msgid_plural)))
        for s in e.msgstr:
            got = placeholders(s) if e.msgid_plural is None else sorted(set(placeholders(s)))
            if s and got != expected:
                out.append(
                    f"{e.msgid[:60]!r}: placeholders {got} in the translation, {expected} in the English"
                )
    return out


# ----------------------------------------------------------------------------- .po reading


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def _unquote(s: str, where: str) -> str:
    s = s.strip()
    if len(s) < 2 or s[0] != '"' or s[-1] != '"':
        raise ValueError(f"{where}: expected a quoted string, got {s[:40]!r}")
    body = s[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            i += 1
            if i >= len(body):
                raise ValueError(f"{where}: a string ends with a backslash")
            nxt = body[i]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
            elif nxt in "01234567":
                m = re.match(r"[0-7]{1,3}", body[i:])
                assert m is not None
                out.append(chr(int(m.group(), 8)))
                i += len(m.group()) - 1
            else:
                raise ValueError(f"{where}: unknown escape \\{nxt}")
        elif ch == '"':
            raise ValueError(f"{where}: an unescaped quote inside a string")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def read_po(path: Path) -> list[Entry]:
    """Parse a .po or .pot file (UTF-8): header entry first, obsolete entries included."""
    entries: list[Entry] = []
    cur = Entry("", msgstr=[])
    section: str | None = None  # the field that continuation lines extend; None before msgctxt/msgid
    index = 0

    def finish() -> None:
        nonlocal cur, section
        if section is not None:
            if not cur.msgstr:
                cur.msgstr = [""]
            entries.append(cur)
            cur = Entry("", msgstr=[])
        section = None

    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        where = f"{path}:{lineno}"
        line = raw.strip()
        obsolete = line.startswith("#~")
        if obsolete:
            line = line[2:].strip()
            if line.startswith("|"):  # previous msgid of an obsolete fuzzy entry
                continue
        if not line:
            finish()
            continue
        if line.startswith("#") and not obsolete:
            if section is not None:
                finish()
            kind, text = line[:2], line[2:].strip()
            if kind == "#:":
                cur.references += text.split()
            elif kind == "#,":
                cur.flags += [f.strip() for f in text.split(",") if f.strip()]
            elif kind == "#.":
                cur.extracted.append(text)
            elif kind == "#|":
                cur.previous.append(text)
            else:
                cur.comments.append(line[1:].removeprefix(" "))
            continue
        m = re.match(r"(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(.*)$", line)
        if m:
            keyword, idx, rest = m.group(1), m.group(2), m.group(3)
            if keyword in ("msgctxt", "msgid") and section in ("msgid_plural", "msgstr"):
                finish()
            if keyword == "msgid" and section == "msgid":
                raise ValueError(f"{where}: two msgid in one entry")
            cur.obsolete = cur.obsolete or obsolete
            value = _unquote(rest, where)
            if keyword == "msgctxt":
                cur.msgctxt = value
            elif keyword == "msgid":
                cur.msgid = value
            elif keyword == "msgid_plural":
                cur.msgid_plural = value
            else:
                keyword = "msgstr"
                index = int(idx) if idx is not None else 0
                while len(cur.msgstr) <= index:
                    cur.msgstr.append("")
                cur.msgstr[index] = value
            section = keyword
            continue
        if line.startswith('"'):
            if section is None:
                raise ValueError(f"{where}: a string continues nothing")
            value = _unquote(line, where)
            if section == "msgctxt":
                cur.msgctxt = (cur.msgctxt or "") + value
            elif section == "msgid":
                cur.msgid += value
            elif section == "msgid_plural":
                cur.msgid_plural = (cur.msgid_plural or "") + value
            else:
                cur.msgstr[index] += value
            continue
        raise ValueError(f"{where}: cannot read {raw[:60]!r}")
    finish()
    return entries


def header_fields(entries: Sequence[Entry]) -> dict[str, str]:
    """The header entry's ``Name: value`` fields."""
    for e in entries:
        if e.msgid == "" and e.msgctxt is None and not e.obsolete:
            out = {}
            for line in e.msgstr[0].split("\n"):
                if ":" in line:
                    k, v = line.split(":", 1)
                    out[k.strip()] = v.strip()
            return out
    return {}


def nplurals_of(entries: Sequence[Entry]) -> int:
    """nplurals from the Plural-Forms header (2, gettext's default, if absent)."""
    m = re.search(r"nplurals\s*=\s*(\d+)", header_fields(entries).get("Plural-Forms", ""))
    return int(m.group(1)) if m else 2


# ----------------------------------------------------------------------------- .po writing


def _escape(s: str) -> str:
    return (
        s.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\t", "\\t")
        .replace("\r", "\\r")
        .replace("\n", "\\n")
    )


def _chunks(text: str, width: int) -> list[str]:
    """Split escaped text into pieces of at most ``width`` characters, after spaces and after ``\\n``."""
    pieces: list[str] = []
    for part in re.split(r"(?<=\\n)", text):
        if not part:
            continue
        words = re.split(r"(?<= )", part)
        line = ""
        for w in words:
            if line and len(line) + len(w) > width:
                pieces.append(line)
                line = ""
            line += w
        if line:
            pieces.append(line)
    return pieces


def _field(keyword: str, value: str, prefix: str = "") -> list[str]:
    esc = _escape(value)
    single = f'{prefix}{keyword} "{esc}"'
    inner = esc.removesuffix("\\n")
    if len(single) <= WIDTH and "\\n" not in inner:
        return [single]
    return [f'{prefix}{keyword} ""'] + [f'{prefix}"{c}"' for c in _chunks(esc, WIDTH - 2 - len(prefix))]


def format_entry(e: Entry) -> str:
    """One entry as .po text (without the blank line that separates entries)."""
    lines = [f"# {c}".rstrip() for c in e.comments]
    lines += [f"#. {c}" for c in e.extracted]
    if e.references and not e.obsolete:
        ref_line = "#:"
        for r in e.references:
            if len(ref_line) + 1 + len(r) > WIDTH and ref_line != "#:":
                lines.append(ref_line)
                ref_line = "#:"
            ref_line += " " + r
        lines.append(ref_line)
    if e.flags:
        lines.append("#, " + ", ".join(e.flags))
    lines += [f"#| {p}" for p in e.previous if not e.obsolete]
    prefix = "#~ " if e.obsolete else ""
    if e.msgctxt is not None:
        lines += _field("msgctxt", e.msgctxt, prefix)
    lines += _field("msgid", e.msgid, prefix)
    if e.msgid_plural is not None:
        lines += _field("msgid_plural", e.msgid_plural, prefix)
        for i, s in enumerate(e.msgstr):
            lines += _field(f"msgstr[{i}]", s, prefix)
    else:
        lines += _field("msgstr", e.msgstr[0] if e.msgstr else "", prefix)
    return "\n".join(lines)


def write_po(path: Path, entries: Sequence[Entry]) -> None:
    """Write a catalogue (UTF-8, ``\\n`` line ends), replacing the file only when complete."""
    text = "\n\n".join(format_entry(e) for e in entries) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    os.replace(tmp, path)


def _header(lang: str | None) -> Entry:
    fields = [
        ("Project-Id-Version", "dpdesk"),
        ("Report-Msgid-Bugs-To", ""),
        ("Language", lang or ""),
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/plain; charset=UTF-8"),
        ("Content-Transfer-Encoding", "8bit"),
    ]
    if lang:
        fields.append(("Plural-Forms", PLURAL_FORMS[lang]))
    e = Entry("", msgstr=["".join(f"{k}: {v}\n" for k, v in fields)])
    e.comments = ["Translations of dpdesk." if lang is None else f"{lang} translation of dpdesk."]
    if lang is None:
        e.comments.append("Generated by build_scripts/i18n.py extract; do not edit.")
    return e


# ----------------------------------------------------------------------------- update


def merge(
    pot: Sequence[Entry], old: Sequence[Entry], lang: str, *, keep_obsolete: bool = True
) -> list[Entry]:
    """The new .po: the .pot's messages in its order with the old translations, then the obsolete ones.

    A new message close to a retired translated one (difflib ratio >= 0.8) gets that translation
    marked fuzzy, with the old English as ``#| msgid``; fuzzy translations are not compiled.
    """
    header = next(
        (e for e in old if e.msgid == "" and e.msgctxt is None and not e.obsolete), None
    ) or _header(lang)
    nplurals = nplurals_of([header])
    by_key = {e.key: e for e in old if e.msgid}
    wanted = {p.key for p in pot if p.msgid}
    retired = {e.msgid: e for k, e in by_key.items() if k not in wanted and any(e.msgstr)}
    out = [header]
    for p in pot:
        if not p.msgid:
            continue
        e = Entry(p.msgid, p.msgid_plural, msgctxt=p.msgctxt, references=list(p.references))
        e.flags = [f for f in p.flags if f != "fuzzy"]
        e.extracted = list(p.extracted)
        prev = by_key.get(p.key)
        close = difflib.get_close_matches(p.msgid, list(retired), n=1, cutoff=0.8) if prev is None else []
        if prev is not None:
            e.msgstr, e.comments = list(prev.msgstr), list(prev.comments)
            if prev.fuzzy:
                e.flags.insert(0, "fuzzy")
                e.previous = list(prev.previous)
        elif close:
            e.msgstr = list(retired[close[0]].msgstr)
            e.flags.insert(0, "fuzzy")
            e.previous = [f'msgid "{_escape(close[0])}"']
        if e.msgid_plural is not None:
            e.msgstr = (e.msgstr + [""] * nplurals)[:nplurals]
        elif len(e.msgstr) != 1:
            e.msgstr = [e.msgstr[0] if e.msgstr else ""]
        out.append(e)
    if keep_obsolete:
        for e in retired.values():
            e.obsolete = True
            e.references, e.previous = [], []
            e.flags = [f for f in e.flags if f != "fuzzy"]
            out.append(e)
    return out


# ----------------------------------------------------------------------------- .mo


def mo_bytes(entries: Sequence[Entry]) -> bytes:
    """The GNU .mo image of a catalogue: translated, non-fuzzy messages and the header, UTF-8.

    Layout (little endian): magic 0x950412de, revision 0, N, offset of the original-strings table,
    offset of the translations table, hash table size 0 and offset; then both tables of (length,
    offset) pairs, then the NUL-terminated strings. Keys are sorted by their bytes, as gettext's
    binary search requires.
    """
    nplurals = nplurals_of(entries)
    pairs: dict[bytes, bytes] = {}
    for e in entries:
        if e.obsolete or e.fuzzy:
            continue
        is_header = e.msgid == "" and e.msgctxt is None
        if not is_header and not e.translated(nplurals):
            continue
        key = e.msgid.encode("utf-8")
        if e.msgid_plural is not None:
            key += b"\0" + e.msgid_plural.encode("utf-8")
            value = b"\0".join(s.encode("utf-8") for s in e.msgstr[:nplurals])
        else:
            value = e.msgstr[0].encode("utf-8")
        if e.msgctxt is not None:
            key = e.msgctxt.encode("utf-8") + b"\x04" + key
        pairs[key] = value
    keys = sorted(pairs)
    ids = b""
    strs = b""
    offsets: list[tuple[int, int, int, int]] = []
    for k in keys:
        offsets.append((len(ids), len(k), len(strs), len(pairs[k])))
        ids += k + b"\0"
        strs += pairs[k] + b"\0"
    n = len(keys)
    keystart = 7 * 4 + 16 * n
    valuestart = keystart + len(ids)
    koffsets: list[int] = []
    voffsets: list[int] = []
    for o1, l1, o2, l2 in offsets:
        koffsets += [l1, o1 + keystart]
        voffsets += [l2, o2 + valuestart]
    out = struct.pack("<7I", 0x950412DE, 0, n, 7 * 4, 7 * 4 + n * 8, 0, 0)
    out += struct.pack(f"<{2 * n}I", *koffsets)
    out += struct.pack(f"<{2 * n}I", *voffsets)
    return out + ids + strs


def write_bytes(path: Path, data: bytes) -> None:
    """Replace a file atomically."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- commands


def cmd_extract() -> int:
    """Write the .pot; report translation calls whose messages are not literals."""
    entries, problems = extract()
    for p in problems:
        print(f"warning: {p}", file=sys.stderr)
    write_po(POT, [_header(None), *entries])
    print(f"{POT.relative_to(ROOT)}: {len(entries)} messages")
    return 1 if problems else 0


def cmd_update(drop_obsolete: bool) -> int:
    """Extract, then merge the .pot into each language's .po."""
    status = cmd_extract()
    pot = read_po(POT)
    for lang in LANGUAGES:
        path = po_path(lang)
        old = read_po(path) if path.exists() else []
        new = merge(pot, old, lang, keep_obsolete=not drop_obsolete)
        write_po(path, new)
        live = [e for e in new[1:] if not e.obsolete]
        nplurals = nplurals_of(new)
        todo = sum(1 for e in live if not e.translated(nplurals))
        fuzzy = sum(1 for e in live if e.fuzzy)
        obsolete = sum(1 for e in new if e.obsolete)
        print(
            f"{path.relative_to(ROOT)}: {len(live)} messages, {todo} to translate ({fuzzy} fuzzy), "
            f"{obsolete} obsolete"
        )
    return status


def cmd_compile() -> int:
    """Write each language's .mo next to its .po."""
    for lang in LANGUAGES:
        entries = read_po(po_path(lang))
        data = mo_bytes(entries)
        write_bytes(mo_path(lang), data)
        n = struct.unpack("<I", data[8:12])[0]
        print(f"{mo_path(lang).relative_to(ROOT)}: {n - 1} translations")
    return 0


def cmd_check() -> int:
    """Exit 1 if a message of the code lacks a translation, a placeholder differs, or an .mo is stale."""
    errors: list[str] = []
    code, problems = extract()
    errors += problems
    for lang in LANGUAGES:
        path = po_path(lang)
        if not path.exists():
            errors.append(f"{path.relative_to(ROOT)} is missing (run: python build_scripts/i18n.py update)")
            continue
        entries = read_po(path)
        nplurals = nplurals_of(entries)
        by_key = {e.key: e for e in entries if not e.obsolete}
        for c in code:
            e = by_key.get(c.key)
            where = c.references[0]
            if e is None:
                errors.append(f"{lang}: {where}: not in the catalogue (run update): {c.msgid[:70]!r}")
            elif e.msgid_plural != c.msgid_plural:
                errors.append(f"{lang}: {where}: the plural form changed (run update): {c.msgid[:70]!r}")
            elif not e.translated(nplurals):
                state = "fuzzy" if e.fuzzy else "untranslated"
                errors.append(f"{lang}: {where}: {state}: {c.msgid[:70]!r}")
        errors += [f"{lang}: {p}" for p in placeholder_problems(entries)]
        mo = mo_path(lang)
        if not mo.exists():
            errors.append(f"{mo.relative_to(ROOT)} is missing (run: python build_scripts/i18n.py compile)")
        elif mo.read_bytes() != mo_bytes(entries):
            errors.append(f"{mo.relative_to(ROOT)} is stale: it differs from what compile makes of the .po")
        unused = [e for e in by_key.values() if e.msgid and e.key not in {c.key for c in code}]
        for e in unused:
            print(
                f"note: {lang}: translated but no longer in the code (update marks it obsolete): {e.msgid[:60]!r}"
            )
    if POT.exists() and {e.key for e in read_po(POT) if e.msgid} != {c.key for c in code}:
        print(f"note: {POT.relative_to(ROOT)} is out of date (run update)")
    for err in errors:
        print(f"error: {err}", file=sys.stderr)
    if errors:
        print(f"i18n check failed: {len(errors)} problem(s)", file=sys.stderr)
        return 1
    print(f"i18n check passed: {len(code)} messages, translated in {', '.join(LANGUAGES)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand."""
    ap = argparse.ArgumentParser(prog="i18n.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("extract", help="write resources/i18n/dpdesk.pot from the code")
    up = sub.add_parser("update", help="extract, then merge the new messages into each .po")
    up.add_argument("--drop-obsolete", action="store_true", help="remove messages no longer in the code")
    sub.add_parser("compile", help="write each .mo next to its .po")
    sub.add_parser("check", help="exit 1 if a message lacks a translation or an .mo is stale")
    args = ap.parse_args(argv)
    if args.command == "extract":
        return cmd_extract()
    if args.command == "update":
        return cmd_update(args.drop_obsolete)
    if args.command == "compile":
        return cmd_compile()
    return cmd_check()


if __name__ == "__main__":
    sys.exit(main())
