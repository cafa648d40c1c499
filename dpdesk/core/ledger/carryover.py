"""What an acknowledgement may carry over from a broken ledger: what still verifies, and what the rest cost.

An edited plan is no more trustworthy than an edited cost, so nothing of a broken ledger is carried over as
written unless it still verifies. :func:`assess` reads the broken file line by line:

- a line is *sound* when it reads as the entry it claims to be (JSON, the dataset's name, a known type,
  finite non-negative costs) and its content matches its own hash;
- each line takes a sequence number (its own, when it is sound and later than the line before; else the next
  one), and the numbers that no line takes, up to the last line or to the *recorded head* (the sequence number
  and hash dpdesk recorded for the dataset's ledger elsewhere, when the caller has it), are a *gap*;
- an entry is *confirmed* when it is reached walking back from an anchor along the hash links (each entry's
  hash is the ``prev`` of the entry after it): the recorded head for the entries up to it, and the last line,
  when it is sound, for the entries after the head (the trust a chain that verifies gets: its last entry). A
  bad link ends the walk: every entry before it is unconfirmed too, because a line whose content does not
  match its hash proves nothing about the entry before it (its ``prev`` may have been edited to fit an edited
  entry before it). A ledger rolled back behind its recorded head (a backup restored) keeps the entries it
  has on the same trust; the entries missing up to the head are a gap.

Every unconfirmed entry and every gap blocks the carry-over until the privacy officer states its cost
(:class:`StatedCost`). dpdesk offers, for each, the largest of the cost its line records (raised by any
confirmed correction of it), the cost recomputed from the plan it records with today's code, the cost
recomputed from the trace it records (each mechanism's recorded cost and what its noise scale and sensitivity
imply), the cost its recorded totals and charge give, and the cost recorded for it in any exported copy of the
ledger the officer passes in (:meth:`Unconfirmed.offered`). An entry that may have charged the budget (a spend,
an acknowledgement, a correction, a simulation, an unreadable line, a gap) is never offered 0: when every source
gives 0, or there is none, its cost cannot be recovered and the officer states it (dpdesk suggests the
dataset's whole budget, :attr:`CostsNeeded.conservative`).
The settings come only from the last confirmed settings entry; when none is confirmed the officer states them
(a plan file). Non-finite, negative and non-number costs are refused wherever they come from: a stated one
with a message, a recorded one by leaving it out of the offer (never a crash).
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpdesk.core.common import jsonin
from dpdesk.core.common.errors import LedgerError, UsageError
from dpdesk.core.ledger.entries import (
    ENTRY_TYPES,
    GENESIS,
    AcknowledgeEntry,
    CorrectionEntry,
    Entry,
    SpendEntry,
    _usable,
    entry_hash,
    loads_entries,
    salvaged,
    settings_in_force,
)
from dpdesk.i18n import _


@dataclass(frozen=True)
class Cost:
    """A cost as the ledger books it: epsilon, delta and the zCDP rho, each a finite number >= 0 (delta <= 1)."""

    epsilon: float
    delta: float
    rho: float

    def __post_init__(self) -> None:
        for name in ("epsilon", "delta", "rho"):
            x = getattr(self, name)
            if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x) or x < 0:
                raise ValueError(f"{name} must be a finite number >= 0")
        if self.delta > 1:
            raise ValueError("delta must be at most 1")

    def to_dict(self, name: str) -> dict[str, Any]:
        """As one query's cost in a ledger entry."""
        return {
            "name": name,
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "rho": float(self.rho),
        }


def _sum(costs: Sequence[Mapping[str, Any]]) -> Cost:
    """The total of a list of recorded query costs (ValueError, TypeError or KeyError when one is not a cost)."""
    parts = [
        Cost(*(c[k] for k in ("epsilon", "delta", "rho"))) if isinstance(c, Mapping) else _not_a_cost()
        for c in costs
    ]
    return Cost(
        math.fsum(p.epsilon for p in parts),
        min(1.0, math.fsum(p.delta for p in parts)),
        math.fsum(p.rho for p in parts),
    )


def _not_a_cost() -> Cost:
    raise TypeError("not a cost")


@dataclass(frozen=True)
class Offer:
    """One source's figure for an unconfirmed entry: ``recorded`` (its line), ``correction`` (a confirmed
    correction of its release), ``recomputed`` (its plan, with today's code), ``trace`` (its recorded trace),
    ``totals`` (its recorded totals and charge) or ``exported`` (a copy)."""

    source: str
    cost: Cost


@dataclass(frozen=True)
class Unconfirmed:
    """Ledger entries ``first``..``last`` (one entry unless a gap) whose cost the officer must state.

    ``missing``: no line holds them (a gap); else ``claimed`` is the type its line claims, when it reads as JSON.
    """

    first: int
    last: int
    missing: bool
    claimed: str | None
    offers: tuple[Offer, ...]

    @property
    def label(self) -> str:
        """How the officer names it: ``7``, or ``5-9`` for a gap of several entries."""
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"

    @property
    def may_charge(self) -> bool:
        """Whether what these entries were may have charged the budget: a gap, an unreadable line, or a line
        that claims a type that charges (a settings entry, say, charges nothing)."""
        return self.missing or self.claimed not in _FREE

    def offered(self) -> Cost | None:
        """The largest of the offers, component by component. None when there is none, and when every offer
        is 0 for entries that may have charged the budget (:attr:`may_charge`): their cost cannot be recovered,
        and 0 is never offered for it."""
        if not self.offers:
            return None
        best = Cost(
            max(o.cost.epsilon for o in self.offers),
            max(o.cost.delta for o in self.offers),
            max(o.cost.rho for o in self.offers),
        )
        if self.may_charge and best == Cost(0.0, 0.0, 0.0):
            return None
        return best


#: The entry types that never charge the budget (the others do, or may: a spend, an acknowledgement, a correction,
#: a simulation).
_FREE = frozenset(ENTRY_TYPES) - {"spend", "acknowledge", "correction", "simulate"}


@dataclass(frozen=True)
class StatedCost:
    """The officer's statement of what an unconfirmed entry (or a gap, by its label) cost."""

    entries: str
    cost: Cost

    def to_dict(self) -> dict[str, Any]:
        """As the JSON file of stated costs holds it."""
        return {
            "entries": self.entries,
            "epsilon": self.cost.epsilon,
            "delta": self.cost.delta,
            "rho": self.cost.rho,
        }


@dataclass(frozen=True)
class Assessment:
    """A broken ledger as :func:`assess` reads it."""

    problem: str
    #: the lines that verify, typed (:func:`dpdesk.core.ledger.entries.salvaged`)
    confirmed: tuple[Entry, ...]
    unconfirmed: tuple[Unconfirmed, ...]
    #: the settings of the last confirmed settings entry (None when no settings entry is confirmed)
    settings: dict[str, Any] | None


class CostsNeeded(LedgerError):
    """The carry-over is blocked: the officer must state the cost of ``missing`` (and the settings, when
    ``settings_needed``). Nothing was written."""

    def __init__(
        self,
        assessment: Assessment,
        missing: Sequence[Unconfirmed],
        *,
        settings_needed: bool,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.assessment = assessment
        self.missing = tuple(missing)
        self.settings_needed = settings_needed
        #: the dataset's whole budget under the settings in force (None when they are not known yet): the
        #: conservative cost to state for an entry whose cost cannot be recovered
        self.conservative: Cost | None = whole_budget(settings) if settings is not None else None
        parts = []
        if self.missing:
            parts.append(
                _(
                    "the cost of ledger entries {list} cannot be verified: state each (--cost SEQ=EPS[,DELTA,RHO])"
                ).format(list=", ".join(u.label for u in self.missing))
            )
        if settings_needed:
            parts.append(
                _(
                    "no settings entry of the broken ledger verifies: state the dataset's settings (--settings PLAN)"
                )
            )
        super().__init__(_("{problems}; nothing was written").format(problems="; ".join(parts)))


# ----------------------------------------------------------------------------- stating costs

_LABEL = re.compile(r"([1-9][0-9]{0,11})(?:-([1-9][0-9]{0,11}))?")


def _number(value: Any, what: str, where: str) -> float:
    """A finite number >= 0 (not a bool, not text), or a :class:`UsageError` naming it."""
    try:
        x = float(value) if isinstance(value, str) else value
        ok = not isinstance(x, bool) and isinstance(x, int | float) and math.isfinite(x) and x >= 0
    except (ValueError, OverflowError):
        ok = False
    if not ok:
        raise UsageError(
            _("stated cost {where}: {what} must be a finite number of at least 0, not {value}").format(
                where=where, what=what, value=json.dumps(value)[:40] if not isinstance(value, str) else value
            )
        )
    return float(x)


def stated_cost(entries: Any, epsilon: Any, delta: Any = 0.0, rho: Any = None) -> StatedCost:
    """A stated cost, checked: ``entries`` a label (``7`` or ``5-9``), the numbers finite and >= 0, delta <= 1.

    Without ``rho``: epsilon^2 / 2 for a pure epsilon cost (epsilon-DP implies (epsilon^2/2)-zCDP, Bun & Steinke
    2016, Prop. 1.4); a cost with a delta has no zCDP bound of its own, so its rho must be stated.
    """
    label = str(entries).strip() if isinstance(entries, str | int) and not isinstance(entries, bool) else ""
    m = _LABEL.fullmatch(label)
    if m is None or (m.group(2) is not None and int(m.group(2)) <= int(m.group(1))):
        raise UsageError(
            _(
                "stated cost: {label} is not a ledger entry number (SEQ) or a range of them (FIRST-LAST)"
            ).format(label=json.dumps(entries)[:40])
        )
    eps = _number(epsilon, "epsilon", label)
    dlt = _number(delta, "delta", label)
    if dlt > 1:
        raise UsageError(_("stated cost {where}: delta must be at most 1").format(where=label))
    if rho is None:
        if dlt > 0:
            raise UsageError(
                _(
                    "stated cost {where}: a cost with a delta needs its zCDP rho too (SEQ=EPS,DELTA,RHO): "
                    "(epsilon, delta) alone does not bound rho"
                ).format(where=label)
            )
        r = eps * eps / 2.0
    else:
        r = _number(rho, "rho", label)
    return StatedCost(label, Cost(eps, dlt, r))


def parse_stated_cost(text: str) -> StatedCost:
    """``SEQ=EPS[,DELTA[,RHO]]`` (SEQ may be a range ``FIRST-LAST``, for a gap), as the command line takes it."""
    label, sep, numbers = text.partition("=")
    parts = [p.strip() for p in numbers.split(",")] if sep else []
    if not sep or not 1 <= len(parts) <= 3 or not all(parts):
        raise UsageError(
            _("stated cost {text}: write SEQ=EPS, SEQ=EPS,DELTA,RHO or FIRST-LAST=EPS").format(text=text)
        )
    return stated_cost(label, *parts)


def stated_costs_from_json(text: str | bytes) -> list[StatedCost]:
    """The stated costs of a JSON file: ``{"costs": [{"entries": "7", "epsilon": 0.3, "delta": 0, "rho":
    0.045}, ...]}`` (or the list alone; ``delta`` and ``rho`` optional as in :func:`stated_cost`)."""
    try:
        data = loads_entries(text, jsonin.PLAN)
    except ValueError:
        raise UsageError(_("the file of stated costs is not valid JSON (numbers finite)")) from None
    items = data.get("costs") if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(c, dict) for c in items):
        raise UsageError(
            _('the file of stated costs must hold a list "costs" of objects with "entries" and "epsilon"')
        )
    out = []
    for c in items:
        unknown = set(c) - {"entries", "epsilon", "delta", "rho"}
        if unknown or "entries" not in c or "epsilon" not in c:
            raise UsageError(
                _("a stated cost needs entries and epsilon (delta and rho optional), not {keys}").format(
                    keys=", ".join(sorted(c))
                )
            )
        out.append(stated_cost(c["entries"], c["epsilon"], c.get("delta", 0.0), c.get("rho")))
    return out


def exported_entries(path: Path) -> list[dict[str, Any]]:
    """The entries of an exported copy of a ledger: a file written by ``dpdesk ledger export`` (JSON lines), a
    package's ``ledger.json``, or a package folder. Unreadable lines are skipped (a copy only adds offers)."""
    source = path / "ledger.json" if path.is_dir() else path
    try:
        raw = source.read_bytes()
    except OSError as exc:
        raise UsageError(
            _("cannot read the exported copy {path}: {err}").format(path=source, err=exc.strerror or exc)
        ) from None
    try:
        whole = loads_entries(raw, jsonin.EXPORT)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("entries"), list):
        return [e for e in whole["entries"] if isinstance(e, dict)]
    out = []
    for line in raw.split(b"\n"):
        try:
            e = loads_entries(line)
        except ValueError:
            continue
        if isinstance(e, dict):
            out.append(e)
    return out


# ----------------------------------------------------------------------------- reading a broken ledger


@dataclass
class _Line:
    slot: int
    entry: dict[str, Any] | None
    sound: bool


def _is_sound(e: dict[str, Any], expected: str | None) -> bool:
    seq = e.get("seq")
    try:
        return (
            isinstance(seq, int)
            and not isinstance(seq, bool)
            and seq >= 1
            and isinstance(e.get("hash"), str)
            and isinstance(e.get("prev"), str)
            and e.get("dataset") == expected
            and e.get("type") in ENTRY_TYPES
            and entry_hash(e) == e["hash"]
            and _usable(e)
        )
    except (TypeError, ValueError, OverflowError, RecursionError):
        return False


def _lines(raw: bytes, expected: str | None) -> tuple[list[_Line], list[tuple[int, int]]]:
    """Every line with its sequence number, and the gaps between them."""
    parts = raw.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    out: list[_Line] = []
    gaps: list[tuple[int, int]] = []
    expect = 1
    for part in parts:
        strict = True
        try:
            e = loads_entries(part)
        except ValueError:
            strict = False
            try:  # read as written (NaN and all), only to offer a cost from its plan and name its type
                e = json.loads(part.decode("utf-8", errors="replace"))
            except (ValueError, RecursionError):
                e = None
        entry = e if isinstance(e, dict) else None
        sound = strict and entry is not None and _is_sound(entry, expected)
        if entry is not None and sound and entry["seq"] >= expect:
            if entry["seq"] > expect:
                gaps.append((expect, entry["seq"] - 1))
            slot = int(entry["seq"])
        else:
            slot, sound = expect, False
        out.append(_Line(slot, entry, sound))
        expect = slot + 1
    return out, gaps


def _walk(start: _Line, by_slot: Mapping[int, _Line], floor: int) -> set[int]:
    """The slots confirmed walking back from ``start`` (itself confirmed) along hash links, down to ``floor``."""
    done: set[int] = set()
    cur = start
    while True:
        assert cur.entry is not None
        if cur.slot == 1 and cur.entry["prev"] != GENESIS:
            return done
        done.add(cur.slot)
        if cur.slot <= floor or cur.slot == 1:
            return done
        before = by_slot.get(cur.slot - 1)
        if (
            before is None
            or not before.sound
            or before.entry is None
            or before.entry["hash"] != cur.entry["prev"]
        ):
            return done
        cur = before


def _recorded(e: Mapping[str, Any], settings: Mapping[str, Any] | None) -> Cost | None:
    """What a line records as its cost (None when its costs are not costs)."""
    from dpdesk.core.ledger.recost import _whole_budget

    t = e.get("type")
    try:
        if t == "spend":
            return _sum(e["costs"])
        if t == "acknowledge":
            return _sum([c for r in e.get("carried") or [] for c in r["costs"]])
        if t == "correction":
            return _sum([c for r in e["releases"] for c in r["costs"]])
        if t == "simulate":  # runs of a plan on the data, uncharged: the whole budget, as recost books it
            (whole,) = _whole_budget(dict(settings) if settings else None, "simulate")
            return Cost(whole.epsilon, whole.delta, whole.rho)
        if t in ENTRY_TYPES:
            return Cost(0.0, 0.0, 0.0)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return None
    return None


def _recomputed(e: Mapping[str, Any]) -> Cost | None:
    """What the plan a line records costs with today's code (None when there is no plan that parses)."""
    if e.get("type") != "spend" or not isinstance(e.get("plan"), dict):
        return None
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.ledger.budget import plan_costs
    from dpdesk.core.plan.reader import parse_plan

    try:
        return _sum([c.to_dict() for c in plan_costs(design_plan(parse_plan(e["plan"])))])
    except Exception:  # noqa: BLE001 - an edited plan may hold anything; it only adds an offer
        return None


def _amount(x: Any) -> float:
    """A recorded number as a lower bound: itself when a finite number >= 0, else 0 (an edited value)."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return 0.0
    y = float(x)
    return y if math.isfinite(y) and y >= 0 else 0.0


def _noise_cost(c: Mapping[str, Any]) -> tuple[float, float]:
    """(epsilon, rho) that a recorded mechanism's noise scale and sensitivity imply (0 where they do not read):
    Laplace b = Delta / epsilon, exponential Gumbel scale 2 Du / epsilon, Gaussian rho = Delta^2 / (2 sigma^2) and
    its epsilon at the recorded delta (Balle & Wang 2018), as :mod:`dpdesk.core.dp.queries` calibrates them."""
    from dpdesk.core.dp.queries_base import DISCRETE_MARGIN
    from dpdesk.core.ledger.recost import gaussian_epsilon

    scale, sens, kind = _amount(c.get("scale")), _amount(c.get("sensitivity_used")), c.get("mechanism")
    if scale <= 0 or sens <= 0:
        return 0.0, 0.0
    try:
        if kind == "laplace":
            eps = sens / scale
            return eps, eps * eps / 2.0
        if kind == "exponential":
            eps = 2.0 * sens / scale
            return eps, eps * eps / 8.0
        if kind == "gaussian":
            delta = _amount(c.get("delta"))
            eps = gaussian_epsilon(scale, sens, delta * (1.0 - DISCRETE_MARGIN)) if 0 < delta < 1 else 0.0
            return eps if math.isfinite(eps) else 0.0, sens * sens / (2.0 * scale * scale)
    except (ArithmeticError, ValueError):
        pass
    return 0.0, 0.0


def _from_trace(e: Mapping[str, Any]) -> Cost | None:
    """What the trace a line records costs (None when it holds none): per query, the largest of its recorded
    cost, its mechanisms' recorded costs and what their noise implies (:func:`_noise_cost`). A lower bound: a
    figure that does not read (edited) counts 0."""
    trace = e.get("trace")
    if not isinstance(trace, list):
        return None
    eps: list[float] = []
    delta: list[float] = []
    rho: list[float] = []
    for q in trace:
        if not isinstance(q, Mapping):
            continue
        comps = q.get("components")
        parts = [c for c in comps if isinstance(c, Mapping)] if isinstance(comps, list) else []
        noise = [_noise_cost(c) for c in parts]
        eps.append(
            max(
                _amount(q.get("epsilon")),
                math.fsum(_amount(c.get("epsilon")) for c in parts),
                math.fsum(n[0] for n in noise),
            )
        )
        delta.append(max(_amount(q.get("delta")), math.fsum(_amount(c.get("delta")) for c in parts)))
        rho.append(
            max(
                _amount(q.get("rho")),
                math.fsum(_amount(c.get("rho")) for c in parts),
                math.fsum(n[1] for n in noise),
            )
        )
    return _cost_or_none(math.fsum(eps), math.fsum(delta), math.fsum(rho))


def _from_totals(e: Mapping[str, Any]) -> Cost | None:
    """What a line's recorded totals and charge give its release (None when it holds neither): the sequential
    total's epsilon and delta (and the charge's, when charged sequentially), the zCDP total's rho (without one,
    epsilon^2 / 2 for a pure epsilon cost, as :func:`stated_cost` takes it)."""
    totals, charged = e.get("totals"), e.get("charged")
    if not isinstance(totals, Mapping) and not isinstance(charged, Mapping):
        return None
    figures: list[Mapping[str, Any]] = []
    if isinstance(totals, Mapping) and isinstance(totals.get("sequential"), Mapping):
        figures.append(totals["sequential"])
    if isinstance(charged, Mapping) and charged.get("method") == "sequential":
        figures.append(charged)
    eps = max((_amount(f.get("epsilon")) for f in figures), default=0.0)
    delta = max((_amount(f.get("delta")) for f in figures), default=0.0)
    zcdp = totals.get("zcdp") if isinstance(totals, Mapping) else None
    rho = _amount(zcdp.get("rho")) if isinstance(zcdp, Mapping) else 0.0
    if rho == 0.0 and delta == 0.0:
        rho = eps * eps / 2.0
    return _cost_or_none(eps, delta, rho)


def _cost_or_none(eps: float, delta: float, rho: float) -> Cost | None:
    try:
        return Cost(eps, min(1.0, delta), rho)
    except ValueError:  # an overflow to inf
        return None


def whole_budget(settings: Mapping[str, Any] | None) -> Cost | None:
    """A cost that takes the whole budget of these settings under every accounting method (None when they hold
    no budget that reads): the conservative cost of an entry whose cost cannot be recovered."""
    from dpdesk.core.ledger.recost import _whole_budget

    try:
        (whole,) = _whole_budget(dict(settings) if settings is not None else None, "whole budget")
        return Cost(whole.epsilon, whole.delta, whole.rho)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return None


def assess(
    raw: bytes,
    expected: str | None,
    problem: str,
    *,
    head: tuple[int, str] | None = None,
    exported: Sequence[Mapping[str, Any]] = (),
) -> Assessment:
    """Read a broken ledger's bytes (see the module docstring): its confirmed entries, what needs a stated cost,
    the settings in force.

    ``expected`` is the dataset's name in its entries; ``head`` the recorded head (sequence number, hash), when
    the caller has one; ``exported`` the entries of exported copies of the ledger the officer passes in.
    """
    lines, gaps = _lines(raw, expected)
    last_slot = lines[-1].slot if lines else 0
    by_slot = {ln.slot: ln for ln in lines}
    confirmed: set[int] = set()
    floor = 0
    if head is not None and head[0] > last_slot:
        gaps.append((last_slot + 1, head[0]))
    elif head is not None:
        at = by_slot.get(head[0])
        if at is not None and at.sound and at.entry is not None and at.entry["hash"] == head[1]:
            confirmed |= _walk(at, by_slot, 0)
        floor = head[0]  # below the head, only the head confirms
    if lines and lines[-1].sound and lines[-1].slot > floor:  # the last line anchors only when it is sound
        confirmed |= _walk(lines[-1], by_slot, floor + 1)
    kept = [salvaged(ln.entry) for ln in lines if ln.slot in confirmed and ln.entry is not None]
    settings = settings_in_force(kept)
    corrections: dict[str, list[Cost]] = {}
    for k in kept:
        if isinstance(k, CorrectionEntry):
            for r in k.releases:
                c = _recorded({"type": "spend", "costs": r.get("costs")}, None)
                if c is not None:
                    corrections.setdefault(str(r.get("release_id")), []).append(c)
    by_seq: dict[int, list[Mapping[str, Any]]] = {}
    for x in exported:
        if isinstance(x, Mapping) and x.get("dataset") == expected and isinstance(x.get("seq"), int):
            by_seq.setdefault(int(x["seq"]), []).append(x)
    items: list[Unconfirmed] = []
    for ln in lines:
        if ln.slot in confirmed:
            continue
        offers: list[Offer] = []
        e = ln.entry
        if e is not None:
            rec = _recorded(e, settings)
            if rec is not None:
                offers.append(Offer("recorded", rec))
            offers += [Offer("correction", c) for c in corrections.get(str(e.get("release_id")), [])]
            again = _recomputed(e)
            if again is not None:
                offers.append(Offer("recomputed", again))
            traced = _from_trace(e)
            if traced is not None:
                offers.append(Offer("trace", traced))
            totals = _from_totals(e)
            if totals is not None:
                offers.append(Offer("totals", totals))
        for x in by_seq.get(ln.slot, []):
            got = _recorded(x, settings)
            if got is not None:
                offers.append(Offer("exported", got))
        claimed = e.get("type") if e is not None and isinstance(e.get("type"), str) else None
        items.append(Unconfirmed(ln.slot, ln.slot, False, claimed, tuple(offers)))
    for first, last in gaps:
        found = [
            c for s, xs in by_seq.items() if first <= s <= last for x in xs if (c := _recorded(x, settings))
        ]
        offers = [Offer("exported", _sum([c.to_dict("") for c in found]))] if found else []
        items.append(Unconfirmed(first, last, True, None, tuple(offers)))
    items.sort(key=lambda u: u.first)
    return Assessment(problem, tuple(kept), tuple(items), settings)


def carry_over(
    assessment: Assessment, stated: Sequence[StatedCost], settings: Mapping[str, Any] | None
) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """The releases to carry over, the settings in force and the record of the stated costs.

    Raises :class:`CostsNeeded` when an unconfirmed entry has no stated cost or no settings entry is confirmed
    and ``settings`` (the officer's) is not given; :class:`UsageError` for a cost stated for an entry that
    verifies (or twice), or settings stated while a settings entry verifies.
    """

    wanted = {u.label: u for u in assessment.unconfirmed}
    given: dict[str, StatedCost] = {}
    for s in stated:
        if s.entries not in wanted:
            raise UsageError(
                _(
                    "a cost was stated for ledger entry {label}, which needs none (it verifies, or does not exist)"
                ).format(label=s.entries)
            )
        if s.entries in given:
            raise UsageError(_("the cost of ledger entry {label} was stated twice").format(label=s.entries))
        given[s.entries] = s
    if assessment.settings is not None and settings is not None:
        raise UsageError(
            _(
                "a settings entry of the broken ledger verifies: its settings are kept (change them afterwards with "
                "dpdesk ledger change-settings)"
            )
        )
    missing = [u for u in assessment.unconfirmed if u.label not in given]
    in_force = assessment.settings if assessment.settings is not None else settings
    if missing or in_force is None:
        raise CostsNeeded(assessment, missing, settings_needed=in_force is None, settings=in_force)
    confirmed = list(assessment.confirmed)
    plain = [
        {
            "costs": e.fields["costs"],
            "delta_prime": e.get("delta_prime"),
            "release_id": e.get("release_id"),
            "seq": e.seq,
        }
        for e in confirmed
        if isinstance(e, SpendEntry)
    ]
    plain += [r for e in confirmed if isinstance(e, AcknowledgeEntry) for r in e.get("carried", [])]
    carried = _carried_at_effective_cost(confirmed, plain)
    unit = in_force.get("privacy_unit")
    record = []
    for u in assessment.unconfirmed:
        s = given[u.label]
        offered = u.offered()
        note = {
            "entries": u.label,
            "missing": u.missing,
            "claimed": u.claimed,
            "offered": None if offered is None else offered.to_dict("offered"),
            "stated": s.cost.to_dict("stated"),
        }
        record.append(note)
        if s.cost == Cost(0.0, 0.0, 0.0):
            continue  # recorded in the note; no release to count
        carried.append(
            {
                "costs": [s.cost.to_dict(_stated_name(u))],
                "delta_prime": None,
                "release_id": f"stated-{u.label}-{secrets.token_hex(8)}",
                "seq": u.first,
                "plan": None,
                "trace": None,
                "unit": unit,
            }
        )
    return carried, dict(in_force), record


def _stated_name(u: Unconfirmed) -> str:
    kind = "missing" if u.missing else (u.claimed or "unreadable")
    return f"ledger entry {u.label} ({kind}), cost stated by the privacy officer"


def _carried_at_effective_cost(readable: list[Entry], plain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The releases of a broken ledger at what they cost now (re-costed, corrected, simulations included),
    with their plan and trace so that later changes can re-cost them. Lines that cannot be read as what they
    claim are left out first; if the rest still cannot be costed, ``plain`` (the costs as written), raised by
    every readable correction, so an acknowledgement never carries less than was recorded."""
    from dpdesk.core.ledger.recost import effective

    usable = [e for e in readable if _usable(e.to_dict())]
    try:
        return [
            {
                "costs": [c.to_dict() for c in eff.costs],
                "delta_prime": eff.delta_prime,
                "release_id": eff.release_id,
                "seq": eff.seq,
                "plan": eff.plan,
                "trace": eff.trace,
                "unit": eff.unit,
            }
            for eff in effective(usable)
        ]
    except Exception:  # noqa: BLE001 - a damaged ledger may hold anything; fall back to the costs as written
        raised = {
            str(r.get("release_id")): r["costs"]
            for e in usable
            if isinstance(e, CorrectionEntry)
            for r in e.releases
        }
        return [{**c, "costs": raised.get(str(c.get("release_id")), c["costs"])} for c in plain]
