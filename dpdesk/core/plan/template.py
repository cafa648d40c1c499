"""A plan template made from a table's column names alone (``dpdesk plan new``).

Nothing in it comes from the data's values: every column's type, bounds and categories are a placeholder
(:data:`~dpdesk.core.model.spec.PLACEHOLDER`, which the plan reader refuses, naming what to write), and the
explanations are ``_help`` keys (:data:`~dpdesk.core.model.spec.HELP_KEY`, which the reader ignores). The budget's
epsilon is a placeholder too unless the user states it; the rest are the app's defaults for a new plan.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from dpdesk.core.model.spec import HELP_KEY, PLACEHOLDER, PLAN_VERSION
from dpdesk.i18n import _

__all__ = ["plan_template", "template_columns", "template_text"]


def template_columns(names: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The header's names a template declares (each once, in header order) and those it leaves out (an empty
    name, or a name repeated: the loader could not tell which column it means)."""
    kept: list[str] = []
    left: list[str] = []
    seen: set[str] = set()
    repeated = {n for n in names if list(names).count(n) > 1}
    for n in names:
        if not n.strip() or n in repeated:
            if n not in seen:
                left.append(n)
        else:
            kept.append(n)
        seen.add(n)
    return tuple(kept), tuple(left)


def plan_template(
    names: Sequence[str],
    *,
    title: str,
    epsilon: float | None = None,
    types: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A plan declaring every column of ``names`` with its type, bounds and categories left to fill; a column
    whose type ``types`` gives (``int`` or ``float``: a database's declared column type, public schema, never
    read off the values) is declared with it, its bounds left to fill."""
    columns: dict[str, Any] = {}
    for name in template_columns(names)[0]:
        known = (types or {}).get(name)
        if known in ("int", "float"):
            columns[name] = {
                HELP_KEY: _(
                    "the type the database declares; fill the bounds; not used by any query: delete this column"
                ),
                "type": known,
                "bounds": [PLACEHOLDER, PLACEHOLDER],
            }
            continue
        columns[name] = {
            HELP_KEY: _(
                "int or float: fill bounds and delete categories; category: fill categories and delete bounds; "
                "not used by any query: delete this column"
            ),
            "type": PLACEHOLDER,
            "bounds": [PLACEHOLDER, PLACEHOLDER],
            "categories": PLACEHOLDER,
        }
    return {
        HELP_KEY: [
            _("A dpdesk plan made from the table's header alone: no value of the table was read."),
            _(
                'Replace every "?" and delete what does not apply; "_help" keys are explanations dpdesk ignores.'
            ),
            _(
                "type: int (whole numbers), float (numbers) or category (labels). bounds: the public lower and "
                "upper bound of a number column, [lower, upper]; values outside are clamped. categories: every "
                "possible label of a category column; other values count as missing."
            ),
            _(
                "Bounds and categories must be public knowledge (a codebook, the survey's design, the law), never "
                "read off the data: reading them off the data leaks it."
            ),
            _(
                "queries: the statistics to release, for example {count} or {mean}; see docs/plan-file.md."
            ).format(
                count='{"name": "people", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1}',
                mean='{"name": "mean age", "statistic": "mean", "column": "age", "mechanism": "laplace", '
                '"epsilon": 0.2}',
            ),
            _("Then run: dpdesk plan check PLAN (it lists what is still missing or wrong)."),
        ],
        "version": PLAN_VERSION,
        "title": title,
        "budget": {
            HELP_KEY: _(
                "epsilon: the dataset's total privacy budget, for example 1 (smaller protects more and adds "
                "more noise); delta: 0, or a small number for Gaussian noise. Both are fixed at the first release."
            ),
            "epsilon": PLACEHOLDER if epsilon is None else epsilon,
            "delta": 1e-6,
        },
        "privacy_unit": {
            HELP_KEY: _(
                "Who is protected. One row per person: keep this. A person with several rows: set "
                'max_rows_per_person to the most rows one person can have and "id_column" to the column '
                "naming the person (then delete that column from columns)."
            ),
            "neighbouring": "add_remove",
            "max_rows_per_person": 1,
        },
        "columns": columns,
        "queries": [],
    }


def template_text(value: Any, indent: str = "") -> str:
    """The template as JSON for a person to edit: objects one key a line, a short list of numbers or words on one
    line (``"bounds": ["?", "?"]``)."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [f"{inner}{_json(k)}: {template_text(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and value:
        flat = _json(value)
        if len(flat) <= 60 and not any(isinstance(v, (dict, list)) for v in value):
            return flat
        return "[\n" + ",\n".join(inner + template_text(v, inner) for v in value) + "\n" + indent + "]"
    return _json(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)
