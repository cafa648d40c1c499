"""The mutation check's table (tools/mutation/mutants.py) against the current source: no mutant may rot silently.

Fast and without subprocesses: every snippet occurs exactly once in its file, every mutated file still
compiles, and every test a mutant names exists. Running the mutants is ``python tools/mutation/mutants.py``.
"""

from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT
from tools.mutation.mutants import MUTANTS, Mutant, check_snippets


@pytest.mark.slow
def test_every_snippet_occurs_exactly_once_and_every_mutant_compiles() -> None:
    assert check_snippets(ROOT) == []


@pytest.mark.slow
@pytest.mark.parametrize("m", MUTANTS, ids=lambda m: m.id)
def test_the_mutant_changes_its_file_and_names_tests_that_exist(m: Mutant) -> None:
    source = (ROOT / m.file).read_text(encoding="utf-8")
    assert source.count(m.old) == 1, f"{m.id}: update the snippet in tools/mutation/mutants.py"
    mutated = source.replace(m.old, m.new, 1)
    if m.file.endswith(".py"):
        assert ast.dump(ast.parse(mutated)) != ast.dump(ast.parse(source)), (
            f"{m.id} changes nothing but layout"
        )
    else:  # a shell script or data file of the build (build_scripts/linux/)
        assert mutated != source, f"{m.id} changes nothing"
    assert m.tests, f"{m.id} names no test"
    for arg in m.args():
        path, _, name = arg.partition("::")
        file = ROOT / path
        assert file.is_file(), f"{m.id}: {path} does not exist"
        if name:  # the test function (or class) is defined in that file
            top = name.split("::")[0].split("[")[0]  # a parametrized test: its function
            defined = {
                n.name
                for n in ast.parse(file.read_text(encoding="utf-8")).body
                if isinstance(n, (ast.FunctionDef, ast.ClassDef))
            }
            assert top in defined, f"{m.id}: {top} is not defined in {path}"
