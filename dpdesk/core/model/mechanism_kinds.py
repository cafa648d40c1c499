"""The registry of mechanisms: each one's plan word, label, whether it takes a delta, its calibrations, its formula.

Plan validation and the query form read this one table; the noise itself is drawn only in
:mod:`dpdesk.core.dp.mechanisms` (the OpenDP adapter) and the designs are computed in
:mod:`dpdesk.core.dp.queries`. Labels and formulas are functions so that they are translated when shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from dpdesk.i18n import _


class Mechanism(StrEnum):
    """The mechanisms a plan may name (the plan file keeps these words)."""

    LAPLACE = "laplace"
    GAUSSIAN = "gaussian"
    EXPONENTIAL = "exponential"
    MST = "mst"
    AIM = "aim"


class Calibration(StrEnum):
    """How the Gaussian mechanism's sigma is computed: the textbook formula, or the tighter analytic one."""

    CLASSIC = "classic"
    ANALYTIC = "analytic"


@dataclass(frozen=True)
class MechanismInfo:
    """What the plan and the form need to know about one mechanism."""

    name: Mechanism
    label: Callable[[], str]
    takes_delta: bool
    calibrations: tuple[Calibration, ...]
    formula: Callable[[], str]
    #: The label of each calibration in the form, in ``calibrations`` order.
    calibration_labels: tuple[Callable[[], str], ...] = ()
    #: Whether its delta may be left out (then 0: pure epsilon-DP parts); only the synthesiser's.
    delta_optional: bool = False


MECHANISMS: dict[Mechanism, MechanismInfo] = {
    Mechanism.LAPLACE: MechanismInfo(
        Mechanism.LAPLACE,
        lambda: _("Laplace"),
        False,
        (),
        lambda: _("b = sensitivity / epsilon"),
    ),
    Mechanism.GAUSSIAN: MechanismInfo(
        Mechanism.GAUSSIAN,
        lambda: _("Gaussian"),
        True,
        (Calibration.CLASSIC, Calibration.ANALYTIC),
        lambda: _(
            "classic: sigma = sqrt(2 ln(1.25/delta)) x sensitivity / epsilon. "
            "analytic: the smallest sigma that gives (epsilon, delta)."
        ),
        (lambda: _("classic (textbook, epsilon < 1)"), lambda: _("analytic (tighter, any epsilon)")),
    ),
    Mechanism.EXPONENTIAL: MechanismInfo(
        Mechanism.EXPONENTIAL,
        lambda: _("exponential mechanism"),
        False,
        (),
        lambda: _("P(r) proportional to exp(epsilon u(r) / (2 Du))"),
    ),
    Mechanism.MST: MechanismInfo(
        Mechanism.MST,
        lambda: _("MST synthesiser (noisy marginals)"),
        True,
        (),
        lambda: _(
            "one-way marginals, a spanning tree of two-way marginals chosen by the exponential mechanism, "
            "and those two-way marginals, measured with Gaussian noise (rho-zCDP, converted to (epsilon, delta)) "
            "or, with delta 0, Laplace noise"
        ),
        delta_optional=True,
    ),
    Mechanism.AIM: MechanismInfo(
        Mechanism.AIM,
        lambda: _("adaptive synthesiser (AIM: marginals chosen round by round)"),
        True,
        (),
        lambda: _(
            "one-way marginals, then rounds that each pick the marginal the current model gets most wrong "
            "(exponential mechanism) and measure it with Gaussian noise, refitting a graphical model; "
            "rho-zCDP in all, converted to (epsilon, delta): needs delta > 0"
        ),
    ),
}


def get_mechanism(name: str) -> MechanismInfo:
    """The registered mechanism of this plan word (KeyError if there is none)."""
    return MECHANISMS[Mechanism(name)]
