"""The engine is Qt-free and ``import dpdesk`` (and the CLI module) stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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
    for name in ("mechanisms.py", "aggregates.py", "queries.py", "ledger.py", "accounting.py"):
        text = (ROOT / "dpdesk" / "core" / name).read_text(encoding="utf-8")
        assert "np.random" not in text and "import random" not in text, name


def test_importing_dpdesk_and_its_cli_loads_no_heavy_library() -> None:
    code = (
        "import sys, dpdesk, dpdesk.cli, dpdesk.core.plan; "
        "print(','.join(m for m in ('opendp', 'polars', 'numpy', 'PySide6', 'matplotlib', 'reportlab') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
