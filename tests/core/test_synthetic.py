"""The synthesiser (dpdesk.core.dp.synthetic): domain limits, budget split, noisy measurements, a fit and a
sampler that read only released values, and utility against the independent baseline."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from dpdesk.core.dp import mechanisms as mech
from dpdesk.core.dp import synthetic as syn
from dpdesk.core.dp.synthetic.domain import Attribute
from dpdesk.core.dp.synthetic.fit import TreeModel
from dpdesk.core.dp.synthetic.measure import Measurements
from dpdesk.core.dp.synthetic.sample import systematic_counts


def small_table(n: int, rng: np.random.Generator) -> tuple[list[Attribute], np.ndarray]:
    """Five correlated columns: a (3 categories), b (2, depends on a), x (float 0-10 in 8 bins, depends on
    a), y (int 0-20 in 6 bins, depends on x), c (4 categories, depends on y and b)."""
    a = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    b = (rng.random(n) < np.array([0.2, 0.5, 0.9])[a]).astype(np.int64)
    x = np.clip(rng.normal(2.0 + 3.0 * a, 1.2, n), 0, 10)
    y = np.clip(np.round(2.0 * x + rng.normal(0, 2.0, n)), 0, 20)
    c = np.clip((y // 6).astype(np.int64) + b - (rng.random(n) < 0.2), 0, 3)
    attrs = [
        Attribute("a", "category", categories=("p", "q", "r")),
        Attribute("b", "category", categories=("no", "yes")),
        Attribute("x", "float", edges=(0, 1.25, 2.5, 3.75, 5, 6.25, 7.5, 8.75, 10), bounds=(0.0, 10.0)),
        Attribute("y", "int", edges=(0, 4, 7, 10, 13, 16, 21), bounds=(0.0, 20.0)),
        Attribute("c", "category", categories=("c0", "c1", "c2", "c3")),
    ]
    raw = [a, b, x, y, c]
    codes = np.stack([syn.encode(at, np.asarray(v), None) for at, v in zip(attrs, raw, strict=True)], axis=1)
    return attrs, codes


def mean_two_way_tvd(real: np.ndarray, fake: np.ndarray, sizes: tuple[int, ...]) -> float:
    out = []
    for i in range(len(sizes)):
        for j in range(i + 1, len(sizes)):
            m = sizes[i] * sizes[j]
            p = np.bincount(real[:, i] * sizes[j] + real[:, j], minlength=m) / len(real)
            q = np.bincount(fake[:, i] * sizes[j] + fake[:, j], minlength=m) / max(1, len(fake))
            out.append(0.5 * float(np.abs(p - q).sum()))
    return float(np.mean(out))


# ----------------------------------------------------------------------------- domain


def test_domains_past_the_stated_limits_are_refused_with_a_message() -> None:
    cat = Attribute("c", "category", categories=("a", "b"))
    with pytest.raises(syn.DomainError, match="at least 2 columns"):
        syn.check_domain([cat])
    with pytest.raises(syn.DomainError, match=f"at most {syn.MAX_COLUMNS} columns"):
        syn.check_domain([cat] * (syn.MAX_COLUMNS + 1))
    wide = Attribute(
        "w", "float", edges=tuple(float(i) for i in range(syn.MAX_LEVELS + 2)), bounds=(0.0, 1e3)
    )
    with pytest.raises(syn.DomainError, match="levels"):
        syn.check_domain([cat, wide])
    big = Attribute("v", "float", edges=tuple(float(i) for i in range(81)), bounds=(0.0, 80.0))
    with pytest.raises(syn.DomainError, match="two-way table of 6400 cells"):
        syn.check_domain([cat, big, big])
    syn.check_domain([cat, big])  # 160 cells: fine


def test_default_bins_cover_the_bounds() -> None:
    assert syn.default_edges("float", (0.0, 10.0), 5) == (0.0, 2.0, 4.0, 6.0, 8.0, 10.0)
    assert syn.default_edges("int", (1.0, 4.0), 10) == (1.0, 2.0, 3.0, 4.0, 5.0)
    edges = syn.default_edges("int", (0.0, 100.0))  # 101 values: past PER_VALUE_LEVELS
    assert len(edges) == syn.DEFAULT_BINS + 1 and edges[0] == 0.0 and edges[-1] == 100.0
    edges = syn.default_edges("int", (0.0, 99.0))  # 100 values: one level each
    assert edges == tuple(float(v) for v in range(101)) and syn.PER_VALUE_LEVELS == 100


def test_values_are_drawn_inside_their_bins_and_missing_is_a_level() -> None:
    rng = np.random.Generator(np.random.PCG64(5))
    f = Attribute("f", "float", edges=(0.0, 1.0, 5.0, 10.0), bounds=(-2.0, 12.0), missing_level=True)
    x = np.array([-2.0, 0.5, 1.0, 4.9, 9.0, 12.0, np.nan])
    codes = syn.encode(f, x, np.isnan(x))
    assert codes.tolist() == [0, 0, 1, 1, 2, 2, 3]
    many = np.repeat(np.arange(4), 500)
    vals = syn.decode(f, many, rng)
    for level, lo, hi in ((0, -2.0, 1.0), (1, 1.0, 5.0), (2, 5.0, 12.0)):
        got = [v for v, c in zip(vals, many.tolist(), strict=True) if c == level]
        assert all(isinstance(v, float) and lo <= v <= hi for v in got)
        assert max(got) - min(got) > 0.8 * (hi - lo)  # spread over the bin, not its edge
    assert all(v is None for v, c in zip(vals, many.tolist(), strict=True) if c == 3)
    i = Attribute("i", "int", edges=(0.0, 3.0, 7.0), bounds=(0.0, 9.0))
    ints = syn.decode(i, np.repeat(np.arange(2), 400), rng)
    assert set(ints[:400]) == {0, 1, 2} and set(ints[400:]) == set(range(3, 10))
    c = Attribute("c", "category", categories=("u", "v"), missing_level=True)
    assert syn.decode(c, np.array([1, 0, 2]), rng) == ["v", "u", None]


# ----------------------------------------------------------------------------- budget and sensitivities


@pytest.mark.parametrize("delta", [1e-6, 1e-9, 0.0])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("replace", [False, True])
def test_the_split_spends_the_budget_and_no_more(eps: float, delta: float, replace: bool) -> None:
    s = syn.split_budget(eps, delta, 7, replace=replace, k=2)
    total = s.total_epsilon()
    assert total <= eps
    assert total >= eps * (1 - 1e-6)
    parts = s.one_way_cost() + s.select_cost() + s.two_way_cost()
    if delta > 0:
        assert parts <= s.rho and parts >= s.rho * (1 - 1e-9)
        assert mech.rho_to_epsilon(s.rho, delta) <= eps
        assert s.select_cost() == pytest.approx(6 * s.select_epsilon**2 / 8.0)
        assert s.two_way_cost() == pytest.approx(6 * s.l2**2 / (2.0 * s.two_way_scale**2))
    else:
        assert s.two_way_cost() == pytest.approx(6 * s.l1 / s.two_way_scale)


def test_sensitivities_per_relation() -> None:
    add = syn.split_budget(1.0, 1e-6, 4, replace=False, k=3)
    rep = syn.split_budget(1.0, 1e-6, 4, replace=True, k=3)
    assert (add.l1, add.l2, add.score_sensitivity) == (3.0, 3.0, 3.0)
    assert (rep.l1, rep.l2, rep.score_sensitivity) == (6.0, pytest.approx(3.0 * math.sqrt(2.0)), 6.0)


def test_a_neighbour_moves_each_marginal_and_each_score_by_at_most_the_stated_sensitivity() -> None:
    rng = np.random.Generator(np.random.PCG64(3))
    attrs, codes = small_table(300, rng)
    base = syn.exact_marginals(codes, attrs)
    rep = syn.split_budget(1.0, 1e-6, len(attrs), replace=True)
    add = syn.split_budget(1.0, 1e-6, len(attrs))
    for trial in range(40):
        other = codes.copy()
        other[trial] = [rng.integers(0, a.size) for a in attrs]  # replace one row
        removed = np.delete(codes, trial, axis=0)  # remove one row
        for neighbour, split in ((other, rep), (removed, add)):
            m = syn.exact_marginals(neighbour, attrs)
            for p, table in m.two_way.items():
                diff = (table - base.two_way[p]).ravel()
                assert (
                    np.abs(diff).sum() <= split.l1 and math.sqrt(float((diff**2).sum())) <= split.l2 + 1e-12
                )


# ----------------------------------------------------------------------------- measurements


@pytest.mark.slow
def test_every_measurement_is_noisy_with_its_stated_scale() -> None:
    """The released cells minus the exact ones have the stated sigma (Gaussian) or sqrt(2) b (Laplace), pooled
    over 20 measurements of the table (over 2,000 cells each). The sample standard deviation's relative standard
    error is sqrt((kurtosis - 1) / 4n): 0.016 for the Gaussian, 0.025 for the Laplace (kurtosis 6); the 25%
    band is 10 of them, so under the normal approximation the false-failure rate is below 1e-20. (With a single
    measurement, ~100 cells, the Laplace band was 2.4 standard errors: it failed about 1 run in 50.)"""
    rng = np.random.Generator(np.random.PCG64(11))
    attrs, codes = small_table(2000, rng)
    exact = syn.exact_marginals(codes, attrs)
    split = syn.split_budget(1.0, 1e-6, len(attrs))
    pure_split = syn.split_budget(1.0, 0.0, len(attrs))
    gauss, laplace = [], []
    for _ in range(20):
        released = syn.measure_marginals(exact, split)
        gauss += [np.asarray(m.noisy) - exact.two_way[m.columns].ravel() for m in released.two_way]
        res1 = np.concatenate([np.asarray(m.noisy) - exact.one_way[m.columns[0]] for m in released.one_way])
        assert float(np.abs(res1).max()) > 0
        assert len(released.selected) == len(attrs) - 1
        pure = syn.measure_marginals(exact, pure_split)
        laplace += [np.asarray(m.noisy) - exact.two_way[m.columns].ravel() for m in pure.two_way]
    res = np.concatenate(gauss)
    assert len(res) >= 2000
    assert 0.75 * split.two_way_scale <= float(res.std()) <= 1.25 * split.two_way_scale
    res = np.concatenate(laplace)
    assert len(res) >= 2000
    b = pure_split.two_way_scale
    assert 0.75 * math.sqrt(2) * b <= float(res.std()) <= 1.25 * math.sqrt(2) * b


def test_selection_and_measurement_go_through_the_mechanisms(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_g, real_e = mech.draw_gaussian, mech.draw_exponential
    monkeypatch.setattr(mech, "draw_gaussian", lambda *a: calls.append("g") or real_g(*a))
    monkeypatch.setattr(mech, "draw_exponential", lambda *a: calls.append("e") or real_e(*a))
    rng = np.random.Generator(np.random.PCG64(2))
    attrs, codes = small_table(500, rng)
    syn.measure(codes, attrs, syn.split_budget(1.0, 1e-6, len(attrs)))
    assert calls.count("g") == len(attrs) + len(attrs) - 1
    assert calls.count("e") == len(attrs) - 1


def test_with_delta_zero_the_measurements_are_laplace(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, float]] = []
    real_l = mech.draw_laplace
    monkeypatch.setattr(mech, "draw_gaussian", lambda *a: pytest.fail("a Gaussian with delta = 0"))
    monkeypatch.setattr(mech, "draw_laplace", lambda v, s, e: calls.append(("l", e)) or real_l(v, s, e))
    rng = np.random.Generator(np.random.PCG64(2))
    attrs, codes = small_table(500, rng)
    split = syn.split_budget(0.8, 0.0, len(attrs), replace=True)
    syn.measure(codes, attrs, split)
    assert len(calls) == 2 * len(attrs) - 1
    # pure composition: the marginals' epsilons and the rounds' add up to the query's epsilon
    assert sum(e for _l, e in calls) + split.rounds * split.select_epsilon == pytest.approx(0.8)


# ----------------------------------------------------------------------------- post-processing only


def test_the_fit_and_the_sampler_take_only_released_values() -> None:
    assert [(p.name, p.annotation) for p in inspect.signature(syn.fit).parameters.values()] == [
        ("released", "Measurements"),
        ("version", "int"),  # public: which fit (kept in the ledger entry)
    ]
    assert [p.annotation for p in inspect.signature(syn.sample_codes).parameters.values()] == [
        "TreeModel",
        "int",
        "np.random.Generator",
    ]
    assert [p.annotation for p in inspect.signature(syn.replay).parameters.values()] == [
        "Measurements",
        "int | None",
        "int",
    ]
    # what is released holds numbers of noisy marginals and public facts, no array of rows
    assert Measurements.__dataclass_fields__.keys() == {"split", "sizes", "one_way", "selected", "two_way"}
    assert TreeModel.__dataclass_fields__.keys() == {"sizes", "total", "one_way", "edges", "two_way"}


def test_the_synthetic_table_is_a_function_of_the_released_values_and_the_seed() -> None:
    rng = np.random.Generator(np.random.PCG64(7))
    attrs, codes = small_table(3000, rng)
    out = syn.synthesise(codes, attrs, syn.split_budget(1.0, 1e-6, len(attrs)))
    assert 0 < out.seed < 2**128
    model, again = syn.replay(out.released, None, out.seed)
    assert np.array_equal(again, out.codes)
    for mine, theirs in zip(model.two_way, out.model.two_way, strict=True):
        assert np.array_equal(mine, theirs)
    _m, fixed = syn.replay(out.released, 123, out.seed)
    assert fixed.shape == (123, len(attrs))


def test_the_fitted_model_is_consistent_and_non_negative() -> None:
    """Both margins of every two-way table agree with the one-way tables (fit version 2 goes on until they do:
    version 1 failed this in about 1 run in 75)."""
    rng = np.random.Generator(np.random.PCG64(9))
    attrs, codes = small_table(800, rng)
    released = syn.measure(codes, attrs, syn.split_budget(0.3, 1e-6, len(attrs)))
    model = syn.fit(released)
    for t in (*model.one_way, *model.two_way):
        assert float(t.min()) >= 0.0 and float(t.sum()) == pytest.approx(model.total)
    for (a, b), t in zip(model.edges, model.two_way, strict=True):
        assert np.allclose(t.sum(axis=1), model.one_way[a])
        assert np.allclose(t.sum(axis=0), model.one_way[b], atol=1e-6 * model.total)


def test_systematic_rounding_allocates_floors_or_ceilings_summing_to_n() -> None:
    rng = np.random.Generator(np.random.PCG64(1))
    for _ in range(200):
        p = rng.random(7) * (rng.random(7) < 0.7)
        n = int(rng.integers(0, 500))
        counts = systematic_counts(p, n, rng)
        assert int(counts.sum()) == n and counts.min() >= 0
        if p.sum() > 0:
            e = n * p / p.sum()
            assert np.all(counts >= np.floor(e - 1e-9)) and np.all(counts <= np.ceil(e + 1e-9))


def test_siblings_are_not_made_to_move_together_by_row_order() -> None:
    """A star a -> b, a -> c with b and c uniform given a: the sampled (b, c) pairs must be near uniform.
    Allocating the children's levels in row order within each parent group would give b == c on every row
    (TVD 0.5). With 4000 rows the TVD's standard deviation is below 0.01; 0.05 fails with probability < 1e-8."""
    half = np.full((2, 2), 1000.0)
    model = TreeModel((2, 2, 2), 4000.0, (np.full(2, 2000.0),) * 3, ((0, 1), (0, 2)), (half, half))
    codes = syn.sample_codes(model, 4000, np.random.Generator(np.random.PCG64(4)))
    joint = np.bincount(codes[:, 1] * 2 + codes[:, 2], minlength=4) / 4000
    assert 0.5 * float(np.abs(joint - 0.25).sum()) < 0.05


# ----------------------------------------------------------------------------- utility


@pytest.mark.statistical
def test_the_synthesiser_beats_the_independent_baseline_by_a_margin() -> None:
    """5 correlated columns, 4000 rows, eps = 1, delta = 1e-6: dpdesk's mean two-way TVD is at most 0.3x the
    independent baseline's (each column sampled from its own noisy histogram, same budget), on average
    over 3 runs of each. Observed offline over 200 repetitions of this test (the noise and the sampling
    varying, the table fixed): ratio mean 0.121, standard deviation 0.0046, max 0.132, 0 failures; the
    threshold is 39 standard deviations above the mean, so the false-failure rate is below 1/200 observed
    and, the ratio being a smooth mean of many cells (near normal), far below 1e-9."""
    real_rng = np.random.Generator(np.random.PCG64(2024))
    attrs, codes = small_table(4000, real_rng)
    sizes = tuple(a.size for a in attrs)
    ours, base = [], []
    for _ in range(3):
        out = syn.synthesise(codes, attrs, syn.split_budget(1.0, 1e-6, len(attrs)))
        ours.append(mean_two_way_tvd(codes, out.codes, sizes))
        model = syn.fit(syn.measure_independent(codes, attrs, 1.0, 1e-6))
        fake = syn.sample_codes(model, round(model.total), np.random.Generator(np.random.PCG64(out.seed)))
        base.append(mean_two_way_tvd(codes, fake, sizes))
    assert np.mean(ours) <= 0.3 * np.mean(base), (ours, base)


def test_the_default_row_count_is_the_fitted_total_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no ``rows``, the table has the fitted model's total rows, but never more than MAX_ROWS (its CSV is
    built in memory); an explicit ``rows`` is kept."""
    from dpdesk.core.dp.synthetic import pipeline

    attrs, codes = small_table(2000, np.random.Generator(np.random.PCG64(3)))
    released = syn.measure(codes, attrs, syn.split_budget(1.0, 1e-6, len(attrs)))
    model, drawn = pipeline.replay(released, None, 7)
    assert len(drawn) == round(model.total) and abs(len(drawn) - 2000) < 200
    monkeypatch.setattr(pipeline, "MAX_ROWS", 50)
    _model, drawn = pipeline.replay(released, None, 7)
    assert len(drawn) == 50
    _model, drawn = pipeline.replay(released, 80, 7)
    assert len(drawn) == 80
    assert pipeline.table_rows(-3.0, None) == 0


def test_the_fit_meets_both_margins_of_every_two_way_table() -> None:
    """Fit version 2 goes on with proportional fitting until both margins hold: over 150 measurements of a table
    where version 1 (200 rounds) left a column margin up to 0.35% of the total off in about 1 fit in 75, every
    version-2 two-way table's column sums are within 1e-6 of the total of the one-way marginal; and version 2
    equals version 1 wherever version 1 had converged (so tables released before regenerate the same)."""
    from dpdesk.core.dp.synthetic.fit import fit

    rng = np.random.Generator(np.random.PCG64(9))
    attrs, codes = small_table(800, rng)
    exact = syn.exact_marginals(codes, attrs)
    split = syn.split_budget(0.3, 1e-6, len(attrs))
    for _ in range(150):
        released = syn.measure_marginals(exact, split)
        new, old = fit(released), fit(released, 1)
        dev_new = max(
            float(np.abs(t.sum(axis=0) - new.one_way[b]).max())
            for (_a, b), t in zip(new.edges, new.two_way, strict=True)
        )
        dev_old = max(
            float(np.abs(t.sum(axis=0) - old.one_way[b]).max())
            for (_a, b), t in zip(old.edges, old.two_way, strict=True)
        )
        assert dev_new <= 1e-6 * new.total
        if dev_old <= 1e-12 * old.total:
            assert all(np.array_equal(x, y) for x, y in zip(new.two_way, old.two_way, strict=True))
    with pytest.raises(ValueError):
        fit(released, 3)


def released_where_version_1_did_not_converge() -> Measurements:
    """Released marginals (numpy's noise, seed 3, found by search) whose version-1 fit left a column margin 0.09% of
    the total off: there the two versions differ."""
    attrs, codes = small_table(800, np.random.Generator(np.random.PCG64(9)))
    exact = syn.exact_marginals(codes, attrs)
    split = syn.split_budget(0.3, 1e-6, len(attrs))
    rng = np.random.Generator(np.random.PCG64(3))

    def noise(v: list[int], _sp: syn.Split, scale: float) -> list[int]:
        return [int(x) for x in np.rint(np.asarray(v, float) + rng.normal(0, scale, len(v)))]

    def pick(scores: list[float], sp: syn.Split) -> int:
        u = np.asarray(scores) * sp.select_epsilon / (2 * sp.score_sensitivity)
        return int(np.argmax(u + rng.gumbel(size=len(u))))

    return syn.measure_marginals(exact, split, noise, pick)


def test_a_table_regenerates_with_the_fit_it_was_made_with() -> None:
    """A release's ledger field names its fit (``fit``: 2); an entry from before (no ``fit``) regenerates with
    version 1, so its package's CSV still matches; the two differ on these released values."""
    from dpdesk.core.dp.statistics import synthetic as stat

    released = released_where_version_1_did_not_converge()
    attrs, _codes = small_table(10, np.random.Generator(np.random.PCG64(1)))
    fields = {**stat.measurements_to_dict(released), "rows": 500, "seed": "77"}
    v1, _c1 = stat.synthetic_table(attrs, released, 500, 77, 1)
    v2, _c2 = stat.synthetic_table(attrs, released, 500, 77, 2)
    assert v1 != v2
    for version, bound in ((2, 1e-6), (1, None)):
        model = syn.fit(released, version)
        dev = max(
            float(np.abs(t.sum(axis=0) - model.one_way[b]).max())
            for (_a, b), t in zip(model.edges, model.two_way, strict=True)
        )
        assert (dev <= bound * model.total) if bound is not None else (dev > 1e-4 * model.total)
    assert stat.fit_version_of(fields) == 1 and stat.fit_version_of({**fields, "fit": 2}) == 2
    assert stat.synthetic_table(attrs, released, 500, 77, stat.fit_version_of(fields))[0] == v1
