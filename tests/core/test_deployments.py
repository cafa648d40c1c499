"""The deployments scale: well-formed published budgets with sources, and the plain-words placement."""

from __future__ import annotations

import math
import re
from urllib.parse import urlparse

import pytest

from dpdesk.core.dp import deployments as dep
from dpdesk.resources import resource


def test_every_deployment_is_well_formed_with_a_source() -> None:
    items = dep.deployments()
    assert len(items) >= 6
    assert [d.epsilon for d in items] == sorted(d.epsilon for d in items)
    for d in items:
        assert math.isfinite(d.epsilon) and 0 < d.epsilon < 100, d
        assert 0 <= d.delta < 1e-4, d
        assert d.model in ("central", "local"), d
        for url in (d.source_url, d.checked_at):
            u = urlparse(url)
            assert u.scheme in ("http", "https") and u.netloc, (d.name, url)
        assert d.source_title.strip() and d.organisation.strip()
        assert d.unit.strip() and d.period.strip() and d.per.strip() and d.short.strip()
    assert len({(d.name, d.epsilon) for d in items}) == len(items)
    # several kinds of unit and period: the scale is flagged as not directly comparable for that reason
    assert len({d.per for d in items}) >= 3


def test_guide_pages_list_the_same_numbers_as_the_data() -> None:
    """The choosing-epsilon page of each language states every deployment's epsilon (no drifting copies)."""
    for lang in ("en", "zh_CN"):
        page = (resource("guide", lang) / "08_choosing_epsilon.md").read_text(encoding="utf-8")
        rows = [line for line in page.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
        numbers = sorted(float(re.findall(r"\|\s*([0-9.]+)", r)[0]) for r in rows[1:])
        assert numbers == sorted(d.epsilon for d in dep.deployments()), lang


@pytest.mark.parametrize(
    ("eps", "below", "above"),
    [(0.5, None, 1.68), (1.68, 1.68, 2.0), (3.0, 2.19, 4.0), (20.0, 16.0, 34.9), (50.0, 34.9, None)],
)
def test_neighbours_bracket_the_epsilon(eps: float, below: float | None, above: float | None) -> None:
    b, a = dep.neighbours(eps)
    assert (b.epsilon if b else None) == below
    assert (a.epsilon if a else None) == above


def test_describe_places_the_plan_and_says_the_numbers_are_not_comparable() -> None:
    text = dep.describe(0.9)
    assert "0.9" in text and "below every published deployment" in text
    assert "1.68" in text and "per user per day" in text
    assert "not directly comparable" in text
    assert "weak promise" not in text
    mid = dep.describe(3.0)
    assert "2.19" in mid and "4" in mid and "at or above" in mid
    high = dep.describe(8.0)
    assert "weak promise" in high and "e^8" in high
    assert "weak promise" in dep.describe(dep.HIGH_EPSILON)
    assert "weak promise" not in dep.describe(4.99)
    with pytest.raises(ValueError, match="epsilon"):
        dep.describe(float("nan"))


def test_describe_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    text = dep.describe(0.9)
    assert "你的计划总 ε 为 0.9" in text and "不能直接比较" in text and "每用户每天" in text
