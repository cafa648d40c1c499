"""The aggregation boundary (dpdesk/core/release/engines/): the in-memory and the streaming engine give the same
states, bit for bit, the same data check and content identity, and the same released tables for the same noise
draws, on tables with and without a person id column and with problem cells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.core.common.progress import NULL_PROGRESS
from dpdesk.core.dp import statistics
from dpdesk.core.dp.aggregates import exact_statistic
from dpdesk.core.dp.bounding import derive_key
from dpdesk.core.dp.queries import design_plan
from dpdesk.core.loading import load_table
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.release import streaming as st
from dpdesk.core.release.engines.base import Aggregates, AggregationEngine
from dpdesk.core.release.engines.memory import InMemoryEngine
from dpdesk.core.release.engines.streamed import StreamingEngine
from dpdesk.core.release.steps import noisy_rows, prepare_release

KEY = derive_key(b"engine tests")


def make_plan(id_column: str | None, k: int = 2) -> Plan:
    """Every statistic's examples but the synthesiser's (which needs its table whole), on an int, a float and a
    category column."""
    queries = []
    for name in statistics.names():
        if statistics.get(name).composite:
            continue
        for qname, q in statistics.get(name).examples((-7.0, 3.0)).items():
            queries.append({"name": qname, "epsilon": 1.0, **q})
    unit: dict[str, Any] = {"neighbouring": "add_remove"}
    if id_column is not None:
        unit.update(id_column=id_column, max_rows_per_person=k)
    return parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 1000.0},
            "privacy_unit": unit,
            "columns": {
                "x": {"type": "float", "bounds": [-7, 3], "missing": "drop"},
                "n": {"type": "int", "bounds": [0, 20], "missing": {"impute": 3}},
                "g": {"type": "category", "categories": ["a", "b", "c"]},
            },
            "queries": queries,
        }
    )


def write_table(path: Path, n: int, seed: int, with_id: bool) -> None:
    """Test data (numpy's generator, test only): people with 1 to 6 rows, values beyond the bounds, empty
    fields, an undeclared category, unparsable numbers, empty ids, repeated rows of one person."""
    rng = np.random.default_rng(seed)
    lines = ["pid,x,n,g" if with_id else "x,n,g"]
    person = 0
    left = 0
    for i in range(n):
        if left == 0:
            person += 1
            left = int(rng.integers(1, 7))
        left -= 1
        x = f"{rng.uniform(-9.0, 5.0):.3f}" if rng.random() > 0.08 else rng.choice(["", "abc", "-4.5", "inf"])
        nn = str(int(rng.integers(-3, 25))) if rng.random() > 0.08 else rng.choice(["", "1.5x", "7"])
        g = rng.choice(["a", "b", "c", "", "zz"], p=[0.3, 0.3, 0.3, 0.05, 0.05])
        pid = f"p{person}" if rng.random() > 0.03 else ""
        fields = [x, nn, g]
        if i % 50 == 7:  # the same row again, for the same person
            fields = lines[-1].split(",")[-3:] if len(lines) > 1 else fields
        lines.append(",".join(([pid] if with_id else []) + fields))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def engines(plan: Plan, path: Path, monkeypatch: Any) -> tuple[AggregationEngine, AggregationEngine]:
    designs = design_plan(plan)
    id_column = plan.privacy_unit.id_column
    memory = InMemoryEngine(load_table(path, plan.columns, id_column=id_column), plan, designs)
    monkeypatch.setattr(st, "n_partitions", lambda *a: 5)  # several partitions, a person's rows in one
    streamed = StreamingEngine(st.load_for_release(plan, path, designs=designs, force_stream=True), plan)
    return memory, streamed


def released(plan: Plan, aggregates: Aggregates) -> list[list[str]]:
    """The released rows for fixed noise draws (a fixed shift, the best candidate): post-processing only."""

    def noise(values: list[int], _comp: Any) -> list[int]:
        return [v + 3 for v in values]

    def pick(utilities: list[float], _comp: Any) -> int:
        return int(np.argmax(utilities))

    out = []
    for d, ex in zip(design_plan(plan), aggregates.exacts, strict=True):
        out += [r.as_list() for r in noisy_rows(d, ex, plan, noise, pick)]
    return out


@pytest.mark.parametrize("with_id", [False, True])
@pytest.mark.parametrize("k", [1, pytest.param(3, marks=pytest.mark.slow)])
def test_both_engines_give_the_same_states_check_identity_and_release(
    tmp_path: Path, monkeypatch: Any, with_id: bool, k: int
) -> None:
    plan = make_plan("pid" if with_id else None, k)
    path = tmp_path / "t.csv"
    write_table(path, 3000, 11 + k, with_id)
    memory, streamed = engines(plan, path, monkeypatch)
    assert memory.sha256 == streamed.sha256
    check = memory.check()
    assert check == streamed.check()
    assert check.problems  # the undeclared category and the unparsable numbers are there
    key = KEY if with_id else None
    a = memory.aggregate(key, NULL_PROGRESS)
    b = streamed.aggregate(key, NULL_PROGRESS)
    assert len(a.states) == len(design_plan(plan)) and all(s is not None for s in a.states)
    assert a.states == b.states  # Python integers: equal is bit for bit
    assert [e.vectors for e in a.exacts] == [e.vectors for e in b.exacts]
    assert [None if e.utilities is None else [u.hex() for u in e.utilities] for e in a.exacts] == [
        None if e.utilities is None else [u.hex() for u in e.utilities] for e in b.exacts
    ]
    assert released(plan, a) == released(plan, b)
    memory.close()
    streamed.close()


def test_with_an_id_column_the_engines_bound_the_same_rows_and_not_every_row(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The bounding matters here (a count with k = 1 is below the rows with an id), and the states depend on the
    key (another key keeps other rows: equal counts of every category under two keys would be a coincidence of
    probability far below 1e-6 on 3,000 rows)."""
    plan = make_plan("pid", 1)
    path = tmp_path / "t.csv"
    write_table(path, 3000, 5, True)
    memory, streamed = engines(plan, path, monkeypatch)
    a = memory.aggregate(KEY, NULL_PROGRESS)
    b = streamed.aggregate(KEY, NULL_PROGRESS)
    assert a.states == b.states
    again = InMemoryEngine(load_table(path, plan.columns, id_column="pid"), plan, design_plan(plan))
    other = again.aggregate(derive_key(b"another key"), NULL_PROGRESS)
    assert other.states != a.states
    with pytest.raises(ValueError, match="bounding key"):
        again.aggregate(None, NULL_PROGRESS)


def test_the_in_memory_engine_computes_a_synthetic_table_whole(tmp_path: Path) -> None:
    """A composite statistic (the synthesiser) has no mergeable state: its state is None and its exact statistic
    the one the whole table gives."""
    plan = parse_plan(
        {
            "version": 1,
            "budget": {"epsilon": 10.0, "delta": 1e-5},
            "privacy_unit": {"neighbouring": "add_remove"},
            "columns": {
                "x": {"type": "float", "bounds": [-7, 3]},
                "g": {"type": "category", "categories": ["a", "b"]},
            },
            "queries": [
                {"name": "s", "statistic": "synthetic", "epsilon": 1.0, "columns": ["x", "g"], "delta": 1e-6},
                {"name": "c", "statistic": "count", "mechanism": "laplace", "epsilon": 1.0},
            ],
        }
    )
    path = tmp_path / "t.csv"
    path.write_text("x,g\n1,a\n2,b\n-3,a\n", encoding="utf-8")
    engine = InMemoryEngine(load_table(path, plan.columns), plan, design_plan(plan))
    agg = engine.aggregate(None, NULL_PROGRESS)
    assert agg.states[0] is None and agg.states[1] is not None
    whole = exact_statistic(engine.designs[0], engine.table, np.ones(3, dtype=bool), plan.columns)
    assert agg.exacts[0].vectors == whole.vectors and sum(agg.exacts[1].vectors[0]) > 0


def test_a_release_gives_the_same_exact_statistics_streamed_or_in_memory(
    tmp_path: Path, monkeypatch: Any, dpdesk_home: Path
) -> None:
    """Through prepare_release, which picks the engine and derives the key from the home: a table streamed and
    the same table in memory give the same exact statistics (the same rows of each person kept)."""
    plan = make_plan("pid", 1)
    path = tmp_path / "t.csv"
    write_table(path, 2000, 3, True)
    monkeypatch.setattr(st, "n_partitions", lambda *a: 3)
    from dpdesk.core.release.steps import id_key

    # loaded as a release loads it: ids hashed under the home's key (prepare_release's own load does the same)
    streamed = st.load_for_release(plan, path, force_stream=True, id_key=id_key(plan, dpdesk_home))
    a = prepare_release(plan, path, dpdesk_home, table=streamed, accept_data_problems=True, read_ledger=False)
    b = prepare_release(plan, path, dpdesk_home, accept_data_problems=True, read_ledger=False)
    assert isinstance(a.table.streamed, st.StreamedAggregates) and b.table.streamed is None
    assert [e.vectors for e in a.exacts] == [e.vectors for e in b.exacts]
    a.close()
    b.close()
