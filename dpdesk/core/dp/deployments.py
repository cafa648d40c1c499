"""Real deployments of differential privacy and their published budgets: a scale to place a plan's epsilon on.

Each entry is a budget its organisation published, with the unit of privacy it protects, the period it is
spent over and the document it comes from (``source_url``, ``source_title``); ``checked_at`` names the public
page the number was read on when this table was made. Only numbers that could be read in a public source
are here: the US Census Bureau's final production budget for the 2020 redistricting data, Google's COVID-19
Community Mobility Reports and Microsoft's telemetry were left out because their numbers could not be
checked (Census: only the April 2021 demonstration data's budget could).

These numbers are **not directly comparable** with each other or with a dpdesk plan: the units of privacy
differ (a person, a device, an account), so do the periods (one release, a day, a month), local DP (noise
added on each device) is weaker per epsilon than central DP, and several use delta or zCDP. The scale
shows orders of magnitude, nothing more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpdesk.core.common.shown import plain
from dpdesk.i18n import _, current_language

#: a per-release epsilon from which the app and the command line warn
HIGH_EPSILON = 5.0

DESFONTAINES = "https://desfontain.es/privacy/real-world-differential-privacy.html"


@dataclass(frozen=True)
class Deployment:
    """One published differential-privacy budget."""

    organisation: str
    name: str  # what was released (translated)
    short: str  # a label short enough for the scale (translated)
    epsilon: float
    delta: float  # 0 for pure epsilon-DP
    unit: str  # the unit of privacy, in words (translated)
    period: str  # what the budget covers in time (translated)
    per: str  # unit and period together, as the scale says them (translated)
    model: str  # "central" or "local"
    source_url: str
    source_title: str
    checked_at: str  # the public page the number was read on


def deployments() -> tuple[Deployment, ...]:
    """The deployments, in the current language, sorted by epsilon."""
    day = _("one day")
    user_day = _("one user")
    per_user_day = _("per user per day")
    items = (
        Deployment(
            "Apple",
            _("Apple: Health Type Usage (iOS, macOS)"),
            _("Apple, health types"),
            2.0,
            0.0,
            user_day,
            day,
            per_user_day,
            "local",
            "https://www.apple.com/privacy/docs/Differential_Privacy_Overview.pdf",
            "Apple, Differential Privacy Overview",
            DESFONTAINES,
        ),
        Deployment(
            "Apple",
            _("Apple: emoji suggestions (iOS, macOS)"),
            _("Apple, emoji"),
            4.0,
            0.0,
            user_day,
            day,
            per_user_day,
            "local",
            "https://www.apple.com/privacy/docs/Differential_Privacy_Overview.pdf",
            "Apple, Differential Privacy Overview",
            DESFONTAINES,
        ),
        Deployment(
            "Apple",
            _("Apple: QuickType new words (iOS, macOS)"),
            _("Apple, QuickType"),
            16.0,
            0.0,
            user_day,
            day,
            per_user_day,
            "local",
            "https://www.apple.com/privacy/docs/Differential_Privacy_Overview.pdf",
            "Apple, Differential Privacy Overview",
            DESFONTAINES,
        ),
        Deployment(
            "Google",
            _("Google: COVID-19 Search Trends symptoms dataset"),
            _("Google, symptom searches"),
            1.68,
            0.0,
            user_day,
            day,
            per_user_day,
            "central",
            "https://arxiv.org/abs/2009.01265",
            "Google COVID-19 Search Trends Symptoms Dataset: Anonymization Process Description (arXiv:2009.01265)",
            "http://arxiver.lazybrains.com/author/1143979",
        ),
        Deployment(
            "Google",
            _("Google: COVID-19 Vaccination Search Insights"),
            _("Google, vaccine searches"),
            2.19,
            1e-5,
            user_day,
            day,
            per_user_day,
            "central",
            "https://arxiv.org/abs/2107.01179",
            "Google COVID-19 Vaccination Search Insights: Anonymization Process Description (arXiv:2107.01179)",
            "http://arxiver.lazybrains.com/author/1143979",
        ),
        Deployment(
            "Google",
            _("Google: Environmental Insights Explorer mobility histograms"),
            _("Google, mobility (EIE)"),
            2.0,
            0.0,
            user_day,
            _("one week"),
            _("per user per week"),
            "central",
            "https://arxiv.org/abs/2407.03496",
            "Releasing Large-Scale Human Mobility Histograms with Differential Privacy (arXiv:2407.03496)",
            "https://www.sciencestack.ai/paper/2407.03496",
        ),
        Deployment(
            "US Census Bureau",
            _("US Census Bureau: 2010 demonstration data for the 2020 redistricting release (April 2021)"),
            _("US Census, demonstration"),
            12.2,
            0.0,
            _("one person"),
            _("the whole release"),
            _("per person, for the whole release"),
            "central",
            "https://dof.ca.gov/forecasting/demographics/2020-census-demographics/disclosure-avoidance-through-differential-privacy/",
            "California Department of Finance, Disclosure Avoidance through Differential Privacy",
            "https://dof.ca.gov/forecasting/demographics/2020-census-demographics/disclosure-avoidance-through-differential-privacy/",
        ),
        Deployment(
            "LinkedIn",
            _("LinkedIn: Audience Engagements API"),
            _("LinkedIn, audience API"),
            34.9,
            7e-9,
            _("one member"),
            _("one month"),
            _("per member per month"),
            "central",
            "https://arxiv.org/abs/2002.05839",
            "LinkedIn's Audience Engagements API: A Privacy Preserving Data Analytics System at Scale (arXiv:2002.05839)",
            "https://www.sciencestack.ai/paper/2002.05839",
        ),
    )
    return tuple(sorted(items, key=lambda d: (d.epsilon, d.name)))


def _fmt(eps: float) -> str:
    return plain(eps, 3)


def label(d: Deployment) -> str:
    """One line: name, epsilon (and delta), unit and period, and whether the noise is local."""
    eps = _("epsilon {e}").format(e=_fmt(d.epsilon))
    if d.delta:
        eps = _("epsilon {e}, delta {d}").format(e=_fmt(d.epsilon), d=plain(d.delta, 3))
    where = _("local DP, on each device") if d.model == "local" else _("central DP")
    return _("{name}: {eps} {per} ({where})").format(name=d.name, eps=eps, per=d.per, where=where)


def neighbours(epsilon: float) -> tuple[Deployment | None, Deployment | None]:
    """The deployment with the largest epsilon at most ``epsilon`` and the one with the smallest above it."""
    below: Deployment | None = None
    above: Deployment | None = None
    for d in deployments():
        if d.epsilon <= epsilon:
            below = d
        elif above is None:
            above = d
    return below, above


def describe(epsilon: float) -> str:
    """A plain-words placement of a plan's total epsilon on the scale of real deployments (for the CLI)."""
    if not math.isfinite(epsilon) or epsilon < 0:
        raise ValueError("epsilon must be a finite number >= 0")
    e = _fmt(epsilon)
    below, above = neighbours(epsilon)
    if below is None and above is not None:
        first = _(
            "Your plan's total epsilon {e} is below every published deployment listed here; the smallest is {a}."
        ).format(e=e, a=label(above))
    elif above is None and below is not None:
        first = _(
            "Your plan's total epsilon {e} is at or above every published deployment listed here; the largest is {b}."
        ).format(e=e, b=label(below))
    else:
        assert below is not None and above is not None
        first = _("Your plan's total epsilon {e} is at or above {b}, and below {a}.").format(
            e=e, b=label(below), a=label(above)
        )
    parts = [first]
    if epsilon >= HIGH_EPSILON:
        parts.append(
            _(
                "An epsilon of {h} or more lets a release change the probability of an outcome by a factor of "
                "e^{e} = {f}: that is a weak promise for one release of a sensitive table."
            ).format(h=_fmt(HIGH_EPSILON), e=e, f=plain(math.exp(min(epsilon, 700.0)), 3, "up"))
        )
    parts.append(
        _(
            "These are not directly comparable: the units of privacy (a person, a device, a member) and the "
            "periods (one release, a day, a month) differ, and local DP adds noise on each device."
        )
    )
    return ("" if current_language() == "zh_CN" else " ").join(parts)  # no spaces between Chinese sentences
