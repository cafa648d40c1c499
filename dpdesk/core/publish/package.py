"""Release packages: a folder a privacy officer can review on another machine.

A package holds ``release.csv``, ``report.pdf``, ``plan.json`` and ``ledger.json``. The spend entry
(written to the ledger before any value was revealed) records the plan hash and the values hash;
a ``package`` entry written after the files records their SHA-256 hashes. ``ledger.json`` carries
copies of the settings entry in force, the spend entry and the package entry (and, for a governed
dataset, the entry that set its governance, so that review verifies the officer's approvals), so that a reviewer
can check that the files are the ones recorded, and the ledger's head when the package was made
(the package entry's sequence number and hash), which every later export of the ledger must reach. This detects edits of any file; it cannot stop a
forger who holds the ledger from recomputing every hash (see docs/publishing.md).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from pathlib import Path

from dpdesk.core.common.fsio import write_atomic
from dpdesk.core.dp.values import Row, rows_to_csv
from dpdesk.core.ledger.book import Ledger
from dpdesk.core.ledger.entries import Entry, SpendEntry
from dpdesk.core.model.spec import Plan

PACKAGE_FILES = ("release.csv", "report.pdf", "plan.json")


def package_files(spend: Entry) -> tuple[str, ...]:
    """The files of a release's package: the four, and one CSV per synthetic table the spend entry records
    (named from the public query name; a name that is not a plain file name is left out)."""
    synthetic = spend.get("synthetic")
    names = [f.get("file") for f in synthetic.values()] if isinstance(synthetic, dict) else []
    safe = tuple(
        n
        for n in names
        if isinstance(n, str) and n.endswith(".csv") and n == Path(n).name and not n.startswith(".")
    )
    return (*PACKAGE_FILES, *(n for n in safe if n not in PACKAGE_FILES))


def write_synthetic_tables(
    out_dir: Path, plan: Plan, spend: SpendEntry, *, bom: bool = False
) -> dict[str, list[tuple[int, ...]]]:
    """Write each synthetic table of the release, regenerated from its spend entry (noisy marginals and seed:
    post-processing, free); called only once the spend entry is durable. Returns each table's rows per level of
    each column, or for an adaptive table per cell of each measured marginal (for the report, which then need not
    draw the table again)."""
    from dpdesk.core.dp.statistics.synthetic import SyntheticQuery, columns_csv, regenerate_columns

    counts: dict[str, list[tuple[int, ...]]] = {}
    for name, fields in (spend.get("synthetic") or {}).items():
        spec = next(q for q in plan.queries if q.name == name)
        assert isinstance(spec, SyntheticQuery)
        table = regenerate_columns(fields, spec, plan)
        write_atomic(out_dir / fields["file"], columns_csv(table.attrs, table.values, table.codes, bom=bom))
        # an adaptive table: its rows per cell of each measured marginal (the report sets them beside the released)
        adaptive = fields.get("method") == "aim"
        counts[name] = table.clique_counts(fields) if adaptive else table.level_counts()
        del table
    return counts


def file_hash(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_package(
    out_dir: Path,
    rows: Sequence[Row],
    plan: Plan,
    spend: SpendEntry,
    ledger: Ledger,
    dataset_name: str,
    *,
    bom: bool = False,
    title: str | None = None,
    before: tuple[Entry | None, Entry | None] | None = None,
) -> Entry:
    """Write the package files, record their hashes in a ledger entry, and copy the entries into ledger.json;
    ``title`` heads the report instead of the plan's title. ``before``: the settings and governance entries in
    force at the spend, when the caller has them (a release, from its transaction); else the whole chain is
    verified and they are found in it (a past release written again)."""
    from dpdesk.core.publish.report import write_release_report

    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(out_dir / "release.csv", rows_to_csv(rows, bom=bom))
    synthetic_counts = write_synthetic_tables(out_dir, plan, spend, bom=bom)
    write_atomic(
        out_dir / "plan.json",
        (json.dumps(plan.to_dict(), indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
    )
    if before is None:
        entries = ledger.verify()
        before = (_settings_before(entries, spend.seq), _governance_before(entries, spend.seq))
    settings, governance = before
    pdf = io.BytesIO()  # written like the others (write_atomic: fsynced before its rename), never half a file
    write_release_report(
        pdf,
        plan_dict=plan.to_dict(),
        rows=[r.as_list() for r in rows],
        spend=spend,
        settings_entry=settings,
        dataset_name=dataset_name,
        title=title,
        synthetic_counts=synthetic_counts,
    )
    write_atomic(out_dir / "report.pdf", pdf.getvalue())
    hashes = {name: file_hash(out_dir / name) for name in package_files(spend)}
    with ledger.transaction() as tx:
        package = tx.append(
            "package",
            {
                "release_id": spend.fields["release_id"],  # as stored (the typed property is text)
                "spend_hash": spend.hash,
                "spend_seq": spend.seq,
                "files": hashes,
                # which settings entry ledger.json carries (none: the settings came from an acknowledgement), so
                # that review names a removed one
                "settings_hash": settings.hash if settings is not None else None,
                # on a governed dataset: the entry that set its governance, which ledger.json carries too, so that
                # review can verify the approvals of the settings and the plan (and names a removed one)
                **({"governance_hash": governance.hash} if governance is not None else {}),
            },
        )
    copies = [e.to_dict() for e in (governance, settings, spend, package) if e is not None]
    # the head: the ledger's last entry when the package was made (its package entry); a later export of the
    # ledger must still reach it (dpdesk review PACKAGE --against EXPORT)
    head = {"seq": package.seq, "hash": package.hash}
    write_atomic(
        out_dir / "ledger.json",
        (
            json.dumps(
                {"dataset": spend.dataset, "head": head, "entries": copies}, indent=2, ensure_ascii=False
            )
            + "\n"
        ).encode(),
    )
    return package


def _governance_before(entries: Sequence[Entry], seq: int) -> Entry | None:
    """The entry that set the governance in force at entry ``seq`` (None: ungoverned)."""
    from dpdesk.core.ledger.governed import governance_of

    g = governance_of([e for e in entries if e.seq < seq])
    return entries[g.seq - 1] if g is not None else None


def _settings_before(entries: Sequence[Entry], seq: int) -> Entry | None:
    found = None
    for e in entries:
        if e.seq >= seq:
            break
        if e.type == "settings":
            found = e
    return found
