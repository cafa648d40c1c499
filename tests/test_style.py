"""The style is enforced, not only described: ruff's rules and formatter, and mypy --strict on the engine,
the services and the app.

The configuration is in pyproject.toml ([tool.ruff], [tool.mypy]); the same checks run in pre-commit and in the
pull-request workflow. Each check is shown able to fail on a planted violation.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
        check=False,
    )


def test_ruff_rules_hold() -> None:
    r = run("ruff", "check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_the_code_is_as_the_formatter_writes_it() -> None:
    r = run("ruff", "format", "--check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_no_formatter_suppressions() -> None:
    walls = [
        f"{p.relative_to(ROOT)}:{i}"
        for top in ("dpdesk", "tests", "build_scripts", "benchmarks", "docs")
        for p in (ROOT / top).rglob("*.py")
        if "out" not in p.relative_to(ROOT).parts and p.name != "test_style.py"
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "fmt: skip" in line.replace('# fmt: skip"""', "") or "fmt: off" in line
    ]
    assert walls == []


@pytest.mark.slow
def test_mypy_strict_on_the_engine() -> None:
    r = run("mypy", "--no-incremental")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "Success" in r.stdout


@pytest.mark.slow
def test_the_checks_can_fail(tmp_path: Path) -> None:
    """A planted print in the engine, a badly formatted line and an untyped function are each reported (the
    untyped function in the command line too: it is under mypy --strict)."""
    import tomllib

    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (tmp_path / "dpdesk").mkdir()
    (tmp_path / "dpdesk" / "__init__.py").write_text("")
    for folder in tomllib.loads(config)["tool"]["mypy"]["files"]:  # mypy reads each folder its files name
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    bad = tmp_path / "dpdesk" / "core"
    (bad / "bad.py").write_text("def f(x):\n    print( x )\n    return x\n")
    (tmp_path / "dpdesk" / "cli").mkdir(exist_ok=True)
    (tmp_path / "dpdesk" / "cli" / "untyped.py").write_text("def g(x):\n    return x\n")
    (tmp_path / "pyproject.toml").write_text(config)
    assert run("ruff", "check", "--no-cache", ".", cwd=tmp_path).returncode == 1
    assert run("ruff", "format", "--check", "--no-cache", ".", cwd=tmp_path).returncode == 1
    r = run("mypy", "--no-incremental", cwd=tmp_path)
    assert r.returncode == 1 and "no-untyped-def" in r.stdout, r.stdout
    assert "dpdesk/cli/untyped.py" in r.stdout, r.stdout
