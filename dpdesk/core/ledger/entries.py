"""A ledger's entries: their types, their hash chain and their typed form.

A ledger (:mod:`dpdesk.core.ledger.book`) is JSON lines, each entry carrying the hash of the previous one and its own
hash over its canonical JSON. This module reads a line into a typed, immutable :class:`Entry` (one class per entry
type, with typed properties) after checking its place in the chain, and keeps the stored form beside it, so that an
entry written back (a package's copy, an export) is byte for byte what was read and its hash still verifies. JSON
is read and written here and at the edges (the ledger file, packages, exports, the command line's output); the
engine, the services and the app pass :class:`Entry` objects.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dpdesk.core.common import jsonin
from dpdesk.core.common.errors import LedgerError
from dpdesk.core.common.jsonin import JsonKind, read_json
from dpdesk.core.model.spec import canonical_json
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.dp.accounting import QueryCost, Total
    from dpdesk.core.dp.values import Row

GENESIS = "0" * 64


class EntryType(StrEnum):
    """The kinds of ledger entry (see the module docstring)."""

    SETTINGS = "settings"
    SPEND = "spend"
    SIMULATE = "simulate"
    ACKNOWLEDGE = "acknowledge"
    PACKAGE = "package"
    MIGRATE = "migrate"
    CORRECTION = "correction"
    GOVERN = "govern"
    LINK = "link"
    DECLARE_NEW = "declare_new"
    DECLARED_NEW = "declared_new"
    FORGET_IDENTITY = "forget_identity"
    CHECKPOINT = "checkpoint"
    MERGE = "merge"
    MERGED_INTO = "merged_into"
    IMPORT = "import"
    MOVED = "moved"


ENTRY_TYPES = tuple(t.value for t in EntryType)
#: The reasons dpdesk itself records, in English whatever the writer's language (a reader shows them translated:
#: :func:`dpdesk.core.publish.words.recorded_reason`); a person's reason is recorded and shown as written.
FIRST_RELEASE_REASON = "fixed at the dataset's first release"
RECOST_REASON = "past releases cost more than was booked (re-costed under today's unit of privacy and code)"
MIGRATION_REASON = (
    "older versions named a dataset by the SHA-256 of its file, a confirmation oracle for its rows; the chain was "
    "rebuilt under a random public id"
)
IMPORT_REASON = (
    "a home's own ledger of this table joined the team: each of its releases is charged here, under the smaller "
    "budget"
)
#: A dataset's public id: ``ds-`` and 128 random bits in hex.
_ID_RE = re.compile(r"ds-[0-9a-f]{32}")


def new_dataset_id() -> str:
    """A fresh public dataset id: 128 bits from the operating system's cryptographic generator."""
    return "ds-" + secrets.token_hex(16)


def is_dataset_id(text: str) -> bool:
    """Whether ``text`` has the form of a public dataset id."""
    return _ID_RE.fullmatch(text) is not None


def now() -> str:
    """The time an entry is written: UTC, to the second, ISO 8601."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def written_by() -> dict[str, str]:
    """The field each new entry carries: the version of dpdesk that wrote it (:data:`dpdesk.__version__`: the
    git tag's, or a development version that says it is one)."""
    from dpdesk import __version__

    return {"dpdesk_version": __version__}


def loads_entries(text: str | bytes, kind: JsonKind = jsonin.LEDGER_LINE) -> Any:
    """JSON as dpdesk writes it, read by the one reader of untrusted JSON (:func:`dpdesk.core.common.jsonin.read_json`,
    a ledger line unless ``kind`` says otherwise). NaN, Infinity, numbers that overflow to infinity, keys twice,
    nesting past its limit, which dpdesk never writes, are refused like any other damage (a ValueError: its
    :class:`~dpdesk.core.common.jsonin.JsonInputError`), instead of reaching the hash check, whose canonical JSON
    would fail on them."""
    return read_json(text, kind)


def entry_hash(entry: Mapping[str, Any] | Entry) -> str:
    """SHA-256 over the canonical JSON of an entry (as stored, or typed) without its ``hash`` field."""
    stored = entry.to_dict() if isinstance(entry, Entry) else entry
    body = {k: v for k, v in stored.items() if k != "hash"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def stored_hash_matches(line: bytes, digest: object) -> bool:
    """Whether ``digest`` is the SHA-256 of the line as stored without its own ``hash`` member (which occurs in it
    exactly once): the form a team's database checks (:mod:`dpdesk.core.ledger.pgschema`), which holds for every
    line dpdesk writes (its canonical JSON, the hash last but for later keys) and also for a line another client
    wrote in another JSON form, which the database accepted as it was sent. Forging either form takes the same
    work: whoever can rewrite a chain recomputes its hashes."""
    if not isinstance(digest, str) or len(digest) != 64:
        return False
    member = b',"hash":"' + digest.encode("ascii", "replace") + b'"'
    body = line[:-1] if line.endswith(b"\n") else line
    if body.count(member) != 1:
        return False
    return hashlib.sha256(body.replace(member, b"")).hexdigest() == digest


def checked_line(line: bytes, where: str, prev: str, seq: int, expected: str | None) -> Entry:
    """One line of a ledger as the typed entry ``seq`` linked to ``prev``; a :class:`LedgerError` naming ``where``
    when it is not (damaged, edited, out of order, of another dataset, of an unknown type)."""
    try:
        entry = loads_entries(line)
    except ValueError:  # undecodable bytes, invalid JSON, non-finite numbers, past a limit of the JSON reader
        raise LedgerError(_("{where}: not a valid entry (damaged or edited)").format(where=where)) from None
    if not isinstance(entry, dict) or "hash" not in entry:
        raise LedgerError(_("{where}: not a valid entry (damaged or edited)").format(where=where))
    if entry.get("prev") != prev:
        raise LedgerError(
            _("{where}: the chain is broken (an entry was removed, reordered or edited)").format(where=where)
        )
    if entry.get("seq") != seq:
        raise LedgerError(
            _("{where}: wrong sequence number (entries were removed or reordered)").format(where=where)
        )
    if entry.get("dataset") != expected:
        raise LedgerError(_("{where}: the entry belongs to another dataset").format(where=where))
    if entry.get("type") not in ENTRY_TYPES:
        raise LedgerError(
            _("{where}: unknown entry type {type}").format(where=where, type=repr(entry.get("type")))
        )
    if entry_hash(entry) != entry["hash"] and not stored_hash_matches(line, entry["hash"]):
        raise LedgerError(
            _("{where}: the entry's content does not match its hash (it was edited)").format(where=where)
        )
    if not readable(entry):
        raise LedgerError(
            _("{where}: the entry does not hold what a {type} entry holds (damaged or edited)").format(
                where=where, type=entry["type"]
            )
        )
    try:
        return parse_entry(entry)
    except ValueError:  # a sequence number written as true: equal to 1 in the checks above, still damage
        raise LedgerError(_("{where}: not a valid entry (damaged or edited)").format(where=where)) from None


def written_entry(stored: Mapping[str, Any], label: object) -> Entry:
    """The typed entry of ``stored``, a new entry about to be appended to the ledger ``label``, once it is known
    to be what a later read will see: its line (canonical JSON) is read back through :func:`checked_line` (the one
    JSON reader, its place in the chain, its hash, the fields its type needs) and gives that line again. A
    :class:`LedgerError`, before anything is written, when it does not (a payload without a field its type
    requires, a value JSON cannot hold): an entry that cannot be read back would break the ledger for every later
    command. The entry returned keeps the payload's key order (:attr:`Entry.order`)."""
    kind = str(stored.get("type"))
    try:
        line = canonical_json(dict(stored))
        back = checked_line(
            line.encode("utf-8"),
            _("the new {type} entry").format(type=kind),
            str(stored.get("prev")),
            int(stored.get("seq", 0)),
            stored.get("dataset"),
        )
        if canonical_json(back.to_dict()) != line:
            raise LedgerError(_("the new {type} entry does not read back as written").format(type=kind))
    except (LedgerError, ValueError, TypeError) as exc:
        raise LedgerError(
            _(
                "ledger {path}: an entry that could not be read back was refused, nothing was written ({why}); "
                "this is a fault in dpdesk: please report it"
            ).format(path=label, why=exc)
        ) from None
    return parse_entry(stored)


def read_chain(raw: bytes, label: str, expected: str | None) -> list[Entry]:
    """The entries of a ledger file's bytes, each checked in its place in the chain (:func:`checked_line`): a
    :class:`LedgerError` naming ``label`` and the first bad line, or a truncated last line. The chain alone: the
    register's head is checked by :meth:`dpdesk.core.ledger.book.Ledger.verify`."""
    if raw and not raw.endswith(b"\n"):
        raise LedgerError(
            _("ledger {path}: the last entry is incomplete (the file was truncated)").format(path=label)
        )
    entries: list[Entry] = []
    prev = GENESIS
    for lineno, line in enumerate(raw.split(b"\n")[:-1] if raw else [], start=1):
        where = _("ledger {path}, line {line}").format(path=label, line=lineno)
        entry = checked_line(line, where, prev, lineno, expected)
        prev = entry.hash
        entries.append(entry)
    return entries


# ----------------------------------------------------------------------------- typed entries


@dataclass(frozen=True)
class Entry:
    """One ledger entry, typed: the chain fields, and its type's own fields as stored.

    Parsed from the stored JSON by :func:`parse_entry`. The fields of an entry are kept exactly as
    they were stored (a number typed as ``1`` stays ``1``, an absent key stays absent), so that
    :meth:`to_dict` gives back the stored object, key order included, and its hash still verifies;
    the subclasses read them as typed properties. A property raises (KeyError, TypeError,
    ValueError) where the stored field is missing or not what it claims, as reading the dict did.
    """

    seq: int
    type: EntryType
    time: str
    dataset: str
    prev: str
    hash: str
    #: the fields other than the chain's, as stored (read-only)
    fields: Mapping[str, Any]
    #: the stored key order (JSON lines are written with sorted keys; fresh entries in insertion order); not
    #: compared: two entries with the same fields are equal, as their JSON objects were
    order: tuple[str, ...] = field(compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The entry as stored: ``canonical_json(entry.to_dict())`` is its line in the ledger."""
        header = {
            "seq": self.seq,
            "type": self.type.value,
            "time": self.time,
            "dataset": self.dataset,
            "prev": self.prev,
            "hash": self.hash,
        }
        return {k: header[k] if k in header else self.fields[k] for k in self.order}

    def get(self, key: str, default: Any = None) -> Any:
        """A field as stored (a chain field too: ``get("type")`` is the type's text), or ``default``."""
        if key in _HEADER:
            return self.to_dict().get(key, default)
        return self.fields.get(key, default)

    @property
    def reason(self) -> str | None:
        """Why it was written, where its type records a reason."""
        return self.fields.get("reason")


def _costs_of(raw: Any) -> tuple[QueryCost, ...]:
    from dpdesk.core.dp.accounting import QueryCost

    return tuple(QueryCost.from_dict(c) for c in raw)


def _total_of(raw: Mapping[str, Any]) -> Total:
    from dpdesk.core.dp.accounting import Total

    exact = raw.get("epsilon_exact")
    return Total(
        str(raw["method"]) if "method" in raw else "",
        float(raw["epsilon"]),
        float(raw["delta"]),
        rho=raw.get("rho"),
        epsilon_simple=raw.get("epsilon_simple"),
        epsilon_decimal=Decimal(exact) if exact is not None else None,
    )


@dataclass(frozen=True)
class SettingsEntry(Entry):
    """Budget, unit of privacy and accounting, fixed at the first release or changed by an officer."""

    @property
    def settings(self) -> dict[str, Any]:
        """The settings as stored: ``budget``, ``privacy_unit``, ``accounting``."""
        return dict(self.fields["settings"])

    @property
    def budget_epsilon(self) -> float:
        """The budget's epsilon."""
        return float(self.fields["settings"]["budget"]["epsilon"])

    @property
    def budget_delta(self) -> float:
        """The budget's delta."""
        return float(self.fields["settings"]["budget"]["delta"])

    @property
    def method(self) -> str:
        """The accounting method."""
        return str(self.fields["settings"]["accounting"]["method"])


@dataclass(frozen=True)
class SpendEntry(Entry):
    """A release: its plan, costs, totals, trace and released values."""

    @property
    def release_id(self) -> str:
        """The release's random id."""
        return str(self.fields["release_id"])

    @property
    def title(self) -> str:
        """The plan's title."""
        return str(self.fields.get("title", ""))

    @property
    def plan(self) -> Any:
        """The plan released, in the file format, as stored (a copy of the object; whatever else a damaged entry
        holds is given as it is, for :func:`dpdesk.core.plan.reader.parse_plan` to name, never made an object)."""
        raw = self.fields["plan"]
        return dict(raw) if isinstance(raw, dict) else raw

    @property
    def plan_hash(self) -> str:
        """The plan's hash."""
        return str(self.fields["plan_hash"])

    @property
    def method(self) -> str:
        """The accounting method in force at the release."""
        return str(self.fields["method"])

    @property
    def delta_prime(self) -> float | None:
        """The plan's delta' (advanced composition), if it set one."""
        return self.fields.get("delta_prime")

    @property
    def costs(self) -> tuple[QueryCost, ...]:
        """What each query cost as booked."""
        return _costs_of(self.fields["costs"])

    @property
    def query_names(self) -> tuple[str, ...]:
        """The names of the queries released."""
        return tuple(str(c["name"]) for c in self.fields["costs"])

    @property
    def charged(self) -> Total:
        """What the release was charged under the method in force."""
        return _total_of(self.fields["charged"])

    @property
    def values(self) -> list[Any]:
        """The released rows, as stored."""
        return list(self.fields["values"])


@dataclass(frozen=True)
class SimulateEntry(Entry):
    """Uncharged simulation runs on the data by an older version (charged by a correction)."""

    @property
    def runs(self) -> Any:
        """How many runs, as stored."""
        return self.fields["runs"]

    @property
    def plan_hash(self) -> str | None:
        """The hash of the plan simulated, if recorded."""
        return self.fields.get("plan_hash")


@dataclass(frozen=True)
class AcknowledgeEntry(Entry):
    """A broken ledger accepted by an officer: a new chain carrying the old one's spends and settings."""

    @property
    def problem(self) -> str:
        """What was wrong with the broken ledger."""
        return str(self.fields["problem"])

    @property
    def broken_file(self) -> str:
        """The evidence file's name."""
        return str(self.fields["broken_file"])

    @property
    def carried(self) -> list[dict[str, Any]]:
        """The releases carried over, at what they cost."""
        return list(self.fields.get("carried", []))

    @property
    def settings(self) -> dict[str, Any] | None:
        """The settings carried over, if any could be read."""
        s = self.fields.get("settings")
        return dict(s) if isinstance(s, dict) else None


@dataclass(frozen=True)
class PackageEntry(Entry):
    """The files of a release package."""

    @property
    def release_id(self) -> str:
        """The release packaged."""
        return str(self.fields["release_id"])

    @property
    def spend_seq(self) -> int:
        """The spend entry's sequence number."""
        return int(self.fields["spend_seq"])

    @property
    def spend_hash(self) -> str:
        """The spend entry's hash."""
        return str(self.fields["spend_hash"])

    @property
    def files(self) -> dict[str, Any]:
        """File name: SHA-256 (None where not kept)."""
        return dict(self.fields["files"])


@dataclass(frozen=True)
class MigrateEntry(Entry):
    """The rebuild of a ledger from before public ids."""

    @property
    def evidence_file(self) -> str:
        """The old ledger's copy."""
        return str(self.fields.get("evidence_file", "?"))

    @property
    def exposed_packages(self) -> list[dict[str, Any]]:
        """The packages that carried the data's hash."""
        return list(self.fields.get("exposed_packages") or [])


@dataclass(frozen=True)
class CorrectionEntry(Entry):
    """A charge added for releases booked too low by an earlier version, or re-costed."""

    @property
    def releases(self) -> list[dict[str, Any]]:
        """The releases corrected, with their new costs."""
        return list(self.fields["releases"])

    @property
    def added_epsilon(self) -> float:
        """The epsilon added in total."""
        return float(self.fields["added_epsilon"])


@dataclass(frozen=True)
class GovernEntry(Entry):
    """The dataset placed under a privacy officer's key (or its policy or key changed, with their approval)."""

    @property
    def governance(self) -> dict[str, Any]:
        """The governance record as stored (:class:`dpdesk.core.governance.officer.GovernanceRecord` reads it)."""
        return dict(self.fields["governance"])

    @property
    def approval(self) -> dict[str, Any] | None:
        """The approval of a change of policy or key (None for the first governance entry)."""
        a = self.fields.get("approval")
        return dict(a) if isinstance(a, dict) else None


@dataclass(frozen=True)
class LinkEntry(Entry):
    """A near-copy of the table linked to this dataset: a new local key, charged to this ledger from now on.

    It records who decided (``decided_by``), never which file, how much it overlaps, or a hash of it."""

    @property
    def decided_by(self) -> str:
        """Who decided (``curator``)."""
        return str(self.fields.get("decided_by", ""))


@dataclass(frozen=True)
class DeclareNewEntry(Entry):
    """A near-copy of this dataset's table declared a new dataset (``new_dataset``), with the reason and, when
    governed, the officer's approval."""

    @property
    def new_dataset(self) -> str:
        """The new dataset's public name."""
        return str(self.fields["new_dataset"])


@dataclass(frozen=True)
class DeclaredNewEntry(Entry):
    """The first entry of a dataset declared new although it resembles another (``resembles``)."""

    @property
    def resembles(self) -> str:
        """The public name of the dataset it resembles."""
        return str(self.fields["resembles"])


@dataclass(frozen=True)
class ForgetIdentityEntry(Entry):
    """The home's content identities were forgotten (the reason; the officer's approval when governed)."""


@dataclass(frozen=True)
class CheckpointEntry(Entry):
    """What the history before it adds up to (:mod:`dpdesk.core.ledger.checkpoint`): read instead of the entries before it
    when it is bound to the recorded head."""

    @property
    def state(self) -> dict[str, Any]:
        """The state as stored (:class:`dpdesk.core.ledger.checkpoint.State` writes it)."""
        return dict(self.fields["state"])


@dataclass(frozen=True)
class MergeEntry(Entry):
    """Another dataset of the same table (``merged``, made by an older version's race) merged into this one: its
    releases carried (``carried``, costed under this dataset's accounting from then on), both heads and totals, the
    smaller budget (``settings``), and the officers' approvals when governed."""

    @property
    def merged(self) -> str:
        """The public name of the dataset merged into this one (retired)."""
        return str(self.fields["merged"])


@dataclass(frozen=True)
class MergedIntoEntry(Entry):
    """The last entry of a dataset merged into another (``into``): nothing is charged to it any more."""

    @property
    def into(self) -> str:
        """The public name of the dataset it was merged into."""
        return str(self.fields["into"])


@dataclass(frozen=True)
class ImportEntry(Entry):
    """A home's own ledger of this table brought into a team's ledger (``dpdesk team import``): its releases carried
    (``carried``, costed under this dataset's accounting from then on), the home's dataset (``from``) and the head
    its ledger had (``home_head``), both totals, and the smaller budget (``settings``) when it changes."""

    @property
    def source(self) -> str:
        """The public name of the home's dataset imported."""
        return str(self.fields["from"])


@dataclass(frozen=True)
class MovedEntry(Entry):
    """The last entry of a home's own ledger imported into a team's (``to``: the team's dataset, ``team``: its server
    as messages show it): nothing is charged to it any more, with or without the team."""

    @property
    def to(self) -> str:
        """The team's dataset this one was imported into."""
        return str(self.fields["to"])


_ENTRY_CLASSES: dict[EntryType, type[Entry]] = {
    EntryType.SETTINGS: SettingsEntry,
    EntryType.SPEND: SpendEntry,
    EntryType.SIMULATE: SimulateEntry,
    EntryType.ACKNOWLEDGE: AcknowledgeEntry,
    EntryType.PACKAGE: PackageEntry,
    EntryType.MIGRATE: MigrateEntry,
    EntryType.CORRECTION: CorrectionEntry,
    EntryType.GOVERN: GovernEntry,
    EntryType.LINK: LinkEntry,
    EntryType.DECLARE_NEW: DeclareNewEntry,
    EntryType.DECLARED_NEW: DeclaredNewEntry,
    EntryType.FORGET_IDENTITY: ForgetIdentityEntry,
    EntryType.CHECKPOINT: CheckpointEntry,
    EntryType.MERGE: MergeEntry,
    EntryType.MERGED_INTO: MergedIntoEntry,
    EntryType.IMPORT: ImportEntry,
    EntryType.MOVED: MovedEntry,
}
_HEADER = ("seq", "type", "time", "dataset", "prev", "hash")


def parse_entry(d: Mapping[str, Any]) -> Entry:
    """The typed entry of a stored JSON object; ValueError when its chain fields are missing or mistyped."""
    seq, kind = d.get("seq"), d.get("type")
    if isinstance(seq, bool) or not isinstance(seq, int) or kind not in ENTRY_TYPES:
        raise ValueError("not a ledger entry")
    # the chain check guarantees these; the time is kept as stored
    if not all(isinstance(d.get(k), str) for k in ("dataset", "prev", "hash")) or "time" not in d:
        raise ValueError("not a ledger entry")
    t = EntryType(kind)
    return _ENTRY_CLASSES[t](
        seq=seq,
        type=t,
        time=d["time"],
        dataset=d["dataset"],
        prev=d["prev"],
        hash=d["hash"],
        fields=MappingProxyType({k: v for k, v in d.items() if k not in _HEADER}),
        order=tuple(d),
    )


def parse_entries(entries: Sequence[Mapping[str, Any]]) -> list[Entry]:
    """:func:`parse_entry` of every entry of a verified ledger."""
    return [parse_entry(e) for e in entries]


def salvaged(d: Mapping[str, Any]) -> Entry:
    """A line of a *damaged* ledger that :func:`_usable` accepts (or an entry of a package under review), typed for
    costing what it recorded (an acknowledgement carries it over): its fields as stored, chain fields too (a
    missing one reads as empty), so that :meth:`Entry.get` and :meth:`Entry.to_dict` answer what the line holds
    (the chain is broken anyway; nothing is verified or written from this object)."""
    t = EntryType(d["type"])
    return _ENTRY_CLASSES[t](
        seq=int(d["seq"]),
        type=t,
        time=d.get("time", ""),
        dataset=d.get("dataset", ""),
        prev=d.get("prev", ""),
        hash=d.get("hash", ""),
        fields=MappingProxyType({k: v for k, v in d.items() if k not in _HEADER}),
        order=tuple(d),
    )


def settings_in_force(entries: Sequence[Entry]) -> dict[str, Any] | None:
    """The budget, unit of privacy and accounting fixed for a dataset (last settings or acknowledgement)."""
    for e in reversed(entries):
        if e.type in (
            EntryType.SETTINGS,
            EntryType.ACKNOWLEDGE,
            EntryType.MERGE,
            EntryType.IMPORT,
        ) and isinstance(e.get("settings"), dict):
            return dict(e.fields["settings"])
    return None


def _finite_number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, int | float) and math.isfinite(x)


def readable(e: Mapping[str, Any]) -> bool:
    """Whether a line that verifies holds what the commands read of its type: its time as text, the costs it records
    as finite numbers (:func:`_usable`), a spend's charge and accounting method, a settings entry's budget and
    method, a simulation's runs (never negative). Every version of dpdesk wrote them; a line without them was forged
    with its hashes recomputed, and is named as damaged (exit 3) instead of failing a command later."""
    if not isinstance(e.get("time"), str) or not _usable(dict(e)):
        return False
    try:
        if e["type"] == "spend":
            c = e["charged"]
            return (
                isinstance(c, dict)
                and _finite_number(c.get("epsilon"))
                and _finite_number(c.get("delta"))
                and isinstance(e.get("method"), str)
            )
        if e["type"] == "simulate":  # its runs are charged by a correction: never fewer than none
            runs = e.get("runs")
            return runs is None or (_finite_number(runs) and runs >= 0)
        if e["type"] == "settings":
            b, a = e["settings"].get("budget"), e["settings"].get("accounting")
            return (
                isinstance(b, dict)
                and _finite_number(b.get("epsilon"))
                and _finite_number(b.get("delta"))
                and isinstance(a, dict)
                and isinstance(a.get("method"), str)
            )
    except (KeyError, TypeError, AttributeError):
        return False
    return True


def _usable(e: dict[str, Any]) -> bool:
    """Whether a line of a damaged ledger can be read as the entry it claims to be (costs finite numbers)."""
    from dpdesk.core.dp.accounting import QueryCost

    def costs_ok(raw: Any) -> bool:
        cs = [QueryCost.from_dict(c) for c in raw]
        return all(math.isfinite(x) and x >= 0 for c in cs for x in (c.epsilon, c.delta, c.rho))

    try:
        if not isinstance(e.get("seq"), int) or e.get("type") not in ENTRY_TYPES:
            return False
        if e["type"] == "spend":
            return costs_ok(e["costs"])
        if e["type"] == "correction":
            return all(costs_ok(r["costs"]) for r in e["releases"])
        if e["type"] in ("acknowledge", "merge", "import"):
            return all(costs_ok(r["costs"]) for r in e.get("carried", []))
        if e["type"] == "settings":
            return isinstance(e["settings"], dict) and isinstance(e["settings"].get("privacy_unit"), dict)
    except (KeyError, TypeError, ValueError, AttributeError):
        return False
    return True


def rows_from_entry(entry: Entry) -> list[Row]:
    """The rows of a past release, read back from its ledger entry (costs nothing)."""
    from dpdesk.core.dp.values import Row, rows_hash

    if not isinstance(entry, SpendEntry):
        raise LedgerError(_("ledger entry {seq} is not a release").format(seq=entry.seq))
    rows = [Row(*[str(c) for c in v]) for v in entry.values]
    if rows_hash(rows) != entry.fields["values_hash"]:
        raise LedgerError(
            _("ledger entry {seq}: the stored values do not match their hash").format(seq=entry.seq)
        )
    return rows
