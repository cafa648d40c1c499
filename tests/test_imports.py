"""The engine is Qt-free and ``import dpdesk`` (and the CLI module) stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_core_never_imports_qt_or_the_gui() -> None:
    for path in (ROOT / "dpdesk" / "core").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                assert not n.startswith(("PySide6", "PyQt", "shiboken", "dpdesk.gui", "dpdesk.cli")), (
                    path,
                    n,
                )


def test_release_noise_never_uses_numpy_random_or_random() -> None:
    for name in (
        "dp/mechanisms.py",
        "dp/aggregates.py",
        "dp/queries.py",
        "ledger/book.py",
        "dp/accounting.py",
    ):
        text = (ROOT / "dpdesk" / "core" / name).read_text(encoding="utf-8")
        assert "np.random" not in text and "import random" not in text, name


def test_importing_dpdesk_and_its_cli_loads_no_heavy_library() -> None:
    code = (
        "import sys, dpdesk, dpdesk.cli, dpdesk.core.plan.reader; "
        "print(','.join(m for m in ('opendp', 'polars', 'numpy', 'PySide6', 'matplotlib', 'reportlab') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow
def test_budget_command_loads_opendp_without_its_prelude_and_nothing_for_the_output(tmp_path: Path) -> None:
    """``dpdesk budget`` on the sample plan (delta > 0: the zCDP column) loads OpenDP's core, not its prelude.

    The prelude pulls in polars and OpenDP's numpy/scikit-learn extras (0.3 s); no column of the output needs them.
    The zCDP figures must still be OpenDP's: its measurements module is loaded, and the printed zCDP epsilon is
    the one :func:`dpdesk.core.dp.mechanisms.rho_to_epsilon` gives in a process that did load the prelude.
    """
    plan = ROOT / "resources" / "samples" / "cps_wages_plan.json"
    code = (
        "import sys, runpy\n"
        "sys.argv = ['dpdesk', 'budget', sys.argv[1]]\n"
        "from dpdesk.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('polars', 'opendp.prelude', 'opendp.extras', 'matplotlib', 'reportlab', 'PySide6', 'pandas')\n"
        "print('LOADED=' + ','.join(m for m in heavy if m in sys.modules))\n"
        "print('OPENDP=' + str('opendp.measurements' in sys.modules))\n"
    )
    env = {**__import__("os").environ, "DPDESK_HOME": str(tmp_path / "home")}
    out = subprocess.run(
        [sys.executable, "-c", code, str(plan)], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert "LOADED=\n" in out, out[-300:]
    assert "OPENDP=True" in out
    check = (
        "import opendp.prelude as dp; dp.enable_features('contrib')\n"
        "from dpdesk.core.dp import mechanisms as m\n"
        "g = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0)\n"
        "ref = float(dp.c.make_zCDP_to_approxDP(g).map(1.0).epsilon(1e-6))\n"
        "print(ref == m.rho_to_epsilon(0.5, 1e-6), ref)\n"
    )
    same = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True).stdout
    assert same.startswith("True"), same
