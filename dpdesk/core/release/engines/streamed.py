"""The streaming engine: a table larger than memory, read once batch by batch into a
:class:`~dpdesk.core.release.streaming.StreamedAggregates` (states merged as they come; with an id column, rows
through partition files first), by :func:`~dpdesk.core.release.streaming.load_for_release`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpdesk.core.dp import statistics
from dpdesk.core.release.datacheck import DataCheck, check_data
from dpdesk.core.release.engines.base import Aggregates
from dpdesk.core.release.streaming import StreamedAggregates, close_streamed

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.core.dp.bounding import BoundKey
    from dpdesk.core.loading import Table
    from dpdesk.core.model.spec import Plan


class StreamingEngine:
    """A streamed table (see the module); implements :class:`~dpdesk.core.release.engines.base.AggregationEngine`."""

    name = "streamed"

    def __init__(self, table: Table, plan: Plan) -> None:
        if not isinstance(table.streamed, StreamedAggregates):
            raise TypeError("the streaming engine needs a table streamed for a release (load_for_release)")
        self.table = table
        self.plan = plan
        self.sink = table.streamed

    @property
    def sha256(self) -> str:
        """The SHA-256 of the file's bytes, computed in the same pass."""
        return self.table.sha256

    def check(self) -> DataCheck:
        """The data check from the loader's counts and the floats clamped, counted batch by batch."""
        return check_data(self.table, self.plan)

    def aggregate(self, key: BoundKey | None, progress: Progress) -> Aggregates:
        """The merged states (the partitions bounded and aggregated first, with an id column) and the exact
        statistics made of them; the partition files are removed, also on an error."""
        try:
            states = self.sink.finish(progress, key)
        finally:
            self.sink.close()
        exacts = tuple(
            statistics.get(d.spec.statistic).from_partial(d, s)
            for d, s in zip(self.sink.designs, states, strict=True)
        )
        return Aggregates(tuple(states), exacts)

    def close(self) -> None:
        """Remove the partition files, if any."""
        close_streamed(self.table)
