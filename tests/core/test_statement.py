"""The budget statement of a long ledger: linear work (no re-measured rows, no Paragraph per cell), every entry in it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from dpdesk.core.ledger.budget import budget_report
from dpdesk.core.ledger.entries import Entry, parse_entry
from dpdesk.core.publish.report import write_budget_statement
from tests.core.test_checkpoint import build, lean_plan


@pytest.fixture
def no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda _fd: None)  # durability is tested elsewhere


def _entries(dpdesk_home: Path, tmp_path: Path, n: int) -> tuple[list[Entry], Any]:
    """A real ledger's entries (settings, spends, checkpoints) repeated to ``n`` entries (renumbered; the statement
    is given entries already verified, so their hashes are not checked here)."""
    lg, plan = build(dpdesk_home, tmp_path, 20, plan=lean_plan())
    real = lg.verify()
    out = [parse_entry({**real[i % len(real)].to_dict(), "seq": i + 1}) for i in range(n)]
    return out, budget_report(plan, real)


def _write(path: Path, entries: list[Entry], report: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Write the statement counting the Paragraphs built, the Tables built and the rows given to them, and the
    Paragraph wraps (each a measurement of a cell)."""
    from reportlab.platypus import Paragraph, Table

    counts = {"paragraphs": 0, "wraps": 0, "tables": 0, "rows": 0}
    p_init, p_wrap, t_init = Paragraph.__init__, Paragraph.wrap, Table.__init__

    def paragraph(self: Any, *a: Any, **k: Any) -> None:
        counts["paragraphs"] += 1
        p_init(self, *a, **k)

    def wrap(self: Any, *a: Any, **k: Any) -> Any:
        counts["wraps"] += 1
        return p_wrap(self, *a, **k)

    def table(self: Any, data: Any, *a: Any, **k: Any) -> None:
        counts["tables"] += 1
        counts["rows"] += len(data)
        t_init(self, data, *a, **k)

    with monkeypatch.context() as m:
        m.setattr(Paragraph, "__init__", paragraph)
        m.setattr(Paragraph, "wrap", wrap)
        m.setattr(Table, "__init__", table)
        write_budget_statement(
            path, dataset_name="d.csv", entries=entries, report=report, chain_status="chain verified"
        )
    return counts


def test_a_long_statement_is_linear_work(
    dpdesk_home: Path, tmp_path: Path, no_fsync: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries, report = _entries(dpdesk_home, tmp_path, 1200)
    small = _write(tmp_path / "a.pdf", entries[:600], report, monkeypatch)
    big = _write(tmp_path / "b.pdf", entries, report, monkeypatch)
    # every row is given to a table once (plus a header row and the summary's rows per table): one long table
    # re-measured and re-built at each page break gives rows quadratic in the entries
    pages = len(PdfReader(str(tmp_path / "b.pdf")).pages)
    assert big["rows"] <= 1200 + 2 * big["tables"] + 20, big
    assert big["tables"] <= pages + 3, (big, pages)
    # cells of Latin text are plain strings wrapped once: Paragraphs (and their wraps) do not grow with the entries
    assert big["paragraphs"] == small["paragraphs"] < 60, (small, big)
    assert big["wraps"] <= small["wraps"] * 2.2, (small, big)
    # and linear: twice the entries, about twice the pages
    small_pages = len(PdfReader(str(tmp_path / "a.pdf")).pages)
    assert 1.6 * small_pages <= pages <= 2.4 * small_pages + 1


def test_the_statement_lists_every_entry_in_order(dpdesk_home: Path, tmp_path: Path, no_fsync: None) -> None:
    entries, report = _entries(dpdesk_home, tmp_path, 150)
    out = tmp_path / "s.pdf"
    write_budget_statement(
        out, dataset_name="d.csv", entries=entries, report=report, chain_status="chain verified"
    )
    reader = PdfReader(str(out))
    text = "\n".join(p.extract_text() or "" for p in reader.pages)
    seqs = [int(line.split()[0]) for line in text.splitlines() if line.split() and line.split()[0].isdigit()]
    listed = [s for s in seqs if 1 <= s <= 150]
    assert sorted(set(listed)) == list(range(1, 151))
    assert "totals carried forward" in text and "checkpoint" in text
    for e in entries[:5]:
        assert e.hash[:12] in text
    # the header row heads every page of entries
    assert all("Queries / details" in (p.extract_text() or "") for p in reader.pages[1:])
