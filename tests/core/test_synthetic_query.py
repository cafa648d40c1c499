"""The synthetic statistic end to end: the plan's query, its cost under every accounting method, the release
(spend before reveal, the ledger keeps the noisy marginals and the seed, not the table), the package's CSV,
review, and the free re-export from the ledger."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpdesk.cli import main as cli_main
from dpdesk.core.common.errors import PlanError
from dpdesk.core.dp import synthetic as syn
from dpdesk.core.dp.queries import design_query
from dpdesk.core.dp.statistics import synthetic as stat
from dpdesk.core.ledger.budget import budget_report
from dpdesk.core.plan.reader import parse_plan
from tests.conftest import SAMPLES

DATA = SAMPLES / "census_sample.csv"
COLUMNS = {
    "wage": {"type": "float", "bounds": [0, 5000]},
    "education": {"type": "int", "bounds": [0, 18]},
    "region": {"type": "category", "categories": ["northeast", "midwest", "south", "west"]},
    "sex": {"type": "category", "categories": ["female", "male"]},
    "hours": {"type": "float", "bounds": [0, 100]},
}
QUERY = {
    "name": "people table",
    "statistic": "synthetic",
    "columns": ["wage", "education", "region", "sex"],
    "epsilon": 0.5,
    "delta": 1e-7,
    "bins": {"wage": [0, 500, 1000, 2000, 5000]},
}


def plan_dict(query: dict[str, Any] | None = None, method: str = "sequential") -> dict[str, Any]:
    return {
        "version": 1,
        "title": "synthetic",
        "budget": {"epsilon": 2.0, "delta": 1e-6},
        "privacy_unit": {"neighbouring": "add_remove", "max_rows_per_person": 1},
        "accounting": {"method": method},
        "columns": COLUMNS,
        "queries": [query if query is not None else QUERY],
    }


def problem(query: dict[str, Any]) -> PlanError:
    with pytest.raises(PlanError) as err:
        parse_plan(plan_dict(query))
    return err.value


# ----------------------------------------------------------------------------- the plan


def test_the_query_parses_with_mst_by_default_and_round_trips() -> None:
    q = {k: v for k, v in QUERY.items() if k != "mechanism"}
    plan = parse_plan(plan_dict(q))
    spec = plan.queries[0]
    assert isinstance(spec, stat.SyntheticQuery)
    assert spec.mechanism == "mst" and spec.columns == ("wage", "education", "region", "sex")
    assert dict(spec.bins) == {"wage": (0.0, 500.0, 1000.0, 2000.0, 5000.0)} and spec.rows is None
    assert parse_plan(plan.to_dict()) == plan
    pure = parse_plan(plan_dict({**QUERY, "rows": 50}))
    assert pure.queries[0].rows == 50  # type: ignore[attr-defined]  # a SyntheticQuery


@pytest.mark.parametrize(
    ("change", "key", "text"),
    [
        ({"columns": ["wage", "nope"]}, "queries[0].columns[1]", 'column "nope" is not declared'),
        ({"columns": ["wage"]}, "queries[0].columns", "at least 2 columns"),
        ({"columns": ["wage", "wage"]}, "queries[0].columns[1]", "twice"),
        ({"bins": {"wage": [0, 500, 400]}}, "queries[0].bins.wage[2]", "strictly increasing"),
        ({"bins": {"wage": [0, 500, 6000]}}, "queries[0].bins.wage[2]", "outside the column bounds"),
        ({"bins": {"region": [0, 1]}}, "queries[0].bins.region", "takes no bins"),
        ({"bins": {"hours": [0, 1]}}, "queries[0].bins.hours", "not one of this query's columns"),
        ({"rows": 0}, "queries[0].rows", "whole number"),
        ({"mechanism": "laplace"}, "queries[0].mechanism", "synthetic is released with mst"),
        ({"column": "wage"}, "queries[0].column", "write columns"),
        (
            {"bins": {"wage": [float(i) for i in range(0, 5000, 40)]}},
            "queries[0].bins.wage",
            "from 2 to 101 numbers",
        ),
        (
            {
                "columns": ["wage", "hours"],
                "bins": {
                    "wage": [float(i) for i in range(0, 5000, 60)],
                    "hours": [float(i) for i in range(81)],
                },
            },
            "queries[0].columns",
            "two-way table",
        ),
    ],
)
def test_bad_queries_are_refused_with_a_message_naming_the_key(
    change: dict[str, Any], key: str, text: str
) -> None:
    err = problem({**QUERY, **change})
    assert err.key == key and text in str(err), (err.key, str(err))


def test_a_domain_past_the_limits_is_refused_before_any_data_is_read() -> None:
    wide = {f"c{i}": {"type": "category", "categories": ["a", "b"]} for i in range(syn.MAX_COLUMNS + 1)}
    d = {**plan_dict({**QUERY, "columns": list(wide), "bins": {}}), "columns": wide}
    with pytest.raises(PlanError, match="at most 30 columns"):
        parse_plan(d)


def test_the_messages_are_translated() -> None:
    from dpdesk.i18n import translation

    zh = translation("zh_CN").gettext
    for msg in (
        "a synthetic table needs at least 2 columns",
        "a category column's levels are its categories: it takes no bins",
        "{name} is not one of this query's columns",
        "synthetic table",
    ):
        assert zh(msg) != msg


# ----------------------------------------------------------------------------- the cost


def test_the_cost_is_booked_under_every_accounting_method() -> None:
    plan = parse_plan(plan_dict())
    design = design_query(plan.queries[0], plan)
    split = syn.split_budget(0.5, 1e-7, 4)
    one, sel, two = design.components
    assert (one.mechanism, sel.mechanism, two.mechanism) == ("gaussian", "exponential", "gaussian")
    assert one.scale == split.one_way_scale and two.scale == split.two_way_scale
    assert sel.epsilon == split.select_epsilon and sel.l1 == split.score_sensitivity
    total_rho = split.one_way_cost() + split.select_cost() + split.two_way_cost()
    assert design.rho == pytest.approx(total_rho, rel=1e-12) and total_rho <= split.rho * (1 + 1e-9)
    assert split.total_epsilon() <= 0.5 + 1e-9
    seq = budget_report(plan, []).methods["sequential"]
    assert seq is not None and (seq.plan.epsilon, seq.plan.delta) == (0.5, 1e-7)
    z = budget_report(parse_plan(plan_dict(method="zcdp")), []).methods["zcdp"]
    assert z is not None and z.plan.rho == pytest.approx(total_rho, rel=1e-12)
    adv = budget_report(plan, []).methods["advanced"]
    assert adv is not None and adv.plan.epsilon > 0.5  # one (0.5, 1e-7) mechanism, composed as such
    assert any("Canonne, Kamath & Steinke" in n for n in design.notes)


def test_delta_zero_uses_laplace_parts_whose_epsilons_add_up() -> None:
    q = {k: v for k, v in QUERY.items() if k != "delta"}
    plan = parse_plan(plan_dict(q))
    design = design_query(plan.queries[0], plan)
    one, sel, two = design.components
    assert (one.mechanism, two.mechanism) == ("laplace", "laplace") and plan.queries[0].delta == 0.0
    assert math.fsum((one.epsilon, 3 * sel.epsilon, two.epsilon)) <= 0.5 + 1e-9


def test_the_budget_command_shows_the_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dpdesk_home: Path
) -> None:
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(plan_dict()), encoding="utf-8")
    assert cli_main(["budget", str(p)]) == 0
    out = capsys.readouterr().out
    for text in (
        "one-way marginals (4)",
        "3 rounds, each over the pairs",
        "two-way marginals (3)",
    ):
        assert text in out
    assert "rho = 4 x L2^2 / (2 sigma^2)" in out and "booked as (0.5, 1e-07)" in out


# ----------------------------------------------------------------------------- the release


def test_file_names_come_from_the_public_query_name_only() -> None:
    assert stat.file_name("people table") == "people_table.csv"
    assert stat.file_name("../../etc/passwd") == "etc_passwd.csv"
    assert stat.file_name("release") == "_release.csv" and stat.file_name("...") == "synthetic.csv"


def _release(tmp_path: Path, out: str = "out") -> Path:
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(plan_dict()), encoding="utf-8")
    assert cli_main(["release", str(p), "--data", str(DATA), "--out", str(tmp_path / out)]) == 0
    return p


def _spend(home: Path) -> dict[str, Any]:
    (ledger,) = (home / "ledgers").glob("*.jsonl")
    entries = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines() if line.strip()]
    return next(e for e in entries if e["type"] == "spend")


@pytest.mark.slow
def test_cli_plan_budget_release_review_and_export(tmp_path: Path, dpdesk_home: Path) -> None:
    p = tmp_path / "plan.json"
    p.write_text(json.dumps(plan_dict()), encoding="utf-8")
    assert cli_main(["budget", str(p)]) == 0
    _release(tmp_path)
    out = tmp_path / "out"
    table = out / "people_table.csv"
    rows = list(csv.reader(io.StringIO(table.read_text(encoding="utf-8"))))
    assert rows[0] == ["wage", "education", "region", "sex"]
    spend = _spend(dpdesk_home)
    fields = spend["synthetic"]["people table"]
    assert len(rows) - 1 == fields["rows"] > 1000
    for wage, edu, region, sex in rows[1:]:  # only declared levels, values inside the declared bins
        assert wage == "" or 0 <= float(wage) <= 5000
        assert edu == "" or (edu.isdigit() and 0 <= int(edu) <= 18)
        # a missing value is a level of its own (an empty cell): these columns' policy is "drop"
        assert region in ("", "northeast", "midwest", "south", "west") and sex in ("", "female", "male")
    release_csv = list(csv.reader(io.StringIO((out / "release.csv").read_text(encoding="utf-8"))))
    assert release_csv[1][:3] == ["people table", "people_table.csv", str(fields["rows"])]
    # the ledger keeps the noisy marginals and the seed, not the table
    assert set(fields) == {
        *("split", "sizes", "one_way", "selected", "two_way", "file", "rows", "seed", "fit", "domain")
    }
    assert len(json.dumps(fields)) < len(table.read_bytes()) / 10
    assert cli_main(["review", str(out)]) == 0
    assert (
        cli_main(["ledger", "export-release", "2", "--data", str(DATA), "--out", str(tmp_path / "ex")]) == 0
    )
    assert (tmp_path / "ex" / "people_table.csv").read_bytes() == table.read_bytes()
    # an edited synthetic table is named by review
    table.write_bytes(table.read_bytes().replace(b"female", b"male", 1))
    assert cli_main(["review", str(out)]) != 0


@pytest.mark.slow
def test_the_table_is_drawn_from_the_ledger_s_noisy_marginals_after_the_charge(
    tmp_path: Path, dpdesk_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spend before reveal: every time the CSV is made, the spend entry with its marginals is already on disk;
    the marginals are noisy (not the exact counts) and the table is what they and the seed give."""
    seen: list[bool] = []
    real = stat.columns_csv

    def watched(attrs: Any, values: Any, codes: Any, **kw: Any) -> bytes:
        ledgers = list((dpdesk_home / "ledgers").glob("*.jsonl"))
        seen.append(bool(ledgers) and b'"synthetic"' in ledgers[0].read_bytes())
        return real(attrs, values, codes, **kw)

    monkeypatch.setattr(stat, "columns_csv", watched)
    _release(tmp_path)
    assert seen == [True]
    fields = _spend(dpdesk_home)["synthetic"]["people table"]
    # the exact one-way counts of the sample (region, sex) over the rows with no missing value in the query's
    # columns (their rule is "drop": the others are left out, and no column has a missing level): the released
    # ones differ (sigma > 20 per cell: all 6 cells noiseless with probability below 1e-9)
    from dpdesk.core.loading import load_table

    plan = parse_plan(plan_dict())
    t = load_table(DATA, plan.columns)
    complete = ~np.any([t.columns[c].missing() for c in ("wage", "education", "region", "sex")], axis=0)
    assert 0 < complete.sum() <= 2000
    exact = []
    for c, n in (("region", 4), ("sex", 2)):
        codes = t.columns[c].values[complete]
        exact.append([int((codes == v).sum()) for v in range(n)])
    assert [len(x) for x in exact] == [len(fields["one_way"][2]), len(fields["one_way"][3])]
    assert sum(exact[0]) == sum(exact[1]) == int(complete.sum())
    assert [fields["one_way"][2], fields["one_way"][3]] != exact
    spec = plan.queries[0]
    assert isinstance(spec, stat.SyntheticQuery)
    attrs, table = stat.regenerate(fields, spec, plan)
    # the package's CSV (written from arrays) is, byte for byte, the rows' CSV through the one CSV writer
    assert stat.table_csv(attrs, table) == (tmp_path / "out" / fields["file"]).read_bytes()
    assert fields["file"] == "people_table.csv"


def test_a_table_too_large_for_memory_is_refused_for_a_synthetic_table() -> None:
    """The synthesiser reads its columns together: a table that would be streamed (larger than the memory limit)
    is refused with a message naming the query and the way on, never released from partial marginals."""
    from dpdesk.core.common.errors import UsageError
    from dpdesk.core.release.streaming import load_for_release

    plan = parse_plan(plan_dict())
    with pytest.raises(UsageError) as err:
        load_for_release(plan, DATA, force_stream=True)
    assert "people table" in str(err.value) and "--memory-limit" in str(err.value)


def test_a_synthetic_table_over_the_chunk_size_is_computed_on_the_whole_table(monkeypatch: Any) -> None:
    """In-memory statistics run in chunks of CHUNK_ROWS; the synthesiser's marginals are computed whole (its
    exact step is not a sum of per-chunk vectors), with the same marginals as when no chunking applies."""
    import numpy as np

    from dpdesk.core.dp import aggregates
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.loading import load_table

    plan = parse_plan(plan_dict())
    table = load_table(DATA, plan.columns)
    design = design_plan(plan)[0]
    keep = np.ones(table.n_rows, dtype=bool)
    whole = aggregates.exact_statistic(design, table, keep, plan.columns)
    monkeypatch.setattr(aggregates, "CHUNK_ROWS", 100)
    chunked = aggregates.exact_statistic(design, table, keep, plan.columns)
    for a, b in zip(whole.marginals.one_way, chunked.marginals.one_way, strict=True):  # type: ignore[attr-defined]
        assert (a == b).all()
    assert sum(int(t.sum()) for t in chunked.marginals.one_way) == len(plan.queries[0].columns) * table.n_rows  # type: ignore[attr-defined]


def test_the_table_csv_is_written_by_the_one_csv_writer_formula_safe_and_unbroken() -> None:
    """Issue 14 item 6 for the synthetic table: labels and column names a spreadsheet would run are prefixed with
    ', and a label holding a lone carriage return or a line break is quoted (its row stays one row); the same
    bytes as dpdesk's one CSV writer."""
    from dpdesk.core.dp.values import csv_bytes

    attrs = [
        syn.Attribute("=cmd", "category", categories=("a\rb", "=HYPERLINK(1)", "x\r\ny")),
        syn.Attribute("n", "float", edges=(0.0, 1.0), bounds=(0.0, 1.0)),
    ]
    table: list[list[object]] = [["a\rb", 0.25], ["=HYPERLINK(1)", None], ["x\r\ny", -0.5]]
    data = stat.table_csv(attrs, table)
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    assert rows == [["'=cmd", "n"], ["a\rb", "0.25"], ["'=HYPERLINK(1)", ""], ["x\r\ny", "-0.5"]]
    assert data == csv_bytes(["'=cmd", "n"], [["a\rb", "0.25"], ["=HYPERLINK(1)", ""], ["x\r\ny", "-0.5"]])
