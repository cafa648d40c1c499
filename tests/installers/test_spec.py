"""The PyInstaller spec keeps what the team ledger needs (issue 27): psycopg's libpq binding as a hidden import, and
Python's ``ssl`` module, which psycopg imports before it loads libpq (a bundle without ``_ssl`` fails to import
psycopg, so every team command of the installed app would fail). Read from the spec's text, no build needed."""

from __future__ import annotations

import ast
import re

from tests.conftest import ROOT

SPEC = ROOT / "build_scripts" / "dpdesk.spec"


def _list(name: str) -> ast.List:
    tree = ast.parse(SPEC.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            assert isinstance(node.value, ast.List)
            return node.value
    raise AssertionError(f"{name} not found in {SPEC}")


def test_the_bundle_keeps_pythons_ssl_module_that_psycopg_imports() -> None:
    patterns = []
    for item in _list("TRIMS").elts:
        assert isinstance(item, ast.Tuple)
        if isinstance(item.elts[1], ast.Constant):  # a pattern written as one string (not one joined with +)
            patterns.append(str(item.elts[1].value))
    assert patterns, "no trims read from the spec"
    for kept in ("lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so", "python3.11/lib-dynload/_ssl.so"):
        trimmed_by = [p for p in patterns if re.search(p, kept)]
        assert not trimmed_by, (kept, trimmed_by)
    # the test can fail: a trim of _hashlib is in the spec and is matched the same way
    assert any(re.search(p, "lib-dynload/_hashlib.cpython-311-x86_64-linux-gnu.so") for p in patterns)


def test_the_bundle_names_psycopgs_libpq_binding() -> None:
    hidden = {e.value for e in _list("HIDDEN").elts if isinstance(e, ast.Constant)}
    assert {"psycopg_binary", "psycopg_binary.pq", "psycopg_binary._psycopg"} <= hidden
