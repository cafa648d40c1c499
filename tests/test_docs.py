"""The README is a front page and the reference lives in docs/: every relative link in them resolves to a file
of the repository, and every page of docs/ is reachable from the README's index."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    ROOT / "SECURITY.md",
    ROOT / "CONTRIBUTING.md",
    *sorted((ROOT / "docs").glob("*.md")),
]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [t for t in LINK.findall(text) if not re.match(r"(https?:|mailto:|#)", t)]


def test_every_relative_link_resolves() -> None:
    broken = [
        f"{page.relative_to(ROOT)}: {target}"
        for page in PAGES
        for target in relative_links(page)
        if not (page.parent / target.split("#")[0]).exists()
    ]
    assert not broken, broken


def test_every_reference_page_is_in_the_readme_index() -> None:
    linked = {(ROOT / t.split("#")[0]).resolve() for t in relative_links(ROOT / "README.md")}
    pages = {p.resolve() for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), sorted(p.name for p in pages - linked)
    assert len(pages) >= 10  # the reference moved out of the README


def test_the_readme_stays_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) < 12_000, "move reference text into docs/"
    assert "pip install -q -e '.[test]'" in readme and "pytest -q" in readme  # CI's command
