"""The README's quick start, done in the order written on a fresh home (issue 15, item 8).

The GUI step (open the sample, open its plan, Release) is stood in for by a release of the same sample through
the service the app uses, with the plan as the app parses it; then every command of the quick start's command-line
block runs as written (``.venv/bin/dpdesk`` becomes this interpreter's ``-m dpdesk``), in a folder where the
README's relative paths resolve, and each must succeed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLES

PLAN = SAMPLES / "cps_wages_plan.json"
DATA = SAMPLES / "census_sample.csv"


def quick_start_commands() -> list[list[str]]:
    """The dpdesk command lines of the quick start's blocks, in order, as argument lists (environment first)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if any(w.endswith("bin/dpdesk") for w in words):
                commands.append(words)
    return commands


def _stand_in_for_the_app(home: Path) -> None:
    """What Release in the app does with the sample: the plan as the app parses it, the app's check and release."""
    from dpdesk.core.common.progress import Progress
    from dpdesk.gui.state import AppState
    from dpdesk.services.release import CheckRequest, ReleaseRequest, check_table, release_plan

    state = AppState(home)
    state.load_plan_data(json.loads(PLAN.read_text(encoding="utf-8-sig")), PLAN)
    assert state.plan is not None, state.plan_error
    checked = check_table(CheckRequest(state.plan, DATA), Progress())
    request = ReleaseRequest(state.plan, DATA, home, None, table=checked.table, accept_data_problems=True)
    result = release_plan(request, Progress())
    assert result.entry.charged.epsilon == pytest.approx(0.9)


@pytest.mark.slow
def test_the_quick_start_works_in_the_order_written(dpdesk_home: Path, tmp_path: Path) -> None:
    commands = quick_start_commands()
    # the app's step, then the command line's (the first block opens the app: skipped, stood in for)
    cli = [c for c in commands if "open" not in c]
    assert len(cli) >= 3 and any("release" in c for c in cli), commands
    _stand_in_for_the_app(dpdesk_home)
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "resources").symlink_to(ROOT / "resources", target_is_directory=True)
    for words in cli:
        env = {**os.environ, "DPDESK_HOME": str(dpdesk_home)}
        while "=" in words[0] and not words[0].startswith("-"):
            name, value = words.pop(0).split("=", 1)
            env[name] = value
        assert words[0].endswith("bin/dpdesk"), words
        r = subprocess.run(
            [sys.executable, "-m", "dpdesk", *words[1:]],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert r.returncode == 0, (words, r.stdout, r.stderr)
    assert (work / "demo-release" / "release.csv").is_file()
    assert (work / "fitted_plan.json").is_file()  # the fitted plan the release used
