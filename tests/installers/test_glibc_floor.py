"""Issue 25 item 2: build_scripts/check_glibc_floor.py fails a bundle that needs a newer C or C++ runtime than the
floor (Ubuntu 22.04), on real ELF files: this system's own libraries, copied into a folder as a bundle would hold
them. The oracle is independent of the checker: ``objdump -T`` (the versions of the undefined dynamic symbols),
where the checker reads ``readelf -VW``'s version needs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "build_scripts" / "check_glibc_floor.py"

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF and glibc"),
    pytest.mark.skipif(not (shutil.which("readelf") and shutil.which("objdump")), reason="binutils needed"),
]


def floor(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(folder), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def needed(path: Path, family: str) -> tuple[int, ...]:
    """The highest FAMILY_x.y of the symbols ``path`` imports, from objdump -T (``*UND*`` lines)."""
    text = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True, check=True).stdout
    found = [
        tuple(int(x) for x in m.group(1).split("."))
        for line in text.splitlines()
        if "*UND*" in line
        for m in [re.search(rf"\b{family}_(\d+(?:\.\d+)*)\b", line)]
        if m
    ]
    assert found, f"{path} imports no {family}_ symbol"
    return max(found)


def system_library(pattern: str, family: str, limit: int = 3 << 20) -> Path:
    """A real library of this system (at most ``limit`` bytes) whose imports include a FAMILY_ version."""
    text = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    for m in re.finditer(r"=> (\S+)$", text, re.M):
        p = Path(m.group(1)).resolve()
        if re.match(pattern, p.name) and p.is_file() and p.stat().st_size <= limit:
            vr = subprocess.run(
                ["readelf", "-VW", str(p)], capture_output=True, text=True, check=False
            ).stdout
            if f"Name: {family}_" in vr.split("Version needs section", 1)[-1]:
                return p
    pytest.skip(f"no library matching {pattern} importing {family}_ symbols here")


def shown(v: tuple[int, ...]) -> str:
    return ".".join(map(str, v))


def below(v: tuple[int, ...]) -> str:
    """The version just below ``v`` at its last component (2.34 for 2.35; 3.4.29 for 3.4.30)."""
    assert v[-1] > 0, v
    return shown((*v[:-1], v[-1] - 1))


@pytest.mark.parametrize(
    ("pattern", "family", "option"),
    [(r"^libz\.so", "GLIBC", "--glibc"), (r"^lib\w+\.so", "GLIBCXX", "--glibcxx")],
)
def test_a_floor_below_what_a_real_library_needs_fails(
    tmp_path: Path, pattern: str, family: str, option: str
) -> None:
    lib = system_library(pattern, family)
    bundle = tmp_path / "bundle"
    (bundle / "_internal").mkdir(parents=True)
    shutil.copy2(lib, bundle / "_internal" / lib.name)
    want = needed(lib, family)
    high = ["--glibc", "9.99", "--glibcxx", "3.4.999", "--cxxabi", "1.3.999", "--gcc", "99.0.0"]
    ok = floor(bundle, *high, option, shown(want))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"{family}_{shown(want)}" in ok.stdout  # the summary names the highest need
    bad = floor(bundle, *high, option, below(want))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert f"_internal/{lib.name} needs {family}_{shown(want)}" in bad.stdout
    assert f"above the floor's {family}_{below(want)}" in bad.stdout


@pytest.mark.slow
def test_the_hosts_cxx_runtime_in_the_bundle_fails_whatever_it_needs(tmp_path: Path) -> None:
    """libstdc++.so.6 / libgcc_s.so.1 / libexpat.so.1 come from the user's system: a bundled copy fails the
    check even when the limits are high enough for what it imports."""
    lib = system_library(r"^libstdc\+\+\.so\.6", "GLIBC", limit=8 << 20)
    (tmp_path / "_internal").mkdir()
    shutil.copy2(lib, tmp_path / "_internal" / "libstdc++.so.6")
    r = floor(tmp_path, "--glibc", "9.99")
    assert r.returncode == 1 and "_internal/libstdc++.so.6 is bundled" in r.stdout, r.stdout
    assert floor(tmp_path, "--glibc", "9.99", "--forbid", "libexpat.so.1").returncode == 0


def test_bad_usage_is_a_message_and_exit_2(tmp_path: Path) -> None:
    r = floor(tmp_path / "missing")
    assert r.returncode == 2 and "is not a folder" in r.stderr and "Traceback" not in r.stderr
    r = floor(tmp_path, "--glibc", "two")
    assert r.returncode == 2 and "--glibc 'two' is not a version like 2.35" in r.stderr
