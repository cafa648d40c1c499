"""Review: check a release package or an exported ledger, read-only, on any machine.

A package must hold exactly its four files (anything else, raw data say, is named), and its ``ledger.json``
exactly its fields (``dataset``, ``head``, ``entries``) and entries: the settings entry its package entry names,
the spend and the package entry, each once, of this dataset, unedited. An exported ledger must be a whole chain
with at least one entry. On a governed dataset every approval recorded is verified again against the governance
recorded before it (:func:`dpdesk.core.ledger.governed.check_chain`). With ``against``, a later export of the same dataset's ledger must still reach the head
the package (or earlier export) was made at: a ledger rolled back behind it (cut, or restored from an older copy)
is named, unless an acknowledgement restarted the chain carrying the release over (said in a note).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpdesk.core.common import jsonin
from dpdesk.core.common.errors import DpdeskError, LedgerError
from dpdesk.core.common.jsonin import read_json
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.common.smallfile import MAX_PLAN_BYTES, NotSmallFile, hash_small_file, read_small_file
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.entries import ENTRY_TYPES, Entry, SpendEntry, entry_hash, loads_entries, salvaged
from dpdesk.core.publish.package import PACKAGE_FILES, package_files
from dpdesk.i18n import _

#: A package's ledger.json, report or synthetic table larger than this is not read (a release has at most 10^6
#: cells); its release.csv is read up to the size of the values its spend entry records.
MAX_PACKAGE_FILE = 512 * 1024**2
#: The bytes a UTF-8 byte order mark adds to release.csv (``dpdesk release --bom``).
_BOM = b"\xef\xbb\xbf"


@dataclass
class Review:
    """What a review found: problems (empty when intact), and what was reviewed."""

    kind: str  # "package" or "ledger"
    problems: list[str] = field(default_factory=list)
    #: the entries reviewed, typed (a package's: those of a known type, once every field review reads was checked)
    entries: list[Entry] = field(default_factory=list)
    #: the entries reviewed as stored: a package's JSON objects, one of an unknown type too (named a problem, and
    #: still shown, counted and compared with a later export), an export's lines
    stored: list[dict[str, Any]] = field(default_factory=list)
    plan: dict[str, Any] | None = None
    spend: SpendEntry | None = None
    files: dict[str, str] = field(default_factory=dict)  # file -> "ok" / problem
    #: the ledger's head when the package or export was made (sequence number and hash of its last entry)
    head: dict[str, Any] | None = None
    #: what was found that is not a problem (a later ledger restarted by an acknowledgement that carries this over)
    notes: list[str] = field(default_factory=list)
    #: the later ledger export reviewed against, if any
    against: str | None = None
    #: how many of ``problems`` are the reviewed package's or export's own, when it was reviewed ``against`` a
    #: later export (the rest are the comparison's: the later ledger is behind it, replaced, or broken)
    own_problems: int | None = None

    @property
    def intact(self) -> bool:
        """True when nothing was found wrong."""
        return not self.problems

    @property
    def intact_itself(self) -> bool:
        """True when the package or export itself is intact (whatever the comparison with ``against`` found)."""
        return (len(self.problems) if self.own_problems is None else self.own_problems) == 0

    @property
    def proves(self) -> str:
        """What an intact review proves, and what it cannot prove alone ("" when it is not intact): a package or
        export forged to be consistent (values changed, every hash inside it recomputed) reviews as intact on its
        own; only a later export of the dataset's ledger that reaches its head shows it is the one recorded."""
        if not self.intact:
            return ""
        if self.against is not None:
            return _(
                "The later export {against} reaches its ledger head: it is the one recorded in that ledger (as far "
                "as that export is the dataset's own, from its curator)."
            ).format(against=self.against)
        what = _("The package") if self.kind == "package" else _("The exported ledger")
        return _(
            "{what} is consistent with itself; that alone cannot prove it is the one recorded (whoever forged it "
            "could recompute every hash inside it): check it against a later export of the dataset's ledger, "
            "dpdesk review PATH --against LATER_EXPORT."
        ).format(what=what)


def review(path: str | Path, against: str | Path | None = None, progress: Progress = NULL_PROGRESS) -> Review:
    """Review a release package folder, or an exported ledger file (.jsonl); with ``against``, also check that the
    later ledger export ``against`` still reaches the head it was made at. ``progress``: the package's files as
    they are hashed (a cancel stops the review; it changes nothing)."""
    p = Path(path)
    if not p.is_dir() and not p.is_file():
        raise DpdeskError(_("{path}: no such release package or ledger file").format(path=p))
    try:
        return _review(p, against, progress)
    except (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError) as exc:
        # a malformed file in a shape the checks do not name: a review failure, never a traceback
        out = Review("package" if p.is_dir() else "ledger")
        out.problems.append(
            _("{path} is malformed ({kind}): it cannot be checked").format(path=p, kind=type(exc).__name__)
        )
        return out


def _review(p: Path, against: str | Path | None, progress: Progress) -> Review:
    if p.is_dir():
        out = review_package(p, progress)
    else:
        progress.update(0, 0, "reading")
        out = review_ledger_file(p)
    if against is not None:
        later = Path(against)
        if not later.is_file():
            raise DpdeskError(_("{path}: no such exported ledger").format(path=later))
        progress.update(0, 0, "reading")
        review_against(out, later)
    return out


def _typed(entries: list[Any]) -> list[Entry]:
    """A package's entries (JSON objects whose fields review reads were checked, :func:`malformed_entry`), typed:
    those of a known type (another type is named a problem by the package's checks)."""
    return [salvaged(e) for e in entries if isinstance(e, dict) and e.get("type") in ENTRY_TYPES]


def review_ledger_file(path: Path) -> Review:
    """Verify the hash chain of an exported ledger (its dataset is read from its first entry)."""
    out = Review("ledger")
    try:
        first = path.read_bytes().split(b"\n", 1)[0]
        dataset = loads_entries(first)["dataset"] if first.strip() else ""
    except (OSError, ValueError, KeyError, TypeError):
        out.problems.append(_("{path}: not a dpdesk ledger").format(path=path))
        return out
    try:
        out.entries = Ledger(dataset, path).verify()
    except LedgerError as exc:
        out.problems.append(str(exc))
        return out
    out.stored = [e.to_dict() for e in out.entries]
    if not out.entries:
        out.problems.append(
            _("{path}: the exported ledger is empty (a dataset's ledger has at least one entry)").format(
                path=path
            )
        )
    else:
        out.head = {"seq": out.entries[-1].seq, "hash": out.entries[-1].hash}
        from dpdesk.core.ledger.governed import check_chain

        problems, notes = check_chain(out.entries)
        out.problems.extend(problems)
        out.notes.extend(notes)
        from dpdesk.core.ledger.checkpoint import check_checkpoint

        bad = check_checkpoint(out.entries)  # what later commands read instead of the entries before it
        if bad is not None:
            out.problems.append(
                _(
                    "entry {seq}: the checkpoint does not hold what the entries before it add up to (it was edited "
                    "or forged)"
                ).format(seq=bad)
            )
    return out


#: The fields review reads from a package's entries, and the JSON types they must have (a forger can give any
#: field any type and recompute the entry's hash, which is unkeyed): a field of another type is a problem named,
#: never a crash.
_STR, _INT, _NUM, _DICT = (str,), (int,), (int, float), (dict,)
_ENTRY_FIELDS: dict[str, tuple[type, ...]] = {"seq": _INT, "hash": _STR, "type": _STR, "dataset": _STR}
_OPTIONAL_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "": {"time": _STR, "prev": _STR},
    "spend": {"charged": _DICT, "totals": _DICT, "plan_hash": _STR, "plan": _DICT, "method": _STR},
    "spend.charged": {"epsilon": _NUM, "delta": _NUM, "rho": _NUM},
    "package": {"files": _DICT, "spend_hash": _STR, "settings_hash": _STR, "governance_hash": _STR},
}


def _json_type(value: Any) -> str:
    """A value's JSON type in words."""
    if isinstance(value, dict):
        return _("an object")
    if isinstance(value, list):
        return _("a list")
    if isinstance(value, str):
        return _("a string")
    if isinstance(value, bool):
        return _("true or false")
    if value is None:
        return _("null")
    return _("a number")


def _wrong(value: Any, want: tuple[type, ...]) -> bool:
    return isinstance(value, bool) or not isinstance(value, want)


def malformed_entry(e: Any) -> list[str]:
    """What is wrongly typed in one of a package's ledger entries (empty when every field review reads has its
    type); a missing required field is named too."""
    if not isinstance(e, dict):
        return [_("ledger.json: an entry is {kind}, not an object").format(kind=_json_type(e))]
    n = e.get("seq") if isinstance(e.get("seq"), int) and not isinstance(e.get("seq"), bool) else "?"
    found: list[str] = []

    def check(
        where: dict[str, Any], fields: dict[str, tuple[type, ...]], *, required: bool, prefix: str
    ) -> None:
        for name, want in fields.items():
            if name not in where:
                if required:
                    found.append(
                        _("ledger.json: entry {n} lacks its {field} field").format(n=n, field=prefix + name)
                    )
                continue
            value = where[name]
            if value is None and not required:
                continue
            if _wrong(value, want):
                found.append(
                    _("ledger.json: entry {n} has {kind} as its {field} field, which is malformed").format(
                        n=n, kind=_json_type(value), field=prefix + name
                    )
                )

    check(e, _ENTRY_FIELDS, required=True, prefix="")
    check(e, _OPTIONAL_FIELDS[""], required=False, prefix="")
    kind = e.get("type")
    if kind in ("spend", "package"):
        check(e, _OPTIONAL_FIELDS[str(kind)], required=False, prefix="")
    if kind == "spend" and isinstance(e.get("charged"), dict):
        check(e["charged"], _OPTIONAL_FIELDS["spend.charged"], required=False, prefix="charged.")
    if kind == "spend" and isinstance(e.get("totals"), dict):
        for method, t in e["totals"].items():
            if t is None:
                continue
            if not isinstance(t, dict):
                found.append(
                    _("ledger.json: entry {n} has {kind} as its {field} field, which is malformed").format(
                        n=n, kind=_json_type(t), field=f"totals.{method}"
                    )
                )
                continue
            check(t, {"epsilon": _NUM, "delta": _NUM}, required=True, prefix=f"totals.{method}.")
    if kind == "package" and isinstance(e.get("files"), dict):
        for name, digest in e["files"].items():
            if not isinstance(digest, str):
                found.append(
                    _("ledger.json: entry {n} has {kind} as its {field} field, which is malformed").format(
                        n=n, kind=_json_type(digest), field=f"files.{name}"
                    )
                )
    return found


def review_package(folder: Path, progress: Progress = NULL_PROGRESS) -> Review:
    """Check that a package's files are those its ledger entries recorded (``progress``: per file hashed); a
    package whose ledger.json is malformed (a field of the wrong type anywhere review reads) is a review failure,
    never a crash."""
    out = Review("package")
    try:
        raw = read_small_file(folder / "ledger.json", MAX_PACKAGE_FILE, nofollow=True)
        data = loads_entries(raw, jsonin.PACKAGE)
        entries = list(data["entries"])
    except NotSmallFile as exc:  # a link, a FIFO, a device, too large: refused before it is read
        _check_folder(folder, out)
        out.problems.append(
            _("ledger.json cannot be read ({why}): the package cannot be checked").format(why=exc.strerror)
        )
        return out
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
        RecursionError,
    ):  # ValueError: undecodable, invalid JSON
        out.problems.append(_("ledger.json is missing or unreadable: the package cannot be checked"))
        return out
    bad = [p for e in entries for p in malformed_entry(e)]
    if bad:
        _check_folder(folder, out)
        out.problems.extend(bad)
        out.problems.append(_("ledger.json is malformed: the package cannot be checked"))
        return out
    out.stored = [e for e in entries if isinstance(e, dict)]
    out.entries = _typed(entries)
    try:
        _check_package(folder, out, data, entries, progress)
    except (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError) as exc:
        # a shape the checks above do not name: still a review failure, never a traceback
        out.spend = None
        out.problems.append(
            _("ledger.json is malformed ({kind}): the package cannot be checked").format(
                kind=type(exc).__name__
            )
        )
    return out


def _check_package(folder: Path, out: Review, data: Any, entries: list[Any], progress: Progress) -> None:
    spend0 = next((e for e in out.entries if isinstance(e, SpendEntry)), None)
    files = package_files(spend0) if spend0 is not None else PACKAGE_FILES
    _check_folder(folder, out, files)
    for e in entries:
        if not isinstance(e, dict) or entry_hash(e) != e.get("hash"):
            out.problems.append(
                _("ledger.json: entry {n} was edited (its hash does not match)").format(
                    n=e.get("seq", "?") if isinstance(e, dict) else "?"
                )
            )
    spend = next((e for e in entries if isinstance(e, dict) and e.get("type") == "spend"), None)
    package = next((e for e in entries if isinstance(e, dict) and e.get("type") == "package"), None)
    out.spend = spend0
    if spend is None or package is None:
        out.problems.append(_("ledger.json lacks the release's spend or package entry"))
        return
    if package.get("spend_hash") != spend.get("hash"):
        out.problems.append(_("ledger.json: the package entry does not belong to this release"))
    _check_ledger_json(data, entries, spend, package, out)
    recorded = package.get("files", {})
    try:
        from dpdesk.core.dp.values import rows_to_csv
        from dpdesk.core.ledger.entries import rows_from_entry

        assert spend0 is not None  # found with ``spend``
        expected: bytes | None = rows_to_csv(rows_from_entry(spend0))
    except (ValueError, TypeError, KeyError, AttributeError, LedgerError):
        expected = None
    # every member is opened without following a link and refused unless a regular file (a FIFO would block the
    # review, /dev/zero never end), of at most the size its entry allows: release.csv the values recorded
    caps = dict.fromkeys(files, MAX_PACKAGE_FILE)
    caps["plan.json"] = MAX_PLAN_BYTES
    if expected is not None:
        caps["release.csv"] = len(expected) + len(_BOM)
    unreadable: set[str] = set()
    for done, name in enumerate(files):
        progress.update(done, len(files), "hashing")
        try:
            digest = hash_small_file(folder / name, caps[name], nofollow=True)
        except FileNotFoundError:
            out.files[name] = _("missing")
            out.problems.append(_("{name} is missing").format(name=name))
            continue
        except OSError as exc:
            out.files[name] = _("unreadable")
            out.problems.append(
                _("{name} cannot be read ({why}): it is not the file the release wrote").format(
                    name=name, why=exc.strerror or type(exc).__name__
                )
            )
            unreadable.add(name)
            continue
        if digest != recorded.get(name):
            out.files[name] = _("modified")
            out.problems.append(
                _("{name} was modified after the release (its SHA-256 differs from the recorded one)").format(
                    name=name
                )
            )
        else:
            out.files[name] = _("intact")
    try:
        if "plan.json" not in unreadable:  # else named above
            out.plan = read_json(
                read_small_file(folder / "plan.json", MAX_PLAN_BYTES, nofollow=True), jsonin.PACKAGE
            )
            from dpdesk.core.plan.reader import parse_plan

            if parse_plan(out.plan).plan_hash() != spend.get("plan_hash"):
                out.problems.append(_("plan.json is not the plan that was released (plan hash differs)"))
    except (OSError, ValueError, DpdeskError, RecursionError):  # RecursionError: nested too deeply
        out.plan = None
        out.problems.append(_("plan.json cannot be read as a plan"))
    if "release.csv" in unreadable:
        return  # named above
    try:
        if expected is None:
            raise ValueError
        raw = read_small_file(folder / "release.csv", len(expected) + len(_BOM), nofollow=True)
        if raw.removeprefix(_BOM) != expected:
            out.problems.append(_("release.csv does not hold the values recorded in the ledger"))
    except (OSError, ValueError):
        out.problems.append(_("release.csv cannot be checked against the ledger"))


def _check_folder(folder: Path, out: Review, files: tuple[str, ...] = PACKAGE_FILES) -> None:
    """Name every file or folder of a package that is not one of its files (raw data added, say)."""
    expected = {*files, "ledger.json"}
    try:
        found = sorted(p.name for p in folder.iterdir())
    except OSError:
        return
    for name in found:
        if name not in expected:
            out.problems.append(
                _(
                    "{name} is not part of the release package (a package holds only {files}): it was added"
                ).format(name=name, files=", ".join((*files, "ledger.json")))
            )


def _check_ledger_json(
    data: Any, entries: list[Any], spend: dict[str, Any], package: dict[str, Any], out: Review
) -> None:
    """ledger.json's fields and entries: exactly those the package entry vouches for, each once."""
    fields = set(data) if isinstance(data, dict) else set()
    for extra in sorted(fields - {"dataset", "head", "entries"}):
        out.problems.append(
            _("ledger.json: unexpected field {field} (it was added)").format(field=repr(extra))
        )
    if isinstance(data, dict) and data.get("dataset") != spend.get("dataset"):
        out.problems.append(
            _("ledger.json: its dataset field ({found}) is not the release's dataset ({id})").format(
                found=repr(data.get("dataset")), id=spend.get("dataset")
            )
        )
    head = {"seq": package.get("seq"), "hash": package.get("hash")}
    if isinstance(data, dict) and "head" in data:
        if data["head"] != head:
            out.problems.append(
                _(
                    "ledger.json: its head field is not the package entry's sequence number and hash (it was changed)"
                )
            )
    elif "settings_hash" in package:  # written by a version that records the head: it was removed
        out.problems.append(_("ledger.json: its head field is missing (it was removed)"))
    out.head = head
    seen: dict[Any, int] = {}
    for e in entries:
        if not isinstance(e, dict):
            continue
        key = (e.get("seq"), e.get("hash"))
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            out.problems.append(
                _("ledger.json: entry {n} appears more than once").format(n=e.get("seq", "?"))
            )
        if e.get("dataset") != spend.get("dataset"):
            out.problems.append(
                _("ledger.json: entry {n} belongs to another dataset").format(n=e.get("seq", "?"))
            )
        governs = "governance_hash" in package and e.get("hash") == package.get("governance_hash")
        if e.get("type") not in ("settings", "spend", "package") and not governs:
            out.problems.append(
                _("ledger.json: entry {n} is a {type} entry, which a package does not carry").format(
                    n=e.get("seq", "?"), type=e.get("type")
                )
            )
    if sum(1 for e in entries if isinstance(e, dict) and e.get("type") in ("spend", "package")) > 2:
        out.problems.append(_("ledger.json holds more than one spend or package entry"))
    settings = [e for e in entries if isinstance(e, dict) and e.get("type") == "settings"]
    named = package.get("settings_hash")
    if "settings_hash" in package:
        if named is not None and not any(e.get("hash") == named for e in settings):
            out.problems.append(
                _("ledger.json: the settings entry the package entry names is missing (it was removed)")
            )
        if any(e.get("hash") != named for e in settings):
            out.problems.append(_("ledger.json: a settings entry the package entry does not name was added"))
    elif not settings:  # a package from before the package entry named its settings
        out.problems.append(_("ledger.json holds no settings entry (it was removed)"))
    _check_package_approvals(entries, package, out)


def _check_package_approvals(entries: list[Any], package: dict[str, Any], out: Review) -> None:
    """A governed dataset's package: the entry that set its governance is there, and every approval verifies."""
    from dpdesk.core.ledger.governed import check_chain

    named = package.get("governance_hash")
    carried = [e for e in entries if isinstance(e, dict)]
    if named is not None and not any(e.get("hash") == named for e in carried):
        out.problems.append(
            _("ledger.json: the governance entry the package entry names is missing (it was removed)")
        )
    ordered = sorted(_typed(carried), key=lambda e: e.seq)
    problems, notes = check_chain(ordered, whole=False)
    out.problems.extend(_("ledger.json: {problem}").format(problem=p) for p in problems)
    out.notes.extend(notes)


def review_against(out: Review, later_path: Path) -> None:
    """Check that the later ledger export ``later_path`` still reaches the head ``out`` was made at."""
    out.against = str(later_path)
    out.own_problems = len(out.problems)
    later = review_ledger_file(later_path)
    for p in later.problems:
        out.problems.append(_("{path}: {problem}").format(path=later_path, problem=p))
    if later.problems:
        return
    if out.head is None:
        out.problems.append(
            _("{path} cannot be compared with {later}: it records no ledger head").format(
                path=_("this package") if out.kind == "package" else _("this ledger"), later=later_path
            )
        )
        return
    mine = {e.get("dataset") for e in out.stored}
    theirs = later.entries[0].dataset
    if mine != {theirs}:
        out.problems.append(
            _("{later} is the ledger of another dataset ({id})").format(later=later_path, id=theirs)
        )
        return
    seq, digest = out.head["seq"], out.head["hash"]
    last = later.entries[-1].seq
    by_seq = {e.seq: e for e in later.entries}
    reached = isinstance(seq, int) and seq in by_seq and by_seq[seq].hash == digest
    _check_governance_against(out, later.entries, later_path, seq if reached else 0)
    if reached:
        wrong = [
            e.get("seq")
            for e in out.stored
            if (held := by_seq.get(e.get("seq", 0))) is None or held.hash != e.get("hash")
        ]
        for n in wrong:
            out.problems.append(
                _("entry {n} is not the one the later ledger {later} holds at that place").format(
                    n=n, later=later_path
                )
            )
        if not wrong:
            out.notes.append(
                _("the later ledger {later} reaches this head (entry {seq} of its {last})").format(
                    later=later_path, seq=seq, last=last
                )
            )
        return
    releases = {e.get("release_id") for e in out.entries if e.type == "spend"}
    for e in later.entries:
        if e.type != "acknowledge":
            continue
        carried = {c.get("release_id") for c in e.get("carried", []) if isinstance(c, dict)}
        if releases and releases <= carried:
            out.notes.append(
                _(
                    "the later ledger {later} was restarted by an acknowledgement (entry {n}: {reason}) that carries "
                    "these releases over; the head recorded here (entry {seq}) is in the broken ledger it kept as "
                    "evidence ({file})"
                ).format(
                    later=later_path, n=e.seq, reason=e.get("reason"), seq=seq, file=e.get("broken_file")
                )
            )
            return
    if isinstance(seq, int) and seq > last:
        out.problems.append(
            _(
                "the later ledger {later} ends at entry {last}, but entry {seq} (hash {hash}) was recorded when this "
                "was made: the ledger was rolled back behind it (truncated, or restored from an older copy)"
            ).format(later=later_path, last=last, seq=seq, hash=str(digest)[:16])
        )
    else:
        out.problems.append(
            _(
                "the later ledger {later} does not hold entry {seq} (hash {hash}) recorded when this was made: the "
                "ledger was replaced by another one"
            ).format(later=later_path, seq=seq, hash=str(digest)[:16])
        )


def review_summary(r: Review) -> dict[str, Any]:
    """A JSON-ready summary for the command line."""
    return {
        "kind": r.kind,
        "intact": r.intact,
        "problems": r.problems,
        "files": r.files,
        "entries": len(r.stored),
        "head": r.head,
        "notes": r.notes,
        "against": r.against,
        "intact_itself": r.intact_itself,
        "proves": r.proves,
    }


def _check_governance_against(out: Review, later: list[Entry], later_path: Path, since: int) -> None:
    """The governance of the later export must follow from the one in force here: its key changes only by a
    rotation its recovery key signed, a governed dataset never becomes ungoverned, and an acknowledgement that
    restarted the later ledger holds an approval signed by the key in force here (``since``: the entries up to it
    are the ones reviewed here)."""
    from dpdesk.core.governance.officer import GovernanceError, GovernanceRecord, LedgerHead
    from dpdesk.core.ledger.governed import governance_of, verify_recorded

    try:
        g = governance_of(sorted(out.entries, key=lambda e: e.seq))
    except GovernanceError:
        return  # named by the review of this package or export
    trusted = g.record if g is not None else None
    if trusted is None:
        return
    for i, e in enumerate(later):
        n = e.get("seq")
        if not isinstance(n, int) or n <= since:
            continue
        kind = e.get("type")
        if kind == "acknowledge":
            raw = e.get("governance")
            if raw is None:
                out.problems.append(
                    _(
                        "{later}: entry {n} (an acknowledgement) leaves the dataset ungoverned, but it was governed by "
                        "{name} (key {fp}) when this was made"
                    ).format(
                        later=later_path, n=n, name=trusted.officer.shown_name, fp=trusted.officer.fingerprint
                    )
                )
                return
            new = GovernanceRecord.from_payload(raw)
            if new.officer.key != trusted.officer.key:
                out.problems.append(
                    _(
                        "{later}: entry {n} (an acknowledgement) places the dataset under key {new}, but it was "
                        "governed by {name} (key {fp}) when this was made, and no rotation signed by its recovery key "
                        "is recorded"
                    ).format(
                        later=later_path,
                        n=n,
                        new=new.officer.fingerprint,
                        name=trusted.officer.shown_name,
                        fp=trusted.officer.fingerprint,
                    )
                )
                return
            problems: list[str] = []
            if verify_recorded(e, trusted, None, set(), "acknowledge", problems) is None:
                out.problems.extend(
                    _("{later}: {problem} (the key that governed it when this was made)").format(
                        later=later_path, problem=p
                    )
                    for p in problems
                )
                return
            trusted = new
        elif kind == "govern":
            new = GovernanceRecord.from_payload(e.get("governance"))
            if new.officer.key != trusted.officer.key:
                prev = later[i - 1] if i > 0 else None
                head = LedgerHead(prev.seq, prev.hash) if prev is not None else None
                problems = []
                verified = verify_recorded(e, trusted, head, set(), "rotate_key", problems)
                if verified is None or trusted.after(verified) != new:
                    out.problems.append(
                        _(
                            "{later}: entry {n} places the dataset under key {new} without a rotation signed by the "
                            "recovery key of {name} (key {fp}), who governed it when this was made"
                        ).format(
                            later=later_path,
                            n=n,
                            new=new.officer.fingerprint,
                            name=trusted.officer.shown_name,
                            fp=trusted.officer.fingerprint,
                        )
                    )
                    return
            trusted = new
