"""The engine's public API (issue 12, item 5): ``dpdesk.core.__all__`` names what the services and the command
line use, each imported from its module on first use, so that ``import dpdesk.core`` costs nothing at start-up."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import dpdesk.core as core
from tests.conftest import ROOT


def test_every_public_name_is_its_modules_object() -> None:
    assert len(core.__all__) == len(set(core.__all__)) and set(core.__all__) == set(core._HOMES)
    for name in core.__all__:
        home = importlib.import_module(f"dpdesk.core.{core._HOMES[name]}")
        assert getattr(core, name) is getattr(home, name), name
    namespace: dict[str, object] = {}
    exec("from dpdesk.core import *", namespace)
    assert set(core.__all__) <= set(namespace)
    assert {"parse_plan", "Plan", "load_table", "Ledger", "budget_report", "write_release_dir"} <= set(
        core.__all__
    )


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        core.no_such_name  # noqa: B018 - the attribute access is the test
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_no_public_name_is_a_module_of_the_engine() -> None:
    """Importing ``dpdesk.core.release.steps`` sets ``dpdesk.core.release.steps`` to the module: a function of that name
    would change with the import order."""
    modules = {m.name for m in pkgutil.iter_modules(core.__path__)}
    assert "release" in modules and not modules & set(core.__all__)


def test_importing_the_engine_loads_none_of_its_modules() -> None:
    code = "import sys, dpdesk.core; print(sorted(m for m in sys.modules if m.startswith('dpdesk.core.')))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip() == "[]"
