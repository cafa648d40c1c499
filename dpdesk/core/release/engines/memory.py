"""The in-memory engine: a table loaded whole (:func:`~dpdesk.core.loading.load_table`), its states computed with
numpy over its columns, in chunks (:func:`~dpdesk.core.dp.aggregates.state_statistic`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dpdesk.core.dp import statistics
from dpdesk.core.dp.aggregates import bound_rows_per_person, exact_statistic, state_statistic
from dpdesk.core.release.datacheck import DataCheck, check_data
from dpdesk.core.release.engines.base import Aggregates, State

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.core.dp.aggregates_base import Exact
    from dpdesk.core.dp.bounding import BoundKey
    from dpdesk.core.dp.queries_base import QueryDesign
    from dpdesk.core.loading import Table
    from dpdesk.core.model.spec import Plan


class InMemoryEngine:
    """A table in memory (see the module); implements :class:`~dpdesk.core.release.engines.base.AggregationEngine`."""

    name = "memory"

    def __init__(
        self, table: Table, plan: Plan, designs: tuple[QueryDesign, ...] | list[QueryDesign]
    ) -> None:
        self.table = table
        self.plan = plan
        self.designs = tuple(designs)

    @property
    def sha256(self) -> str:
        """The SHA-256 of the file's bytes, as the loader computed it."""
        return self.table.sha256

    def check(self) -> DataCheck:
        """The data check of the loaded table (:func:`~dpdesk.core.release.datacheck.check_data`)."""
        return check_data(self.table, self.plan)

    def keep(self, key: BoundKey | None) -> np.ndarray:
        """The rows kept: all, or at most k per person under ``key`` (none without an id)."""
        unit = self.plan.privacy_unit
        if unit.id_column is None:
            return np.ones(self.table.n_rows, dtype=bool)
        if key is None:
            raise ValueError("bounding rows per person needs the release's bounding key")
        return bound_rows_per_person(self.table, unit.max_rows_per_person, key)

    def aggregate(self, key: BoundKey | None, progress: Progress) -> Aggregates:
        """Every query's state on the kept rows, and its exact statistic made of it (a composite statistic's
        computed from the whole table instead)."""
        keep = self.keep(key)
        states: list[State | None] = []
        exacts: list[Exact] = []
        for i, d in enumerate(self.designs):
            progress.update(i, len(self.designs), "computing")
            stat = statistics.get(d.spec.statistic)
            if stat.composite:
                states.append(None)
                exacts.append(exact_statistic(d, self.table, keep, self.plan.columns))
                continue
            state = state_statistic(d, self.table, keep, self.plan.columns)
            states.append(state)
            exacts.append(stat.from_partial(d, state))
        return Aggregates(tuple(states), tuple(exacts))

    def close(self) -> None:
        """Nothing to give up: the table is the caller's."""
