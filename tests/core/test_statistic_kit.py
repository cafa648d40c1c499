"""The kit for statistic authors (``dpdesk/core/dp/statistics/kit.py``): what a statistic module may import.

A statistic module imports dpdesk only through the kit or a sibling statistic's module; besides those, the
standard library, numpy and polars. The kit re-exports only public names, each documented in its docstring.
A statistic written against the kit alone, registered from here (the sketch below, in the tests only), is
read by the brute-force sensitivity check like the package's own, which catches a sensitivity declared too
small.
"""

from __future__ import annotations

import ast
import math
import sys
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest

from dpdesk.core.dp import statistics
from dpdesk.core.dp.statistics import kit
from dpdesk.core.dp.statistics.kit import (
    NUMERIC,
    AuditExample,
    DesignContext,
    Exact,
    Mechanism,
    Param,
    ParamKind,
    Plan,
    QueryDesign,
    QuerySpec,
    Rows,
    Statistic,
    fmt_formula,
    grid_bounds,
    noise_component,
    to_grid,
)

PACKAGE = Path(statistics.__file__).parent
NOT_STATISTICS = {"__init__", "base", "kit"}
STATISTIC_MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in NOT_STATISTICS)
KIT = "dpdesk.core.dp.statistics.kit"
THIRD_PARTY = {"numpy", "polars"}


def imported_modules(tree: ast.Module, package: str) -> list[tuple[int, str]]:
    """Every module a file imports (at the top, in a function or under TYPE_CHECKING), with its line.

    ``from a.b import c`` counts as ``a.b.c`` when ``a.b`` is this package (``c`` is then a module);
    relative imports are resolved against ``package``."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            module = node.module or ""
            if node.level:
                module = ".".join(base[: len(base) - node.level + 1] + ([module] if module else []))
            if module == package:
                out += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
            else:
                out.append((node.lineno, module))
    return sorted(out)


def forbidden_imports(source: str, package: str = "dpdesk.core.dp.statistics") -> list[str]:
    """The imports of a statistic module that are not the kit, a sibling statistic, stdlib, numpy or polars."""
    siblings = {f"{package}.{name}" for name in STATISTIC_MODULES}
    bad = []
    for line, module in imported_modules(ast.parse(source), package):
        top = module.split(".")[0]
        if module == "__future__" or top in sys.stdlib_module_names or top in THIRD_PARTY:
            continue
        if module == KIT or module in siblings:
            continue
        bad.append(f"line {line}: {module}")
    return bad


def test_the_scan_sees_every_kind_of_forbidden_import() -> None:
    """The scan itself: top-level, nested, TYPE_CHECKING, relative and plain imports of the engine are named."""
    source = (
        "import math\nimport numpy as np\nimport polars\n"
        "from dpdesk.core.dp.statistics.kit import Plan\nfrom dpdesk.core.dp.statistics.count import GROUP_BY\n"
        "from dpdesk.core.dp.statistics import kit, sum\nfrom .kit import _\nfrom . import quantile\n"
        "from dpdesk.core.model.spec import Plan\n"
        "def f():\n    from dpdesk.core.dp.queries_base import fmt_formula\n"
        "if TYPE_CHECKING:\n    from dpdesk.core.loading import Table\n"
        "import dpdesk.core.dp.mechanisms\nfrom ..values import Row\nfrom . import base\nimport scipy\n"
    )
    assert forbidden_imports(source) == [
        "line 9: dpdesk.core.model.spec",
        "line 11: dpdesk.core.dp.queries_base",
        "line 13: dpdesk.core.loading",
        "line 14: dpdesk.core.dp.mechanisms",
        "line 15: dpdesk.core.dp.values",
        "line 16: dpdesk.core.dp.statistics.base",
        "line 17: scipy",
    ]


def test_the_statistic_modules_are_the_registry() -> None:
    """The scan covers every statistic: the modules it reads define the registry's statistics."""
    assert len(STATISTIC_MODULES) >= 9
    defined = {type(statistics.get(n)).__module__.rsplit(".", 1)[1] for n in statistics.names()}
    assert defined == set(STATISTIC_MODULES)


@pytest.mark.parametrize("name", STATISTIC_MODULES)
def test_a_statistic_imports_dpdesk_only_through_the_kit(name: str) -> None:
    problems = forbidden_imports((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
    assert not problems, (
        f"statistics/{name}.py imports outside the kit (import from dpdesk.core.dp.statistics.kit, "
        f"adding a public name to the kit if a statistic needs one): {problems}"
    )


def test_the_kit_gathers_only_public_names_and_documents_each() -> None:
    tree = ast.parse(Path(kit.__file__).read_text(encoding="utf-8"))
    private = [
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_") and not (node.module == "dpdesk.i18n" and alias.name == "_")
    ]
    assert not private, f"the kit re-exports private names (make them public where they live): {private}"
    doc = kit.__doc__ or ""
    undocumented = [name for name in kit.__all__ if f"``{name}``" not in doc]
    assert not undocumented, f"names of the kit without a line in its docstring: {undocumented}"
    assert all(hasattr(kit, name) for name in kit.__all__)
    assert "``Table``" in doc  # for annotations only, under TYPE_CHECKING (not in __all__)
    defined = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Assign)]
    assert not [
        n for n in defined if not (isinstance(n, ast.Assign) and ast.unparse(n).startswith("__all__"))
    ]


# --------------------------------------------------------------------------- a sketch written against the kit


class SumOfSquares(Statistic):
    """A sketch: the sum of a numeric column's squared values, clamped to [L, U] (ungrouped).

    A row adds x^2 <= M2 = max(L^2, U^2): k M2 under add_remove; under replace a row's square moves within
    [0, M2] (or drops out): k M2 too. ``understated`` books k (U - L) instead, a sum's replace sensitivity.
    """

    name = "sum_of_squares_sketch"
    order = 10_000
    mechanisms = (Mechanism.LAPLACE,)
    params = (
        Param(
            "column",
            ParamKind.COLUMN,
            lambda: "Column",
            lambda: "The column whose squares are summed.",
            column_types=NUMERIC,
        ),
    )
    in_form = False

    def __init__(self, understated: bool) -> None:
        self.understated = understated

    def label(self) -> str:
        return "sum of squares"

    def word(self) -> str:
        return "sum of squares"

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        col = plan.columns[spec.column or ""]
        s, lo_i, hi_i = grid_bounds(col)
        unit = math.ldexp(1.0, -2 * s)  # squares of grid values
        booked = ctx.k * (hi_i - lo_i) if self.understated else ctx.k * max(lo_i * lo_i, hi_i * hi_i)
        why = f"a row adds at most {fmt_formula(booked * unit)}"
        l1 = l2 = booked * unit
        comp = noise_component(
            "sum of squares",
            "sum",
            spec.mechanism,
            spec.calibration,
            spec.epsilon,
            spec.delta,
            l1,
            l2,
            unit,
            why,
        )
        return QueryDesign(spec, (comp,), ("",), None, tuple(ctx.notes))

    def exact(self, rows: Rows) -> Exact:
        assert rows.column is not None and rows.x is not None
        q, _bits = to_grid(rows.x, rows.column)
        return Exact([[sum(int(v) * int(v) for v in q.tolist())]])

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        return {"sum_of_squares_sketch": {"statistic": self.name, "column": "x", "mechanism": "laplace"}}

    def audit_examples(self) -> tuple[AuditExample, ...]:
        return ()


def registered(monkeypatch: pytest.MonkeyPatch, stat: Statistic) -> None:
    """Register a statistic as the package's discovery would: in REGISTRY and among the plan's words."""
    monkeypatch.setitem(statistics.REGISTRY, stat.name, stat)
    words = StrEnum("StatisticName", [(n.upper(), n) for n in statistics.REGISTRY])  # type: ignore[misc]
    monkeypatch.setattr(statistics, "StatisticName", words)


def brute_force_problems() -> list[str]:
    from tests.core import test_bruteforce as bf

    problems: list[str] = []
    n = 0
    for k in (1, 2):
        for cfg in bf.configs(SumOfSquares.name, False, k):
            add, rep = bf.enumerate_changes(cfg)
            problems += bf.check(cfg, "add_remove", add) + bf.check(cfg, "replace", rep)
            n += 1
    assert n >= 10  # every bounds and missing policy of a numeric column
    return problems


@pytest.mark.slow
def test_the_brute_force_check_catches_a_sketch_whose_sensitivity_is_too_small(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sketch, written against the kit alone and registered from the tests, is enumerated by the brute-force
    check of tests/core/test_bruteforce.py without editing it: honest, it passes; understated, it is named."""
    registered(monkeypatch, SumOfSquares(understated=False))
    assert brute_force_problems() == []
    registered(monkeypatch, SumOfSquares(understated=True))
    problems = brute_force_problems()
    assert problems and all(
        p.startswith(("sum of squares: L1 change", "sum of squares: L2 change")) for p in problems
    )
    assert any("(-7.0, 3.0)" in p for p in problems) and any("(99.0, 100.0)" in p for p in problems)
