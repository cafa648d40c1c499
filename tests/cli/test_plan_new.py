"""Issue 28 item 8, a plan without writing JSON: ``dpdesk plan new --data FILE`` writes a template from the
table's header alone, and ``dpdesk plan check PLAN`` lists what is missing or wrong in plain words."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import xlsxwriter

from dpdesk.cli.program import main
from dpdesk.core.common.errors import PlanErrors
from dpdesk.core.loading.header import csv_header, header_line, read_header
from dpdesk.core.plan.reader import apply_codebook, check_plan, load_plan, parse_plan
from tests.conftest import SAMPLES

SECRET = "secret-value-4711"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def survey(tmp_path: Path) -> Path:
    data = tmp_path / "survey.csv"
    data.write_text(f"age,region,wage,pid\n34,north,1200.5,{SECRET}\n51,south,880,p2\n", encoding="utf-8")
    return data


def fill(plan: dict[str, Any]) -> dict[str, Any]:
    """The template as a user fills it: types, bounds and categories typed, the id column dropped, two queries."""
    c = plan["columns"]
    c["age"].update(type="int", bounds=[0, 120])
    del c["age"]["categories"]
    c["wage"].update(type="float", bounds=[0, 5000])
    del c["wage"]["categories"]
    c["region"].update(type="category", categories=["north", "south"])
    del c["region"]["bounds"]
    del c["pid"]
    plan["budget"]["epsilon"] = 1
    plan["queries"] = [
        {"name": "people", "statistic": "count", "mechanism": "laplace", "epsilon": 0.1},
        {"name": "mean age", "statistic": "mean", "column": "age", "mechanism": "laplace", "epsilon": 0.2},
    ]
    return plan


def test_plan_new_writes_a_template_of_the_header_with_every_choice_left_to_fill(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = survey(tmp_path)
    code, out, err = run(capsys, "plan", "new", "--data", str(data))
    assert code == 0, err
    path = tmp_path / "survey_plan.json"
    text = path.read_text(encoding="utf-8")
    plan = json.loads(text)
    assert list(plan["columns"]) == ["age", "region", "wage", "pid"]
    for spec in plan["columns"].values():
        assert (spec["type"], spec["bounds"], spec["categories"]) == ("?", ["?", "?"], "?")
        assert spec["_help"]
    assert plan["budget"]["epsilon"] == "?" and plan["queries"] == [] and plan["title"] == "survey"
    # nothing of the rows: no value, no type guessed from them
    for value in (SECRET, "north", "1200", "34", "p2"):
        assert value not in text, value
    assert f"dpdesk plan check {path}" in out and "no value was read" in out
    assert '"bounds": ["?", "?"]' in text  # one line a person can edit


def test_a_template_is_refused_by_release_and_budget_in_plain_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = survey(tmp_path)
    assert run(capsys, "plan", "new", "--data", str(data))[0] == 0
    plan = str(tmp_path / "survey_plan.json")
    for args in (("budget", plan), ("release", plan, "--data", str(data), "--out", str(tmp_path / "r"))):
        code, out, err = run(capsys, *args)
        assert code == 2, (args, out, err)
        assert 'column "age": the type is still to fill in: write int' in err
        assert "budget: epsilon is still to fill in: the dataset's total privacy budget, for example 1" in err
        assert "Traceback" not in err and not (tmp_path / "r").exists()


def test_placeholders_are_named_one_by_one_as_the_template_is_filled(tmp_path: Path) -> None:
    plan = fill(json.loads(json.dumps(_template(tmp_path))))
    assert check_plan(plan).problems == ()
    cases: list[tuple[str, str, Any, str, str]] = [
        ("age", "bounds", ["?", 120], 'column "age"', "the bounds are still to fill in"),
        ("region", "categories", "?", 'column "region"', "the categories are still to fill in"),
        ("age", "categories", "?", 'column "age"', 'has bounds, not categories: delete "categories"'),
        ("region", "bounds", ["?", "?"], 'column "region"', 'has categories, not bounds: delete "bounds"'),
    ]
    for column, key, value, where, what in cases:
        broken = json.loads(json.dumps(plan))
        broken["columns"][column][key] = value
        problems = check_plan(broken).problems
        assert [p.where for p in problems] == [where], problems
        assert what in problems[0].text
    broken = json.loads(json.dumps(plan))
    broken["queries"][0]["epsilon"] = "?"
    (problem,) = check_plan(broken).problems
    assert str(problem) == 'query 1 ("people"): epsilon is still to fill in (the template\'s "?")'


def _template(tmp_path: Path) -> dict[str, Any]:
    from dpdesk.core.plan.template import plan_template

    return plan_template(read_header(survey(tmp_path)).names, title="survey")


def test_a_filled_template_passes_plan_check_and_budget(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = survey(tmp_path)
    assert run(capsys, "plan", "new", "--data", str(data))[0] == 0
    path = tmp_path / "survey_plan.json"
    path.write_text(json.dumps(fill(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")
    code, out, err = run(capsys, "plan", "check", str(path), "--data", str(data))
    assert code == 0, out + err
    assert "no problem found" in out and f"dpdesk budget {path} --data {data}" in out
    code, out, err = run(capsys, "budget", str(path))
    assert code == 0, err
    assert "people" in out and "mean age" in out


def test_help_keys_are_ignored_and_existing_plans_read_as_before() -> None:
    sample = json.loads((SAMPLES / "cps_wages_plan.json").read_text(encoding="utf-8"))
    helped = json.loads(json.dumps(sample))
    helped["_help"] = ["a note"]
    helped["budget"]["_help"] = "a note"
    helped["privacy_unit"]["_help"] = "a note"
    helped["columns"]["wage"]["_help"] = "a note"
    helped["queries"][0]["_help"] = "a note"
    assert parse_plan(helped) == parse_plan(sample) == load_plan(SAMPLES / "cps_wages_plan.json")
    # a "?" where it was valid before stays valid: a category labelled "?"
    sample["columns"]["region"]["categories"].append("?")
    assert parse_plan(sample).columns["region"].categories == ("northeast", "midwest", "south", "west", "?")
    sample["colour"] = "red"  # other unknown keys are refused as before
    with pytest.raises(PlanErrors, match='unknown key "colour"'):
        parse_plan(sample)


def test_a_codebook_fills_a_templates_categories(tmp_path: Path) -> None:
    plan = _template(tmp_path)
    plan["columns"]["region"]["type"] = "category"
    del plan["columns"]["region"]["bounds"]
    filled = apply_codebook(plan, {"region": ["north", "south"]})
    assert filled["columns"]["region"]["categories"] == ["north", "south"]
    assert plan["columns"]["region"]["categories"] == "?"


def test_plan_check_lists_each_problem_on_its_own_line_and_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = survey(tmp_path)
    assert run(capsys, "plan", "new", "--data", str(data))[0] == 0
    path = tmp_path / "survey_plan.json"
    code, out, _err = run(capsys, "plan", "check", str(path))
    assert code == 2
    lines = out.splitlines()
    assert lines[0] == f"{path}: 6 things to fix:"
    assert lines[1].startswith("  - budget: epsilon is still to fill in")
    assert [ln.split(":")[0] for ln in lines[2:6]] == [
        f'  - column "{c}"' for c in ("age", "region", "wage", "pid")
    ]
    assert lines[6] == "  - list at least one query"
    assert f"dpdesk plan check {path}" in lines[7]


def test_plan_check_names_a_declared_column_the_header_lacks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = survey(tmp_path)
    plan = fill(_template(tmp_path))
    plan["columns"]["agee"] = plan["columns"].pop("age")
    plan["queries"].pop()
    plan["privacy_unit"]["id_column"] = "person"
    path = tmp_path / "p.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    code, out, _err = run(capsys, "plan", "check", str(path), "--data", str(data))
    assert code == 2
    assert '  - column "agee": not in the header of survey.csv; did you mean "age"?' in out.splitlines()
    assert 'unit of privacy: id_column "person" is not in the header of survey.csv' in out
    assert SECRET not in out


def test_plan_check_says_it_in_chinese(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = survey(tmp_path)
    assert run(capsys, "plan", "new", "--data", str(data))[0] == 0
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    code, out, _err = run(capsys, "plan", "check", str(tmp_path / "survey_plan.json"))
    assert code == 2
    assert "类型仍需填写" in out and "预算" in out and "type is still" not in out
    path = tmp_path / "filled.json"
    path.write_text(json.dumps(fill(_template(tmp_path))), encoding="utf-8")
    code, out, _err = run(capsys, "plan", "check", str(path))
    assert code == 0 and "没有发现问题" in out


def test_plan_check_of_a_file_that_is_not_json_is_one_plain_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"version": 1,', encoding="utf-8")
    code, out, err = run(capsys, "plan", "check", str(path))
    assert code == 2 and "is not valid JSON" in out and "Traceback" not in err


def test_an_existing_plan_is_not_replaced_without_force(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = survey(tmp_path)
    out_file = tmp_path / "mine.json"
    out_file.write_text("my own plan", encoding="utf-8")
    code, _out, err = run(capsys, "plan", "new", "--data", str(data), "--out", str(out_file))
    assert code == 2 and "already exists" in err and "--force" in err
    assert out_file.read_text(encoding="utf-8") == "my own plan"
    code, _out, err = run(capsys, "plan", "new", "--data", str(data), "--out", str(out_file), "--force")
    assert code == 0, err
    assert json.loads(out_file.read_text(encoding="utf-8"))["columns"]["age"]["type"] == "?"
    code, _out, err = run(capsys, "plan", "new", "--data", str(data), "--out", str(data), "--force")
    assert code == 2 and "never overwritten" in err
    assert SECRET in data.read_text(encoding="utf-8")


def test_a_template_can_name_the_budget(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = survey(tmp_path)
    assert run(capsys, "plan", "new", "--data", str(data), "--epsilon", "0.5")[0] == 0
    assert json.loads((tmp_path / "survey_plan.json").read_text(encoding="utf-8"))["budget"]["epsilon"] == 0.5
    other = tmp_path / "x.json"
    code, _out, err = run(capsys, "plan", "new", "--data", str(data), "--epsilon", "0", "--out", str(other))
    assert code == 2 and "greater than 0" in err and not other.exists()


def test_nothing_past_the_header_line_is_read() -> None:
    """The header reader stops at the first record's line end: not one byte of the rows is read."""
    rows = b"\xff\xfe\x00 not text at all \x81\x82\n" * 1000
    for head in (b"age,region\n", b'"a\nb",c\r\n', b"\n"):
        f = io.BytesIO(head + rows)
        assert header_line(f, "t.csv") == head
        assert f.tell() == len(head)
    utf16 = "年龄,地区\n".encode("utf-16")
    f = io.BytesIO(utf16 + "1,2\n".encode("utf-16-le"))
    assert header_line(f, "t.csv") == utf16 and f.tell() == len(utf16)


def test_a_table_whose_rows_are_not_text_still_gives_its_header(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "t.csv"
    data.write_bytes(b"age,wage\n" + b"\xff\xfe\x81 broken \x00 bytes\n" * 10_000)
    code, out, err = run(capsys, "plan", "new", "--data", str(data))
    assert code == 0, err
    assert list(json.loads((tmp_path / "t_plan.json").read_text(encoding="utf-8"))["columns"]) == [
        "age",
        "wage",
    ]
    assert "not UTF-8" not in out


def test_a_latin1_header_is_not_read_as_chinese(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """ "Größe" is valid GB18030; read from the header alone it must still be Latin-1 (cp1252)."""
    data = tmp_path / "de.csv"
    data.write_bytes("Größe;Alter;Straße\n1;2;3\n".encode("cp1252"))
    code, out, err = run(capsys, "plan", "new", "--data", str(data))
    assert code == 0, err
    columns = json.loads((tmp_path / "de_plan.json").read_text(encoding="utf-8"))["columns"]
    assert list(columns) == ["Größe", "Alter", "Straße"]
    assert "--encoding cp1252" in out
    assert csv_header("Größe,Alter\n".encode("cp1252"), "t").names == ("Größe", "Alter")


def test_a_gbk_header_is_read_as_chinese(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = tmp_path / "cn.csv"
    data.write_bytes("年龄,地区,收入\n34,华北,1200\n".encode("gbk"))
    code, out, err = run(capsys, "plan", "new", "--data", str(data))
    assert code == 0, err
    text = (tmp_path / "cn_plan.json").read_text(encoding="utf-8")
    assert list(json.loads(text)["columns"]) == ["年龄", "地区", "收入"]
    assert "华北" not in text and "--encoding gb18030" in out


def test_excel_and_parquet_headers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    xlsx = tmp_path / "t.xlsx"
    wb = xlsxwriter.Workbook(str(xlsx))
    ws = wb.add_worksheet()
    for r, row in enumerate([["age ", "Größe", "年龄"], [SECRET, 1.5, 3]]):
        for c, v in enumerate(row):
            ws.write(r, c, v)
    wb.close()
    parquet = tmp_path / "t.parquet"
    pl.DataFrame({"age": [34], "地区": [SECRET]}).write_parquet(parquet)
    for path, names in ((xlsx, ["age", "Größe", "年龄"]), (parquet, ["age", "地区"])):
        code, _out, err = run(capsys, "plan", "new", "--data", str(path))
        assert code == 0, err
        text = (tmp_path / "t_plan.json").read_text(encoding="utf-8")
        assert list(json.loads(text)["columns"]) == names
        assert SECRET not in text
        (tmp_path / "t_plan.json").unlink()


def test_empty_and_repeated_header_names_are_left_out_and_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "t.csv"
    data.write_text("a,,b,a,c\n1,2,3,4,5\n", encoding="utf-8")
    code, out, err = run(capsys, "plan", "new", "--data", str(data))
    assert code == 0, err
    assert list(json.loads((tmp_path / "t_plan.json").read_text(encoding="utf-8"))["columns"]) == ["b", "c"]
    assert 'Left out (a name that is empty or repeated in the header): "a", ""' in out


def test_plan_check_fills_categories_from_a_codebook_as_release_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan = fill(_template(tmp_path))
    plan["columns"]["region"]["categories"] = "?"
    path = tmp_path / "p.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    code, out, _err = run(capsys, "plan", "check", str(path))
    assert code == 2 and 'column "region": the categories are still to fill in' in out
    book = tmp_path / "codebook.csv"
    book.write_text("column,category\nregion,north\nregion,south\n", encoding="utf-8")
    code, out, _err = run(capsys, "plan", "check", str(path), "--codebook", str(book))
    assert code == 0, out
