"""One version, from the git tag (hatch-vcs writes it into dpdesk/_version.py when dpdesk is built or installed),
shown alike by ``dpdesk --version``, the About box, the PDF report, the release package and each ledger entry; a
development build says it is one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from pypdf import PdfReader

import dpdesk
from tests.conftest import ROOT

INIT = ROOT / "dpdesk" / "__init__.py"


def _copy_package(where: Path, version_file: str | None) -> Path:
    """A copy of the package's __init__ (all ``import dpdesk`` runs) in ``where``, with a build's version file."""
    pkg = where / "dpdesk"
    pkg.mkdir(parents=True)
    shutil.copy(INIT, pkg / "__init__.py")
    if version_file is not None:
        (pkg / "_version.py").write_text(version_file, encoding="utf-8")
    return pkg


def _version_of(where: Path) -> str:
    """``dpdesk.__version__`` in a new interpreter that imports the copy in ``where`` first."""
    out = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            (
                f"import sys; sys.path.insert(0, {str(where)!r}); import dpdesk; "
                "print(dpdesk.__file__); print(dpdesk.__version__)"
            ),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split("\n")
    assert Path(out[0]).resolve() == (where / "dpdesk" / "__init__.py").resolve(), (
        out
    )  # the copy, not the tree
    return out[1]


def test_the_builds_version_file_is_read_first(tmp_path: Path) -> None:
    _copy_package(tmp_path, "version = '9.8.7'\n")
    assert _version_of(tmp_path) == "9.8.7"


@pytest.mark.slow
def test_another_copys_metadata_is_not_taken_for_this_ones(tmp_path: Path) -> None:
    """An installed dpdesk (an editable install of another checkout, say) is not this copy's version: a copy with
    no build record says the fallback, which is a development version."""
    _copy_package(tmp_path, None)
    site = tmp_path / "elsewhere"
    info = site / "dpdesk-5.5.5.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dpdesk\nVersion: 5.5.5\n", encoding="utf-8")
    (info / "direct_url.json").write_text(
        json.dumps({"url": (tmp_path / "another-checkout").as_uri(), "dir_info": {"editable": True}}),
        encoding="utf-8",
    )
    out = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            (
                f"import sys; sys.path[:0] = [{str(tmp_path)!r}, {str(site)!r}]; "
                "import importlib.metadata as m; import dpdesk; print(m.version('dpdesk')); print(dpdesk.__version__)"
            ),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split("\n")
    assert out[0] == "5.5.5"  # the metadata is found ...
    assert out[1] == dpdesk.FALLBACK_VERSION  # ... and not taken
    assert dpdesk.is_development_version(out[1])


@pytest.mark.slow
def test_the_metadata_of_this_copys_install_is_read(tmp_path: Path) -> None:
    """A copy installed editable (its folder named in direct_url.json) without a version file: its metadata."""
    _copy_package(tmp_path, None)
    info = tmp_path / "dpdesk-4.3.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dpdesk\nVersion: 4.3.2\n", encoding="utf-8")
    (info / "direct_url.json").write_text(
        json.dumps({"url": tmp_path.as_uri(), "dir_info": {"editable": True}}), encoding="utf-8"
    )
    assert _version_of(tmp_path) == "4.3.2"


def test_pyproject_fallback_is_the_packages() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["hatch"]["version"]["fallback-version"] == dpdesk.FALLBACK_VERSION
    assert project["tool"]["hatch"]["build"]["hooks"]["vcs"]["version-file"] == "dpdesk/_version.py"
    assert "version" in project["project"]["dynamic"] and "version" not in project["project"]


@pytest.mark.parametrize(
    ("version", "dev"),
    [
        ("0.2.0", False),
        ("1.10.3", False),
        ("0.3.0rc1", False),
        ("0.2.0.dev0", True),
        ("0.2.1.dev3+g1a2b3c4", True),
        ("0.2.0+d20261128", True),
        ("0.2.0.dev429+g58f141bbc", True),
        ("unknown", True),
    ],
)
def test_development_builds_are_told_apart(version: str, dev: bool) -> None:
    assert dpdesk.is_development_version(version) is dev


@pytest.mark.slow
def test_dpdesk_version_prints_the_packages_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "dpdesk", "--version"], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == f"dpdesk {dpdesk.__version__}"


@pytest.mark.slow
def test_the_report_the_package_and_each_entry_carry_the_version(tmp_path: Path, dpdesk_home: Path) -> None:
    from dpdesk.core.publish.review import review
    from dpdesk.core.release.steps import release
    from tests.core.test_package import plan, planted

    data = planted(tmp_path)
    out = tmp_path / "pkg"
    release(plan(), data, dpdesk_home, out)
    version = dpdesk.__version__
    pages = PdfReader(str(out / "report.pdf")).pages
    assert all(f"dpdesk {version}" in p.extract_text() for p in pages)  # each page's footer
    package = json.loads((out / "ledger.json").read_text(encoding="utf-8"))
    assert package["entries"] and all(e["dpdesk_version"] == version for e in package["entries"])
    (ledger_file,) = dpdesk_home.rglob(f"{package['dataset']}.jsonl")
    entries = [json.loads(line) for line in ledger_file.read_text(encoding="utf-8").splitlines()]
    assert {e["type"] for e in entries} >= {"settings", "spend", "package"}
    assert all(e["dpdesk_version"] == version for e in entries)
    assert review(out).intact  # the entries' hashes cover the field
