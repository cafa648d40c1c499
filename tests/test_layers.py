"""The layers are enforced, not only described: import-linter's contracts in pyproject.toml must all be kept.

The command line (which also starts the app) over the app over the services over the engine; the services
import no Qt and no argument parser; no Qt in the engine; noise only through the OpenDP adapter
(``dpdesk.core.dp.mechanisms``); nothing on the release path imports the simulations.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def lint(config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this tree's dpdesk, whatever is installed
    return subprocess.run(
        [str(LINT), "--config", str(config), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )


def test_every_layer_contract_is_kept() -> None:
    r = lint(ROOT / "pyproject.toml")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "7 kept, 0 broken" in r.stdout


def test_a_broken_contract_is_reported(tmp_path: Path) -> None:
    """The check can fail: a contract that today's code breaks (the release path does use the adapter)."""
    config = tmp_path / "broken.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "dpdesk"\n\n[[tool.importlinter.contracts]]\nname = "x"\n'
        'type = "forbidden"\nsource_modules = ["dpdesk.core.release.steps"]\nforbidden_modules = ["dpdesk.core.dp.mechanisms"]\n',
        encoding="utf-8",
    )
    r = lint(config)
    assert r.returncode != 0 and "dpdesk.core.release.steps -> dpdesk.core.dp.mechanisms" in r.stdout


def test_every_engine_wing_is_on_the_release_path_list_unless_it_simulates() -> None:
    """A new wing of the engine is covered by the simulations contract unless it is the previews, and it has its
    place in the wings' layers; the engine has no module outside its wings (but its public API)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c.get("forbidden_modules") == ["dpdesk.core.preview"]]
    (wings,) = [c for c in contracts if c["type"] == "layers" and c["layers"][0].startswith("dpdesk.core.")]
    listed = set(contract["source_modules"])
    core = ROOT / "dpdesk" / "core"
    assert [p.name for p in core.glob("*.py")] == ["__init__.py"]
    packages = {f"dpdesk.core.{p.name}" for p in core.iterdir() if (p / "__init__.py").exists()}
    assert packages - {"dpdesk.core.preview"} == listed
    assert set(wings["layers"]) == packages


def _imports_from_dpdesk() -> list[tuple[str, int, str, str]]:
    """(importing file, line, module, name) for every ``from dpdesk... import name`` in dpdesk/ and tests/."""
    import ast

    out = []
    for path in sorted([*(ROOT / "dpdesk").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and (node.module or "").startswith("dpdesk")
            ):
                for a in node.names:
                    out.append((str(path.relative_to(ROOT)), node.lineno, node.module or "", a.name))
    return out


def _wing(module: str) -> str:
    """The wing of an engine module (``dpdesk.core.ledger``), or the layer of any other (``dpdesk.services``)."""
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[:2] == ["dpdesk", "core"] and len(parts) > 3 else ".".join(parts[:2])


def private_imports_across_wings(found: list[tuple[str, int, str, str]]) -> list[str]:
    return [
        f"{f}:{line} imports {name} from {module}"
        for f, line, module, name in found
        if f.startswith("dpdesk/")
        and name.startswith("_")
        and not name.startswith("__")
        and name != "_"  # gettext's name for the translation function
        and _wing(module) != _wing(f.removesuffix(".py").replace("/", "."))
    ]


def test_no_private_name_is_imported_across_wings() -> None:
    """A name with a leading underscore is its module's own business: another wing of the engine (or another layer)
    never imports one; what it needs is made public where it lives."""
    assert private_imports_across_wings(_imports_from_dpdesk()) == []


def test_the_private_name_scan_can_fail() -> None:
    found = [
        ("dpdesk/core/plan/reader.py", 1, "dpdesk.core.model.spec", "_check_keys"),
        ("dpdesk/core/ledger/book.py", 2, "dpdesk.core.ledger.entries", "_private_but_same_wing"),
        ("dpdesk/cli/release.py", 3, "dpdesk.i18n", "_"),
    ]
    assert private_imports_across_wings(found) == [
        "dpdesk/core/plan/reader.py:1 imports _check_keys from dpdesk.core.model.spec"
    ]


def test_no_module_is_a_re_export_shell() -> None:
    """Every name is imported from the module that defines it (or from a package's ``__init__``, its public face, or
    is a submodule): no module passes on names it only imports (plan.py once re-exported 84). The one facade is the
    statistics' kit (``dp/statistics/kit.py``), the documented list of what a statistic may use."""
    import ast
    import importlib.util

    defined: dict[str, set[str] | None] = {}

    def names_of(module: str) -> set[str] | None:
        if module not in defined:
            spec = importlib.util.find_spec(module)
            if spec is None or spec.origin is None or spec.origin.endswith("__init__.py"):
                defined[module] = None  # a package: its __init__ is its public face
            else:
                tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
                out: set[str] = set()
                for node in tree.body:
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        out.add(node.name)
                    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.If, ast.Try)):
                        out |= {
                            n.id
                            for n in ast.walk(node)
                            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                        }
                        out |= {
                            n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                        }
                defined[module] = out
        return defined[module]

    passed_on = []
    for f, line, module, name in _imports_from_dpdesk():
        own = names_of(module)
        if own is None or name in own or module == "dpdesk.core.dp.statistics.kit":
            continue
        if module == "dpdesk.i18n" or not module.startswith("dpdesk.core"):
            continue  # the engine's wings are checked; i18n's _ is defined by assignment from gettext
        passed_on.append(f"{f}:{line} imports {name} from {module}, which only imports it")
    assert passed_on == []
