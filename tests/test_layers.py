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
