"""Brute force: the exact statistic on every small pair of neighbouring tables against the booked sensitivity.

Tables are built the way the loader represents them (checked against the real loader on a tiny CSV in
:func:`test_the_tokens_are_what_the_loader_makes`): float columns hold the raw value (NaN when missing,
out-of-bounds and infinite values kept as they are, clamped at query time), int columns the value
clamped to the bounds and a missing mask, category columns a code (-1 when empty or undeclared), and
an id column a hash with an "empty" mask. Each row is made of tokens: x in {L, U, 0 or the midpoint,
below L, above U (+inf for floats), missing (NaN, empty or unparsable)}, the group g in {a, b,
missing (empty or undeclared)}, and, with an id column, the person's own id or an empty id.

The neighbouring relations are the ones dpdesk declares (queries.py), with k = 1 or 2:

* add_remove: D = base, D' = base + one person's rows (1..k of them, any tokens);
* replace: base + P against base + P', P and P' the same number (1..k) of rows with any tokens
  (so a row may turn missing, undeclared or id-less, and drop out, while its neighbour does not).

The base holds up to two other people with up to k rows each. A statistic that is not a sum of
per-row contributions (``additive = False``: the quantile score) is enumerated over every base of up
to 2 x k rows from {L, U, mid, missing}; the others (count, sum, mean, histogram, mode, select, ...) add
up per-row contributions, so their change does not depend on the base, and three bases (empty, one
person, two people with a dropped row) exercise the code paths. The statistics and their example
queries come from the registry (:mod:`dpdesk.core.dp.statistics`, each module's ``examples``). Every statistic x relation x missing policy
(x and g each "drop" or imputed) x grouped or not x id column or not x bounds (straddling zero,
positive, negative; float and int columns) x k is enumerated, and the largest observed change of each
component (L1 and L2 in natural units; for exponential-mechanism statistics the max-norm change of
the utilities, and for a grouped one the sum over the groups of each group's max-norm change, which is what
the product of the groups' mechanisms spends) is compared with the booked sensitivity: it may never exceed
it, and for the ungrouped sum and the grouped selections (the quantile by group: a row moving between groups
under replace, rows added to groups under add_remove) it must reach it (so a bound that covers rows that drop
out where none can drop is caught too, and an overstated grouped Du).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.core.dp import statistics
from dpdesk.core.dp.aggregates import bound_rows_per_person, exact_statistic
from dpdesk.core.dp.bounding import derive_key
from dpdesk.core.dp.queries import design_query
from dpdesk.core.dp.queries_base import QueryDesign
from dpdesk.core.loading import Column, Table, csvfile, load_table
from dpdesk.core.loading.columns import int_dtype
from dpdesk.core.model.spec import ColumnSpec, Plan
from dpdesk.core.plan.reader import parse_plan

pytestmark = pytest.mark.slow  # the fast loop (pytest -m "not slow") leaves this module out

CATS = ("a", "b", "c")
G_CODE = {"a": 0, "b": 1, "miss": -1}
REL_TOL = 1e-9
#: the key rows are bounded under (a release derives its own from its home's secret; any fixed key gives the same bound)
BOUND_KEY = derive_key(b"brute force")
X_TOKENS = ("L", "U", "Z", "LO", "HI", "miss")
G_TOKENS = ("a", "b", "miss")
FLOAT_BOUNDS = ((-7.0, 3.0), (99.0, 100.0), (-100.0, -99.0))  # straddling zero, positive, negative
INT_BOUNDS = ((-7.0, 3.0), (98.0, 100.0))

Row = tuple[str, str, str]  # (x token, g token, id token: "own", "empty" or "base<i>")


def zero_or_mid(bounds: tuple[float, float]) -> float:
    lo, hi = bounds
    return 0.0 if lo <= 0.0 <= hi else (lo + hi) / 2.0


def x_repr(tok: str, spec: ColumnSpec) -> tuple[float, bool]:
    """A token's value in the loader's form for this column, and whether it is missing."""
    assert spec.bounds is not None
    lo, hi = spec.bounds
    if tok == "miss":
        return (lo, True) if spec.type == "int" else (math.nan, True)
    value = {"L": lo, "U": hi, "Z": zero_or_mid(spec.bounds), "LO": lo - 1000.0, "HI": math.inf}[tok]
    if spec.type == "int":  # the loader clamps ints as it stores them
        value = min(max(value, lo), hi)
    return value, False


def build(plan: Plan, rows: list[Row], with_id: bool) -> tuple[Table, np.ndarray]:
    """The table the loader would make of these rows, and the rows kept (at most k per id, none without)."""
    xspec, gspec = plan.columns["x"], plan.columns["g"]
    xs = [x_repr(r[0], xspec) for r in rows]
    if xspec.type == "int":
        assert xspec.bounds is not None
        xv = np.asarray([v for v, _ in xs], dtype=int_dtype(xspec.bounds))
        m = np.asarray([miss for _, miss in xs], dtype=bool)
        xcol = Column(xspec, xv, m if m.any() else None)
    else:
        xcol = Column(xspec, np.asarray([v for v, _ in xs], dtype=np.float64))
    gcol = Column(gspec, np.asarray([G_CODE[r[1]] for r in rows], dtype=np.int16))
    ids = ids_missing = None
    if with_id:
        # one number per person (base0, base1: the other people); empty ids share one hash, as in the loader
        person = {"own": 1, "empty": 2, "base0": 3, "base1": 4}
        ids = np.asarray([person[r[2]] for r in rows], dtype=np.uint64)
        ids_missing = np.asarray([r[2] == "empty" for r in rows], dtype=bool)
    table = Table("t", "", len(rows), {"x": xcol, "g": gcol}, ids, ids_missing)
    if with_id:
        keep = bound_rows_per_person(table, plan.privacy_unit.max_rows_per_person, BOUND_KEY)
    else:
        keep = np.ones(len(rows), dtype=bool)
    return table, keep


def outputs(design: QueryDesign, plan: Plan, rows: list[Row], with_id: bool) -> list[np.ndarray]:
    """Each component's exact vector in natural units (for the exponential mechanism: the utilities)."""
    table, keep = build(plan, rows, with_id)
    ex = exact_statistic(design, table, keep, plan.columns)
    if ex.utilities is not None:
        return [np.asarray(ex.utilities, dtype=np.float64)]
    comps = design.components
    return [np.asarray(v, dtype=np.float64) * c.unit for v, c in zip(ex.vectors, comps, strict=True)]


# --------------------------------------------------------------------------- the configurations


@dataclass(frozen=True)
class Config:
    query: dict[str, Any]
    xtype: str
    bounds: tuple[float, float]
    x_missing: Any  # "drop" or {"impute": v}
    g_missing: Any
    with_id: bool
    k: int

    def plan(self, relation: str) -> Plan:
        unit: dict[str, Any] = {"neighbouring": relation, "max_rows_per_person": self.k}
        if self.with_id:
            unit["id_column"] = "pid"
        return parse_plan(
            {
                "version": 1,
                "budget": {"epsilon": 10.0},
                "privacy_unit": unit,
                "columns": {
                    "x": {"type": self.xtype, "bounds": list(self.bounds), "missing": self.x_missing},
                    "g": {"type": "category", "categories": list(CATS), "missing": self.g_missing},
                },
                "queries": [{"name": "q", "epsilon": 1.0, **self.query}],
            }
        )

    @property
    def uses_x(self) -> bool:
        return "x" in (self.query.get("column"), self.where_column)

    @property
    def uses_g(self) -> bool:
        return "g" in (self.query.get("column"), self.query.get("group_by"), self.where_column)

    @property
    def where_column(self) -> str | None:
        where = self.query.get("where")
        return None if where is None else str(where["column"])


#: The public row conditions every statistic is enumerated with as well: on the category column (the imputed
#: "c" meets it, an empty or undeclared value does not) and on the numeric column (from 0 or the midpoint to U:
#: L and a value below it do not meet it, a value above U is clamped to U and does). Under replace a neighbour
#: may move a row across the condition, as a row that drops out.
WHERES = ("g_in", "x_between")


def where_condition(kind: str, bounds: tuple[float, float]) -> dict[str, Any]:
    if kind == "g_in":
        return {"column": "g", "in": ["a", "c"]}
    return {"column": "x", "between": [zero_or_mid(bounds), bounds[1]]}


def queries(bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
    """Every statistic of the registry, grouped or not, with bins and candidates inside these bounds: the
    examples each statistic's module declares (so a new statistic is enumerated without editing this file)."""
    out: dict[str, dict[str, Any]] = {}
    for stat in statistics.REGISTRY.values():
        if stat.composite:  # the synthesiser's marginals: tests/core/test_synthetic_query.py
            continue
        examples = stat.examples(bounds)
        assert examples, f"{stat.name} declares no examples"
        for name, query in examples.items():
            assert name not in out, name
            out[name] = query
    return out


def configs(name: str, with_id: bool, k: int, where: str | None = None) -> Iterator[Config]:
    """Every column type, bounds and missing policy that can matter for this statistic (with ``where``: under
    that public row condition, see :data:`WHERES`)."""
    q0 = queries(FLOAT_BOUNDS[0])[name]
    x_used = q0.get("column") == "x" or where == "x_between"
    g_used = "g" in (q0.get("column"), q0.get("group_by")) or where == "g_in"
    shapes = [("float", FLOAT_BOUNDS[0])]
    if x_used:
        shapes = [("float", b) for b in FLOAT_BOUNDS] + [("int", b) for b in INT_BOUNDS]
    for xtype, bounds in shapes:
        x_policies = ["drop", {"impute": bounds[0]}] if x_used else ["drop"]
        g_policies = ["drop", {"impute": "c"}] if g_used else ["drop"]
        query = dict(queries(bounds)[name])
        if where is not None:
            query["where"] = where_condition(where, bounds)
        for xm, gm in itertools.product(x_policies, g_policies):
            yield Config(query, xtype, bounds, xm, gm, with_id, k)


def person_tokens(cfg: Config) -> list[Row]:
    xs = X_TOKENS if cfg.uses_x else ("Z",)
    gs = G_TOKENS if cfg.uses_g else ("a",)
    ids = ("own", "empty") if cfg.with_id else ("own",)
    return list(itertools.product(xs, gs, ids))


def bases(cfg: Config) -> list[list[Row]]:
    """The other people's rows: every base for the quantile, three for the additive statistics."""
    k = cfg.k
    if not statistics.get(cfg.query["statistic"]).additive:
        toks = [(x, "a") for x in ("L", "U", "Z", "miss")]
        if "group_by" in cfg.query:  # a second group with a row of its own: the person's row may move to it
            toks[-1] = ("U", "b")  # (as many tokens: the person's own tokens cover the rows that drop out)
        out = []
        for size in range(2 * k + 1):
            for combo in itertools.combinations_with_replacement(toks, size):
                out.append([(x, g, f"base{i // k}") for i, (x, g) in enumerate(combo)])
        return out
    one = [("Z", "a", "base0"), ("U", "b", "base0")][:k]
    two = [("L", "a", "base0"), ("miss", "b", "base0")][:k]
    two += [("U", "miss", "base1"), ("Z", "a", "base1")][:k]
    return [[], one, two]


@dataclass
class Observed:
    """The largest change seen, per component: L1, L2 and max norm."""

    l1: list[float]
    l2: list[float]
    linf: list[float]
    #: The utilities' blocks (one per group of a grouped exponential mechanism, else 1): ``linf`` is then the
    #: sum over the groups of each group's largest change, which bounds the product of the groups' mechanisms.
    blocks: int = 1

    def update(self, diffs: list[np.ndarray]) -> None:
        """``diffs``: per component, an array (pairs, cells) of differences."""
        for i, d in enumerate(diffs):
            if d.size == 0:
                continue
            a = np.abs(d)
            self.l1[i] = max(self.l1[i], float(a.sum(axis=1).max()))
            self.l2[i] = max(self.l2[i], float(np.sqrt((d * d).sum(axis=1)).max()))
            per_group = a.reshape(a.shape[0], self.blocks, -1).max(axis=2).sum(axis=1)
            self.linf[i] = max(self.linf[i], float(per_group.max()))


def enumerate_changes(cfg: Config) -> tuple[Observed, Observed]:
    """The largest change over every neighbouring pair, under add_remove and under replace."""
    plan = cfg.plan("add_remove")
    design = design_query(plan.queries[0], plan)
    n_comp = len(design.components)
    blocks = len(design.cells) if design.spec.mechanism == "exponential" else 1
    add, rep = (Observed([0.0] * n_comp, [0.0] * n_comp, [0.0] * n_comp, blocks) for _ in range(2))
    toks = person_tokens(cfg)
    for base in bases(cfg):
        f0 = outputs(design, plan, base, cfg.with_id)
        for size in range(1, cfg.k + 1):
            sets = list(itertools.combinations_with_replacement(toks, size))
            rows = [outputs(design, plan, base + list(p), cfg.with_id) for p in sets]
            per_comp = [np.stack([r[i] for r in rows]) for i in range(n_comp)]
            add.update([f - f0[i] for i, f in enumerate(per_comp)])
            iu, ju = np.triu_indices(len(sets), k=1)
            rep.update([f[iu] - f[ju] for f in per_comp])
    return add, rep


# --------------------------------------------------------------------------- the checks


def check(cfg: Config, relation: str, seen: Observed) -> list[str]:
    """The problems: an observed change above the booked sensitivity, or an ungrouped sum's not reached."""
    plan = cfg.plan(relation)
    design = design_query(plan.queries[0], plan)
    where = (
        f"{relation}, k={cfg.k}, {cfg.xtype} {cfg.bounds}, x {cfg.x_missing}, g {cfg.g_missing}, "
        f"id={cfg.with_id}, {cfg.query}"
    )
    problems = []
    for i, c in enumerate(design.components):
        if c.mechanism == "exponential":
            if seen.linf[i] > c.l1 * (1 + REL_TOL):
                problems.append(f"{c.label}: utility change {seen.linf[i]:g} > Du {c.l1:g} ({where})")
            # (not under a where: on x it keeps part of [L, U] only; on g, {a, c}, a row can move between two groups
            # that meet it only where the missing g is imputed as c)
            reach = "group_by" in cfg.query and cfg.where_column is None
            if reach and not math.isclose(seen.linf[i], c.l1, rel_tol=REL_TOL):
                # a grouped selection's Du is reached: a row moving between groups (replace), k rows added
                problems.append(
                    f"{c.label}: largest change {seen.linf[i]:g} does not reach Du {c.l1:g} ({where})"
                )
            continue
        if seen.l1[i] > c.l1 * (1 + REL_TOL):
            problems.append(f"{c.label}: L1 change {seen.l1[i]:g} > booked {c.l1:g} ({where})")
        if seen.l2[i] > c.l2 * (1 + REL_TOL):
            problems.append(f"{c.label}: L2 change {seen.l2[i]:g} > booked {c.l2:g} ({where})")
    # (a where on x keeps only part of [L, U], so a change of the whole width may not be reachable there)
    if cfg.query["statistic"] == "sum" and "group_by" not in cfg.query and cfg.where_column != "x":
        (c,) = design.components
        if not math.isclose(seen.l1[0], c.l1, rel_tol=REL_TOL):
            problems.append(f"sum: largest change {seen.l1[0]:g} does not reach booked {c.l1:g} ({where})")
    return problems


STATISTICS = list(queries(FLOAT_BOUNDS[0]))


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("with_id", [False, True], ids=["no_id", "id"])
@pytest.mark.parametrize("name", STATISTICS)
def test_no_neighbour_changes_a_statistic_by_more_than_its_sensitivity(
    name: str, with_id: bool, k: int
) -> None:
    """The quantile by group with an id column at k = 2 (every base, three groups' scores) outlasts the test's
    time limit: its empty ids are enumerated at k = 1 here, its k = 2 (rows moving between groups, rows that drop
    out as missing values) without an id column, and its Du reached at k = 2 by
    test_the_quantile_by_group_reaches_its_du_when_a_row_moves_between_groups."""
    if name == "quantile_by" and with_id and k == 2:
        pytest.skip("the quantile by group at k = 2 with an id column: see the docstring")
    problems: list[str] = []
    n = 0
    reached = {
        "add_remove": [0.0, 0.0],
        "replace": [0.0, 0.0],
    }  # a square sum's largest L1, L2 over its booked
    for cfg in configs(name, with_id, k):
        add, rep = enumerate_changes(cfg)
        problems += check(cfg, "add_remove", add) + check(cfg, "replace", rep)
        n += 1
        for relation, seen in (("add_remove", add), ("replace", rep)):
            plan = cfg.plan(relation)
            for i, c in enumerate(design_query(plan.queries[0], plan).components):
                if c.kind == "square_sum":
                    reached[relation][0] = max(reached[relation][0], seen.l1[i] / c.l1)
                    reached[relation][1] = max(reached[relation][1], seen.l2[i] / c.l2)
    assert n > 0
    assert not problems, "\n".join(problems[:20])
    if statistics.get(queries(FLOAT_BOUNDS[0])[name]["statistic"]).accuracy_kind == "spread":
        # the square sum's bound is tight: some neighbour pair reaches it, L1 and L2, under each relation
        for relation, (l1, l2) in reached.items():
            assert math.isclose(l1, 1.0, rel_tol=REL_TOL), (relation, l1)
            assert math.isclose(l2, 1.0, rel_tol=REL_TOL), (relation, l2)


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("with_id", [False, True], ids=["no_id", "id"])
@pytest.mark.parametrize("where", WHERES)
@pytest.mark.parametrize("name", STATISTICS)
def test_no_neighbour_under_a_row_condition_changes_a_statistic_by_more_than_its_sensitivity(
    name: str, where: str, with_id: bool, k: int
) -> None:
    """A ``where``: under replace a neighbour moves rows across the condition (in, out, or a value changed
    inside it); the booked sensitivity (the case of rows that drop out) covers every such pair, the quantile's
    score (whose replace bound relies on n being fixed) included. A statistic that is not additive (the quantile)
    enumerates every base, which at k = 2 takes minutes per condition: it is checked at k = 1 here, and its k = 2
    rows that drop out by the id column's configurations above (a row that leaves a condition is such a row); with an
    id column, a condition is enumerated at k = 1 (the empty ids at k = 2 are the test above's)."""
    if k == 2 and not statistics.get(queries(FLOAT_BOUNDS[0])[name]["statistic"]).additive:
        pytest.skip("k = 2 for a non-additive statistic: see the docstring")
    if k == 2 and with_id:
        pytest.skip(
            "k = 2 with an id column: its empty ids are covered by the test above, a where here at k = 1"
        )
    problems: list[str] = []
    n = 0
    for cfg in configs(name, with_id, k, where):
        add, rep = enumerate_changes(cfg)
        problems += check(cfg, "add_remove", add) + check(cfg, "replace", rep)
        n += 1
    assert n > 0
    assert not problems, "\n".join(problems[:20])


def test_a_row_condition_is_what_widens_the_sum_under_replace() -> None:
    """Bounds [99, 100], imputed values (nothing drops): a sum moves by at most U - L = 1 under replace; with a
    where on the category column a row of 100 can leave the condition, and the sum moves by M = 100 (booked)."""
    for k in (1, 2):
        q = queries((99.0, 100.0))["sum"]
        plain = Config(q, "float", (99.0, 100.0), {"impute": 99}, {"impute": "c"}, False, k)
        cond = Config({**q, "where": where_condition("g_in", (99.0, 100.0))}, *astuple_rest(plain))
        for cfg, expected in ((plain, 1.0), (cond, 100.0)):
            _, rep = enumerate_changes(cfg)
            plan = cfg.plan("replace")
            (c,) = design_query(plan.queries[0], plan).components
            assert rep.l1[0] == pytest.approx(k * expected), cfg
            assert c.l1 == pytest.approx(k * expected), cfg
            assert ("condition" in c.derivation) == (cfg is cond)


def astuple_rest(cfg: Config) -> tuple[Any, ...]:
    return (cfg.xtype, cfg.bounds, cfg.x_missing, cfg.g_missing, cfg.with_id, cfg.k)


def test_the_sum_under_replace_reaches_k_max_of_width_and_m_when_a_row_can_drop() -> None:
    """The issue's example: bounds [99, 100], a row of 100 against a missing one moves the sum by 100."""
    for k in (1, 2):
        for policy, with_id, expected in (
            ("drop", False, 100.0),
            ({"impute": 99}, True, 100.0),
            ({"impute": 99}, False, 1.0),
        ):
            cfg = Config(queries((99.0, 100.0))["sum"], "float", (99.0, 100.0), policy, "drop", with_id, k)
            _, rep = enumerate_changes(cfg)
            plan = cfg.plan("replace")
            (c,) = design_query(plan.queries[0], plan).components
            assert rep.l1[0] == pytest.approx(k * expected)
            assert c.l1 == pytest.approx(k * expected), (policy, with_id, k)


# --------------------------------------------------------------------------- the predicate


def kept_rows(cfg: Config, row: Row) -> int:
    """How many of one row's copies the query's statistic uses, read through a counting query on the same
    column and group (the same code path that drops rows: aggregates._column and the id bound)."""
    q = cfg.query
    if q["statistic"] == "count":
        proxy: dict[str, Any] = dict(q)
    else:
        proxy = {"statistic": "histogram", "column": q["column"], "mechanism": "laplace"}
        if q["column"] == "x":
            proxy["bins"] = queries(cfg.bounds)["histogram_bins"]["bins"]
        if "group_by" in q:
            proxy["group_by"] = q["group_by"]
        if "where" in q:
            proxy["where"] = q["where"]
    pcfg = Config(proxy, cfg.xtype, cfg.bounds, cfg.x_missing, cfg.g_missing, cfg.with_id, cfg.k)
    plan = pcfg.plan("replace")
    design = design_query(plan.queries[0], plan)
    table, keep = build(plan, [row], cfg.with_id)
    return int(sum(exact_statistic(design, table, keep, plan.columns).vectors[0]))


@pytest.mark.parametrize("with_id", [False, True], ids=["no_id", "id"])
def test_rows_can_drop_says_exactly_when_the_code_drops_a_row(with_id: bool) -> None:
    from dpdesk.core.dp.queries_base import rows_can_drop

    seen = {True: 0, False: 0}
    for name in STATISTICS:
        for cfg in configs(name, with_id, 1):
            plan = cfg.plan("replace")
            drops = any(kept_rows(cfg, row) == 0 for row in person_tokens(cfg))
            assert rows_can_drop(plan.queries[0], plan) == drops, cfg
            seen[drops] += 1
    assert seen[True] and (with_id or seen[False])


def test_the_derivation_says_why_rows_that_drop_out_are_covered() -> None:
    cfg = Config(queries((99.0, 100.0))["sum"], "float", (99.0, 100.0), "drop", "drop", False, 2)
    (c,) = design_query(cfg.plan("replace").queries[0], cfg.plan("replace")).components
    assert "drop" in c.derivation and "max(U - L, M)" in c.derivation and "200" in c.derivation
    for name in ("count", "sum_by", "mean", "histogram_bins", "mode", "quantile_0.5", "select"):
        cfg = Config(queries((99.0, 100.0))[name], "float", (99.0, 100.0), "drop", "drop", True, 2)
        plan = cfg.plan("replace")
        for comp in design_query(plan.queries[0], plan).components:
            assert "drop" in comp.derivation, (name, comp.derivation)


# --------------------------------------------------------------------------- the loader's representation


@pytest.mark.parametrize("reader", ["stream", "blocks"])
def test_the_tokens_are_what_the_loader_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    """Each token, written as CSV text and read by the real loader, gives the representation built above."""
    monkeypatch.setattr(csvfile, "STREAM_UTF8", reader == "stream")
    fb, ib = FLOAT_BOUNDS[1], INT_BOUNDS[1]
    cfg = Config(queries(fb)["sum"], "float", fb, "drop", "drop", True, 1)
    fspec = cfg.plan("replace").columns["x"]
    ispec = Config(queries(ib)["sum"], "int", ib, "drop", "drop", True, 1).plan("replace").columns["x"]

    def text(tok: str, spec: ColumnSpec) -> list[str]:
        """The CSV fields that stand for a token: missing is NaN, empty or unparsable."""
        assert spec.bounds is not None
        lo, hi = spec.bounds
        if tok == "miss":
            return ["NaN", "", "oops"]
        if tok == "HI":
            return ["inf" if spec.type == "float" else f"{hi + 1000:g}"]
        return [f"{lo - 1000:g}" if tok == "LO" else f"{x_repr(tok, spec)[0]:g}"]

    lines, want = ["x,xi,g,pid"], []
    for xt, gt, it in itertools.product(X_TOKENS, G_TOKENS, ("own", "empty")):
        for ftxt, itxt in zip(text(xt, fspec), text(xt, ispec), strict=True):
            for gtxt in {"a": ["a"], "b": ["b"], "miss": ["", "undeclared"]}[gt]:
                lines.append(f"{ftxt},{itxt},{gtxt},{'p1' if it == 'own' else ''}")
                want.append((xt, gt, it))
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    gspec = cfg.plan("replace").columns["g"]
    loaded = load_table(path, {"x": fspec, "xi": ispec, "g": gspec}, id_column="pid")
    assert loaded.n_rows == len(want)
    for spec, name in ((fspec, "x"), (ispec, "xi")):
        col = loaded.columns[name]
        got_miss = col.missing()
        for i, (xt, _, _) in enumerate(want):
            value, miss = x_repr(xt, spec)
            assert bool(got_miss[i]) == miss, (name, xt, lines[i + 1])
            if not miss:
                assert float(col.values[i]) == value, (name, xt, lines[i + 1])
        assert spec.bounds is not None
        assert col.values.dtype == (int_dtype(spec.bounds) if spec.type == "int" else np.float64)
    assert loaded.columns["g"].values.tolist() == [G_CODE[w[1]] for w in want]
    assert loaded.ids_missing is not None and loaded.ids_missing.tolist() == [w[2] == "empty" for w in want]


@pytest.mark.parametrize("k", [1, 2])
def test_the_quantile_by_group_reaches_its_du_when_a_row_moves_between_groups(k: int) -> None:
    """Issue 31: one exponential mechanism per group spends eps sum_g Delta_g / Du, so Du must bound the sum
    over the groups of each group's score change. Under replace a row moving from one group to another moves
    each group's score by max(q, 1-q): 2k max(q, 1-q) in all (1.5k at q = 0.25, above the ungrouped k); under
    add_remove k max(q, 1-q). Both are reached and never exceeded (one configuration, k = 1 and 2: the fast
    check; the registry-wide test above covers every configuration)."""
    cfg = Config(queries(FLOAT_BOUNDS[0])["quantile_by"], "float", FLOAT_BOUNDS[0], "drop", "drop", False, k)
    add, rep = enumerate_changes(cfg)
    for relation, seen, du in (("add_remove", add, 0.75 * k), ("replace", rep, 1.5 * k)):
        plan = cfg.plan(relation)
        (c,) = design_query(plan.queries[0], plan).components
        assert c.l1 == pytest.approx(du), relation
        assert seen.linf[0] == pytest.approx(du), relation
        assert not check(cfg, relation, seen)
