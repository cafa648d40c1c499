"""``dpdesk team import --data FILE``: a table's history in a home's own ledger brought into the team's ledger.

A curator who joins a team brings datasets with years of history in their home's own ledgers. Importing one:

1. finds the table's dataset in the home's own ledgers (by the file's bytes, then by its rows) and verifies its
   chain whole against the head the home recorded (a broken ledger is acknowledged first, exit 3);
2. finds the table in the team (by its rows, as a release would: made with the team's identity secret, so the same
   table brought by two curators is one dataset of the team), or opens a dataset for it;
3. appends an ``import`` entry to the team's dataset: every release of the home's ledger carried at what it costs
   now, the home's dataset and the head its ledger had, both totals, and the budget: the home's when the dataset is
   new to the team, else the smaller of the two (never a second budget for one table). The team's database books
   each carried release by its id, so a release carried twice is counted once;
4. records in the home's register that the dataset moved, then appends a ``moved`` entry to the home's ledger:
   nothing is charged to it any more, connected to the team or not.

The home's ledger stays locked from the first step to the last, so no release of the home slips in between. A
crash anywhere loses or doubles nothing: before the team's entry, nothing changed; after it, running the import
again finds the team's ``import`` entry for the home's head, carries nothing twice (the releases it carried are
known by their ids) and marks the home's ledger. A release made in the home after an interrupted import is carried
by the next run, which carries only what the team does not hold yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.errors import LedgerError, UsageError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.budget import HistorySpend
    from dpdesk.core.ledger.entries import Entry


@dataclass(frozen=True)
class Imported:
    """What an import did."""

    #: the home's dataset (its own ledger, now marked as moved)
    local: str
    #: the team's dataset of the table
    team: str
    #: the team's server as messages show it
    server: str
    #: the team already held the table (its releases kept; the smaller budget applies)
    joined: bool
    #: how many releases were carried now (0: the team held them all already)
    carried: int
    #: the home's ledger had been imported before: nothing was done
    already: bool
    #: what the team's dataset spent, all releases counted, under its budget
    spent: HistorySpend | None
    #: the team's dataset spent more than its budget: no release is possible until an officer acts
    overspent: bool


def own_ledger(home: Path, dataset: str) -> Ledger:
    """A dataset's ledger in the home's own files, even when the home uses a team's ledger."""
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.entries import is_dataset_id
    from dpdesk.core.ledger.filestore import FileStore

    assert is_dataset_id(dataset)
    return Ledger(dataset, FileStore(home / "ledgers").path(dataset), home=home, own_files=True)


def own_dataset(
    home: Path,
    data: Path,
    sha256: str,
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    progress: Progress = NULL_PROGRESS,
    by_content: bool = True,
) -> str | None:
    """The dataset of a data file in the home's own ledgers: by its bytes, then (``by_content``) by its rows, as
    the home itself would find it; None when the home never released it."""
    from dpdesk.core.common.errors import InputError
    from dpdesk.core.identity.recognition import identities_of, live_owner, retired_into
    from dpdesk.core.ledger.book import own_dataset_of_file

    found = own_dataset_of_file(home, sha256)
    if found is None and by_content:
        try:
            idents = identities_of(
                home, data, encoding=encoding, delimiter=delimiter, progress=progress, sha256=sha256
            )
        except InputError:
            return None
        for ident in idents:
            found = live_owner(home, ident.key)
            if found is not None:
                break
    seen: set[str] = set()
    while found is not None and found not in seen:  # a dataset merged into another: that other's ledger
        seen.add(found)
        into = retired_into(home, found)
        if into is None:
            break
        found = into
    return found


def _team_entry_for(entries: list[Entry], local: str, head: dict[str, Any]) -> Entry | None:
    """The team's ``import`` entry that brought the home's dataset ``local`` at ``head``, if any."""
    for e in reversed(entries):
        if e.type == "import" and e.get("from") == local and e.get("home_head") == head:
            return e
    return None


def _held(entries: list[Entry]) -> set[str]:
    """The release ids the team's dataset counts already (its own releases and those carried into it)."""
    held: set[str] = set()
    for e in entries:
        if e.type == "spend":
            held.add(str(e.get("release_id")))
        elif e.type in ("merge", "import", "acknowledge"):
            held.update(str(r.get("release_id")) for r in e.get("carried", []))
    return held


def _is_officer(ledger: Ledger) -> bool:
    from dpdesk.core.ledger.pgstore import describe

    team = ledger.team
    assert team is not None
    return bool(describe(team)["officer"])


def import_dataset(
    home: Path,
    data: Path,
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    progress: Progress = NULL_PROGRESS,
) -> Imported:
    """Bring the history of ``data``'s table in the home's own ledger into the team's ledger (the module's steps).

    Refused: a home not connected to a team (:class:`UsageError`), a table the home never released
    (:class:`UsageError`), a broken home ledger (:class:`LedgerError`, exit 3), a governed one by a curator (its
    officer's approvals do not follow it into the team: a privacy officer of the team imports it), and a table the
    team holds as a near-copy of another (linked or declared new first, as for a release)."""
    from dpdesk.core.common import faults
    from dpdesk.core.identity.recognition import refuse_near_copy, resolve
    from dpdesk.core.ledger import anchor
    from dpdesk.core.ledger.budget import spent_of
    from dpdesk.core.ledger.entries import IMPORT_REASON, settings_in_force
    from dpdesk.core.ledger.governed import governance_of
    from dpdesk.core.ledger.team import redacted, team_url
    from dpdesk.core.loading import file_sha256
    from dpdesk.services.ledger import _carried, _merged_settings, _totals

    url = team_url(home)
    if url is None:
        raise UsageError(
            _(
                "dpdesk team import brings a table's history into the team's ledger, and this dpdesk home is not "
                "connected to one: connect it first (dpdesk team connect URL --leave-local-ledgers), then import"
            )
        )
    server = redacted(url)
    sha = file_sha256(data, progress)
    local = own_dataset(home, data, sha, encoding=encoding, delimiter=delimiter, progress=progress)
    if local is None:
        raise UsageError(
            _(
                "{path}: this dpdesk home's own ledgers hold no release of this table, so there is nothing to "
                "import; release it through the team's ledger"
            ).format(path=data)
        )
    mine = own_ledger(home, local)
    progress.check_cancelled()
    try:
        mine.read()  # verified against the head the home recorded (again under the lock below)
    except LedgerError as exc:
        # what the message asks (an acknowledgement) is of the home's own ledger, which a home using the team's
        # ledger does not reach: say how
        raise LedgerError(
            _(
                "{problem} (this is dataset {dataset} of this dpdesk home's own ledgers: acknowledge it with the home "
                "using its own ledgers, i.e. after dpdesk team disconnect, or with DPDESK_LEDGER unset; then "
                "dpdesk team connect URL --leave-local-ledgers and run dpdesk team import again)"
            ).format(problem=str(exc).rstrip(". "), dataset=local)
        ) from None
    with mine.transaction(moving=True) as ltx:
        lentries = ltx.entries  # verified whole, against the head the home recorded
        head = {"seq": ltx.state.seq, "hash": ltx.state.hash}
        moved = ltx.state.moved_to
        if moved is not None:
            # imported before: the head to look for is the one before the moved entry
            before = lentries[:-1]
            head = {
                "seq": before[-1].seq if before else 0,
                "hash": before[-1].hash if before else ltx.state.hash,
            }
            lentries = before
        resolution = resolve(
            home, data, sha256=sha, encoding=encoding, delimiter=delimiter, progress=progress
        )
        refuse_near_copy(resolution)
        team = resolution.ledger
        assert team.team is not None
        if governance_of(lentries) is not None and not _is_officer(team):
            raise LedgerError(
                _(
                    "dataset {dataset} of this dpdesk home is governed by a privacy officer, whose approvals do not "
                    "follow it into the team's ledger: a privacy officer of the team imports it (dpdesk team import "
                    "--data FILE, connected as an officer); nothing was changed"
                ).format(dataset=local)
            )
        progress.check_cancelled()
        with team.transaction(moving=True) as ttx:
            tentries = ttx.entries
            joined = any(e.type != "import" or e.get("from") != local for e in tentries)
            carried = _carried(local, lentries, _held(tentries))  # as a merge carries them
            done = _team_entry_for(tentries, local, head)
            entry = done
            if done is None or carried:
                ours, theirs = settings_in_force(tentries), settings_in_force(lentries)
                payload: dict[str, Any] = {
                    "from": local,
                    "home_head": head,
                    "reason": IMPORT_REASON,
                    "this": _totals(str(team.dataset), tentries),
                    "other": _totals(local, lentries),
                    "carried": carried,
                }
                settings = _merged_settings(ours, theirs)
                if settings is not None and settings != ours:
                    payload["settings"] = settings
                faults.step("team import: append the import entry")
                entry = ttx.append("import", payload)
            assert entry is not None
            spent = spent_of(ttx.state)
            team_dataset = str(team.dataset)
        if moved is None:
            faults.step("team import: record the move in the register")
            try:
                anchor.record_moved(home, local, team_dataset)
            except OSError as exc:
                raise LedgerError(
                    _(
                        "the table's history is in the team's ledger, but this home's register could not record it "
                        "({err}); run dpdesk team import again"
                    ).format(err=exc.strerror or exc)
                ) from None
            faults.step("team import: append the moved entry")
            ltx.append(
                "moved",
                {
                    "to": team_dataset,
                    "team": server,
                    "team_entry": {"seq": entry.seq, "hash": entry.hash},
                    "home_head": head,
                },
            )
    overspent = spent is not None and (
        spent.spent_epsilon > spent.budget.epsilon or spent.spent.delta > spent.budget.delta
    )
    return Imported(
        local,
        team_dataset,
        server,
        joined,
        len(carried),
        done is not None and not carried and moved is not None,
        spent,
        overspent,
    )
