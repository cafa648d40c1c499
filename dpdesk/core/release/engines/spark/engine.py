"""The Spark engine (:class:`SparkEngine`): a table read and aggregated by Spark, for one release.

It implements :class:`~dpdesk.core.release.engines.base.AggregationEngine`: the data check's counts, every query's
state (one pass, :mod:`.states`), rows bounded per person (:mod:`.bounding`) and the dataset's key. Its
:attr:`table` is a :class:`~dpdesk.core.loading.Table` without values (as a streamed table's): the row count,
the declarations and the key, what the rest of the release reads.

**The dataset's key.** A source the desktop can also read as a file (a Parquet or CSV file on a local or mounted
path) is named by the SHA-256 of its bytes, read here, so it is the dataset the other engines name and its
ledger is the same: a table's budget is not had again by changing engines. A source only the cluster reads (a
folder of files, a catalog table, a remote path) needs the content identity computed by Spark, which this slice
does not do yet: it is refused, with the fix (a file the desktop reads, or the in-memory or streaming engine).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dpdesk.core.common.errors import InputError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.dp import statistics
from dpdesk.core.loading.table import Column, ColumnIssues, LoadReport, Table, file_sha256
from dpdesk.core.release.datacheck import ColumnCheck, DataCheck
from dpdesk.core.release.engines.base import Aggregates
from dpdesk.core.release.engines.spark import columns, states
from dpdesk.core.release.engines.spark.session import SparkSource, SparkTarget, SparkUnavailable, read, start
from dpdesk.i18n import _

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark.sql import DataFrame, SparkSession

    from dpdesk.core.dp.bounding import BoundKey
    from dpdesk.core.dp.queries_base import QueryDesign
    from dpdesk.core.model.spec import Plan


class SparkEngine:
    """A table aggregated by Spark (see the module)."""

    name = "spark"

    def __init__(
        self,
        source: str,
        plan: Plan,
        designs: Sequence[QueryDesign],
        target: SparkTarget,
        *,
        encoding: str | None = None,
        delimiter: str | None = None,
        id_key: bytes | None = None,
        progress: Progress = NULL_PROGRESS,
        spark: SparkSession | None = None,
    ) -> None:
        self.plan = plan
        self.designs = tuple(designs)
        self.source = SparkSource.parse(source)
        self.id_key = id_key
        for d in self.designs:
            if d.spec.statistic not in states.STATISTICS:
                raise SparkUnavailable(
                    _(
                        "query {name}: the Spark engine does not compute a {statistic} (it needs the whole table "
                        "on one machine); run this plan without --engine spark, or leave this query out"
                    ).format(name=repr(d.spec.name), statistic=d.spec.statistic)
                )
        self._sha = self._file_key(progress)
        progress.update(0, 1, "starting Spark")
        self.spark = spark if spark is not None else start(target)
        self.target = target
        try:
            frame = read(self.spark, self.source, encoding, delimiter)
        except Exception as exc:  # noqa: BLE001 - Spark raises many kinds for a path or table it cannot read
            raise InputError(
                self.source.label, _("Spark cannot read it ({reason})").format(reason=_reason(exc))
            ) from None
        names = self._match(frame)
        self.loaded, self._counts = columns.loaded_frame(frame, plan, names)
        self._check: DataCheck | None = None
        self._n_rows: int | None = None
        self._states: list[list[list[int]]] | None = None

    def _file_key(self, progress: Progress) -> str:
        path = Path(self.source.location)
        if self.source.kind != "table" and path.is_file():
            return file_sha256(path, progress)
        raise SparkUnavailable(
            _(
                "{source}: this version of the Spark engine names a dataset by the bytes of a file this computer "
                "can read too (a Parquet or CSV file on a local or mounted path); a folder of files, a catalog "
                "table or a path only the cluster reads is not supported yet. Nothing was charged"
            ).format(source=self.source.label)
        )

    def _match(self, frame: DataFrame) -> dict[str, str]:
        """Each declared column's (and the id column's) name in the source: header names trimmed, as the loaders
        match them; a missing or repeated name is refused with the header."""
        header = list(frame.columns)
        wanted = list(self.plan.columns) + (
            [self.plan.privacy_unit.id_column] if self.plan.privacy_unit.id_column else []
        )
        out: dict[str, str] = {}
        missing = []
        for name in wanted:
            found = [h for h in header if h.strip() == name]
            if not found:
                missing.append(name)
            elif len(found) > 1:
                raise InputError(
                    self.source.label, f"the header names column {name!r} {len(found)} times", line=1
                )
            else:
                out[name] = found[0]
        if missing:
            shown = ", ".join(repr(h) for h in header[:30]) + (" …" if len(header) > 30 else "")
            raise InputError(
                self.source.label,
                _("declared column(s) {missing} not found in the header; the file has: {header}").format(
                    missing=", ".join(repr(m) for m in missing), header=shown
                ),
                line=1,
            )
        return out

    @property
    def sha256(self) -> str:
        """The dataset's key: the SHA-256 of the file's bytes (see the module)."""
        return self._sha

    def check(self) -> DataCheck:
        """The data check's counts, from one aggregation (no record numbers: no first problem named)."""
        if self._check is None:
            if self.plan.privacy_unit.id_column is None:  # every row counts: the states in the same pass
                states_, counted = self._aggregate(self.loaded, self._counts)
                self._states = states_
            else:  # the states are of the rows kept per person: a pass of their own
                _none, counted = self._aggregate(self.loaded, self._counts, designs=())
            totals = dict(zip([*self._counts, "rows"], counted, strict=True))
            self._n_rows = totals["rows"]
            cols, bounds = [], {}
            for i, (name, spec) in enumerate(self.plan.columns.items()):
                missing, undeclared, unparsable, clamped = columns.column_issue(spec, i, totals)
                cols.append(ColumnCheck(name, spec.type, missing, undeclared, unparsable, clamped))
                if spec.bounds is not None and spec.type != "category":
                    bounds[name] = spec.bounds
            self._check = DataCheck(self._n_rows, tuple(cols), bounds)
        return self._check

    @property
    def table(self) -> Table:
        """The table as the release reads it: its declarations, row count and key, no values."""
        check = self.check()
        report = LoadReport(encoding="", delimiter="")
        for c in check.columns:
            report.issues[c.name] = ColumnIssues(c.missing, c.unparsable, c.undeclared, None, 0)
        cols = {name: Column(spec, np.empty(0)) for name, spec in self.plan.columns.items()}
        return Table(self.source.label, self._sha, check.rows, cols, report=report)

    def aggregate(self, key: BoundKey | None, progress: Progress) -> Aggregates:
        """Every query's state from one pass (rows bounded per person first, with an id column)."""
        frame = self.loaded
        unit = self.plan.privacy_unit
        if unit.id_column is not None:
            if key is None:
                raise ValueError("bounding rows per person needs the release's bounding key")
            from dpdesk.core.release.engines.spark import bounding

            frame = bounding.keep_smallest(
                frame, self.plan.columns, unit.max_rows_per_person, key, self.id_key
            )
        progress.update(0, 1, "computing")
        got = self._states if frame is self.loaded and self._states is not None else self._aggregate(frame)[0]
        # the bytes named before Spark read them are still the file's: a file swapped while Spark read it would
        # have its statistics charged to another table's ledger (the race a one-read engine does not have)
        if file_sha256(Path(self.source.location), progress) != self._sha:
            raise InputError(
                self.source.label,
                _(
                    "the file changed while Spark read it; nothing was charged. Release it again once it is not being written"
                ),
            )
        progress.update(1, 1, "computing")
        exacts = tuple(
            statistics.get(d.spec.statistic).from_partial(d, s)
            for d, s in zip(self.designs, got, strict=True)
        )
        return Aggregates(tuple(got), exacts)

    def _aggregate(
        self, frame: DataFrame, flags: Sequence[str] = (), designs: Sequence[QueryDesign] | None = None
    ) -> tuple[list[list[list[int]]], list[int]]:
        try:
            return states.aggregate(frame, self.designs if designs is None else designs, self.plan, flags)
        except OverflowError:
            raise InputError(
                self.source.label, _("a sum does not fit in 38 digits; narrow the bounds or split the table")
            ) from None

    def close(self) -> None:
        """Nothing held between releases but the session, which the process keeps (a local one stops with it)."""


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0][:300] if text else type(exc).__name__).replace("\n", " ")
