"""The synthetic tables of a recorded release, for the app's Results tab: their first rows, their CSV and their
one-way marginals beside the released noisy ones.

Reads only the spend entry (its plan, and for each synthetic query the released noisy marginals and the seed):
the table is regenerated from them, post-processing at no cost, never from the private table. The CSV's bytes
are those the release package holds (:func:`dpdesk.core.publish.package.write_synthetic_tables`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.ledger.entries import SpendEntry

#: At most this many rows of each table are kept for the table view.
HEAD_ROWS = 200


@dataclass(frozen=True)
class Marginal:
    """One column's one-way marginal: the released noisy counts (the ledger's) and the synthetic table's own."""

    column: str
    labels: tuple[str, ...]
    released: tuple[int, ...]
    synthetic: tuple[int, ...]


@dataclass(frozen=True)
class SyntheticTable:
    """One synthetic query's table as the package holds it."""

    query: str
    file: str
    rows: int
    header: tuple[str, ...]
    #: the first rows (at most :data:`HEAD_ROWS`), as the CSV writes them
    head: tuple[tuple[str, ...], ...]
    #: the CSV's bytes, the same as the package's file
    csv: bytes
    marginals: tuple[Marginal, ...]


def synthetic_tables(entry: SpendEntry, progress: Progress = NULL_PROGRESS) -> tuple[SyntheticTable, ...]:
    """The synthetic tables recorded in the spend ``entry`` (none when it holds none), regenerated from the
    released marginals and seeds it keeps (free: post-processing)."""
    fields = entry.get("synthetic")
    if not isinstance(fields, dict) or not fields:
        return ()
    from dpdesk.core.dp.statistics.synthetic import SyntheticQuery, one_way_released, regenerate_columns
    from dpdesk.core.plan.reader import parse_plan

    plan = parse_plan(entry.plan)
    out = []
    for i, (name, f) in enumerate(fields.items()):
        progress.update(i, len(fields), "computing")
        spec = next(q for q in plan.queries if q.name == name)
        assert isinstance(spec, SyntheticQuery)
        table = regenerate_columns(f, spec, plan)
        data = table.csv()
        reader = csv.reader(io.StringIO(data.decode("utf-8")))
        header = tuple(next(reader))
        head: list[tuple[str, ...]] = []
        for row in reader:
            if len(head) >= HEAD_ROWS:
                break
            head.append(tuple(row))
        released = one_way_released(f)
        marginals = tuple(
            Marginal(a.name, a.labels(), tuple(int(v) for v in released[j]), own)
            for j, (a, own) in enumerate(zip(table.attrs, table.level_counts(), strict=True))
        )
        out.append(SyntheticTable(name, str(f["file"]), table.n_rows, header, tuple(head), data, marginals))
    progress.update(len(fields), len(fields), "computing")
    return tuple(out)
