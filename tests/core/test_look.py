"""A query's simulated look (dpdesk.core.preview.look), without Qt: drawn on a stand-in table, its intervals those
of a release, the same draws rescaled when the epsilon changes, its numbers in plain notation."""

from __future__ import annotations

import json
import re
from typing import Any

from dpdesk.core.plan.reader import parse_plan
from dpdesk.core.preview.look import look_caption, look_figure, look_headline, query_look, stand_in_rows
from dpdesk.core.preview.simulate import stand_in_table
from tests.conftest import SAMPLES


def sample(**changes: Any) -> Any:
    data = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))
    for q in data["queries"]:
        q.update(changes.get(q["name"], {}))
    return parse_plan(data)


def test_a_grouped_sum_is_drawn_in_plain_numbers_with_its_intervals() -> None:
    import numpy as np

    plan = sample()
    table = stand_in_table(plan, stand_in_rows(plan), np.random.default_rng(0))
    look = query_look(plan, "wage by region", table=table)
    assert look.groups == ("northeast", "midwest", "south", "west") and look.rows == 2000 and not look.draws
    widths = look.half_widths()
    assert all(w is not None and w > 0 for w in widths)
    text = look_headline(look) + look_caption(look)
    assert "(±" in text and not re.search(r"\de[+-]?\d", text), text
    fig = look_figure(look)
    fig.canvas.draw()
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert ticks and not any("e" in t for t in ticks), ticks  # 2000000, never 2e6 or an offset above the axis
    assert fig.axes[0].yaxis.get_offset_text().get_text() == ""


def test_a_larger_epsilon_rescales_the_same_draws() -> None:
    """Seeded by the query's name: at ten times the epsilon the count's noise is a tenth (Laplace draws scale
    with b; rounding to whole counts moves each by at most 1)."""
    import numpy as np

    low, high = sample(people={"epsilon": 0.1}), sample(people={"epsilon": 1.0})
    table = stand_in_table(low, 2000, np.random.default_rng(0))
    a, b = query_look(low, "people", table=table), query_look(high, "people", table=table)
    assert a.truths == b.truths == ("2000",)
    noise_a = np.array([float(v) - 2000 for v in a.draws])
    noise_b = np.array([float(v) - 2000 for v in b.draws])
    assert np.max(np.abs(noise_a / 10 - noise_b)) <= 1.0
    assert a.half_widths()[0] == 30.0 and b.half_widths()[0] == 3.0
