"""PDF reports with reportlab: a release report and a dataset's budget statement.

Everything printed comes from public material only: the plan, the released rows (exactly the
strings of release.csv), each query's trace (sensitivity, mechanism, formula) and ledger entries.
No raw statistic, true row count or other value read off the data ever reaches this module.

Text runs in Chinese (titles, column names, category labels) are set in the bundled Droid Sans
Fallback (TrueType outlines, which reportlab needs); everything else in DejaVu Sans (the fonts, styles and
tables are in ``dpdesk.core.publish.pdftext``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from dpdesk.core.common import shown as numfmt
from dpdesk.core.common.text import shown
from dpdesk.core.ledger.entries import CorrectionEntry, Entry, SettingsEntry, SimulateEntry, SpendEntry
from dpdesk.core.publish import words
from dpdesk.core.publish.pdftext import (
    _LATIN_CMAP,
    LATIN,
    _p,
    _register_fonts,
    _styles,
    _table,
    markup,
    math_markup,
    unbroken,
)
from dpdesk.core.publish.synthetic_report import synthetic_section
from dpdesk.i18n import _, ngettext

if TYPE_CHECKING:
    from dpdesk.core.dp.accuracy_base import Accuracy
    from dpdesk.core.ledger.budget import BudgetReport
    from dpdesk.core.model.spec import Plan, QuerySpec


def _build(path: Path | IO[bytes], story: list[Any], title: str) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.units import mm
    from reportlab.platypus import SimpleDocTemplate

    from dpdesk import __version__ as version

    def footer(canvas: Any, doc: Any) -> None:
        canvas.saveState()
        canvas.setFont(LATIN, 7)
        canvas.setFillGray(0.4)
        canvas.drawString(18 * mm, 10 * mm, f"dpdesk {version}")  # the version that wrote the report
        canvas.drawRightString(A4[0] - 18 * mm, 10 * mm, _("page {n}").format(n=doc.page))
        canvas.restoreState()

    from reportlab import rl_config

    # binary (Flate only) page streams: ASCII85 on top made the file a quarter larger and took seconds on a
    # large plan's report
    rl_config.useA85 = 0
    doc = SimpleDocTemplate(
        path if not isinstance(path, Path) else str(path),
        pagesize=A4,
        leftMargin=18 * mm,
        rightMargin=18 * mm,
        topMargin=16 * mm,
        bottomMargin=18 * mm,
        title=shown(title),
        author="dpdesk",
        subject=_("Differentially private release"),
    )
    doc.build(story, onFirstPage=footer, onLaterPages=footer)


def guarantee_paragraphs(epsilon: float, delta: float, relation: str, k: int) -> list[str]:
    """The methods appendix in plain words."""
    who = _("one person's rows (at most {k})").format(k=k) if k > 1 else _("one row")
    if relation == "replace":
        nb = _("two tables that differ only in {who}, replaced by other values").format(who=who)
    else:
        nb = _("two tables that differ only by {who} added or removed").format(who=who)
    out = [
        _(
            "Differential privacy is a promise about the process that produced these numbers, not about the numbers "
            "themselves. For {nb}, every possible published result is at most e^ε times as likely with one table as "
            "with the other."
        ).format(nb=nb),
        _(
            "At this release's total of ε = {e}, that factor is e^{e} = {f}: whatever an observer believed about any "
            "one person before seeing the results, the results can shift the odds of that belief by at most this "
            "factor."
        ).format(e=numfmt.epsilon(epsilon, "up"), f=numfmt.plain(math.exp(min(epsilon, 700)), 4, "up")),
    ]
    if delta > 0:
        out.append(
            _(
                "With δ = {d}, the promise may fail with a probability of at most {d}. It should be far smaller "
                "than one over the number of people in the table."
            ).format(d=numfmt.delta(delta, "up"))
        )
    out.append(
        _(
            "Noise was drawn by OpenDP's samplers, which work in exact arithmetic from a cryptographically "
            "secure source, so the published values carry no floating-point trace of the true values. Bounds "
            "and category lists were declared by the data owner and were not read off the data."
        )
    )
    out.append(copies_paragraph())
    out.append(
        _(
            "What the promise does not cover: the data owner, who sees the raw table; tables that dpdesk does not "
            "recognise as this dataset (kept in another dpdesk home, declared a new dataset, or changed beyond "
            "recognition), each with a budget of its own; and information published elsewhere."
        )
    )
    return out


def copies_paragraph() -> str:
    """What the budget covers besides this very file, from the rules the resolution of a data file follows
    (:data:`dpdesk.core.ledger.contents.COPY_RULES`: one source for the behaviour and this sentence)."""
    from dpdesk.core.ledger.contents import COPY_RULES

    parts = [
        _(
            "A copy of this table saved in another form (other line ends or quoting, a byte-order mark, another "
            "file format, the rows in another order) is recognised in this dpdesk home by its rows and charged to "
            "this dataset's ledger: it has no budget of its own."
        )
        if COPY_RULES.same_rows_share_ledger
        else _("A copy of this table saved in another form is a new dataset with a budget of its own.")
    ]
    if COPY_RULES.near_copies_refused:
        parts.append(
            _(
                "A table that holds most of this table's rows is refused until it is linked to this dataset's "
                "ledger or declared a new dataset, which the ledger records."
            )
        )
    return " ".join(parts)


def privacy_unit_sentence(unit: dict[str, Any]) -> str:
    """The plan's unit of privacy in words: the neighbouring relation, the rows per person and the id column."""
    k = int(unit.get("max_rows_per_person", 1))
    if unit.get("neighbouring") == "replace":
        rel = ngettext(
            "one person's row, replaced by a row with other values",
            "one person's rows (at most {k}), replaced by as many rows with other values",
            k,
        )
    else:
        rel = ngettext(
            "one person's row, added or removed", "one person's rows (at most {k}), added or removed", k
        )
    idc = unit.get("id_column")
    if idc:
        who = ngettext(
            "id column {col}: dpdesk keeps one row per id, chosen by a keyed hash of the id and the row, and leaves "
            "out rows with an empty id",
            "id column {col}: dpdesk keeps at most {k} rows per id, chosen by a keyed hash of the id and each row, "
            "and leaves out rows with an empty id",
            k,
        )
    else:
        who = ngettext(
            "no id column: one row per person is the data owner's declaration",
            "no id column: at most {k} rows per person is the data owner's declaration",
            k,
        )
    return _("{relation}; {who}").format(relation=rel.format(k=k), who=who.format(col=idc, k=k))


def _eps_delta(epsilon: float, delta: float, rounding: numfmt.Rounding = "nearest") -> str:
    """ "ε 0.9, δ 0.0000001": an (ε, δ) pair as a reader reads it (plain, ε four and δ three significant digits;
    spent rounded up, left rounded down, see :mod:`dpdesk.core.common.shown`)."""
    return f"ε {numfmt.epsilon(epsilon, rounding)}, δ {numfmt.delta(delta, rounding)}"


def _maybe_number(x: Any, fmt: Any) -> str:
    """A number of a recorded entry in the report's style; anything else (a damaged entry) as it is."""
    return fmt(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else shown(x)


def _num(x: float) -> str:
    """A public plan number as the plan writes it (5000, not 5000.0)."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.15g}"


def column_assumptions(plan: Plan, spec: QuerySpec) -> list[str]:
    """What a query's statistic assumes of each column it reads, from the plan alone: the public bounds (values
    outside are clamped) or categories, and the missing-value rule (the plan's values that decide the behaviour:
    :mod:`dpdesk.core.dp.aggregates_base` clamps to these bounds, the loader treats an undeclared category as missing,
    :func:`dpdesk.core.dp.queries_base.rows_can_drop` drops by the same missing rule)."""
    from dpdesk.core.dp import statistics
    from dpdesk.core.dp.statistics.base import ParamKind

    names: list[str] = [n for n in (spec.column, spec.group_by) if n is not None]
    names.extend(c.column for c in spec.where if c.column not in names)
    for param in statistics.get(spec.statistic).params:
        if param.kind is ParamKind.COLUMN_LIST:
            names.extend(n for n in getattr(spec, param.key, ()) if n not in names)
    out: list[str] = []
    for name in names:
        col = plan.columns[name]
        if col.bounds is not None:
            lo, hi = _num(col.bounds[0]), _num(col.bounds[1])
            public = _(
                "public bounds [{lo}, {hi}] from the plan, not from the data; values outside were clamped to them"
            ).format(lo=lo, hi=hi)
        else:
            cats = col.categories or ()
            listed = ", ".join(cats[:REPORT_CATEGORIES])
            if len(cats) > REPORT_CATEGORIES:  # a plan may declare 10,000, and 1,000 queries may read them
                listed = _("{first} and {n} more (plan.json lists them all)").format(
                    first=listed, n=f"{len(cats) - REPORT_CATEGORIES:,}"
                )
            public = _("public categories {cats} from the plan, not from the data").format(cats=listed)
        what = (
            _("empty, or outside the categories")
            if col.categories is not None
            else _("empty, unparsable or NaN")
        )
        if col.missing.drops:
            missing = _("missing values ({what}): the row is left out").format(what=what)
        else:
            imp = col.missing.impute
            missing = _("missing values ({what}): replaced by {value}").format(
                what=what, value=imp if isinstance(imp, str) else _num(float(imp or 0.0))
            )
        out.append(_("Column {col}: {public}; {missing}.").format(col=name, public=public, missing=missing))
    if spec.where:
        from dpdesk.core.model.spec import describe_where

        out.append(
            _(
                "Rows: only those where {cond} (a public condition from the plan; a number is clamped to its "
                "bounds before it is compared, and a missing value meets it only when it is replaced by a value "
                "that does)."
            ).format(cond=describe_where(spec.where))
        )
    return out


def write_release_report(
    path: Path | IO[bytes],
    *,
    plan_dict: dict[str, Any],
    rows: Sequence[Sequence[str]],
    spend: SpendEntry,
    settings_entry: Entry | None,
    dataset_name: str,
    title: str | None = None,
    synthetic_counts: Mapping[str, Sequence[Sequence[int]]] | None = None,
) -> None:
    """The PDF report of one release (from the plan, the released rows and the ledger entries only); ``title``
    heads it instead of the plan's title (the plan itself is unchanged). ``synthetic_counts``: each synthetic
    table's rows per level of each column, when the caller has just drawn the table (else it is drawn again from
    the spend entry)."""
    _register_fonts()
    from reportlab.lib.units import mm
    from reportlab.platypus import PageBreak, Spacer

    from dpdesk.core.dp.figures import budget_chart, results_chart
    from dpdesk.core.publish.pdf_charts import drawing

    st = _styles()
    width = 174 * mm
    title = title or plan_dict.get("title") or _("Differentially private release")
    budget = spend.get("budget") or plan_dict["budget"]
    charged = spend.fields["charged"]
    after = spend.get("spent_after") or charged
    unit = plan_dict["privacy_unit"]
    story: list[Any] = [
        _p(title, st["title"]),
        _p(_("A differentially private release made with dpdesk."), st["body"]),
        Spacer(1, 6 * mm),
    ]
    facts = [
        [_("Dataset"), dataset_name],
        [_("Dataset id (random, reveals nothing about the data)"), spend.dataset],
        [_("Released on (UTC)"), spend.time.replace("T", " ")],
        [_("Release id"), spend.release_id],
        [_("Unit of privacy"), privacy_unit_sentence(unit)],
        [_("Total budget of the dataset"), _eps_delta(budget["epsilon"], budget["delta"])],
        [_("Accounting method"), words.accounting(spend.method)],
        [_("Spent by this release"), _eps_delta(charged["epsilon"], charged["delta"], "up")],
        [_("Spent on this dataset so far"), _eps_delta(after["epsilon"], after["delta"], "up")],
        [
            _("Remaining"),
            _eps_delta(
                max(0.0, budget["epsilon"] - after["epsilon"]),
                max(0.0, budget["delta"] - after["delta"]),
                "down",
            ),
        ],
    ]
    story.append(_table(facts, [58 * mm, width - 58 * mm], st, header=False))
    story.append(Spacer(1, 5 * mm))
    story.append(
        _p(
            _(
                "Numbers are rounded once, before they were recorded, to three significant digits of their "
                "noise's spread (their 95% interval's half-width, never less than one step of the noise, so a "
                "value keeps its digits when its interval is a single point); release.csv holds the same numbers."
            ),
            st["small"],
        )
    )
    traces = {t["name"]: t for t in spend.fields["trace"]}
    plan = _parsed(plan_dict)
    specs = {q.name: q for q in plan.queries} if plan is not None else {}
    accuracies = _plan_accuracies(plan_dict)
    accuracy = {name: a.sentence() for name, a in accuracies.items()}
    by_name: dict[str, list[Sequence[str]]] = {}
    for r in rows:
        by_name.setdefault(r[0], []).append(r)
    story.append(_p(_("Summary"), st["h1"]))
    story.append(_summary_table(by_name, traces, accuracies, st))
    story.append(PageBreak())

    story.append(_p(_("Statistics"), st["h1"]))
    left = REPORT_ROWS  # the rows the report may still show (the rest are in release.csv)
    for name, all_rows in by_name.items():
        qrows = all_rows[: max(0, min(REPORT_ROWS_PER_QUERY, left))]
        left -= len(qrows)
        tr = traces.get(name, {})
        what = words.statistic(tr.get("statistic", ""))
        if tr.get("column"):
            what += f" ({tr['column']})"
        if tr.get("group_by"):
            what += " " + _("by {g}").format(g=tr["group_by"])
        what += words.where(tr)
        story.append(_p(f"{name}: {what}", st["h2"]))
        if len(qrows) < len(all_rows):
            story.append(_p(_shown_note(len(qrows), len(all_rows)), st["small"]))
        # ε and δ in columns only when they differ between the rows (else once, in the mechanism line below)
        varying = len({(r[6], r[7]) for r in qrows}) > 1
        table = [[_("Group"), _("Value"), _("95% interval"), *(("ε", "δ") if varying else ())]]
        for r in qrows:
            interval = f"[{r[3]}, {r[4]}]" if r[3] != "" else _no_interval(tr.get("statistic", ""))
            table.append([r[1] or "—", r[2], interval, *((r[6], r[7]) if varying else ())])
        if varying:
            eps_w, delta_w = (_one_line_width([r[i] for r in table], 12 * mm) for i in (3, 4))
            rest = width - 46 * mm - eps_w - delta_w
            widths = [46 * mm, rest * 0.4, rest * 0.6, eps_w, delta_w]
        else:
            widths = [46 * mm, 42 * mm, 86 * mm]
        if qrows:
            story.append(_table(table, widths, st))
        numeric = len(qrows) > 1 and all(_is_number(r[2]) for r in qrows)
        if numeric:
            # a grouped quantile's chosen candidates have no interval: bars without error bars
            intervals = all(_is_number(r[3]) and _is_number(r[4]) for r in qrows)
            chart = results_chart(
                name,
                [r[1] for r in qrows],
                [float(r[2]) for r in qrows],
                [float(r[3]) for r in qrows] if intervals else None,
                [float(r[4]) for r in qrows] if intervals else None,
            )
            story.append(Spacer(1, 2 * mm))
            story.append(drawing(chart, width * 0.8))
        mech = words.mechanism(tr.get("mechanism", all_rows[0][5]), tr.get("calibration"))
        lines: list[tuple[str, str]] = [
            (
                "body",
                _("Mechanism: {m}; ε = {e}, δ = {d}.").format(m=mech, e=all_rows[0][6], d=all_rows[0][7]),
            )
        ]
        # what the numbers assume, from the plan's public values (the same that decided the release)
        lines.append(("body", _("Unit of privacy: {unit}.").format(unit=privacy_unit_sentence(unit))))
        if plan is not None and name in specs:
            lines.extend(("body", text) for text in column_assumptions(plan, specs[name]))
        if name in accuracy:
            lines.append(("body", _("Accuracy: {text}.").format(text=accuracy[name])))
            if any(r[3] != "" for r in all_rows):  # a bound for any table, beside this release's own interval
                rows_n = accuracies[name].rows
                lines.append(
                    (
                        "small",
                        (
                            _(
                                "The accuracy is a bound stated from the plan before the release, for any table of "
                                "the expected size ({n} rows); the 95% interval in the table above is this "
                                "release's own, computed from its noisy values."
                            ).format(n=rows_n)
                            if rows_n is not None
                            else _(
                                "The accuracy is a bound stated from the plan before the release, for any table; "
                                "the 95% interval in the table above is this release's own, computed from its "
                                "noisy values."
                            )
                        ),
                    )
                )
        for c in tr.get("components", []):
            line = _("{label}: sensitivity Δ = {s} — {why}").format(
                label=words.any_word(c["label"]),
                s=numfmt.plain(c["sensitivity_used"], 6),
                why=c["derivation"],
            )
            lines.append(("math", line))
            lines.append(("math", _("Formula: {f}").format(f=c["formula"])))
        if tr.get("rank_error95") is not None:
            acc = _(
                "Accuracy: with 95% probability the released value's rank is within ±{r} of q·n, "
                "where n is the number of rows with a value: at most q·n + {r} rows lie below it and "
                "at least q·n − {r} at or below it. This follows from the plan alone; no interval of "
                "values is given, because turning ranks into values would need the data."
            )
            lines.append(("body", acc.format(r=numfmt.plain(tr["rank_error95"], 4))))
        for n in tr.get("notes", []):
            lines.append(("small", _("Note: {n}").format(n=n)))
        story.extend(_line_paragraphs(lines, st))
        story.extend(
            synthetic_section(name, plan_dict, spend, st, width, (synthetic_counts or {}).get(name))
        )  # a synthetic table's own section
        story.append(Spacer(1, 3 * mm))

    story.append(PageBreak())
    story.append(_p(_("Budget"), st["h1"]))
    costs = [(c["name"], c["epsilon"]) for c in spend.fields["costs"]]
    earlier = max(0.0, after["epsilon"] - charged["epsilon"])
    remaining = max(0.0, budget["epsilon"] - after["epsilon"])
    story.append(
        drawing(
            budget_chart(costs, budget["epsilon"], earlier, remaining, words.accounting(spend.method)),
            width * 0.9,
        )
    )
    totals = [[_("Accounting"), _("This release")]]
    for m, t in (spend.get("totals") or {}).items():
        if t is None:
            continue
        mark = " ▶" if m == spend.method else ""
        extra = f", ρ {numfmt.plain(t['rho'], 4, 'up')}" if t.get("rho") else ""
        totals.append([f"{words.accounting(m)}{mark}", _eps_delta(t["epsilon"], t["delta"], "up") + extra])
    story.append(_table(totals, [50 * mm, width - 50 * mm], st))
    story.append(
        _p(
            _(
                "▶ marks the dataset's accounting method, fixed at its first release; the others are shown "
                "for comparison."
            ),
            st["small"],
        )
    )

    story.append(_p(_("Methods: what the guarantee means"), st["h1"]))
    for para in guarantee_paragraphs(
        charged["epsilon"], charged["delta"], unit["neighbouring"], unit["max_rows_per_person"]
    ):
        story.append(_p(unbroken(math_markup(para)), st["body"], raw=True))
        story.append(Spacer(1, 2 * mm))

    story.append(_p(_("Ledger entries of this release"), st["h1"]))
    story.append(
        _p(
            _(
                "Each entry carries the hash of the one before it; the spend entry was written, and made "
                "durable, before any value was shown or saved."
            ),
            st["small"],
        )
    )
    for e in [x for x in (settings_entry, spend) if x]:
        story.append(
            _table(
                [
                    [_("Entry"), f"#{e.seq} {words.entry_type(e.type)}  ({e.time})"],
                    [_("Hash"), e.hash],
                    [_("Previous"), e.prev],
                    *(
                        [[_("Plan hash"), e.fields["plan_hash"]], [_("Values hash"), e.fields["values_hash"]]]
                        if e.type == "spend"
                        else []
                    ),
                ],
                [30 * mm, width - 30 * mm],
                st,
                header=False,
            )
        )
        story.append(Spacer(1, 2 * mm))
    _build(path, story, title)


#: At most this many values of one query are shown in the report's table and chart, and this many of the whole
#: release: a table of thousands of rows is read in release.csv, and reportlab lays a table out in a time that
#: grows faster than its rows (10,000 rows took 22 s, a plan's 999,000 cells more than 600 s at 3.4 GB).
REPORT_ROWS_PER_QUERY = 200
REPORT_ROWS = 2_000
#: At most this many of a column's categories are named in each query's section (plan.json holds them all).
REPORT_CATEGORIES = 30


def _shown_note(shown_n: int, total: int) -> str:
    """The note under a query's heading when the report shows only some of its values."""
    if shown_n == 0:
        return _(
            "This report shows at most {most} values in all; this query's {n} values are in release.csv."
        ).format(most=f"{REPORT_ROWS:,}", n=f"{total:,}")
    return _(
        "The first {k} of this query's {n} values are shown; release.csv holds all of them (the same numbers)."
    ).format(k=f"{shown_n:,}", n=f"{total:,}")


def _correction_changes(entries: Sequence[Entry]) -> dict[int, float]:
    """Each correction's change of the total under the method in force; {} for a chain that cannot be
    re-totalled (its stored figures are shown)."""
    from dpdesk.core.ledger.recost import correction_changes

    try:
        return correction_changes(entries)
    except (KeyError, TypeError, ValueError, AttributeError):
        return {}


def _line_paragraphs(lines: Sequence[tuple[str, str]], st: dict[str, Any]) -> list[Any]:
    """Lines of text, each starting a new line: adjacent lines of one style set as one paragraph (the same look
    as a paragraph each, with a fraction of the flowables a long report would lay out); a "math" line is a formula
    or derivation, typeset as mathematics in the small style."""
    out: list[Any] = []
    for style, group in itertools.groupby(lines, key=lambda kv: _MATH_STYLE.get(kv[0]) or kv[0]):
        text = "<br/>".join(math_markup(t) if k in _MATH_STYLE else markup(t) for k, t in group)
        out.append(_p(unbroken(text), st[style], raw=True))
    return out


#: Line kinds of :func:`_line_paragraphs` typeset as mathematics (:func:`math_markup`), and their style.
_MATH_STYLE = {"math": "small"}


def _no_interval(word: str) -> str:
    """The interval column's words for a row without an interval, by its statistic (a chosen candidate)."""
    from dpdesk.core.dp import statistics

    try:
        return statistics.get(word).no_interval()
    except KeyError:
        return _("(a chosen candidate)")


def _summary_table(
    by_name: dict[str, list[Sequence[str]]],
    traces: dict[str, dict[str, Any]],
    accuracies: dict[str, Accuracy],
    st: dict[str, Any],
) -> Any:
    """One row per query: its name, statistic, released value (a short form of several), ε, δ and accuracy."""
    from reportlab.lib.units import mm

    table = [[_("Query"), _("Statistic"), _("Released value"), "ε", "δ", _("Accuracy")]]
    for name, qrows in by_name.items():
        tr = traces.get(name, {})
        what = words.statistic(tr.get("statistic", ""))
        if tr.get("column"):
            what += f" ({tr['column']})"
        if tr.get("group_by"):
            what += " " + _("by {g}").format(g=tr["group_by"])
        what += words.where(tr)
        acc = accuracies.get(name)
        table.append([name, what, _short_value(qrows), qrows[0][6], qrows[0][7], acc.short() if acc else ""])
    # ε and δ each on one line: their columns as wide as their widest value, the rest shared by the text columns
    eps_w, delta_w = (_one_line_width([r[i] for r in table], 12 * mm) for i in (3, 4))
    rest = 174 * mm - 30 * mm - 30 * mm - eps_w - delta_w
    return _table(table, [30 * mm, 30 * mm, rest / 2, eps_w, delta_w, rest / 2], st)


def _one_line_width(cells: Sequence[str], least: float) -> float:
    """The width of a table column (points) that sets each of ``cells`` on one line in the small style: the
    widest one and the cell padding, at least ``least``."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from dpdesk.core.publish.pdftext import text_runs

    widest = max(
        (sum(stringWidth(chunk, font, 8) for font, chunk in text_runs(c)) for c in cells), default=0.0
    )
    return max(least, widest + 12 + 1)


def _short_value(qrows: Sequence[Sequence[str]]) -> str:
    """A query's released value, or the first of its values and how many there are."""
    if len(qrows) == 1:
        return qrows[0][2]
    shown_rows = "; ".join(f"{r[1]} {r[2]}" for r in qrows[:3])
    if len(qrows) <= 3:
        return shown_rows
    return _("{first}; … ({n} values)").format(first=shown_rows, n=len(qrows))


def plan_accuracy(plan_dict: dict[str, Any]) -> dict[str, str]:
    """Each query's accuracy in its own units, in words, from the plan alone (its expected_rows included):
    the statement of :func:`dpdesk.core.dp.accuracy.query_accuracy`. Empty when the plan does not read back."""
    return {name: a.sentence() for name, a in _plan_accuracies(plan_dict).items()}


def _parsed(plan_dict: dict[str, Any]) -> Plan | None:
    """The typed plan (None when it does not read back)."""
    from dpdesk.core.common.errors import DpdeskError
    from dpdesk.core.plan.reader import parse_plan

    try:
        return parse_plan(plan_dict)
    except DpdeskError:
        return None


def _plan_accuracies(plan_dict: dict[str, Any]) -> dict[str, Accuracy]:
    """Each query's :class:`Accuracy` from the plan alone; empty when the plan does not read back."""
    from dpdesk.core.common.errors import DpdeskError
    from dpdesk.core.dp import statistics
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.plan.reader import parse_plan

    try:
        plan = parse_plan(plan_dict)
        return {
            d.spec.name: statistics.get(d.spec.statistic).value_accuracy(d, plan) for d in design_plan(plan)
        }
    except DpdeskError:
        return {}


def write_budget_statement(
    path: Path,
    *,
    dataset_name: str,
    entries: Sequence[Entry],
    report: BudgetReport | None,
    chain_status: str,
) -> None:
    """A privacy officer's statement of everything a dataset has spent, across all its releases."""
    _register_fonts()
    story = statement_story(
        dataset_name=dataset_name, entries=entries, report=report, chain_status=chain_status, st=_styles()
    )
    _write_pdf(path, story, _("Budget statement"))


def _write_pdf(path: Path, story: list[Any], title: str) -> None:
    """Build ``story`` in memory, then write it whole or not at all: a full disk keeps the file it would replace."""
    import io

    from dpdesk.core.publish.outputs import write_out_file

    buf = io.BytesIO()
    _build(buf, story, title)
    write_out_file(path, buf.getvalue())


def statement_story(
    *,
    dataset_name: str,
    entries: Sequence[Entry],
    report: BudgetReport | None,
    chain_status: str,
    st: dict[str, Any],
    dataset: str | None = None,
) -> list[Any]:
    """The budget statement of one dataset as reportlab flowables (fonts registered): its id, the chain's status,
    its budget, spent and left under the method in force and every method, and every entry. The per-dataset
    statement is this story alone; the team's statement (:func:`write_team_statement`) gives each dataset one."""
    from reportlab.lib.units import mm
    from reportlab.platypus import Spacer

    width = 174 * mm
    story: list[Any] = [_p(_("Budget statement"), st["title"]), _p(dataset_name, st["body"])]
    dataset = dataset if dataset is not None else entries[0].dataset if entries else ""
    story.append(
        _p(_("Dataset id (random, reveals nothing about the data): {id}").format(id=dataset), st["small"])
    )
    story.append(_p(_("Ledger: {status}").format(status=chain_status), st["small"]))
    story.append(Spacer(1, 4 * mm))
    if report is not None:
        b = report.budget
        m = report.method
        spent = report.in_force.spent
        story.append(
            _table(
                [
                    [_("Total budget"), _eps_delta(b.epsilon, b.delta)],
                    [_("Accounting method"), words.accounting(m)],
                    [_("Spent so far"), _eps_delta(spent.epsilon, spent.delta, "up")],
                    [
                        _("Remaining"),
                        _eps_delta(report.remaining_before.epsilon, report.remaining_before.delta, "down"),
                    ],
                    [_("Releases"), str(report.releases_so_far)],
                ],
                [50 * mm, width - 50 * mm],
                st,
                header=False,
            )
        )
        story.append(Spacer(1, 3 * mm))
        comp = [[_("Accounting"), _("Spent so far, all releases")]]
        for name, v in report.methods.items():
            if v is not None:
                comp.append(
                    [
                        words.accounting(name) + (" ▶" if name == m else ""),
                        _eps_delta(v.spent.epsilon, v.spent.delta, "up"),
                    ]
                )
        story.append(_table(comp, [50 * mm, width - 50 * mm], st))
    story.append(_p(_("All entries"), st["h1"]))
    header = ["#", _("Time (UTC)"), _("Entry"), _("Spent"), _("Queries / details"), _("Hash")]
    rows: list[list[str]] = []
    changes = _correction_changes(entries)
    for e in entries:
        if isinstance(e, SpendEntry):
            c = e.charged
            spent_txt = _eps_delta(c.epsilon, c.delta, "up")
            what = ", ".join(e.query_names)
        elif isinstance(e, SettingsEntry):
            s = e.settings
            spent_txt = ""
            what = _("budget ε {e}, δ {d}, {m}: {r}").format(
                e=_maybe_number(s["budget"]["epsilon"], numfmt.epsilon),
                d=_maybe_number(s["budget"]["delta"], numfmt.delta),
                m=words.accounting(e.method),
                r=words.recorded_reason(e.get("reason", "")),
            )
        elif isinstance(e, SimulateEntry):
            spent_txt, what = (
                _("see correction"),
                _("{n} simulated run(s) of the data (older version)").format(n=e.get("runs")),
            )
        elif isinstance(e, CorrectionEntry):  # the change of the total under the method in force (issue 34)
            spent_txt = f"ε +{numfmt.epsilon(changes.get(e.seq, e.get('added_epsilon', 0)), 'up')}"
            what = _("past releases booked too low: {list}").format(
                list=", ".join(str(r.get("seq")) for r in e.get("releases", []))
            )
        elif e.type.value == "checkpoint":
            spent_txt, what = "", _("totals carried forward")
        else:
            spent_txt, what = "", words.recorded_reason(e.get("reason", "")) or e.get("release_id", "")
        rows.append(
            [
                str(e.seq),
                e.time.replace("T", " ").replace("+00:00", ""),
                words.entry_type(e.type.value),
                spent_txt,
                what,
                e.hash[:12] + "…",
            ]
        )
    story.append(_entry_rows(header, rows, st))
    return story


@dataclass(frozen=True)
class TeamDataset:
    """One dataset of a team's statement: its public id, its name in documents (the latest release's plan title,
    else its id), its verified entries (none when its chain is broken), its budget report (None before a release),
    the chain's status as stated, the settings in force (a budget fixed before any release) and what needs
    attention (:data:`TEAM_PROBLEMS`' keys)."""

    dataset: str
    name: str
    entries: Sequence[Entry]
    report: BudgetReport | None
    chain_status: str
    settings: Mapping[str, Any] | None = None
    problems: tuple[str, ...] = ()


def team_problem(code: str) -> str:
    """What needs attention in a team's dataset, in words (``dpdesk team status`` marks the same)."""
    return {
        "broken": _("ledger broken"),
        "no_budget": _("no budget fixed yet"),
        "total_unknown": _("total cannot be computed"),
        "overspent": _("overspent"),
        "merged": _("merged into another dataset"),
    }.get(code, code)


def write_team_statement(
    path: Path,
    *,
    server: str,
    user: str,
    role: str,
    generated: str,
    datasets: Sequence[TeamDataset],
) -> None:
    """The budget statement of a whole team: a cover (the team's server as messages show it, never a password,
    who wrote the statement in which role, when, and a summary row per dataset), then each dataset on a page of its
    own with the same facts as its own statement (:func:`statement_story`)."""
    _register_fonts()
    from reportlab.lib.units import mm
    from reportlab.platypus import PageBreak, Spacer

    st = _styles()
    width = 174 * mm
    story: list[Any] = [
        _p(_("Team budget statement"), st["title"]),
        _table(
            [
                [_("Team ledger"), server],
                [_("Written by"), user],
                [_("Their role in the team"), role],
                [_("Written on (UTC)"), generated],
                [_("Datasets"), str(len(datasets))],
            ],
            [50 * mm, width - 50 * mm],
            st,
            header=False,
        ),
        Spacer(1, 4 * mm),
        _p(_("Summary"), st["h1"]),
    ]
    if datasets:
        story.append(_team_summary(datasets, st))
        story.append(Spacer(1, 3 * mm))
        story.append(
            _p(
                _(
                    "Spent is rounded up and left rounded down, under each dataset's accounting method. Each "
                    "dataset's page that follows states its budget, every accounting method and every entry of its "
                    "ledger, whose chain was verified on this computer."
                ),
                st["small"],
            )
        )
    else:
        story.append(_p(_("The team ledger holds no dataset yet."), st["body"]))
    for part in datasets:
        story.append(PageBreak())
        story.extend(
            statement_story(
                dataset_name=part.name,
                entries=part.entries,
                report=part.report,
                chain_status=part.chain_status,
                st=st,
                dataset=part.dataset,
            )
        )
    _write_pdf(path, story, _("Team budget statement"))


def _team_summary(datasets: Sequence[TeamDataset], st: dict[str, Any]) -> Any:
    """The cover's table: one row per dataset (its id, its name when it has one and what needs attention) with its
    budget, spent (rounded up), left (rounded down), method and releases; each pair ε above δ, each on one line."""
    from reportlab.lib.units import mm
    from reportlab.platypus import Paragraph

    header = [
        _("Dataset"),
        _("Budget"),
        _("Spent"),
        _("Left"),
        _("Method"),
        _("Releases"),
    ]
    # per dataset: the dataset, its three (ε, δ) pairs (or None), method, releases and what needs attention
    rows: list[list[Any]] = []
    for part in datasets:
        problems = "; ".join(team_problem(p) for p in part.problems)
        rep = part.report
        pairs: list[tuple[str, str] | None] = [None, None, None]
        method = ""
        released = sum(isinstance(e, SpendEntry) for e in part.entries)
        releases = "—" if "broken" in part.problems else str(released)  # a broken chain's are not known
        if rep is not None:
            spent, left = rep.in_force.spent, rep.remaining_before
            method, releases = rep.method, str(rep.releases_so_far)
            pairs = [
                (numfmt.epsilon(rep.budget.epsilon), numfmt.delta(rep.budget.delta)),
                (numfmt.epsilon(spent.epsilon, "up"), numfmt.delta(spent.delta, "up")),
                (numfmt.epsilon(left.epsilon, "down"), numfmt.delta(left.delta, "down")),
            ]
        elif part.settings is not None and not released:  # a budget fixed, nothing released yet
            b = part.settings["budget"]
            method = str(part.settings["accounting"]["method"])
            pairs = [
                (numfmt.epsilon(b["epsilon"]), numfmt.delta(b["delta"])),
                (numfmt.epsilon(0.0, "up"), numfmt.delta(0.0, "up")),
                (numfmt.epsilon(b["epsilon"], "down"), numfmt.delta(b["delta"], "down")),
            ]
        rows.append([part, pairs, words.accounting(method) if method else "—", releases, problems])
    # every ε, δ, method and count on one line: those columns as wide as their widest value, the rest the first
    # column's, which holds the id (7 points, on one line), the name and what needs attention
    pair_w = [
        _one_line_width(
            [
                header[1 + i],
                *(f"{sym} {v}" for r in rows if r[1][i] for sym, v in zip("εδ", r[1][i], strict=True)),
            ],
            12 * mm,
        )
        for i in range(3)
    ]
    method_w = _one_line_width([header[4], *(r[2] for r in rows)], 12 * mm)
    count_w = _one_line_width([header[5], *(r[3] for r in rows)], 10 * mm)
    first_w = 174 * mm - sum(pair_w) - method_w - count_w
    table: list[list[Any]] = [header]
    for part, pairs, method, releases, problems in rows:
        first = f"<font size=7>{markup(part.dataset)}</font>"
        if part.name != part.dataset:
            first += f"<br/>{markup(part.name)}"
        if problems:
            first += f'<br/><font color="#a00000">{markup(problems)}</font>'
        cells = [
            Paragraph(f"{markup('ε ' + p[0])}<br/>{markup('δ ' + p[1])}", st["small"]) if p else "—"
            for p in pairs
        ]
        table.append([Paragraph(first, st["small"]), *cells, method, releases])
    return _table(table, [first_w, *pair_w, method_w, count_w], st)


#: The budget statement's entries table: font size, leading and column widths (mm; 174 in all)
_ROW_FONT, _ROW_LEADING = 7.0, 9.0
_ROW_WIDTHS_MM = (11, 31, 23, 22, 61, 26)
_PAD_X, _PAD_Y = 6.0, 2.0


class _EntryRows:
    """The budget statement's entries, laid out one page at a time (with reportlab's Flowable: :func:`_entry_rows`).

    A ledger of thousands of entries makes a table of thousands of rows: reportlab re-measures every row left of
    one long table at each page break (quadratic), and a Paragraph per cell is slow to build and wrap. Here each
    cell is a plain string wrapped once to its column (:func:`_cell`: a Paragraph only for text the Latin font
    cannot set, e.g. Chinese), every row's height is known before layout, and each page gets its own small table
    of the rows that fit (found by bisection over the heights' running sums), with the header row repeated: the
    work is linear in the number of entries."""

    def __init__(
        self,
        header: list[str],
        rows: list[list[str]],
        st: dict[str, Any],
        *,
        start: int = 0,
        laid: tuple[list[Any], list[list[Any]], list[float], list[float]] | None = None,
    ) -> None:
        from reportlab.lib.units import mm

        super().__init__()  # reportlab's Flowable (see _entry_rows)
        self.st = st
        self.start = start
        self.widths = [w * mm for w in _ROW_WIDTHS_MM]
        if laid is None:
            cache: dict[tuple[str, float], tuple[Any, float]] = {}
            head = [self._cell(h, w, cache) for h, w in zip(header, self.widths, strict=True)]
            cells: list[list[Any]] = []
            heights: list[float] = []
            for r in rows:
                row = [self._cell(t, w, cache) for t, w in zip(r, self.widths, strict=True)]
                cells.append([c for c, _h in row])
                heights.append(max(h for _c, h in row) + 2 * _PAD_Y)
            sums = [0.0]
            for h in heights:
                sums.append(sums[-1] + h)
            head_h = max(h for _c, h in head) + 2 * _PAD_Y
            laid = ([c for c, _h in head], cells, sums, [head_h])
        self.laid = laid
        self.width = sum(self.widths)
        self.height = 0.0
        self.canv: Any = None  # set by Flowable.wrapOn/drawOn

    def _cell(
        self, text: str, width: float, cache: dict[tuple[str, float], tuple[Any, float]]
    ) -> tuple[Any, float]:
        """``text`` for a column of ``width`` points and its height: a plain string wrapped at spaces when the Latin
        font sets every character and no word is wider than the column, else a Paragraph (measured once)."""
        from reportlab.lib.utils import simpleSplit
        from reportlab.pdfbase.pdfmetrics import stringWidth

        key = (text, width)
        got = cache.get(key)
        if got is not None:
            return got
        room = width - 2 * _PAD_X
        flat = " ".join(shown(text, keep_newlines=True).split())
        lines = simpleSplit(flat, LATIN, _ROW_FONT, room) if flat else [""]
        if all(ord(ch) in _LATIN_CMAP for ch in flat) and all(
            stringWidth(x, LATIN, _ROW_FONT) <= room for x in lines
        ):
            got = ("\n".join(lines), len(lines) * _ROW_LEADING)
        else:
            from reportlab.lib.styles import ParagraphStyle

            style = ParagraphStyle("row", parent=self.st["small"], fontSize=_ROW_FONT, leading=_ROW_LEADING)
            p = _p(text, style)
            got = (p, p.wrap(room, 1e9)[1])
        cache[key] = got
        return got

    # ---------------------------------------------------------------- what platypus calls (Flowable's wrapOn etc.)
    def _rows_left(self) -> int:
        return len(self.laid[1]) - self.start

    def _height(self, n: int) -> float:
        sums = self.laid[2]
        return float(self.laid[3][0] + sums[self.start + n] - sums[self.start])

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        self.height = self._height(self._rows_left())
        return self.width, self.height

    def split(self, aw: float, ah: float) -> list[Any]:
        """The rows that fit in ``ah`` points as a table, and the rest (none fit: [], the next page)."""
        import bisect

        sums = self.laid[2]
        k = bisect.bisect_right(sums, sums[self.start] + ah - self.laid[3][0], lo=self.start) - 1 - self.start
        k = min(k, self._rows_left())
        if k <= 0:
            return []
        return [self._table(k), _entry_rows([], [], self.st, start=self.start + k, laid=self.laid)]

    def draw(self) -> None:
        t = self._table(self._rows_left())
        t.wrapOn(self.canv, self.width, self.height)
        t.drawOn(self.canv, 0, 0)

    def _table(self, n: int) -> Any:
        from reportlab.lib import colors
        from reportlab.platypus import Table, TableStyle

        head, cells, sums, (head_h,) = self.laid
        part = cells[self.start : self.start + n]
        heights = [head_h, *(sums[i + 1] - sums[i] for i in range(self.start, self.start + n))]
        t = Table([head, *part], colWidths=self.widths, rowHeights=heights)
        t.setStyle(
            TableStyle(
                [
                    ("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#b0b7bf")),
                    ("VALIGN", (0, 0), (-1, -1), "TOP"),
                    ("TOPPADDING", (0, 0), (-1, -1), _PAD_Y),
                    ("BOTTOMPADDING", (0, 0), (-1, -1), _PAD_Y),
                    ("FONTNAME", (0, 0), (-1, -1), LATIN),
                    ("FONTSIZE", (0, 0), (-1, -1), _ROW_FONT),
                    ("LEADING", (0, 0), (-1, -1), _ROW_LEADING),
                    ("TEXTCOLOR", (0, 0), (-1, -1), colors.HexColor("#444444")),
                    ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8edf2")),
                ]
            )
        )
        return t


def _entry_rows(
    header: list[str],
    rows: list[list[str]],
    st: dict[str, Any],
    *,
    start: int = 0,
    laid: tuple[list[Any], list[list[Any]], list[float], list[float]] | None = None,
) -> Any:
    """An :class:`_EntryRows` that is a reportlab Flowable (imported only when a statement is written)."""
    from reportlab.platypus import Flowable

    cls = type("EntryRows", (_EntryRows, Flowable), {})
    return cls(header, rows, st, start=start, laid=laid)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return s != ""
