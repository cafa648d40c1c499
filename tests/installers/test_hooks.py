"""PyInstaller applies a hook by its file name (``hook-<module>.py``): each of dpdesk's hooks must name a module
that exists, or it silently never runs (the statistics' hook once named a module that had moved, which would have
left four statistics out of the frozen app)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOKS = sorted((ROOT / "build_scripts" / "hooks").glob("hook-*.py"))


def test_there_are_hooks() -> None:
    assert any(h.name.startswith("hook-dpdesk.") for h in HOOKS)


@pytest.mark.parametrize("hook", HOOKS, ids=[h.name for h in HOOKS])
def test_each_hook_names_a_module_that_exists(hook: Path) -> None:
    module = hook.name.removeprefix("hook-").removesuffix(".py")
    assert importlib.util.find_spec(module) is not None, f"{hook.name} names {module}, which does not exist"


def test_the_statistics_hook_collects_the_registry_s_package() -> None:
    from dpdesk.core.dp import statistics

    hook = ROOT / "build_scripts" / "hooks" / f"hook-{statistics.__name__}.py"
    assert hook.exists() and f'collect_submodules("{statistics.__name__}")' in hook.read_text(
        encoding="utf-8"
    )
