"""synthetic: a differentially private synthetic table of several columns (MST; :mod:`dpdesk.core.dp.synthetic`).

A query ``{"name", "statistic": "synthetic", "columns": [...], "epsilon", "delta"}`` (optional ``rows``: how
many rows to generate, public, default the fitted model's total; optional ``bins``: public bin edges per
numeric column, default :data:`~dpdesk.core.dp.synthetic.DEFAULT_BINS` equal-width bins over its bounds, one bin
per value for an int column whose bounds span at most :data:`~dpdesk.core.dp.synthetic.PER_VALUE_LEVELS` values,
see :mod:`dpdesk.core.dp.synthetic.domain`). Its mechanism word is ``mst`` (the default).

Design (public, from the plan): three parts, composed inside the query (see
:mod:`dpdesk.core.dp.synthetic.measure`): the d one-way marginals, d - 1 selection rounds of the exponential
mechanism and the d - 1 selected two-way marginals. With delta > 0 every part is rho-zCDP (Gaussian
marginals, and eps_s^2 / 8 per round) and the sum is at most the rho whose Canonne-Kamath-Steinke conversion
at delta is epsilon; the query books (epsilon, delta), or its rho on a zCDP dataset. With delta = 0 the parts
are pure (Laplace marginals) and their epsilons add up to at most epsilon.

Sensitivity of one marginal (every kept row is in one cell of every marginal; a row is left out of all of
them when its id is empty or when one of the table's columns whose missing-value rule is "drop" has a missing,
unparsable or undeclared value there, :func:`encode_table`; an imputed value is a value): add_remove
L1 = L2 = k (a row left out is a row not added); replace L1 = 2k, L2 = sqrt(2) k (the change is the counts
of the k rows put in minus those of the k rows taken out, two non-negative vectors of sum at most k, whether
or not some rows are left out: ||a - b||^2 <= ||a||^2 + ||b||^2 <= 2k^2). A selection score (the L1 distance
from the real two-way marginal to a table built from released values) moves by at most the marginal's L1.
The domain (levels) is read off the plan alone: no column has a missing level (domain version 2), whatever
the data hold; releases made before keep theirs (``domain`` in their ledger entry, absent: version 1).

Release: the noisy marginals and a seed from :mod:`secrets` are the query's released values, kept in the
spend entry (``synthetic`` field); the table is post-processing of those alone
(:func:`synthetic_table`), written to the package as ``<file>`` after the charge and regenerated identically
from the ledger. release.csv gets one row: the file name and the number of rows.

Mechanism ``aim`` (the adaptive synthesiser, :mod:`dpdesk.core.dp.synthetic.aim`; McKenna, Mullins, Sheldon &
Miklau 2022, with Private-PGM's estimation, McKenna, Sheldon & Miklau 2019): zCDP only, so delta > 0 is required
(delta 0 is refused, naming the fix). rho is the same as MST's (the CKS conversion at delta, less 1e-9 relative);
T = 16 d planned rounds. The d one-way marginals at sigma = L2 sqrt(T / (2 x 0.9 rho)) cost d L2^2 / (2 sigma^2);
every later round spends its rho 9 : 1 between one Gaussian measurement (L2^2 / (2 sigma_t^2)) and one selection
(exponential mechanism at eps_t, eps_t^2 / 8); annealing halves sigma_t and doubles eps_t (both parts x 4) and the
last round splits what remains the same way, so the design's three parts (one-way, selections, adaptive
marginals) sum to rho, and are exact when the one-way marginals are measured once (measured again, they take up to
half of rho and the rounds split what remains 9 : 1: re-costing counts the recorded rounds, or bounds the split for
a release carried without them). Sensitivities: a marginal's as above (L1 = k, L2 = k add/remove; L1 = 2k,
L2 = sqrt(2) k replace, rows left out included); a selection score w_r (||M_r(D) - M_r(model)||_1 - c_r), the
model and c_r fixed by released and public values, moves by at most w_r L1, so Du = max_r w_r x L1. Every
measurement goes through the release's noise function with a Gaussian component of the round's sigma and L2,
every selection through its pick function with the round's epsilon and Du. The ledger keeps every round (clique,
noisy counts, sigma, select epsilon), the domain, the seed and the fit's version (``method`` "aim"); the table is
the final fit of the rounds sampled with the seed, bit-identical on one machine (the fit is elementwise numpy and
axis reductions in a fixed order). Review checks the package's table by the hash its package entry records, so
it never regenerates a table on another machine (where numpy's exp may differ in the last bit); the app and
``ledger export-release`` regenerate on the reader's machine. Re-costing (:mod:`dpdesk.core.ledger.recost`)
counts every recorded round: rounds costing more than the booked rho are a mis-costed release.
"""

from __future__ import annotations

import dataclasses
import math
import re
import secrets
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from dpdesk.core.dp.statistics.kit import (
    Accuracy,
    AuditExample,
    ColumnSpec,
    Component,
    DesignContext,
    Exact,
    Mechanism,
    NoiseFn,
    Param,
    ParamKind,
    PickFn,
    Plan,
    PlanError,
    QueryDesign,
    QuerySpec,
    Row,
    Rows,
    Statistic,
    _,
    did_you_mean,
    exponential_component,
    fmt_formula,
    fmt_number,
    increasing,
    inside_bounds,
    interval_halfwidth,
    json_type,
    listed_twice,
    quoted,
    synthesiser,
)

if TYPE_CHECKING:
    from dpdesk.core.dp.statistics.kit import Table


@dataclass(frozen=True)
class SyntheticQuery(QuerySpec):
    """A synthetic table: its columns, the rows to draw (None: the fitted total) and any declared bins."""

    columns: tuple[str, ...] = ()
    rows: int | None = None
    bins: tuple[tuple[str, tuple[float, ...]], ...] = ()

    def _check(self) -> None:
        """Its columns, rows and bins as the plan writes them; whether the columns are declared, the bins
        numeric and inside the bounds, and the domain small enough is the plan's to check."""
        super()._check()
        if self.accuracy is not None:
            raise PlanError("query.accuracy", _no_accuracy_target(), hint=_("write epsilon instead"))
        names: list[str] = []
        for i, v in enumerate(self.columns):
            if not isinstance(v, str):
                raise PlanError(f"query.columns[{i}]", _("a column name must be text"))
            if v in names:
                raise PlanError(f"query.columns[{i}]", listed_twice(v))
            names.append(v)
        _column_count(names, "query.columns")
        object.__setattr__(self, "columns", tuple(names))
        if self.rows is not None:
            _check_rows(self.rows, "query.rows")
        bins: list[tuple[str, tuple[float, ...]]] = []
        for name, edges in self.bins:
            key = f"query.bins.{name}"
            if name not in names:
                raise PlanError(
                    key,
                    _("{name} is not one of this query's columns").format(name=quoted(name)),
                    hint=did_you_mean(name, names),
                )
            bins.append((name, increasing(list(edges), key, minimum=2, maximum=synthesiser.MAX_LEVELS + 1)))
        object.__setattr__(self, "bins", tuple(bins))


def _no_accuracy_target() -> str:
    return _("a synthetic table takes an epsilon, not an accuracy target")


def _column_count(names: list[str], key: str) -> None:
    if len(names) < 2:
        raise PlanError(key, _("a synthetic table needs at least 2 columns"))
    if len(names) > synthesiser.MAX_COLUMNS:
        raise PlanError(
            key,
            _("a synthetic table takes at most {most} columns (you chose {n})").format(
                most=synthesiser.MAX_COLUMNS, n=len(names)
            ),
        )


def _check_rows(v: Any, key: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= synthesiser.MAX_ROWS:
        raise PlanError(
            key,
            _("rows must be a whole number from 1 to {most} (you wrote {value})").format(
                most=f"{synthesiser.MAX_ROWS:,}", value=v
            ),
        )
    return v


COLUMNS = Param(
    "columns",
    ParamKind.COLUMN_LIST,
    lambda: _("Columns"),
    lambda: _("The columns of the synthetic table (at least 2 declared columns)."),
    min_len=2,
    max_len=synthesiser.MAX_COLUMNS,
)
ROWS = Param(
    "rows",
    ParamKind.WHOLE_NUMBER,
    lambda: _("Rows to generate"),
    lambda: _(
        "How many rows to generate (public); empty: the total of the fitted model, at no cost (at most {n})."
    ).format(n=f"{synthesiser.MAX_ROWS:,}"),
    max_len=synthesiser.MAX_ROWS,
)
BIN_MAP = Param(
    "bins",
    ParamKind.BIN_MAP,
    lambda: _("Bin edges per numeric column"),
    lambda: _(
        "Public bin edges per numeric column, e.g. wage: 0, 250, 500, 5000 (inside the column's bounds); "
        "a numeric column without them gets {n} equal-width bins over its bounds, and an int column whose "
        "bounds span at most {most} values one level per value (unless that makes a two-way table of more "
        "than {cells} cells)."
    ).format(
        n=synthesiser.DEFAULT_BINS, most=synthesiser.PER_VALUE_LEVELS, cells=f"{synthesiser.MAX_PAIR_CELLS:,}"
    ),
)


@dataclass
class SyntheticExact(Exact):
    """The exact marginals (secret) and, once noised, what the ledger keeps (public)."""

    marginals: synthesiser.ExactMarginals | None = None
    released: dict[str, Any] | None = None
    #: the adaptive synthesiser's encoded table (n x d levels; secret): its rounds read marginals of it
    codes: np.ndarray | None = None


def attributes(
    spec: SyntheticQuery, columns: dict[str, ColumnSpec], version: int = synthesiser.DOMAIN_VERSION
) -> list[synthesiser.Attribute]:
    """The public domain of the table (from the plan alone): each column's levels, categories or bins.

    Version 2 (:data:`~dpdesk.core.dp.synthetic.DOMAIN_VERSION`): no missing level (no missing value reaches the
    measurement: its row is left out under "drop", its value imputed under "impute"); an int column without
    declared bins gets one level per value when its bounds span at most
    :data:`~dpdesk.core.dp.synthetic.PER_VALUE_LEVELS` values, unless the domain then breaks a limit of
    :func:`~dpdesk.core.dp.synthetic.check_domain` (then version 1's default bins, with which every plan accepted
    before is accepted still). Version 1 (releases made before): a "missing" level for a column whose rule is
    "drop", one level per value only up to :data:`~dpdesk.core.dp.synthetic.DEFAULT_BINS` values."""
    if version == 1:
        return _attributes(spec, columns, synthesiser.DEFAULT_BINS, 1)
    if version != synthesiser.DOMAIN_VERSION:
        raise ValueError(f"unknown synthetic domain version {version}")
    attrs = _attributes(spec, columns, synthesiser.PER_VALUE_LEVELS, version)
    try:
        synthesiser.check_domain(attrs)
    except synthesiser.DomainError:
        return _attributes(spec, columns, synthesiser.DEFAULT_BINS, version)
    return attrs


def _attributes(
    spec: SyntheticQuery, columns: dict[str, ColumnSpec], per_value: int, version: int
) -> list[synthesiser.Attribute]:
    declared = dict(spec.bins)
    out = []
    for name in spec.columns:
        col = columns[name]
        missing = col.missing.drops and version == 1
        if col.type == "category":
            assert col.categories is not None
            out.append(
                synthesiser.Attribute(
                    name, "category", categories=col.categories, missing_level=missing, version=version
                )
            )
            continue
        assert col.bounds is not None
        edges = declared.get(name) or synthesiser.default_edges(
            col.type.value, col.bounds, per_value=per_value
        )
        out.append(
            synthesiser.Attribute(
                name, col.type.value, edges=edges, bounds=col.bounds, missing_level=missing, version=version
            )
        )
    return out


def domain_version_of(entry_field: dict[str, Any]) -> int:
    """The domain a release's table was made with (its ledger field ``domain``; entries from before: 1)."""
    return int(entry_field.get("domain", 1))


def encode_table(
    spec: SyntheticQuery, table: Table, keep: np.ndarray | None
) -> tuple[list[synthesiser.Attribute], np.ndarray]:
    """The query's columns of ``table`` as levels (n x d) over their public domain (the current version), rows
    outside ``keep`` left out, and so is every row with a missing value (empty, unparsable, NaN or an undeclared
    category) in a column whose rule is "drop"; a column whose rule is "impute" gets its imputed value there.
    Reads the table: on the release path only inside the charged exact step."""
    cols = {n: table.columns[n].spec for n in spec.columns}
    attrs = attributes(spec, cols)
    kept = np.ones(table.n_rows, dtype=bool) if keep is None else np.asarray(keep, dtype=bool).copy()
    columns = []
    for a in attrs:
        col = table.columns[a.name]
        values = col.values
        miss = col.missing()
        if miss.any():
            if col.spec.missing.drops:
                kept &= ~miss
            else:
                values = values.copy()
                impute = col.spec.missing.impute
                if col.spec.type == "category":
                    assert col.spec.categories is not None
                    values[miss] = col.spec.categories.index(str(impute))
                else:
                    values[miss] = impute
        columns.append(values)
    levels = [synthesiser.encode(a, values[kept], None) for a, values in zip(attrs, columns, strict=True)]
    codes = np.stack(levels, axis=1) if levels else np.zeros((0, 0), dtype=np.int64)
    return attrs, codes


def file_name(query_name: str) -> str:
    """A safe file name for the synthetic table, from the PUBLIC query name only (never from data).

    Letters, digits, '-', '_' and '.' are kept (other characters become '_'), leading dots are dropped, at most
    80 characters, and names Windows reserves get a '_' in front.

    >>> file_name("wage by age/sex"), file_name("../x"), file_name("CON")
    ('wage_by_age_sex.csv', 'x.csv', '_CON.csv')
    """
    text = unicodedata.normalize("NFC", query_name)
    stem = re.sub(r"[^\w.-]+", "_", text, flags=re.UNICODE).strip("._ ")[:80].rstrip("._ ")
    if not stem:
        stem = "synthetic"
    if stem.split(".")[0].upper() in _RESERVED or stem.lower() in ("release", "report", "plan", "ledger"):
        stem = "_" + stem
    return stem + ".csv"


_RESERVED = {"CON", "PRN", "AUX", "NUL"} | {f"{p}{i}" for p in ("COM", "LPT") for i in range(1, 10)}


def _split_of(design: QueryDesign, plan: Plan) -> synthesiser.Split:
    spec = design.spec
    unit = plan.privacy_unit
    n = len(cast(SyntheticQuery, spec).columns)
    return synthesiser.split_budget(
        spec.epsilon, spec.delta, n, unit.neighbouring == "replace", unit.max_rows_per_person
    )


def _per_marginal(comp: Component, split: synthesiser.Split) -> Component:
    """The component one marginal is drawn with (one marginal's sensitivity, the part's scale)."""
    eps = split.l1 / comp.scale if comp.mechanism == "laplace" else comp.epsilon
    return dataclasses.replace(comp, l1=split.l1, l2=split.l2, epsilon=eps)


def measurements_to_dict(m: synthesiser.Measurements) -> dict[str, Any]:
    """The released marginals in the ledger's JSON form."""
    return {
        "split": dataclasses.asdict(m.split),
        "sizes": list(m.sizes),
        "one_way": [list(x.noisy) for x in m.one_way],
        "selected": [list(p) for p in m.selected],
        "two_way": [list(x.noisy) for x in m.two_way],
    }


def measurements_from_dict(d: dict[str, Any]) -> synthesiser.Measurements:
    """Inverse of :func:`measurements_to_dict`."""
    split = synthesiser.Split(**d["split"])
    sizes = tuple(int(s) for s in d["sizes"])
    g = split.gaussian
    one = tuple(
        synthesiser.Measurement((i,), (sizes[i],), tuple(int(v) for v in vals), split.one_way_scale, g)
        for i, vals in enumerate(d["one_way"])
    )
    pairs = tuple((int(p[0]), int(p[1])) for p in d["selected"])
    two = tuple(
        synthesiser.Measurement(
            p, (sizes[p[0]], sizes[p[1]]), tuple(int(v) for v in vals), split.two_way_scale, g
        )
        for p, vals in zip(pairs, d["two_way"], strict=True)
    )
    return synthesiser.Measurements(split, sizes, one, pairs, two)


#: What a synthetic release kept: MST's marginals, or the adaptive synthesiser's rounds.
Released = synthesiser.Measurements | synthesiser.aim.Released


def is_adaptive(entry_field: dict[str, Any]) -> bool:
    """Whether a ledger record is the adaptive synthesiser's (its rounds) rather than MST's."""
    return entry_field.get("method") == "aim"


def released_of(entry_field: dict[str, Any]) -> Released:
    """The released values a ledger record keeps (MST's marginals or the adaptive rounds)."""
    if is_adaptive(entry_field):
        return synthesiser.aim.released_from_dict(entry_field)
    return measurements_from_dict(entry_field)


def measured_cliques(entry_field: dict[str, Any]) -> list[tuple[int, ...]]:
    """The distinct marginals an adaptive release measured, in the order first measured."""
    out: list[tuple[int, ...]] = []
    for r in entry_field["rounds"]:
        c = tuple(int(a) for a in r["clique"])
        if c not in out:
            out.append(c)
    return out


def one_way_released(entry_field: dict[str, Any]) -> list[tuple[int, ...]]:
    """Each column's released noisy one-way counts. The adaptive synthesiser measures every column first, and may
    measure a column again (a second one-way measurement, or a round's): then its measurements' inverse-variance
    mean, rounded (post-processing of released values; a single measurement is shown as released)."""
    if not is_adaptive(entry_field):
        return [tuple(int(v) for v in x) for x in entry_field["one_way"]]
    found: dict[int, list[tuple[float, list[int]]]] = {}
    for r in entry_field["rounds"]:
        sigma = float(r["sigma"])
        if len(r["clique"]) == 1 and math.isfinite(sigma) and sigma > 0:
            found.setdefault(int(r["clique"][0]), []).append((sigma, [int(v) for v in r["noisy"]]))
    out = []
    for j in range(len(entry_field["sizes"])):
        measured = found[j]
        if len(measured) == 1:
            out.append(tuple(measured[0][1]))
            continue
        smallest = min(s for s, _ in measured)  # relative weights: no overflow for tiny sigmas
        weights = np.array([(smallest / s) ** 2 for s, _ in measured])
        counts = np.array([v for _, v in measured], dtype=np.float64)
        mean = weights @ counts / weights.sum()
        out.append(tuple(int(v) for v in np.rint(mean)))
    return out


def _draw_codes(
    released: Released, rows: int | None, seed: int, fit_version: int
) -> tuple[np.ndarray, np.random.Generator]:
    """The levels (n x d) the released marginals and the seed give, and the generator, ready to draw the values."""
    if isinstance(released, synthesiser.aim.Released):
        return synthesiser.aim.draw_codes(released, rows, seed, fit_version)
    model = synthesiser.fit(released, fit_version)
    n = synthesiser.table_rows(model.total, rows)
    rng = synthesiser.generator(seed)
    return synthesiser.sample_codes(model, n, rng), rng


def synthetic_table(
    attrs: list[synthesiser.Attribute],
    released: Released,
    rows: int | None,
    seed: int,
    fit_version: int = synthesiser.FIT_VERSION,
) -> tuple[list[list[object]], np.ndarray]:
    """The synthetic table the released marginals and the seed give (post-processing: reads nothing else), as
    Python rows (for small tables; :func:`synthetic_columns` gives the same table as arrays).

    Returns the rows (values: a category's label, a number drawn uniformly inside its level and the column's
    bounds, None for missing: :func:`~dpdesk.core.dp.synthetic.decode`, by the attributes' domain version) and the
    levels (n x d)."""
    codes, rng = _draw_codes(released, rows, seed, fit_version)
    cols = [synthesiser.decode(a, codes[:, j], rng) for j, a in enumerate(attrs)]
    return [list(r) for r in zip(*cols, strict=True)] if cols else [], codes


@dataclass(frozen=True)
class SyntheticColumns:
    """A synthetic table as arrays: its levels (n x d) and each column's values (float64: a number as drawn, a
    category's level; a missing level's cells are blank in the CSV). The same draws as :func:`synthetic_table`."""

    attrs: list[synthesiser.Attribute]
    codes: np.ndarray
    values: list[np.ndarray]

    @property
    def n_rows(self) -> int:
        """The number of rows."""
        return int(self.codes.shape[0])

    def level_counts(self) -> list[tuple[int, ...]]:
        """Each column's rows per level (missing included), as the report and the app show them."""
        return [
            tuple(np.bincount(self.codes[:, j], minlength=a.size)[: a.size].tolist())
            if self.n_rows
            else (0,) * a.size
            for j, a in enumerate(self.attrs)
        ]

    def clique_counts(self, entry_field: dict[str, Any]) -> list[tuple[int, ...]]:
        """The table's rows per cell of each marginal an adaptive release measured (:func:`measured_cliques`)."""
        sizes = tuple(a.size for a in self.attrs)
        return [
            tuple(int(v) for v in synthesiser.aim.exact_marginal(self.codes, sizes, c).ravel().tolist())
            for c in measured_cliques(entry_field)
        ]

    def csv(self, *, bom: bool = False) -> bytes:
        """The table's CSV: the same bytes as :func:`table_csv` of :func:`synthetic_table`'s rows."""
        return columns_csv(self.attrs, self.values, self.codes, bom=bom)


def synthetic_columns(
    attrs: list[synthesiser.Attribute],
    released: Released,
    rows: int | None,
    seed: int,
    fit_version: int = synthesiser.FIT_VERSION,
) -> SyntheticColumns:
    """:func:`synthetic_table`'s table (the same draws from the same seed) as arrays: no Python object per cell."""
    codes, rng = _draw_codes(released, rows, seed, fit_version)
    values = [synthesiser.decode_array(a, codes[:, j], rng) for j, a in enumerate(attrs)]
    return SyntheticColumns(attrs, codes, values)


def synthetic_level_counts(
    attrs: list[synthesiser.Attribute],
    released: Released,
    rows: int | None,
    seed: int,
    fit_version: int = synthesiser.FIT_VERSION,
) -> list[tuple[int, ...]]:
    """The rows per level of each column of :func:`synthetic_table`'s table (its levels alone are drawn)."""
    codes, _rng = _draw_codes(released, rows, seed, fit_version)
    return SyntheticColumns(attrs, codes, []).level_counts()


def table_csv(attrs: list[synthesiser.Attribute], table: list[list[object]], *, bom: bool = False) -> bytes:
    """The synthetic table as CSV through dpdesk's one CSV writer (:func:`dpdesk.core.dp.values.csv_bytes`): a header
    of the column names, missing as an empty cell, text cells a spreadsheet would run as formulas prefixed with '
    (as release.csv), a cell holding a line break quoted. A float is written as ``repr(round(v, 6))``."""
    from dpdesk.core.dp.statistics.kit import csv_bytes, neutralise

    return csv_bytes(
        [neutralise(a.name) for a in attrs],
        ([("" if v is None else v if isinstance(v, str) else _cell(v)) for v in row] for row in table),
        bom=bom,
    )


def _cell(v: object) -> str:
    if isinstance(v, float):
        return repr(round(v, 6))
    return str(v)


def _csv_cell(text: str) -> str:
    """One cell as dpdesk's CSV writer writes it (neutralised, quoted as the csv module quotes it)."""
    import csv
    import io

    from dpdesk.core.dp.statistics.kit import neutralise

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow([neutralise(text), ""])
    return buf.getvalue()[: -len(",\r\n")]


#: Numbers from this magnitude up are written by Python (its repr turns to an exponent at 1e16).
_BIG = 1e16
#: Numbers below this magnitude (but 0) are written by Python (its repr writes 1e-05, polars 0.00001).
_SMALL = 1e-4


#: Rows formatted at a time: the text of one such slice (a few MB per column) is all the CSV holds besides its bytes.
CSV_ROWS = 100_000


def columns_csv(
    attrs: list[synthesiser.Attribute], values: list[np.ndarray], codes: np.ndarray, *, bom: bool = False
) -> bytes:
    """The CSV of a synthetic table given as arrays, byte for byte :func:`table_csv`'s, without Python work per
    cell: a category's cell is its label written once per level and gathered by level; a number is written by
    polars, whose text is Python's ``repr`` for every float that ``round(v, 6)`` leaves unchanged and that is 0
    or between 1e-4 and 1e16 in magnitude (the others, rare, by Python itself, cell by cell); an int by polars.
    Written :data:`CSV_ROWS` rows at a time into one buffer (no copy of the whole table as text)."""
    import io

    import polars as pl

    out = io.BytesIO()
    if bom:
        out.write(b"\xef\xbb\xbf")
    out.write((",".join(_csv_cell(a.name) for a in attrs) + "\n").encode("utf-8"))
    labels = [
        pl.Series([_csv_cell(c) for c in a.categories] + [""], dtype=pl.String)  # the last: a missing level
        if a.kind == "category"
        else None
        for a in attrs
    ]
    n = int(codes.shape[0])
    for start in range(0, n, CSV_ROWS):
        rows = slice(start, min(n, start + CSV_ROWS))
        frame: dict[str, pl.Series] = {}
        for j, (a, vals) in enumerate(zip(attrs, values, strict=True)):
            level = codes[rows, j]
            cells = labels[j]
            if cells is not None:
                col = cells.gather(np.minimum(level, a.n_values))
            else:
                col = _numbers(a.kind, vals[rows])
                if a.missing_level:
                    col = col.scatter(np.flatnonzero(level >= a.n_values), None)
            frame[str(j)] = col
        pl.DataFrame(frame).write_csv(out, include_header=False, quote_style="never", null_value="")
    return out.getvalue()


def _numbers(kind: str, vals: np.ndarray) -> Any:
    """A numeric column's cells as text: ``str(int(v))`` for an int column, ``repr(round(v, 6))`` for a float."""
    import polars as pl

    if kind == "int":
        if len(vals) == 0 or float(np.abs(vals).max()) < 2.0**53:
            return pl.Series(vals.astype(np.int64)).cast(pl.String)
        return pl.Series([str(int(v)) for v in vals.tolist()], dtype=pl.String)
    # np.round(v, 6) == v (finite): v is the double nearest a number of 6 decimals, so Python's round(v, 6) is v
    with np.errstate(over="ignore", invalid="ignore"):
        size = np.abs(vals)
        fast = (np.round(vals, 6) == vals) & (size < _BIG) & ((size >= _SMALL) | (vals == 0.0))
    col = pl.Series(vals, dtype=pl.Float64).cast(pl.String)
    slow = np.flatnonzero(~fast)
    if len(slow):
        col = col.scatter(slow, pl.Series([repr(round(v, 6)) for v in vals[slow].tolist()], dtype=pl.String))
    return col


def fit_version_of(entry_field: dict[str, Any]) -> int:
    """The fit a release's table was made with (its ledger field ``fit``; entries from before it: version 1)."""
    return int(entry_field.get("fit", 1))


def aim_budget(epsilon: float, delta: float, n_columns: int, replace: bool, k: int) -> synthesiser.aim.Budget:
    """The adaptive synthesiser's public budget: rho the largest whose Canonne-Kamath-Steinke conversion at delta
    is within epsilon (as MST's), less a relative 1e-9 so that the rounds' floating-point sum never exceeds it;
    one marginal's L1 and L2 sensitivities under the relation, for k rows a person."""
    split = synthesiser.split_budget(epsilon, delta, n_columns, replace, k)
    return synthesiser.aim.Budget(split.rho * (1.0 - 1e-9), split.l1, split.l2, n_columns)


@dataclass(frozen=True)
class AimParts:
    """The planned parts of an adaptive synthesis (public): the starting one-way marginals, the selections and
    the adaptive measurements, each's rho; their sum is the budget's rho."""

    budget: synthesiser.aim.Budget
    sigma: float  # the starting sigma (halved by annealing)
    select_epsilon: float  # the starting epsilon of a selection (doubled by annealing)
    one_way_rho: float
    select_rho: float
    measure_rho: float
    score_sensitivity: float
    candidates: int


def aim_parts(budget: synthesiser.aim.Budget, sizes: tuple[int, ...]) -> AimParts:
    """How the rounds spend the budget: d one-way marginals at sigma cost d l2^2 / (2 sigma^2); every later round
    spends its rho 9 : 1 between measurement and selection (annealing scales both by 4; the last round splits what
    remains the same way), so the rest splits 9 : 1 exactly."""
    sigma = budget.sigma()
    one = budget.n_columns * budget.measure_cost(sigma)
    rest = max(budget.rho - one, 0.0)
    cands = synthesiser.aim.workload(sizes)
    return AimParts(
        budget,
        sigma,
        budget.select_epsilon(),
        one,
        (1.0 - synthesiser.aim.MEASURE_SHARE) * rest,
        synthesiser.aim.MEASURE_SHARE * rest,
        max(c.weight for c in cands) * budget.l1,
        len(cands),
    )


def regenerate(
    entry_field: dict[str, Any], spec: SyntheticQuery, plan: Plan
) -> tuple[list[synthesiser.Attribute], list[list[object]]]:
    """The table of one synthetic query from its spend entry's record (free: post-processing), as Python rows."""
    attrs = attributes(spec, plan.columns, domain_version_of(entry_field))
    released = released_of(entry_field)
    rows = int(entry_field["rows"])
    table, _codes = synthetic_table(
        attrs, released, rows, int(entry_field["seed"]), fit_version_of(entry_field)
    )
    return attrs, table


def regenerate_columns(entry_field: dict[str, Any], spec: SyntheticQuery, plan: Plan) -> SyntheticColumns:
    """:func:`regenerate`'s table as arrays (what the package and the app write: no Python object per cell)."""
    attrs = attributes(spec, plan.columns, domain_version_of(entry_field))
    return synthetic_columns(
        attrs,
        released_of(entry_field),
        int(entry_field["rows"]),
        int(entry_field["seed"]),
        fit_version_of(entry_field),
    )


class Synthetic(Statistic):
    """A synthetic table (MST, or the adaptive synthesiser)."""

    name = "synthetic"
    order = 90
    mechanisms = (Mechanism.MST, Mechanism.AIM)
    params = (COLUMNS, ROWS, BIN_MAP)
    query_type = SyntheticQuery
    takes_where = False
    composite = True
    default_mechanism = Mechanism.MST  # the synthesiser's own mechanism word, by default

    def label(self) -> str:
        return _("synthetic table (a shareable microdata file)")

    def word(self) -> str:
        return _("synthetic table")

    def help(self) -> str:
        return _(
            "A table of made-up rows whose one- and two-way patterns follow noisy marginals of the data."
        )

    def no_column_message(self) -> str:
        return _("a synthetic table takes its columns as a list: write columns, not column")

    def no_interval(self) -> str:
        return _("a synthetic table: see its section")

    def parse_with_columns(
        self,
        obj: dict[str, Any],
        key: str,
        common: dict[str, Any],
        columns: dict[str, ColumnSpec],
        broken: Any,
    ) -> QuerySpec:
        from dpdesk.core.dp.statistics.kit import BrokenColumn

        if common.get("accuracy") is not None:
            raise PlanError(f"{key}.accuracy", _no_accuracy_target(), hint=_("write epsilon instead"))
        if "columns" not in obj:
            raise PlanError(
                f"{key}.columns",
                _("a synthetic table needs columns, a list of at least 2 declared columns"),
            )
        raw = obj["columns"]
        if not isinstance(raw, list):
            raise PlanError(
                f"{key}.columns",
                _("columns must be a list of column names, not {kind}").format(kind=json_type(raw)),
            )
        names: list[str] = []
        for i, v in enumerate(raw):
            k = f"{key}.columns[{i}]"
            if not isinstance(v, str):
                raise PlanError(k, _("a column name must be text"))
            if v in broken:
                raise BrokenColumn(k, "")
            if v not in columns:
                raise PlanError(
                    k,
                    _("column {name} is not declared in columns").format(name=quoted(v)),
                    hint=did_you_mean(v, list(columns)),
                )
            if v in names:
                raise PlanError(k, listed_twice(v))
            names.append(v)
        _column_count(names, f"{key}.columns")
        rows = None
        if "rows" in obj:
            rows = _check_rows(obj["rows"], f"{key}.rows")
        bins: list[tuple[str, tuple[float, ...]]] = []
        if "bins" in obj:
            raw_bins = obj["bins"]
            if not isinstance(raw_bins, dict):
                raise PlanError(
                    f"{key}.bins",
                    _("bins must map numeric columns to bin edges, e.g. {example}").format(
                        example='{"wage": [0, 250, 500, 5000]}'
                    ),
                )
            for col_name, edges in raw_bins.items():
                k = f"{key}.bins.{col_name}"
                if col_name not in names:
                    raise PlanError(
                        k,
                        _("{name} is not one of this query's columns").format(name=quoted(col_name)),
                        hint=did_you_mean(col_name, names),
                    )
                col = columns[col_name]
                if col.bounds is None:
                    raise PlanError(k, _("a category column's levels are its categories: it takes no bins"))
                xs = increasing(edges, k, minimum=2, maximum=synthesiser.MAX_LEVELS + 1)
                inside_bounds(xs, col.bounds, k)
                bins.append((col_name, xs))
        spec = SyntheticQuery(
            **{**common, "column": None, "group_by": None},
            columns=tuple(names),
            rows=rows,
            bins=tuple(sorted(bins, key=lambda b: names.index(b[0]))),
        )
        try:
            synthesiser.check_domain(attributes(spec, columns))
        except synthesiser.DomainError as exc:
            raise PlanError(f"{key}.columns", str(exc)) from None
        return spec

    def fields_to_dict(self, spec: QuerySpec) -> dict[str, Any]:
        from dpdesk.core.dp.statistics.kit import num_out

        q = cast(SyntheticQuery, spec)
        out: dict[str, Any] = {"columns": list(q.columns)}
        if q.rows is not None:
            out["rows"] = q.rows
        if q.bins:
            out["bins"] = {name: [num_out(e) for e in edges] for name, edges in q.bins}
        return out

    def n_cells(self, spec: QuerySpec, columns: dict[str, ColumnSpec]) -> int:
        return 1

    def design(self, spec: QuerySpec, plan: Plan, ctx: DesignContext) -> QueryDesign:
        q = cast(SyntheticQuery, spec)
        attrs = attributes(q, plan.columns)
        if q.mechanism == Mechanism.AIM:
            return _aim_design(q, attrs, ctx)
        d = len(attrs)
        split = synthesiser.split_budget(q.epsilon, q.delta, d, ctx.replace, ctx.k)
        rel = ctx.rel
        sens = _(
            "one marginal under {rel}, {who}: L1 = {l1}, L2 = {l2} (each kept row is in one cell of every "
            "marginal; a row with a missing value in a column whose rule is to drop the row is left out of "
            "every marginal, which is within both)"
        ).format(rel=rel, who=ctx.who, l1=fmt_formula(split.l1), l2=fmt_formula(round(split.l2, 6)))
        comps: list[Component] = []
        pairs = d * (d - 1) // 2
        for label, count, scale, cost in (
            (_("one-way marginals ({n})").format(n=d), d, split.one_way_scale, split.one_way_cost()),
            (
                _("two-way marginals ({n})").format(n=split.rounds),
                split.rounds,
                split.two_way_scale,
                split.two_way_cost(),
            ),
        ):
            if split.gaussian:
                formula = _(
                    "discrete Gaussian, sigma = {s} per cell; rho = {n} x L2^2 / (2 sigma^2) = {n} x {l2}^2 / "
                    "(2 x {s}^2) = {rho}"
                ).format(s=fmt_formula(scale), n=count, l2=fmt_formula(round(split.l2, 6)), rho=f"{cost:.6g}")
                comp = Component(
                    label,
                    "count",
                    "gaussian",
                    _mech_eps(cost, q.delta),
                    q.delta,
                    cost,
                    count * split.l1,
                    math.sqrt(count) * split.l2,
                    scale,
                    _bound(scale, True),
                    1.0,
                    formula,
                    sens,
                )
            else:
                formula = _(
                    "discrete Laplace, b = {b} per cell; epsilon = {n} x L1 / b = {n} x {l1} / {b} = {e}"
                ).format(b=fmt_formula(scale), n=count, l1=fmt_formula(split.l1), e=f"{cost:.6g}")
                comp = Component(
                    label,
                    "count",
                    "laplace",
                    cost,
                    0.0,
                    count * (split.l1 / scale) ** 2 / 2.0,
                    count * split.l1,
                    count * split.l2,
                    scale,
                    _bound(scale, False),
                    1.0,
                    formula,
                    sens,
                )
            comps.append(comp)
        score = _(
            "a round's score of a pair: the L1 distance between its real two-way marginal and the "
            "product of the two released one-way marginals, sensitivity {du} (the marginal's L1); {r} rounds, "
            "each over the pairs joining two parts of the tree"
        ).format(du=fmt_formula(split.score_sensitivity), r=split.rounds)
        sel = exponential_component(
            _("selection of two-way marginals ({n} rounds)").format(n=split.rounds),
            split.select_epsilon,
            split.score_sensitivity,
            max(2, pairs),
            _("u = the pair's distance from independence"),
            score,
        )
        sel = dataclasses.replace(
            sel, rho=split.select_cost() if split.gaussian else split.rounds * split.select_epsilon**2 / 8.0
        )
        one, two = comps
        if split.gaussian:
            total = split.one_way_cost() + split.select_cost() + split.two_way_cost()
            note = _(
                "zCDP inside the query: rho = {a} (one-way) + {b} (selection, eps_s^2/8 per round) + {c} "
                "(two-way) = {rho} <= {budget}, the largest rho whose conversion (Canonne, Kamath & Steinke "
                "2020) at delta = {delta} is within epsilon = {eps}: booked as ({eps}, {delta}), or as rho on a "
                "zCDP dataset"
            ).format(
                a=f"{split.one_way_cost():.6g}",
                b=f"{split.select_cost():.6g}",
                c=f"{split.two_way_cost():.6g}",
                rho=f"{total:.6g}",
                budget=f"{split.rho:.6g}",
                delta=f"{q.delta:g}",
                eps=fmt_formula(q.epsilon),
            )
        else:
            note = _(
                "pure epsilon-DP inside the query (delta = 0): epsilon = {a} (one-way) + {b} (selection) + {c} "
                "(two-way) <= {eps}"
            ).format(
                a=f"{split.one_way_cost():.6g}",
                b=f"{split.select_cost():.6g}",
                c=f"{split.two_way_cost():.6g}",
                eps=fmt_formula(q.epsilon),
            )
        notes = (*ctx.notes, note)
        return QueryDesign(spec, (one, sel, two), (file_name(q.name),), None, notes)

    def exact(self, rows: Rows) -> Exact:
        spec = cast(SyntheticQuery, rows.design.spec)
        assert rows.table is not None
        attrs, codes = encode_table(spec, rows.table, rows.keep)
        if spec.mechanism == Mechanism.AIM:
            return SyntheticExact([], None, None, None, codes)
        return SyntheticExact([], None, synthesiser.exact_marginals(codes, attrs))

    def release_rows(
        self, design: QueryDesign, exact: Exact, plan: Plan, noise: NoiseFn, pick: PickFn
    ) -> list[Row]:
        spec = cast(SyntheticQuery, design.spec)
        assert isinstance(exact, SyntheticExact)
        if spec.mechanism == Mechanism.AIM:
            return _aim_release(design, exact, plan, noise, pick)
        assert exact.marginals is not None
        split = _split_of(design, plan)
        one, sel, two = design.components
        one_m, two_m = _per_marginal(one, split), _per_marginal(two, split)
        sel_m = dataclasses.replace(sel, epsilon=split.select_epsilon)

        def noise_fn(values: list[int], _split: synthesiser.Split, scale: float) -> list[int]:
            return noise(values, one_m if scale == split.one_way_scale else two_m)

        def pick_fn(scores: list[float], _split: synthesiser.Split) -> int:
            return pick(scores, sel_m)

        released = synthesiser.measure_marginals(exact.marginals, split, noise_fn, pick_fn)
        seed = secrets.randbits(128)
        n = synthesiser.table_rows(synthesiser.fit(released).total, spec.rows)
        exact.released = {
            **measurements_to_dict(released),
            "file": file_name(spec.name),
            "rows": n,
            "seed": str(seed),
            "fit": synthesiser.FIT_VERSION,
            "domain": synthesiser.DOMAIN_VERSION,
        }
        return [
            Row(
                spec.name,
                file_name(spec.name),
                str(n),
                "",
                "",
                spec.mechanism,
                fmt_number(spec.epsilon),
                fmt_number(spec.delta),
            )
        ]

    def ledger_fields(self, exact: Exact) -> dict[str, Any] | None:
        return exact.released if isinstance(exact, SyntheticExact) else None

    def accuracy(self, design: QueryDesign) -> dict[str, float | None]:
        return {c.label: c.bound95 for c in design.components}

    def audit_examples(self) -> tuple[AuditExample, ...]:
        """The adaptive synthesiser's first adaptive round (tests/trust/test_audit.py): two columns, x in two bins
        and g in three categories, so the candidates are x, g and the pair x × g (weights 1, 1, 2: Du = 2); D' adds
        one row, which moves one cell of the pair's marginal by 1 = L2 (the measurement is tight) and its score by at
        most Du. At epsilon 20, delta 1e-3 the round's sigma is 1.56 (exactly (1.82, 1e-3)-DP as a Gaussian; half of
        it 4.26) and eps_t = 0.43. 90 rows: their one-way marginals' noise alone (1.7% in total-variation distance)
        is below aim.ONE_WAY_NOISE, so they are measured once and the round is the design's first (30 rows would be
        measured twice, and the round's larger sigma would leave the halved-noise check less power)."""
        rows = tuple((-3.0 + 4.0 * (i % 2), i % 3) for i in range(90))
        query = {
            "statistic": "synthetic",
            "mechanism": "aim",
            "columns": ["x", "g"],
            "bins": {"x": [-7, -2, 3]},
            "epsilon": 20.0,
            "delta": 1e-3,
        }
        added = (*rows, (1.0, 2))
        return (
            AuditExample(
                "synthetic/aim round: selection",
                query,
                "add_remove",
                rows,
                added,
                3000,
                False,
                part="selection",
            ),
            AuditExample(
                "synthetic/aim round: measurement",
                query,
                "add_remove",
                rows,
                added,
                40_000,
                part="measurement",
            ),
        )

    def value_accuracy(self, design: QueryDesign, plan: Plan, confidence: float = 0.95) -> Accuracy:
        """The noise of each released one-way marginal cell (what the synthetic table's one-way counts
        follow); the table itself adds the fit's and the sampling's error."""
        from dpdesk.core.dp.statistics.kit import VALUE

        one = design.components[0]
        cells = sum(a.size for a in attributes(cast(SyntheticQuery, design.spec), plan.columns))
        return Accuracy(VALUE, confidence, interval_halfwidth(one, confidence), cells)

    def examples(self, bounds: tuple[float, float]) -> dict[str, dict[str, Any]]:
        lo, hi = bounds
        w = hi - lo
        return {
            "synthetic": {"statistic": "synthetic", "columns": ["x", "g"], "delta": 1e-6},
            "synthetic_pure_bins": {
                "statistic": "synthetic",
                "columns": ["g", "x"],
                "bins": {"x": [lo, lo + w / 4, lo + w / 2, hi]},
            },
            "synthetic_aim": {
                "statistic": "synthetic",
                "mechanism": "aim",
                "columns": ["g", "x"],
                "bins": {"x": [lo, lo + w / 2, hi]},
                "delta": 1e-6,
            },
        }


def _aim_design(q: SyntheticQuery, attrs: list[synthesiser.Attribute], ctx: DesignContext) -> QueryDesign:
    """The adaptive synthesiser's design: its planned parts (:func:`aim_parts`), each with its formula."""
    d = len(attrs)
    budget = aim_budget(q.epsilon, q.delta, d, ctx.replace, ctx.k)
    parts = aim_parts(budget, tuple(a.size for a in attrs))
    l1, l2 = budget.l1, budget.l2
    l2_text = fmt_formula(round(l2, 6))
    sens = _(
        "one marginal under {rel}, {who}: L1 = {l1}, L2 = {l2} (each kept row is in one cell of every "
        "marginal; a row with a missing value in a column whose rule is to drop the row is left out of "
        "every marginal, which is within both)"
    ).format(rel=ctx.rel, who=ctx.who, l1=fmt_formula(l1), l2=l2_text)
    one_formula = _(
        "discrete Gaussian, sigma = L2 sqrt(T / (2 x 0.9 rho)) = {s} per cell (T = 16 d = {t} planned rounds); "
        "rho = {n} x L2^2 / (2 sigma^2) = {n} x {l2}^2 / (2 x {s}^2) = {rho}; measured again when the released "
        "counts say their noise alone is above {noise} in total-variation distance (sqrt(2/pi) sigma n_i / (2 N), "
        "N the rows they estimate, averaged over the columns), at the sigma that brings it to {noise}, all one-way "
        "measurements together spending at most {share} x rho = {cap}; the rounds then plan on what remains"
    ).format(
        s=fmt_formula(parts.sigma),
        t=budget.rounds,
        n=d,
        l2=l2_text,
        rho=f"{parts.one_way_rho:.6g}",
        noise=f"{100 * synthesiser.aim.ONE_WAY_NOISE:g}%",
        share=fmt_formula(synthesiser.aim.ONE_WAY_MAX_SHARE),
        cap=f"{synthesiser.aim.ONE_WAY_MAX_SHARE * budget.rho:.6g}",
    )
    one = Component(
        _("one-way marginals ({n})").format(n=d),
        "count",
        "gaussian",
        _mech_eps(parts.one_way_rho, q.delta),
        q.delta,
        parts.one_way_rho,
        d * l1,
        math.sqrt(d) * l2,
        parts.sigma,
        _bound(parts.sigma, True),
        1.0,
        one_formula,
        sens,
    )
    # the adaptive measurements as one part: rho = m l2^2 / (2 sigma^2) at the starting sigma, m the number of
    # rounds at that sigma the part's rho pays for (annealed rounds cost 4x each, fewer of them)
    m = parts.measure_rho / budget.measure_cost(parts.sigma)
    measure_formula = _(
        "each round: discrete Gaussian, rho = L2^2 / (2 sigma^2), starting at sigma = {s} ({r} per round); when "
        "the refitted model moved by less than the noise expected, sigma is halved and the selection's epsilon "
        "doubled (4 x the rho per round); the last round spends what remains; all measurements after the "
        "one-way marginals: rho = 0.9 x (rho - one-way) = {rho} (0.9 x what remains when the one-way marginals "
        "are measured again), written as one part of L2 = sqrt(m) x L2 with m = {m} rounds' worth at the starting "
        "sigma (so that re-costing scales it with L2)"
    ).format(
        s=fmt_formula(parts.sigma),
        r=f"{budget.measure_cost(parts.sigma):.6g}",
        rho=f"{parts.measure_rho:.6g}",
        m=f"{m:.6g}",
    )
    measure = Component(
        _("adaptive marginals (up to {t} rounds)").format(t=budget.rounds),
        "count",
        "gaussian",
        _mech_eps(parts.measure_rho, q.delta),
        q.delta,
        parts.measure_rho,
        m * l1,
        math.sqrt(m) * l2,
        parts.sigma,
        _bound(parts.sigma, True),
        1.0,
        measure_formula,
        sens,
    )
    score = _(
        "a round's score of a marginal r: w_r (||M_r(D) - M_r(model)||_1 - sqrt(2/pi) sigma n_r), with w_r its "
        "overlap with the workload (every pair{triples}) and the model fitted to released values only; it moves "
        "by at most w_r x L1, so Du = max w_r x L1 = {du}; eps_t = sqrt(8 x 0.1 rho / T) = {e} to start, costing "
        "eps_t^2 / 8 in zCDP; all selections: rho = 0.1 x (rho - one-way) = {rho} (0.1 x what remains when the "
        "one-way marginals are measured again)"
    ).format(
        triples=_(" and every triple")
        if any(len(c.clique) == 3 for c in synthesiser.aim.workload(budget_sizes(attrs)))
        else "",
        du=fmt_formula(parts.score_sensitivity),
        e=fmt_formula(round(parts.select_epsilon, 6)),
        rho=f"{parts.select_rho:.6g}",
    )
    sel = exponential_component(
        _("selection of marginals (up to {t} rounds)").format(t=budget.rounds),
        parts.select_epsilon,
        parts.score_sensitivity,
        max(2, parts.candidates),
        _("u = the marginal's weighted error in the current model, less the noise expected"),
        score,
    )
    sel = dataclasses.replace(sel, rho=parts.select_rho)
    total = parts.one_way_rho + parts.select_rho + parts.measure_rho
    note = _(
        "zCDP inside the query (AIM, McKenna et al. 2022): rho = {a} (one-way) + {b} (selections, eps_t^2/8 "
        "each) + {c} (adaptive marginals, L2^2/(2 sigma^2) each) = {rho} <= {budget}, the largest rho whose "
        "conversion (Canonne, Kamath & Steinke 2020) at delta = {delta} is within epsilon = {eps}: booked as "
        "({eps}, {delta}), or as rho on a zCDP dataset; the ledger keeps every round"
    ).format(
        a=f"{parts.one_way_rho:.6g}",
        b=f"{parts.select_rho:.6g}",
        c=f"{parts.measure_rho:.6g}",
        rho=f"{total:.6g}",
        budget=f"{budget.rho / (1.0 - 1e-9):.6g}",
        delta=f"{q.delta:g}",
        eps=fmt_formula(q.epsilon),
    )
    return QueryDesign(q, (one, sel, measure), (file_name(q.name),), None, (*ctx.notes, note))


def budget_sizes(attrs: list[synthesiser.Attribute]) -> tuple[int, ...]:
    """The levels of each column (the domain's sizes)."""
    return tuple(a.size for a in attrs)


def _aim_release(
    design: QueryDesign, exact: SyntheticExact, plan: Plan, noise: NoiseFn, pick: PickFn
) -> list[Row]:
    """The adaptive rounds, every count through ``noise`` and every selection through ``pick`` (the release's
    adapters to :mod:`dpdesk.core.dp.mechanisms`), with per-round components: the measurement's sigma and L2, the
    selection's epsilon and score sensitivity."""
    spec = cast(SyntheticQuery, design.spec)
    assert exact.codes is not None
    attrs = attributes(spec, plan.columns)
    sizes = budget_sizes(attrs)
    unit = plan.privacy_unit
    budget = aim_budget(
        spec.epsilon, spec.delta, len(attrs), unit.neighbouring == "replace", unit.max_rows_per_person
    )
    _one, sel, measure = design.components

    def noise_fn(values: list[int], l2: float, sigma: float) -> list[int]:
        comp = dataclasses.replace(
            measure, l1=budget.l1, l2=l2, scale=sigma, rho=l2 * l2 / (2.0 * sigma * sigma)
        )
        return noise(values, comp)

    def pick_fn(scores: list[float], sensitivity: float, eps: float) -> int:
        comp = dataclasses.replace(sel, l1=sensitivity, l2=sensitivity, epsilon=eps, rho=eps * eps / 8.0)
        return pick(scores, comp)

    released, _model = synthesiser.aim.adaptive_measure(
        exact.codes, sizes, budget, noise=noise_fn, pick=pick_fn
    )
    exact.codes = None
    seed = secrets.randbits(128)
    n = synthesiser.table_rows(synthesiser.aim.table_total(released), spec.rows)
    exact.released = {
        **synthesiser.aim.released_to_dict(released),
        "file": file_name(spec.name),
        "rows": n,
        "seed": str(seed),
        "fit": synthesiser.aim.FIT_VERSION,
        "domain": synthesiser.DOMAIN_VERSION,
    }
    return [
        Row(
            spec.name,
            file_name(spec.name),
            str(n),
            "",
            "",
            spec.mechanism,
            fmt_number(spec.epsilon),
            fmt_number(spec.delta),
        )
    ]


def _mech_eps(rho: float, delta: float) -> float:
    """A Gaussian part's epsilon on its own at the query's delta (for the trace; the query books the whole)."""
    from dpdesk.core.dp.statistics.kit import rho_to_epsilon

    return rho_to_epsilon(rho, delta) if rho > 0 else 0.0


def _bound(scale: float, gaussian: bool) -> float:
    from dpdesk.core.dp.statistics.kit import gaussian_bound, laplace_bound

    return gaussian_bound(scale) if gaussian else laplace_bound(scale)


STATISTIC = Synthetic()
