"""The aggregation boundary: what a release needs of a table, and nothing more.

A release needs, per query, an exact *mergeable state* (``Statistic.partial``: counts, fixed-point sums on the
column's grid, histogram bins, quantile candidate counts, mode and select counts, all integers), the data check's
counts (:class:`~dpdesk.core.release.datacheck.DataCheck`, for the curator's eyes only) and the table's content
identity (its SHA-256). An engine reads a table and gives exactly these; everything after them (the design, the
ledger, the noise, the package) is the release's, once for every engine.

States merge exactly (:func:`~dpdesk.core.dp.aggregates.merge_states`: element by element, as Python integers), so
an engine may compute them in any order and in any number of parts. With a person id column, an engine keeps the
rows :func:`~dpdesk.core.dp.aggregates.bound_rows_per_person` keeps under the release's
:class:`~dpdesk.core.dp.bounding.BoundKey` (a function of each person's own rows), so two engines given the same
table and key give the same states, bit for bit, and the same released values for the same noise draws
(tests/core/test_engines.py).

Everything an engine holds or returns is secret (exact values of the private table): it stays in memory, and only
the release's noise reveals anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.core.dp.aggregates_base import Exact
    from dpdesk.core.dp.bounding import BoundKey
    from dpdesk.core.release.datacheck import DataCheck

#: A query's mergeable exact state: lists of integers (``Statistic.partial``).
State = list[list[int]]


@dataclass(frozen=True)
class Aggregates:
    """What an engine computed of a table, per query of the plan (in its order): the exact mergeable state
    (None for a composite statistic, the synthetic table, which only the in-memory engine computes, from the whole
    table) and the exact statistic made of it (``Statistic.from_partial``). Secret: never shown or written."""

    states: tuple[State | None, ...]
    exacts: tuple[Exact, ...]


class AggregationEngine(Protocol):
    """A table read for a release, by one engine. Made by the engine's module for a plan and its designs."""

    #: the engine's name (for tests and benchmarks; never shown with data)
    name: str

    @property
    def sha256(self) -> str:
        """The SHA-256 of the file's bytes: the dataset's ledger key."""
        ...

    def check(self) -> DataCheck:
        """The data check's counts (missing, undeclared, unparsable, clamped values per declared column)."""
        ...

    def aggregate(self, key: BoundKey | None, progress: Progress) -> Aggregates:
        """Every query's exact state and statistic; with an id column, rows bounded per person under ``key``
        (required then). Called at most once."""
        ...

    def close(self) -> None:
        """Give up what the engine holds (temporary files); idempotent."""
        ...
