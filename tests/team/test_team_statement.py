"""``dpdesk team statement``: the budget statement of a whole team (a cover with a summary row per dataset, then each
dataset on a page of its own with the same facts as its own ``dpdesk ledger statement``), written by any of the
team's people, the auditor included; a broken chain is stated, not crashed on (a real PostgreSQL)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from dpdesk.cli import main
from dpdesk.core.common.errors import Cancelled, UsageError
from dpdesk.core.common.progress import Progress
from dpdesk.core.ledger.team import redacted
from dpdesk.services.team import write_team_statement
from tests.conftest import SAMPLES
from tests.services.test_report_claims import pdf_text
from tests.services.test_report_language import ALLOWED, E_NOTATION, english_words, names_of
from tests.team.conftest import Team

pytestmark = pytest.mark.slow

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


@dataclass
class TwoDatasets:
    """Two tables of the team (two halves of the sample: no row in common), released by two curators."""

    tables: dict[str, Path]  # "a", "b" -> the table's file
    ids: dict[str, str]  # "a", "b" -> the team's dataset id
    plans: dict[str, Path]
    releases: dict[str, int]


def _as(team: Team, who: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make this process ``who``'s: their own dpdesk home, the team's ledger as them (``DPDESK_LEDGER``)."""
    home = tmp_path / f"home-{who}"
    monkeypatch.setenv("DPDESK_HOME", str(home))
    monkeypatch.setenv("DPDESK_LEDGER", team.url(team.users[who]))
    return home


def _release(
    team: Team, who: str, plan: Path, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _as(team, who, tmp_path, monkeypatch)
    out = tmp_path / f"release-{len(list(tmp_path.glob('release-*')))}"
    assert main(["release", str(plan), "--data", str(data), "--out", str(out)]) == 0


@pytest.fixture
def two(team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TwoDatasets:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    half = (len(lines) - 1) // 2
    tables = {"a": tmp_path / "first.csv", "b": tmp_path / "second.csv"}
    tables["a"].write_text("\n".join([lines[0], *lines[1 : 1 + half]]) + "\n", encoding="utf-8")
    tables["b"].write_text("\n".join([lines[0], *lines[1 + half :]]) + "\n", encoding="utf-8")
    plans = {}
    for key, (epsilon, queries, title) in {"a": (3.0, 6, "Wages A"), "b": (2.0, 3, "Wages B")}.items():
        plan = json.loads(PLAN.read_text(encoding="utf-8"))
        plan["budget"]["epsilon"] = epsilon
        plan["queries"] = plan["queries"][:queries]
        if (
            key == "b"
        ):  # ε 0.300003 a release: two make 0.600006, whose four digits are 0.6001 up, 0.6 nearest
            for q in plan["queries"]:
                q["epsilon"] = 0.100001
        plan["title"] = title
        plans[key] = tmp_path / f"plan-{key}.json"
        plans[key].write_text(json.dumps(plan), encoding="utf-8")
    ids: dict[str, str] = {}
    releases = {"a": 0, "b": 0}
    for who, key in (("alice", "a"), ("bob", "a"), ("bob", "b"), ("alice", "b"), ("alice", "a")):
        before = {str(r[0]) for r in team.sql("SELECT dataset FROM dpdesk.datasets WHERE seq > 0")}
        _release(team, who, plans[key], tables[key], tmp_path, monkeypatch)
        releases[key] += 1
        made = {str(r[0]) for r in team.sql("SELECT dataset FROM dpdesk.datasets WHERE seq > 0")} - before
        if made:
            (ids[key],) = made
    assert len(set(ids.values())) == 2
    authors = team.sql("SELECT DISTINCT appended_by FROM dpdesk.entries WHERE type = 'spend' ORDER BY 1")
    assert authors == [(team.users["alice"],), (team.users["bob"],)]  # two curators released
    return TwoDatasets(tables, ids, plans, releases)


def pages(pdf: Path) -> list[str]:
    """The PDF's pages as a reader's tool extracts them (pdftotext ends each with a form feed)."""
    text = pdf_text(pdf)
    return [p for p in text.split("\f") if p.strip()]


def flat(text: str) -> str:
    return " ".join(text.split())


def facts(page: str) -> str:
    """A dataset's statement from its id line to its last entry (not its title, its name or the footer)."""
    text = flat(page)
    start = text.index("Dataset id")
    end = text.rindex("dpdesk ")  # the footer: the version and the page number
    return text[start:end]


def own_statement(
    team: Team, two: TwoDatasets, key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """The dataset's own statement (``dpdesk ledger statement``, as alice), on one page."""
    _as(team, "alice", tmp_path, monkeypatch)
    out = tmp_path / f"own-{key}.pdf"
    assert main(["ledger", "statement", "--data", str(two.tables[key]), "--out", str(out)]) == 0
    (page,) = pages(out)
    return page


def test_the_team_statement_has_a_cover_and_each_dataset_on_a_page_with_its_own_statements_facts(
    team: Team,
    two: TwoDatasets,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _as(team, "bob", tmp_path, monkeypatch)
    out = tmp_path / "team.pdf"
    capsys.readouterr()
    assert main(["team", "statement", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert str(out) in said and "2 dataset(s)" in said
    cover, *rest = pages(out)
    assert len(rest) == len(two.ids)  # one page per dataset, after the cover
    assert "Team budget statement" in cover and team.users["bob"] in cover and "curator" in cover
    assert "postgresql://" in cover and f"/{team.database}" in cover
    for key, dataset in two.ids.items():
        assert dataset in cover
        (page,) = [p for p in rest if dataset in p]  # each dataset on exactly one page
        assert all(other not in page for other in two.ids.values() if other != dataset)
        own = own_statement(team, two, key, tmp_path, monkeypatch)
        assert facts(page) == facts(own)  # budget, spent, left, every method and every entry: the same
        releases = re.search(r"Releases (\d+)", flat(own))
        assert releases is not None and int(releases.group(1)) == two.releases[key]
        for label in ("Total budget", "Spent so far", "Remaining"):
            line = re.search(rf"{label} (ε \S+, δ \S+)", flat(own))
            assert line is not None and line.group(1) in flat(page)
        # the cover's row holds the same spent and left (ε above δ in its cells)
        spent = re.search(r"Spent so far ε (\S+), δ (\S+)", flat(own))
        left = re.search(r"Remaining ε (\S+), δ (\S+)", flat(own))
        assert spent is not None and left is not None
        row = _cover_row(out, dataset, two.ids.values())
        for value in (*spent.groups(), *left.groups()):
            assert value in row, (value, row)
        assert str(two.releases[key]) in row


def _cover_row(cover: Path, dataset: str, ids: Iterable[str]) -> str:
    """A dataset's row of the cover's summary (its id first, then its name and figures, ε above δ), as laid out on
    the page: from the line of its id to the next dataset's id or the note under the table."""
    text = flat(pdf_text(cover, layout=True).split("\f")[0])
    start = text.index(dataset)
    ends = [text.find(d, start + 1) for d in ids if d != dataset]
    end = min([e for e in ends if e > 0] + [text.index("Spent is rounded up")])
    return text[start:end]


def test_spent_is_rounded_up_and_left_down_on_the_cover(
    team: Team, two: TwoDatasets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three releases of ε 0.9 and two of ε 0.300003 (more digits than the statement shows): the cover never states
    less spent, or more left, than the database's exact decimal sum."""
    from decimal import Decimal

    home = _as(team, "olga", tmp_path, monkeypatch)
    out = tmp_path / "team.pdf"
    write_team_statement(home, out)
    rows = {
        str(r[0]): r
        for r in team.sql("SELECT o_dataset, o_budget_epsilon, o_spent_epsilon FROM dpdesk.overview()")
    }
    for dataset in two.ids.values():
        budget, spent = Decimal(str(rows[dataset][1])), Decimal(str(rows[dataset][2]))
        row = _cover_row(out, dataset, two.ids.values())
        shown = [Decimal(x) for x in re.findall(r"ε ?(\d+(?:\.\d+)?)", row)]
        assert len(shown) == 3, row  # budget, spent, left
        assert shown[0] == budget and shown[1] >= spent and shown[2] <= budget - spent, (row, budget, spent)


def test_the_auditor_writes_it_and_an_existing_file_is_replaced_only_with_force(
    team: Team, two: TwoDatasets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _as(team, "audrey", tmp_path, monkeypatch)  # read only: no secret, no lock, no append
    out = tmp_path / "team.pdf"
    done = write_team_statement(home, out)
    assert done.out == out and done.datasets == len(two.ids) and done.broken == 0
    cover, *rest = pages(out)
    assert team.users["audrey"] in cover and "auditor" in cover and len(rest) == len(two.ids)
    first = out.read_bytes()
    with pytest.raises(UsageError, match="already exists"):
        write_team_statement(home, out)
    assert out.read_bytes() == first
    assert main(["team", "statement", "--out", str(out)]) == 2  # the command line refuses it too
    assert out.read_bytes() == first
    assert main(["team", "statement", "--out", str(out), "--force"]) == 0
    assert len(pages(out)) == 1 + len(two.ids)
    with pytest.raises(UsageError, match="inside the dpdesk home"):
        write_team_statement(home, home / "team.pdf", force=True)


def test_a_home_without_a_team_is_told_how_to_connect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DPDESK_LEDGER", raising=False)
    monkeypatch.setenv("DPDESK_HOME", str(tmp_path / "home"))
    out = tmp_path / "team.pdf"
    assert main(["team", "statement", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "not connected to a team ledger" in err and "dpdesk team connect URL" in err
    assert "Traceback" not in err and not out.exists()


def test_a_broken_chain_is_stated_and_the_others_still_stand(
    team: Team,
    two: TwoDatasets,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken, whole = two.ids["b"], two.ids["a"]
    team.sql(  # an administrator's edit behind the database's back: the chain no longer verifies
        "UPDATE dpdesk.entries SET line = convert_to(replace(convert_from(line, 'UTF8'), 'Wages B', 'Wages X'), "
        f"'UTF8') WHERE dataset = '{broken}' AND type = 'spend'"
    )
    _as(team, "olga", tmp_path, monkeypatch)
    out = tmp_path / "team.pdf"
    capsys.readouterr()
    assert main(["team", "statement", "--out", str(out)]) == 3  # written; a chain is broken
    said = capsys.readouterr()
    assert "1 dataset(s) have a broken ledger" in said.out and "Traceback" not in said.err
    _cover, *rest = pages(out)
    assert len(rest) == 2
    row = _cover_row(out, broken, two.ids.values())
    assert (
        "ledger broken" in row and "ε" not in row and "sequential" not in row
    )  # no figure, not even 0 releases
    assert not re.search(r"\b0\b", row)
    assert "ledger broken" not in _cover_row(out, whole, two.ids.values())
    (page,) = [p for p in rest if broken in p]
    assert "BROKEN" in page and "Spent so far" not in page
    (page,) = [p for p in rest if whole in p]
    assert "chain verified" in page and "Spent so far" in page


def test_it_can_be_cancelled_between_datasets(
    team: Team, two: TwoDatasets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _as(team, "alice", tmp_path, monkeypatch)
    seen: list[tuple[int, int]] = []
    progress = Progress(lambda done, total, _stage: seen.append((done, total)))
    out = tmp_path / "team.pdf"
    write_team_statement(home, out, progress=progress)
    assert (0, 2) in seen and (1, 2) in seen  # one step per dataset
    progress = Progress(lambda done, _total, _stage: progress.cancel() if done == 1 else None)
    with pytest.raises(Cancelled):
        write_team_statement(home, tmp_path / "cancelled.pdf", progress=progress)
    assert not (tmp_path / "cancelled.pdf").exists()


def test_the_chinese_team_statement_holds_no_english_but_names(
    team: Team, two: TwoDatasets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _as(team, "audrey", tmp_path, monkeypatch)
    monkeypatch.setenv("DPDESK_LANG", "zh_CN")
    out = tmp_path / "team.pdf"
    write_team_statement(home, out)
    text = pdf_text(out)
    server = redacted(
        team.url(team.users["audrey"])
    )  # the server's name (a folder, here) is not dpdesk's words
    assert server in text
    text = text.replace(server, " ")
    allowed = ALLOWED | names_of(PLAN, DATA) | {"Wages"} | set(re.findall(r"[A-Za-z]+", team.users["audrey"]))
    assert "数据集" in text and "审计员" in text and "团队" in text  # it is the Chinese statement
    assert not english_words(text, allowed), sorted(english_words(text, allowed))
    assert not E_NOTATION.search(text), [m.group(0) for m in E_NOTATION.finditer(text)]
    assert len(pages(out)) == 1 + len(two.ids)


def test_the_cover_states_a_budget_fixed_before_any_release_and_what_needs_attention(
    dpdesk_home: Path, tmp_path: Path
) -> None:
    """Without a server: a dataset whose chain holds its settings only (spent nothing, all left, no release), and
    one whose problems the service found, as the cover words them."""
    from dpdesk.core.ledger.budget import budget_report
    from dpdesk.core.ledger.checkpoint import state_of
    from dpdesk.core.publish.report import TeamDataset, team_problem
    from dpdesk.core.publish.report import write_team_statement as write_pdf
    from tests.core.test_checkpoint import build, lean_plan

    ledger, plan = build(dpdesk_home, tmp_path, 2, plan=lean_plan())
    entries = ledger.verify()
    assert ledger.dataset is not None
    first = entries[:1]  # the settings entry alone: a budget fixed, nothing released
    fixed = TeamDataset(
        "ds-" + "a" * 32, "ds-" + "a" * 32, first, None, "chain verified", state_of(first).settings
    )
    flagged = TeamDataset(
        ledger.dataset,
        "t",
        entries,
        budget_report(plan, entries),
        "chain verified",
        problems=("overspent", "merged"),
    )
    out = tmp_path / "cover.pdf"
    write_pdf(
        out,
        server="postgresql://u@h/db",
        user="u",
        role="officer",
        generated="now",
        datasets=[fixed, flagged],
    )
    cover = flat(pdf_text(out, layout=True).split("\f")[0])
    row = cover[cover.index(fixed.dataset) : cover.index(flagged.dataset)]
    budget = state_of(first).settings["budget"]["epsilon"]  # type: ignore[index]
    assert re.findall(r"ε ?(\d+(?:\.\d+)?)", row) == [f"{budget:.0f}", "0", f"{budget:.0f}"]
    assert "sequential" in row and re.search(r"\b0\b", row.split("sequential")[1])
    rest = cover[cover.index(flagged.dataset) :]
    assert team_problem("overspent") in rest and team_problem("merged") in rest
    assert len(pages(out)) == 3
