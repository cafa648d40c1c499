"""Mutation check of the trust tests: each mutant breaks one promise of SECURITY.md; its tests must fail.

Run from the repository root (not collected by pytest; ``tests/trust/test_mutants_table.py`` checks
that every snippet below still occurs exactly once in the current source, so mutants cannot rot)::

    python tools/mutation/mutants.py --list
    python tools/mutation/mutants.py --jobs 2            # all mutants; writes tools/mutation/MUTANTS.md
    python tools/mutation/mutants.py --only W02 --only K01

For every mutant the script copies the repository (``git archive HEAD``, plus the untracked files in
``OVERLAY``; ``--worktree`` copies the working tree instead) into a temporary folder, replaces the
snippet there, byte-compiles and imports the mutated module, and runs the mutant's tests with
``python -m pytest -x -q -p no:cacheprovider`` in that folder. A mutant is *killed* when pytest exits
with 1 (a test failed); exit codes other than 0 and 1 (collection, usage or import errors) are
reported as errors, never as kills.

Which ``dpdesk`` is imported: the dev venv holds an editable install whose ``.pth`` file appends
``/work/main`` to ``sys.path`` *after* site-packages. ``PYTHONPATH=<copy>`` puts the copy before
both, so ``import dpdesk`` finds the copy's regular package first; it is inherited by the
subprocesses and ``multiprocessing`` children the tests start. This is checked, not assumed: before
the tests run, ``python -c "import dpdesk, <mutated module>"`` must print paths inside the copy, and
a guard plugin (``-p _mutant_guard``, written into the copy) repeats the check inside pytest and
confirms that the imported module holds the replacement text.

Before the mutants, the union of all their tests runs once on the unmutated copy and must pass.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
#: Untracked files of this check that a ``git archive HEAD`` copy lacks.
OVERLAY = ("tests/trust/test_release_invariants.py",)
PYTEST = ("-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "_mutant_guard")
RUN_TIMEOUT = 1800

# test groups -------------------------------------------------------------------------------------
SENS = "tests/core/test_sensitivity.py"
REL = "tests/core/test_release.py"
LEDGER = "tests/core/test_ledger.py"
PKG = "tests/core/test_package.py"
CLI = "tests/cli/test_cli.py"
CRASH = "tests/trust/test_crash.py"
GAPS = "tests/trust/test_release_invariants.py"
STAT = "tests/core/test_statistical.py"
AUDIT = "tests/trust/test_audit.py"
AGG = "tests/core/test_aggregates.py"
NEWCOMER = "tests/cli/test_newcomer.py"
IDT = "tests/core/test_identity.py"
IDF = "tests/core/test_identity_fast.py"
DATA = "tests/core/test_data.py"
FORMULAS = "tests/core/test_formulas.py"
PUBLIC_ID = "tests/trust/test_public_id.py"
RECOST = "tests/core/test_recost.py"
ATTACK = "tests/trust/test_recost_correction_migration.py"
LAYERS = "tests/test_layers.py"
VERBS = "tests/cli/test_ledger_verbs.py"
SERVICES = "tests/services/test_services.py"
REPORT_CLAIMS = "tests/services/test_report_claims.py"
BF = "tests/core/test_bruteforce.py"
TYPES = "tests/core/test_types.py"
ENTRIES = "tests/core/test_ledger_entries.py"
ANCHOR = "tests/core/test_anchor.py"
REVIEW_GAPS = "tests/core/test_review_completeness.py"
HA = "tests/trust/test_hostile_text_and_exit_codes.py"
ANCHOR_CLI = "tests/cli/test_anchor_cli.py"
BF_SUM = f"{BF}::test_the_sum_under_replace_reaches_k_max_of_width_and_m_when_a_row_can_drop"
BF_ALL = f"{BF}::test_no_neighbour_changes_a_statistic_by_more_than_its_sensitivity"
BF_DROP = f"{BF}::test_rows_can_drop_says_exactly_when_the_code_drops_a_row"
G_TIES = f"{AGG}::test_best_quantile_candidates_are_exactly_the_true_quantiles_on_tied_data"
S_TIES = f"{STAT}::test_the_released_median_of_a_tied_column_is_the_true_median"
# the tests added for the gaps this check found (tests/trust/test_release_invariants.py)
G_COMPOSE = f"{GAPS}::test_the_components_of_a_query_spend_exactly_its_budget"
G_FSYNC = f"{GAPS}::test_the_spend_entry_is_fsynced_before_any_value_is_written"
G_LOCK = f"{GAPS}::test_a_transaction_waits_for_the_lock_and_reads_the_ledger_under_it"
G_QUEUE = f"{GAPS}::test_two_releases_queued_on_the_lock_never_overspend"
G_LEAK = f"{GAPS}::test_no_count_or_sum_read_off_the_data_reaches_the_ledger_or_the_package"
G_CSV = f"{GAPS}::test_every_formula_prefix_is_neutralised_and_numbers_are_not"
G_RNG = f"{GAPS}::test_no_generator_of_numpy_or_random_exists_when_a_release_runs"
G_RNG_STATIC = f"{GAPS}::test_the_release_path_never_names_numpy_random_or_random"
G_CHECK = f"{GAPS}::test_the_data_check_counts_reach_the_curator_and_never_the_ledger_or_the_package"
GUI = "tests/gui/test_app.py"
OFFICER = "tests/core/test_officer.py"
PROP = "tests/core/test_proportion.py"
PROP_WORST = f"{PROP}::test_the_worst_neighbours_reach_the_booked_sensitivity"
PROP_RANDOM = f"{PROP}::test_random_neighbours_never_exceed_the_booked_sensitivity"
ACK = "tests/trust/test_acknowledge.py"
ACF = "tests/trust/test_acknowledge_floor.py"
GOV = "tests/cli/test_govern.py"
GA = "tests/trust/test_governance_record_tampering.py"
NC = "tests/cli/test_near_copy.py"
OCT = "tests/core/test_one_column.py"
ATK = "tests/trust/test_public_file_check.py"
RC = "dpdesk/core/identity/recognition.py"
CT = "dpdesk/core/ledger/contents.py"
ID = "dpdesk/core/loading/identity.py"
AC = "tests/core/test_accuracy.py"
AF = "tests/gui/test_accuracy_form.py"
GV = "dpdesk/core/ledger/governed.py"
SYN = "tests/core/test_synthetic.py"
SYQ = "tests/core/test_synthetic_query.py"
SGA = "tests/gui/test_synthetic_app.py"


@dataclass(frozen=True)
class Mutant:
    """One deliberately broken variant: ``old`` (exactly once in ``file``) becomes ``new``."""

    id: str
    promise: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]  # pytest arguments (node ids, files or "-k", expr), the existing tests first
    #: tests of test_release_invariants.py, added because the existing ones let the mutant survive (K01-K03: as a
    #: deterministic backstop for the two race-based concurrency tests, which killed them)
    gaps: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        return self.file.removesuffix(".py").replace("/", ".")

    def args(self) -> tuple[str, ...]:
        return (*self.tests, *self.gaps)


A = "dpdesk/core/dp/aggregates.py"
BND = "dpdesk/core/dp/bounding.py"
QB = "dpdesk/core/dp/queries_base.py"
AB = "dpdesk/core/dp/aggregates_base.py"
R = "dpdesk/core/release/steps.py"
L = "dpdesk/core/ledger/book.py"
FHT = "tests/core/test_governed_tail.py"
FS = "dpdesk/core/ledger/filestore.py"
ENT = "dpdesk/core/ledger/entries.py"
FSIO = "dpdesk/core/common/fsio.py"
M = "dpdesk/core/dp/mechanisms.py"
ACC = "dpdesk/core/dp/accounting.py"
OFC = "dpdesk/core/governance/officer.py"
CO = "dpdesk/core/ledger/carryover.py"
ANC = "dpdesk/core/ledger/anchor.py"
JIN = "dpdesk/core/common/jsonin.py"
REV = "dpdesk/core/publish/review.py"

MUTANTS: tuple[Mutant, ...] = (
    # --- sensitivities (each statistic's module in dpdesk/core/dp/statistics/, aggregates.py) ----------
    Mutant(
        "S01",
        "sensitivities: count, add/remove and replace, k -> k/2",
        "dpdesk/core/dp/statistics/count.py",
        r"""        l1 = l2 = float(k)
        why = _("{rel}, {who}: the count changes by at most k""",
        r"""        l1 = l2 = k / 2.0
        why = _("{rel}, {who}: the count changes by at most k""",
        (SENS,),
    ),
    Mutant(
        "S02",
        "sensitivities: count under replace, k -> k/2 ('n does not change')",
        "dpdesk/core/dp/statistics/count.py",
        r"""        l1 = l2 = float(k)
        why = _("{rel}, {who}: the count changes by at most k""",
        r"""        l1 = l2 = k / 2.0 if replace else float(k)
        why = _("{rel}, {who}: the count changes by at most k""",
        (f"{SENS}::TestWorstCases::test_count", SENS),
    ),
    Mutant(
        "S03",
        "sensitivities: histogram / grouped count under replace, L1 2k -> k",
        "dpdesk/core/dp/statistics/count.py",
        r"""l1, l2 = (2.0 * k, math.sqrt(2.0) * k) if replace else (float(k), float(k))""",
        r"""l1, l2 = (float(k), math.sqrt(2.0) * k) if replace else (float(k), float(k))""",
        (SENS,),
    ),
    Mutant(
        "S04",
        "sensitivities: histogram / grouped count under replace, L2 sqrt(2) k -> k",
        "dpdesk/core/dp/statistics/count.py",
        r"""l1, l2 = (2.0 * k, math.sqrt(2.0) * k) if replace else (float(k), float(k))""",
        r"""l1, l2 = (2.0 * k, float(k)) if replace else (float(k), float(k))""",
        (SENS,),
    ),
    Mutant(
        "S05",
        "sensitivities: sum, add/remove, k max(|L|,|U|) -> k U",
        "dpdesk/core/dp/statistics/sum.py",
        r"""                l1_i = l2_i = float(k * m_i)
                why = _("{rel}, {who}: a row adds at most M""",
        r"""                l1_i = l2_i = float(k * hi_i)
                why = _("{rel}, {who}: a row adds at most M""",
        (SENS,),
    ),
    Mutant(
        "S06",
        "sensitivities: sum, replace, k (U - L) -> k M",
        "dpdesk/core/dp/statistics/sum.py",
        r"""l1_i = l2_i = float(k * (hi_i - lo_i))""",
        r"""l1_i = l2_i = float(k * max(abs(lo_i), abs(hi_i)))""",
        (SENS, BF_SUM),
    ),
    Mutant(
        "S07",
        "sensitivities: grouped sum, replace, L1 2kM -> kM",
        "dpdesk/core/dp/statistics/sum.py",
        r"""l1_i = 2.0 * k * m_i""",
        r"""l1_i = float(k * m_i)""",
        (SENS,),
    ),
    Mutant(
        "S08",
        "sensitivities: grouped sum, replace, L2 k max(U-L, sqrt(2) M) -> sqrt(2) k M",
        "dpdesk/core/dp/statistics/sum.py",
        r"""l2_i = k * max(float(hi_i - lo_i), math.sqrt(2.0) * m_i)""",
        r"""l2_i = math.sqrt(2.0) * k * m_i""",
        (SENS,),
    ),
    Mutant(
        "S09",
        "sensitivities: mean, add/remove, centred sum k (U-L)/2 -> k (U-L)/4",
        "dpdesk/core/dp/statistics/mean.py",
        r"""l1_i = l2_i = k * w
""",
        r"""l1_i = l2_i = k * w / 2.0
""",
        (SENS,),
    ),
    Mutant(
        "S10",
        "sensitivities: mean, replace, centred sum k (U-L) -> k (U-L)/2",
        "dpdesk/core/dp/statistics/mean.py",
        r"""l1_i = l2_i = 2.0 * k * w""",
        r"""l1_i = l2_i = k * w""",
        (SENS,),
    ),
    Mutant(
        "S11",
        "sensitivities: mean sums x, not x - mid (the claim assumes centred values)",
        "dpdesk/core/dp/statistics/mean.py",
        r"""q = 2 * q.astype(np.float64 if q.dtype.kind == "f" else np.int64) - (lo_i + hi_i)""",
        r"""q = 2 * q.astype(np.float64 if q.dtype.kind == "f" else np.int64)""",
        (SENS,),
    ),
    Mutant(
        "S12",
        "calibration: a mean's count and sum each get the full epsilon (2 eps spent, eps charged)",
        "dpdesk/core/dp/statistics/mean.py",
        r"""eps, delta = eps / 2.0, delta / 2.0""",
        r"""pass""",
        (SENS, FORMULAS, STAT, REL),
        (G_COMPOSE,),
    ),
    Mutant(
        "S13",
        "sensitivities: quantile, add/remove, k max(q, 1-q) -> k min(q, 1-q)",
        "dpdesk/core/dp/statistics/quantile.py",
        r"""du = float_up(k * max(qf, 1 - qf))""",
        r"""du = float_up(k * min(qf, 1 - qf))""",
        (SENS,),
    ),
    Mutant(
        "S14",
        "sensitivities: mode utility k -> k/2",
        "dpdesk/core/dp/statistics/mode.py",
        r"""        du = float(k)
        why = _("{rel}, {who}: a category's count changes by at most k""",
        r"""        du = k / 2.0
        why = _("{rel}, {who}: a category's count changes by at most k""",
        (SENS,),
    ),
    Mutant(
        "S15",
        "sensitivities: select (revenue), k max(p) -> k (max p - min p)",
        "dpdesk/core/dp/statistics/select.py",
        r"""du = k * max(abs(c) for c in cands)""",
        r"""du = k * (max(cands) - min(cands))""",
        (SENS,),
    ),
    Mutant(
        "S16",
        "clamping: float sums not clamped to the declared bounds",
        AB,
        r"""    q = np.clip(values, spec.bounds[0], spec.bounds[1]).astype(np.float64, copy=False)
    q = np.ldexp(q, s, out=q) if q is not values else np.ldexp(q, s)
    np.rint(q, out=q)
    np.clip(q, lo_i, hi_i, out=q)
""",
        r"""    q = np.ldexp(values.astype(np.float64), s)
    np.rint(q, out=q)
""",
        (SENS,),
    ),
    Mutant(
        "S17",
        "clamping: int sums not clamped to the declared bounds",
        AB,
        r"""        return np.clip(values, lo_i, hi_i), bits  # whole numbers; clamped here whatever the loader did""",
        r"""        return values, bits""",
        (SENS,),
    ),
    Mutant(
        "S18",
        "unit of privacy: the id column keeps k + 1 rows per person",
        BND,
        r"""    keep[order] = rank < k""",
        r"""    keep[order] = rank <= k""",
        (f"{REL}::test_id_column_keeps_at_most_k_rows_per_person",),
    ),
    # --- rows that drop out under replace (issue 11): a missing value, an undeclared category, an empty id
    Mutant(
        "RD01",
        "sensitivities: sum, replace, a row can drop out: k max(U - L, M) -> k (U - L)",
        "dpdesk/core/dp/statistics/sum.py",
        r"""l1_i = l2_i = float(k * max(hi_i - lo_i, m_i))""",
        r"""l1_i = l2_i = float(k * (hi_i - lo_i))""",
        (BF_SUM, BF_ALL, f"{AUDIT}::test_correct_mechanism_passes"),
    ),
    Mutant(
        "RD02",
        "sensitivities: 'can a row drop out?' always answers no",
        QB,
        r"""    if plan.privacy_unit.id_column is not None or spec.where:
        return True
    return any(""",
        r"""    return False
    return any(""",
        (BF_SUM, BF_DROP, BF_ALL),
    ),
    Mutant(
        "RD03",
        "sensitivities: 'can a row drop out?' ignores the empty ids of the id column",
        QB,
        r"""    if plan.privacy_unit.id_column is not None or spec.where:
        return True
    return any(""",
        r"""    if spec.where:
        return True
    return any(""",
        (BF_SUM, BF_DROP, BF_ALL),
    ),
    # --- quantiles on tied data (issue 11, item 4) --------------------------------------------------
    Mutant(
        "Q01",
        "quantiles: the old score -|(1-q) #(x<c) - q #(x>c)|, which ignores rows equal to c",
        "dpdesk/core/dp/statistics/quantile.py",
        r"""            utilities += quantile_utilities(np.asarray(below[part]), np.asarray(at_most[part]), n, spec.q)""",
        r"""            b, a = np.asarray(below[part]), np.asarray(at_most[part])
            old = -np.abs((1.0 - spec.q) * b - spec.q * (n - a))  # x > c: n - #(x<=c)
            utilities += [float(u) for u in old]""",
        (G_TIES, S_TIES),
    ),
    Mutant(
        "Q02",
        "quantiles: the tie-aware score with #(x<=c) replaced by #(x<c) (ties ignored again)",
        AB,
        r"""    hi_gap = qn - den * at_most  # den (q n - #(x<=c))""",
        r"""    hi_gap = qn - den * below  # den (q n - #(x<=c))""",
        (G_TIES, S_TIES),
    ),
    Mutant(
        "Q03",
        "quantiles: Du under add/remove k max(q, 1-q) -> k min(q, 1-q), against the audit first",
        "dpdesk/core/dp/statistics/quantile.py",
        r"""du = float_up(k * max(qf, 1 - qf))""",
        r"""du = float_up(k * min(qf, 1 - qf))""",
        (
            f"{AUDIT}::test_correct_mechanism_passes",
            f"{SENS}::test_quantile_score_on_tied_data_every_neighbour",
        ),
    ),
    Mutant(
        "Q04",
        "quantiles: the stated 95% rank interval R halved",
        "dpdesk/core/dp/statistics/quantile.py",
        r"""rank95 = 2.0 * du * (math.log(n) + LN20) / eps""",
        r"""rank95 = du * (math.log(n) + LN20) / eps""",
        (f"{STAT}::test_the_rank_interval_covers_95_percent",),
    ),
    # --- calibration wired into the release path (audit / statistical tests) -----------------------
    Mutant(
        "C01",
        "calibration: Laplace noise drawn at half the scale",
        R,
        r"""        noisy, _ = mech.draw_laplace(scaled, l1, comp.epsilon)""",
        r"""        noisy, _ = mech.draw_laplace(scaled, l1, 2.0 * comp.epsilon)""",
        (
            f"{STAT}::test_fixed_point_sum_noise_has_the_natural_scale",
            f"{AUDIT}::test_correct_mechanism_passes",
        ),
    ),
    Mutant(
        "C02",
        "calibration: Gaussian noise drawn at half the sigma",
        R,
        r"""    noisy, _ = mech.draw_gaussian(scaled, comp.l2 / comp.grid, comp.scale / comp.grid)""",
        r"""    noisy, _ = mech.draw_gaussian(scaled, comp.l2 / comp.grid, comp.scale / comp.grid / 2.0)""",
        (STAT, f"{AUDIT}::test_correct_mechanism_passes"),
    ),
    # --- the Gaussian calibration, the exponential mechanism's certificate, one delta' (issue 11) ------
    Mutant(
        "G01",
        "calibration: Phi as 0.5 (1 + erf) in the analytic Gaussian's delta (loses the tail)",
        M,
        r"""    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    x1, x2 = b - a, b + a
""",
        r"""    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    phi = NormalDist().cdf
    return phi(a - b) - math.exp(epsilon) * phi(-a - b)
    x1, x2 = b - a, b + a
""",
        (f"{FORMULAS}::test_analytic_sigma_at_small_delta_where_erf_lost_the_tail", FORMULAS),
    ),
    Mutant(
        "G02",
        "calibration: the analytic delta as a plain difference of the two tails (cancellation)",
        M,
        r"""    return min(1.0, phi1 * min(direct, trapezoid) * _ROUND_UP)""",
        r"""    return min(1.0, phi1 * (r1 - r2))""",
        (FORMULAS,),
    ),
    Mutant(
        "G03",
        "calibration: plans accept deltas below 1e-30",
        "dpdesk/core/model/spec.py",
        r"""    if floor and 0 < x < MIN_DELTA:""",
        r"""    if False:""",
        ("tests/core/test_plan.py",),
    ),
    Mutant(
        "G04",
        "calibration: the exponential mechanism's scale not certified by OpenDP's zCDP map",
        M,
        r"""        epsilon**2 / 8.0,
""",
        r"""        math.inf,
""",
        (f"{FORMULAS}::test_exponential_scale_is_certified_by_opendps_zcdp_map",),
    ),
    Mutant(
        "G05",
        "accounting: the statement and ledger use another default delta' than the meter",
        ACC,
        r"""            t = advanced(r.costs, release_delta_prime(r.delta_prime, budget_delta))""",
        r"""            t = advanced(r.costs, r.delta_prime if r.delta_prime is not None else 1e-9)""",
        (f"{REL}::test_one_default_delta_prime_for_the_advanced_total",),
    ),
    # --- the proportion (issue 12, stage 1): a statistic added through the registry alone -----------
    Mutant(
        "RG01",
        "proportion: under replace the sum of z - 1/2 booked k/2 instead of k (a replaced row moves it by 1)",
        "dpdesk/core/dp/statistics/proportion.py",
        r"""            l1 = l2 = float(k)""",
        r"""            l1 = l2 = 0.5 * k""",
        (PROP_WORST, PROP_RANDOM, SENS),
    ),
    Mutant(
        "RG02",
        "proportion: under add/remove the sum of z - 1/2 booked k/4 instead of k/2",
        "dpdesk/core/dp/statistics/proportion.py",
        r"""            l1 = l2 = 0.5 * k""",
        r"""            l1 = l2 = 0.25 * k""",
        (PROP_WORST, PROP_RANDOM, SENS),
    ),
    Mutant(
        "RG03",
        "proportion: the condition at_least is not inclusive (a value equal to it is not counted)",
        "dpdesk/core/dp/statistics/proportion.py",
        r"""                z &= xv >= spec.at_least""",
        r"""                z &= xv > spec.at_least""",
        (f"{PROP}::test_the_condition_is_inclusive_and_values_are_clamped",),
    ),
    Mutant(
        "RG04",
        "proportion: its count and its sum each get the query's whole epsilon (2 eps spent, eps charged)",
        "dpdesk/core/dp/statistics/proportion.py",
        r"""        eps, delta = spec.epsilon / 2.0, spec.delta / 2.0""",
        r"""        eps, delta = spec.epsilon, spec.delta""",
        (f"{AUDIT}::test_correct_mechanism_passes",),
    ),
    # --- spend before reveal ----------------------------------------------------------------------
    Mutant(
        "W01",
        "spend before reveal: release.csv written just before the spend entry",
        R,
        r"""            rows.extend(noisy_rows(d, ex, plan))
""",
        r"""            rows.extend(noisy_rows(d, ex, plan))
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(out_dir / "release.csv", rows_to_csv(rows, bom=bom))
""",
        (
            f"{REL}::test_spend_is_recorded_before_values_are_written",
            f"{REL}::test_a_failed_ledger_write_reveals_nothing",
            f"{REL}::test_disk_full_while_charging_reveals_nothing_and_keeps_earlier_entries",
        ),
    ),
    Mutant(
        "W02",
        "spend before reveal: release.csv and report.pdf written, then the spend entry (SIGKILL test)",
        R,
        r"""        method = report.method
        entry = tx.append(
""",
        r"""        method = report.method
        if out_dir is not None:
            from dpdesk.core.publish.report import write_release_report

            draft = {"seq": len(tx.entries) + 1, "type": "spend", "time": "draft", "dataset": ledger.dataset,
                     "prev": "", "hash": "", "release_id": "draft", "plan_hash": "", "values_hash": "",
                     "method": method, "costs": [c.to_dict() for c in costs],
                     "charged": report.in_force.plan.to_dict(), "budget": report.budget.to_dict(),
                     "spent_after": report.in_force.after.to_dict(), "totals": {},
                     "trace": [design_to_dict(d) for d in designs]}
            out_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(out_dir / "release.csv", rows_to_csv(rows, bom=bom))
            write_release_report(out_dir / "report.pdf", plan_dict=plan.to_dict(), rows=[r.as_list() for r in rows],
                                 spend=draft, settings_entry=None, dataset_name=Path(table.path).name)
        entry = tx.append(
""",
        (CRASH,),
    ),
    Mutant(
        "W03",
        "spend before reveal: the spend entry is not fsynced before the values are written",
        FS,
        r"""                view = view[written:]
            os.fsync(fd)
""",
        r"""                view = view[written:]
""",
        (
            f"{REL}::test_spend_is_recorded_before_values_are_written",
            f"{REL}::test_a_failed_ledger_write_reveals_nothing",
            CRASH,
        ),
        (G_FSYNC,),
    ),
    # --- concurrency ------------------------------------------------------------------------------
    Mutant(
        "K01",
        "concurrency: the ledger's exclusive lock (flock) is not taken",
        FSIO,
        r"""            fcntl.flock(fd, fcntl.LOCK_EX)
""",
        r"""            pass
""",
        (
            f"{LEDGER}::test_concurrent_writers_never_corrupt_the_chain",
            f"{REL}::test_two_processes_never_overspend",
        ),
        (G_LOCK, G_QUEUE),
    ),
    Mutant(
        "K02",
        "concurrency: the ledger is read before its lock is taken",
        L,
        r"""        try:
            lock = self.store.locked(self._chain)
            lock.__enter__()
        except OSError as exc:
            raise LedgerError(
                _("cannot lock the ledger {path}: {err}; nothing was charged or revealed").format(
                    path=self.lock_path, err=exc.strerror or exc
                )
            ) from None
        try:
            state = self.read()
""",
        r"""        early = self.read()
        try:
            lock = self.store.locked(self._chain)
            lock.__enter__()
        except OSError as exc:
            raise LedgerError(
                _("cannot lock the ledger {path}: {err}; nothing was charged or revealed").format(
                    path=self.lock_path, err=exc.strerror or exc
                )
            ) from None
        try:
            state = early
""",
        (
            f"{LEDGER}::test_concurrent_writers_never_corrupt_the_chain",
            f"{REL}::test_two_processes_never_overspend",
        ),
        (G_LOCK, G_QUEUE),
    ),
    Mutant(
        "K03",
        "concurrency: the budget is checked on entries read before the lock",
        R,
        r"""    costs = plan_costs(designs)
    with ledger.transaction() as tx:
        if same_head and prepared.head is not None and (tx.state.seq, tx.state.hash) != prepared.head:
            raise LedgerMoved(
                _(
                    "the dataset's ledger changed after this release was checked (it is at entry {seq} now, was at "
                    "{was}: another release or a settings change); nothing was charged: check the release again"
                ).format(seq=tx.state.seq, was=prepared.head[0])
            )
        settings = tx.settings()
        check_settings(plan, settings)
        record_corrections(tx)
        report = budget_report(plan, state=tx.state)
""",
        r"""    costs = plan_costs(designs)
    seen = ledger.read()
    with ledger.transaction() as tx:
        if same_head and prepared.head is not None and (tx.state.seq, tx.state.hash) != prepared.head:
            raise LedgerMoved(
                _(
                    "the dataset's ledger changed after this release was checked (it is at entry {seq} now, was at "
                    "{was}: another release or a settings change); nothing was charged: check the release again"
                ).format(seq=tx.state.seq, was=prepared.head[0])
            )
        settings = tx.settings()
        check_settings(plan, settings)
        record_corrections(tx)
        report = budget_report(plan, state=seen)
""",
        (f"{REL}::test_two_processes_never_overspend",),
        (G_QUEUE,),
    ),
    # --- tampering --------------------------------------------------------------------------------
    Mutant(
        "T01",
        "tampering: an entry's hash is not checked",
        ENT,
        r"""    if entry_hash(entry) != entry["hash"] and not stored_hash_matches(line, entry["hash"]):""",
        r"""    if False:""",
        (LEDGER, f"{REL}::test_a_broken_ledger_stops_releases", f"{CLI}::test_tampered_ledger_exit_3"),
    ),
    Mutant(
        "T02",
        "tampering: the link to the previous entry is not checked",
        ENT,
        r"""    if entry.get("prev") != prev:""",
        r"""    if False:""",
        (LEDGER,),
    ),
    Mutant(
        "T03",
        "tampering: a truncated last line is not reported as truncation",
        ENT,
        r"""    if raw and not raw.endswith(b"\n"):
        raise LedgerError(""",
        r"""    if False:
        raise LedgerError(""",
        (LEDGER,),
    ),
    Mutant(
        "T04",
        "tampering: entries of another dataset are accepted",
        ENT,
        r"""    if entry.get("dataset") != expected:""",
        r"""    if False:""",
        (LEDGER,),
    ),
    Mutant(
        "T05",
        "tampering: a release transaction does not verify the chain",
        L,
        r"""        if state is None:
            entries = self.verify()
            state = ck.state_of(entries)""",
        r"""        if state is None:
            entries = [json.loads(x) for x in self.path.read_bytes().splitlines()] if self.path.exists() else []
            state = ck.state_of(entries)""",
        (
            f"{LEDGER}::test_append_on_a_broken_ledger_is_refused",
            f"{REL}::test_a_broken_ledger_stops_releases",
            f"{CLI}::test_tampered_ledger_exit_3",
        ),
    ),
    Mutant(
        "T06",
        "tampering: review does not compare the package files' SHA-256",
        "dpdesk/core/publish/review.py",
        r"""        if digest != recorded.get(name):""",
        r"""        if False:""",
        (f"{PKG}::test_tampered_files_are_named_and_review_exits_1",),
    ),
    Mutant(
        "T07",
        "tampering: an entry edited to hold NaN or Infinity crashes the chain check (a traceback)",
        ENT,
        r"""        entry = loads_entries(line)""",
        r"""        entry = __import__("json").loads(line.decode("utf-8"))""",
        (
            "tests/trust/test_recost_correction_migration.py::test_a_non_finite_number_in_an_edited_entry_is_named_not_a_crash",
        ),
    ),
    Mutant(
        "A01",
        "honest accounting: acknowledging a broken ledger drops its spends",
        CO,
        r"""            for eff in effective(usable)
        ]""",
        r"""            for eff in effective(usable)
            if eff.seq < 0
        ]""",
        (
            f"{CLI}::test_acknowledging_a_tampered_ledger_keeps_what_was_spent",
            f"{ACK}::test_a_raised_budget_in_an_edited_settings_entry_is_not_adopted",
        ),
    ),
    Mutant(
        "A02",
        "honest accounting: spends carried over by an acknowledgement are not counted",
        "dpdesk/core/ledger/recost.py",
        r"""        elif t == "acknowledge":""",
        r"""        elif False:""",
        (f"{CLI}::test_acknowledging_a_tampered_ledger_keeps_what_was_spent",),
    ),
    # --- faults: read-only folder, full disk ------------------------------------------------------
    Mutant(
        "D01",
        "spend before reveal: a read-only ledger folder escapes as a raw OSError",
        L,
        r"""            (folder / "keys").mkdir(parents=True, exist_ok=True)
        except OSError as exc:""",
        r"""            (folder / "keys").mkdir(parents=True, exist_ok=True)
        except ValueError as exc:""",
        (f"{REL}::test_a_read_only_ledger_folder_fails_cleanly",),
    ),
    Mutant(
        "D02",
        "spend before reveal: a torn line from a full disk is left in the ledger",
        FS,
        r"""            truncate_partial(path, len(line))""",
        r"""            pass""",
        (f"{REL}::test_disk_full_while_charging_reveals_nothing_and_keeps_earlier_entries",),
    ),
    Mutant(
        "D03",
        "spend before reveal: a full disk escapes as a raw OSError",
        L,
        r"""            self.ledger.store.append(self.ledger._chain, line)
        except OSError as exc:""",
        r"""            self.ledger.store.append(self.ledger._chain, line)
        except ValueError as exc:""",
        (f"{REL}::test_disk_full_while_charging_reveals_nothing_and_keeps_earlier_entries",),
    ),
    # --- CSV formula neutralisation ---------------------------------------------------------------
    Mutant(
        "F01",
        "hostile output: no CSV formula neutralisation",
        "dpdesk/core/dp/values.py",
        r"""    if cell and cell[0] in "=+-@\t\r":""",
        r"""    if False:""",
        (f"{REL}::test_csv_neutralises_formulas_but_not_numbers",),
    ),
    Mutant(
        "F02",
        "hostile output: '@', tab and CR no longer neutralised",
        "dpdesk/core/dp/values.py",
        r"""    if cell and cell[0] in "=+-@\t\r":""",
        r"""    if cell and cell[0] in "=+-":""",
        (f"{REL}::test_csv_neutralises_formulas_but_not_numbers",),
        (G_CSV,),
    ),
    Mutant(
        "F03",
        "hostile output: negative numbers are quoted as text",
        "dpdesk/core/dp/values.py",
        r"""        try:
            float(cell)
        except ValueError:
            return "'" + cell""",
        r"""        return "'" + cell""",
        (f"{REL}::test_csv_neutralises_formulas_but_not_numbers",),
    ),
    # --- no data-dependent leaks ------------------------------------------------------------------
    Mutant(
        "L01",
        "no leaks: the true row count in the trace (printed in report.pdf)",
        R,
        r"""                "trace": [design_to_dict(d) for d in designs],""",
        r"""                "trace": [{**design_to_dict(d), "notes": [f"{table.n_rows} rows read"]} for d in designs],""",
        (f"{PKG}::test_report_holds_every_released_value_and_no_raw_statistic",),
    ),
    Mutant(
        "L02",
        "no leaks: the true row count in the ledger's spend entry",
        R,
        r"""                "title": plan.title,
                "plan_hash": plan.plan_hash(),""",
        r"""                "title": plan.title,
                "rows_read": table.n_rows,
                "plan_hash": plan.plan_hash(),""",
        (f"{PKG}::test_report_holds_every_released_value_and_no_raw_statistic",),
        (G_LEAK,),
    ),
    Mutant(
        "L03",
        "no leaks: the load notes (dropped-row counts) in the ledger's spend entry",
        R,
        r"""                "values_hash": rows_hash(rows),""",
        r"""                "values_hash": rows_hash(rows),
                "load_notes": table.report.lines(),""",
        (f"{PKG}::test_report_holds_every_released_value_and_no_raw_statistic",),
        (G_LEAK,),
    ),
    # --- randomness -------------------------------------------------------------------------------
    Mutant(
        "R02",
        "CSPRNG: Laplace noise from numpy.random.laplace",
        R,
        r"""        noisy, _ = mech.draw_laplace(scaled, l1, comp.epsilon)
        return noisy""",
        r"""        return [int(v + round(z)) for v, z in zip(scaled, np.random.laplace(0.0, l1 / comp.epsilon, len(scaled)))]""",
        (f"{REL}::test_a_full_release_never_touches_numpy_random_or_random",),
    ),
    Mutant(
        "R03",
        "CSPRNG: the exponential mechanism picks with Python's random",
        R,
        r"""    return mech.draw_exponential(utilities, comp.l1, comp.epsilon)""",
        r"""    import random

    g = [u / comp.scale - math.log(-math.log(random.random())) for u in utilities]
    return max(range(len(g)), key=g.__getitem__)""",
        (f"{REL}::test_a_full_release_never_touches_numpy_random_or_random",),
    ),
    Mutant(
        "R04",
        "CSPRNG: Laplace noise from a numpy generator made at import time",
        R,
        r"""def _opendp_noise(values: list[int], comp: Any) -> list[int]:
    \"\"\"Noisy integers on the component's noise grid (exact integers refined onto it first).\"\"\"
    f = comp.refine
    scaled = [v * f for v in values] if f != 1 else values
    if comp.mechanism == "laplace":
        l1 = round(comp.l1 / comp.grid)
        noisy, _ = mech.draw_laplace(scaled, l1, comp.epsilon)
        return noisy""".replace('\\"', '"'),
        r"""_RNG = np.random.default_rng()


def _opendp_noise(values: list[int], comp: Any) -> list[int]:
    f = comp.refine
    scaled = [v * f for v in values] if f != 1 else values
    if comp.mechanism == "laplace":
        l1 = round(comp.l1 / comp.grid)
        return [int(v + round(z)) for v, z in zip(scaled, _RNG.laplace(0.0, l1 / comp.epsilon, len(scaled)))]""",
        (f"{REL}::test_a_full_release_never_touches_numpy_random_or_random",),
        (G_RNG, G_RNG_STATIC),
    ),
    # --- missing values, NaN ----------------------------------------------------------------------
    Mutant(
        "N01",
        "missing values: NaN in a float column is not treated as missing",
        "dpdesk/core/loading/table.py",
        r"""            return cast(np.ndarray, np.isnan(self.values))""",
        r"""            return np.zeros(len(self.values), dtype=bool)""",
        (f"{REL}::test_missing_policy_drop_and_impute", AGG, DATA),
    ),
    Mutant(
        "N02",
        "missing values: the missing-value policy is never applied",
        A,
        r"""    if not miss.any():
        return values, keep""",
        r"""    if True:
        return values, keep""",
        (f"{REL}::test_missing_policy_drop_and_impute", AGG),
    ),
    Mutant(
        "Z01",
        "missing values: imputation fills 0 instead of the declared value",
        A,
        r"""        values[miss] = spec.missing.impute""",
        r"""        values[miss] = 0""",
        (f"{REL}::test_missing_policy_drop_and_impute", AGG),
    ),
    Mutant(
        "Z02",
        "missing values: 'drop' zero-fills instead of dropping",
        A,
        r"""    if spec.missing.drops:
        return values, ~miss if keep is None else keep & ~miss""",
        r"""    if spec.missing.drops:
        values = values.copy()
        values[miss] = 0
        return values, keep""",
        (f"{REL}::test_missing_policy_drop_and_impute", AGG),
    ),
    # --- issue 11, the guarantee kept: the dataset's public name, re-costing, person ids --------------
    Mutant(
        "I01",
        "public id: ledger entries name the data file's SHA-256",
        L,
        r"""            "dataset": self.ledger.dataset,""",
        r"""            "dataset": self.ledger.key or self.ledger.dataset,""",
        (PUBLIC_ID,),
    ),
    Mutant(
        "I02",
        "public id: migration keeps the hash (and its prefixes) inside old entries",
        L,
        r"""            value = value.replace(old, dataset)""",
        r"""            value = value""",
        (PUBLIC_ID,),
    ),
    Mutant(
        "I03",
        "acknowledgement: the broken ledger is moved away before the new chain is written",
        L,
        r"""            evidence = store.keep_evidence(dataset, raw, "broken", stamp)
""",
        r"""            evidence = store.keep_evidence(dataset, raw, "broken", stamp)
            os.replace(path, store.path(evidence.removesuffix(".jsonl")))
""",
        (PUBLIC_ID,),
    ),
    Mutant(
        "U01",
        "re-costing: a change of unit re-costs the booking alone (k back down gives budget back)",
        "dpdesk/core/ledger/recost.py",
        r"""                new, why = _cost_or_budget(eff, unit, settings)
                if _higher(new, eff.costs):
                    eff.costs, eff.why = new, [*eff.why, *why]""",
        r"""                base = Effective(eff.release_id, eff.seq, eff.recorded, eff.delta_prime, eff.recorded,
                                 eff.plan, eff.trace, eff.unit)
                eff.costs, why = cost_under(base, unit)""",
        (RECOST,),
    ),
    Mutant(
        "U02",
        "re-costing: the k an id column enforced is rescaled like a declared k",
        "dpdesk/core/ledger/recost.py",
        r"""        new_unit["max_rows_per_person"] = old_unit.get("max_rows_per_person", 1)""",
        r"""        new_unit["max_rows_per_person"] = unit.get("max_rows_per_person", 1)""",
        (RECOST,),
    ),
    Mutant(
        "U03",
        "re-costing: a Gaussian's epsilon scaled by c instead of re-solved at its delta",
        "dpdesk/core/ledger/recost.py",
        r"""        exact = gaussian_epsilon(sigma, new_sens, float(comp["delta"]) * (1.0 - DISCRETE_MARGIN))""",
        r"""        exact = eps * c""",
        (RECOST,),
    ),
    Mutant(
        "U04",
        "corrections: a simulate --data run of an unrecorded plan costs nothing",
        "dpdesk/core/ledger/recost.py",
        r"""    return (acc.QueryCost(name, b_eps, b_delta, rho),)""",
        r"""    return (acc.QueryCost(name, 0.0, 0.0, 0.0),)""",
        (RECOST,),
    ),
    Mutant(
        "U05",
        "corrections: a release does not record the correction before it charges",
        R,
        r"""        check_settings(plan, settings)
        record_corrections(tx)""",
        r"""        check_settings(plan, settings)""",
        (RECOST,),
    ),
    Mutant(
        "U06",
        "re-costing: a change of the unit of privacy leaves past costs as booked",
        "dpdesk/core/ledger/recost.py",
        r"""        elif t == "settings" and unit is not None and unit != previous_unit:""",
        r"""        elif False:""",
        (RECOST,),
    ),
    Mutant(
        "U07",
        "re-costing: each unit change adds its increase to a cost already raised (k 1 -> 5 -> 1 -> 5)",
        "dpdesk/core/ledger/recost.py",
        r"""            eps = eps_new if eps_new > booked else cost.epsilon""",
        r"""            eps = cost.epsilon + max(0.0, eps_new - booked)""",
        ("tests/trust/test_recost_correction_migration.py::test_unit_changes_back_and_forth_do_not_stack",),
    ),
    Mutant(
        "H01",
        "person ids: the id hash's seeds are fixed (collisions can be crafted)",
        "dpdesk/core/loading/columns.py",
        "_PROCESS_ID_KEY = secrets.token_bytes(32)",
        "_PROCESS_ID_KEY = bytes(32)",
        (f"{DATA}::test_id_hash_is_keyed_by_a_secret_seed_per_process",),
    ),
    Mutant(
        "H02",
        "person ids: people are told apart by 64 of the hash's 128 bits",
        BND,
        r"""    starts[1:] = (sorted_ids[1:] != sorted_ids[:-1]).any(axis=1)""",
        r"""    starts[1:] = sorted_ids[1:, 0] != sorted_ids[:-1, 0]""",
        (f"{AGG}::test_people_whose_ids_share_one_half_of_the_hash_stay_apart",),
    ),
    # --- previews never read the private table; the data check before the charge ------------------
    Mutant(
        "P01",
        "previews: simulate --data accepted again (the private table read as if public)",
        "dpdesk/cli/simulate.py",
        r"""    if args.data is not None:
        raise UsageError(""",
        r"""    if args.data is not None:
        args.public = args.data
    if False:
        raise UsageError(""",
        (f"{CLI}::test_simulate_refuses_the_private_table_and_says_what_to_use",),
    ),
    Mutant(
        "P02",
        "previews: a 'public' file with a ledger is simulated on",
        "dpdesk/core/preview/simulate.py",
        r"""    if sha == private_sha or is_known_dataset(home, sha):""",
        r"""    if sha == private_sha:""",
        (
            f"{REL}::test_simulations_run_on_a_stand_in_or_a_public_file_and_touch_no_ledger",
            f"{CLI}::test_simulate_on_a_public_file_and_never_on_a_dataset_with_a_ledger",
            f"{GUI}::test_simulate_releases_on_a_stand_in_or_a_public_file_never_the_private_table",
        ),
    ),
    Mutant(
        "P03",
        "data check: undeclared or unparsable values no longer stop the release before charging",
        R,
        r"""    if check.problems and not accept_data_problems:""",
        r"""    if False:""",
        (
            f"{CLI}::test_a_misspelled_category_stops_the_release_before_charging",
            f"{REL}::test_the_data_check_is_shown_before_the_charge_and_stops_on_problems",
        ),
        (G_CHECK,),
    ),
    Mutant(
        "P04",
        "data check: the per-column counts written into the spend entry",
        R,
        r"""                "trace": [design_to_dict(d) for d in designs],""",
        r"""                "trace": [design_to_dict(d) for d in designs],
                "data_check": [vars(c) for c in check.columns],""",
        (f"{PKG}::test_report_holds_every_released_value_and_no_raw_statistic",),
        (G_CHECK,),
    ),
    # --- issue 11, found by the attacker's pass --------------------------------------------------------
    # X01 (a damaged line made the carried releases fall back to their bookings) retired: since issue 13 only
    # entries that verify are carried as themselves (dpdesk/core/ledger/carryover.py), so the filter it broke is moot;
    # an edited cost is a stated cost now (AK* mutants).
    # X02 (the sidecars not read when keys/ is gone) retired: the register of heads records every key, and
    # anchoring a home from before it reads the sidecars (dpdesk/core/ledger/anchor.py), so _read_key's own reading
    # of them is a second copy; the test it ran keeps the case (tests/trust/test_recost_correction_migration.py).
    Mutant(
        "X03",
        "public id: a migrated chain keeps the hash of an old report that printed the data's hash",
        L,
        r"""                n["files"] = {**n["files"], "report.pdf": None}""",
        r"""                pass""",
        (ATTACK,),
    ),
    Mutant(
        "X04",
        "accounting: the advanced total overflows on a huge per-query epsilon",
        "dpdesk/core/dp/accounting.py",
        r"""    if any(c.epsilon > ADVANCED_OVERFLOW for c in costs):""",
        r"""    if False:""",
        (RECOST,),
    ),
    Mutant(
        "X05",
        "re-costing: a unit change that makes a past query cost more than any query may is accepted",
        "dpdesk/core/ledger/recost.py",
        r"""            not math.isfinite(c.epsilon) or c.epsilon > MAX_QUERY_EPSILON or not math.isfinite(c.rho)""",
        r"""            not math.isfinite(c.epsilon) or not math.isfinite(c.rho)""",
        (ATTACK,),
    ),
    Mutant(
        "X06",
        "migration: an interrupted migration of the same bytes makes a second dataset",
        L,
        r"""        dataset = _interrupted_migration(folder, raw) or new_dataset_id()""",
        r"""        dataset = new_dataset_id()""",
        (ATTACK,),
    ),
    # --- issue 12: the layers are enforced -------------------------------------------------------------
    Mutant(
        "Y01",
        "layers: the release imports OpenDP itself, around the adapter",
        R,
        r"""from dpdesk.core.dp import mechanisms as mech
""",
        r"""from dpdesk.core.dp import mechanisms as mech
import opendp  # noqa: F401
""",
        (LAYERS,),
    ),
    Mutant(
        "Y02",
        "layers: the budget report imports the simulations (numpy's generator)",
        "dpdesk/core/ledger/budget.py",
        r"""    designs = design_plan(plan)""",
        r"""    from dpdesk.core.preview import simulate  # noqa: F401
    designs = design_plan(plan)""",
        (LAYERS,),
    ),
    # --- issue 12: one service layer; the ledger's verbs ---------------------------------------------------
    Mutant(
        "SV01",
        "ledger verbs: an old spelling silently does another action (--statement writes the ledger export)",
        "dpdesk/cli/ledger.py",
        r"""    if mode == "--statement":
        return _ledger_statement(data, args.old_statement)""",
        r"""    if mode == "--statement":
        return _ledger_export(data, args.old_statement)""",
        (f"{VERBS}::test_old_spellings_work_and_name_the_new_one",),
    ),
    Mutant(
        "SV02",
        "ledger verbs: an old action given before a verb is dropped silently (only the verb runs)",
        "dpdesk/cli/ledger.py",
        r"""        if given:  # options before the verb would be dropped silently: refuse them""",
        r"""        if False:  # options before the verb would be dropped silently: refuse them""",
        (f"{VERBS}::test_old_options_before_a_verb_are_refused_not_dropped",),
    ),
    Mutant(
        "SV03",
        "ledger verbs: an old spelling's option that belongs to another action is ignored silently",
        "dpdesk/cli/ledger.py",
        r"""    if stray:  # an option of another action would be ignored silently: refuse it""",
        r"""    if False:  # an option of another action would be ignored silently: refuse it""",
        (f"{VERBS}::test_an_old_option_of_another_action_is_refused",),
    ),
    Mutant(
        "SV04",
        "services: exporting a recorded release no longer checks that its folder is new or empty",
        "dpdesk/services/export.py",
        r"""    claim = claim_out_dir(out)
    progress.update(0, 1, "writing")""",
        r"""    claim = claim_out_dir.__globals__["ClaimedFolder"](out, out, None)
    progress.update(0, 1, "writing")""",
        (f"{SERVICES}::test_export_review_and_reexport_write_the_recorded_values",),
    ),
    Mutant(
        "SV05",
        "layers: a service imports Qt",
        "dpdesk/services/review.py",
        r"""from dpdesk.core.common.progress import NULL_PROGRESS, Progress
""",
        r"""from dpdesk.core.common.progress import NULL_PROGRESS, Progress
import PySide6  # noqa: F401
""",
        (LAYERS,),
    ),
    Mutant(
        "LD04",
        "loading: a blank line dropped with the piece's last line end (a ragged line of empty fields loads)",
        "dpdesk/core/loading/csvfile.py",
        r"""    return b"\n".join(kept) + (b"\n" if piece.endswith(b"\n") and kept and kept[-1] else b"")""",
        r"""    return b"\n".join(kept)""",
        (
            "tests/core/test_data.py::test_a_line_of_too_many_empty_fields_after_a_blank_line_is_refused_at_its_line",
        ),
    ),
    Mutant(
        "LD05",
        "loading: a ragged line located in the piece without its blank lines (the wrong line number)",
        "dpdesk/core/loading/csvfile.py",
        r"""        at, fields = _long_record(piece if original is None else original, len(header), delim)""",
        r"""        at, fields = _long_record(piece, len(header), delim)""",
        (
            "tests/core/test_data.py::test_a_line_of_too_many_empty_fields_after_a_blank_line_is_refused_at_its_line",
        ),
    ),
    # --- issue 12: one type suggestion, read the way the load reads ---------------------------------------
    Mutant(
        "LD01",
        "suggestion: the app's preview samples fewer rows than the command line (they suggest different types)",
        "dpdesk/core/loading/peek.py",
        r"""def peek(path: str | Path, rows: int = SAMPLE_ROWS) -> Peek:""",
        r"""def peek(path: str | Path, rows: int = 200) -> Peek:""",
        (f"{GUI}::test_the_app_and_the_command_line_suggest_the_same_types",),
    ),
    Mutant(
        "LD02",
        "suggestion: inf and nan are not numbers to the rule, though the loader reads them as numbers",
        "dpdesk/core/loading/suggest.py",
        r"""(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)""",
        r"""(?:[eE][+-]?[0-9]+)?""",
        ("tests/core/test_suggest.py", f"{GUI}::test_the_app_and_the_command_line_suggest_the_same_types"),
    ),
    Mutant(
        "LD03",
        "xlsx: the app's preview lets calamine read the workbook itself, not the checked copy",
        "dpdesk/core/loading/peek.py",
        r"""                else read_checked_xlsx(p).head(rows)""",
        r"""                else pl.read_excel(p, engine="calamine", infer_schema_length=0).head(rows)""",
        (
            "tests/trust/test_xlsx_bomb.py::test_the_preview_and_the_type_suggestion_see_only_the_checked_parts",
        ),
    ),
    # --- issue 13, item 4: the officer's signed approvals (dpdesk/core/governance/officer.py) -----------------------
    Mutant(
        "OF01",
        "officer: an approval's ledger head is bound by its sequence number only, not its entry hash",
        OFC,
        r"""    if p.head != head:""",
        r"""    if p.head.seq != head.seq:""",
        (f"{OFFICER}::test_an_approval_for_another_ledger_head_is_refused",),
    ),
    Mutant(
        "OF02",
        "officer: an approval's nonce is not checked against the used ones (replay)",
        OFC,
        r"""    if p.nonce in used_nonces:""",
        r"""    if False:""",
        (f"{OFFICER}::test_a_used_approval_is_refused",),
    ),
    Mutant(
        "OF03",
        "officer: an approval's signature is not verified",
        OFC,
        r"""        _public_from_b64(p.key, "payload.key").verify(signature, message)""",
        r"""        _public_from_b64(p.key, "payload.key")""",
        (
            f"{OFFICER}::test_a_raised_budget_edited_into_the_file_is_refused",
            f"{OFFICER}::test_every_changed_byte_of_an_approval_is_refused",
        ),
    ),
    Mutant(
        "OF04",
        "officer: either of the officer's keys (the recovery key too) approves any action",
        OFC,
        r"""    if p.key != wanted:""",
        r"""    if p.key not in (governance.officer.key, governance.officer.recovery_key):""",
        (f"{OFFICER}::test_the_recovery_key_approves_nothing_but_a_rotation",),
    ),
    Mutant(
        "OF05",
        "officer: an approval for another dataset is accepted",
        OFC,
        r"""    if p.dataset != governance.dataset:""",
        r"""    if False:""",
        (f"{OFFICER}::test_an_approval_for_another_dataset_is_refused",),
    ),
    Mutant(
        "OF06",
        "officer: an approval's expiry is not checked",
        OFC,
        r"""    if p.expires is not None and t >= p.expires:""",
        r"""    if False:""",
        (f"{OFFICER}::test_an_expired_approval_is_refused",),
    ),
    Mutant(
        "OF07",
        "officer: an approval's parameters are compared by name only, not by value (a bigger budget passes)",
        OFC,
        r"""    if not same_json(p.params, dict(params)):""",
        r"""    if p.params.keys() != params.keys():""",
        (f"{OFFICER}::test_an_approval_of_another_action_or_other_parameters_is_refused",),
    ),
    Mutant(
        "OF08",
        "officer: no depth cap on approval files (the one JSON reader's)",
        JIN,
        r"""    if _deepest(text) > MAX_DEPTH:""",
        r"""    if False:""",
        (f"{OFFICER}::test_hostile_files_give_the_typed_error",),
    ),
    Mutant(
        "OF09",
        "officer: no size cap on approval files given as bytes (the one JSON reader's)",
        JIN,
        r"""    if size > kind.max_bytes:""",
        r"""    if False:""",
        (f"{OFFICER}::test_hostile_files_give_the_typed_error",),
    ),
    Mutant(
        "OF10",
        "officer: non-canonical base64 accepted (one signature, several spellings)",
        OFC,
        r"""    if len(raw) != length or _b64(raw) != text:""",
        r"""    if len(raw) != length:""",
        (f"{OFFICER}::test_a_non_canonical_base64_signature_is_refused",),
    ),
    Mutant(
        "OF11",
        "officer: the officer key, not the recovery key, signs a key rotation (a stolen key locks the officer out)",
        OFC,
        r"""        return self.officer.recovery_key if action == ROTATE else self.officer.key""",
        r"""        return self.officer.key""",
        (f"{OFFICER}::test_the_recovery_key_rotates_a_lost_officer_key",),
    ),
    Mutant(
        "OF12",
        "officer: a public key file's self-signatures are not verified (name or recovery key swapped)",
        OFC,
        r"""                public.verify(_unb64(sig, 64, label), message)""",
        r"""                _unb64(sig, 64, label)""",
        (f"{OFFICER}::test_a_public_key_file_changed_after_it_was_made_is_refused",),
    ),
    # --- issue 13, items 1 and 5: the anchored chain, and review that misses nothing ------------------------------
    Mutant(
        "AN01",
        "anchor: a ledger that ends before its recorded head (cut, or an older copy put back) is accepted",
        ANC,
        r"""    if last < head.seq:""",
        r"""    if False:""",
        (
            f"{ANCHOR}::test_a_ledger_cut_at_an_entry_boundary_is_broken",
            f"{ANCHOR}::test_an_older_copy_put_back_is_broken",
        ),
    ),
    Mutant(
        "AN02",
        "anchor: a missing or emptied ledger of a known dataset reads as fresh",
        ANC,
        r"""    if not entries and head.seq > 0:""",
        r"""    if not entries:
        return
    if False:""",
        (f"{ANCHOR}::test_an_emptied_or_deleted_ledger_of_a_known_dataset_is_broken",),
    ),
    Mutant(
        "AN03",
        "anchor: an append does not move the recorded head (a cut within one transaction goes unseen)",
        L,
        r"""                anchor.advance_head(
                    home,
                    self.ledger.dataset,
                    anchor.Head(entry.seq, entry.hash),
                    governance=entry.get("governance"),
                    governs=entry_type == "govern",
                )""",
        r"""                pass""",
        (f"{ANCHOR}::test_a_ledger_cut_at_an_entry_boundary_is_broken",),
    ),
    Mutant(
        "AN04",
        "anchor: the register's key -> id is not consulted (a file whose ledger, sidecar and key were deleted is new)",
        L,
        r"""    known = anchor.dataset_of_key(folder.parent, sha256)""",
        r"""    known = None""",
        (f"{ANCHOR}::test_a_dataset_whose_ledger_sidecar_and_key_were_deleted_is_still_known",),
    ),
    Mutant(
        "AN05",
        "anchor: a ledger ahead of its head (an interrupted append) is not repaired",
        ANC,
        r"""            advance_head(home, dataset, Head(last, entries[-1].hash))""",
        r"""            pass""",
        (f"{ANCHOR}::test_an_interrupted_append_leaves_the_ledger_ahead_which_is_accepted_and_repaired",),
    ),
    Mutant(
        "AN06",
        "anchor: only the head's sequence number is checked, not its hash (a replaced ledger passes)",
        ANC,
        r"""    if head.seq > 0 and entries[head.seq - 1].hash != head.hash:""",
        r"""    if False:""",
        (f"{ANCHOR}::test_a_replaced_ledger_of_the_same_length_is_broken",),
    ),
    Mutant(
        "AN07",
        "anchor: a home from before the register is anchored at nothing instead of its ledgers' current heads",
        ANC,
        r"""                    head = Head(entries[-1].seq, entries[-1].hash) if entries else NO_ENTRY""",
        r"""                    head = NO_ENTRY""",
        (f"{ANCHOR}::test_a_home_from_before_the_register_is_anchored_at_its_current_heads",),
    ),
    Mutant(
        "AN08",
        "anchor: a dataset whose register file was removed is taken as it is (the register deleted with a cut)",
        ANC,
        r"""    if before is None:""",
        r"""    if before is None:
        return""",
        (f"{ANCHOR}::test_a_removed_or_damaged_register_file_is_broken_not_fresh",),
    ),
    Mutant(
        "AN09",
        "anchor: an acknowledgement keeps the old head (the acknowledged chain is refused forever)",
        L,
        r"""            anchor.begin_reset(self.home, dataset, first)""",
        r"""            pass""",
        (f"{ANCHOR}::test_acknowledging_a_cut_ledger_starts_a_chain_whose_head_is_recorded",),
    ),
    Mutant(
        "AN10",
        "review: files added to a package (raw data, say) are not named",
        REV,
        r"""    _check_folder(folder, out, files)""",
        r"""    pass""",
        (f"{REVIEW_GAPS}::test_an_added_file_is_named",),
    ),
    Mutant(
        "AN11",
        "review: a duplicated entry in ledger.json is not named",
        REV,
        r"""        if seen[key] == 2:""",
        r"""        if False:""",
        (f"{REVIEW_GAPS}::test_a_duplicated_entry_is_named",),
    ),
    Mutant(
        "AN12",
        "review: a field added to ledger.json is not named",
        REV,
        r"""    for extra in sorted(fields - {"dataset", "head", "entries"}):""",
        r"""    for extra in ():""",
        (f"{REVIEW_GAPS}::test_a_changed_top_level_field_is_named",),
    ),
    Mutant(
        "AN13",
        "review: an empty exported ledger is intact",
        REV,
        r"""    if not out.entries:""",
        r"""    if not out.entries and False:""",
        (f"{REVIEW_GAPS}::test_an_empty_exported_ledger_is_named",),
    ),
    Mutant(
        "AN14",
        "review: a settings entry removed from ledger.json is not named",
        REV,
        r"""        if named is not None and not any(e.get("hash") == named for e in settings):""",
        r"""        if False:""",
        (f"{REVIEW_GAPS}::test_a_removed_settings_entry_is_named",),
    ),
    Mutant(
        "AN15",
        "review: --against is ignored (a later ledger rolled back behind a package is not named)",
        REV,
        r"""        review_against(out, later)""",
        r"""        pass""",
        (f"{REVIEW_GAPS}::test_a_later_export_rolled_back_behind_the_package_is_named",),
    ),
    Mutant(
        "AN16",
        "review: --against compares the head's sequence number only (a replaced later ledger passes)",
        REV,
        r"""    reached = isinstance(seq, int) and seq in by_seq and by_seq[seq].hash == digest""",
        r"""    reached = isinstance(seq, int) and seq in by_seq""",
        (f"{REVIEW_GAPS}::test_a_later_export_of_a_replaced_ledger_is_named",),
    ),
    Mutant(
        "AN17",
        "anchor: budget --data, release and ledger verify do not check the ledger against its head",
        L,
        r"""        if not anchor.is_anchored(self.home):""",
        r"""        if True:""",
        (f"{ANCHOR_CLI}::test_a_ledger_behind_its_head_or_gone_is_refused_with_exit_3",),
    ),
    # --- issue 12: typed values, validated when built ------------------------------------------------------
    Mutant(
        "TY01",
        "types: a budget built by hand takes a negative, zero or non-finite epsilon",
        "dpdesk/core/model/spec.py",
        r"""        _set(self, "epsilon", read_positive(self.epsilon, "budget.epsilon"))""",
        r"""        _set(self, "epsilon", float(self.epsilon))""",
        (TYPES,),
    ),
    Mutant(
        "TY02",
        "types: a unit of privacy built by hand takes any number of rows per person",
        "dpdesk/core/model/spec.py",
        r"""        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_ROWS_PER_PERSON:""",
        r"""        if False:""",
        (TYPES,),
    ),
    Mutant(
        "TY03",
        "types: a numeric column built by hand keeps reversed, infinite or fractional int bounds",
        "dpdesk/core/model/spec.py",
        r"""            _set(self, "bounds", _parse_bounds(self.bounds, f"{key}.bounds", integer=ctype == ColumnType.INT))""",
        r"""            pass""",
        (TYPES,),
    ),
    Mutant(
        "TY04",
        "types: accounting built by hand takes a delta' with a method that does not spend it",
        "dpdesk/core/model/spec.py",
        r"""        elif self.delta_prime is not None:""",
        r"""        elif False:""",
        (TYPES,),
    ),
    Mutant(
        "TY05",
        "types: a column built by hand imputes a value outside its bounds or categories",
        "dpdesk/core/model/spec.py",
        r"""        _check_impute(self.missing.impute, f"{key}.missing", ctype, self.bounds, self.categories)""",
        r"""        pass""",
        (TYPES,),
    ),
    Mutant(
        "TY06",
        "types: a typed ledger entry is written back in another key order (old lines and ledger --json change)",
        ENT,
        r"""        return {k: header[k] if k in header else self.fields[k] for k in self.order}""",
        r"""        return {**header, **self.fields}""",
        (ENTRIES,),
    ),
    Mutant(
        "TY07",
        "types: a line without its chain fields is typed as a ledger entry",
        ENT,
        r"""    if not all(isinstance(d.get(k), str) for k in ("dataset", "prev", "hash")) or "time" not in d:""",
        r"""    if False:""",
        (ENTRIES,),
    ),
    # --- issue 13, item 3: the budget follows the table (content identity, sketch, resolution) ---------------
    Mutant(
        "ID01",
        "content identity: columns taken in file order, not matched by header name",
        "dpdesk/core/loading/identity.py",
        r"""    return canon, sorted(range(len(canon)), key=lambda i: canon[i])""",
        r"""    return canon, list(range(len(canon)))""",
        (IDT,),
    ),
    Mutant(
        "ID02",
        "content identity: numbers compared as text (12.0 is not 12)",
        "dpdesk/core/loading/identity.py",
        r"""        branches.append((small, ":i", x.cast(pl.Int64, strict=False).cast(pl.String)))""",
        r"""        branches.append((small, ":t", t))""",
        (IDT,),
    ),
    Mutant(
        "ID03",
        "content identity: text not NFC-normalised",
        "dpdesk/core/loading/identity.py",
        r"""        s = s.str.normalize("NFC")""",
        r"""        s = s""",
        (IDT,),
    ),
    Mutant(
        "ID04",
        "resemblance: the threshold of the two sketches taken as the larger, not the smaller, largest hash",
        "dpdesk/core/loading/identity.py",
        r"""    t = min(
        known.hashes[-1]""",
        r"""    t = max(
        known.hashes[-1]""",
        (IDT,),
    ),
    Mutant(
        "ID05",
        "the cache by the bytes' SHA-256 is never used: every open pays for the content identity again",
        "dpdesk/core/identity/recognition.py",
        "    if sha256 is not None:\n        cached = cached_identity(home, sha256, scheme)",
        "    if sha256 is None:\n        cached = cached_identity(home, sha256, scheme)",
        (IDT,),
    ),
    Mutant(
        "ID06",
        "resolution: an unknown file whose content is a known dataset's is treated as new",
        "dpdesk/core/identity/recognition.py",
        r"""    owner = live_owner(home, ident.key)""",
        r"""    owner = None""",
        (IDT, CLI + "::test_a_crlf_copy_of_the_table_is_charged_to_the_same_ledger"),
    ),
    Mutant(
        "ID07",
        "the ledger's hook: a new dataset's content is not recorded when its key is written",
        "dpdesk/core/ledger/book.py",
        r"""    _remember_content(folder.parent, sha256, dataset)""",
        r"""    pass""",
        (IDT, CLI + "::test_a_crlf_copy_of_the_table_is_charged_to_the_same_ledger"),
    ),
    Mutant(
        "ID08",
        "release: the table is not resolved by content before the charge (a fresh budget for a re-saved copy)",
        "dpdesk/core/release/steps.py",
        "            resolution = recognition.resolve(\n",
        "            resolution = None and recognition.resolve(\n",
        (CLI + "::test_a_crlf_copy_of_the_table_is_charged_to_the_same_ledger",),
    ),
    # --- the fast content identity: exactly the reference's keys and sketches, memory bounded ---------------
    Mutant(
        "IF01",
        "fast content identity: a whole number of 2^63 or more in a column without fractions loses its encoding",
        "dpdesk/core/loading/identity.py",
        r"""    if flags["frac"] or flags["big"]:
        branches.append((finite, ":f", x.cast(pl.String)))""",
        r"""    if flags["frac"]:
        branches.append((finite, ":f", x.cast(pl.String)))""",
        (IDF,),
    ),
    Mutant(
        "IF02",
        "fast content identity: a column of several kinds of cell encoded as if all took the first kind",
        "dpdesk/core/loading/identity.py",
        r"""    if len(branches) > 1:  # with one branch every non-missing cell takes it""",
        r"""    if len(branches) > 2:  # with one branch every non-missing cell takes it""",
        (IDF,),
    ),
    Mutant(
        "IF03",
        "fast content identity: distinct cells mapped back to the wrong encodings",
        "dpdesk/core/loading/identity.py",
        r"""                index = s.replace_strict(
                    distinct, pl.Series(np.arange(distinct.len(), dtype=np.uint32)), return_dtype=pl.UInt32
                )""",
        r"""                index = s.replace_strict(
                    distinct.sort(nulls_last=True),
                    pl.Series(np.arange(distinct.len(), dtype=np.uint32)),
                    return_dtype=pl.UInt32,
                )""",
        (IDF,),
    ),
    Mutant(
        "IF04",
        "fast word hash: a row's length mixed in as its number of words (rows padded alike collide)",
        "dpdesk/core/loading/wordhash.py",
        r"""        acc ^= fmix(lens.astype(_U64) ^ b)
        out.append(fmix(acc))
    return tuple(out)
""",
        r"""        acc ^= fmix(words_per_row.astype(_U64) ^ b)
        out.append(fmix(acc))
    return tuple(out)
""",
        (IDF,),
    ),
    Mutant(
        "IF05",
        "fast content identity: batches pile up while the encoder is busy (memory no longer bounded by a batch)",
        "dpdesk/core/loading/identity.py",
        r"""        self.wait()
        self.rows += frame.height""",
        r"""        self.rows += frame.height""",
        (f"{IDF}::test_at_most_one_batch_is_encoded_while_the_next_is_read",),
    ),
    Mutant(
        "IF06",
        "fast content identity: an error encoding the last batch escapes as a polars error, not the reader's",
        "dpdesk/core/loading/identity.py",
        r"""        acc.wait()  # the last batch's errors are the reader's too""",
        r"""        pass""",
        (f"{IDF}::test_xlsx_and_parquet_give_the_reference_identity",),
    ),
    # --- issue 13, item 2: a crash-safe, conservative acknowledgement --------------------------------------
    Mutant(
        "AK01",
        "acknowledge: the broken ledger is moved aside before the new chain is written (a kill resets the budget)",
        L,
        r"""        store.replace(dataset, (canonical_json(entry) + "\n").encode("utf-8"))""",
        r"""        path.unlink()
        store.replace(dataset, (canonical_json(entry) + "\n").encode("utf-8"))""",
        (f"{ACK}::test_sigkill_at_every_step_of_an_acknowledgement_never_reads_less_spent", ACK),
    ),
    Mutant(
        "AK02",
        "acknowledge: a failed write leaves its temporary file behind",
        FSIO,
        r"""        with contextlib.suppress(OSError):
            tmp.unlink()
        raise""",
        r"""        raise""",
        (ACK,),
    ),
    Mutant(
        "AK03",
        "acknowledge: the last sound line anchors the chain although damaged lines follow it",
        CO,
        r"""    if lines and lines[-1].sound and lines[-1].slot > floor:""",
        r"""    lines = [ln for ln in lines if ln.sound] or lines
    if lines and lines[-1].sound and lines[-1].slot > floor:""",
        (ACK,),
    ),
    Mutant(
        "AK04",
        "acknowledge: an entry whose content does not match its hash is carried over as written",
        CO,
        r"""            and entry_hash(e) == e["hash"]
            and _usable(e)""",
        r"""            and _usable(e)""",
        (ACK,),
    ),
    Mutant(
        "AK05",
        "acknowledge: a gap in the sequence numbers is not noticed",
        CO,
        r"""                gaps.append((expect, entry["seq"] - 1))""",
        r"""                pass""",
        (ACK,),
    ),
    Mutant(
        "AK06",
        "acknowledge: entries missing up to the recorded head are not a gap",
        CO,
        r"""        gaps.append((last_slot + 1, head[0]))""",
        r"""        pass""",
        (ACK,),
    ),
    Mutant(
        "AK07",
        "acknowledge: the settings come from the last readable settings entry, verified or not",
        CO,
        r"""    settings = settings_in_force(kept)""",
        r"""    settings = settings_in_force([ln.entry for ln in lines if ln.entry is not None])""",
        (ACK,),
    ),
    Mutant(
        "AK08",
        "acknowledge: a stated cost that is NaN, infinite or negative is taken",
        CO,
        r"""        ok = not isinstance(x, bool) and isinstance(x, int | float) and math.isfinite(x) and x >= 0""",
        r"""        ok = not isinstance(x, bool) and isinstance(x, int | float)""",
        (ACK,),
    ),
    Mutant(
        "AK09",
        "acknowledge: an unverified entry without a stated cost is dropped instead of blocking the carry-over",
        CO,
        r"""    if missing or in_force is None:""",
        r"""    if in_force is None:""",
        (ACK,),
    ),
    Mutant(
        "AK10",
        "acknowledge: the offer is the smallest of the recorded, recomputed and exported costs",
        CO,
        r"""            max(o.cost.epsilon for o in self.offers),""",
        r"""            min(o.cost.epsilon for o in self.offers),""",
        (ACK,),
    ),
    # --- issue 13, item 4: an officer who holds the key -------------------------------------------------------
    Mutant(
        "GV01",
        "governance: a governed dataset's settings change goes through without the officer's approval",
        GV,
        r"""    if doc is None:
        raise ApprovalRequired(
            _(
                "this dataset is governed by {name} (key {fp}): {what}""",
        r"""    if doc is None:
        return None
    if doc is None:
        raise ApprovalRequired(
            _(
                "this dataset is governed by {name} (key {fp}): {what}""",
        (f"{GOV}::test_a_governed_settings_change_without_approval_is_refused", GOV),
    ),
    Mutant(
        "GV02",
        "governance: the nonces of recorded approvals are not read (an approval can be used twice)",
        GV,
        r"""            out.add(p["nonce"])""",
        r"""            pass""",
        (f"{GOV}::test_signed_plans_policy_refuses_an_unsigned_release_and_accepts_a_signed_one_once", GOV),
    ),
    Mutant(
        "GV03",
        "release: signed-plans policy not enforced (an unsigned plan is released)",
        "dpdesk/core/release/steps.py",
        r"""    return require_plan_with(""",
        r"""    return None and require_plan_with(""",
        (f"{GOV}::test_signed_plans_policy_refuses_an_unsigned_release_and_accepts_a_signed_one_once", GOV),
    ),
    Mutant(
        "GV04",
        "review: a change of a governed dataset without an approval is not named",
        GV,
        r"""    if not isinstance(rec, Mapping):
        problems.append(""",
        r"""    if not isinstance(rec, Mapping):
        return None
        problems.append(""",
        (f"{GOV}::test_review_catches_a_forged_or_edited_approval_in_an_export", GOV),
    ),
    Mutant(
        "GV05",
        "acknowledge: a governed broken ledger is acknowledged without the officer's approval",
        "dpdesk/services/ledger.py",
        r"""exported=copies, gate=gate""",
        r"""exported=copies, gate=None""",
        (
            f"{GOV}::test_a_governed_broken_ledger_is_acknowledged_only_with_an_approval_and_stays_governed",
            GOV,
        ),
    ),
    Mutant(
        "GV06",
        "review: the approvals in a release package are not verified",
        "dpdesk/core/publish/review.py",
        r"""    _check_package_approvals(entries, package, out)""",
        r"""    pass""",
        (f"{GOV}::test_review_catches_an_edited_plan_approval_in_a_package", GOV),
    ),
    Mutant(
        "GV07",
        "governance: a home's copy of the governance record that disagrees with the ledger is not refused (the "
        "analyst's key put in charge)",
        GV,
        r"""    if kept is not None and kept != record:""",
        r"""    if False:""",
        (f"{GA}::test_a_swapped_governance_copy_never_overrides_the_ledger", GA),
    ),
    Mutant(
        "GV08",
        "acknowledge: the governance the register recorded is not used (a deleted copy and a damaged govern entry "
        "read as ungoverned)",
        GV,
        r"""    if register is not None and register[0]:""",
        r"""    if False:""",
        (f"{GA}::test_a_deleted_copy_and_a_damaged_govern_entry_leave_the_dataset_governed", GA),
    ),
    Mutant(
        "GV09",
        "governance: a govern entry after the recorded head is accepted without its officer's approval",
        GV,
        r"""            ok = verified is not None and current.after(verified) == new""",
        r"""            ok = True""",
        (f"{GA}::test_a_govern_entry_appended_with_a_valid_hash_but_no_recovery_signature_is_refused", GA),
    ),
    Mutant(
        "GV10",
        "review --against: a later ledger restarted under another key, or ungoverned, is not named",
        "dpdesk/core/publish/review.py",
        r"""    _check_governance_against(out, later.entries, later_path, seq if reached else 0)""",
        r"""    pass""",
        (f"{GA}::test_review_against_names_a_governance_the_whole_home_was_rewritten_for", GA),
    ),
    Mutant(
        "GV11",
        "register: a govern entry's governance is not recorded with its head",
        "dpdesk/core/ledger/book.py",
        r"""                    governs=entry_type == "govern",""",
        r"""                    governs=False,""",
        (f"{GA}::test_a_rotation_by_the_recovery_key_is_accepted_even_when_its_register_write_was_lost", GA),
    ),
    Mutant(
        "AK11",
        "acknowledge: a new chain put in place before its head was recorded is not recognised (refused, and a "
        "second acknowledgement states and charges the gap twice)",
        ANC,
        r"""    if pending is not None and _holds(entries, pending):""",
        r"""    if False:""",
        (f"{ACK}::test_an_acknowledgement_interrupted_before_its_head_was_recorded_is_not_charged_twice",),
    ),
    Mutant(
        "AK12",
        "acknowledge: the head is reset before the new chain replaces the broken ledger (a crash between forgets "
        "the entries missing up to the old head)",
        ANC,
        r"""        _write_record(home, rec.with_head(rec.head, first))""",
        r"""        _write_record(home, rec.with_head(first, None))""",
        (f"{ACK}::test_a_full_disk_at_every_step_of_an_acknowledgement_never_reads_less_spent",),
    ),
    # --- issue 13, attack pass: the identity store and the register's head cannot be reset by a file edit -------
    Mutant(
        "ID09",
        "register: a head set back below the highest entry number ever recorded is accepted",
        "dpdesk/core/ledger/anchor.py",
        r"""    if head.seq < ever:""",
        r"""    if False:""",
        ("tests/cli/test_identity_store.py::test_a_head_set_back_to_zero_is_refused",),
    ),
    Mutant(
        "ID10",
        "identity: a replaced identity secret is not compared with the register's fingerprint",
        CT,
        r"""        if expected != fingerprint:""",
        r"""        if False:""",
        ("tests/cli/test_identity_store.py::test_a_replaced_secret_and_deleted_contents_are_refused",),
    ),
    Mutant(
        "ID11",
        "identity: missing or cut recorded contents are not noticed",
        CT,
        r"""        if len(records.get(dataset, {})) < count:""",
        r"""        if False:""",
        ("tests/cli/test_identity_store.py::test_a_replaced_secret_and_deleted_contents_are_refused",),
    ),
    Mutant(
        "HB01",
        "release: --out is no longer checked and claimed before the charge (a bad folder charges, then fails)",
        "dpdesk/core/release/steps.py",
        r"""            claim = claim_out_dir(out_dir)""",
        r"""            claim = None""",
        ("tests/trust/test_outputs.py::test_a_bad_out_is_refused_before_anything_is_charged",),
    ),
    Mutant(
        "HB02",
        "release: a package that fails to write is left half-written beside its place",
        "dpdesk/core/release/steps.py",
        r"""    except BaseException:
        claim.abandon()
        raise""",
        r"""    except BaseException:
        raise""",
        (
            "tests/trust/test_outputs.py::test_a_full_disk_at_any_step_after_the_charge_leaves_no_partial_package",
        ),
    ),
    Mutant(
        "HB03",
        "outputs: an existing file is replaced without --force",
        "dpdesk/core/publish/outputs.py",
        r"""    if os.path.lexists(out) and not force:""",
        r"""    if False:""",
        ("tests/trust/test_outputs.py::test_output_files_refuse_an_existing_file_unless_forced",),
    ),
    Mutant(
        "HB04",
        "outputs: a file under the dpdesk home (a ledger) can be replaced with --force",
        "dpdesk/core/publish/outputs.py",
        r"""    if home is not None and _under(out, home):""",
        r"""    if False:""",
        ("tests/trust/test_outputs.py::test_output_files_never_replace_the_data_the_plan_or_the_home",),
    ),
    Mutant(
        "HA01",
        "shown text: control characters in titles, names and reasons reach the terminal, app and PDF raw",
        "dpdesk/core/common/text.py",
        r"""    return str(text).translate(_TABLE_LINES if keep_newlines else _TABLE)""",
        r"""    return str(text)""",
        (
            f"{HA}::test_a_title_cannot_forge_intact_in_review",
            f"{HA}::test_a_reason_cannot_blank_a_ledger_line",
            f"{HA}::test_pdf_text_shows_control_characters",
            f"{HA}::test_the_review_window_shows_control_characters",
        ),
    ),
    Mutant(
        "HA02",
        "a closed output pipe ends in a traceback",
        "dpdesk/cli/printer.py",
        r"""        _silence_stdout()
        return 0 if code is None else code""",
        r"""        raise""",
        (f"{HA}::test_a_closed_pipe_ends_quietly_in_process", f"{HA}::test_a_closed_pipe_ends_quietly"),
    ),
    Mutant(
        "HA03",
        "a polars panic on a malformed file escapes the readers (a traceback, exit 1)",
        "dpdesk/core/loading/panics.py",
        r"""    return (Exception, PanicException)""",
        r"""    return (Exception,)""",
        (
            f"{HA}::test_a_parquet_file_that_makes_polars_panic",
            f"{HA}::test_a_reader_panic_is_caught_narrowly",
        ),
    ),
    Mutant(
        "HA04",
        "a query epsilon of 5e-324 or 1e-300 is accepted (infinite noise scale, a traceback)",
        "dpdesk/core/plan/reader.py",
        r"""    if eps < MIN_EPSILON:""",
        r"""    if False:""",
        (f"{HA}::test_extreme_numbers_are_refused", f"{HA}::test_fuzz_the_command_line"),
    ),
    Mutant(
        "HA05",
        "bounds narrower than 1e-9 are accepted (sensitivity underflows, a traceback)",
        "dpdesk/core/model/spec.py",
        r"""    if hi - lo < MIN_BOUND_WIDTH:""",
        r"""    if False:""",
        (f"{HA}::test_extreme_numbers_are_refused",),
    ),
    Mutant(
        "HA06",
        "deeply nested JSON in a package's ledger.json ends in a traceback (the JSON reader's refusal is none of its)",
        JIN,
        r"""    return JsonInputError("depth", _("nested more than {n} levels deep").format(n=MAX_DEPTH))""",
        r"""    raise MemoryError("depth", _("nested more than {n} levels deep").format(n=MAX_DEPTH))""",
        (
            f"{HA}::test_a_hostile_package_is_a_review_failure",
            f"{HA}::test_a_deeply_nested_line_in_a_ledger_is_damage_not_a_traceback",
        ),
    ),
    Mutant(
        "HA07",
        "the one CSV writer (release.csv, simulate's CSV) writes formula-like cells live",
        "dpdesk/core/dp/values.py",
        r"""    table = [list(header)] + [[neutralise(str(c)) for c in r] for r in rows]""",
        r"""    table = [list(header)] + [[str(c) for c in r] for r in rows]""",
        (f"{HA}::test_the_simulate_csv_is_formula_safe", G_CSV),
    ),
    Mutant(
        "HC01",
        "xlsx: a far-off cell is not bounded (calamine allocates the whole rectangle)",
        "dpdesk/core/loading/guards.py",
        r"""        if self.max_row * self.max_col > MAX_XLSX_CELLS:""",
        r"""        if False:""",
        ("tests/trust/test_input_size_limits.py::test_far_off_xlsx_cell_refused_before_calamine",),
    ),
    Mutant(
        "HC02",
        "xlsx: a reference past Excel's last row or column is not refused",
        "dpdesk/core/loading/guards.py",
        r"""        if row > XLSX_MAX_ROW or col > XLSX_MAX_COL:""",
        r"""        if False:""",
        (
            "tests/trust/test_input_size_limits.py::test_far_off_xlsx_cell_refused_before_calamine",
            "tests/trust/test_input_size_limits.py::test_cell_scan_counts_cells_without_references",
        ),
    ),
    Mutant(
        "HC03",
        "parquet: the decoded-size estimate from the footer is not checked",
        "dpdesk/core/loading/guards.py",
        r"""    if estimate > MAX_PARQUET_DECODED and estimate > MAX_PARQUET_RATIO * max(size, 1):""",
        r"""    if False:""",
        ("tests/trust/test_input_size_limits.py::test_parquet_bomb_refused_from_its_metadata",),
    ),
    Mutant(
        "HC04",
        "parquet: undeclared columns are decoded",
        "dpdesk/core/loading/parquet.py",
        r"""    return pl.read_parquet(path, columns=[n for n in names if n.strip() in wanted])""",
        r"""    return pl.read_parquet(path)""",
        ("tests/trust/test_input_size_limits.py::test_parquet_decodes_only_declared_columns",),
    ),
    Mutant(
        "HC05",
        "plan: more than 10^6 cells are not refused when the plan is read",
        "dpdesk/core/plan/reader.py",
        r"""        if cells > MAX_PLAN_CELLS:""",
        r"""        if False:""",
        ("tests/trust/test_input_size_limits.py::test_plan_of_too_many_cells_refused_at_validation",),
    ),
    Mutant(
        "HC06",
        "data: a device or a FIFO is read as a data file",
        "dpdesk/core/loading/guards.py",
        r"""    if not stat.S_ISREG(mode):""",
        r"""    if False:""",
        ("tests/trust/test_input_size_limits.py::test_device_and_fifo_refused_at_once",),
    ),
    Mutant(
        "HC07",
        "start-up: no display check before Qt (Qt aborts the process)",
        "dpdesk/cli/app.py",
        r"""    problem = startup.display_problem() or startup.qt_problem()""",
        r"""    problem = startup.qt_problem()""",
        ("tests/gui/test_startup.py::test_no_display_is_one_line_and_exit_2",),
    ),
    Mutant(
        "HC08",
        "start-up: a missing system library is reported as Qt not installed",
        "dpdesk/gui/startup.py",
        r"""        lib = re.search(r"([\w.+-]+\.so(?:\.\d+)*)", text)""",
        r"""        lib = None""",
        ("tests/gui/test_startup.py::test_libgl_missing_names_the_library_and_packages",),
    ),
    Mutant(
        "HC09",
        "start-up: no dialog where Qt can start",
        "dpdesk/gui/startup.py",
        r"""        QMessageBox.critical(None, "dpdesk", message)""",
        r"""        pass""",
        ("tests/gui/test_startup.py::test_unwritable_home_message_and_dialog",),
    ),
    Mutant(
        "HC10",
        "start-up: the log holds the exception's text (possibly data values)",
        "dpdesk/gui/startup.py",
        r"""            lines.append(f"  {type(exc).__module__}.{type(exc).__qualname__}, raised at:")""",
        r"""            lines.append(f"  {type(exc).__module__}.{type(exc).__qualname__}: {exc}, raised at:")""",
        ("tests/gui/test_startup.py::test_failure_while_starting_is_logged_without_values",),
    ),
    Mutant(
        "OE01",
        "parquet: the content identity decodes every column before any limit is checked",
        "dpdesk/core/loading/identity.py",
        r"""            check_parquet(path)  # every column is decoded here: the metadata's limits, then bounded batches""",
        r"""            pass""",
        ("tests/trust/test_input_size_limits.py::test_identity_refuses_before_decoding_anything",),
    ),
    Mutant(
        "OE02",
        "parquet: a dictionary-encoded text column is held to the metadata's estimate only (12 KB: 10 GB)",
        "dpdesk/core/loading/guards.py",
        r"""    if scan:
        _check_decoded(path, _text_bytes(path, columns, max(rows, group_rows)))""",
        r"""    if False:
        _check_decoded(path, _text_bytes(path, columns, max(rows, group_rows)))""",
        (
            "tests/trust/test_input_size_limits.py::test_dictionary_encoded_text_refused_before_it_is_copied",
            "tests/trust/test_input_size_limits.py::test_identity_refuses_before_decoding_anything",
        ),
    ),
    Mutant(
        "OE03",
        "parquet: batches of long text are not sliced by their decoded bytes",
        "dpdesk/core/loading/guards.py",
        r"""            stop = min(max(stop, start + 1), start + max_rows, frame.height)""",
        r"""            stop = min(start + max_rows, frame.height)""",
        (
            "tests/trust/test_input_size_limits.py::test_bounded_batches_slice_by_decoded_bytes",
            "tests/trust/test_input_size_limits.py::test_long_text_identity_is_hashed_in_bounded_slices",
        ),
    ),
    Mutant(
        "OE04",
        "identity: a limit's refusal is not remembered (the file is decoded again at every call)",
        "dpdesk/core/identity/recognition.py",
        r"""        refused = refusal_of(home, sha256)
        if refused is not None:""",
        r"""        refused = refusal_of(home, sha256)
        if False:""",
        ("tests/trust/test_input_size_limits.py::test_a_refused_identity_is_remembered",),
    ),
    Mutant(
        "OE05",
        "start-up: a display whose socket accepts but whose X server refuses this program reaches Qt's abort",
        "dpdesk/gui/startup.py",
        r"""    if not wayland and _x11_handshake(env["DISPLAY"]) is False:""",
        r"""    if False:""",
        ("tests/gui/test_startup.py::test_a_display_that_refuses_x_is_one_line_not_qts_abort",),
    ),
    Mutant(
        "OE06",
        "parquet: the loader copies a declared column's long text whole, not in bounded slices",
        "dpdesk/core/loading/parquet.py",
        r"""        lambda frame: bounded_batches(path, [frame], max(frame.height, 1)),  # long text copied in slices""",
        r"""        None,""",
        ("tests/trust/test_input_size_limits.py::test_declared_long_text_is_loaded_in_bounded_slices",),
    ),
    Mutant(
        "NC01",
        "near-copy: release charges a table that resembles a known dataset to a fresh budget",
        "dpdesk/core/release/steps.py",
        r"""            recognition.refuse_near_copy(resolution)""",
        r"""            pass""",
        (f"{NC}::test_a_copy_with_one_row_added_is_refused_until_linked_then_charged_to_the_same_ledger",),
    ),
    Mutant(
        "NC02",
        "near-copy: budget --data (any ledger opened by its file) gives a near-copy a fresh budget",
        "dpdesk/core/identity/recognition.py",
        r"""    if resolution is not None and resolution.how == "new" and resolution.resembles:""",
        r"""    if False:""",
        (f"{NC}::test_a_copy_with_one_row_added_is_refused_until_linked_then_charged_to_the_same_ledger",),
    ),
    Mutant(
        "NC03",
        "near-copy: declaring a near-copy of a governed dataset new needs no approval",
        "dpdesk/services/ledger.py",
        r"""    with known.transaction() as tx:
        approved = require(""",
        r"""    with known.transaction() as tx:
        approved = None and require(""",
        (f"{NC}::test_declare_new_on_a_governed_dataset_needs_the_officers_approval",),
    ),
    Mutant(
        "NC04",
        "forget-identity: a governed dataset's content identity is forgotten without the officer's approval",
        "dpdesk/services/ledger.py",
        r"""            if tx.state.retired_into is not None or governance_of(tx.entries) is None:""",
        r"""            if True:""",
        (f"{NC}::test_forget_identity_on_a_governed_dataset_needs_the_officers_approval",),
    ),
    Mutant(
        "NC05",
        "review: a declare_new or forget_identity entry of a governed dataset is not re-verified",
        "dpdesk/core/ledger/governed.py",
        r"""GATED = ("settings", "acknowledge", "declare_new", "forget_identity", "merge", "merged_into")""",
        r"""GATED = ("settings", "acknowledge", "merge", "merged_into")""",
        (f"{NC}::test_declare_new_on_a_governed_dataset_needs_the_officers_approval",),
    ),
    Mutant(
        "NC06",
        "review: a declare_new entry's new name is not compared with the one its approval signs",
        "dpdesk/core/ledger/governed.py",
        r"""        return {"new_dataset": e.get("new_dataset")}""",
        r"""        return None""",
        (f"{NC}::test_declare_new_on_a_governed_dataset_needs_the_officers_approval",),
    ),
    Mutant(
        "NC07",
        "declare-new: the new dataset's first entry does not name the dataset it resembles",
        "dpdesk/services/ledger.py",
        r"""        first = tx.append("declared_new", {"resembles": request.resembles, "reason": reason})""",
        r"""        first = tx.append("declared_new", {"resembles": new, "reason": reason})""",
        (f"{NC}::test_declare_new_records_both_entries_and_starts_a_fresh_budget",),
    ),
    Mutant(
        "GC01",
        "app: garbage is collected in whichever thread allocates (a worker's collection can crash Qt)",
        "dpdesk/gui/app.py",
        r"""    gc_guard.install(app)""",
        r"""    pass""",
        ("tests/gui/test_gc_guard.py",),
    ),
    Mutant(
        "FT01",
        "fit to the budget: the reserve kept for later releases is not kept",
        "dpdesk/core/ledger/fit.py",
        r"""        return acc.fits(after, b_eps, b_delta) and remaining(b_eps, after) >= reserve""",
        r"""        return acc.fits(after, b_eps, b_delta)""",
        ("tests/core/test_fit.py",),
    ),
    Mutant(
        "FT02",
        "fit to the budget: under zCDP the weights split epsilon, not rho",
        "dpdesk/core/ledger/fit.py",
        r"""            e = _epsilon_for_rho(plan, plan.queries[i], t * share[i]) if zcdp else t * share[i]""",
        r"""            e = t * share[i]""",
        ("tests/core/test_fit.py",),
    ),
    Mutant(
        "FT03",
        "fit to the budget: shares are rounded to the nearest, so they can exceed what is left",
        "dpdesk/core/ledger/fit.py",
        r"""    y = math.floor(x * scale) / scale""",
        r"""    y = round(x * scale) / scale""",
        ("tests/core/test_fit.py",),
    ),
    # --- help choosing epsilon (issue 15 item 5) --------------------------------------------------------
    Mutant(
        "GD01",
        "deployments: describe() warns from a per-release epsilon of 5 (not only above it)",
        "dpdesk/core/dp/deployments.py",
        r"""    if epsilon >= HIGH_EPSILON:""",
        r"""    if epsilon > HIGH_EPSILON:""",
        ("tests/core/test_deployments.py",),
    ),
    Mutant(
        "GD02",
        "epsilon scale: the plan's marker is drawn at the epsilon it is given",
        "dpdesk/gui/views/epsilon_scale.py",
        r"""        self._epsilon = epsilon
""",
        r"""        self._epsilon = None if epsilon is None else 1.0
""",
        ("tests/gui/test_guide.py",),
    ),
    Mutant(
        "CL01",
        "budget: OVER BUDGET printed beside accounting methods that are not in force",
        "dpdesk/cli/budget.py",
        r"""        if m != rep.method:  # only the method in force decides; the others are shown for comparison""",
        r"""        if False:""",
        (f"{NEWCOMER}::test_budget_names_the_method_in_force_and_no_over_budget_beside_the_others",),
    ),
    Mutant(
        "CL02",
        "help: the commands' help has no example and no exit codes",
        "dpdesk/cli/parser.py",
        r"""        parser.epilog = _epilog(examples, codes)""",
        r"""        parser.epilog = None""",
        (f"{NEWCOMER}::test_every_option_has_a_help_and_every_help_an_example_and_the_exit_codes",),
    ),
    Mutant(
        "CL03",
        "ledger verbs: an officer's name printed with its control characters raw",
        "dpdesk/core/governance/officer.py",
        r"""    return FINGERPRINT_LIKE.sub("[...]", shown(name))""",
        r"""    return FINGERPRINT_LIKE.sub("[...]", name)""",
        (f"{NEWCOMER}::test_ledger_verbs_show_user_text_with_its_control_characters_made_visible",),
    ),
    Mutant(
        "CL04",
        "ledger tab: a settings change's reason shown with its control characters raw",
        "dpdesk/gui/models.py",
        r"""                r=shown(recorded_reason(e.get("reason", ""))),""",
        r"""                r=recorded_reason(e.get("reason", "")),""",
        ("tests/gui/test_ledger_text.py",),
    ),
    Mutant(
        "CL05",
        "ledger tab: user text in the rich-text status line neither made visible nor escaped",
        "dpdesk/gui/views/ledger_view.py",
        r"""    return html.escape(shown(text, keep_newlines=True), quote=False).replace("\n", "<br>")""",
        r"""    return str(text).replace("\n", "<br>")""",
        ("tests/gui/test_ledger_text.py",),
    ),
    Mutant(
        "WL01",
        "warnings: a release that spends everything that is left is not warned about (app and command line)",
        "dpdesk/core/ledger/budget.py",
        r"""    if epsilon > 0 and used_up(left_after, budget):""",
        r"""    if epsilon > 0 and used_up(left_after, budget) and False:""",
        ("tests/cli/test_spend_warnings.py",),
    ),
    Mutant(
        "WL02",
        "app: a job's status line is overwritten by 'Ready to release.' while it runs",
        "dpdesk/gui/main_window.py",
        r"""        elif not busy:  # while a job runs, the status line says what it is doing""",
        r"""        elif True:  # while a job runs, the status line says what it is doing""",
        ("tests/gui/test_shell.py",),
    ),
    Mutant(
        "WL03",
        "app: Return in the release confirmation answers yes (spends)",
        "dpdesk/gui/main_window.py",
        r"""        box.setDefaultButton(QMessageBox.StandardButton.No)""",
        r"""        box.setDefaultButton(QMessageBox.StandardButton.Yes)""",
        ("tests/gui/test_shell.py",),
    ),
    Mutant(
        "WL04",
        "app: releases are numbered by ledger entry (the first release is #2)",
        "dpdesk/gui/models.py",
        r"""    return sum(1 for e in entries if e.type == "spend" and e.seq <= seq)""",
        r"""    return seq""",
        ("tests/gui/test_shell.py",),
    ),
    Mutant(
        "WL05",
        "app: recent files are stored as given (relative paths)",
        "dpdesk/gui/main_window.py",
        r"""        name = text if isinstance(path, str) and kept else os.path.abspath(path)""",
        r"""        name = str(path)""",
        ("tests/gui/test_shell.py",),
    ),
    Mutant(
        "WL06",
        "app: after a release that used the budget up, the meter advises to lower epsilons",
        "dpdesk/gui/views/budget_meter.py",
        r"""            if used_up(rep.remaining_before.epsilon, total):
                text +=""",
        r"""            if False:
                text +=""",
        ("tests/gui/test_shell.py",),
    ),
    Mutant(
        "WL07",
        "app: the export's report title is ignored (the plan's title is used)",
        "dpdesk/core/publish/report.py",
        r"""    title = title or plan_dict.get("title") or _("Differentially private release")""",
        r"""    title = plan_dict.get("title") or _("Differentially private release")""",
        ("tests/gui/test_shell.py",),
    ),
    Mutant(
        "WL08",
        "app: export writes into a chosen folder that is not empty (refused) instead of making a new one",
        "dpdesk/gui/actions/results.py",
        r"""    if empty:
        return chosen""",
        r"""    if True:
        return chosen""",
        ("tests/gui/test_shell.py",),
    ),
    Mutant(
        "WL09",
        "app: 'Show this release' stays on the ledger tab",
        "dpdesk/gui/views/ledger_view.py",
        r"""        self.shown.emit()""",
        r"""        pass""",
        ("tests/gui/test_shell.py",),
    ),
    Mutant(
        "WL10",
        "app: the empty window opens on the tabs and a red error instead of the welcome page",
        "dpdesk/gui/main_window.py",
        r"""        self.pages.addWidget(self.welcome)
        self.pages.addWidget(split)""",
        r"""        self.pages.addWidget(split)
        self.pages.addWidget(self.welcome)""",
        ("tests/gui/test_layout.py",),
    ),
    Mutant(
        "WL12",
        "app: the query table scrolls sideways and hides the epsilon column at 1024 pixels",
        "dpdesk/gui/views/query_form.py",
        r"""        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)""",
        r"""        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)""",
        ("tests/gui/test_layout.py",),
    ),
    Mutant(
        "WL13",
        "app: the sample button opens the table without its plan",
        "dpdesk/gui/actions/opening.py",
        r"""        self.state.load_plan_data(data, None)
        window.show_main()""",
        r"""        window.show_main()""",
        ("tests/gui/test_layout.py",),
    ),
    # --- issue 15 item 6: plan errors in plain words, all at once, the valid part kept -----------------------
    Mutant(
        "ER01",
        "plan errors: validation stops at the first broken query (the others are not checked or reported)",
        "dpdesk/core/plan/reader.py",
        r"""            exc.query_name = query_name
            problems.append(exc)
            continue""",
        r"""            exc.query_name = query_name
            problems.append(exc)
            break""",
        ("tests/core/test_plan_problems.py",),
    ),
    Mutant(
        "ER02",
        "plan errors: a query is numbered from 0 (its index), not from 1",
        "dpdesk/core/common/errors.py",
        r"""            n = int(number) + 1""",
        r"""            n = int(number)""",
        ("tests/core/test_plan_problems.py",),
    ),
    Mutant(
        "ER03",
        "plan errors: no likely fix is suggested for a misspelt column, key, category or choice",
        "dpdesk/core/model/spec.py",
        r"""    close = difflib.get_close_matches(word, [str(k) for k in known], n=1, cutoff=0.6)""",
        r"""    close: list[str] = []""",
        ("tests/core/test_plan_problems.py",),
    ),
    Mutant(
        "ER04",
        "app: a plan with a broken query meters nothing (the valid queries are not counted)",
        "dpdesk/gui/state.py",
        r"""        if self.valid_plan is not None:  # the valid part is metered while other queries have problems""",
        r"""        if self.plan is not None:""",
        ("tests/gui/test_plan_problems_app.py",),
    ),
    Mutant(
        "AC01",
        "accuracy: the discrete Laplace tail is the continuous one (e^(-k/t)), not 2 r^(k+1)/(1+r)",
        "dpdesk/core/dp/accuracy_base.py",
        r"""    return 2.0 * math.exp(-(k + 1) / scale) / (1.0 + r)""",
        r"""    return math.exp(-k / scale) + 0.0 * r""",
        (
            f"{AC}::test_the_discrete_laplace_tail_is_exact",
            f"{AC}::test_a_count_s_solved_epsilon_is_the_smallest_exactly",
        ),
    ),
    Mutant(
        "AC02",
        "accuracy: a mean's stated error lets it fail twice as often as its confidence says",
        "dpdesk/core/dp/accuracy_base.py",
        r"""    budget = (1.0 - confidence) * (1.0 - RATIO_ROUNDING_SHARE)""",
        r"""    budget = 2.0 * (1.0 - confidence) * (1.0 - RATIO_ROUNDING_SHARE)""",
        ("tests/core/test_honest_numbers.py::test_the_mean_bound_holds_for_every_table_and_is_tight",),
    ),
    Mutant(
        "AC03",
        "accuracy first: the solved epsilon is rounded down (it may then miss its target)",
        "dpdesk/core/dp/accuracy.py",
        r"""    r = d.quantize(Decimal(1).scaleb(exp), rounding=ROUND_CEILING)""",
        r"""    r = d.quantize(Decimal(1).scaleb(exp), rounding="ROUND_FLOOR")""",
        (f"{AC}::test_round_up_never_rounds_down",),
    ),
    Mutant(
        "AC04",
        "accuracy: the mode's lead formula uses eps L / Du (the exponential mechanism's 2 Du is lost)",
        "dpdesk/core/dp/accuracy_base.py",
        r"""    return 1.0 / (1.0 + (m - 1) * math.exp(-eps * lead / (2.0 * du)))""",
        r"""    return 1.0 / (1.0 + (m - 1) * math.exp(-eps * lead / du))""",
        (f"{AC}::test_the_mode_lead_formula_is_the_exponential_mechanism_s",),
    ),
    Mutant(
        "AF01",
        "app: switching a query to its accuracy target keeps its epsilon too (the plan gets both keys)",
        "dpdesk/gui/views/query_form.py",
        r"""            q.pop("epsilon", None)
            q["accuracy"] = target""",
        r"""            q["accuracy"] = target""",
        (
            f"{AF}::test_typing_a_target_shows_the_solved_epsilon_and_the_plan_gets_accuracy_only",
            f"{AF}::test_switching_back_and_forth_is_one_undoable_edit_each",
        ),
    ),
    Mutant(
        "AF02",
        "app: opening a table fills in expected_rows from the rows read off it (leaks the row count)",
        "dpdesk/gui/views/schema_view.py",
        r"""        self._updating = False
        self._plan_changed()""",
        r"""        self._updating = False
        if peek is not None:
            self.expected_rows.setText(str(len(peek.rows)))
            self._rows_edited()
        self._plan_changed()""",
        (f"{AF}::test_opening_a_table_never_fills_in_the_expected_rows",),
    ),
    Mutant(
        "AC05",
        "accuracy: the noise's half-width is not the smallest whole k meeting the confidence",
        "dpdesk/core/dp/accuracy_base.py",
        r"""    while hi - lo > 1:  # invariant: tail(lo) > alpha >= tail(hi)""",
        r"""    while hi - lo > 2:  # invariant: tail(lo) > alpha >= tail(hi)""",
        ("tests/core/test_accuracy_edges.py",),
    ),
    Mutant(
        "AC06",
        "accuracy: a quantile whose candidates miss the values claims its rank error unconditionally",
        "dpdesk/core/dp/accuracy_base.py",
        r"""            exact_candidates=design.rank_exact,
""",
        r"""""",
        ("tests/core/test_accuracy_edges.py::test_a_quantile_whose_candidates_miss_the_values_says_so",),
    ),
    Mutant(
        "AC07",
        "accuracy: a confidence next to 1 reaches the solvers (a traceback, exit 1)",
        "dpdesk/core/model/spec.py",
        r"""    if not 0 < confidence <= MAX_CONFIDENCE:""",
        r"""    if not 0 < confidence < 1:""",
        ("tests/core/test_accuracy_edges.py::test_a_confidence_next_to_one_is_a_named_problem",),
    ),
    Mutant(
        "SU01",
        "start-up: the noise adapter imports opendp.prelude (polars and OpenDP's extras, 0.3 s for dpdesk budget)",
        "dpdesk/core/dp/mechanisms.py",
        r"""    enable_features("contrib")
    return SimpleNamespace(""",
        r"""    import opendp.prelude

    enable_features("contrib")
    return SimpleNamespace(""",
        (
            "tests/test_imports.py::test_budget_command_loads_opendp_without_its_prelude_and_nothing_for_the_output",
        ),
    ),
    Mutant(
        "LY01",
        "data tab: the unit box keeps a third of the tab and the column declarations show two rows at 1024x700",
        "dpdesk/gui/views/schema_view.py",
        r"""            QTimer.singleShot(0, self._fit_split)  # once the window's layout has given the tab its height""",
        r"""            pass""",
        (
            "tests/gui/test_layout.py::test_the_data_tab_gives_its_height_to_the_column_declarations_not_the_unit_box",
        ),
    ),
    # --- synthetic tables (dpdesk/core/dp/synthetic/) -------------------------------------------------
    Mutant(
        "SY01",
        "synthetic tables: a Gaussian measurement skips the noise (the exact marginal is released)",
        "dpdesk/core/dp/synthetic/measure.py",
        r"""        noisy, _rho = mech.draw_gaussian(values, split.l2, scale)
        return noisy""",
        r"""        return values""",
        (f"{SYN}::test_every_measurement_is_noisy_with_its_stated_scale",),
    ),
    Mutant(
        "SY02",
        "synthetic tables: the fit reads the real data (the exact two-way marginals instead of the released ones)",
        "dpdesk/core/dp/synthetic/pipeline.py",
        r"""    del exact
    if seed is None:
        seed = secrets.randbits(128)
    model = fit(released)""",
        r"""    from dataclasses import replace

    if seed is None:
        seed = secrets.randbits(128)
    model = fit(
        replace(
            released,
            two_way=tuple(
                replace(m, noisy=tuple(exact.two_way[(m.columns[0], m.columns[1])].ravel().tolist()))
                for m in released.two_way
            ),
        )
    )""",
        (f"{SYN}::test_the_synthetic_table_is_a_function_of_the_released_values_and_the_seed",),
    ),
    Mutant(
        "SY03",
        "synthetic tables: a selection score's sensitivity under replace is k, not 2k",
        "dpdesk/core/dp/synthetic/measure.py",
        r"""        return float(2 * self.k if self.replace else self.k)""",
        r"""        return float(self.k)""",
        (f"{SYN}::test_sensitivities_per_relation", SYN),
    ),
    Mutant(
        "SY04",
        "synthetic tables: a selection round is booked at eps_s^2 / 8 but drawn at twice eps_s",
        "dpdesk/core/dp/synthetic/measure.py",
        r"""        sel = math.sqrt(8.0 * s_sel * rho / rounds) / up""",
        r"""        sel = 2.0 * math.sqrt(8.0 * s_sel * rho / rounds) / up""",
        (f"{SYN}::test_the_split_spends_the_budget_and_no_more",),
    ),
    Mutant(
        "SY05",
        "spend before reveal: a synthetic table written before the spend entry is appended",
        R,
        r"""        synthetic = {name: f for name, f in kept if f is not None}  # noisy marginals and seeds
""",
        r"""        synthetic = {name: f for name, f in kept if f is not None}  # noisy marginals and seeds
        if synthetic:
            from dpdesk.core.publish.package import write_synthetic_tables

            early = Path(str(home)) / "early"
            early.mkdir(parents=True, exist_ok=True)
            write_synthetic_tables(early, plan, {"synthetic": synthetic})
""",
        (f"{SYQ}::test_the_table_is_drawn_from_the_ledger_s_noisy_marginals_after_the_charge",),
    ),
    Mutant(
        "SY06",
        "synthetic tables: the table generated from the exact marginals (the data), not the released ones",
        "dpdesk/core/dp/statistics/synthetic.py",
        r"""        released = synthesiser.measure_marginals(exact.marginals, split, noise_fn, pick_fn)""",
        r"""        released = synthesiser.measure_marginals(exact.marginals, split, lambda v, _s, _c: v, pick_fn)""",
        (f"{SYQ}::test_the_table_is_drawn_from_the_ledger_s_noisy_marginals_after_the_charge",),
    ),
    Mutant(
        "SY07",
        "synthetic tables: the file name taken from the data (an exact count) instead of the public query name",
        "dpdesk/core/dp/statistics/synthetic.py",
        r"""            "file": file_name(spec.name),""",
        r"""            "file": file_name(str(int(exact.marginals.one_way[0][0]))),""",
        (f"{SYQ}::test_the_table_is_drawn_from_the_ledger_s_noisy_marginals_after_the_charge",),
    ),
    Mutant(
        "SY08",
        "synthetic tables: the Laplace measurements draw half the noise their booked epsilon needs",
        "dpdesk/core/dp/synthetic/measure.py",
        r"""    noisy, _b = mech.draw_laplace(values, round(split.l1), split.l1 / scale)""",
        r"""    noisy, _b = mech.draw_laplace(values, round(split.l1), 2 * split.l1 / scale)""",
        (
            "tests/trust/test_audit_synthetic.py::test_the_synthesisers_laplace_measurements_keep_the_booked_epsilon",
        ),
    ),
    # --- the release report at scale (issue 16) -----------------------------------------------------------
    Mutant(
        "RP01",
        "report: the summary table lists every query (a long plan's summary stops after 50)",
        "dpdesk/core/publish/report.py",
        r"""        table.append([name, what, _short_value(qrows), qrows[0][6], qrows[0][7], acc.short() if acc else ""])""",
        r"""        if len(table) <= 50:
            table.append([name, what, _short_value(qrows), qrows[0][6], qrows[0][7], acc.short() if acc else ""])""",
        ("tests/core/test_report_charts.py::test_the_summary_table_lists_every_query_first",),
    ),
    Mutant(
        "RP02",
        "report: the charts are vectors (a results chart embedded as a matplotlib PNG again)",
        "dpdesk/core/publish/report.py",
        r"""            story.append(drawing(chart, width * 0.8))""",
        r"""            import io as _io

            from reportlab.platypus import Image as _Image

            from dpdesk.core.dp.figures import _results_figure

            _png = _io.BytesIO()
            _results_figure(chart).savefig(_png, format="png", dpi=160)
            _png.seek(0)
            story.append(_Image(_png, width=width * 0.8, height=width * 0.8 * 3.0 / 6.4))""",
        (
            "tests/core/test_report_charts.py::test_the_charts_are_vectors_not_images",
            "tests/core/test_report_charts.py::test_a_large_plans_report_grows_by_a_few_kb_per_query",
        ),
    ),
    Mutant(
        "RP03",
        "report: a release never imports matplotlib (the fonts' folder found by importing it)",
        "dpdesk/core/publish/pdftext.py",
        r"""    spec = importlib.util.find_spec("matplotlib")""",
        r"""    import matplotlib

    spec = importlib.util.find_spec("matplotlib")""",
        ("tests/core/test_report_charts.py::test_a_release_with_its_report_never_imports_matplotlib",),
    ),
    # --- a ledger of any length (checkpoints) -------------------------------------------------------
    Mutant(
        "CK01",
        "checkpoints: a checkpoint is trusted although the chain's end is not the head the register recorded",
        L,
        r"""        if last.seq != before.head.seq or last.hash != before.head.hash:""",
        r"""        if False:""",
        (
            "tests/core/test_checkpoint.py::test_a_short_ledger_is_read_from_its_tail_and_forgeries_are_caught",
        ),
    ),
    Mutant(
        "CK02",
        "checkpoints: the running totals a checkpoint keeps leave out a release's delta",
        "dpdesk/core/ledger/checkpoint.py",
        r"""            d += acc.dec(c.delta)""",
        r"""            pass""",
        (
            "tests/core/test_checkpoint.py::test_running_totals_equal_the_accountants",
            "tests/core/test_checkpoint.py::test_checkpoint_totals_are_the_whole_chains",
        ),
    ),
    Mutant(
        "CK03",
        "checkpoints: a full verification (ledger verify, export, review) does not check the last checkpoint",
        "dpdesk/core/ledger/checkpoint.py",
        r"""        return None if expected == st else str(e.seq)""",
        r"""        return None""",
        (
            "tests/core/test_checkpoint.py::test_a_short_ledger_is_read_from_its_tail_and_forgeries_are_caught",
        ),
    ),
    Mutant(
        "CK04",
        "checkpoints: a checkpoint made under other costing rules (COSTING_RULES) is trusted",
        "dpdesk/core/ledger/checkpoint.py",
        r"""        if not costed_here(st):""",
        r"""        if False:""",
        ("tests/core/test_checkpoint.py::test_a_checkpoint_of_other_costing_rules_is_not_trusted",),
    ),
    Mutant(
        "CK05",
        "checkpoints: the releases after a checkpoint are not added to its totals",
        "dpdesk/core/ledger/checkpoint.py",
        r"""        for eff in effective(tail, settings=settings):
            spent = spent.add(eff.release())""",
        r"""        for eff in effective(tail, settings=settings):
            pass""",
        (
            "tests/core/test_checkpoint.py::test_checkpoint_totals_are_the_whole_chains",
            "tests/core/test_checkpoint.py::test_a_short_ledger_is_read_from_its_tail_and_forgeries_are_caught",
        ),
    ),
    Mutant(
        "CK06",
        "checkpoints: the re-costing memo answers for a plan under another unit of privacy (past releases not "
        "re-costed when k rises)",
        "dpdesk/core/ledger/recost.py",
        r"""        key: str | None = json.dumps([plan_dict, unit], sort_keys=True, allow_nan=False)""",
        r"""        key: str | None = json.dumps([plan_dict], sort_keys=True, allow_nan=False)""",
        ("tests/core/test_recost.py",),
    ),
    Mutant(
        "CK07",
        "budget statement: every cell of the entries is a Paragraph again (built and measured per cell: a 5,000-"
        "release statement far above 2 s)",
        "dpdesk/core/publish/report.py",
        r"""        if all(ord(ch) in _LATIN_CMAP for ch in flat) and all(""",
        r"""        if False and all(""",
        ("tests/core/test_statement.py::test_a_long_statement_is_linear_work",),
    ),
    Mutant(
        "CK08",
        "budget statement: a page's table holds every row left (re-built and re-measured at each page break)",
        "dpdesk/core/publish/report.py",
        r"""        return [self._table(k), _entry_rows([], [], self.st, start=self.start + k, laid=self.laid)]""",
        r"""        return [self._table(self._rows_left())]""",
        ("tests/core/test_statement.py::test_a_long_statement_is_linear_work",),
    ),
    Mutant(
        "CK09",
        "the app's ledger list shows a checkpoint with no words of what it is",
        "dpdesk/gui/models.py",
        r"""            return _("totals carried forward")""",
        '            return "(none)"',
        ("tests/gui/test_ledger_text.py::test_a_checkpoint_entry_is_named_in_words",),
    ),
    Mutant(
        "SG01",
        "synthetic tables in the app: the form starts a synthetic query from a single column",
        "dpdesk/gui/views/query_form.py",
        r"""                    q[param.key] = list(self.state.plan_data["columns"])[: param.min_len]""",
        r"""                    q[param.key] = list(self.state.plan_data["columns"])[:1]""",
        (SGA,),
    ),
    Mutant(
        "SG02",
        "synthetic tables in the app: the results chart's released marginals read from the private table",
        "dpdesk/gui/actions/results.py",
        r"""            return synthetic_tables(entry, progress)
""",
        r"""            import dataclasses

            import polars as pl

            data = pl.read_csv(self.state.data_path, infer_schema_length=0)
            return tuple(
                dataclasses.replace(
                    t,
                    marginals=tuple(
                        dataclasses.replace(
                            m, released=tuple(int((data[m.column] == lab).sum()) for lab in m.labels)
                        )
                        for m in t.marginals
                    ),
                )
                for t in synthetic_tables(entry, progress)
            )
""",
        (SGA,),
    ),
    Mutant(
        "SG03",
        "synthetic tables in the app: Save table as CSV writes other bytes than the release package's CSV",
        "dpdesk/services/synthetic.py",
        r"""        data = table.csv()""",
        r"""        data = table.csv(bom=True)""",
        (SGA,),
    ),
    Mutant(
        "LY02",
        "app: Qt's Chinese translator stays installed when a window is built in English (dialogs say 是(&Y))",
        "dpdesk/gui/app.py",
        r"""        app.removeTranslator(_qt_translator)""",
        r"""        pass""",
        (
            "tests/gui/test_build_language.py::test_an_english_window_after_a_chinese_one_has_english_qt_buttons",
        ),
    ),
    Mutant(
        "LY03",
        "data tab: the table's whole path wraps over several lines and pushes the tab past 1024x700",
        "dpdesk/gui/views/schema_view.py",
        r"""                    path=Path(peek.path).name,""",
        r"""                    path=peek.path,""",
        (
            "tests/gui/test_build_language.py::test_a_long_path_is_named_by_its_file_and_the_data_tab_still_fits",
        ),
    ),
    Mutant(
        "SM01",
        "streaming: merging two batches' exact states drifts (the last batch's state replaces the running one)",
        "dpdesk/core/dp/aggregates.py",
        r"""    return [[a + b for a, b in zip(x, y, strict=True)] for x, y in zip(acc, part, strict=True)]""",
        r"""    return [[b for a, b in zip(x, y, strict=True)] for x, y in zip(acc, part, strict=True)]""",
        ("tests/core/test_streaming.py::test_merged_batches_give_the_in_memory_aggregates_bit_for_bit",),
    ),
    Mutant(
        "SM02",
        "streaming: a partition is aggregated without bounding the rows per person id (more than k rows of one)",
        "dpdesk/core/release/streaming.py",
        r"""                    self._aggregate(part, bound_rows_per_person(part, k, key))""",
        r"""                    self._aggregate(part, ~part.ids_missing)""",
        ("tests/core/test_streaming.py::test_streamed_bounding_keeps_at_most_k_rows_per_person",),
    ),
    Mutant(
        "SM03",
        "streaming: the memory limit is ignored (a table that does not fit is loaded whole)",
        "dpdesk/core/release/streaming.py",
        r"""        if estimate <= limit:""",
        r"""        if estimate <= limit or True:""",
        ("tests/core/test_streaming.py::test_the_memory_limit_decides_the_path",),
    ),
    Mutant(
        "SM04",
        "in-memory statistics: a large table is taken whole (whole-column float64 copies double the peak)",
        "dpdesk/core/dp/aggregates.py",
        r"""    if n <= CHUNK_ROWS or stat.composite:""",
        r"""    if n <= CHUNK_ROWS or True:""",
        ("tests/core/test_streaming.py::test_the_statistics_make_no_whole_column_copies",),
    ),
    Mutant(
        "SY09",
        "synthetic tables: chunked in-memory statistics sum the synthesiser's per-chunk vectors (its marginals lost)",
        "dpdesk/core/dp/aggregates.py",
        r"""    if n <= CHUNK_ROWS or stat.composite:""",
        r"""    if n <= CHUNK_ROWS:""",
        (
            "tests/core/test_synthetic_query.py::test_a_synthetic_table_over_the_chunk_size_is_computed_on_the_whole_table",
        ),
    ),
    Mutant(
        "SY10",
        "synthetic tables: a table too large for memory is streamed for a synthetic query (no marginals to measure)",
        "dpdesk/core/release/streaming.py",
        r"""    whole = [d.spec.name for d in designs if statistics.get(d.spec.statistic).composite]""",
        r"""    whole = []""",
        (
            "tests/core/test_synthetic_query.py::test_a_table_too_large_for_memory_is_refused_for_a_synthetic_table",
        ),
    ),
    Mutant(
        "CK10",
        "ledger checkpoints: after an upgrade every release reads the whole chain until 16 more entries are made",
        "dpdesk/core/ledger/checkpoint.py",
        r"""        (e.seq for e in reversed(entries) if e.type == "checkpoint" and costed_here(e.get("state"))),""",
        r"""        (e.seq for e in reversed(entries) if e.type == "checkpoint"),""",
        (
            "tests/core/test_checkpoint.py::test_after_an_upgrade_the_next_release_writes_a_checkpoint_of_its_own",
        ),
    ),
    Mutant(
        "Q05",
        "quantile: the grid search of the candidates trusts its arithmetic guess unchecked (uneven candidates miscounted)",
        AB,
        r"""    if not ((lower[pos] < x) & (upper[pos] >= x)).all():  # not a grid after all: the binary search""",
        r"""    if False:""",
        (
            "tests/core/test_aggregates.py::test_the_grid_search_of_quantile_candidates_is_the_binary_search_exactly",
        ),
    ),
    Mutant(
        "CL06",
        "ledger: a table never released is called a ledger of the older format, not yet migrated",
        "dpdesk/cli/ledger.py",
        r"""    if not ledger.dataset and not entries and ledger.error is None:""",
        r"""    if False:""",
        ("tests/cli/test_cli.py::test_the_ledger_of_a_table_never_released_says_so",),
    ),
    Mutant(
        "FD01",
        "synthetic fidelity: the independent baseline is drawn with the synthesiser's own split (the comparison says nothing)",
        "dpdesk/core/preview/simulate.py",
        r"""        split_budget(spec.epsilon, spec.delta, len(attrs), replace, k, shares=(1.0, 0.0, 0.0)),""",
        r"""        split_budget(spec.epsilon, spec.delta, len(attrs), replace, k),""",
        (
            "tests/core/test_synthetic_fidelity.py::test_on_a_declared_public_file_the_estimate_shows_related_columns_kept",
        ),
    ),
    Mutant(
        "FD02",
        "synthetic fidelity in the app: the table opened for release is accepted as a public file",
        "dpdesk/gui/actions/simulations.py",
        r"""FidelityRequest(plan, home, query, path, runs, private_sha=private)""",
        r"""FidelityRequest(plan, home, query, path, runs, private_sha=None)""",
        (f"{SGA}::test_the_expected_fidelity_on_a_file_declared_public",),
    ),
    Mutant(
        "FD03",
        "synthetic tables: the default row count (the fitted total) is not capped (a huge table's CSV in memory)",
        "dpdesk/core/dp/synthetic/pipeline.py",
        r"""    return rows if rows is not None else min(max(0, round(total)), MAX_ROWS)""",
        r"""    return rows if rows is not None else max(0, round(total))""",
        (f"{SYN}::test_the_default_row_count_is_the_fitted_total_capped",),
    ),
    Mutant(
        "AP01",
        "the app: a ledger whose checkpoint differs from its entries is shown as verified (the command line says broken)",
        "dpdesk/gui/state.py",
        r"""                if status.error is not None:
                    raise LedgerError(status.error)
""",
        r"""""",
        (
            "tests/gui/test_ledger_state.py::test_a_forged_checkpoint_is_named_in_the_app_as_on_the_command_line",
        ),
    ),
    Mutant(
        "FD04",
        "the one CSV writer: the one-pass line ends also rewrite a cell's own \\r\\n (the cell changes)",
        "dpdesk/core/dp/values.py",
        r"""    if text.count("\r\n") == len(table):""",
        r"""    if True:""",
        (
            "tests/core/test_synthetic_query.py::test_the_table_csv_is_written_by_the_one_csv_writer_formula_safe_and_unbroken",
        ),
    ),
    Mutant(
        "FD05",
        "previews: a re-saved copy (or most) of a private table is accepted as a public file (only the same bytes refused)",
        "dpdesk/core/preview/simulate.py",
        r"""    owner = private_match(home, path, sha256=sha, private_sha=private_sha, progress=progress)""",
        r"""    owner = None""",
        ("tests/core/test_synthetic_fidelity.py::test_a_copy_of_a_private_table_is_not_a_public_file",),
    ),
    Mutant(
        "FD06",
        "previews in the app: a re-saved copy of the table opened for release is accepted as a public file",
        "dpdesk/core/identity/recognition.py",
        "    for private in privates:\n        for ident in idents:\n            if ident.key == private.key:",
        "    for private in []:\n        for ident in idents:\n            if ident.key == private.key:",
        (f"{SGA}::test_the_expected_fidelity_on_a_file_declared_public",),
    ),
    # --- issue 12, items 3 and 4: the app's flows through the services; no import cycle through the release ------
    Mutant(
        "OA01",
        "the app: the budget meter's service leaves out what the dataset's ledger already spent",
        "dpdesk/services/budget.py",
        r"""    return budget_report(plan, entries)
""",
        r"""    return budget_report(plan, [])
""",
        (
            "tests/gui/test_app_services.py::test_the_meter_shows_the_budget_services_report_of_the_datasets_ledger",
        ),
    ),
    Mutant(
        "OA02",
        "fit: a query that states its accuracy is given a fitted epsilon too (the service's rule, seen through the app)",
        "dpdesk/services/budget.py",
        r"""    return getattr(query, "accuracy", None) is not None
""",
        r"""    return False
""",
        ("tests/gui/test_fit_dialog.py::test_a_query_that_states_its_accuracy_keeps_it",),
    ),
    Mutant(
        "OA03",
        "the app: a review runs on the GUI thread (the window freezes while a package is hashed)",
        "dpdesk/gui/actions/review.py",
        r"""        return self.run(job, done, _("Reviewing {name}…").format(name=Path(path).name))
""",
        r"""        from dpdesk.core.common.progress import NULL_PROGRESS; return done(job(NULL_PROGRESS))
""",
        ("tests/gui/test_app_services.py::test_a_review_runs_in_the_worker_not_on_the_gui_thread",),
    ),
    Mutant(
        "OA04",
        "layers: what the release builds on imports the release module back (the package reaches it: a cycle)",
        "dpdesk/core/publish/package.py",
        r"""    from dpdesk.core.dp.statistics.synthetic import SyntheticQuery, columns_csv, regenerate_columns
""",
        r"""    from dpdesk.core.release.steps import noisy_rows  # noqa: F401
    from dpdesk.core.dp.statistics.synthetic import SyntheticQuery, columns_csv, regenerate_columns
""",
        (LAYERS,),
    ),
    Mutant(
        "OA05",
        "layers: a new import cycle in the engine (the OpenDP adapter imports the query designs that import it)",
        "dpdesk/core/dp/mechanisms.py",
        r"""    import numpy as np  # only for this sum
""",
        r"""    import numpy as np  # only for this sum
    from dpdesk.core.dp.queries import Component  # noqa: F401
""",
        (LAYERS,),
    ),
    Mutant(
        "OD01",
        "small inputs: a plan or codebook that is not a regular file (/dev/zero, a FIFO) is read",
        "dpdesk/core/common/smallfile.py",
        r"""        if not stat.S_ISREG(st.st_mode):""",
        r"""        if False:""",
        (
            "tests/trust/test_hostile_inputs_and_outputs.py::test_plan_and_codebook_that_never_end_are_refused_at_once",
        ),
    ),
    Mutant(
        "OD02",
        "small inputs: a plan larger than the stated cap is read",
        "dpdesk/core/common/smallfile.py",
        r"""MAX_PLAN_BYTES: Final = 16 * 1024 * 1024""",
        r"""MAX_PLAN_BYTES: Final = 2**40""",
        (
            "tests/trust/test_hostile_inputs_and_outputs.py::test_a_plan_larger_than_the_cap_is_refused_before_it_is_read",
        ),
    ),
    Mutant(
        "OD03",
        "review: a package entry's field of the wrong type is not named (review crashes or says less)",
        "dpdesk/core/publish/review.py",
        r"""    bad = [p for e in entries for p in malformed_entry(e)]""",
        r"""    bad: list[str] = []""",
        (
            "tests/trust/test_hostile_inputs_and_outputs.py::test_a_malformed_package_entry_is_a_review_problem",
        ),
    ),
    Mutant(
        "OD04",
        "outputs: a target with several names (a hard link to a ledger) is replaced with --force",
        "dpdesk/core/publish/outputs.py",
        r"""    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:""",
        r"""    if False:""",
        ("tests/trust/test_hostile_inputs_and_outputs.py::test_a_hard_link_to_a_ledger_is_never_replaced",),
    ),
    Mutant(
        "OD05",
        "outputs: statement, export and simulate write in place (a full disk destroys the file --force replaces)",
        "dpdesk/core/publish/outputs.py",
        r"""        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".dpdesk-writing", dir=out.parent)""",
        r"""        fd, tmp = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), None""",
        (
            "tests/trust/test_hostile_inputs_and_outputs.py::test_a_full_disk_keeps_the_file_force_would_replace",
        ),
    ),
    Mutant(
        "OD06",
        "command line: a full standard output is a traceback, exit 1",
        "dpdesk/cli/printer.py",
        r"""    sys.stdout = _Stdout(real_stdout)  # all that print and json.dump use of a text stream""",
        r"""    pass""",
        (
            "tests/trust/test_hostile_inputs_and_outputs.py::test_a_full_or_closed_stdout_is_exit_2_and_one_line",
        ),
    ),
    Mutant(
        "FD07",
        "synthetic fit: proportional fitting stops at 200 rounds (a two-way table's column sums off its one-way table)",
        "dpdesk/core/dp/synthetic/fit.py",
        r"""        two_way.append(_ipf(x, one_way[a], one_way[b], converge=version >= 2))""",
        r"""        two_way.append(_ipf(x, one_way[a], one_way[b], converge=False))""",
        (f"{SYN}::test_a_table_regenerates_with_the_fit_it_was_made_with",),
    ),
    Mutant(
        "FD08",
        "synthetic tables released before the fit's version regenerate with today's fit (their package no longer matches)",
        "dpdesk/core/dp/statistics/synthetic.py",
        r"""    return int(entry_field.get("fit", 1))""",
        r"""    return int(entry_field.get("fit", FIT_VERSION))""",
        (f"{SYN}::test_a_table_regenerates_with_the_fit_it_was_made_with",),
    ),
    Mutant(
        "OC01",
        "acknowledge: the cost an unverified spend's trace records is not offered (its costs and plan edited: 0 offered)",
        CO,
        r"""            traced = _from_trace(e)""",
        r"""            traced = None""",
        (f"{ACF}::test_a_spend_with_its_costs_and_plan_edited_is_offered_its_trace",),
    ),
    Mutant(
        "OC02",
        "acknowledge: 0 is offered for an entry that may have charged when every source gives 0",
        CO,
        r"""        if self.may_charge and best == Cost(0.0, 0.0, 0.0):""",
        r"""        if False:""",
        (f"{ACF}::test_a_spend_with_nothing_left_to_go_by_is_never_offered_zero",),
    ),
    Mutant(
        "OC03",
        "near-copy: the refusal does not say how much of the resembled dataset was spent",
        "dpdesk/core/identity/recognition.py",
        r"""        Resemblance(d, m.contained, m.found, *spent_by(home, d), changed=m.changed, marginal=m.marginal)""",
        r"""        Resemblance(d, m.contained, m.found, changed=m.changed, marginal=m.marginal)""",
        (
            f"{NC}::test_the_refusal_says_how_much_of_the_resembled_dataset_was_spent",
            "tests/gui/test_near_copy_app.py::test_a_near_copy_is_named_and_refused_until_linked",
        ),
    ),
    Mutant(
        "OC04",
        "ledger: after an acknowledgement, what is left of the budget is not said (carried releases not counted)",
        "dpdesk/core/ledger/budget.py",
        r"""    if history is None or (state.full and history.releases == 0):""",
        r"""    if history is None or (state.full and not any(e["type"] == "spend" for e in state.tail)):""",
        ("tests/cli/test_refusal_messages.py::test_after_an_acknowledgement_the_ledger_says_what_is_left",),
    ),
    Mutant(
        "OC05",
        "review --against: the intact file is headed BROKEN when it is the later ledger that went back",
        "dpdesk/cli/review.py",
        r"""                status=_("chain verified") if r.intact_itself else _("BROKEN"),""",
        r"""                status=_("chain verified") if r.intact else _("BROKEN"),""",
        ("tests/cli/test_refusal_messages.py::test_a_review_against_a_ledger_that_went_back_names_that_one",),
    ),
    Mutant(
        "OC06",
        "governance: a key change without approval asks for the officer's approval, not the recovery key's",
        GV,
        r"""    if doc is None and action == ROTATE:""",
        r"""    if doc is None and action == "never":""",
        (
            "tests/cli/test_refusal_messages.py::test_a_key_change_without_approval_asks_for_the_recovery_keys",
        ),
    ),
    Mutant(
        "OC07",
        "release: the output folder is refused before the approval is checked (its refusal hidden)",
        R,
        r"""            if approval is None:
                raise""",
        r"""            if True:
                raise""",
        (
            "tests/cli/test_refusal_messages.py::test_a_refused_approval_is_named_before_an_output_folder_that_is_not_empty",
        ),
    ),
    Mutant(
        "OB01",
        "a query built by hand (not read from a plan) keeps a negative epsilon: it is not validated when built",
        "dpdesk/core/model/spec.py",
        r"""        _set(self, "epsilon", read_positive(self.epsilon, "query.epsilon"))
""",
        r"""""",
        ("tests/core/test_query_types.py::test_the_audits_examples_are_refused_when_built",),
    ),
    Mutant(
        "OB02",
        "a statistic picked out by its word outside its module again (the mode's lead unit in core/dp/accuracy_base.py)",
        "dpdesk/core/dp/accuracy_base.py",
        r"""    return Accuracy(LEAD, confidence, lead_for(design, confidence), unit=unit)""",
        r"""    return Accuracy(LEAD, confidence, lead_for(design, confidence), unit="rows" if design.spec.statistic == "mode" else "")""",
        (
            "tests/core/test_registry.py::test_no_module_outside_the_statistics_picks_out_a_statistic_by_its_word",
        ),
    ),
    Mutant(
        "FD09",
        "a release whose report cannot be printed ends in exit 2 like a refused command (it was charged and written)",
        "dpdesk/cli/printer.py",
        r"""        if _DONE:  # what was done stays done""",
        r"""        if False:  # what was done stays done""",
        ("tests/cli/test_release_stdout.py::test_a_release_whose_report_cannot_be_printed_says_it_was_done",),
    ),
    Mutant(
        "FD10",
        "a reader's Rust panic report (and backtrace) reaches the screen before dpdesk's one clear line",
        "dpdesk/core/loading/panics.py",
        r"""                kept = _without_panic_reports(tmp.read())""",
        r"""                kept = tmp.read()""",
        (
            "tests/trust/test_hostile_text_and_exit_codes.py::test_a_panicking_reader_prints_one_clear_line_not_rusts_report",
        ),
    ),
    Mutant(
        "FD11",
        "xlsx: a stored string repeated by many cells is not measured (a 0.3 MB workbook reads as 1.3 GB, SIGABRT)",
        "dpdesk/core/loading/guards.py",
        r"""        if total > MAX_XLSX_SHARED_TEXT:""",
        r"""        if False:""",
        (
            "tests/trust/test_input_size_limits.py::test_a_stored_string_repeated_by_many_cells_is_refused_before_it_is_read",
        ),
    ),
    # --- issue 13, item 3 (audit gap 1): one column changed; attack1's public-file findings --------------------
    Mutant(
        "OG01",
        "one column changed: a copy with a column dropped gets a fresh budget (its rows not compared without it)",
        RC,
        r"""    if len(gone) == 1 and not added:
        return [(known.left_out[gone[0]], new.whole, (gone[0],))]""",
        r"""    if len(gone) == 1 and not added:
        return []""",
        (
            f"{OCT}::test_one_column_changed_is_a_near_copy",
            f"{NC}::test_a_copy_with_one_unused_column_changed_is_refused_until_linked",
        ),
    ),
    Mutant(
        "OG02",
        "one column changed: a copy with a column added gets a fresh budget, and passes as a public file",
        RC,
        r"""    if len(added) == 1 and not gone:
        return [(known.whole, new.left_out[added[0]], (added[0],))]""",
        r"""    if len(added) == 1 and not gone:
        return []""",
        (
            f"{OCT}::test_one_column_changed_is_a_near_copy",
            f"{ATK}::test_ax_the_private_table_plus_a_column_is_not_a_public_file",
        ),
    ),
    Mutant(
        "OG03",
        "one column changed: a copy with a column renamed gets a fresh budget",
        RC,
        r"""        return [(known.left_out[gone[0]], new.left_out[added[0]], (gone[0], added[0]))]""",
        r"""        return []""",
        (
            f"{OCT}::test_one_column_changed_is_a_near_copy",
            f"{NC}::test_a_copy_with_one_unused_column_changed_is_refused_until_linked",
        ),
    ),
    Mutant(
        "OG04",
        "one column changed: a copy with one column's values edited gets a fresh budget, and passes as public",
        RC,
        r"""        return [(known.left_out[c], new.left_out[c], (c,)) for c in known.columns]""",
        r"""        return []""",
        (
            f"{OCT}::test_one_column_changed_is_a_near_copy",
            f"{ATK}::test_ax_the_private_table_plus_a_column_is_not_a_public_file",
        ),
    ),
    Mutant(
        "OG05",
        "one column changed: coarse projections compared by sketch (unrelated tables of one schema flagged)",
        ID,
        r"""            return Projection(h.hexdigest(), sketch if identifying(sketch) else None)""",
        r"""            return Projection(h.hexdigest(), sketch)""",
        (f"{OCT}::test_unrelated_tables_of_the_same_schema_are_not_flagged",),
    ),
    Mutant(
        "OG06",
        "public file: an honest sample of a coarse schema is refused as holding the private rows",
        RC,
        r"""    if not public or identifying(sketch):""",
        r"""    if True:""",
        (f"{ATK}::test_ax_a_public_file_of_other_people_is_not_refused_as_the_private_table",),
    ),
    Mutant(
        "OG07",
        "content check: the bytes read for the content are not compared with the bytes hashed (a swap passes)",
        RC,
        r"""    if sha256 is not None and ident.sha256 != sha256:""",
        r"""    if False:""",
        (
            f"{ATK}::test_ax_the_content_check_reads_the_same_bytes_as_the_load",
            f"{OCT}::test_the_content_is_refused_when_the_bytes_change_while_read",
        ),
    ),
    Mutant(
        "OG08",
        "fidelity: a public file without rows gets a figure (50%, about nothing)",
        "dpdesk/core/preview/simulate.py",
        r"""    if codes.shape[0] == 0:""",
        r"""    if False:""",
        (f"{ATK}::test_ax_a_public_file_without_rows_gets_no_fidelity_figure",),
    ),
    Mutant(
        "OG09",
        "fidelity: a query's rows: 10000000 samples ten million rows per run for a small public file",
        "dpdesk/core/preview/simulate.py",
        r"""            n = min(table_rows(model.total, spec.rows), FIDELITY_ROWS_FACTOR * int(codes.shape[0]))""",
        r"""            n = table_rows(model.total, spec.rows)""",
        (
            "tests/core/test_synthetic_fidelity.py::test_a_large_rows_figure_samples_at_most_a_few_times_the_public_file",
        ),
    ),
    Mutant(
        "OG10",
        "one column changed: a file cached before column sketches is never computed again (known tables unprotected)",
        CT,
        '        if "columns" not in raw or (isinstance(raw["columns"], dict) and "marginals" not in raw["columns"]):\n            return None  # written before column sketches or their marginals: computed once more\n        ident = ContentIdentity(\n            sha256, str(raw["content"]), Sketch.from_json(raw["sketch"]), columns_of(raw["columns"])',
        '        ident = ContentIdentity(\n            sha256, str(raw["content"]), Sketch.from_json(raw["sketch"]), columns_of(raw.get("columns"))',
        (f"{OCT}::test_a_known_dataset_recorded_before_column_sketches_gets_them_when_its_file_is_opened",),
    ),
    Mutant(
        "OG11",
        "public file: private_match compares whole rows only (a column added or nudged passes as public)",
        RC,
        r"""    near = resembles(home, ident.sketch, columns=ident.columns, public=True)""",
        r"""    near = resembles(home, ident.sketch, public=True)""",
        (f"{ATK}::test_ax_the_private_table_plus_a_column_is_not_a_public_file",),
    ),
    Mutant(
        "OG12",
        "one column changed: a known dataset's record never gets its column sketches once it has its content",
        CT,
        r"""        changed = content not in contents or stale""",
        r"""        changed = content not in contents""",
        (f"{OCT}::test_a_known_dataset_recorded_before_column_sketches_gets_them_when_its_file_is_opened",),
    ),
    Mutant(
        "OG13",
        "one column changed: distinct values counted as the sketch's length (no large projection identifying)",
        ID,
        r"""    return (sketch.k - 1) * 2.0**64 / (sketch.hashes[-1] + 1)""",
        r"""    return float(len(sketch.hashes))""",
        (
            f"{OCT}::test_one_column_changed_is_a_near_copy",
            f"{OCT}::test_identifying_is_judged_by_the_distinct_count",
        ),
    ),
    Mutant(
        "OG14",
        "one column changed: the projections' exact keys are not compared (a coarse table plus a column is public)",
        RC,
        r"""        if kp.key == tp.key:""",
        r"""        if False:""",
        (f"{ATK}::test_ax_the_private_table_plus_a_column_is_not_a_public_file",),
    ),
    Mutant(
        "OG15",
        "public file: a copy with a column dropped is said to hold only most of the private rows",
        RC,
        "            return PrivateMatch(near[0][0], exact=near[0][1].exact, marginal=near[0][1].marginal)",
        "            return PrivateMatch(near[0][0], exact=False, marginal=near[0][1].marginal)",
        (f"{OCT}::test_most_of_an_identifying_private_table_is_not_a_public_file",),
    ),
    Mutant(
        "OG16",
        "near-copy: the refusal does not say which column the rows were compared without",
        RC,
        r"""        spent=" ".join(filter(None, (compared_sentence(near), spent_sentence(near)))),""",
        r"""        spent=spent_sentence(near),""",
        (f"{NC}::test_a_copy_with_one_unused_column_changed_is_refused_until_linked",),
    ),
    Mutant(
        "FD12",
        "write_atomic: one fixed temporary name, so two writers of one file rename each other's away",
        FSIO,
        r"""    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")""",
        r"""    tmp = path.with_name(f".{path.name}.tmp")""",
        (
            "tests/core/test_ledger.py::test_two_writers_of_the_same_file_never_rename_each_others_temporary_file",
        ),
    ),
    Mutant(
        "CZ01",
        "a query built by hand after importing only the plan module no longer reaches the statistics registry",
        "dpdesk/core/plan/reader.py",
        r"""install_registry(_registry)""",
        r"""_unused = _registry""",
        (
            "tests/core/test_query_types.py::test_a_query_built_in_a_fresh_process_from_the_plan_module_reads_the_registry",
        ),
    ),
    # --- issue 12, typed entries: an attacker's pass (tests/trust/test_typed_entries.py) -------------------------
    Mutant(
        "TE01",
        "review: a package entry of an unknown type is no longer compared with a later export, counted or shown",
        REV,
        r"""    out.stored = [e for e in entries if isinstance(e, dict)]""",
        r"""    out.stored = [e for e in entries if isinstance(e, dict) and e.get("type") in ENTRY_TYPES]""",
        (
            "tests/trust/test_typed_entries.py::test_an_entry_of_an_unknown_type_is_still_compared_with_a_later_export",
            "tests/trust/test_typed_entries.py::test_an_entry_of_an_unknown_type_of_another_dataset_is_named",
            "tests/trust/test_typed_entries.py::test_the_review_window_lists_an_entry_of_an_unknown_type",
        ),
    ),
    Mutant(
        "TE02",
        "review: a package entry's stored time is read as an empty text when it is not text",
        ENT,
        r"""        time=d.get("time", ""),""",
        r"""        time=d.get("time") if isinstance(d.get("time"), str) else "",""",
        ("tests/trust/test_typed_entries.py::test_a_package_entry_reads_its_chain_fields_as_stored",),
    ),
    Mutant(
        "TE03",
        "review: a package whose spend records charged as null ends the command line's review in a traceback",
        "dpdesk/cli/review.py",
        r"""            c = c if isinstance(c, dict) else {}  # null in a forged package: shown as None, never a crash""",
        r"""            c = c if isinstance(c, dict) or c is None else {}""",
        ("tests/trust/test_typed_entries.py::test_a_spend_recording_null_is_reviewed_without_a_traceback",),
    ),
    Mutant(
        "TE04",
        "a recorded plan that is not an object is made one (a traceback, or problems of another plan named)",
        ENT,
        r"""        return dict(raw) if isinstance(raw, dict) else raw""",
        r"""        return dict(raw)""",
        ("tests/trust/test_typed_entries.py::test_a_recorded_plan_that_is_not_an_object_is_named",),
    ),
    Mutant(
        "TE05",
        "a package written again names its release as text, not as its spend entry holds it",
        "dpdesk/core/publish/package.py",
        r"""                "release_id": spend.fields["release_id"],  # as stored (the typed property is text)""",
        r"""                "release_id": spend.release_id,""",
        (
            "tests/trust/test_typed_entries.py::test_a_package_written_again_names_the_release_as_its_spend_entry_does",
        ),
    ),
    Mutant(
        "FD13",
        "hostile input: a ledger line that verifies but lacks what its type holds (a spend's costs or charge) is not named when the chain is read; a command fails later with a traceback",
        ENT,
        r"""    if not readable(entry):""",
        r"""    if False:""",
        ("tests/trust/test_forged_fields.py",),
    ),
    # ---- issue 34: honest numbers (HN: accuracy and rounding of means and proportions)
    Mutant(
        "HN01",
        "honest numbers: a mean or a proportion is rounded at its 95% interval's spread, which is 0 at a high epsilon (a share published as 0 or 1)",
        "dpdesk/core/dp/statistics/mean.py",
        r"""        spread = max(m - r_low, r_high - m)""",
        r"""        spread = max(m - low, high - m)""",
        ("tests/core/test_honest_numbers.py::test_a_share_at_epsilon_10_keeps_its_digits",),
    ),
    Mutant(
        "HN02",
        "honest numbers: a mean's stated error takes a negative count noise's bin at the positive side's denominator n + |y| (understated)",
        "dpdesk/core/dp/accuracy_base.py",
        r"""+ _up(sum_c, tn - (t + h) * b - gs)""",
        r"""+ _up(sum_c, tn + (t - h) * b - gs)""",
        ("tests/core/test_honest_numbers.py", "tests/core/test_accuracy.py"),
    ),
    Mutant(
        "HN03",
        "honest numbers: a mean's stated error is taken over bins of the count's noise 32 times as wide (overstated: overcharged)",
        "dpdesk/core/dp/accuracy_base.py",
        r"""_BINS_PER_SCALE = 64""",
        r"""_BINS_PER_SCALE = 2""",
        ("tests/core/test_honest_numbers.py", "tests/core/test_accuracy.py"),
    ),
    Mutant(
        "HN04",
        "honest numbers: a mean's target is charged for the rounding of its whole range again (overcharged about 10x)",
        "dpdesk/core/dp/accuracy_base.py",
        r"""    return rounding_error(spread)""",
        r"""    return rounding_error(width)""",
        ("tests/core/test_honest_numbers.py",),
    ),
    # --- issue 34, item 5: the release report states its assumptions and nothing false -----------------------
    Mutant(
        "RP04",
        "a re-saved copy (CRLF line ends) of a known table gets a budget of its own instead of its dataset's ledger",
        "dpdesk/core/ledger/contents.py",
        r"""    same_rows_share_ledger: bool = True""",
        r"""    same_rows_share_ledger: bool = False""",
        (REPORT_CLAIMS + "::test_a_crlf_copy_is_charged_to_the_same_ledger_and_the_report_says_so",),
    ),
    Mutant(
        "RP05",
        "report: the methods section says a re-saved copy is a new dataset with a budget of its own (false)",
        "dpdesk/core/publish/report.py",
        r"""        if COPY_RULES.same_rows_share_ledger
        else""",
        r"""        if not COPY_RULES.same_rows_share_ledger
        else""",
        (REPORT_CLAIMS + "::test_a_crlf_copy_is_charged_to_the_same_ledger_and_the_report_says_so",),
    ),
    Mutant(
        "RP06",
        "report: a statistic's section prints bounds other than the plan's (the lower bound as 0)",
        "dpdesk/core/publish/report.py",
        r"""            lo, hi = _num(col.bounds[0]), _num(col.bounds[1])""",
        r"""            lo, hi = _num(0), _num(col.bounds[1])""",
        (REPORT_CLAIMS + "::test_each_statistic_states_its_public_bounds_categories_missing_rule_and_unit",),
    ),
    Mutant(
        "RP07",
        "report: an imputed column's missing values are said to drop the row",
        "dpdesk/core/publish/report.py",
        r"""        if col.missing.drops:
            missing =""",
        r"""        if True:
            missing =""",
        (REPORT_CLAIMS + "::test_each_statistic_states_its_public_bounds_categories_missing_rule_and_unit",),
    ),
    Mutant(
        "RP08",
        "report: a replace unit of privacy is described as add/remove",
        "dpdesk/core/publish/report.py",
        r"""    if unit.get("neighbouring") == "replace":""",
        r"""    if False:""",
        (REPORT_CLAIMS + "::test_each_statistic_states_its_public_bounds_categories_missing_rule_and_unit",),
    ),
    Mutant(
        "RP09",
        "report: the summary's epsilon and delta columns keep fixed widths, so a long epsilon splits across lines",
        "dpdesk/core/publish/report.py",
        r"""    eps_w, delta_w = (_one_line_width([r[i] for r in table], 12 * mm) for i in (3, 4))
    rest = 174 * mm""",
        r"""    eps_w, delta_w = 14 * mm, 22 * mm
    rest = 174 * mm""",
        (REPORT_CLAIMS + "::test_formulas_are_mathematics_and_epsilon_never_splits",),
    ),
    Mutant(
        "RP10",
        "report: formulas and derivations printed in code notation (sqrt(...), delta, Du, <=)",
        "dpdesk/core/publish/report.py",
        r"""math_markup(t) if k in _MATH_STYLE else markup(t)""",
        r"""markup(t)""",
        (REPORT_CLAIMS + "::test_formulas_are_mathematics_and_epsilon_never_splits",),
    ),
    Mutant(
        "RP11",
        "report: the accuracy sentence is not labelled a bound for any table beside this release's own interval",
        "dpdesk/core/publish/report.py",
        r"""            if any(r[3] != "" for r in all_rows):""",
        r"""            if False:""",
        (REPORT_CLAIMS + "::test_the_accuracy_is_a_bound_for_any_table_and_the_interval_this_releases_own",),
    ),
    Mutant(
        "RC01",
        "honest accounting: a synthetic table re-costed under a new unit counts one selection round of its d - 1",
        "dpdesk/core/ledger/recost.py",
        r"""    return max(1, math.ceil(rho * 8.0 / (eps * eps) - 1e-6))""",
        r"""    return 1""",
        ("tests/core/test_recost_synthetic.py",),
    ),
    Mutant(
        "RC02",
        "honest accounting: a synthetic table with delta > 0 re-costed part by part, each part at the query's whole delta (not its summed rho converted)",
        "dpdesk/core/ledger/recost.py",
        r"""    return delta > 0 and math.fsum(float(c["delta"]) for c in comps) > delta * (1 + _SAME)""",
        r"""    return False""",
        ("tests/core/test_recost_synthetic.py",),
    ),
    Mutant(
        "RC03",
        "fit to budget writes a classic Gaussian query at epsilon 1 or more, a plan release refuses",
        "dpdesk/core/ledger/fit.py",
        r"""            if not locked[i] and e > largest_epsilon(q)""",
        r"""            if False""",
        ("tests/core/test_fit.py",),
    ),
    Mutant(
        "RC04",
        "a correction states the queries' added epsilons, not the change of the total under the dataset's accounting method",
        "dpdesk/core/ledger/recost.py",
        r"""        method = str((settings.get("accounting") or {}).get("method", "sequential"))""",
        '        method = "sequential"',
        (
            "tests/core/test_recost.py::test_a_correction_states_the_change_of_the_total_under_the_dataset_s_method",
        ),
    ),
    Mutant(
        "RC05",
        "honest accounting: the officer's statement shows a correction as the queries' epsilons added, not the change of the total under the dataset's method",
        "dpdesk/core/publish/report.py",
        r"""    changes = _correction_changes(entries)""",
        r"""    changes: dict[int, float] = {}""",
        (
            "tests/core/test_recost.py::test_a_correction_states_the_change_of_the_total_under_the_dataset_s_method",
        ),
    ),
    Mutant(
        "RC06",
        "honest accounting: the app's ledger table shows a correction as the queries' epsilons added, not the change of the total",
        "dpdesk/gui/models.py",
        r"""                self._changes = correction_changes(entries)""",
        r"""                self._changes = {}""",
        (
            "tests/gui/test_ledger_text.py::test_a_correction_row_states_the_change_of_the_total_under_the_dataset_s_method",
        ),
    ),
    # --- issue #34 item 6: synthetic tables within their bounds, no invented missing level, per-value ints --
    Mutant(
        "SY11",
        "a synthetic int column's last level draws up to its last edge (hi + 1 for the default levels), not its "
        "upper bound, and no value is kept within the bounds (the old code's year 2010 on [2003, 2009]; either "
        "change alone is masked by the other)",
        "dpdesk/core/dp/synthetic/domain.py",
        r"""    last[-1] = math.floor(float(_on_grid(np.asarray([hi_b]), scale)[0]))  # the last level: up to the bound
    last = np.maximum(last, first)  # a level narrower than a step (only past MAX_DECIMALS): its first step
    a, b = first[safe], last[safe]
    steps: np.ndarray = np.minimum(a + np.floor(u * (b - a + 1.0)), b)
    out: np.ndarray
    if attr.kind == "int":
        out = np.clip(steps, math.ceil(lo_b), math.floor(hi_b))""",
        r"""    last[-1] = math.floor(float(_on_grid(np.asarray([attr.edges[-1]]), scale)[0]))
    last = np.maximum(last, first)  # a level narrower than a step (only past MAX_DECIMALS): its first step
    a, b = first[safe], last[safe]
    steps: np.ndarray = np.minimum(a + np.floor(u * (b - a + 1.0)), b)
    out: np.ndarray
    if attr.kind == "int":
        out = steps""",
        (
            "tests/core/test_synthetic_domain.py::test_every_synthetic_value_lies_within_its_bounds_categories_and_level",
            "tests/core/test_synthetic_domain.py::test_an_int_level_holding_one_value_writes_that_value",
        ),
    ),
    Mutant(
        "SY12",
        'a synthetic column whose rule is "drop" gets a missing level again (blank cells on a table without missing values)',
        "dpdesk/core/dp/statistics/synthetic.py",
        r"""missing = col.missing.drops and version == 1""",
        r"""missing = col.missing.drops""",
        (
            "tests/core/test_synthetic_domain.py::test_a_column_gets_no_missing_level_and_drop_rows_are_left_out_of_every_marginal",
            "tests/core/test_synthetic_domain.py::test_every_synthetic_value_lies_within_its_bounds_categories_and_level",
        ),
    ),
    Mutant(
        "SY13",
        'a row with a missing value in a "drop" column is not left out of the synthetic table\'s marginals',
        "dpdesk/core/dp/statistics/synthetic.py",
        r"""kept &= ~miss""",
        r"""kept &= miss | ~miss""",
        (
            "tests/core/test_synthetic_domain.py::test_a_column_gets_no_missing_level_and_drop_rows_are_left_out_of_every_marginal",
        ),
    ),
    Mutant(
        "SY14",
        "an int column of at most 100 values gets equal-width bins again instead of one level per value",
        "dpdesk/core/dp/statistics/synthetic.py",
        r"""attrs = _attributes(spec, columns, synthesiser.PER_VALUE_LEVELS, version)""",
        r"""attrs = _attributes(spec, columns, synthesiser.DEFAULT_BINS, version)""",
        (
            "tests/core/test_synthetic_domain.py::test_an_int_column_of_at_most_100_values_gets_one_level_per_value",
        ),
    ),
    Mutant(
        "SY15",
        "per-value levels that break the two-way limit refuse a plan the old code accepted (no fallback to its bins)",
        "dpdesk/core/dp/statistics/synthetic.py",
        r"""        return _attributes(spec, columns, synthesiser.DEFAULT_BINS, version)
    return attrs""",
        r"""        raise
    return attrs""",
        (
            "tests/core/test_synthetic_domain.py::test_two_wide_int_columns_fall_back_to_the_bins_a_plan_had_before",
        ),
    ),
    Mutant(
        "SY16",
        "a synthetic float column's values are written with six decimals whatever its bounds and bins",
        "dpdesk/core/dp/synthetic/domain.py",
        r"""return max(0, min(MAX_DECIMALS, max(declared, fine)))""",
        r"""return MAX_DECIMALS""",
        ("tests/core/test_synthetic_domain.py::test_values_keep_their_column_s_precision",),
    ),
    Mutant(
        "SY17",
        "the report's interval column calls a synthetic table's row a chosen candidate",
        "dpdesk/core/dp/statistics/synthetic.py",
        r"""return _("a synthetic table: see its section")""",
        r"""return _("(a chosen candidate)")""",
        (
            "tests/core/test_synthetic_domain.py::test_the_report_s_interval_column_names_a_synthetic_table_s_section",
        ),
    ),
    Mutant(
        "SY18",
        "a synthetic release's ledger entry does not name its domain version: its table regenerates with version 1's levels",
        "dpdesk/core/dp/statistics/synthetic.py",
        r"""            "domain": synthesiser.DOMAIN_VERSION,
""",
        r"""""",
        (
            "tests/core/test_synthetic_domain.py::test_a_released_table_without_missing_values_has_no_blank_cell",
        ),
    ),
    Mutant(
        "SY19",
        "a synthetic release from before the domain versions is regenerated with version 2's levels (its package no longer matches)",
        "dpdesk/core/dp/statistics/synthetic.py",
        r"""int(entry_field.get("domain", 1))""",
        r"""int(entry_field.get("domain", 2))""",
        (
            "tests/core/test_synthetic_domain.py::test_a_release_from_before_regenerates_with_the_domain_it_was_made_with",
        ),
    ),
    # ---- issue 24, item 8: an officer's name never shows a fingerprint of its own
    Mutant(
        "ON01",
        "governance display: a new officer's name may hold another officer's fingerprint or a line break",
        "dpdesk/core/governance/officer.py",
        r"""    if FINGERPRINT_LIKE.search(name) or shown(name) != name:""",
        r"""    if False:""",
        ("tests/core/test_officer.py::test_an_officer_name_cannot_show_another_officer_s_fingerprint",),
    ),
    Mutant(
        "ON02",
        "governance display: an older officer record's name is shown with the fingerprint it holds",
        "dpdesk/core/governance/officer.py",
        r"""    return FINGERPRINT_LIKE.sub("[...]", shown(name))""",
        r"""    return shown(name)""",
        ("tests/core/test_officer.py::test_an_officer_name_cannot_show_another_officer_s_fingerprint",),
    ),
    # --- issue 24, item 5: review reads only regular files, bounded -------------------------------------------
    Mutant(
        "RD10",
        "review: a package member that is a symbolic link is followed (to /dev/zero, or anywhere)",
        REV,
        r"""            digest = hash_small_file(folder / name, caps[name], nofollow=True)""",
        r"""            digest = hash_small_file(folder / name, caps[name], nofollow=False)""",
        ("tests/trust/test_review_reads_bounded.py::test_a_link_to_the_right_bytes_is_still_refused",),
    ),
    Mutant(
        "RD11",
        "review: a package member that is a FIFO is read as a file (not refused by its type)",
        "dpdesk/core/common/smallfile.py",
        r"""        if not stat.S_ISREG(st.st_mode):""",
        r"""        if stat.S_ISCHR(st.st_mode):""",
        ("tests/trust/test_review_reads_bounded.py::test_a_fifo_member_is_refused_not_waited_on",),
    ),
    Mutant(
        "RD12",
        "review: release.csv is read up to the general cap, not the size of the values its entry recorded",
        REV,
        r"""        caps["release.csv"] = len(expected) + len(_BOM)""",
        r"""        caps["release.csv"] = MAX_PACKAGE_FILE""",
        ("tests/trust/test_review_reads_bounded.py::test_release_csv_is_read_up_to_the_recorded_values",),
    ),
    # --- issue 24, item 4: no raw data outlives a streamed release ---------------------------------------------
    Mutant(
        "RD13",
        "streaming: the partition files have names (a killed release leaves the raw rows on disk)",
        "dpdesk/core/release/streaming.py",
        r"""                    files.append(tempfile.TemporaryFile(dir=folder))""",
        r"""                    files.append(tempfile.NamedTemporaryFile(dir=folder, delete=False))""",
        (
            "tests/trust/test_streaming_partitions_cleanup.py::test_sigkill_mid_partitioning_leaves_no_raw_value_and_the_next_release_sweeps",
        ),
    ),
    Mutant(
        "RD14",
        "streaming: SIGTERM or SIGHUP mid-partitioning leaves the partition folder",
        "dpdesk/core/release/streaming.py",
        r"""                _PREVIOUS[sig] = signal.signal(sig, _on_signal)""",
        r"""                pass""",
        (
            "tests/trust/test_streaming_partitions_cleanup.py::test_sigterm_or_sighup_mid_partitioning_removes_the_folder",
        ),
    ),
    Mutant(
        "RD15",
        "streaming: what a killed release or an older version left in the temporary folder is never swept",
        "dpdesk/core/release/streaming.py",
        r"""    sweep_stale_partitions()  # what a killed release""",
        r"""    pass  # what a killed release""",
        (
            "tests/trust/test_streaming_partitions_cleanup.py::test_an_older_versions_partitions_are_swept_at_the_next_release",
        ),
    ),
    Mutant(
        "RD16",
        "streaming: the reads under a low memory limit use the full block (the identity pass goes over the limit)",
        "dpdesk/core/release/streaming.py",
        r"""    BLOCK_CAP.set(block_bytes(limit))""",
        r"""    BLOCK_CAP.set(0)""",
        (
            "tests/trust/test_streaming_partitions_cleanup.py::test_a_streamed_release_stays_under_its_memory_limit",
        ),
    ),
    Mutant(
        "LM01",
        "limits: a plan of up to 10^6 cells is accepted (it was charged, then hung building its report)",
        "dpdesk/core/model/spec.py",
        r"""MAX_PLAN_CELLS = 100_000""",
        r"""MAX_PLAN_CELLS = 1_000_000""",
        (
            "tests/trust/test_input_size_limits.py::test_plan_of_too_many_cells_refused_at_validation",
            "tests/trust/test_plan_limits_scale.py::test_a_plan_over_the_cell_limit_is_refused_before_anything_is_charged",
        ),
    ),
    Mutant(
        "LM02",
        "limits: the report lays out every value of a large table (10,000 rows took 22 s, 999,000 more than 600 s)",
        "dpdesk/core/publish/report.py",
        r"""        qrows = all_rows[: max(0, min(REPORT_ROWS_PER_QUERY, left))]""",
        r"""        qrows = all_rows""",
        ("tests/trust/test_plan_limits_scale.py::test_the_report_shows_a_bounded_part_of_large_tables",),
    ),
    Mutant(
        "LM03",
        "limits: every query's section lists all of a column's categories (10,000 categories x 1,000 queries)",
        "dpdesk/core/publish/report.py",
        r"""            listed = ", ".join(cats[:REPORT_CATEGORIES])""",
        r"""            listed = ", ".join(cats)""",
        ("tests/trust/test_plan_limits_scale.py::test_the_report_shows_a_bounded_part_of_large_tables",),
    ),
    Mutant(
        "LM04",
        "outputs: --force replaces a device node, a FIFO or a symbolic link (as root, --out /dev/null --force replaced /dev/null)",
        "dpdesk/core/publish/outputs.py",
        r"""        mode = os.lstat(out).st_mode""",
        r"""        mode = stat.S_IFREG""",
        (
            "tests/trust/test_forced_writes_and_escapes.py::test_a_fifo_put_in_place_after_the_check_is_not_replaced",
            "tests/trust/test_forced_writes_and_escapes.py::test_force_replaces_only_regular_files",
        ),
    ),
    Mutant(
        "LM05",
        "outputs: a FIFO put in place between the check and the write is replaced",
        "dpdesk/core/publish/outputs.py",
        r"""        _check_regular(out)  # again at the rename""",
        r"""        pass  # again at the rename""",
        (
            "tests/trust/test_forced_writes_and_escapes.py::test_a_fifo_put_in_place_after_the_check_is_not_replaced",
        ),
    ),
    Mutant(
        "LM06",
        "exit codes: a release charged whose package could not be written ends in 2, which says nothing was charged",
        "dpdesk/core/release/steps.py",
        r"""    exit_code = 4""",
        r"""    exit_code = 2""",
        (
            "tests/trust/test_outputs.py::test_the_last_ledger_write_failing_names_the_recovery_and_leaves_nothing",
            "tests/trust/test_forced_writes_and_escapes.py::test_charged_but_not_written_has_an_exit_code_of_its_own",
        ),
    ),
    Mutant(
        "LM07",
        "durability: report.pdf renamed into place without an fsync (a power cut could leave it empty under its name)",
        "dpdesk/core/publish/package.py",
        r"""    write_atomic(out_dir / "report.pdf", pdf.getvalue())""",
        r"""    (out_dir / ".report.pdf.tmp").write_bytes(pdf.getvalue())
    (out_dir / ".report.pdf.tmp").replace(out_dir / "report.pdf")""",
        (
            "tests/trust/test_forced_writes_and_escapes.py::test_every_file_renamed_into_place_was_fsynced_first",
        ),
    ),
    Mutant(
        "LM08",
        "messages: a newline in a query's name passes raw into a plan error (a forged line)",
        "dpdesk/core/common/errors.py",
        r"""        return shown(where_in_plan(self.key, self.query_name))""",
        r"""        return where_in_plan(self.key, self.query_name)""",
        (
            "tests/trust/test_forced_writes_and_escapes.py::test_newlines_in_query_and_column_names_are_escaped_in_messages",
        ),
    ),
    Mutant(
        "LM09",
        "messages: a newline in a column reference passes raw into a plan error (a forged line)",
        "dpdesk/core/common/errors.py",
        r"""            return shown(self.message)""",
        r"""            return self.message""",
        (
            "tests/trust/test_forced_writes_and_escapes.py::test_newlines_in_query_and_column_names_are_escaped_in_messages",
        ),
    ),
    Mutant(
        "LM10",
        "messages: a newline in a column's name passes raw into budget's listing of the queries",
        "dpdesk/cli/budget.py",
        '        col = f"({shown(q.column)})" if q.column else ""',
        '        col = f"({q.column})" if q.column else ""',
        (
            "tests/trust/test_forced_writes_and_escapes.py::test_newlines_in_query_and_column_names_are_escaped_in_messages",
        ),
    ),
    Mutant(
        "LM11",
        "data: a declared Parquet column of lists is decoded (a polars traceback, not a message)",
        "dpdesk/core/loading/parquet.py",
        r"""    check_flat(path, schema, wanted)""",
        r"""    pass""",
        (
            "tests/trust/test_forced_writes_and_escapes.py::test_a_parquet_column_of_lists_is_refused_by_its_type",
        ),
    ),
    Mutant(
        "LM12",
        "review: an intact package is called intact without saying that alone it cannot prove it is the one recorded",
        "dpdesk/cli/review.py",
        r"""        print(shown(r.proves))""",
        r"""        pass""",
        (
            "tests/trust/test_forced_writes_and_escapes.py::test_review_says_what_it_can_and_cannot_prove_alone",
        ),
    ),
    Mutant(
        "LM13",
        "review: a package checked against a later export is still told it proves nothing beyond itself",
        "dpdesk/core/publish/review.py",
        r"""        if self.against is not None:
            return _(
                "The later export""",
        r"""        if False:
            return _(
                "The later export""",
        (
            "tests/trust/test_forced_writes_and_escapes.py::test_review_says_what_it_can_and_cannot_prove_alone",
        ),
    ),
    Mutant(
        "IL01",
        "honest accounting: a new file's dataset is made without deciding again, under the home-wide key lock, whether its content is a known dataset's or resembles one (two saves of one table first used at once open two budgets)",
        "dpdesk/core/ledger/book.py",
        r"""                known, refusal = self.decide_new(self.home, self.key)""",
        r"""                known, refusal = None, None""",
        (
            "tests/trust/test_concurrent_first_use.py::test_files_resolved_before_any_dataset_existed_find_the_one_made_first",
        ),
    ),
    Mutant(
        "IL02",
        "honest accounting: the decision under the key lock ignores a known dataset of the same content (a save of a table first used at once is refused as a near-copy of itself instead of charged to its ledger)",
        RC,
        r"""        owners = live_owners(home, ident.key)""",
        r"""        owners = []""",
        (
            "tests/trust/test_concurrent_first_use.py::test_files_resolved_before_any_dataset_existed_find_the_one_made_first",
        ),
    ),
    Mutant(
        "IL03",
        "honest accounting: a near-copy found under the key lock still gets a dataset of its own (a fresh budget)",
        "dpdesk/core/ledger/book.py",
        r"""            if known is None and refusal is None:""",
        r"""            if known is None:""",
        (
            "tests/trust/test_concurrent_first_use.py::test_files_resolved_before_any_dataset_existed_find_the_one_made_first",
        ),
    ),
    Mutant(
        "IL04",
        "honest accounting: the release opens its ledger without the decision under the home-wide key lock (two saves of one table first released at once open two budgets)",
        RC,
        r"""    ledger.decide_new = recheck_new""",
        r"""    pass""",
        (
            "tests/trust/test_concurrent_first_use.py::test_files_resolved_before_any_dataset_existed_find_the_one_made_first",
        ),
    ),
    Mutant(
        "FA01",
        "nothing appended lowers what is spent: a checkpoint after the recorded head is accepted without recomputing it",
        "dpdesk/core/ledger/anchor.py",
        r"""            if state_of(entries[:i]).to_dict()["state"] == e.get("state"):""",
        r"""            if True:""",
        (
            "tests/trust/test_append_only.py::test_a_forged_checkpoint_with_nothing_spent_is_named_broken_by_every_command",
        ),
    ),
    Mutant(
        "FA02",
        "nothing appended lowers what is spent: any entry but a checkpoint is accepted after the recorded head",
        "dpdesk/core/ledger/anchor.py",
        r"""        if e.type in ADDS_ONLY or Head(e.seq, e.hash) in intents:""",
        r"""        if e.type != "checkpoint":""",
        (
            "tests/trust/test_append_only.py::test_an_appended_settings_line_changing_the_unit_is_named_broken_by_every_command",
            "tests/core/test_anchor.py::test_a_settings_entry_is_accepted_after_its_head_only_when_dpdesk_recorded_it_first",
        ),
    ),
    Mutant(
        "FA03",
        "crash safety: a settings entry is appended without its intent in the register (a crash before its head breaks the ledger)",
        "dpdesk/core/ledger/book.py",
        r"""        if home is not None and anchor.needs_intent(entry_type) and anchor.is_anchored(home):""",
        r"""        if False:""",
        (
            "tests/core/test_anchor.py::test_a_settings_entry_is_accepted_after_its_head_only_when_dpdesk_recorded_it_first",
        ),
    ),
    Mutant(
        "FA04",
        "nothing appended lowers what is spent: a simulation with negative runs is read (it lowers the total)",
        "dpdesk/core/ledger/entries.py",
        r"""            return runs is None or (_finite_number(runs) and runs >= 0)""",
        r"""            return True""",
        (
            "tests/trust/test_append_only.py::test_an_appended_simulation_with_negative_runs_is_named_broken_by_every_command",
        ),
    ),
    Mutant(
        "FA05",
        "a governed dataset's settings change without the officer's approval is not checked when the ledger is read",
        "dpdesk/core/ledger/book.py",
        r"""            check_approved(label, entries)  # a governed dataset's changes, whatever its policy on plans""",
        r"""            pass""",
        (
            "tests/trust/test_append_only.py::test_a_governed_settings_line_without_approval_is_broken_even_with_the_head_moved_to_it",
        ),
    ),
    Mutant(
        "FA06",
        "a governed dataset's settings change needs the officer's approval only when its policy requires signed plans",
        "dpdesk/core/ledger/governed.py",
        r"""        elif record is not None and kind in GATED and kind != "acknowledge":""",
        r"""        elif record is not None and record.policy.require_signed_plans and kind in GATED and kind != "acknowledge":""",
        (
            "tests/trust/test_append_only.py::test_a_governed_settings_line_without_approval_is_broken_even_with_the_head_moved_to_it",
        ),
    ),
    Mutant(
        "GU01",
        "the app's first window fits the screen it opens on",
        "dpdesk/gui/main_window.py",
        r"""        if want_w <= max_w and want_h <= max_h:""",
        r"""        if True:""",
        ("tests/gui/test_first_start_size.py::test_the_first_window_fits_the_screen",),
    ),
    Mutant(
        "GU02",
        "the status line stays one line (a plan's problems do not grow the status bar)",
        "dpdesk/gui/main_window.py",
        r"""        self.status_label.setText(lines[0].rstrip(":：") if lines else "")""",
        r"""        self.status_label.setText(text)""",
        ("tests/gui/test_first_start_size.py::test_the_status_line_stays_one_line",),
    ),
    Mutant(
        "GU03",
        "the review window names the accounting methods in the reader's language",
        "dpdesk/gui/views/review_window.py",
        r"""                t.setItem(i, 0, QTableWidgetItem(shown(method_name(str(m))) + mark))""",
        r"""                t.setItem(i, 0, QTableWidgetItem(shown(m) + mark))""",
        ("tests/gui/test_review_language.py::test_the_review_window_names_the_methods_in_chinese",),
    ),
    Mutant(
        "GU04",
        "the ledger tab shows the reason dpdesk recorded in the reader's language",
        "dpdesk/core/publish/words.py",
        """        entries.FIRST_RELEASE_REASON: _("fixed at the dataset's first release"),""",
        """        "": _("fixed at the dataset's first release"),""",
        (
            "tests/gui/test_review_language.py::test_the_ledger_tab_shows_dpdesks_own_reason_and_method_in_chinese",
        ),
    ),
    Mutant(
        "LM14",
        "a plan's quantile and selection candidates are bounded as a whole when it is read",
        "dpdesk/core/plan/reader.py",
        r"""            if candidates > MAX_PLAN_CANDIDATES:""",
        r"""            if False:""",
        ("tests/trust/test_plan_limits_scale.py::test_a_plan_over_the_candidate_limit_is_refused_when_read",),
    ),
    Mutant(
        "LM15",
        "a quantile's grid counts its candidates toward the plan's limit",
        "dpdesk/core/dp/statistics/quantile.py",
        r"""        return n_quantile_candidates(cast(QuantileQuery, spec), columns[spec.column or ""])""",
        r"""        return 1""",
        ("tests/trust/test_plan_limits_scale.py::test_a_plan_over_the_candidate_limit_is_refused_when_read",),
    ),
    Mutant(
        "RC07",
        "a correction's costs of another length never lower a release's delta or rho",
        "dpdesk/core/ledger/recost.py",
        r"""        if more_delta > 0 or more_rho > 0:""",
        r"""        if False:""",
        ("tests/core/test_recost.py::test_costs_of_different_lengths_are_raised_without_lowering_any_total",),
    ),
    Mutant(
        "RS01",
        "release --check charges nothing (the first step alone)",
        "dpdesk/cli/release.py",
        r"""    if args.check:
        return _check_release(request, show_check)""",
        r"""    if False:
        return _check_release(request, show_check)""",
        ("tests/cli/test_release_check.py::test_check_charges_nothing_and_says_what_the_release_would_do",),
    ),
    Mutant(
        "RS02",
        "a confirmed release is not charged when the ledger moved after its check",
        "dpdesk/core/release/steps.py",
        r"""        if same_head and prepared.head is not None and (tx.state.seq, tx.state.hash) != prepared.head:""",
        r"""        if False:""",
        ("tests/cli/test_release_check.py::test_a_prepared_release_is_not_charged_when_the_ledger_moved",),
    ),
    Mutant(
        "RS03",
        "the app charges a confirmed release only if the ledger is where it was when the curator was asked",
        "dpdesk/services/release.py",
        r"""    result = commit_release(prepared, out, bom=bom, progress=progress, same_head=True)""",
        r"""    result = commit_release(prepared, out, bom=bom, progress=progress, same_head=False)""",
        ("tests/gui/test_release_steps.py::test_a_release_confirmed_after_the_ledger_moved_charges_nothing",),
    ),
    # --- issue 25: installers (build25) ---------------------------------------------------------------
    Mutant(
        "BD01",
        "help: the officer examples name key files create never writes (officer/PRIVATE.pem)",
        "dpdesk/cli/parser.py",
        r"""    approve = ("--dataset ds-... --head SEQ:HASH --key officer/officer-XXXX-private.pem --out approval.json",)""",
        r"""    approve = ("--dataset ds-... --head SEQ:HASH --key officer/PRIVATE.pem --out approval.json",)""",
        ("tests/cli/test_govern.py::test_officer_help_names_the_key_files_create_writes",),
    ),
    Mutant(
        "BD02",
        "start-up: the bundle's missing-library message names libraries the bundle carries",
        "dpdesk/gui/startup.py",
        r"""    return BUNDLE_PACKAGES if getattr(sys, "frozen", False) else LINUX_PACKAGES""",
        r"""    return LINUX_PACKAGES""",
        ("tests/gui/test_startup.py::test_libgl_missing_in_the_bundle_names_only_what_the_bundle_lacks",),
    ),
    Mutant(
        "BD03",
        "self-test: cryptography's native library (officer keys) is not exercised",
        "dpdesk/selftest.py",
        r"""    _check(results, "cryptography", crypto)
""",
        "",
        ("tests/cli/test_cli.py::test_selftest_runs_from_source_without_touching_the_users_ledger",),
    ),
    Mutant(
        "BD04",
        "build: the glibc floor check lets a library needing a newer symbol version through",
        "build_scripts/check_glibc_floor.py",
        r"""            if v > limits[option]:""",
        r"""            if v > limits[option] and family == "GCC":""",
        ("tests/installers/test_glibc_floor.py::test_a_floor_below_what_a_real_library_needs_fails",),
    ),
    Mutant(
        "BD05",
        "release signing: the signature is not over the SHA256SUMS file users check",
        "build_scripts/sign_release.py",
        r"""    (dist / f"{SUMS}.sig").write_bytes(key.sign(data))""",
        r"""    (dist / f"{SUMS}.sig").write_bytes(key.sign(data.rstrip()))""",
        (
            "tests/installers/test_release_signing.py::test_the_users_tools_check_the_download_and_its_signature",
        ),
    ),
    Mutant(
        "BD06",
        "release signing: a release key readable by others is used",
        "build_scripts/sign_release.py",
        r"""    if mode & (stat.S_IRWXG | stat.S_IRWXO):""",
        r"""    if mode & stat.S_IRWXO and False:""",
        ("tests/installers/test_release_signing.py::test_a_bad_key_is_a_message_and_exit_2",),
    ),
    Mutant(
        "BD07",
        "menu entry: a quote in the install folder's name breaks the tarball's launcher",
        "build_scripts/linux/install-desktop-entry.sh",
        r"""printf '%s' "$1" | sed "s/'/'\\\\''/g")""",
        r"""printf '%s' "$1")""",
        (
            "tests/installers/test_desktop_entry.py::test_glib_launches_the_program_in_the_folder_with_the_file",
        ),
    ),
    Mutant(
        "BD08",
        "menu entry: $ left unescaped in the Exec line's quoted argument",
        "build_scripts/linux/install-desktop-entry.sh",
        r"""sed -e 's/[\\"`$]/\\&/g' -e 's/^/""",
        r"""sed -e 's/[\\"`]/\\&/g' -e 's/^/""",
        ("tests/installers/test_desktop_entry.py::test_the_exec_line_follows_the_desktop_entry_spec",),
    ),
    Mutant(
        "BD09",
        "MIME types: a release package's ledger.json is typed as plain JSON (opened as a plan)",
        "build_scripts/linux/dpdesk-mime.xml",
        r"""    <glob pattern="ledger.json" weight="60"/>""",
        r"""    <glob pattern="ledger.jsonx" weight="60"/>""",
        ("tests/installers/test_desktop_entry.py::test_the_desktop_types_a_ledger_and_a_plan_as_dpdesks",),
    ),
    Mutant(
        "MG01",
        "two datasets of one table: a file named by its bytes is charged to its own dataset without a word",
        RC,
        r"""    if not owners or owners == [ledger.dataset]:""",
        r"""    if True:""",
        ("tests/trust/test_merge_duplicates.py::test_two_datasets_of_one_table_are_named_never_one_picked",),
    ),
    Mutant(
        "MG02",
        "two datasets of one table: a new save of it is linked to one of them, silently",
        RC,
        r"""    if len(owners) > 1:
        raise DuplicateDatasets(home, owners)""",
        r"""    if False:
        raise DuplicateDatasets(home, owners)""",
        ("tests/trust/test_merge_duplicates.py::test_two_datasets_of_one_table_are_named_never_one_picked",),
    ),
    Mutant(
        "MG03",
        "merge: the other dataset's releases are not carried (the merged ledger forgets what it spent)",
        "dpdesk/services/ledger.py",
        r"""        carried = _carried(retired, b, done)""",
        r"""        carried: list[dict[str, Any]] = []""",
        (
            "tests/trust/test_merge_duplicates.py::test_merge_charges_every_release_of_both_under_the_smaller_budget",
        ),
    ),
    Mutant(
        "MG04",
        "accounting: a merge entry's carried releases are not counted",
        "dpdesk/core/ledger/recost.py",
        r"""        elif t in ("merge", "import"):""",
        r"""        elif t in ("merge-ignored", "import"):""",
        (
            "tests/trust/test_merge_duplicates.py::test_merge_charges_every_release_of_both_under_the_smaller_budget",
        ),
    ),
    Mutant(
        "MG05",
        "merge: the larger budget applies",
        "dpdesk/services/ledger.py",
        r"""        "epsilon": min(float(a["epsilon"]), float(b["epsilon"])),""",
        r"""        "epsilon": max(float(a["epsilon"]), float(b["epsilon"])),""",
        (
            "tests/trust/test_merge_duplicates.py::test_governed_merge_keeps_the_governance_never_raises_the_budget_and_needs_the_approval",
        ),
    ),
    Mutant(
        "MG06",
        "merge: the retired dataset still takes releases",
        "dpdesk/core/ledger/book.py",
        r"""            if state.retired_into is not None and not retired:""",
        r"""            if False:""",
        (
            "tests/trust/test_merge_duplicates.py::test_merge_charges_every_release_of_both_under_the_smaller_budget",
        ),
    ),
    Mutant(
        "MG07",
        "merge: a governed dataset is merged into an ungoverned one (its governance dropped)",
        "dpdesk/services/ledger.py",
        r"""    return (governance_of(entries) is None, budget, -spent, dataset)""",
        r"""    return (False, budget, -spent, dataset)""",
        (
            "tests/trust/test_merge_duplicates.py::test_governed_merge_keeps_the_governance_never_raises_the_budget_and_needs_the_approval",
        ),
    ),
    Mutant(
        "MG08",
        "merge resumed after a crash: the releases a merge entry carried already are carried again",
        "dpdesk/services/ledger.py",
        r"""        if rid in done:""",
        r"""        if rid in done and False:""",
        (
            "tests/trust/test_merge_duplicates.py::test_sigkill_at_every_durable_step_of_a_merge_never_lowers_spent",
        ),
    ),
    Mutant(
        "MG09",
        "two datasets of one table: the decision under the home-wide key lock charges a new save to one of them",
        RC,
        "            if len(owners) > 1:\n                return None, lambda owners=owners: DuplicateDatasets(home, owners)",
        "            if False:\n                return None, lambda owners=owners: DuplicateDatasets(home, owners)",
        ("tests/trust/test_merge_duplicates.py::test_two_datasets_of_one_table_are_named_never_one_picked",),
    ),
    Mutant(
        "VR01",
        "dpdesk.__version__ ignores the version the build wrote (dpdesk/_version.py, from the git tag)",
        "dpdesk/__init__.py",
        r"""        return str(version)""",
        r"""        return FALLBACK_VERSION""",
        ("tests/test_version.py::test_the_builds_version_file_is_read_first",),
    ),
    Mutant(
        "VR02",
        "another checkout's installed metadata is taken for this copy's version",
        "dpdesk/__init__.py",
        r"""        if _describes_this_copy(dist):""",
        r"""        if True:""",
        ("tests/test_version.py::test_another_copys_metadata_is_not_taken_for_this_ones",),
    ),
    Mutant(
        "VR03",
        "a development build looks like a tagged release",
        "dpdesk/__init__.py",
        r"""    return re.fullmatch(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?", version) is None""",
        r"""    return False""",
        ("tests/test_version.py::test_development_builds_are_told_apart",),
    ),
    Mutant(
        "VR04",
        "ledger entries do not record the version of dpdesk that wrote them",
        "dpdesk/core/ledger/book.py",
        r"""            **written_by(),
            **(team.entry_fields() if team is not None else {}),""",
        r"""            **(team.entry_fields() if team is not None else {}),""",
        ("tests/test_version.py::test_the_report_the_package_and_each_entry_carry_the_version",),
    ),
    Mutant(
        "VR05",
        "the PDF report does not say which version wrote it",
        "dpdesk/core/publish/report.py",
        r'''f"dpdesk {version}"''',
        r'''"dpdesk"''',
        ("tests/test_version.py::test_the_report_the_package_and_each_entry_carry_the_version",),
    ),
    Mutant(
        "VR06",
        "a release package's ledger.json is not recognised by its fields (not opened in the review window)",
        "dpdesk/services/opening.py",
        r"""        if {"dataset", "entries"} <= set(data) and isinstance(data["entries"], list):""",
        r"""        if False:""",
        ("tests/gui/test_open_with.py::test_a_packages_ledger_json_opens_its_package_not_a_plan",),
    ),
    Mutant(
        "VR07",
        "a release package's folder is not opened in the review window",
        "dpdesk/services/opening.py",
        r"""        if (p / "ledger.json").is_file() and (p / "plan.json").is_file():""",
        r"""        if False:""",
        ("tests/gui/test_open_with.py::test_a_package_folder_opens_in_the_review_window",),
    ),
    Mutant(
        "VR08",
        "a plan is told by its name, not its fields",
        "dpdesk/services/opening.py",
        r"""        if {"queries", "columns", "budget", "privacy_unit"} & set(data):  # a plan, perhaps with problems""",
        r"""        if False:""",
        ("tests/gui/test_open_with.py::test_a_plan_opens_as_a_plan_whatever_its_name",),
    ),
    Mutant(
        "VR09",
        "a file dpdesk does not open is taken for a table instead of being named",
        "dpdesk/services/opening.py",
        r"""    if p.suffix.lower() in TABLE_SUFFIXES:
        return Opened("table", p)
    raise""",
        r"""    if True:
        return Opened("table", p)
    raise""",
        (
            "tests/gui/test_open_with.py::test_what_dpdesk_does_not_open_is_named",
            "tests/gui/test_open_with.py::test_dpdesk_path_names_what_it_cannot_open",
        ),
    ),
    Mutant(
        "VR10",
        "dpdesk PATH (the desktop entry's command) is a usage error instead of opening PATH",
        "dpdesk/cli/program.py",
        r"""        argv = ["open", argv[0]]""",
        r"""        pass""",
        ("tests/gui/test_open_with.py::test_dpdesk_path_names_what_it_cannot_open",),
    ),
    Mutant(
        "VR11",
        "the window has no icon",
        "dpdesk/gui/main_window.py",
        r"""    return QIcon(str(resource("icons", "dpdesk.png")))""",
        r"""    return QIcon()""",
        ("tests/gui/test_open_with.py::test_the_window_has_dpdesks_icon",),
    ),
    Mutant(
        "VR12",
        "the About box does not show the third-party notices the build bundled",
        "dpdesk/gui/views/about.py",
        r"""read_notice(notice_file("THIRD_PARTY_NOTICES.txt"))""",
        r"""read_notice(None)""",
        ("tests/gui/test_open_with.py::test_about_shows_the_bundled_notices_or_says_they_are_absent",),
    ),
    Mutant(
        "VR13",
        "a --help example points into the source tree (resources/samples), which an installed copy lacks",
        "dpdesk/cli/parser.py",
        r'''    plan = "plan.json"''',
        r'''    plan = "resources/samples/cps_wages_plan.json"''',
        ("tests/cli/test_help_paths.py",),
    ),
    Mutant(
        "VR14",
        "a deeply nested JSON file given to open ends in a traceback instead of a message",
        "dpdesk/services/opening.py",
        r"""        entry = read_json(first_line, jsonin.LEDGER_LINE)""",
        r"""        entry = __import__("json").loads(first_line)""",
        ("tests/gui/test_open_with.py::test_a_deeply_nested_json_file_is_named_not_a_traceback",),
    ),
    Mutant(
        "VR15",
        "a misspelt command (dpdesk relase) is taken for a file to open, losing argparse's list of commands",
        "dpdesk/cli/program.py",
        r"""(os.path.exists(word) or "/" in word or os.sep in word or "." in word)""",
        r"""True""",
        ("tests/gui/test_open_with.py::test_a_misspelt_command_is_still_a_usage_error",),
    ),
    Mutant(
        "NC08",
        "issue 24 item 7: a projection of a known table onto some of its columns (the plan's columns only) gets a "
        "fresh budget and passes simulate --public (its columns' values not compared)",
        RC,
        r"""        dropped = same_columns(known, known_columns, sketch, columns)""",
        r"""        dropped = None""",
        (
            "tests/cli/test_projection_rename.py::test_the_plans_columns_only_are_a_near_copy_until_linked",
            "tests/cli/test_projection_rename.py::test_simulate_public_refuses_a_projection_or_a_translation",
        ),
    ),
    Mutant(
        "NC09",
        "issue 24 item 7: a table whose headers and category labels were translated (GBK) gets a fresh budget "
        "(a column's count profile ignored: only its values compared)",
        RC,
        r"""        return x.values == y.values or (x.profile is not None and x.profile == y.profile)""",
        r"""        return x.values == y.values""",
        (
            "tests/cli/test_projection_rename.py::test_a_translated_gbk_copy_is_a_near_copy",
            "tests/cli/test_projection_rename.py::test_simulate_public_refuses_a_projection_or_a_translation",
        ),
    ),
    Mutant(
        "NC10",
        "issue 24 item 7: simulate --public does not compare a file's columns with the private tables' (a "
        "projection or a translation of the private table accepted as public)",
        RC,
        r"""    if best is None or max(best.contained, best.found) <= RESEMBLANCE_THRESHOLD:
        dropped = same_columns(""",
        r"""    if not public and (best is None or max(best.contained, best.found) <= RESEMBLANCE_THRESHOLD):
        dropped = same_columns(""",
        ("tests/cli/test_projection_rename.py::test_simulate_public_refuses_a_projection_or_a_translation",),
    ),
    Mutant(
        "NC11",
        "issue 24 item 7, false positives: a coarse projection (a few categories, not identifying the rows) is "
        "compared by its columns' values and matches any table of that schema",
        RC,
        r"""    elif not identifying(small_rows):""",
        r"""    elif False:""",
        ("tests/cli/test_projection_rename.py::test_independent_tables_of_one_schema_are_not_near_copies",),
    ),
    Mutant(
        "NC12",
        "issue 24 item 7, false positives: a column of distinct values gets a count profile (all ones), so any "
        "continuous column of as many rows matches it as if renamed",
        "dpdesk/core/loading/identity.py",
        r"""        if known is not None and 2 * len(known[0]) <= self.rows:""",
        r"""        if known is not None:""",
        ("tests/cli/test_projection_rename.py::test_independent_tables_of_one_schema_are_not_near_copies",),
    ),
    Mutant(
        "NC13",
        "issue 24 item 7, false positives: a table's column of its own (unpaired) is allowed even where its other "
        "columns do not identify its rows (a few categories and a row number match any table of that schema)",
        RC,
        r"""        if small.left_out[unmatched[0]].sketch is None:
            return None""",
        r"""        if False:
            return None""",
        (
            "tests/cli/test_projection_rename.py::test_the_plans_columns_with_a_column_of_its_own_are_a_near_copy",
        ),
    ),
    Mutant(
        "NC14",
        "issue 24 item 7: a projection with a column of its own added (a row number) gets a fresh budget",
        RC,
        r"""    if not pairs or len(unmatched) > 1:""",
        r"""    if not pairs or len(unmatched) > 0:""",
        (
            "tests/cli/test_projection_rename.py::test_the_plans_columns_with_a_column_of_its_own_are_a_near_copy",
        ),
    ),
    Mutant(
        "NC15",
        "issue 24 item 7: a dataset recorded before column values existed never gets them (its projections and "
        "renamings get a fresh budget in an upgraded home)",
        "dpdesk/core/ledger/contents.py",
        r"""            not isinstance(by_content.get(content), dict) or "marginals" not in by_content[content]""",
        r"""            not isinstance(by_content.get(content), dict)""",
        (
            "tests/cli/test_projection_rename.py::test_a_dataset_recorded_before_column_values_gets_them_when_its_file_is_opened",
        ),
    ),
    Mutant(
        "NC16",
        "issue 24 item 7: a file cached before column values existed is never read again (known tables of an "
        "upgraded home unprotected)",
        "dpdesk/core/ledger/contents.py",
        r"""        if "columns" not in raw or (isinstance(raw["columns"], dict) and "marginals" not in raw["columns"]):""",
        r"""        if "columns" not in raw:""",
        (
            "tests/cli/test_projection_rename.py::test_a_dataset_recorded_before_column_values_gets_them_when_its_file_is_opened",
        ),
    ),
    Mutant(
        "IL05",
        "forget-identity runs without the home-wide key lock (a first release can decide a dataset in between)",
        "dpdesk/services/ledger.py",
        r"""    with locked(home / "ledgers" / "keys.lock"), contextlib.ExitStack() as stack:""",
        r"""    with contextlib.ExitStack() as stack:""",
        ("tests/trust/test_forget_under_key_lock.py::test_forget_identity_waits_for_the_key_lock",),
    ),
    Mutant(
        "NC17",
        "near-copies by columns: one shared key column beside a column of the table's own is taken for a copy",
        "dpdesk/core/identity/recognition.py",
        r"""        if len(pairs) < 2:  # one shared column beside it is a shared key (days, countries), not a copy""",
        r"""        if False:""",
        (
            "tests/cli/test_projection_rename.py::test_tables_that_share_only_a_key_column_are_not_near_copies",
        ),
    ),
    Mutant(
        "MG10",
        "a broken ledger of a table two datasets hold cannot be acknowledged (acknowledge and merge each wait for the other)",
        "dpdesk/services/ledger.py",
        r"""        ledger = request.dataset.own_ledger()""",
        r"""        raise""",
        (
            "tests/trust/test_merge_duplicates.py::test_a_broken_ledger_of_two_datasets_is_acknowledged_then_merged",
        ),
    ),
    Mutant(
        "LS02",
        "store boundary: evidence of the same second overwrites other evidence",
        FS,
        r"""        while evidence.exists() and evidence.read_bytes() != raw:  # never overwrite other evidence""",
        r"""        while False:""",
        ("tests/core/test_ledger_store.py::test_evidence_is_never_overwritten_by_other_evidence",),
    ),
    Mutant(
        "LS03",
        "store boundary: the file store's writer lock does not exclude another process",
        FS,
        r"""        return locked(self.path(name).with_suffix(".lock"))""",
        r"""        import contextlib

        return contextlib.nullcontext()""",
        ("tests/core/test_ledger_store.py::test_one_writer_at_a_time_across_processes",),
    ),
    Mutant(
        "LS04",
        "store boundary: evidence files are listed as datasets",
        FS,
        r"""        return sorted(p.stem for p in self.folder.glob("ds-*.jsonl") if is_dataset_id(p.stem))""",
        r"""        return sorted(p.stem for p in self.folder.glob("ds-*.jsonl"))""",
        ("tests/core/test_ledger_store.py::test_only_datasets_are_listed",),
    ),
    Mutant(
        "LS05",
        "store boundary: an append keeps half its line and says nothing",
        FS,
        r"""            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]""",
        r"""            os.write(fd, line[: len(line) // 2])""",
        (
            "tests/core/test_ledger_store.py::test_a_process_killed_right_after_an_append_keeps_it",
            "tests/core/test_ledger_store.py::test_what_is_appended_is_read_back_in_order",
        ),
    ),
    Mutant(
        "LS06",
        "store boundary: a line whose sync failed stays in the chain although the caller is told it was not recorded",
        FS,
        r"""                os.ftruncate(fd, before)""",
        r"""                pass""",
        ("tests/core/test_ledger_store.py::test_a_failed_sync_leaves_nothing_of_the_line_either",),
    ),
    Mutant(
        "LS07",
        "store boundary: a chain is rewritten in place (a crash in the middle leaves neither chain)",
        FS,
        r"""        write_atomic(self.path(name), data)""",
        r"""        with self.path(name).open("r+b") as f:
            f.truncate(0)
            f.write(data)""",
        (
            "tests/core/test_ledger_store.py::test_the_file_store_replaces_a_chain_by_a_new_file_never_in_place",
        ),
    ),
    Mutant(
        "LS08",
        "store boundary: an append is not synced (a power cut loses a charged release)",
        FS,
        r"""            os.fsync(fd)
        except OSError:""",
        r"""            pass
        except OSError:""",
        ("tests/core/test_ledger_store.py::test_the_file_store_syncs_each_append_and_a_new_chain_s_folder",),
    ),
    Mutant(
        "LS09",
        "store boundary: an exported ledger is reviewed through a sibling named <stem>.jsonl",
        "dpdesk/core/ledger/filestore.py",
        r"""        return FileStore(path.parent, path.suffix), path.name.removesuffix(path.suffix)""",
        r"""        return FileStore(path.parent), path.stem""",
        (
            "tests/cli/test_anchor_cli.py::test_an_exported_ledger_is_reviewed_by_its_own_name_not_a_sibling_s",
        ),
    ),
    Mutant(
        "LS10",
        "store boundary: a ledger is opened by any name (a path outside the home's ledgers)",
        L,
        r"""        if not is_dataset_id(dataset):
            raise LedgerError(_("{dataset} is not a dataset id").format(dataset=shown(dataset)))""",
        r"""        pass""",
        ("tests/core/test_ledger_store.py::test_a_ledger_is_opened_by_a_public_id_only",),
    ),
    Mutant(
        "LS11",
        "export: a ledger that changed between its check and its copy is written anyway",
        "dpdesk/services/ledger.py",
        r"""    if not same:
        raise LedgerError(""",
        r"""    if False:
        raise LedgerError(""",
        ("tests/services/test_services.py::test_a_ledger_that_changes_while_it_is_exported_is_not_written",),
    ),
    # --- issue 26, item 6: a checkpoint's trust tied to the costing rules the code declares ------------------
    Mutant(
        "CR01",
        "costing rules: a cost formula changed without bumping COSTING_RULES (the exponential mechanism's rho "
        "booked as a Laplace's, eps^2 / 2): a checkpoint of the old rules would be trusted by code that costs otherwise",
        QB,
        r"""        eps**2 / 8.0,""",
        r"""        eps**2 / 2.0,""",
        ("tests/core/test_golden_costs.py::test_the_costs_are_the_tables_under_the_same_costing_rules",),
    ),
    Mutant(
        "CR02",
        "costing rules: an accounting method changed without bumping COSTING_RULES (advanced composition's "
        "delta' left out of its delta)",
        ACC,
        r"""    delta = math.fsum(c.delta for c in costs) + delta_prime""",
        r"""    delta = math.fsum(c.delta for c in costs)""",
        ("tests/core/test_golden_costs.py::test_the_costs_are_the_tables_under_the_same_costing_rules",),
    ),
    Mutant(
        "CR03",
        "costing rules: the re-costing of past releases changed without bumping COSTING_RULES (a Laplace's rho "
        "scaled by c, not c^2, when its sensitivity grows)",
        "dpdesk/core/ledger/recost.py",
        r"""    return eps * c, rho * c * c, f""",
        r"""    return eps * c, rho * c, f""",
        ("tests/core/test_golden_costs.py::test_the_costs_are_the_tables_under_the_same_costing_rules",),
    ),
    Mutant(
        "CR04",
        "costing rules: the epsilon solved from an accuracy target changed without bumping COSTING_RULES "
        "(rounded up to 3 significant digits, not 4)",
        "dpdesk/core/dp/accuracy.py",
        r"""EPSILON_DIGITS = 4""",
        r"""EPSILON_DIGITS = 3""",
        ("tests/core/test_golden_costs.py::test_the_costs_are_the_tables_under_the_same_costing_rules",),
    ),
    Mutant(
        "CR05",
        "costing rules: a statistic accepts a mechanism the golden table of costs does not hold (mode under the "
        "Gaussian), so its costs could change without COSTING_RULES",
        "dpdesk/core/dp/statistics/mode.py",
        r"""    mechanisms = (Mechanism.EXPONENTIAL,)""",
        r"""    mechanisms = (Mechanism.EXPONENTIAL, Mechanism.GAUSSIAN)""",
        ("tests/core/test_golden_costs.py::test_every_statistic_mechanism_and_calibration_is_in_the_table",),
    ),
    Mutant(
        "CR06",
        "costing rules: a checkpoint carrying other rules (or an old hex fingerprint of source files) is trusted",
        "dpdesk/core/ledger/checkpoint.py",
        r"""    return type(rules) is int and rules == acc.COSTING_RULES""",
        r"""    return True""",
        (
            "tests/core/test_checkpoint.py::test_a_checkpoint_of_other_costing_rules_is_not_trusted",
            "tests/core/test_checkpoint.py::test_a_ledger_whose_checkpoints_hold_the_old_hex_fingerprint_is_verified_whole_then_checkpointed",
        ),
    ),
    Mutant(
        "CR07",
        "costing rules: a checkpoint recording rules as true or 1.0 (equal to 1 in Python) is trusted as rules 1",
        "dpdesk/core/ledger/checkpoint.py",
        r"""    return type(rules) is int and rules == acc.COSTING_RULES""",
        r"""    return rules == acc.COSTING_RULES""",
        ("tests/core/test_checkpoint.py::test_costing_rules_are_a_whole_number_not_something_equal_to_one",),
    ),
    Mutant(
        "CR08",
        "costing rules: a checkpoint records a fixed number, not the rules in force (after the rules change, "
        "every release reads the whole chain)",
        "dpdesk/core/ledger/checkpoint.py",
        r"""                "costing_rules": acc.COSTING_RULES,""",
        r"""                "costing_rules": 1,""",
        (
            "tests/core/test_checkpoint.py::test_after_an_upgrade_the_next_release_writes_a_checkpoint_of_its_own",
        ),
    ),
    Mutant(
        "CR09",
        "costing rules: the golden table is not of the rules in force (the constant bumped, the table not "
        "regenerated)",
        ACC,
        r"""COSTING_RULES: int = 1""",
        r"""COSTING_RULES: int = 2""",
        ("tests/core/test_golden_costs.py::test_the_table_is_of_the_costing_rules_in_force",),
    ),
    # --- issue 26, item 2: a statistic imports dpdesk only through the kit ------------------------------------
    Mutant(
        "KT01",
        "the statistic kit: a statistic module imports the plan's module itself, past the kit",
        "dpdesk/core/dp/statistics/count.py",
        r"""import numpy as np

from dpdesk.core.dp.statistics.kit import (""",
        r"""import numpy as np

from dpdesk.core.model.spec import QuerySpec as _Spec  # noqa: F401
from dpdesk.core.dp.statistics.kit import (""",
        ("tests/core/test_statistic_kit.py::test_a_statistic_imports_dpdesk_only_through_the_kit",),
    ),
    Mutant(
        "KT02",
        "the statistic kit: a statistic reaches the mechanisms' module from inside a function, past the kit",
        "dpdesk/core/dp/statistics/quantile.py",
        r"""        rank95 = 2.0 * du * (math.log(n) + LN20) / eps""",
        r"""        from dpdesk.core.dp import mechanisms

        rank95 = 2.0 * du * (math.log(n) + mechanisms.LN20) / eps""",
        ("tests/core/test_statistic_kit.py::test_a_statistic_imports_dpdesk_only_through_the_kit",),
    ),
    Mutant(
        "KT03",
        "the statistic kit: a private helper is re-exported by the kit instead of made public where it lives",
        "dpdesk/core/dp/statistics/kit.py",
        r"""from dpdesk.core.dp.values import Row, csv_bytes, fmt_number, neutralise, rounded_row""",
        r"""from dpdesk.core.dp.values import Row, csv_bytes, fmt_number, neutralise, rounded_row
from dpdesk.core.dp.values import _WIDE as _WIDE  # noqa: F401""",
        ("tests/core/test_statistic_kit.py::test_the_kit_gathers_only_public_names_and_documents_each",),
    ),
    Mutant(
        "JR01",
        "the JSON reader: a string's escaped quote is taken for its end, so closing brackets inside strings hide nesting",
        JIN,
        r"""    data = text.encode("utf-8", "surrogatepass").replace(b"\\\\", b"").replace(b'\\"', b"")""",
        r"""    data = text.encode("utf-8", "surrogatepass").replace(b"\\\\", b"")""",
        ("tests/core/test_jsonin.py::test_brackets_in_a_string_cannot_hide_nesting",),
    ),
    Mutant(
        "JR02",
        "the JSON reader: invalid UTF-8 is read with replacement characters instead of refused",
        JIN,
        r"""            text = raw.decode("utf-8")""",
        r"""            text = raw.decode("utf-8", errors="replace")""",
        (
            "tests/core/test_jsonin.py::test_each_limit_is_refused_with_its_message",
            "tests/cli/test_hostile_json.py::test_a_hostile_plan_file_exits_2_with_its_message",
        ),
    ),
    Mutant(
        "JR03",
        "the JSON reader: a byte order mark is accepted in a file dpdesk wrote itself (a ledger line, a package)",
        JIN,
        r"""        if not kind.bom:""",
        r"""        if False:""",
        (
            "tests/core/test_jsonin.py::test_each_limit_is_refused_with_its_message",
            "tests/core/test_jsonin.py::test_a_bom_is_refused_only_where_dpdesk_wrote_the_file",
        ),
    ),
    Mutant(
        "JR04",
        "the JSON reader: the depth is not measured when the text holds fewer than twice the limit's brackets",
        JIN,
        r"""    if text.count("[") + text.count("{") <= MAX_DEPTH:""",
        r"""    if text.count("[") + text.count("{") <= 2 * MAX_DEPTH:""",
        ("tests/core/test_jsonin.py::test_each_limit_is_refused_with_its_message",),
    ),
    Mutant(
        "JR05",
        "the JSON reader: NaN, Infinity and -Infinity are read as numbers",
        JIN,
        r"""            parse_constant=_refuse_constant,""",
        r"""            parse_constant=float,""",
        (
            "tests/core/test_jsonin.py::test_each_limit_is_refused_with_its_message",
            "tests/cli/test_hostile_json.py::test_a_hostile_plan_file_exits_2_with_its_message",
        ),
    ),
    Mutant(
        "JR06",
        "the JSON reader: a number that overflows to infinity (1e999) is read as infinity",
        JIN,
        r"""    if not math.isfinite(x):""",
        r"""    if False:""",
        (
            "tests/core/test_jsonin.py::test_each_limit_is_refused_with_its_message",
            "tests/cli/test_hostile_json.py::test_a_hostile_plan_file_exits_2_with_its_message",
        ),
    ),
    Mutant(
        "JR07",
        "the JSON reader: an integer of too many digits is left to Python's own limit (a bare ValueError, or none)",
        JIN,
        r"""            parse_int=_bounded_int if _LONG_DIGITS.search(text) else None,""",
        r"""            parse_int=None,""",
        (
            "tests/core/test_jsonin.py::test_each_limit_is_refused_with_its_message",
            "tests/cli/test_hostile_json.py::test_a_hostile_plan_file_exits_2_with_its_message",
        ),
    ),
    Mutant(
        "JR08",
        "the JSON reader: a key given twice in one object is read (the last value kept, the first hidden)",
        JIN,
        r"""    if len(out) != len(pairs):""",
        r"""    if False:""",
        (
            "tests/core/test_jsonin.py::test_each_limit_is_refused_with_its_message",
            "tests/cli/test_hostile_json.py::test_a_hostile_plan_file_exits_2_with_its_message",
            "tests/cli/test_hostile_json.py::test_a_hostile_package_is_not_intact",
            "tests/cli/test_hostile_json.py::test_a_ledger_line_with_a_key_twice_is_damage",
        ),
    ),
    Mutant(
        "JR09",
        "the JSON reader: text that is not JSON raises the decoder's own error, not the reader's",
        JIN,
        r"""    except json.JSONDecodeError as exc:""",
        r"""    except KeyError as exc:""",
        ("tests/core/test_jsonin.py::test_each_limit_is_refused_with_its_message",),
    ),
    Mutant(
        "JR10",
        "the JSON reader: a refused number is named without its key (a plan's message names no field)",
        JIN,
        r"""            exc.key = _where_refused(text)""",
        r"""            exc.key = "" """,
        ("tests/core/test_jsonin.py::test_each_limit_is_refused_with_its_message",),
    ),
    Mutant(
        "JR11",
        "a ledger entry is written without being read back through its type (one its type cannot read breaks the ledger)",
        L,
        r"""        entry = written_entry(stored, self.ledger.path)""",
        r"""        entry = parse_entry(stored)""",
        ("tests/core/test_ledger_entries.py::test_an_entry_that_could_not_be_read_back_is_never_written",),
    ),
    # --- issue 26, item 1: no private name across wings, no re-export shells -------------------------------------
    Mutant(
        "WG01",
        "wings: a module imports another wing's private name",
        "dpdesk/core/plan/reader.py",
        r"""from dpdesk.core.common.errors import InputError, PlanError, PlanErrors
""",
        r"""from dpdesk.core.common.errors import InputError, PlanError, PlanErrors
from dpdesk.core.model.spec import _join as _private_join  # noqa: F401
""",
        ("tests/test_layers.py::test_no_private_name_is_imported_across_wings",),
    ),
    Mutant(
        "WG02",
        "wings: a name is imported from a module that only imports it (a re-export shell)",
        "dpdesk/services/budget.py",
        r"""from dpdesk.core.common.progress import NULL_PROGRESS, Progress
""",
        r"""from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.plan.reader import Plan as _ShellPlan  # noqa: F401
""",
        ("tests/test_layers.py::test_no_module_is_a_re_export_shell",),
    ),
    Mutant(
        "TL01",
        "team ledger: the database refuses a spend past the dataset's budget",
        "dpdesk/core/ledger/pgschema.py",
        "IF total_e IS NULL OR total_e > ds.budget_epsilon OR total_d > ds.budget_delta THEN",
        "IF total_e IS NULL OR total_e > ds.budget_epsilon * 2 OR total_d > ds.budget_delta * 2 THEN",
        ("tests/team/test_team_database.py::test_sequential_budget_is_exact_at_the_boundary",),
    ),
    Mutant(
        "TL02",
        "team ledger: the database checks each entry's hash with sha256()",
        "dpdesk/core/ledger/pgschema.py",
        "IF encode(sha256(convert_to(replace(body, member, ''), 'UTF8')), 'hex') <> h THEN",
        "IF false THEN",
        ("tests/team/test_team_database.py::test_a_forged_hash_is_refused",),
    ),
    Mutant(
        "TL03",
        "team ledger: only officers append later settings, governance, acknowledgements, declarations",
        "dpdesk/core/ledger/pgschema.py",
        "IF NOT officer AND (kind IN ('govern', 'acknowledge', 'declare_new') OR (kind = 'settings' AND n > 1)) THEN",
        "IF NOT officer AND (kind IN ('govern', 'acknowledge', 'declare_new')) THEN",
        (
            "tests/team/test_team_database.py::test_settings_after_the_first_governance_and_acknowledgements_are_the_officers",
        ),
    ),
    Mutant(
        "TL04",
        "team ledger: an entry links to the dataset's head (no fork)",
        "dpdesk/core/ledger/pgschema.py",
        "IF (v->>'seq')::numeric <> ds.seq + 1 OR v->>'prev' <> ds.head THEN",
        "IF (v->>'seq')::numeric <> ds.seq + 1 THEN",
        (
            "tests/team/test_team_database.py::test_a_broken_link_is_refused_so_two_writers_never_fork_a_chain",
        ),
    ),
    Mutant(
        "TL05",
        "team ledger: an entry whose stated author is not the session user is refused",
        "dpdesk/core/ledger/pgschema.py",
        "IF jsonb_typeof(v->'author') IS DISTINCT FROM 'string' OR v->>'author' IS DISTINCT FROM session_user::text THEN",
        "IF jsonb_typeof(v->'author') IS DISTINCT FROM 'string' THEN",
        ("tests/team/test_team_database.py::test_an_entry_naming_another_author_or_dataset_is_refused",),
    ),
    Mutant(
        "TL06",
        "team ledger: no function is executable by PUBLIC",
        "dpdesk/core/ledger/pgschema.py",
        "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA dpdesk FROM PUBLIC;\n",
        "",
        (
            "tests/team/test_team_database.py::test_the_functions_are_security_definer_with_a_fixed_search_path_and_no_public_execute",
            "tests/team/test_team_database.py::test_the_auditor_reads_and_appends_nothing_and_others_nothing_at_all",
        ),
    ),
    Mutant(
        "TL07",
        "team ledger: sequential totals are exact decimal sums in the database",
        "dpdesk/core/ledger/pgschema.py",
        "    SELECT coalesce(sum(r.epsilon), 0), coalesce(sum(r.delta), 0) INTO epsilon, delta",
        "    SELECT coalesce(sum(r.epsilon::float8), 0), coalesce(sum(r.delta::float8), 0) INTO epsilon, delta",
        ("tests/team/test_team_database.py::test_sequential_budget_is_exact_at_the_boundary",),
    ),
    Mutant(
        "TL08",
        "team ledger: the zCDP conversion is minimised over its order",
        "dpdesk/core/ledger/pgschema.py",
        "  FOR i IN 1..200 LOOP",
        "  FOR i IN 1..4 LOOP",
        (
            "tests/team/test_team_database.py::test_the_zcdp_conversion_in_the_database_matches_opendps",
            "tests/team/test_team_database.py::test_advanced_and_zcdp_totals_match_the_engine_and_the_stricter_wins_at_the_boundary",
        ),
    ),
    Mutant(
        "TL09",
        "team ledger: advanced composition's bound in the database",
        "dpdesk/core/ledger/pgschema.py",
        "ELSE sqrt(2 * ln(1 / coalesce(r.delta_prime, default_dp)) * r.epsilon_sq) END",
        "ELSE sqrt(ln(1 / coalesce(r.delta_prime, default_dp)) * r.epsilon_sq) END",
        (
            "tests/team/test_team_database.py::test_advanced_and_zcdp_totals_match_the_engine_and_the_stricter_wins_at_the_boundary",
        ),
    ),
    Mutant(
        "TL10",
        "team ledger: a correction raises a release's stated costs",
        "dpdesk/core/ledger/pgschema.py",
        "epsilon = greatest(old.epsilon, excluded.epsilon), delta",
        "epsilon = old.epsilon, delta",
        (
            "tests/team/test_team_database.py::test_a_correction_raises_a_release_and_counts_against_the_budget",
        ),
    ),
    Mutant(
        "TL11",
        "team ledger: curators write no table directly",
        "dpdesk/core/ledger/pgschema.py",
        "REVOKE ALL ON ALL TABLES IN SCHEMA dpdesk FROM PUBLIC;\n",
        "REVOKE ALL ON ALL TABLES IN SCHEMA dpdesk FROM PUBLIC;\nGRANT ALL ON ALL TABLES IN SCHEMA dpdesk TO PUBLIC;\n",
        (
            "tests/team/test_team_database.py::test_curators_and_officers_write_nothing_but_through_the_functions",
        ),
    ),
    Mutant(
        "TL12",
        "team ledger: dpdesk never falls back to the home's own ledger when the team's cannot be used",
        "dpdesk/core/ledger/team.py",
        '        # a setting that cannot be read never means "use the files": the home was connected to a team\n',
        "        return None\n",
        ("tests/team/test_team_release.py::test_team_commands",),
    ),
    Mutant(
        "TL13",
        "team ledger: a home uses the team's ledger named by DPDESK_LEDGER",
        "dpdesk/core/ledger/team.py",
        '    env = os.environ.get(ENV, "").strip()',
        '    env = ""',
        ("tests/team/test_team_release.py::test_an_unreachable_server_charges_nothing_and_never_falls_back",),
    ),
    Mutant(
        "TL14",
        "team ledger: a team's dataset is shared by the homes of the team (claimed in the database)",
        "dpdesk/core/ledger/book.py",
        "        team = self.team\n        if team is not None:  # the team's database decides, for every home of the team at once\n",
        "        team = None\n        if team is not None:  # the team's database decides, for every home of the team at once\n",
        ("tests/team/test_team_release.py::test_two_curators_on_two_homes_share_one_budget",),
    ),
    Mutant(
        "TL15",
        "team ledger: a re-saved copy of a table the team knows joins its dataset (content keys in the database)",
        "dpdesk/core/identity/recognition.py",
        "        owner = team.dataset_of_content(ident.key)\n        if owner is not None:\n            return owner, ident.key\n",
        "        owner = None\n        if owner is not None:\n            return owner, ident.key\n",
        (
            "tests/team/test_team_release.py::test_a_resaved_copy_on_another_home_is_the_same_dataset_of_the_team",
        ),
    ),
    Mutant(
        "TL16",
        "team ledger: one writer per chain across processes and homes (an advisory lock held on the connection)",
        "dpdesk/core/ledger/pgstore.py",
        '        while not self._call("SELECT dpdesk.try_lock(%s)", (name,))[0][0]:\n',
        "        while False:\n",
        ("tests/core/test_ledger_store.py::test_one_writer_at_a_time_across_processes[team]",),
    ),
    Mutant(
        "TL17",
        "team ledger: the tail from the last checkpoint, and its offset in the chain",
        "dpdesk/core/ledger/pgstore.py",
        '"  WHERE b.dataset = %s AND b.seq < cp.seq) "',
        '"  WHERE b.dataset = %s AND b.seq <= cp.seq) "',
        ("tests/core/test_ledger_store.py::test_the_tail_is_read_from_the_last_checkpoint[team]",),
    ),
    Mutant(
        "TL18",
        "team ledger: a session's temporary schema never shadows the functions' types (pg_temp named last)",
        "dpdesk/core/ledger/pgschema.py",
        "CREATE FUNCTION dpdesk.append(p_dataset text, p_line bytea) RETURNS bigint LANGUAGE plpgsql\nSECURITY DEFINER SET search_path = pg_catalog, dpdesk, pg_temp AS $f$",
        "CREATE FUNCTION dpdesk.append(p_dataset text, p_line bytea) RETURNS bigint LANGUAGE plpgsql\nSECURITY DEFINER SET search_path = pg_catalog, dpdesk AS $f$",
        ("tests/team/test_team_attacks.py::test_a_curators_temporary_table_cannot_void_the_budget_check",),
    ),
    Mutant(
        "TL19",
        "team ledger: a spend's release id is new (a reused one would not be charged)",
        "dpdesk/core/ledger/pgschema.py",
        "  IF p_kind = 'spend' AND EXISTS (SELECT 1 FROM dpdesk.releases WHERE dataset = p_dataset AND release_id = p_release) THEN",
        "  IF false THEN",
        ("tests/team/test_team_attacks.py::test_a_spend_reusing_a_release_id_is_charged",),
    ),
    Mutant(
        "TL20",
        "team ledger: a curator's merge never raises the budget or changes the method",
        "dpdesk/core/ledger/pgschema.py",
        "  IF s IS NOT NULL AND kind = 'merge' AND NOT officer AND (ds.method IS NULL",
        "  IF false AND (ds.method IS NULL",
        ("tests/team/test_team_attacks.py::test_a_curator_cannot_raise_the_budget_with_a_merge_entry",),
    ),
    Mutant(
        "TL21",
        "team ledger: the database refuses a line no client reads (a key twice)",
        "dpdesk/core/ledger/pgschema.py",
        "    WHEN bool_or(json_typeof(node) = 'object' AND (SELECT count(*) <> count(DISTINCT k) FROM json_object_keys(node) k))",
        "    WHEN false",
        ("tests/team/test_team_attacks.py::test_every_line_the_database_takes_every_client_reads",),
    ),
    Mutant(
        "TL22",
        "team ledger: a new table's key never joins an existing dataset by naming it",
        "dpdesk/core/ledger/pgschema.py",
        "      IF NOT FOUND THEN\n        RAISE EXCEPTION USING ERRCODE = 'DP008', MESSAGE = 'a new table is given a new dataset id, never one in use';",
        "      IF false THEN\n        RAISE EXCEPTION USING ERRCODE = 'DP008', MESSAGE = 'a new table is given a new dataset id, never one in use';",
        ("tests/team/test_team_attacks.py::test_claim_never_files_a_new_key_under_an_existing_dataset",),
    ),
    Mutant(
        "TL23",
        "team ledger: a delta' is between 0 and 1",
        "dpdesk/core/ledger/pgschema.py",
        "        AND (p_delta_prime #>> '{{}}')::numeric < 1 THEN",
        "        THEN",
        ("tests/team/test_team_attacks.py::test_a_delta_prime_above_one_is_refused_where_it_is_booked",),
    ),
    Mutant(
        "TL24",
        "team ledger: only curators take a chain's writer lock, under a key derived from the team's secret",
        "dpdesk/core/ledger/pgschema.py",
        "  RETURN pg_try_advisory_lock(dpdesk.lock_key(p_dataset));",
        "  RETURN pg_try_advisory_lock(hashtextextended('dpdesk.chain:' || p_dataset, 0));",
        ("tests/team/test_team_attacks.py::test_only_curators_can_take_a_chains_writer_lock",),
    ),
    Mutant(
        "TL25",
        "team ledger: the database refuses a checkpoint that understates the spending",
        "dpdesk/core/ledger/pgschema.py",
        "    bad := seq_e < t_e OR seq_d < t_d OR n < t_n OR rho < t_rho * (1 - 1e-9);",
        "    bad := n < t_n OR rho < t_rho * (1 - 1e-9);",
        ("tests/team/test_team_checkpoints.py::test_a_checkpoint_that_understates_the_spending_is_refused",),
    ),
    Mutant(
        "TL26",
        "team ledger: commands read a team's chain from its last checkpoint (not the whole history)",
        "dpdesk/core/ledger/book.py",
        "        if self.team is not None:\n            return self._team_from_checkpoint()\n",
        "        if self.team is not None:\n            return None\n",
        (
            "tests/team/test_team_checkpoints.py::test_a_team_chain_is_read_from_its_checkpoint_which_the_database_checked",
        ),
    ),
    Mutant(
        "TL27",
        "ledger: a line verifies by its stored bytes' hash (the team database's form) as well as by its canonical JSON",
        "dpdesk/core/ledger/entries.py",
        '    if entry_hash(entry) != entry["hash"] and not stored_hash_matches(line, entry["hash"]):',
        '    if entry_hash(entry) != entry["hash"]:',
        ("tests/team/test_team_attacks.py::test_every_line_the_database_takes_every_client_reads",),
    ),
    Mutant(
        "TL28",
        "team ledger: a home with releases in its own ledgers connects only when told their budget is not carried",
        "dpdesk/services/team.py",
        "    if local and not leave_local:\n",
        "    if False:\n",
        (
            "tests/team/test_team_release.py::test_a_home_with_its_own_releases_connects_only_when_told_their_budget_is_not_carried",
        ),
    ),
    # --- issue 27, item 6: a team release killed, the server stopped mid-release --------------------------------
    Mutant(
        "TT01",
        "a release charged in the team ledger whose package entry could not be appended is reported as charging "
        "nothing (the team ledger's own message, wrapped in the charged release's)",
        R,
        r"""        return exc.reason
""",
        r"""        return str(exc)
""",
        (
            "tests/team/test_team_crash.py::test_the_server_stopped_after_the_charge_says_the_release_was_charged",
        ),
    ),
    # --- issue 27, item 1: TLS with certificate checks, passwords from libpq's files -----------------------------
    Mutant(
        "TT02",
        "a team ledger whose certificate does not verify is reported as unreachable (check the network) instead of "
        "naming the certificate and sslrootcert",
        "dpdesk/core/loading/database.py",
        r"""    if "certificate" in text or "ssl was required" in text or "does not support ssl" in text:
        return "tls"
""",
        r"""    if False:
        return "tls"
""",
        (
            "tests/team/test_team_tls.py::test_an_unrelated_ca_is_refused",
            "tests/team/test_team_tls.py::test_verify_full_refuses_a_certificate_for_another_name",
        ),
    ),
    Mutant(
        "TT03",
        "a team ledger that refuses the login (no password, a wrong one) is reported as unreachable instead of "
        "naming libpq's password file",
        "dpdesk/core/loading/database.py",
        r"""    if state.startswith("28") or "password" in text or "fe_sendauth" in text or "pg_hba.conf" in text:
        return "login"
""",
        r"""    if False:
        return "login"
""",
        ("tests/team/test_team_tls.py::test_without_the_password_nothing_is_charged",),
    ),
    Mutant(
        "TG01",
        "app: the Team ledger dialog grows to show a long refusal whole",
        "dpdesk/gui/views/team_dialog.py",
        "        if need > self.height():\n",
        "        if False:\n",
        ("tests/team/test_team_gui.py::test_a_user_who_is_not_a_curator_is_refused_in_words",),
    ),
    Mutant(
        "TG02",
        "app: Return in the Team ledger dialog connects, never closes it",
        "dpdesk/gui/views/team_dialog.py",
        "        for button in (self.close_button, self.disconnect_button):\n            button.setAutoDefault(False)\n",
        "",
        (
            "tests/team/test_team_gui.py::test_return_in_an_empty_url_field_asks_for_the_url_and_keeps_the_dialog",
        ),
    ),
    Mutant(
        "TG03",
        "app: when DPDESK_LEDGER is set it decides, and the dialog's buttons are disabled",
        "dpdesk/gui/views/team_dialog.py",
        "        free = not busy and not self.choice.from_env\n",
        "        free = not busy\n",
        ("tests/team/test_team_gui.py::test_the_environment_variable_decides_and_the_buttons_are_disabled",),
    ),
    Mutant(
        "TG04",
        "app: the team server's refusal or failure is shown in the dialog in words",
        "dpdesk/gui/views/team_dialog.py",
        "            self.show_message(message, error=True)  # the TeamLedgerError's words, never a traceback\n",
        '            self.show_message("", error=True)\n',
        ("tests/team/test_team_gui.py::test_a_user_who_is_not_a_curator_is_refused_in_words",),
    ),
    Mutant(
        "TG05",
        "app: the line beside the budget names the team ledger in use",
        "dpdesk/gui/actions/team.py",
        '    return _("Ledger: team ({server})").format(server=server), tip\n',
        '    return _("Ledger: this computer"), tip\n',
        ("tests/team/test_team_gui.py::test_connect_as_a_curator_is_remembered_and_shown",),
    ),
    Mutant(
        "TG06",
        "app: after connecting or disconnecting, an open table's budget is read from the ledger now in use",
        "dpdesk/gui/actions/team.py",
        "                window.open_data(str(state.data_path))\n",
        "                pass\n",
        ("tests/team/test_team_gui.py::test_after_connecting_an_open_table_is_read_from_the_team_ledger",),
    ),
    Mutant(
        "TG07",
        "app: Disconnect asks first; No leaves the home connected",
        "dpdesk/gui/views/team_dialog.py",
        "        ):\n            return False\n        team.disconnect(self.home)\n",
        "        ):\n            pass\n        team.disconnect(self.home)\n",
        ("tests/team/test_team_gui.py::test_disconnect_asks_then_the_home_uses_its_own_ledgers",),
    ),
    Mutant(
        "TG08",
        "app: the Team ledger dialog stays open while the server is asked (its answer decides what the home uses)",
        "dpdesk/gui/views/team_dialog.py",
        "        if self.worker is not None:\n            return\n        super().reject()\n",
        "        super().reject()\n",
        (
            "tests/team/test_team_gui.py::test_while_the_server_is_asked_the_dialog_is_busy_not_frozen_and_stays",
        ),
    ),
    Mutant(
        "OB03",
        "dpdesk PATH: a table file whose first header starts with a brace opens as a table",
        "dpdesk/services/opening.py",
        '        if p.suffix.lower() in TABLE_SUFFIXES:  # a CSV whose first header starts with "{" is still a table\n',
        '        if False:  # a CSV whose first header starts with "{" is still a table\n',
        ("tests/gui/test_open_with.py::test_a_table_whose_first_header_starts_with_a_brace_is_a_table",),
    ),
    Mutant(
        "RT01",
        "ledger list: a dataset merged into another is shown closed, with no budget left of its own",
        "dpdesk/services/ledger.py",
        "        who,\n        state.retired_into,\n    )\n",
        "        who,\n        None,\n    )\n",
        (
            "tests/trust/test_merge_duplicates.py::test_merge_charges_every_release_of_both_under_the_smaller_budget",
        ),
    ),
    Mutant(
        "TN01",
        "team: a new table is compared with the sketches of the team's tables (a near-copy is refused)",
        "dpdesk/core/identity/recognition.py",
        "        records = _team_records(team)\n",
        "        records = []\n",
        ("tests/team/test_team_near_copy.py::test_a_near_copy_on_another_curators_machine_is_refused",),
    ),
    Mutant(
        "TN02",
        "team: a new dataset's claim stores its table's sketches in the team's database",
        "dpdesk/core/ledger/pgstore.py",
        "                    sketch if content is not None else None,\n",
        "                    None,\n",
        (
            "tests/team/test_team_near_copy.py::test_a_near_copy_on_another_curators_machine_is_refused",
            "tests/team/test_team_near_copy.py::test_the_team_keeps_a_tables_sketches_for_curators_only",
        ),
    ),
    Mutant(
        "TN03",
        "team: declare-new files the table under the dataset id its entry names",
        "dpdesk/services/ledger.py",
        "        team.claim(resolution.sha256, new)\n",
        "        assign_key(home, resolution.sha256, new)\n",
        (
            "tests/team/test_team_near_copy.py::test_a_near_copy_is_declared_new_by_an_officer_not_linked_by_a_curator",
        ),
    ),
    Mutant(
        "TN04",
        "team: linking a near-copy from a curator's machine is refused naming the officer's way, not a traceback",
        "dpdesk/services/ledger.py",
        "    if resolution.ledger.team is not None:\n        raise UsageError(\n",
        "    if False:\n        raise UsageError(\n",
        (
            "tests/team/test_team_near_copy.py::test_a_near_copy_is_declared_new_by_an_officer_not_linked_by_a_curator",
        ),
    ),
    Mutant(
        "TP01",
        "team add-curator: a person's name is quoted as an identifier (a keyword is a name, never SQL)",
        "dpdesk/core/ledger/pgstore.py",
        'sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(user))',
        'sql.SQL("CREATE ROLE " + user + " LOGIN")',
        (
            "tests/team/test_team_people.py::test_the_administrator_adds_and_removes_people_and_who_lists_them",
        ),
    ),
    Mutant(
        "TP02",
        "team add-curator: a name that is not a plain login role's is refused before any SQL",
        "dpdesk/core/ledger/pgstore.py",
        'if not PERSON_RE.fullmatch(user) or user in _RESERVED or user.startswith("pg_"):',
        "if False:",
        ("tests/team/test_team_people.py::test_a_hostile_name_is_refused_and_nothing_is_made",),
    ),
    Mutant(
        "TP03",
        "team add-curator by a curator: refused with the reason and the fix (the administrator, or --print-sql)",
        "dpdesk/core/ledger/pgstore.py",
        'if getattr(exc, "sqlstate", None) == "42501":  # insufficient privilege: not the administrator',
        "if False:",
        (
            "tests/team/test_team_people.py::test_a_curator_is_refused_add_curator_with_the_reason_and_the_fix",
        ),
    ),
    Mutant(
        "TP04",
        "team status: each dataset's spent total is computed under its own accounting method",
        "dpdesk/core/ledger/pgschema.py",
        "LEFT JOIN LATERAL dpdesk.spent(d.dataset, d.method, d.budget_delta) s ON true",
        "LEFT JOIN LATERAL dpdesk.spent(d.dataset, 'advanced', d.budget_delta) s ON true",
        (
            "tests/team/test_team_people.py::test_status_lists_every_dataset_with_spent_and_left_and_a_removed_curators_entries_stay",
        ),
    ),
    Mutant(
        "TP05",
        "team status: what is left is the budget less the spent total",
        "dpdesk/core/ledger/pgstore.py",
        "left_e, left_d = Decimal(b_eps) - Decimal(s_eps), Decimal(b_delta) - Decimal(s_delta)",
        "left_e, left_d = Decimal(b_eps), Decimal(b_delta) - Decimal(s_delta)",
        (
            "tests/team/test_team_people.py::test_status_lists_every_dataset_with_spent_and_left_and_a_removed_curators_entries_stay",
        ),
    ),
    Mutant(
        "TP06",
        "team status: the auditor sees every dataset's budget, spent and left too (read only)",
        "dpdesk/core/ledger/pgschema.py",
        "  dpdesk.overview() TO {prefix}_curator, {prefix}_officer, {prefix}_auditor;",
        "  dpdesk.overview() TO {prefix}_curator, {prefix}_officer;",
        (
            "tests/team/test_team_people.py::test_status_lists_every_dataset_with_spent_and_left_and_a_removed_curators_entries_stay",
        ),
    ),
    Mutant(
        "TP07",
        "team status: the latest releases are the last ones, newest first",
        "dpdesk/core/ledger/pgstore.py",
        "  ORDER BY x.seq DESC LIMIT %s) e ",
        "  ORDER BY x.seq LIMIT %s) e ",
        (
            "tests/team/test_team_people.py::test_status_lists_every_dataset_with_spent_and_left_and_a_removed_curators_entries_stay",
        ),
    ),
    Mutant(
        "TI01",
        "installer: the bundle keeps Python's ssl module, which psycopg imports before libpq (team commands)",
        "build_scripts/dpdesk.spec",
        r"""    ("Python's _hashlib", r"^(python3\.\d+/)?lib-dynload/_hashlib\.", IS_LINUX),""",
        r"""    ("Python's _hashlib", r"^(python3\.\d+/)?lib-dynload/_(ssl|hashlib)\.", IS_LINUX),""",
        ("tests/installers/test_spec.py::test_the_bundle_keeps_pythons_ssl_module_that_psycopg_imports",),
    ),
    Mutant(
        "DL01",
        "app: right after a release of this plan the meter says what was spent and is left, not over budget in red",
        "dpdesk/gui/views/budget_meter.py",
        "        released = over and self.just_released()\n",
        "        released = False\n",
        (
            "tests/gui/test_shell.py::test_after_a_release_the_meter_says_what_was_spent_and_what_is_left_calmly",
        ),
    ),
    Mutant(
        "DK01",
        "quit, Discard: the discarded edits are dropped while the window lives, not in the stack's destructor",
        "dpdesk/gui/main_window.py",
        "        self.state.undo_stack.clear()\n        self.settings.setValue(",
        "        self.settings.setValue(",
        ("tests/gui/test_quit_discard.py::test_quit_and_discard_ends_without_a_traceback",),
    ),
    Mutant(
        "DZ01",
        "app: the Categories column of the declarations keeps a readable width (it fell to 15 px at zh 1024×700)",
        "dpdesk/gui/views/schema_view.py",
        "CATEGORIES_WIDTH = 200",
        "CATEGORIES_WIDTH = 15",
        ("tests/gui/test_layout.py::test_the_categories_column_keeps_a_readable_width",),
    ),
    Mutant(
        "TS01",
        "team: the sketches a team keeps hold no row count of the table (a count of private data, not DP)",
        "dpdesk/core/loading/identity.py",
        '            "k": self.k,\n            "hashes": [f"{h:016x}" for h in self.hashes],\n            "identifying": identifying(self),',
        '            "rows": self.rows,\n            "k": self.k,\n            "hashes": [f"{h:016x}" for h in self.hashes],\n            "identifying": identifying(self),',
        (
            "tests/core/test_team_sketch.py::test_the_team_copy_holds_no_count_of_the_table",
            "tests/team/test_team_near_copy.py::test_the_sketches_the_team_keeps_hold_no_count_of_the_table",
        ),
    ),
    Mutant(
        "TS02",
        "team: the sketches a team keeps hold no column's counts under a key (marginals)",
        "dpdesk/core/loading/identity.py",
        '            "left_out": {c: p.to_team_json() for c, p in self.left_out.items()},\n            "marginals": {},',
        '            "left_out": {c: p.to_team_json() for c, p in self.left_out.items()},\n            "marginals": {c: m.to_json() for c, m in self.marginals.items()},',
        ("tests/core/test_team_sketch.py::test_the_team_copy_holds_no_count_of_the_table",),
    ),
    Mutant(
        "TS03",
        "team: a team's copy of a sketch keeps whether it identifies its table's rows (a coarse table is not one)",
        "dpdesk/core/loading/identity.py",
        "    if sketch.rows is None:  # a team's copy: decided where the count was known\n        return sketch.identifies",
        "    if sketch.rows is None:  # a team's copy: decided where the count was known\n        return True",
        ("tests/core/test_team_sketch.py::test_the_team_copy_keeps_whether_a_sketch_identifies_its_rows",),
    ),
    Mutant(
        "TK01",
        "app: Tab leaves the declarations table (a keyboard user is not trapped in it)",
        "dpdesk/gui/views/schema_view.py",
        "        self.schema.setTabKeyNavigation(False)  # Tab leaves the table; arrows move in it",
        "        self.schema.setTabKeyNavigation(True)  # Tab leaves the table; arrows move in it",
        ("tests/gui/test_tab_leaves_tables.py::test_tab_moves_focus_out_of_every_table_of_the_window",),
    ),
    Mutant(
        "DW01",
        'app: a plan\'s problems are one click away from the status line (its "show" lists them in a box)',
        "dpdesk/gui/main_window.py",
        "        self.status_more.setVisible(bool(self.status_details))",
        "        self.status_more.setVisible(False)",
        (
            "tests/gui/test_desk_geometry.py::test_every_tab_fits_1024_by_700_with_decorations_and_the_minimum_size",
        ),
    ),
    Mutant(
        "DW02",
        "app: the Results table always shows at least six rows",
        "dpdesk/gui/views/results_view.py",
        "        self.table.setMinimumHeight(self.table_height(MIN_ROWS))",
        "        self.table.setMinimumHeight(self.table_height(1))",
        (
            "tests/gui/test_desk_geometry.py::test_every_tab_fits_1024_by_700_with_decorations_and_the_minimum_size",
        ),
    ),
    Mutant(
        "DW03",
        "app: a splitter the user moved is where they left it next time",
        "dpdesk/gui/main_window.py",
        "            if saved is not None and split.restoreState(saved):",
        "            if False and saved is not None and split.restoreState(saved):",
        (
            "tests/gui/test_splitters_remembered.py::test_a_moved_splitter_is_where_the_user_left_it_next_time",
        ),
    ),
    Mutant(
        "RV01",
        "app: the release confirmation's buttons are verbs (Spend ε … and release, Cancel)",
        "dpdesk/gui/main_window.py",
        "        if self.confirm_yes_text:  # verbs on the buttons: what Yes does, and Cancel",
        "        if False:  # verbs on the buttons: what Yes does, and Cancel",
        (
            "tests/gui/test_release_reads.py::test_the_confirmation_says_what_yes_does_and_export_says_where_it_went",
        ),
    ),
    Mutant(
        "RV02",
        "app: an export says its outcome in the window, not only in the status line",
        "dpdesk/gui/main_window.py",
        "        box.setModal(False)\n        box.show()\n        self.outcome_box = box",
        "        box.setModal(False)\n        self.outcome_box = box",
        (
            "tests/gui/test_release_reads.py::test_the_confirmation_says_what_yes_does_and_export_says_where_it_went",
        ),
    ),
    Mutant(
        "ML01",
        "app: the Results table names each value's mechanism in the user's language",
        "dpdesk/gui/models.py",
        "            return word_label(cell)\n        return cell",
        "            return cell\n        return cell",
        ("tests/gui/test_results_language.py::test_the_results_name_the_mechanism_in_chinese",),
    ),
    Mutant(
        "NS01",
        "numbers: a figure rounded down for the screen (what is left) is never more than the figure",
        "dpdesk/core/common/shown.py",
        '_MODES = {"nearest": ROUND_HALF_UP, "up": ROUND_CEILING, "down": ROUND_FLOOR}',
        '_MODES = {"nearest": ROUND_HALF_UP, "up": ROUND_CEILING, "down": ROUND_HALF_UP}',
        ("tests/gui/test_number_style.py::test_plain_rounds_in_the_direction_that_keeps_a_statement_true",),
    ),
    Mutant(
        "NS02",
        "app: the release's title says the δ spent in plain notation, not 1e-07",
        "dpdesk/gui/actions/release.py",
        'd=numfmt.delta(e.charged.delta, "up")',
        'd=f"{e.charged.delta:.3g}"',
        ("tests/gui/test_number_style.py::test_nothing_the_window_shows_after_a_release_is_in_e_notation",),
    ),
    Mutant(
        "LG01",
        "app: the language chosen in the app is applied at the next start",
        "dpdesk/gui/actions/language.py",
        'if os.environ.get("DPDESK_LANG") or chosen not in LANGUAGES:',
        "if True or chosen not in LANGUAGES:",
        ("tests/gui/test_language_setting.py::test_choosing_chinese_is_kept_and_used_at_the_next_start",),
    ),
    Mutant(
        "LG02",
        "an explicit DPDESK_LANG wins over the language chosen in the app",
        "dpdesk/gui/actions/language.py",
        'if os.environ.get("DPDESK_LANG") or chosen not in LANGUAGES:',
        "if chosen not in LANGUAGES:",
        ("tests/gui/test_language_setting.py::test_an_explicit_dpdesk_lang_wins_over_the_setting",),
    ),
    Mutant(
        "LG03",
        "a ledger entry's type is named in the user's language (the Chinese review window and statement)",
        "dpdesk/core/publish/words.py",
        '        "spend": _("release"),',
        '        "spend": "spend",',
        (
            "tests/core/test_words.py",
            "tests/gui/test_chinese_window.py::test_the_chinese_window_shows_no_english_but_names",
        ),
    ),
    Mutant(
        "LG04",
        "the report names each query's mechanism in the reader's language, not the plan's word",
        "dpdesk/core/publish/report.py",
        'mech = words.mechanism(tr.get("mechanism", all_rows[0][5]), tr.get("calibration"))',
        'mech = tr.get("mechanism", all_rows[0][5])',
        ("tests/services/test_report_language.py",),
    ),
    Mutant(
        "LG05",
        "the report's budget facts are in plain notation (δ 0.0000001, not 1e-07)",
        "dpdesk/core/publish/report.py",
        'return f"ε {numfmt.epsilon(epsilon, rounding)}, δ {numfmt.delta(delta, rounding)}"',
        'return f"ε {epsilon:.6g}, δ {delta:.3g}"',
        ("tests/services/test_report_language.py",),
    ),
    Mutant(
        "LG06",
        "the Data tab names a column's type in the user's language (整数, not int)",
        "dpdesk/gui/models.py",
        'return spec["type"] if role == EDIT else words.column_type(spec["type"])',
        'return spec["type"]',
        ("tests/gui/test_chinese_window.py::test_the_chinese_window_shows_no_english_but_names",),
    ),
    Mutant(
        "KB01",
        "app: the control with the keyboard's focus wears a visible ring",
        "dpdesk/gui/app.py",
        "    focus.install(app)  # a focus ring a keyboard user can see",
        "    pass",
        ("tests/gui/test_keyboard_walk.py",),
    ),
    Mutant(
        "KB02",
        "app: Ctrl+N adds a query with its name ready to type",
        "dpdesk/gui/main_window.py",
        'self.add_query_action = act(_("&Add query"), self.add_query, "Ctrl+N", _("Add a query to the plan"))',
        'self.add_query_action = act(_("&Add query"), self.add_query, None, _("Add a query to the plan"))',
        ("tests/gui/test_keyboard_walk.py",),
    ),
    Mutant(
        "KB03",
        "app: every input is given the accessible name of the label beside it",
        "dpdesk/gui/access.py",
        "    if isinstance(widget, INPUTS) and not widget.accessibleName():",
        "    if False:",
        ("tests/gui/test_keyboard_walk.py",),
    ),
    Mutant(
        "KB04",
        "app: Help > Keyboard shortcuts lists every action that has a key",
        "dpdesk/gui/views/shortcuts.py",
        "        if not keys or not a.text():",
        "        if True:",
        ("tests/gui/test_keyboard_walk.py",),
    ),
    Mutant(
        "FL01",
        "app: a file dialog opens in the folder last chosen for its kind, also after a restart",
        "dpdesk/gui/file_dialogs.py",
        "        where = self.folder(kind)\n",
        '        where = ""\n',
        (
            "tests/gui/test_file_dialogs.py::test_each_kind_of_dialog_opens_in_the_folder_last_chosen_for_it_also_after_a_restart",
            "tests/gui/test_file_dialogs.py::test_save_plan_proposes_the_tables_name_and_the_saved_plan_is_in_open_recent",
        ),
    ),
    Mutant(
        "FL02",
        "app: each kind of file has its own folder (a plan's dialog does not open where the table was)",
        "dpdesk/gui/file_dialogs.py",
        "        for k in (kind, FALLBACK.get(kind)):",
        '        for k in ("table", "plan", "export", "package"):',
        (
            "tests/gui/test_file_dialogs.py::test_each_kind_of_dialog_opens_in_the_folder_last_chosen_for_it_also_after_a_restart",
        ),
    ),
    Mutant(
        "FL03",
        "app: Save plan proposes <table stem>_plan.json",
        "dpdesk/gui/actions/plan_file.py",
        "name = path.name if path is not None else plan_name(self.state.data_path)",
        'name = path.name if path is not None else ""',
        (
            "tests/gui/test_file_dialogs.py::test_save_plan_proposes_the_tables_name_and_the_saved_plan_is_in_open_recent",
        ),
    ),
    Mutant(
        "FL04",
        "app: Export proposes the folder <table stem>_release_<N>",
        "dpdesk/gui/file_dialogs.py",
        'return f"{table.stem}_release_{number}" if table is not None else f"release_{number}"',
        'return f"release_{number}"',
        (
            "tests/gui/test_file_dialogs.py::test_export_proposes_the_table_and_release_number_and_makes_a_new_folder",
        ),
    ),
    Mutant(
        "FL05",
        "app: Export asks in a dialog where a new folder's name can be typed, and makes it",
        "dpdesk/gui/main_window.py",
        "            return self.files.new_folder(title, kind, name)",
        "            return self.files.folder_to_open(title, kind)",
        (
            "tests/gui/test_file_dialogs.py::test_export_proposes_the_table_and_release_number_and_makes_a_new_folder",
        ),
    ),
    Mutant(
        "FL06",
        "app: a saved plan is in File > Open recent and on the welcome page",
        "dpdesk/gui/actions/plan_file.py",
        "window.add_recent(path)  # File > Open recent and the welcome page",
        "pass",
        (
            "tests/gui/test_file_dialogs.py::test_save_plan_proposes_the_tables_name_and_the_saved_plan_is_in_open_recent",
        ),
    ),
    Mutant(
        "FL07",
        "app: a table opened again with no plan offers its last plan",
        "dpdesk/gui/main_window.py",
        "self.plan_offer.setVisible(plan is not None)",
        "self.plan_offer.setVisible(False)",
        (
            "tests/gui/test_file_dialogs.py::test_a_table_opened_again_offers_its_last_plan_and_taking_it_opens_it",
        ),
    ),
    Mutant(
        "FL08",
        "app: the plan saved with a table is the one offered when the table is opened again",
        "dpdesk/gui/actions/plan_file.py",
        "self._remember_with_table(path)\n",
        "pass\n",
        (
            "tests/gui/test_file_dialogs.py::test_a_table_opened_again_offers_its_last_plan_and_taking_it_opens_it",
        ),
    ),
    Mutant(
        "FL09",
        "app: taking the offer opens the table's last plan",
        "dpdesk/gui/main_window.py",
        "return plan is not None and self.open_plan(str(plan))",
        "return plan is not None",
        (
            "tests/gui/test_file_dialogs.py::test_a_table_opened_again_offers_its_last_plan_and_taking_it_opens_it",
        ),
    ),
    Mutant(
        "FL10",
        "app: a table's last plan is offered only while its file is still there",
        "dpdesk/gui/file_dialogs.py",
        "return Path(plan) if plan and os.path.isfile(plan) else None",
        "return Path(plan) if plan else None",
        (
            "tests/gui/test_file_dialogs.py::test_a_table_opened_again_offers_its_last_plan_and_taking_it_opens_it",
        ),
    ),
    Mutant(
        "FL11",
        "app: the offer of a table's last plan is withdrawn once another plan is opened",
        "dpdesk/gui/main_window.py",
        "        state.plan_changed.connect(self._withdraw_plan_offer)\n",
        "",
        (
            "tests/gui/test_file_dialogs.py::test_a_table_opened_again_offers_its_last_plan_and_taking_it_opens_it",
        ),
    ),
    Mutant(
        "PN01",
        "plan: a _help key (a template's note) is ignored in any object of a plan; other unknown keys are refused",
        "dpdesk/core/model/spec.py",
        "        if k not in allowed and k != HELP_KEY:",
        "        if k not in allowed:",
        ("tests/cli/test_plan_new.py::test_help_keys_are_ignored_and_existing_plans_read_as_before",),
    ),
    Mutant(
        "PN02",
        'plan: a template\'s type "?" is refused naming the column and what to write (release, budget)',
        "dpdesk/core/model/spec.py",
        '    if is_placeholder(obj["type"]):',
        "    if False:",
        ("tests/cli/test_plan_new.py::test_a_template_is_refused_by_release_and_budget_in_plain_words",),
    ),
    Mutant(
        "PN03",
        'plan: a template\'s bounds "?" are refused saying what to write',
        "dpdesk/core/model/spec.py",
        "    if _template_bounds(value):\n        raise PlanError(\n            key,",
        "    if False:\n        raise PlanError(\n            key,",
        ("tests/cli/test_plan_new.py::test_placeholders_are_named_one_by_one_as_the_template_is_filled",),
    ),
    Mutant(
        "PN04",
        'plan: a template\'s categories "?" are refused saying what to write',
        "dpdesk/core/model/spec.py",
        "def _parse_categories(value: Any, key: str) -> tuple[str, ...]:\n    if is_placeholder(value):",
        "def _parse_categories(value: Any, key: str) -> tuple[str, ...]:\n    if False:",
        ("tests/cli/test_plan_new.py::test_placeholders_are_named_one_by_one_as_the_template_is_filled",),
    ),
    Mutant(
        "PN05",
        'plan: a template\'s budget epsilon "?" is refused saying what it is',
        "dpdesk/core/model/spec.py",
        '    if is_placeholder(obj["epsilon"]):',
        "    if False:",
        ("tests/cli/test_plan_new.py::test_a_template_is_refused_by_release_and_budget_in_plain_words",),
    ),
    Mutant(
        "PN06",
        "plan new: not one byte past a CSV's header line is read",
        "dpdesk/core/loading/header.py",
        '        elif unit == b"\\n" and not quoted:',
        "        elif False:",
        ("tests/cli/test_plan_new.py::test_nothing_past_the_header_line_is_read",),
    ),
    Mutant(
        "PN07",
        "plan new: a Latin-1 header is not read as Chinese (valid GB18030) from the header alone",
        "dpdesk/core/loading/header.py",
        "    return longest >= 2",
        "    return longest >= 1",
        ("tests/cli/test_plan_new.py::test_a_latin1_header_is_not_read_as_chinese",),
    ),
    Mutant(
        "PN08",
        "plan new: an existing file is replaced only with --force",
        "dpdesk/services/plans.py",
        "    force = request.force",
        "    force = True",
        ("tests/cli/test_plan_new.py::test_an_existing_plan_is_not_replaced_without_force",),
    ),
    Mutant(
        "PN09",
        "plan check: exit 2 while the plan has problems",
        "dpdesk/cli/plan.py",
        "        return 2\n    print(",
        "        return 0\n    print(",
        ("tests/cli/test_plan_new.py::test_plan_check_lists_each_problem_on_its_own_line_and_exits_2",),
    ),
    Mutant(
        "PN10",
        "plan check --data: a declared column the header lacks is named",
        "dpdesk/services/plans.py",
        "        if n == 0:",
        "        if False:",
        ("tests/cli/test_plan_new.py::test_plan_check_names_a_declared_column_the_header_lacks",),
    ),
    Mutant(
        "PN11",
        'plan: a codebook fills a template\'s categories "?"',
        "dpdesk/core/plan/reader.py",
        ' or is_placeholder(spec["categories"]))',
        ")",
        ("tests/cli/test_plan_new.py::test_a_codebook_fills_a_templates_categories",),
    ),
    Mutant(
        "PN12",
        "plan new: no type is guessed (every column's type is left to fill)",
        "dpdesk/core/plan/template.py",
        '            "type": PLACEHOLDER,',
        '            "type": "float",',
        (
            "tests/cli/test_plan_new.py::test_plan_new_writes_a_template_of_the_header_with_every_choice_left_to_fill",
        ),
    ),
    Mutant(
        "IS01",
        "app: a query's simulated release shows each cell's 95% interval, as wide as the accuracy it states",
        "dpdesk/core/preview/look.py",
        "    if numeric and all(look.lows[:n]) and all(look.highs[:n]):",
        "    if False and numeric and all(look.lows[:n]) and all(look.highs[:n]):",
        (
            "tests/gui/test_simulated_look.py::test_a_histogram_is_drawn_as_bars_with_the_stated_accuracy_and_follows_epsilon",
        ),
    ),
    Mutant(
        "IS02",
        "app: the simulated release follows the query's epsilon",
        "dpdesk/gui/views/look_view.py",
        "        key = (spec, plan.columns, plan.privacy_unit, plan.expected_rows)",
        "        key = (spec.name, plan.columns, plan.privacy_unit, plan.expected_rows)",
        (
            "tests/gui/test_simulated_look.py::test_a_histogram_is_drawn_as_bars_with_the_stated_accuracy_and_follows_epsilon",
        ),
    ),
    Mutant(
        "IS03",
        "app: an epsilon typed key by key is simulated once, after the typing stops",
        "dpdesk/gui/views/look_view.py",
        "        if key != self.key:\n            self.timer.start()",
        "        if key != self.key:\n            self._start()",
        (
            "tests/gui/test_simulated_look.py::test_a_histogram_is_drawn_as_bars_with_the_stated_accuracy_and_follows_epsilon",
        ),
    ),
    Mutant(
        "IS04",
        "app: a mean's noise preview shows the mean's own noise before its count's and sum's",
        "dpdesk/gui/views/preview_panel.py",
        "        if len(design.components) > 1 and not stat.composite:",
        "        if False and len(design.components) > 1 and not stat.composite:",
        ("tests/gui/test_simulated_look.py::test_a_mean_shows_its_own_noise_first_then_its_parts",),
    ),
    Mutant(
        "IS05",
        "app: a simulated release never reads the table opened for release",
        "dpdesk/gui/views/look_view.py",
        "look = query_look(LookRequest(plan, home, name, private_sha=private), stand_ins, progress)",
        "look = query_look(LookRequest(plan, home, name, public=self.state.data_path), stand_ins, progress)",
        ("tests/gui/test_simulated_look.py::test_the_table_opened_for_release_is_never_read",),
    ),
    Mutant(
        "SP01",
        "app: a declaration's problem is marked on the cell it is about, with the problem as its tooltip",
        "dpdesk/gui/models.py",
        "            if key in keys and p.text not in out:",
        "            if False:",
        ("tests/gui/test_schema_problems_on_cells.py",),
    ),
    Mutant(
        "SP02",
        "a column's missing bounds are named in words a person fills the form with, not as a list's shape",
        "dpdesk/core/model/spec.py",
        "    if value is None or (isinstance(value, (list, tuple)) and not any(v is not None for v in value)):",
        "    if False:",
        ("tests/gui/test_schema_problems_on_cells.py",),
    ),
    Mutant(
        "PV01",
        "app: the Data tab shows more than one row and a half of the file at 1024x700 with decorations",
        "dpdesk/gui/views/schema_view.py",
        "        self.preview.verticalHeader().setDefaultSectionSize(self.preview.fontMetrics().lineSpacing() + 6)",
        "        pass",
        ("tests/gui/test_desk_geometry.py",),
    ),
    Mutant(
        "NS03",
        "app: a plan's numbers in the form's fields read in plain notation (δ 0.0000001, not 1e-07)",
        "dpdesk/gui/views/query_form.py",
        "    if isinstance(value, float) and math.isfinite(value):",
        "    if False:",
        ("tests/gui/test_number_style.py::test_nothing_the_window_shows_after_a_release_is_in_e_notation",),
    ),
    Mutant(
        "NS04",
        "a refused release says what is left in plain notation (delta 0.000001 left, not 1e-06)",
        "dpdesk/core/release/steps.py",
        '            left_d=plain(rem.delta, 3, "down"),',
        '            left_d=f"{rem.delta:.3g}",',
        ("tests/core/test_release.py::test_rerunning_costs_again_and_is_refused_when_exhausted",),
    ),
    Mutant(
        "TD01",
        "team dashboard: a curator's and the auditor's officer buttons are disabled (read only)",
        "dpdesk/gui/views/team_dashboard.py",
        "            button.setEnabled(officer and applies and not busy)",
        "            button.setEnabled(applies and not busy)",
        (
            "tests/team/test_team_dashboard.py::test_a_curator_and_the_auditor_see_the_same_with_the_officers_buttons_disabled",
        ),
    ),
    Mutant(
        "TD02",
        "team dashboard: what a dataset spent is rounded up, never shown as less than it is",
        "dpdesk/gui/views/team_dashboard.py",
        'return pair(ds["spent"], "up")',
        'return pair(ds["spent"], "nearest")',
        ("tests/team/test_team_dashboard.py::test_the_model_rounds_spent_up_and_left_down_in_plain_words",),
    ),
    Mutant(
        "TD03",
        "team dashboard: what is left of a budget is rounded down, never shown as more than it is",
        "dpdesk/gui/views/team_dashboard.py",
        'return pair(ds["left"], "down")',
        'return pair(ds["left"], "nearest")',
        ("tests/team/test_team_dashboard.py::test_the_model_rounds_spent_up_and_left_down_in_plain_words",),
    ),
    Mutant(
        "TD04",
        "team dashboard: a dataset that spent past its budget is marked broken, not in order",
        "dpdesk/gui/views/team_dashboard.py",
        '    if "overspent" in problems:',
        "    if False:",
        ("tests/team/test_team_dashboard.py::test_the_model_rounds_spent_up_and_left_down_in_plain_words",),
    ),
    Mutant(
        "TD05",
        "team dashboard: only an officer is an officer (a curator's role is not taken for one)",
        "dpdesk/gui/views/team_dashboard.py",
        '    if details.get("officer"):\n        return "officer"',
        '    if details.get("curator"):\n        return "officer"',
        (
            "tests/team/test_team_dashboard.py::test_a_curator_and_the_auditor_see_the_same_with_the_officers_buttons_disabled",
        ),
    ),
    Mutant(
        "TD06",
        "team dashboard: the officer's approval is signed at the dataset's head in the team's chain",
        "dpdesk/gui/views/team_dashboard.py",
        "            head = ledger_head(HeadRequest(Dataset(home, dataset_id=dataset))).head\n",
        "            head = ledger_head(HeadRequest(Dataset(home, dataset_id=dataset))).head\n"
        "            head = type(head)(head.seq - 1, head.hash)\n",
        (
            "tests/team/test_team_dashboard.py::test_the_officer_signs_an_approval_for_the_dataset_at_its_team_head",
        ),
    ),
    Mutant(
        "TD07",
        "team dashboard: a pending dataset (no budget yet) is open to the officer's first settings",
        "dpdesk/gui/views/team_dashboard.py",
        '                state in ("ok", "pending", "broken"),\n                _(\n                    "Take the budget',
        '                state in ("ok", "broken"),\n                _(\n                    "Take the budget',
        (
            "tests/team/test_team_dashboard.py::test_the_officer_fixes_the_first_settings_of_a_pending_dataset",
        ),
    ),
    Mutant(
        "TJ01",
        "team import: a release the team counts already is not carried again (a resumed import doubles nothing)",
        "dpdesk/services/ledger.py",
        """        if rid in done:
            continue""",
        """        if rid in done and False:
            continue""",
        ("tests/team/test_team_import_crash.py::test_sigkill_at_each_step_of_a_team_import",),
    ),
    Mutant(
        "TJ02",
        "team import: a team home refuses a table whose history is still in its own ledger",
        "dpdesk/core/ledger/book.py",
        """        if not moving:
            self.refuse_unimported()""",
        """        if False:
            self.refuse_unimported()""",
        (
            "tests/team/test_team_import.py::test_a_curator_imports_a_table_with_history_and_its_home_ledger_is_closed",
        ),
    ),
    Mutant(
        "TJ03",
        "team import: a home's own ledger imported into a team's is never charged again (no budget back by disconnecting)",
        "dpdesk/core/ledger/book.py",
        """            if moved is not None and not moving:""",
        """            if moved is not None and not moving and False:""",
        (
            "tests/team/test_team_import.py::test_a_curator_imports_a_table_with_history_and_its_home_ledger_is_closed",
        ),
    ),
    Mutant(
        "TJ04",
        "team import: a table the team holds keeps the smaller of the two budgets",
        "dpdesk/services/team_import.py",
        """                if settings is not None and settings != ours:""",
        """                if settings is not None and ours is None:""",
        ("tests/team/test_team_import.py::test_two_curators_import_one_table_one_budget_the_smaller",),
    ),
    Mutant(
        "TJ05",
        "team import: the database refuses a curator's import that raises the budget",
        "dpdesk/core/ledger/pgschema.py",
        """  IF s IS NOT NULL AND kind = 'import' AND NOT officer AND n > 1 AND (ds.method IS NULL""",
        """  IF false AND (ds.method IS NULL""",
        (
            "tests/team/test_team_import.py::test_the_database_refuses_a_curators_import_that_raises_the_budget",
        ),
    ),
    Mutant(
        "TJ06",
        "team import: the team's import entry carries the home's releases (none lost)",
        "dpdesk/services/team_import.py",
        """                    "carried": carried,
                }""",
        """                    "carried": carried[:1],
                }""",
        (
            "tests/team/test_team_import.py::test_a_curator_imports_a_table_with_history_and_its_home_ledger_is_closed",
        ),
    ),
    Mutant(
        "TJ07",
        "team init on an older team upgrades it in place and says so; run again, it changes nothing",
        "dpdesk/core/ledger/pgstore.py",
        '''            if row[0] == SCHEMA_VERSION:
                return "current"''',
        '''            if row[0] == SCHEMA_VERSION and False:
                return "current"''',
        ("tests/team/test_team_import.py::test_team_init_upgrades_an_older_team_and_is_idempotent",),
    ),
    Mutant(
        "TJ08",
        "team import: the app shows why a table with unimported history is refused, before any release",
        "dpdesk/gui/state.py",
        """                ledger.refuse_unimported()  # a team home: a table whose history is still only in its own ledger""",
        """                pass""",
        ("tests/team/test_team_gui.py::test_after_connecting_an_open_table_is_read_from_the_team_ledger",),
    ),
    # --- the team's budget statement (dpdesk team statement) ------------------------------------------------------
    Mutant(
        "TT04",
        "the team statement has one page per dataset, after its cover",
        "dpdesk/core/publish/report.py",
        "    for part in datasets:\n        story.append(PageBreak())",
        "    for part in datasets[1:]:\n        story.append(PageBreak())",
        (
            "tests/team/test_team_statement.py::test_the_team_statement_has_a_cover_and_each_dataset_on_a_page_with_its_own_statements_facts",
        ),
    ),
    Mutant(
        "TT05",
        "the team statement's cover states spent rounded up (never less than the exact sum)",
        "dpdesk/core/publish/report.py",
        '(numfmt.epsilon(spent.epsilon, "up"), numfmt.delta(spent.delta, "up")),',
        "(numfmt.epsilon(spent.epsilon), numfmt.delta(spent.delta)),",
        ("tests/team/test_team_statement.py::test_spent_is_rounded_up_and_left_down_on_the_cover",),
    ),
    Mutant(
        "TT06",
        "the team statement's cover states left rounded down (never more than the exact budget less spent)",
        "dpdesk/core/publish/report.py",
        '(numfmt.epsilon(left.epsilon, "down"), numfmt.delta(left.delta, "down")),',
        "(numfmt.epsilon(left.epsilon), numfmt.delta(left.delta)),",
        ("tests/team/test_team_statement.py::test_spent_is_rounded_up_and_left_down_on_the_cover",),
    ),
    Mutant(
        "TT07",
        "the team statement refuses to replace an existing file without --force",
        "dpdesk/services/team.py",
        "    check_out_file(out, force=force, home=home)",
        "    check_out_file(out, force=True, home=home)",
        (
            "tests/team/test_team_statement.py::test_the_auditor_writes_it_and_an_existing_file_is_replaced_only_with_force",
        ),
    ),
    Mutant(
        "TT08",
        "the team statement states a dataset whose chain does not verify, and still states the others",
        "dpdesk/services/team.py",
        "    except LedgerError as exc:\n        return TeamDataset(",
        "    except OSError as exc:\n        return TeamDataset(",
        ("tests/team/test_team_statement.py::test_a_broken_chain_is_stated_and_the_others_still_stand",),
    ),
    Mutant(
        "TJ09",
        "team import: a re-saved copy of a table with unimported home history is refused through the team too",
        "dpdesk/core/identity/recognition.py",
        """    if ledger.home is not None and not cluster_table:
        _remember_own_identity(""",
        """    if False:
        _remember_own_identity(""",
        (
            "tests/team/test_team_import_attacks.py::test_a_resaved_copy_is_refused_through_the_team_before_the_import",
        ),
    ),
    Mutant(
        "TJ10",
        "team import: the database refuses a curator's import or merge that changes the unit of privacy",
        "dpdesk/core/ledger/pgschema.py",
        """  IF s IS NOT NULL AND kind IN ('merge', 'import') AND NOT officer AND n > 1 THEN""",
        """  IF false THEN""",
        ("tests/team/test_team_import_attacks.py::test_a_curators_import_cannot_change_the_unit_of_privacy",),
    ),
    Mutant(
        "TJ11",
        "team import: the register's moved mark survives an acknowledgement (cutting the moved line gives nothing back)",
        "dpdesk/core/ledger/anchor.py",
        """        out["moved_to"] = moved  # never cleared: not by a new chain, not by an acknowledgement""",
        """        pass""",
        (
            "tests/team/test_team_import_attacks.py::test_cutting_the_moved_entry_and_acknowledging_gives_nothing_back",
        ),
    ),
    Mutant(
        "TJ12",
        "team init --print-sql --upgrade never downgrades a newer team ledger",
        "dpdesk/core/ledger/pgschema.py",
        """        _NO_DOWNGRADE.format(version=SCHEMA_VERSION),""",
        """        "",""",
        ("tests/team/test_team_import_attacks.py::test_the_printed_upgrade_never_downgrades_a_newer_team",),
    ),
    # --- issue 30, item 4: tables from PostgreSQL (dpdesk/core/loading/database.py) -------------------------------
    Mutant(
        "PD01",
        "database data: a URL holding a password is used (and shown) instead of refused for ~/.pgpass or PGPASSWORD",
        "dpdesk/core/loading/database.py",
        """    if parts.password is not None or "password" in query or "sslpassword" in query:""",
        """    if False:""",
        ("tests/services/test_database_data.py::test_a_password_is_never_taken_nor_written",),
    ),
    Mutant(
        "PD02",
        "database data: a query runs in a transaction that may write",
        "dpdesk/core/loading/database.py",
        """                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")""",
        """                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")""",
        (
            "tests/services/test_database_data.py::test_a_table_name_is_an_identifier_and_a_query_runs_read_only",
        ),
    ),
    Mutant(
        "PD03",
        "database data: a table's name is pasted into SQL instead of quoted as an identifier",
        "dpdesk/core/loading/database.py",
        """            body = sql.SQL("SELECT * FROM {}").format(sql.Identifier(*parts))""",
        """            body = sql.SQL("SELECT * FROM " + self.table)""",
        (
            "tests/services/test_database_data.py::test_a_table_name_is_an_identifier_and_a_query_runs_read_only",
        ),
    ),
    Mutant(
        "PD04",
        "database data: the private copy of the rows is left in the temporary folder after the command",
        "dpdesk/core/release/streaming.py",
        """        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)""",
        """        yield folder
    finally:
        pass""",
        ("tests/services/test_database_data.py::test_a_table_and_its_csv_are_one_dataset_with_one_budget",),
    ),
    Mutant(
        "PD05",
        "database data: a missing table is reported as an unreadable one, without naming table=SCHEMA.NAME",
        "dpdesk/core/loading/database.py",
        """    if state in ("42P01", "3F000"):  # undefined_table, invalid_schema_name""",
        """    if state in ("3F000",):""",
        (
            "tests/services/test_database_data.py::test_each_failure_is_one_line_naming_the_server_and_the_fix",
        ),
    ),
    Mutant(
        "PD06",
        "database data: a role the server does not know is reported as an unreachable server, not a refused login",
        "dpdesk/core/loading/database.py",
        """    if re.search(r'role "[^"]*" does not exist', text):""",
        """    if False:""",
        (
            "tests/services/test_database_data.py::test_each_failure_is_one_line_naming_the_server_and_the_fix",
        ),
    ),
    Mutant(
        "PD07",
        "database data: plan new declares a number column of the database as a text column to fill",
        "dpdesk/services/database.py",
        """        if base in INT_TYPES:""",
        """        if base in ():""",
        ("tests/services/test_database_data.py::test_plan_new_declares_the_tables_columns_and_number_types",),
    ),
    Mutant(
        "PD08",
        "database data: the rows' text follows the server's time zone, date style and float digits (the same rows, "
        "other bytes and another content)",
        "dpdesk/core/loading/database.py",
        """            conn.execute(SESSION)""",
        """            pass""",
        ("tests/services/test_database_data.py::test_the_rows_text_does_not_depend_on_the_servers_settings",),
    ),
    Mutant(
        "SC01",
        "scheme 2: a home with datasets known by scheme-1 keys only no longer computes scheme 1 (a re-saved copy of such a table starts a fresh budget)",
        "dpdesk/core/identity/recognition.py",
        "    if old is None and needs_scheme1(home):\n        old = identity_of(home, path, **kw)",
        "    if old is None and False:\n        old = identity_of(home, path, **kw)",
        ("tests/core/test_typed_identity.py::test_a_home_with_scheme_1_datasets_still_finds_their_copies",),
    ),
    Mutant(
        "SC02",
        "scheme 2: a dataset found by its scheme-1 key does not get its scheme-2 key (the home needs scheme 1 for ever)",
        "dpdesk/core/ledger/contents.py",
        "    for cached in cached_identities(home, sha256):\n        record_content(",
        "    for cached in cached_identities(home, sha256)[1:]:\n        record_content(",
        ("tests/core/test_typed_identity.py::test_a_home_with_scheme_1_datasets_still_finds_their_copies",),
    ),
    Mutant(
        "SC03",
        "scheme 2: the release resolves without the identity its load computed (the file is read a second time)",
        "dpdesk/core/release/steps.py",
        "                computed=table.identity,\n",
        "                computed=None,\n",
        ("tests/core/test_typed_identity.py::test_a_first_release_reads_the_file_once",),
    ),
    Mutant(
        "SC04",
        "scheme 2: the rows gathered while a chunk is hashed are dropped at the end",
        "dpdesk/core/loading/typed_identity.py",
        "        if self._buffer:\n            self._flush()  # (after the batch in flight)",
        "        if self._pending is None and self._buffer:\n            self._flush()  # (after the batch in flight)",
        ("tests/core/test_typed_identity.py::test_rows_gathered_after_a_batch_in_flight_are_counted",),
    ),
    Mutant(
        "SC05",
        "scheme 2: a float column's large integers are taken as parsed (two tables differing in a digit past 2^53 share a key)",
        "dpdesk/core/loading/typed_identity.py",
        "        if self.parsed_floats:\n",
        "        if False:\n",
        ("tests/core/test_typed_identity.py::test_a_large_integer_in_a_float_column_is_read_from_its_text",),
    ),
    Mutant(
        "SC06",
        "scheme 2: sketches of the two schemes are compared (meaningless overlaps)",
        "dpdesk/core/identity/recognition.py",
        "    if known.scheme != sketch.scheme:\n        return None  # row hashes of two schemes are not comparable\n",
        "",
        ("tests/core/test_typed_identity.py::test_the_schemes_are_never_compared",),
    ),
    Mutant(
        "SC07",
        "scheme 2: undeclared columns are left out of the identity the load computes",
        "dpdesk/core/loading/csvfile.py",
        '        if spec is None or f"c{i}" in as_text:\n            out.append(frame.get_column(f"u{i}" if spec is None else f"c{i}"))',
        '        if spec is None or f"c{i}" in as_text:\n            out.append(frame.get_column(f"u{i}" if spec is None else f"c{i}").clear(n=frame.height))',
        (
            "tests/core/test_typed_identity.py::test_the_identity_computed_in_the_load_is_the_one_of_a_pass_of_its_own",
        ),
    ),
    Mutant(
        "SC08",
        "scheme 2: a file written to while the load read it keeps the identity of the rows polars read (maybe not the bytes hashed)",
        "dpdesk/core/loading/csvfile.py",
        "    if table is not None and table.identity is not None and _file_state(path) != before:\n",
        "    if table is not None and table.identity is not None and False:\n",
        (
            "tests/core/test_typed_identity.py::test_a_file_written_to_during_the_load_gets_no_identity_from_it",
        ),
    ),
    # --- every command flat in the history (issue 30, item 3): governed releases read the tail ---------
    Mutant(
        "FH01",
        "governed release: the entries read back to a plan approval's head are not verified as links of the chain",
        L,
        """                entry = _checked_line(line, str(n), prev, n, self.dataset)
                prev = entry.hash
                out.append(entry)""",
        """                entry = parse_entry(loads_entries(line.decode("utf-8")))
                prev = entry.hash
                out.append(entry)""",
        (
            "tests/core/test_governed_tail.py::test_an_approval_for_a_head_forged_before_the_checkpoint_is_refused",
        ),
    ),
    Mutant(
        "FH02",
        "governed release: a replayed plan approval is checked against the checkpoint's nonces only (a forged "
        "checkpoint that forgets it lets it through)",
        R,
        """        nonces |= nonces_of(back[1])""",
        """        pass""",
        (f"{FHT}::test_a_replayed_approval_is_refused_though_a_forged_checkpoint_forgets_its_nonce",),
    ),
    Mutant(
        "FH03",
        "governed release: a plan approval signed before the last checkpoint verifies the whole chain",
        L,
        """        if not state.full and self.team is None:
            got = self._read_back(state, seq)""",
        """        if False:
            got = self._read_back(state, seq)""",
        (
            "tests/core/test_governed_tail.py::test_an_approval_signed_before_the_checkpoint_reads_back_to_its_head_only",
        ),
    ),
    Mutant(
        "FH04",
        "governed release: the approval checks read the whole chain again (O(n) a release, O(n^2) a history)",
        R,
        """    back = ledger.back_to(state, seq) if seq is not None else None""",
        """    back = ledger.back_to(state, seq) if seq is not None and ledger.verify() is not None else None""",
        ("tests/core/test_governed_tail.py::test_a_governed_release_reads_only_the_tail_at_any_length",),
    ),
    Mutant(
        "FH05",
        "listing and statement: the Gaussian's epsilon is solved again for every entry (no cache)",
        "dpdesk/core/ledger/recost.py",
        """@functools.lru_cache(maxsize=4096, typed=True)""",
        """@functools.lru_cache(maxsize=0, typed=True)""",
        (
            "tests/core/test_recost_cache.py::test_listing_report_and_costs_are_the_same_with_and_without_the_cache",
        ),
    ),
    Mutant(
        "RW01",
        "synthetic CSV from arrays: a float below 1e-4 is written as polars writes it (0.00001), not as Python (1e-05)",
        "dpdesk/core/dp/statistics/synthetic.py",
        """        fast = (np.round(vals, 6) == vals) & (size < _BIG) & ((size >= _SMALL) | (vals == 0.0))""",
        """        fast = (np.round(vals, 6) == vals) & (size < _BIG)""",
        (
            "tests/core/test_synthetic_csv.py::test_small_and_large_floats_are_written_as_python_writes_them",
            "tests/core/test_synthetic_csv.py::test_the_csv_from_arrays_is_byte_for_byte_the_one_csv_writer_s",
        ),
    ),
    Mutant(
        "RW02",
        "a release draws its synthetic table twice: the report draws it again instead of counting the package's",
        "dpdesk/core/publish/package.py",
        """        synthetic_counts=synthetic_counts,""",
        """        synthetic_counts=None,""",
        (
            "tests/core/test_synthetic_csv.py::test_a_release_draws_its_synthetic_table_once_and_reports_its_levels",
        ),
    ),
    Mutant(
        "RW03",
        "synthetic CSV from arrays: a category label is written raw (a formula not neutralised, a line break unquoted)",
        "dpdesk/core/dp/statistics/synthetic.py",
        """        pl.Series([_csv_cell(c) for c in a.categories] + [""], dtype=pl.String)  # the last: a missing level""",
        """        pl.Series([*a.categories, ""], dtype=pl.String)""",
        ("tests/core/test_synthetic_csv.py::test_the_csv_from_arrays_is_byte_for_byte_the_one_csv_writer_s",),
    ),
    Mutant(
        "RW04",
        "synthetic CSV from arrays: a float with more than 6 decimals is written unrounded",
        "dpdesk/core/dp/statistics/synthetic.py",
        """        fast = (np.round(vals, 6) == vals) & (size < _BIG) & ((size >= _SMALL) | (vals == 0.0))""",
        """        fast = (size < _BIG) & ((size >= _SMALL) | (vals == 0.0))""",
        ("tests/core/test_synthetic_csv.py::test_the_csv_from_arrays_is_byte_for_byte_the_one_csv_writer_s",),
    ),
    Mutant(
        "RW05",
        "synthetic CSV from arrays: a slice of rows runs to the end of the table (rows written twice)",
        "dpdesk/core/dp/statistics/synthetic.py",
        """        rows = slice(start, min(n, start + CSV_ROWS))""",
        """        rows = slice(start, n)""",
        ("tests/core/test_synthetic_csv.py::test_the_csv_is_the_same_written_in_slices_of_any_size",),
    ),
    Mutant(
        "AB01",
        "bounding: a person's kept rows depend on other people's rows (the hash mixes in the table's size)",
        BND,
        r"""    h = np.full(n, key.word(0), dtype=_U64)""",
        r"""    h = np.full(n, key.word(0) ^ _U64(n), dtype=_U64)""",
        (
            "tests/core/test_bounding.py::test_adding_or_removing_a_person_changes_at_most_k_kept_rows_and_no_one_elses",
        ),
    ),
    Mutant(
        "AB02",
        "bounding: the release's key is not derived from the home's secret (one key for every home)",
        R,
        r"""    return derive_key(home_secret(home))""",
        r"""    return derive_key(b"dpdesk")""",
        ("tests/core/test_bounding.py::test_the_release_key_is_derived_from_the_homes_identity_secret",),
    ),
    Mutant(
        "AB03",
        "bounding: the key's derivation ignores the secret",
        BND,
        r"""    return BoundKey(hashlib.blake2b(b"bounding", key=secret, person=KEY_PERSON, digest_size=64).digest())""",
        r"""    return BoundKey(hashlib.blake2b(b"bounding", person=KEY_PERSON, digest_size=64).digest())""",
        ("tests/core/test_bounding.py::test_the_release_key_is_derived_from_the_homes_identity_secret",),
    ),
    Mutant(
        "AB04",
        "bounding: the id is left out of the hash (every person keeps the same kind of row: a biased choice)",
        BND,
        r"""        h ^= fmix(u)
        fmix(h)""",
        r"""        pass""",
        ("tests/core/test_bounding.py::test_each_of_a_persons_rows_is_kept_about_equally_often",),
    ),
    Mutant(
        "AB05",
        "bounding: a float is hashed by its text (repr), not its binary64 bits",
        BND,
        r"""        v += 0.0  # -0 becomes +0
        words = v.view(_U64)""",
        r"""        v += 0.0  # -0 becomes +0
        words = np.asarray([int.from_bytes(hashlib.blake2b(repr(x).encode()).digest()[:8], "little") for x in v], dtype=_U64)""",
        ("tests/core/test_bounding.py::test_the_bounding_hash_is_the_specified_function",),
    ),
    Mutant(
        "AB06",
        "engines: the streamed engine bounds each partition under a key of its own (other rows than in memory)",
        "dpdesk/core/release/streaming.py",
        r"""                    self._aggregate(part, bound_rows_per_person(part, k, key))""",
        r"""                    self._aggregate(part, bound_rows_per_person(part, k, BoundKey.fresh()))""",
        (
            "tests/core/test_engines.py::test_with_an_id_column_the_engines_bound_the_same_rows_and_not_every_row",
        ),
    ),
    Mutant(
        "AB07",
        "engines: the in-memory engine's state of a query is taken on every row (the bounding mask ignored)",
        "dpdesk/core/release/engines/memory.py",
        r"""            state = state_statistic(d, self.table, keep, self.plan.columns)""",
        r"""            state = state_statistic(d, self.table, keep | True, self.plan.columns)""",
        ("tests/core/test_engines.py::test_both_engines_give_the_same_states_check_identity_and_release",),
    ),
    Mutant(
        "IK01",
        "person ids: hashed under the process's own key whatever the release's (another process keeps other rows)",
        "dpdesk/core/loading/columns.py",
        "    key = ID_KEY.get() or _PROCESS_ID_KEY\n",
        "    key = _PROCESS_ID_KEY\n",
        ("tests/core/test_bounding.py::test_a_home_s_id_key_gives_every_process_the_same_id_hashes",),
    ),
    Mutant(
        "IK02",
        "person ids: load_for_release ignores the id key it is given",
        "dpdesk/core/release/streaming.py",
        "    with id_key_scope(id_key):\n",
        "    with id_key_scope(None):\n",
        ("tests/core/test_bounding.py::test_a_release_loads_person_ids_under_its_home_s_key",),
    ),
    Mutant(
        "IK03",
        "person ids: prepare_release loads without the home's id key",
        "dpdesk/core/release/steps.py",
        "                id_key=id_key(plan, home),\n",
        "                id_key=None,\n",
        ("tests/core/test_bounding.py::test_a_release_loads_person_ids_under_its_home_s_key",),
    ),
    Mutant(
        "AQ01",
        "scheme 2: an older dataset that owns several tables stops computing scheme 1 once one of them has its scheme-2 key (a re-saved copy of a linked table starts a fresh budget)",
        "dpdesk/core/ledger/contents.py",
        "        if schemes.count(2) < schemes.count(1):\n",
        "        if schemes and 2 not in schemes:\n",
        (
            "tests/cli/test_scheme_upgrade.py::test_a_linked_table_of_an_older_dataset_is_still_found_after_the_upgrade",
        ),
    ),
    Mutant(
        "QG01",
        "quantile by group: Du under replace 2k max(q, 1-q) -> k (the ungrouped bound; a row moving between groups "
        "moves two groups' scores)",
        "dpdesk/core/dp/statistics/quantile.py",
        r"""            du = float_up(2 * k * max(qf, 1 - qf))""",
        r"""            du = float(k)""",
        (
            "tests/core/test_bruteforce.py::test_the_quantile_by_group_reaches_its_du_when_a_row_moves_between_groups",
        ),
    ),
    Mutant(
        "QG02",
        "quantile by group: Du under add/remove k max(q, 1-q) -> max(q, 1-q) per group (the k rows may land in "
        "several groups)",
        "dpdesk/core/dp/statistics/quantile.py",
        r"""            du = float_up(k * max(qf, 1 - qf))""",
        r"""            du = float_up((1 if groups is not None else k) * max(qf, 1 - qf))""",
        (
            "tests/core/test_bruteforce.py::test_the_quantile_by_group_reaches_its_du_when_a_row_moves_between_groups",
        ),
    ),
    Mutant(
        "QG03",
        "quantile by group: every group picks from the first group's scores (the groups' utilities mixed)",
        "dpdesk/core/dp/statistics/quantile.py",
        r"""            idx = pick(exact.utilities[g * m : (g + 1) * m], design.components[0])""",
        r"""            idx = pick(exact.utilities[0:m], design.components[0])""",
        ("tests/core/test_quantile_by_group.py::test_each_group_picks_from_its_own_scores",),
    ),
    Mutant(
        "QG04",
        "quantile by group: each group scored on every row (the groups' rows mixed)",
        "dpdesk/core/dp/statistics/quantile.py",
        r"""            part = xv[order[bounds[g] : bounds[g + 1]]]""",
        r"""            part = xv""",
        ("tests/core/test_quantile_by_group.py::test_each_group_picks_from_its_own_scores",),
    ),
    Mutant(
        "QG05",
        "quantile by group: the ledger charged the query's epsilon once per group instead of once (parallel "
        "composition ignored)",
        "dpdesk/core/ledger/budget.py",
        r"""    return [acc.QueryCost(d.spec.name, d.epsilon, d.delta, d.rho) for d in designs]""",
        r"""    return [acc.QueryCost(d.spec.name, d.epsilon * len(d.cells) if d.spec.mechanism == "exponential" else d.epsilon, d.delta, d.rho) for d in designs]""",
        ("tests/cli/test_grouped_quantile.py",),
    ),
    Mutant(
        "WH01",
        "a where: under replace a row that moves across the public condition is not booked as a row that drops out",
        "dpdesk/core/dp/queries_base.py",
        "    if plan.privacy_unit.id_column is not None or spec.where:\n",
        "    if plan.privacy_unit.id_column is not None:\n",
        (
            "tests/core/test_where.py::test_under_replace_a_condition_widens_a_sum_to_the_largest_magnitude",
            "tests/core/test_bruteforce.py::test_a_row_condition_is_what_widens_the_sum_under_replace",
        ),
    ),
    Mutant(
        "WH02",
        "a where: the statistic reads every row, not only those that meet the condition",
        "dpdesk/core/dp/aggregates.py",
        "        mask = meets if mask is None else mask & meets\n",
        "        pass\n",
        ("tests/core/test_where.py::test_the_condition_keeps_the_rows_that_meet_it",),
    ),
    Mutant(
        "WH03",
        "a where: a number outside the bounds is compared unclamped (the statistic clamps it)",
        "dpdesk/core/dp/aggregates.py",
        "        v = np.clip(values, spec.bounds[0], spec.bounds[1])\n",
        "        v = values\n",
        ("tests/core/test_where.py::test_the_condition_keeps_the_rows_that_meet_it",),
    ),
    Mutant(
        "WH04",
        "a where: a subset's accuracy is stated at the whole table's expected rows (too small an error)",
        "dpdesk/core/dp/accuracy_base.py",
        "    return None if spec.where else plan.expected_rows\n",
        "    return plan.expected_rows\n",
        ("tests/core/test_where.py::test_a_subset_s_accuracy_is_stated_for_its_own_rows_or_not_at_all",),
    ),
    Mutant(
        "VA01",
        "variance: the square sum's add_remove sensitivity k R halved (an added row's square is at most R)",
        "dpdesk/core/dp/statistics/variance.py",
        "        l1_i = l2_i = float(k) * per_row\n",
        "        l1_i = l2_i = float(k) * per_row / 2\n",
        (
            "tests/core/test_variance.py::test_the_square_sum_s_sensitivity_is_reached_and_never_exceeded",
            "tests/core/test_bruteforce.py::test_no_neighbour_changes_a_statistic_by_more_than_its_sensitivity",
        ),
    ),
    Mutant(
        "VA02",
        "variance: the square sum's replace sensitivity (rows that drop out included) k R halved",
        "dpdesk/core/dp/statistics/variance.py",
        "        l1_i = l2_i = k * per_row\n",
        "        l1_i = l2_i = k * per_row / 2\n",
        (
            "tests/core/test_variance.py::test_the_square_sum_s_sensitivity_is_reached_and_never_exceeded",
            "tests/core/test_bruteforce.py::test_no_neighbour_changes_a_statistic_by_more_than_its_sensitivity",
        ),
    ),
    Mutant(
        "VA03",
        "variance: the grouped square sum under replace booked k R (a row leaving one group for another moves two cells)",
        "dpdesk/core/dp/statistics/variance.py",
        "        l1_i, l2_i = 2.0 * k * per_row, math.sqrt(2.0) * k * per_row\n",
        "        l1_i, l2_i = 1.0 * k * per_row, 1.0 * k * per_row\n",
        (
            "tests/core/test_variance.py::test_the_square_sum_s_sensitivity_is_reached_and_never_exceeded",
            "tests/core/test_bruteforce.py::test_no_neighbour_changes_a_statistic_by_more_than_its_sensitivity",
        ),
    ),
    Mutant(
        "VA04",
        "variance: the accuracy bound leaves out the centred sum's cross term 2 S Z_s (half of it)",
        "dpdesk/core/dp/accuracy_base.py",
        "(2.0 * h * n * a_s + a_s * a_s) / m_lo",
        "(1.0 * h * n * a_s + a_s * a_s) / m_lo",
        ("tests/core/test_variance.py::test_the_bound_covers_the_worst_case_of_its_box",),
    ),
    Mutant(
        "VA05",
        "variance: the released estimator divides by n instead of n - 1 (not the sample variance of VAR.S / pandas)",
        "dpdesk/core/dp/statistics/variance.py",
        "(q - s * s / m) / (m - 1.0)",
        "(q - s * s / m) / m",
        (
            "tests/core/test_variance.py::test_the_n_minus_1_divisor_is_what_is_released_for_a_small_table",
            "tests/core/test_variance.py::test_without_noise_the_release_is_numpy_s_sample_statistic_of_the_clamped_values",
        ),
    ),
    Mutant(
        "WH05",
        "bounds too narrow for their grid (the step as wide as the range) are accepted: a mean's or a variance's stated accuracy is false, or its design divides by zero",
        "dpdesk/core/model/spec.py",
        "    if rounded and hi - lo < MIN_GRID_STEPS * step:\n",
        "    if False:\n",
        ("tests/core/test_where.py::test_bounds_narrower_than_their_grid_are_refused_with_a_hint",),
    ),
    Mutant(
        "WH06",
        "a where's description names every category: a report's table cell outgrows the page and the release fails after the charge",
        "dpdesk/core/model/spec.py",
        '            shown = ", ".join(quoted(c) for c in self.categories[:limit])\n',
        '            shown = ", ".join(quoted(c) for c in self.categories)\n',
        ("tests/core/test_where.py::test_a_condition_of_hundreds_of_categories_fits_the_report",),
    ),
    Mutant(
        "SI01",
        "Spark's identity reads Java's number suffixes (1.5d, 2f) as numbers where the local code reads text: the same file gets another dataset key on Spark",
        "dpdesk/core/release/engines/spark/identity.py",
        'NUMBER = r"^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\z"',
        'NUMBER = r"^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?[dDfF]?\\z"',
        ("tests/spark/test_spark_identity.py::test_text_cells_are_the_local_ones",),
    ),
    Mutant(
        "SI02",
        "Spark's identity sums the row hashes as signed 64-bit values: the same rows get another content key than the local loaders'",
        "dpdesk/core/release/engines/spark/identity.py",
        'F.when(x < 0, d + F.lit(str(_U64_OFFSET)).cast("decimal(20,0)"))',
        "F.when(x < 0, d)",
        ("tests/spark/test_spark_identity.py::test_identity_is_the_local_one",),
    ),
    Mutant(
        "SI03",
        "an integer literal beyond 2^53 in a text column beside other cells is hashed through float64 (9007199254740993 as ...992): the same rows typed or as text get two keys",
        "dpdesk/core/loading/typed_identity.py",
        "int_cells(as_int.filter(pl.Series(is_int)).to_numpy(), keys)",
        "int_cells(as_int.to_numpy()[is_int], keys)",
        (
            "tests/core/test_typed_identity.py::test_a_large_integer_beside_other_cells_is_exact",
            "tests/spark/test_spark_identity.py::test_text_cells_are_the_local_ones",
        ),
    ),
    Mutant(
        "CT01",
        "Spark engine: a table only the cluster reads is aggregated from the source again rather than from the snapshot its identity was computed on: rewritten in between, its new rows are charged to the old content's ledger",
        "dpdesk/core/release/engines/spark/engine.py",
        "            return frame.localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)\n",
        "            return frame\n",
        ("tests/spark/test_spark_cluster_tables.py::test_the_statistics_are_of_the_rows_the_identity_names",),
    ),
    Mutant(
        "CT02",
        "Spark engine: a table only the cluster reads is released without its content identity: a catalog table holding a released file's rows starts a fresh budget",
        "dpdesk/core/release/engines/spark/engine.py",
        "            identity=self.identity,\n",
        "            identity=None,\n",
        (
            "tests/spark/test_spark_cluster_tables.py::test_a_catalog_table_of_a_files_rows_is_that_files_dataset_and_shares_its_budget",
        ),
    ),
    Mutant(
        "CT03",
        "a cluster table is released in a home that still knows a dataset by a scheme-1 key only, which Spark's identity cannot be compared with: a copy of that dataset's table starts a fresh budget",
        "dpdesk/core/release/steps.py",
        "    if needs_scheme1(home):\n        raise UsageError(",
        "    if False:\n        raise UsageError(",
        (
            "tests/spark/test_spark_cluster_tables.py::test_a_home_still_knowing_a_dataset_by_a_scheme_1_key_refuses_a_cluster_table",
        ),
    ),
    Mutant(
        "CT04",
        "the curator's link of a cluster table (ledger link --data table:NAME) does not find the table Spark last read there",
        "dpdesk/services/common.py",
        "        return kept if kept is not None else cluster_table_key(self.home, self.data)\n",
        "        return kept\n",
        ("tests/spark/test_spark_cluster_tables.py::test_a_catalog_table_whose_rows_changed_is_a_near_copy",),
    ),
    Mutant(
        "CT05",
        "Spark reads a folder of CSV files by the first file's header and the others by position: a file ordering its columns differently has its g values counted as x",
        "dpdesk/core/release/engines/spark/session.py",
        "            enforceSchema=False,\n",
        "            enforceSchema=True,\n",
        (
            "tests/spark/test_spark_cluster_attacks.py::test_a_csv_folder_whose_files_order_their_columns_differently_is_read_by_header",
        ),
    ),
    Mutant(
        "CT06",
        "a cluster CSV Spark decoded with replacement characters (a Latin-1 file read as UTF-8) is released as other text, a fresh dataset",
        "dpdesk/core/release/engines/spark/engine.py",
        '            if self.source.kind == "csv":\n                self._check_decoded(frame)\n',
        "            if False:\n                self._check_decoded(frame)\n",
        ("tests/spark/test_spark_cluster_attacks.py::test_a_latin1_csv_folder_read_as_utf8_is_refused",),
    ),
    Mutant(
        "CT07",
        "--encoding is dropped for a table only the cluster reads: a Latin-1 CSV folder given its encoding is not the file's dataset",
        "dpdesk/core/release/engines/spark/engine.py",
        "            frame = read(self.spark, self._read_as, self._charset(), self._delimiter)\n",
        "            frame = read(self.spark, self._read_as, None, self._delimiter)\n",
        (
            "tests/spark/test_spark_cluster_attacks.py::test_a_latin1_csv_folder_with_its_encoding_is_its_files_dataset",
        ),
    ),
    Mutant(
        "CT08",
        "a cluster table's hint is written without its identity kept: after a data-problems refusal, budget --data table:NAME shows a known table as new",
        "dpdesk/core/release/steps.py",
        "            remember_file(home, table.identity)\n",
        "            pass\n",
        (
            "tests/spark/test_spark_cluster_attacks.py::test_a_hint_left_by_a_data_problems_refusal_does_not_make_a_known_table_look_new",
        ),
    ),
    Mutant(
        "CT09",
        "a Java exception Spark did not convert (a Parquet folder whose files disagree on a type) ends in a stack trace, not a one-line refusal",
        "dpdesk/core/release/engines/spark/engine.py",
        "            failures += (Py4JJavaError,)\n",
        "            pass\n",
        (
            "tests/spark/test_spark_cluster_attacks.py::test_a_parquet_folder_whose_files_disagree_on_a_type_is_refused_not_a_traceback",
        ),
    ),
    Mutant(
        "SK01",
        "Spark engine: a value half-way between two grid points is rounded half up (Spark's round) instead of half to even (numpy's rint)",
        "dpdesk/core/release/engines/spark/states.py",
        "    q = F.rint(clamped(x, spec) * F.lit(2.0**s))\n",
        "    q = F.round(clamped(x, spec) * F.lit(2.0**s))\n",
        ("tests/spark/test_spark_reading.py::test_values_half_way_between_grid_points_round_half_to_even",),
    ),
    Mutant(
        "SK02",
        "Spark engine: text is a number whenever Spark's cast reads one (1.5d, 1f), not exactly when the loader reads one",
        "dpdesk/core/release/engines/spark/columns.py",
        '        F.when(t.rlike(NUMBER), t.cast("double"))\n',
        '        F.when(t.cast("double").isNotNull(), t.cast("double"))\n',
        ("tests/spark/test_spark_reading.py::test_text_is_a_number_exactly_when_the_loader_reads_one",),
    ),
    Mutant(
        "SK03",
        "Spark engine: a value equal to a quantile's candidate counted as below it (< read as <=)",
        "dpdesk/core/release/engines/spark/states.py",
        "        above = (v < x) if strict else (v <= x)\n",
        "        above = v <= x\n",
        (
            "tests/spark/test_spark_reading.py::test_values_on_candidates_and_edges_are_counted_as_the_in_memory_engine_counts_them",
        ),
    ),
    Mutant(
        "SK04",
        "Spark engine: a category trimmed of ASCII white space only (a no-break or ideographic space keeps it undeclared)",
        "dpdesk/core/release/engines/spark/columns.py",
        '_EDGES = r"(?U)^\\s+|\\s+$"\n',
        '_EDGES = r"^\\s+|\\s+$"\n',
        ("tests/spark/test_spark_reading.py::test_categories_are_trimmed_of_unicode_white_space",),
    ),
    Mutant(
        "SR01",
        "Spark Connect: a remote cluster reached with TLS or a token, not both (the exact aggregates sent in clear, or to anyone)",
        "dpdesk/core/release/engines/spark/session.py",
        '    if params.get("use_ssl", "").lower() != "true" or not params.get("token"):\n',
        '    if params.get("use_ssl", "").lower() != "true" and not params.get("token"):\n',
        ("tests/core/test_spark_remote.py",),
    ),
    Mutant(
        "SR02",
        "Spark Connect: a private network address taken for this machine (reached without TLS and a token)",
        "dpdesk/core/release/engines/spark/session.py",
        "        return ipaddress.ip_address(host).is_loopback\n",
        "        return ipaddress.ip_address(host).is_private\n",
        ("tests/core/test_spark_remote.py",),
    ),
    Mutant(
        "SR03",
        "Spark Connect: an unreachable server waited for through the client's ten minutes of retries, not refused in seconds",
        "dpdesk/core/release/engines/spark/session.py",
        "            client.set_retry_policies([DefaultPolicy(**HANDSHAKE_RETRIES)])\n",
        "            pass\n",
        (
            "tests/spark/test_spark_connect.py::test_an_unreachable_spark_connect_server_is_refused_in_seconds",
        ),
    ),
    Mutant(
        "SR04",
        "Spark engine: a float column declared as a category matched by a category polars never writes for a number (1e-4 for 0.0001)",
        "dpdesk/core/release/engines/spark/columns.py",
        "        if as_typed.cast(pl.String)[0] != c:\n",
        "        if False:\n",
        ("tests/spark/test_spark_typed.py::test_a_typed_parquet_file_gives_the_in_memory_states_and_check",),
    ),
    Mutant(
        "SK05",
        "Spark engine: a file swapped while Spark read it is charged to the ledger its first bytes named",
        "dpdesk/core/release/engines/spark/engine.py",
        "        elif self._local is None or file_sha256(self._local, progress) != self._sha:\n",
        "        elif False:\n",
        (
            "tests/spark/test_spark_release.py::test_a_file_changed_while_spark_read_it_is_refused_before_any_charge",
        ),
    ),
    Mutant(
        "SB01",
        "Spark bounding: a person's rows ordered by their hash as a signed bigint (not unsigned): other rows kept than the local engines keep",
        "dpdesk/core/release/engines/spark/bounding.py",
        "    order = Window.partitionBy(_ID0, _ID1).orderBy(xor(F.col(_HASH), SIGN))\n",
        "    order = Window.partitionBy(_ID0, _ID1).orderBy(F.col(_HASH))\n",
        ("tests/spark/test_spark_bounding.py::test_the_rows_kept_are_the_local_engines",),
    ),
    Mutant(
        "SB02",
        "Spark bounding: ids trimmed of ASCII white space only (U+3000, U+00A0 stay): one person split in two, unlike the loader",
        "dpdesk/core/release/engines/spark/bounding.py",
        'TRIM_PATTERN = r"(?U)\\A\\s+|\\s+\\z"\n',
        'TRIM_PATTERN = r"\\A\\s+|\\s+\\z"\n',
        ("tests/spark/test_spark_bounding.py::test_id_lanes_are_the_loader_s_id_hashes",),
    ),
    Mutant(
        "SB03",
        "Spark bounding: a float's -0.0 hashed by its own bits (not as +0.0): other hashes than the local engines'",
        "dpdesk/core/release/engines/spark/bounding.py",
        "        positive_zero = F.when(x == 0.0, F.lit(0.0)).otherwise(x)",
        "        positive_zero = x",
        ("tests/spark/test_spark_bounding.py::test_row_hashes_are_the_local_engines",),
    ),
    Mutant(
        "SB04",
        "Spark bounding: rows without an id (null or blank) kept as one person's",
        "dpdesk/core/release/engines/spark/bounding.py",
        "    with_ids = text.where(~empty).withColumns({_ID0: lo, _ID1: hi})\n",
        "    with_ids = text.withColumns({_ID0: lo, _ID1: hi})\n",
        ("tests/spark/test_spark_bounding.py::test_the_rows_kept_are_the_local_engines",),
    ),
    Mutant(
        "SK06",
        "Spark engine: a path Spark reads as a wildcard ([t].csv reads t.csv) is hashed as the decoy it names",
        "dpdesk/core/release/engines/spark/engine.py",
        '        if self.source.kind != "table" and any(c in self.source.location for c in GLOB):\n',
        "        if False:\n",
        ("tests/spark/test_spark_attacks.py::test_a_path_spark_would_read_as_a_wildcard_is_refused",),
    ),
    Mutant(
        "SK07",
        "Spark engine: a file Spark reads with other rows than dpdesk (blank lines in a one-column file) is released",
        "dpdesk/core/release/steps.py",
        "    if rows is not None and rows != check.rows:\n",
        "    if False:\n",
        (
            "tests/spark/test_spark_attacks.py::test_a_file_spark_reads_with_other_rows_than_dpdesk_is_refused",
        ),
    ),
    Mutant(
        "SK08",
        "Spark engine: a CSV in GB18030 is read by Spark as UTF-8 (its categories undeclared)",
        "dpdesk/core/release/engines/spark/engine.py",
        "                    decoder.decode(block)\n",
        "                    pass\n",
        ("tests/spark/test_spark_attacks.py::test_a_csv_in_another_encoding_than_utf8_is_refused",),
    ),
    Mutant(
        "SK09",
        "Spark engine: a whole number beyond 2^63 in an int column is read as not whole (floor saturates)",
        "dpdesk/core/release/engines/spark/columns.py",
        '        frac = ~nan & (F.abs(x) < F.lit(2.0**53)) & (x != F.floor(x).cast("double"))\n',
        '        frac = ~nan & (x != F.floor(x).cast("double"))\n',
        (
            "tests/spark/test_spark_attacks.py::test_whole_numbers_beyond_2_63_in_an_int_column_are_clamped_as_the_loader_clamps_them",
        ),
    ),
    Mutant(
        "AE01",
        "The app's release uses the engine chosen in File > Aggregation engine (Spark: ReleaseRequest.spark)",
        "dpdesk/gui/actions/release.py",
        "                spark=spark,\n",
        "                spark=None,\n",
        (
            "tests/gui/test_spark_engine_app.py::test_the_release_asks_the_chosen_engine_and_charges_nothing_when_spark_cannot_be_had",
        ),
    ),
    Mutant(
        "AE02",
        "The app never writes a Spark Connect address's token to its settings (kept for the session only)",
        "dpdesk/gui/actions/release.py",
        "        settings.setValue(REMOTE_KEY, without_token(choice.remote))\n",
        "        settings.setValue(REMOTE_KEY, choice.remote)\n",
        ("tests/gui/test_spark_engine_app.py::test_the_choice_is_remembered_and_its_token_is_not",),
    ),
    Mutant(
        "AE03",
        "The engine's dialog closes only on an address the release accepts (a bad one is said in the dialog)",
        "dpdesk/gui/views/engine_dialog.py",
        "            self.choice().target()\n",
        "            pass\n",
        (
            "tests/gui/test_spark_engine_app.py::test_the_dialog_refuses_a_bad_address_in_words_and_keeps_a_good_one",
        ),
    ),
    Mutant(
        "AE04",
        "A local Spark asked with another local[N] than the process's session runs is started as asked (not reused)",
        "dpdesk/core/release/engines/spark/session.py",
        "            if spark.sparkContext.master != target.master:\n",
        "            if False:\n",
        (
            "tests/gui/test_spark_engine_app.py::test_a_release_aggregated_by_spark_in_the_app_is_charged_once_and_exported",
        ),
    ),
    Mutant(
        "AE05",
        "The app never releases a file opened on this computer with a Spark Connect server elsewhere (it would read its own file)",
        "dpdesk/gui/actions/release.py",
        "            if not on_this_machine(spark):\n",
        "            if False:\n",
        (
            "tests/gui/test_spark_engine_app.py::test_a_server_elsewhere_releases_the_clusters_tables_and_never_a_file_opened_here",
        ),
    ),
    Mutant(
        "TQ01",
        "team: a table's claim records its content keys of both schemes (scheme 2's beside scheme 1's), not one",
        "dpdesk/core/ledger/pgstore.py",
        "        for i, (content, sketch) in enumerate(contents):\n",
        "        for i, (content, sketch) in enumerate(contents[:1]):\n",
        (
            "tests/team/test_team_scheme2.py::test_a_table_released_in_the_team_is_known_by_its_scheme2_key_too",
        ),
    ),
    Mutant(
        "TQ02",
        "team: a file the team knows by its bytes gets its scheme-2 key recorded at its next release when the team lacks it",
        "dpdesk/core/identity/recognition.py",
        "        _record_scheme2(team, path, sha, ledger.dataset, secret, computed, cluster_table, kw)\n",
        "        pass\n",
        (
            "tests/team/test_team_scheme2.py::test_a_file_the_team_knew_by_scheme1_only_gets_its_scheme2_key_at_its_next_release",
        ),
    ),
    Mutant(
        "TQ03",
        "team: a dataset known by fewer scheme-2 than scheme-1 sketches is listed (the hazard of a cluster table)",
        "dpdesk/core/identity/recognition.py",
        "    return sorted(d for d, one, later in team.sketch_schemes() if later < one)\n",
        "    return sorted(d for d, one, later in team.sketch_schemes() if later < 0)\n",
        (
            "tests/team/test_team_scheme2.py::test_the_team_lists_a_dataset_known_by_scheme1_only_until_its_file_is_budgeted",
        ),
    ),
    Mutant(
        "TQ04",
        "team: a cluster table is refused while the team knows a dataset by a scheme-1 key only (no second budget)",
        "dpdesk/core/release/steps.py",
        "        old = team_scheme1_only(team)\n",
        "        old = []\n",
        (
            "tests/spark/test_spark_team.py::test_a_cluster_table_is_refused_while_the_team_knows_a_dataset_by_scheme1_only",
        ),
    ),
    Mutant(
        "TQ05",
        "team: the loader and Spark key a team home's table with the team's identity secret (the same rows, one key)",
        "dpdesk/core/identity/recognition.py",
        "            return store.identity_secret() if store is not None else None\n",
        "            return None\n",
        (
            "tests/spark/test_spark_team.py::test_a_files_rows_read_by_spark_on_another_curators_home_share_the_teams_budget",
        ),
    ),
    Mutant(
        "TQ06",
        "team: a new table's scheme-2 sketch is compared with the team's (a near-copy read by Spark is refused)",
        "dpdesk/core/identity/recognition.py",
        "            for ident in idents:  # each scheme's sketch is compared with the team's sketches of that scheme\n",
        "            for ident in idents[1:]:  # each scheme's sketch is compared with the team's sketches of that scheme\n",
        ("tests/spark/test_spark_team.py::test_a_near_copy_of_a_teams_dataset_read_by_spark_is_refused",),
    ),
    Mutant(
        "AO01",
        "Opening a table only the cluster reads (File > Open Spark table) reads its header only: no row of it comes to the desktop",
        "dpdesk/core/release/engines/spark/header.py",
        "        fields = list(read(spark, where, charset, delimiter).schema.fields)  # the schema: no row is read\n",
        "        frame = read(spark, where, charset, delimiter)\n        frame.take(20)\n        fields = list(frame.schema.fields)\n",
        (
            "tests/gui/test_spark_open_app.py::test_opening_a_catalog_table_or_a_folder_reads_its_header_and_no_row",
        ),
    ),
    Mutant(
        "AO02",
        "The app releases a table only the cluster reads through Spark only: with this computer chosen it is refused in words, nothing run",
        "dpdesk/gui/actions/release.py",
        "        if cluster is not None and spark is None:  # its rows are not here: only Spark can aggregate it\n",
        "        if False:  # its rows are not here: only Spark can aggregate it\n",
        ("tests/gui/test_spark_open_app.py::test_the_source_is_remembered_and_no_token_is",),
    ),
    Mutant(
        "AIM01",
        "The adaptive synthesiser spends exactly its rho (the last round spends what remains, never more)",
        "dpdesk/core/dp/synthetic/aim.py",
        "            eps = math.sqrt(8.0 * (1.0 - MEASURE_SHARE) * max(left, 0.0))\n",
        "            eps = math.sqrt(8.0 * (1.0 - MEASURE_SHARE) * max(left, 0.0)) * 1.1\n",
        ("tests/core/test_synthetic_aim.py::test_spends_exactly_rho",),
    ),
    Mutant(
        "AIM02",
        "The adaptive selection's sensitivity is the largest weight times a marginal's L1 sensitivity",
        "dpdesk/core/dp/synthetic/aim.py",
        "    sensitivity = max(c.weight for c in cands) * budget.l1\n",
        "    sensitivity = max(c.weight for c in cands)\n",
        ("tests/core/test_synthetic_aim.py::test_every_released_value_went_through_a_mechanism",),
    ),
    Mutant(
        "AIM03",
        "Every marginal the adaptive rounds release went through the noise",
        "dpdesk/core/dp/synthetic/aim.py",
        "        released.rounds.append(Round(chosen, tuple(noise(vals, budget.l2, sigma)), sigma, eps))\n",
        "        released.rounds.append(Round(chosen, tuple(vals), sigma, eps))\n",
        ("tests/core/test_synthetic_aim.py::test_every_released_value_went_through_a_mechanism",),
    ),
    Mutant(
        "AIM04",
        "The adaptive rounds never grow the model past its size limit (1 GiB)",
        "dpdesk/core/dp/synthetic/aim.py",
        "        small = [c for c, fits in zip(cands, fitting, strict=True) if fits]\n",
        "        small = list(cands)\n",
        ("tests/core/test_synthetic_aim.py::test_the_model_stays_within_its_size_limit",),
    ),
    Mutant(
        "PGM01",
        "A marginal the model holds in no clique is computed exactly (separators divided out)",
        "dpdesk/core/dp/synthetic/pgm.py",
        "                    factors.append((sep, np.where(belief > 0, 1.0 / belief, 0.0)))\n",
        "                    factors.append((sep, np.ones_like(belief)))\n",
        ("tests/core/test_synthetic_pgm.py::test_marginals_match_the_full_joint",),
    ),
    Mutant(
        "PGM02",
        "Synthetic rows are drawn from the model's conditional distributions",
        "dpdesk/core/dp/synthetic/pgm.py",
        "            row = table[g]\n",
        "            row = table.sum(axis=0)\n",
        ("tests/core/test_synthetic_pgm.py::test_the_sampler_follows_the_model",),
    ),
    Mutant(
        "TQ07",
        "team: the scheme-1-only check counts every sketch, not the near-copy window (newer tables never hide one)",
        "dpdesk/core/ledger/pgschema.py",
        "      FROM dpdesk.sketches s JOIN dpdesk.datasets d USING (dataset) WHERE NOT d.retired\n    )\n",
        "      FROM dpdesk.sketches s JOIN dpdesk.datasets d USING (dataset) WHERE NOT d.retired\n"
        "      ORDER BY s.added DESC LIMIT {max_sketches}\n    )\n",
        (
            "tests/team/test_team_scheme2.py::test_many_newer_tables_never_hide_a_dataset_known_by_scheme1_only",
        ),
    ),
    Mutant(
        "AIMW01",
        "The plan refuses the adaptive synthesiser with delta 0 (or none), naming the fix (a delta, or mst)",
        "dpdesk/core/plan/reader.py",
        '    if mech == Mechanism.AIM and not obj.get("delta"):\n',
        "    if False:\n",
        ("tests/core/test_synthetic_aim_query.py::test_delta_zero_is_refused_with_a_message_naming_the_fix",),
    ),
    Mutant(
        "AIMW02",
        "Re-costing counts every round an adaptive synthetic table recorded (rounds beyond the booking are flagged)",
        "dpdesk/core/ledger/recost.py",
        "        rounds = _rounds_rho(eff, cost.name, unit)\n",
        "        rounds = None\n",
        (
            "tests/core/test_synthetic_aim_query.py::test_recorded_rounds_that_cost_more_than_booked_are_flagged",
        ),
    ),
    Mutant(
        "AIMW03",
        "An adaptive synthetic table regenerated from the ledger (rounds and seed) is the one released, bit for bit",
        "dpdesk/core/dp/synthetic/aim.py",
        "    rng = generator(seed)\n",
        "    rng = np.random.default_rng()\n",
        (
            "tests/core/test_synthetic_aim_query.py::test_release_keeps_every_round_and_the_table_regenerates_from_the_ledger",
        ),
    ),
    Mutant(
        "AIMW04",
        "The privacy audit covers the adaptive synthesiser's rounds: its selection and its measurement",
        "dpdesk/core/dp/statistics/synthetic.py",
        '                part="measurement",\n',
        '                part="selection",\n',
        ("tests/trust/test_audit.py::test_every_statistic_is_audited",),
    ),
    Mutant(
        "AIMW05",
        "Each adaptive measurement is drawn at the sigma the ledger records for its round",
        "dpdesk/core/dp/statistics/synthetic.py",
        "            measure, l1=budget.l1, l2=l2, scale=sigma, rho=l2 * l2 / (2.0 * sigma * sigma)\n",
        "            measure, l1=budget.l1, l2=l2, scale=sigma / 2, rho=l2 * l2 / (2.0 * sigma * sigma)\n",
        (
            "tests/core/test_synthetic_aim_query.py::test_every_round_goes_through_the_release_adapters_with_its_own_component",
        ),
    ),
    Mutant(
        "AIMW06",
        "The adaptive selection's sensitivity is the largest weight times a marginal's L1 (2k under replace), "
        "brute-forced through the statistic's encoding",
        "dpdesk/core/dp/statistics/synthetic.py",
        "    return synthesiser.aim.Budget(split.rho * (1.0 - 1e-9), split.l1, split.l2, n_columns)\n",
        "    return synthesiser.aim.Budget(split.rho * (1.0 - 1e-9), split.l2, split.l2, n_columns)\n",
        (
            "tests/core/test_synthetic_aim_query.py::test_the_selection_score_moves_by_at_most_its_stated_sensitivity_through_the_encoding",
        ),
    ),
    Mutant(
        "SPW01",
        "A Spark source whose address carries a password is refused before anything is read, named or charged",
        "dpdesk/core/release/engines/spark/engine.py",
        "        refuse_password(self.source)  # before anything is read, named or charged\n",
        "        pass  # before anything is read, named or charged\n",
        (
            "tests/cli/test_address_password.py::test_the_command_line_refuses_it_with_exit_2_and_keeps_nothing",
        ),
    ),
    Mutant(
        "CTH01",
        "A cluster table's kept identity is used in a team home only under the team secret it was keyed with",
        "dpdesk/core/ledger/contents.py",
        '    if hint is None or hint.get("secret") != secret_tag(secret):\n',
        "    if hint is None:\n",
        (
            "tests/core/test_identity.py::test_a_cluster_tables_kept_identity_is_used_only_under_the_secret_it_was_keyed_with",
        ),
    ),
    Mutant(
        "CTH02",
        "A cluster table's release attempt in a team home leaves the hint budget and declare-new --data table:NAME follow",
        "dpdesk/core/release/steps.py",
        "            remember_cluster_table(home, data_path, table.sha256, table.identity_secret if in_team else None)\n",
        "            remember_cluster_table(home, data_path, table.sha256) if not in_team else None\n",
        (
            "tests/spark/test_spark_team.py::test_a_cluster_tables_budget_is_found_in_a_team_home_after_its_release",
        ),
    ),
    Mutant(
        "CTH03",
        "A team officer's declare-new --data table:NAME reads the identity the refused release kept (no Spark)",
        "dpdesk/services/common.py",
        "        return resolve(self.home, self.data, sha256=key, progress=progress, cluster_table=hinted)\n",
        "        return resolve(self.home, self.data, sha256=key, progress=progress, cluster_table=False)\n",
        (
            "tests/spark/test_spark_team.py::test_a_team_officer_declares_a_cluster_near_copy_new_with_its_table_name",
        ),
    ),
    Mutant(
        "CTH05",
        "A cluster table whose history is in the home's own ledger (not imported) is refused in the team, not a second budget",
        "dpdesk/core/release/steps.py",
        "        local = unimported_dataset(home, own) if own is not None else None\n",
        "        local = None\n",
        (
            "tests/spark/test_spark_team.py::test_a_cluster_table_whose_history_is_still_in_the_homes_own_ledger_is_refused_in_the_team",
        ),
    ),
    Mutant(
        "SDE01",
        "With a Spark Connect server elsewhere, Open Spark table refuses a path of this computer (the server reads its own files)",
        "dpdesk/gui/views/spark_dialog.py",
        "            if not self._engine_here():\n",
        "            if False:\n",
        (
            "tests/gui/test_spark_open_app.py::test_with_a_server_elsewhere_a_path_of_this_computer_is_refused_and_an_address_is_not",
        ),
    ),
    Mutant(
        "TSK01",
        "A wide table whose team sketches pass 1 MiB is kept with its content sketch alone, never with none",
        "dpdesk/core/identity/recognition.py",
        '    if len(text.encode("utf-8")) > MAX_SKETCH_BYTES:\n',
        "    if False:\n",
        (
            "tests/core/test_identity.py::test_a_tables_team_sketches_always_fit_the_teams_limit_and_keep_what_fits",
        ),
    ),
    Mutant(
        "TSK04",
        "Past the thinnest column sketches, a wide table's projections' keys are kept in a team (an exact copy with a column dropped)",
        "dpdesk/core/identity/recognition.py",
        "        text = json.dumps(_team_sketch(ident.key, ident.sketch, _thinned(ident.columns, 0)))\n",
        "        text = json.dumps(_team_sketch(ident.key, ident.sketch, None))\n",
        (
            "tests/core/test_identity.py::test_a_tables_team_sketches_always_fit_the_teams_limit_and_keep_what_fits",
        ),
    ),
    Mutant(
        "TSK02",
        "A wide table's column sketches are kept in a team thinned to fit, not dropped: a copy with a column dropped is found",
        "dpdesk/core/identity/recognition.py",
        "        text = json.dumps(_team_sketch(ident.key, ident.sketch, _thinned(ident.columns, m)))\n",
        "        text = json.dumps(_team_sketch(ident.key, ident.sketch, None))\n",
        (
            "tests/team/test_team_near_copy.py::test_a_wide_tables_copy_with_a_column_dropped_is_refused_in_the_team_as_at_home",
        ),
    ),
    Mutant(
        "TSK03",
        "A wide table's thinned projection sketches (not their keys alone) find a copy with a column dropped and rows left out",
        "dpdesk/core/identity/recognition.py",
        '    while ident.columns is not None and len(text.encode("utf-8")) > MAX_SKETCH_BYTES and m > _THINNEST:\n',
        '    while ident.columns is not None and len(text.encode("utf-8")) > MAX_SKETCH_BYTES and m > 1 << 20:\n',
        (
            "tests/team/test_team_near_copy.py::test_a_wide_tables_copy_with_a_column_dropped_is_refused_in_the_team_as_at_home",
        ),
    ),
    Mutant(
        "SPW03",
        "A password written raw with a slash (an AWS secret key) is still found in a Spark address, not taken for a host",
        "dpdesk/core/release/engines/spark/session.py",
        '    if ":" not in user_part and _HOST.fullmatch(host) is not None:\n',
        '    if ":" not in user_part:\n',
        (
            "tests/cli/test_address_password.py::test_a_secret_written_raw_with_a_slash_or_an_at_sign_is_still_found",
        ),
    ),
    Mutant(
        "SPW04",
        "A Spark address's user part runs to its authority's last '@': a password after a user name holding '@' is found",
        "dpdesk/core/release/engines/spark/session.py",
        '    user_part, _at, host = head.rpartition("@")\n',
        '    user_part, _at, host = head.partition("@")\n',
        (
            "tests/cli/test_address_password.py::test_a_user_name_with_an_at_sign_and_an_ipv6_host_are_read_as_written",
        ),
    ),
    Mutant(
        "SPW05",
        "An IPv6 host's colons in a Spark address are not taken for a password (no false refusal)",
        "dpdesk/core/release/engines/spark/session.py",
        '_HOST = re.compile(r"(\\[[^\\]/@]*\\]|[^:\\[\\]/@]*)(:[0-9]+)?")\n',
        '_HOST = re.compile(r"([^:\\[\\]/@]*)(:[0-9]+)?")\n',
        (
            "tests/cli/test_address_password.py::test_a_user_name_with_an_at_sign_and_an_ipv6_host_are_read_as_written",
        ),
    ),
    Mutant(
        "CTH04",
        "A cluster table's hint left by a release in a team never overwrites the home's own: back on its own ledger, "
        "the home still finds the table's dataset and what it spent",
        "dpdesk/core/ledger/contents.py",
        '    return _folder(home) / ("cluster-team" if team else "cluster") / f"{name}.json"\n',
        '    return _folder(home) / "cluster" / f"{name}.json"\n',
        (
            "tests/spark/test_spark_team.py::test_a_home_back_on_its_own_ledger_still_finds_its_cluster_tables_budget",
        ),
    ),
    Mutant(
        "AIMW07",
        "An adaptive release's final fit runs once per process, however many times its table is drawn",
        "dpdesk/core/dp/synthetic/aim.py",
        "            return kept\n",
        "            pass\n",
        (
            "tests/core/test_synthetic_aim.py::test_a_release_is_fitted_once_per_process_and_draws_the_same_table",
        ),
    ),
    Mutant(
        "PGM03",
        "The junction tree's elimination (bit loops) is its rule read plainly: fewest fill-in edges, then fewest cells",
        "dpdesk/core/dp/synthetic/pgm.py",
        "            cells *= sizes[a]\n",
        "            cells += sizes[a]\n",
        ("tests/core/test_synthetic_pgm.py::test_the_elimination_is_the_rule_read_plainly",),
    ),
    Mutant(
        "PGM04",
        "The elimination keeps a column's rank only while its neighbours and their edges are unchanged",
        "dpdesk/core/dp/synthetic/pgm.py",
        "            if one & nb or (grown and (adj[u] & grown).bit_count() >= 2):\n",
        "            if one & nb:\n",
        ("tests/core/test_synthetic_pgm.py::test_the_elimination_is_the_rule_read_plainly",),
    ),
    Mutant(
        "PGM05",
        "The trees counted at once (numpy) eliminate by fewest fill-in edges first, then fewest cells",
        "dpdesk/core/dp/synthetic/pgm.py",
        "        fewest = np.where(twice_fill == twice_fill.min(axis=1, keepdims=True), cells, top)\n",
        "        fewest = np.where(twice_fill < top, cells, top)\n",
        ("tests/core/test_synthetic_aim.py::test_many_trees_counted_at_once_are_each_counted_by_the_rule",),
    ),
    Mutant(
        "PGM06",
        "The trees counted at once (numpy) sum only the cliques no earlier clique holds",
        "dpdesk/core/dp/synthetic/pgm.py",
        "        total += np.where(held, 0, cells[rows, v])\n",
        "        total += cells[rows, v]\n",
        ("tests/core/test_synthetic_aim.py::test_many_trees_counted_at_once_are_each_counted_by_the_rule",),
    ),
    Mutant(
        "AIM09",
        "Every candidate of a round whose graph another shares gets that graph's answer",
        "dpdesk/core/dp/synthetic/aim.py",
        "        for i in where:\n",
        "        for i in where[:1]:\n",
        (
            "tests/core/test_synthetic_aim.py::test_a_round_of_candidates_is_decided_as_one_by_one",
            "tests/core/test_synthetic_aim.py::test_the_size_check_decides_as_the_rule_read_plainly",
        ),
    ),
    Mutant(
        "CTH06",
        "A look at a cluster table's team budget that cannot be answered without Spark names the check that answers it",
        "dpdesk/core/identity/recognition.py",
        (
            '                "team\'s secret; nothing was charged or revealed. Check a release of it from this home first "\n'
            '                "(dpdesk release PLAN --data {path} --engine spark --check): Spark computes its identity with the "\n'
            '                "team\'s secret, and nothing is charged"\n'
        ),
        '                "team\'s secret; nothing was charged or revealed"\n',
        (
            "tests/spark/test_spark_team.py::test_a_look_without_the_teams_identity_names_a_check_that_computes_it",
        ),
    ),
    Mutant(
        "AIM18",
        "A column's one-way measurements are combined whatever their recorded scale (no overflow into nan)",
        "dpdesk/core/dp/statistics/synthetic.py",
        "        weights = np.array([(smallest / s) ** 2 for s, _ in measured])\n",
        "        weights = np.array([1.0 / (s * s) for s, _ in measured])\n",
        (
            "tests/core/test_synthetic_aim_query.py::test_a_columns_measurements_are_combined_whatever_their_scale",
        ),
    ),
    Mutant(
        "AIM10",
        "One-way marginals their own released counts say are mostly noise are measured again",
        "dpdesk/core/dp/synthetic/aim.py",
        "    if not noise > ONE_WAY_NOISE:\n",
        "    if True:\n",
        (
            "tests/core/test_synthetic_aim.py::test_one_way_marginals_mostly_noise_are_measured_again_within_half_of_rho",
            "tests/core/test_synthetic_aim.py::test_one_way_marginals_are_measured_again_only_when_their_released_counts_say_so",
        ),
    ),
    Mutant(
        "AIM11",
        "All one-way measurements of an adaptive synthesis together spend at most half of its rho",
        "dpdesk/core/dp/synthetic/aim.py",
        "    extra = min(wanted, ONE_WAY_MAX_SHARE * budget.rho - released.spent())\n",
        "    extra = wanted\n",
        (
            "tests/core/test_synthetic_aim.py::test_one_way_marginals_mostly_noise_are_measured_again_within_half_of_rho",
            "tests/core/test_synthetic_aim.py::test_one_way_marginals_are_measured_again_only_when_their_released_counts_say_so",
        ),
    ),
    Mutant(
        "AIM12",
        "After a second one-way measurement the adaptive rounds plan on what remains",
        "dpdesk/core/dp/synthetic/aim.py",
        "        sigma, eps = budget.sigma(rest), budget.select_epsilon(rest)\n",
        "        pass\n",
        (
            "tests/core/test_synthetic_aim.py::test_one_way_marginals_mostly_noise_are_measured_again_within_half_of_rho",
        ),
    ),
    Mutant(
        "AIM13",
        "A second one-way measurement brings the one-way marginals' noise to its target, no further",
        "dpdesk/core/dp/synthetic/aim.py",
        "    target = sigma * ONE_WAY_NOISE / noise\n",
        "    target = sigma * ONE_WAY_NOISE / noise / 2.0\n",
        (
            "tests/core/test_synthetic_aim.py::test_one_way_marginals_mostly_noise_are_measured_again_within_half_of_rho",
        ),
    ),
    Mutant(
        "AIM14",
        "Whether the one-way marginals are measured again is decided by the rows their released counts estimate",
        "dpdesk/core/dp/synthetic/aim.py",
        "    n_hat = estimate_total(released.observations())\n",
        "    n_hat = 1000.0\n",
        (
            "tests/core/test_synthetic_aim.py::test_one_way_marginals_are_measured_again_only_when_their_released_counts_say_so",
        ),
    ),
    Mutant(
        "AIM15",
        "A column measured more than once shows its measurements combined beside the synthetic table's counts",
        "dpdesk/core/dp/statistics/synthetic.py",
        "        if len(measured) == 1:\n",
        "        if True:\n",
        (
            "tests/core/test_synthetic_aim_query.py::test_release_keeps_every_round_and_the_table_regenerates_from_the_ledger",
        ),
    ),
    Mutant(
        "AIM16",
        "The report says when the one-way marginals were measured twice",
        "dpdesk/core/publish/synthetic_report_aim.py",
        "            if again\n",
        "            if False\n",
        (
            "tests/core/test_synthetic_aim_query.py::test_release_keeps_every_round_and_the_table_regenerates_from_the_ledger",
        ),
    ),
    Mutant(
        "AIM17",
        "A carried adaptive table without its rounds is re-costed for a second one-way measurement (at most half of "
        "rho), not at the design's split",
        "dpdesk/core/ledger/recost.py",
        "    share = max(aim.ONE_WAY_MAX_SHARE * total, one_b)\n",
        "    share = one_b\n",
        (
            "tests/core/test_synthetic_aim_query.py::test_a_carried_release_without_its_rounds_is_costed_for_a_second_one_way_measurement",
        ),
    ),
    Mutant(
        "AIM05",
        "The adaptive rounds' size check stops counting only once past the limit (a tree of exactly the limit fits)",
        "dpdesk/core/dp/synthetic/pgm.py",
        "        if total > limit:\n",
        "        if total >= limit:\n",
        (
            "tests/core/test_synthetic_aim.py::test_the_size_check_decides_as_the_rule_read_plainly",
            "tests/core/test_synthetic_aim.py::test_the_count_stops_only_past_the_limit",
        ),
    ),
    Mutant(
        "AIM06",
        "A count the size check stopped early never decides a larger limit",
        "dpdesk/core/dp/synthetic/aim.py",
        "    if known is None or not (known[1] or known[0] > limit):\n",
        "    if known is None:\n",
        ("tests/core/test_synthetic_aim.py::test_the_size_check_decides_as_the_rule_read_plainly",),
    ),
    Mutant(
        "AIM07",
        "The size check's kept counts belong to their table's sizes",
        "dpdesk/core/dp/synthetic/aim.py",
        "    key = (sizes, tuple(adj))\n",
        "    key = ((), tuple(adj))\n",
        ("tests/core/test_synthetic_aim.py::test_the_size_check_decides_as_the_rule_read_plainly",),
    ),
    Mutant(
        "AIM08",
        "The size check refuses a clique alone larger than the limit, and only those",
        "dpdesk/core/dp/synthetic/aim.py",
        "    if _cells(sizes, clique) > limit and 0 not in sizes:\n",
        "    if _cells(sizes, clique) >= limit and 0 not in sizes:\n",
        (
            "tests/core/test_synthetic_aim.py::test_the_size_check_decides_as_the_rule_read_plainly",
            "tests/core/test_synthetic_aim.py::test_the_rounds_choose_as_with_the_rule_read_plainly",
        ),
    ),
    Mutant(
        "SPW02",
        "The password in a refused address is hidden in the message (the user name and host stay, to find it)",
        "dpdesk/core/release/engines/spark/session.py",
        "    return f\"{scheme}://{user}:***@{rest.rsplit('@', 1)[1]}\"\n",
        "    return location\n",
        (
            "tests/cli/test_address_password.py::test_a_password_in_the_address_is_hidden_and_a_user_name_alone_is_not_a_secret",
            "tests/cli/test_address_password.py::test_the_command_line_refuses_it_with_exit_2_and_keeps_nothing",
        ),
    ),
)
GUARD = '''"""Written by tools/mutation/mutants.py: refuse to run unless the mutated copy is what gets imported."""
import importlib
import os
from pathlib import Path

import pytest


def pytest_configure(config):
    root = Path(os.environ["MUTANT_ROOT"]).resolve()
    names = ["dpdesk"] + ([os.environ["MUTANT_MODULE"]] if os.environ.get("MUTANT_MODULE") else [])
    for name in names:
        mod = importlib.import_module(name)
        where = Path(mod.__file__).resolve()
        if root not in where.parents:
            raise pytest.UsageError(f"mutant guard: {name} imported from {where}, not from {root}")
    marker = os.environ.get("MUTANT_MARKER")
    if os.environ.get("MUTANT_FILE"):
        if marker and marker not in (root / os.environ["MUTANT_FILE"]).read_text(encoding="utf-8"):
            raise pytest.UsageError("mutant guard: the copy's file does not hold the mutation")
        return
    if marker and marker not in Path(mod.__file__).read_text(encoding="utf-8"):
        raise pytest.UsageError("mutant guard: the imported module does not hold the mutation")
'''


# ------------------------------------------------------------------------------------------------ copies


def check_snippets(root: Path = ROOT) -> list[str]:
    """Problems with the table against the source under ``root`` (empty: every snippet occurs exactly once)."""
    problems = []
    ids = [m.id for m in MUTANTS]
    if len(ids) != len(set(ids)):
        problems.append("duplicate mutant ids")
    for m in MUTANTS:
        path = root / m.file
        if not path.exists():
            problems.append(f"{m.id}: {m.file} does not exist")
            continue
        text = path.read_text(encoding="utf-8")
        n = text.count(m.old)
        if n != 1:
            problems.append(f"{m.id}: the snippet occurs {n} times in {m.file} (must be exactly once)")
        if m.old == m.new:
            problems.append(f"{m.id}: the replacement equals the snippet")
        if not m.file.endswith(".py"):
            continue  # a shell script or data file (build_scripts/linux/): its tests are the only check
        try:
            compile(text.replace(m.old, m.new, 1), m.file, "exec")
        except SyntaxError as exc:
            problems.append(f"{m.id}: the mutated {m.file} does not compile: {exc}")
    return problems


def make_base(dest: Path, worktree: bool) -> tuple[str, str]:
    """Copy the repository into ``dest``; returns (the commit copied, a description of what was copied)."""
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if worktree:
        skip = {
            ".git",
            ".venv",
            "venv",
            "build",
            "dist",
            ".mypy_cache",
            ".ruff_cache",
            ".pytest_cache",
            ".hypothesis",
        }

        def ignore(folder: str, names: list[str]) -> set[str]:
            out = {n for n in names if n in skip or n == "__pycache__"}
            if Path(folder).resolve() == (ROOT / "benchmarks").resolve():
                out.add("out")
            return out

        shutil.copytree(ROOT, dest, ignore=ignore)
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True, check=True
        ).stdout.strip()
        return head, f"working tree at {head[:12]}" + (" (with uncommitted changes)" if dirty else "")
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "HEAD"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    added = [rel for rel in OVERLAY if (ROOT / rel).exists()]
    for rel in added:
        shutil.copy2(ROOT / rel, dest / rel)
    return head, "git archive HEAD" + "".join(f" + {rel}" for rel in added)


def env_for(repo: Path, m: Mutant | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "DPDESK_HOME")}
    env.update(
        PYTHONPATH=str(repo), QT_QPA_PLATFORM="offscreen", MUTANT_ROOT=str(repo), PYTHONDONTWRITEBYTECODE="1"
    )
    if m is not None:
        if m.file.endswith(".py"):
            env["MUTANT_MODULE"] = m.module
        else:  # a build script or data file: its tests read it from the copy (MUTANT_ROOT)
            env["MUTANT_FILE"] = m.file
        marker = next((ln.strip() for ln in m.new.splitlines() if ln.strip() and ln not in m.old), "")
        env["MUTANT_MARKER"] = marker
    return env


@dataclass
class Result:
    mutant: Mutant | None
    status: str  # "killed", "survived", "error", "passed", "failed"
    first_failure: str
    seconds: float
    detail: str = ""
    failures: tuple[str, ...] = ()


_FAIL = re.compile(r"^(FAILED|ERROR) (\S+)", re.MULTILINE)


def run_tests(
    base: Path, m: Mutant | None, args: tuple[str, ...], *, keep: bool = False, stop_first: bool = True
) -> Result:
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix=f"dpdesk-mutant-{m.id if m else 'baseline'}-"))
    repo = work / "repo"
    try:
        shutil.copytree(base, repo)
        (repo / "_mutant_guard.py").write_text(GUARD, encoding="utf-8")
        if m is not None:
            target = repo / m.file
            text = target.read_text(encoding="utf-8")
            if text.count(m.old) != 1:
                return Result(
                    m, "error", "", time.perf_counter() - t0, f"snippet occurs {text.count(m.old)} times"
                )
            mutated = text.replace(m.old, m.new, 1)
            if m.file.endswith(".py"):
                compile(mutated, str(target), "exec")
            target.write_text(mutated, encoding="utf-8")
        env = env_for(repo, m)
        probe = "import dpdesk, importlib, sys; print(dpdesk.__file__); " + (
            f"print(importlib.import_module({m.module!r}).__file__)" if m and m.file.endswith(".py") else ""
        )
        p = subprocess.run(
            [PYTHON, "-c", probe], cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        if p.returncode != 0:
            return Result(
                m, "error", "", time.perf_counter() - t0, "import failed: " + p.stderr.strip()[-400:]
            )
        for line in p.stdout.split():
            if repo.resolve() not in Path(line).resolve().parents:
                return Result(m, "error", "", time.perf_counter() - t0, f"imported from {line}, not the copy")
        cmd = [PYTHON, *PYTEST, "--basetemp", str(work / "basetemp"), *args]
        if not stop_first:
            cmd.remove("-x")
        try:
            r = subprocess.run(
                cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired:
            return Result(m, "error", "", time.perf_counter() - t0, f"timed out after {RUN_TIMEOUT} s")
        out = r.stdout + r.stderr
        fails = tuple(dict.fromkeys(name for _, name in _FAIL.findall(out)))
        first = fails[0] if fails else ""
        tail = out.strip().splitlines()[-1] if out.strip() else ""
        secs = time.perf_counter() - t0
        if m is None:
            return Result(
                None, "passed" if r.returncode == 0 else "failed", first, secs, tail if r.returncode else ""
            )
        if r.returncode == 1:
            return Result(m, "killed", first or "?", secs, tail, fails)
        if r.returncode == 0:
            return Result(m, "survived", "", secs, tail)
        return Result(
            m,
            "error",
            first,
            secs,
            f"pytest exit {r.returncode}: " + "\n".join(out.strip().splitlines()[-5:]),
        )
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------------------------------------ report


def _func(node_id: str) -> str:
    """A node id without its parameters."""
    return node_id.split("[")[0]


def _md(s: str) -> str:
    return s.replace("|", "\\|")


def write_report(
    path: Path,
    results: list[Result],
    alone: list[Result],
    baseline: Result | None,
    head: str,
    source: str,
    command: str,
    total: float,
) -> None:
    killed = sum(r.status == "killed" for r in results)
    by_existing = sum(r.status == "killed" and not r.first_failure.startswith(GAPS) for r in results)
    survived = [r for r in results if r.status == "survived"]
    errors = [r for r in results if r.status == "error"]
    lines = [
        "# Mutation check of the trust tests",
        "",
        "Generated by `tools/mutation/mutants.py`; do not edit by hand. Each mutant breaks one promise of",
        "SECURITY.md in a copy of the repository; its tests (existing tests first, then any test added in",
        "`tests/trust/test_release_invariants.py` for a gap the existing ones left) must fail on it.",
        "",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- commit: {head}",
        f"- source copied: {source}",
        f"- command: `{command}`",
        f"- python: {sys.version.split()[0]} ({PYTHON})",
        "- baseline (all tests below on the unmutated copy): "
        + (f"{baseline.status} in {baseline.seconds:.0f} s" if baseline else "not run"),
        (
            f"- result: {killed} of {len(results)} mutants killed, {len(survived)} survived, {len(errors)} errors; "
            f"total run time {total / 60:.1f} min"
        ),
        f"- killed by the existing tests (first failing test not in `{GAPS}`): {by_existing}",
        "",
        "| mutant | promise broken | file | tests run | result | first failing test | time |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        m = r.mutant
        assert m is not None
        tests = "<br>".join(f"`{t}`" for t in m.tests)
        if m.gaps:
            tests += "<br>gap: " + "<br>".join(f"`{t.split('::')[-1]}`" for t in m.gaps)
        result = r.status if r.status != "error" else f"error: {r.detail}"
        first = f"`{r.first_failure}`" if r.first_failure else ""
        lines.append(
            f"| {m.id} | {_md(m.promise)} | `{m.file}` | {tests} | {_md(result)} | {first} | {r.seconds:.0f} s |"
        )
    if alone:
        lines += [
            "",
            "## The new tests alone",
            "",
            "Each mutant with gap tests, run against those tests only (without `-x`): every one must fail.",
            "",
            "| mutant | new tests | result | failing |",
            "|---|---|---|---|",
        ]
        for r in alone:
            m = r.mutant
            assert m is not None
            names = "<br>".join(f"`{t.split('::')[-1]}`" for t in m.gaps)
            failing = "<br>".join(
                f"`{t.split('::')[-1]}`" for t in dict.fromkeys(_func(f) for f in r.failures)
            )
            every = r.status == "killed" and {_func(f) for f in r.failures} >= set(m.gaps)
            result = (
                ("killed by each" if every else r.status) if r.status != "error" else f"error: {r.detail}"
            )
            lines.append(f"| {m.id} | {names} | {_md(result)} | {failing} |")
    rerun = (
        "Rerun: `python tools/mutation/mutants.py --jobs 2` from the repository root (dev venv); "
        "`--list` shows the mutants, `--only ID` runs one."
    )
    lines += ["", rerun, ""]
    path.write_text("\n".join(lines), encoding="utf-8")


# ------------------------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument(
        "--only", action="append", default=[], metavar="ID", help="run only this mutant (repeatable)"
    )
    ap.add_argument("--jobs", type=int, default=1, help="mutants run in parallel (default 1)")
    ap.add_argument("--no-gaps", action="store_true", help="run only the existing tests, not the gap tests")
    ap.add_argument("--no-baseline", action="store_true", help="skip the run on the unmutated copy")
    ap.add_argument(
        "--worktree", action="store_true", help="copy the working tree instead of git archive HEAD"
    )
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies")
    ap.add_argument(
        "--report",
        type=Path,
        default=None,
        help="where to write the table (default: tools/mutation/MUTANTS.md when every mutant runs)",
    )
    a = ap.parse_args(argv)

    if a.list:
        for m in MUTANTS:
            print(f"{m.id}  {m.file:28s} {m.promise}")
            for t in m.args():
                print(f"       {t}")
        return 0
    problems = check_snippets()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    chosen = [m for m in MUTANTS if not a.only or m.id in a.only]
    unknown = set(a.only) - {m.id for m in MUTANTS}
    if unknown:
        print(f"unknown mutant(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if a.no_gaps:
        chosen = [Mutant(m.id, m.promise, m.file, m.old, m.new, m.tests) for m in chosen]

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpdesk-mutants-base-") as tmp:
        base = Path(tmp) / "repo"
        head, source = make_base(base, a.worktree)
        print(f"source: {source} at {head}", flush=True)
        baseline = None
        if not a.no_baseline:
            union = tuple(dict.fromkeys(t for m in chosen for t in m.args()))
            baseline = run_tests(base, None, union, keep=a.keep, stop_first=False)
            print(f"baseline: {baseline.status} in {baseline.seconds:.0f} s {baseline.detail}", flush=True)
            if baseline.status != "passed":
                print(
                    f"the unmutated copy fails ({baseline.first_failure}): the check would be meaningless",
                    file=sys.stderr,
                )
                return 2
        results: dict[str, Result] = {}
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            futures = {pool.submit(run_tests, base, m, m.args(), keep=a.keep): m for m in chosen}
            for f in as_completed(futures):
                r = f.result()
                assert r.mutant is not None
                results[r.mutant.id] = r
                print(
                    f"{r.mutant.id}: {r.status:8s} {r.seconds:6.0f} s  {r.first_failure or r.detail}",
                    flush=True,
                )
        alone: list[Result] = []
        if not a.no_gaps:  # each gap test must kill its mutant on its own
            with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
                futs = [
                    pool.submit(run_tests, base, m, m.gaps, keep=a.keep, stop_first=False)
                    for m in chosen
                    if m.gaps
                ]
                for f in futs:
                    r = f.result()
                    assert r.mutant is not None
                    alone.append(r)
                    print(
                        f"{r.mutant.id} (new tests alone): {r.status:8s} {', '.join(r.failures)}", flush=True
                    )
    total = time.perf_counter() - t0
    ordered = [results[m.id] for m in chosen]
    killed = sum(r.status == "killed" for r in ordered)
    alone_ok = all(
        r.status == "killed" and r.mutant is not None and {_func(f) for f in r.failures} >= set(r.mutant.gaps)
        for r in alone
    )
    print(f"{killed}/{len(ordered)} killed in {total / 60:.1f} min")
    report = a.report or (ROOT / "tests" / "trust" / "MUTANTS.md" if not a.only and not a.no_gaps else None)
    if report is not None:
        command = "python tools/mutation/mutants.py " + " ".join(argv if argv is not None else sys.argv[1:])
        write_report(report, ordered, alone, baseline, head, source, command.strip(), total)
        print(f"wrote {report}")
    return 0 if killed == len(ordered) and alone_ok else 1


if __name__ == "__main__":
    sys.exit(main())
