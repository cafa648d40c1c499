"""The adaptive synthesiser's private step (dpdesk.core.dp.synthetic.aim): the budget it spends, what goes
through a mechanism, and the selection score's sensitivity checked by brute force on neighbouring tables."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from dpdesk.core.dp.synthetic import aim, pgm
from dpdesk.core.dp.synthetic.pgm import Model, Observation, fit_model


def _table(n: int, sizes: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, s, n) for s in sizes], axis=1)
    codes[:, 1] = (codes[:, 0] + rng.integers(0, 2, n)) % sizes[1]  # a dependence to find
    return codes


@pytest.mark.parametrize(("rho", "replace", "k"), [(0.05, False, 1), (0.5, True, 1), (2.0, False, 3)])
def test_spends_exactly_rho(rho: float, replace: bool, k: int) -> None:
    """Whatever the rounds and annealing do, the measurements and selections cost rho (zCDP) in total, never
    more: the booked epsilon is the conversion of rho. Noise and selection are the real mechanisms' stand-ins
    (the budget arithmetic does not depend on their values)."""
    sizes = (3, 4, 2, 3)
    codes = _table(500, sizes, 1)
    l1 = 2.0 * k if replace else float(k)
    l2 = math.sqrt(2.0) * k if replace else float(k)
    budget = aim.Budget(rho, l1, l2, len(sizes))
    rng = np.random.default_rng(2)
    released, _model = aim.adaptive_measure(
        codes,
        sizes,
        budget,
        noise=lambda v, _l2, s: [int(x + round(rng.normal(0, s))) for x in v],
        pick=lambda scores, _s, _e: int(np.argmax(scores)),
        iterations=10,
    )
    assert released.spent() == pytest.approx(rho, rel=1e-12)
    assert released.spent() <= rho * (1 + 1e-12)
    assert len(released.rounds) > len(sizes)


def test_every_released_value_went_through_a_mechanism() -> None:
    """Each round's counts are the noise function's output and each selection the pick function's: counted."""
    sizes = (3, 3, 2)
    codes = _table(300, sizes, 3)
    calls = {"noise": 0, "pick": 0}
    cands = aim.workload(sizes)

    def noise(values: list[int], l2: float, sigma: float) -> list[int]:
        calls["noise"] += 1
        return [v + 1000 for v in values]  # recognisable

    def pick(scores: list[float], sensitivity: float, eps: float) -> int:
        calls["pick"] += 1
        # the selection's sensitivity: the largest weight times a marginal's L1 sensitivity (2 under replace)
        assert sensitivity == max(c.weight for c in cands) * 2.0
        assert len(scores) >= 1 and eps > 0
        return 0

    released, _ = aim.adaptive_measure(
        codes, sizes, aim.Budget(0.3, 2.0, math.sqrt(2.0), len(sizes)), noise=noise, pick=pick, iterations=5
    )
    assert calls["noise"] == len(released.rounds)
    assert calls["pick"] == len(released.rounds) - len(sizes)
    for r in released.rounds:
        exact = aim.exact_marginal(codes, sizes, r.clique).ravel()
        assert list(r.noisy) == [int(v) + 1000 for v in exact]


def _scores(
    codes: np.ndarray, sizes: tuple[int, ...], model: Model, cands: list[aim.Candidate], sigma: float
) -> list[float]:
    out = []
    for c in cands:
        err = float(np.abs(aim.exact_marginal(codes, sizes, c.clique) - model.project(c.clique)).sum())
        out.append(c.weight * (err - math.sqrt(2 / math.pi) * sigma * math.prod(sizes[a] for a in c.clique)))
    return out


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
def test_score_sensitivity_by_brute_force(relation: str) -> None:
    """For every neighbour of small tables (a row added or removed, or one row replaced by any other), every
    candidate's score moves by at most its weight times a marginal's L1 sensitivity (1, or 2 under replace), and
    so by at most the sensitivity the rounds use (the largest weight times it)."""
    sizes = (2, 3, 2)
    cands = aim.workload(sizes)
    cells = list(itertools.product(*(range(s) for s in sizes)))
    rng = np.random.default_rng(11)
    model = fit_model(
        sizes,
        [Observation((i,), rng.uniform(1, 5, sizes[i]), 1.0) for i in range(len(sizes))],
        iterations=5,
    )
    l1 = 2.0 if relation == "replace" else 1.0
    bound = max(c.weight for c in cands) * l1
    worst = 0.0
    for n in (1, 2, 4):
        base = np.array([cells[int(i)] for i in rng.integers(0, len(cells), n)], dtype=np.int64)
        s0 = _scores(base, sizes, model, cands, 1.3)
        neighbours = []
        if relation == "add_remove":
            neighbours += [np.vstack([base, np.array([c])]) for c in cells]
            neighbours += [np.delete(base, i, axis=0) for i in range(n)]
        else:
            for i in range(n):
                for c in cells:
                    nb = base.copy()
                    nb[i] = c
                    neighbours.append(nb)
        for nb in neighbours:
            s1 = _scores(nb, sizes, model, cands, 1.3)
            for c, a, b in zip(cands, s0, s1, strict=True):
                assert abs(a - b) <= c.weight * l1 + 1e-9
                worst = max(worst, abs(a - b))
    assert worst <= bound + 1e-9
    assert worst >= 0.5 * bound  # the bound is reached up to the pairs' weights: it is not loose by much


def test_workload_weights_and_triples() -> None:
    """Pairs and triples: a candidate's weight is its overlap with the workload; triples only where small."""
    cands = {c.clique: c.weight for c in aim.workload((2, 3, 4))}
    assert set(cands) == {(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)}
    assert cands[(0, 1, 2)] == 3.0 and cands[(0, 1)] == 2.0 and cands[(0,)] == 1.0
    big = {c.clique for c in aim.workload((100, 100, 100, 2))}
    assert all(len(c) <= 2 for c in big)
    # every triple small, but all of them together past the memory the rounds may hold: pairs only
    wide = aim.workload((40,) * 30)
    assert aim.MAX_TRIPLE_CELLS >= 40**3 and math.comb(30, 3) * 40**3 > aim.MAX_WORKLOAD_CELLS
    assert all(len(c.clique) <= 2 for c in wide)
    assert any(len(c.clique) == 3 for c in aim.workload((40,) * 10))


def test_the_model_stays_within_its_size_limit() -> None:
    """The rounds never pick a marginal that would take the junction tree past the limit (public sizes)."""
    sizes = (6, 6, 6, 6, 6)
    codes = _table(400, sizes, 5)
    released, model = aim.adaptive_measure(
        codes,
        sizes,
        aim.Budget(5.0, 1.0, 1.0, len(sizes)),
        max_cells=300,
        noise=lambda v, _l2, _s: list(v),
        pick=lambda scores, _s, _e: int(np.argmax(scores)),
        iterations=5,
    )
    assert model.tree.cells <= 300
    assert any(len(r.clique) == 2 for r in released.rounds)


def test_a_release_is_fitted_once_per_process_and_draws_the_same_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The release writes the table, and the app's Results tab, the report and the package draw it again: the final
    fit (FINAL_ITERATIONS of mirror descent) runs once per released rounds, and every draw is the same table. Another
    release (one count changed) is fitted anew; a warm start is never taken from the kept fits."""
    sizes = (3, 4, 2)
    codes = _table(400, sizes, 5)
    rng = np.random.default_rng(6)
    released, _model = aim.adaptive_measure(
        codes,
        sizes,
        aim.Budget(0.5, 1.0, 1.0, len(sizes)),
        noise=lambda v, _l2, s: [int(x + round(rng.normal(0, s))) for x in v],
        pick=lambda scores, _s, _e: int(np.argmax(scores)),
        iterations=5,
    )
    fits: list[int] = []

    def counted(*args: object, **kwargs: object) -> Model:
        fits.append(1)
        return fit_model(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(aim, "fit_model", counted)
    first = aim.draw_codes(released, None, 1234)[0]
    again = aim.draw_codes(released, None, 1234)[0]
    assert len(fits) == 1 and np.array_equal(first, again)
    other = aim.Released(released.sizes, released.budget, list(released.rounds))
    r0 = other.rounds[0]
    other.rounds[0] = aim.Round(r0.clique, (r0.noisy[0] + 1, *r0.noisy[1:]), r0.sigma, r0.select_epsilon)
    aim.draw_codes(other, None, 1234)
    assert len(fits) == 2
    aim.final_fit(released, warm=aim.final_fit(released))
    assert len(fits) == 3


def _plain_tree_cells(sizes: list[int], cliques: list[tuple[int, ...]]) -> int:
    """The junction tree's cells by the elimination rule read plainly (``_plain_triangulate``, sets: the column whose
    elimination adds the fewest fill-in edges first, then the one whose clique has the fewest cells, then the lowest
    column); the cells of the maximal cliques summed."""
    from tests.core.test_synthetic_pgm import _plain_triangulate

    maximal = {
        frozenset(a for a in range(len(sizes)) if m >> a & 1) for m in _plain_triangulate(sizes, cliques)
    }
    return sum(math.prod(sizes[a] for a in c) for c in maximal)


def _plain_fits(sizes: list[int], held: list[tuple[int, ...]], clique: tuple[int, ...], limit: float) -> bool:
    """The rounds' size rule read plainly: a clique a held one contains, or a junction tree within the limit."""
    if any(set(clique) <= set(h) for h in held):
        return True
    return _plain_tree_cells(sizes, [*held, clique]) <= limit


def _random_case(rng: random.Random) -> tuple[list[int], list[tuple[int, ...]], tuple[int, ...]]:
    """Random sizes (now and then a column of 0 levels; one case in three a domain too large for numpy's count, so
    counted one by one, stopped past the limit), held cliques and a clique."""
    d = rng.randint(1, 11)
    scale = 1 << 20 if rng.random() < 1 / 3 else 1
    sizes = [
        scale * (rng.choice((0, 1, 2, 3, 4, 5, 6, 7)) if rng.random() < 0.05 else rng.randint(1, 7))
        for _ in range(d)
    ]
    held = sorted(
        {tuple(sorted(rng.sample(range(d), rng.randint(1, min(d, 3))))) for _ in range(rng.randint(0, 2 * d))}
    )
    clique = tuple(sorted(rng.sample(range(d), rng.randint(1, min(d, 4)))))
    return sizes, held, clique


def test_the_size_check_decides_as_the_rule_read_plainly() -> None:
    """``_fits`` (held graphs kept, graphs counted once, the count stopped past the limit, the counts kept) answers
    as the rule read plainly on 1,500 random (sizes, held cliques, clique), each asked at limits on both sides of
    its tree's cells and of the clique's own cells, in a random order (what a stopped count kept must not decide a
    larger limit), and again through an equal graph; the same held cliques and clique under other sizes get their
    own answers."""
    rng = random.Random(34)
    aim._FIT_CACHE.clear()
    asked = {True: 0, False: 0}
    for _ in range(1500):
        sizes, held, clique = _random_case(rng)
        cells = _plain_tree_cells(sizes, [*held, clique])
        own = math.prod(sizes[a] for a in clique)
        limits = [
            cells - 1,
            cells - 0.5,
            cells,
            cells + 0.5,
            cells + 1,
            own - 1,
            own,
            own + 1,
            0,
            rng.uniform(0, 2 * cells),
        ]
        rng.shuffle(limits)
        for limit in limits:
            want = _plain_fits(sizes, held, clique, limit)
            asked[want] += 1
            assert aim._fits(tuple(sizes), held, clique, limit) is want, (sizes, held, clique, limit)
        # the same graph: the clique's pairs given as held cliques, the clique itself asked once more
        pairs = sorted({*held, *itertools.combinations(clique, 2)}) if len(clique) > 2 else held
        for limit in limits[:3]:
            want = _plain_fits(sizes, pairs, clique, limit)
            assert aim._fits(tuple(sizes), pairs, clique, limit) is want, (sizes, pairs, clique, limit)
    assert min(asked.values()) > 2000
    # the same cliques over other sizes: a count kept for one table never answers for another
    held, clique = [(0, 1), (1, 2), (2, 3)], (0, 3)
    for sizes in ((2, 2, 2, 2), (9, 9, 9, 9), (2, 2, 2, 2)):
        cells = _plain_tree_cells(list(sizes), [*held, clique])
        assert aim._fits(sizes, held, clique, cells) and not aim._fits(sizes, held, clique, cells - 1)
        assert aim._fits(sizes, held, clique, 100) is (cells <= 100)


def test_the_count_stops_only_past_the_limit() -> None:
    """``tree_cells_within`` (one graph) gives the tree's exact cells while they are within the limit, and otherwise
    a part of them already above it (never more than all of them)."""
    rng = random.Random(35)
    for _ in range(1000):
        sizes, held, clique = _random_case(rng)
        cells = _plain_tree_cells(sizes, [*held, clique])
        graph = pgm.adjacency(len(sizes), [*held, clique])
        for limit in (cells - 1, cells, cells + 1, rng.uniform(0, cells)):
            got, whole = pgm.tree_cells_within(sizes, graph, limit)
            if cells <= limit:
                assert (got, whole) == (cells, True)
            else:
                assert not whole and limit < got <= cells


@pytest.mark.parametrize("wide", [False, True])
def test_many_trees_counted_at_once_are_each_counted_by_the_rule(wide: bool) -> None:
    """``tree_cells_many`` (a round's graphs at once: numpy, or one by one when the domain's cells could leave
    int64) gives each graph the cells of the rule read plainly, on 60 batches of 1-40 random graphs over one
    domain (ties of fill-in and of cells included: sizes of few values)."""
    rng = random.Random(36 + wide)
    for _ in range(60):
        d = rng.randint(1, 14)
        sizes = [rng.choice((2, 3, 3, 4)) * (1 << 20 if wide else 1) for _ in range(d)]
        cases = [
            [tuple(rng.sample(range(d), rng.randint(1, min(d, 4)))) for _ in range(rng.randint(0, 2 * d))]
            for _ in range(rng.randint(1, 40))
        ]
        want = [_plain_tree_cells(sizes, c) for c in cases]
        got = pgm.tree_cells_many(sizes, [pgm.adjacency(d, c) for c in cases], math.inf)
        assert got == [(w, True) for w in want], (sizes, cases)
        assert (math.prod(sizes) * d >= 1 << 62) is wide or d < 4


def test_a_round_of_candidates_is_decided_as_one_by_one() -> None:
    """``_fitting`` on every candidate of a round at once (graphs shared between candidates, counted together)
    answers as the rule read plainly for each, on 100 random held sets and limits."""
    rng = random.Random(37)
    aim._FIT_CACHE.clear()
    for _ in range(100):
        sizes, held, _clique = _random_case(rng)
        cands = [c.clique for c in aim.workload(sizes)]
        cells = [_plain_tree_cells(sizes, [*held, c]) for c in cands]
        limit = rng.choice([*cells, rng.uniform(0, 2 * max(cells))])
        want = [_plain_fits(sizes, held, c, limit) for c in cands]
        assert aim._fitting(tuple(sizes), held, cands, limit) == want, (sizes, held, limit)


def test_the_rounds_choose_as_with_the_rule_read_plainly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole adaptive run (seeded stand-ins for the noise and the selection) measures the same marginals, with
    the same noisy counts, as the run whose size check is the rule read plainly; the limit binds in it (candidates
    refused and admitted)."""
    sizes = (5, 6, 4, 7, 3, 5, 6)
    codes = _table(2000, sizes, 7)
    plain_answers: list[bool] = []

    def run(fitting: object) -> aim.Released:
        monkeypatch.setattr(aim, "_fitting", fitting)
        noise_rng, pick_rng = random.Random(1), random.Random(2)
        released, _model = aim.adaptive_measure(
            codes,
            sizes,
            aim.Budget(2.0, 1.0, 1.0, len(sizes)),
            max_cells=3000,
            noise=lambda v, _l2, s: [x + round(noise_rng.gauss(0.0, s)) for x in v],
            pick=lambda scores, _s, _e: max(
                range(len(scores)), key=lambda i: scores[i] + 50.0 * pick_rng.random()
            ),
            iterations=3,
        )
        return released

    fast = aim._fitting

    def plain(
        sz: tuple[int, ...], held: list[tuple[int, ...]], cliques: list[tuple[int, ...]], limit: float
    ) -> list[bool]:
        answers = [_plain_fits(list(sz), held, c, limit) for c in cliques]
        plain_answers.extend(answers)
        return answers

    aim._FIT_CACHE.clear()
    want = run(plain)
    got = run(fast)
    assert [(r.clique, r.noisy, r.sigma) for r in got.rounds] == [
        (r.clique, r.noisy, r.sigma) for r in want.rounds
    ]
    assert True in plain_answers and False in plain_answers
    assert len(want.rounds) > 2 * len(sizes)


# ----------------------------------------------------------------------------- a second one-way measurement


def _run(codes: np.ndarray, sizes: tuple[int, ...], budget: aim.Budget, noise: aim.NoiseFn) -> aim.Released:
    rng = random.Random(5)
    released, _model = aim.adaptive_measure(
        codes,
        sizes,
        budget,
        noise=noise,
        pick=lambda scores, _s, _e: max(range(len(scores)), key=lambda i: scores[i] + rng.random()),
        iterations=5,
    )
    return released


def _gauss(seed: int) -> aim.NoiseFn:
    rng = np.random.default_rng(seed)
    return lambda v, _l2, s: [int(x + round(rng.normal(0, s))) for x in v]


def test_one_way_marginals_mostly_noise_are_measured_again_within_half_of_rho() -> None:
    """A small table on a small budget: the first one-way measurement's own counts say it is mostly noise, so every
    column is measured again, at the sigma that brings the noise to ONE_WAY_NOISE unless that would take more than
    ONE_WAY_MAX_SHARE of rho for all one-way measurements; the rounds then plan on what remains, and the whole
    still spends exactly rho."""
    sizes = (3, 4, 2, 3)
    d = len(sizes)
    capped = []
    for n, rho in ((400, 0.01), (400, 0.3), (3000, 0.005)):
        codes = _table(n, sizes, 11)
        budget = aim.Budget(rho, 1.0, 1.0, d)
        released = _run(codes, sizes, budget, _gauss(3))
        first = aim.Released(released.sizes, budget, released.rounds[:d])
        sigma = budget.sigma()
        assert [r.sigma for r in first.rounds] == [sigma] * d
        noise = aim.one_way_noise(first, sigma)
        starts = [r for r in released.rounds if r.select_epsilon == 0]
        assert noise > aim.ONE_WAY_NOISE and len(starts) == 2 * d, (n, rho, noise)
        again = starts[d:]
        assert [r.clique for r in again] == [(i,) for i in range(d)]
        second = again[0].sigma
        assert all(r.sigma == second for r in again)
        one_way_rho = sum(budget.measure_cost(r.sigma) for r in starts)
        assert one_way_rho <= aim.ONE_WAY_MAX_SHARE * rho * (1 + 1e-12)
        combined = 1.0 / math.sqrt(1.0 / sigma**2 + 1.0 / second**2)
        capped.append(one_way_rho >= aim.ONE_WAY_MAX_SHARE * rho * (1 - 1e-9))
        if not capped[-1]:  # the noise brought to the target
            assert aim.one_way_noise(first, combined) == pytest.approx(aim.ONE_WAY_NOISE, rel=1e-9)
        else:
            assert aim.one_way_noise(first, combined) > aim.ONE_WAY_NOISE
        rounds = released.rounds[2 * d :]
        rest = rho - one_way_rho
        assert rounds[0].sigma == pytest.approx(budget.sigma(rest), rel=1e-12)
        assert rounds[0].select_epsilon == pytest.approx(budget.select_epsilon(rest), rel=1e-12)
        assert released.spent() == pytest.approx(rho, rel=1e-12)
    assert True in capped and False in capped


def test_one_way_marginals_are_measured_again_only_when_their_released_counts_say_so() -> None:
    """The decision reads released values only: the same released counts decide the same on a table of 200 rows
    and of 20,000; counts that say many rows leave them measured once, even on a tiny table, and counts that say
    almost none take every one-way measurement to the cap, even on a large one."""
    sizes = (3, 4, 2)
    d = len(sizes)
    budget = aim.Budget(0.05, 1.0, 1.0, d)

    def fixed(per_cell: int) -> aim.NoiseFn:
        return lambda v, _l2, _s: [per_cell] * len(v)

    for per_cell, again in ((100_000, False), (0, True)):
        for n in (200, 20_000):
            released = _run(_table(n, sizes, 13), sizes, budget, fixed(per_cell))
            starts = [r for r in released.rounds if r.select_epsilon == 0]
            assert len(starts) == (2 * d if again else d), (per_cell, n)
            if again:
                total = sum(budget.measure_cost(r.sigma) for r in starts)
                assert total == pytest.approx(aim.ONE_WAY_MAX_SHARE * budget.rho, rel=1e-12)


def test_a_large_table_is_measured_once() -> None:
    """Where the first measurement is already precise (many rows, a fair budget), nothing more is spent on
    one-way marginals: the rounds start at the design's sigma."""
    sizes = (3, 4, 2, 3)
    budget = aim.Budget(0.5, 1.0, 1.0, len(sizes))
    released = _run(_table(20_000, sizes, 17), sizes, budget, _gauss(19))
    assert len([r for r in released.rounds if r.select_epsilon == 0]) == len(sizes)
    assert released.rounds[len(sizes)].sigma == budget.sigma()
