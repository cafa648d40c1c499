"""Issue 25 items 3 and 6: the tarball's menu entry survives any install path, and the desktop knows dpdesk's
files. build_scripts/linux/install-desktop-entry.sh is run from a folder whose name holds a space, %, $, a
backquote, both quotes, a backslash and Chinese letters, into a data folder with such characters too; then a real
implementation of the Desktop Entry spec, GLib's (``gio launch``), starts the entry with a file, and the program
that runs must be the one in that folder, given that file. The Exec line is also parsed here by the spec's
rules, independently. The shared MIME database (update-mime-database, then ``gio info``) must type a release
package's ledger.json and a plan as dpdesk's, and leave other JSON alone.

Before (the script written by build_linux.sh): the path went into Exec="..." with only & | \\ escaped for sed,
so a $, backquote or quote broke the entry (GLib refuses to load it; a shell expands the $), and % was read as
a field code."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "build_scripts" / "linux"
WEIRD = "dp desk %f 100% $HOME `id` \"q\" 'a' b\\c 中文"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not shutil.which("gio"), reason="gio (libglib2.0-bin) needed"),
]


def unescape_string(value: str) -> str:
    """The key file's string escapes (\\s \\n \\t \\r \\\\)."""
    return re.sub(
        r"\\(.)", lambda m: {"s": " ", "n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), value
    )


def exec_argv(value: str) -> list[str]:
    """The Exec key's arguments by the Desktop Entry spec: quoted arguments with \\" \\` \\$ \\\\ escapes, %% a
    literal %, other % field codes kept as they are."""
    text, argv, i = unescape_string(value), [], 0
    while i < len(text):
        if text[i] == " ":
            i += 1
            continue
        arg = ""
        if text[i] == '"':
            i += 1
            while text[i] != '"':
                assert text[i] not in "`$", f"{text[i]} unescaped inside quotes in {value!r}"
                if text[i] == "\\":
                    assert text[i + 1] in '"`$\\', f"bad escape in {value!r}"
                    i += 1
                arg += text[i]
                i += 1
            i += 1
        else:
            while i < len(text) and text[i] != " ":
                assert text[i] not in "\"'`$\\", f"reserved character unquoted in {value!r}"
                arg += text[i]
                i += 1
        argv.append(arg if arg.startswith("%") and len(arg) == 2 and arg != "%%" else arg.replace("%%", "%"))
    return argv


def entry(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[Desktop Entry]"
    return dict(line.split("=", 1) for line in lines[1:] if "=" in line)


@pytest.fixture
def installed(tmp_path: Path) -> tuple[Path, Path, Path, dict[str, str]]:
    """(bundle folder, data folder, record file, environment) after install-desktop-entry.sh ran."""
    bundle = tmp_path / WEIRD
    bundle.mkdir()
    record = tmp_path / "record.txt"
    fake = bundle / "dpdesk"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$0" "$@" > {str(record)!r}\n', encoding="utf-8")
    fake.chmod(0o755)
    for name in ("dpdesk.desktop", "dpdesk-mime.xml", "install-desktop-entry.sh"):
        shutil.copy2(LINUX / name, bundle / name)
    (bundle / "icons").mkdir()
    shutil.copy2(ROOT / "resources" / "icons" / "dpdesk.png", bundle / "icons" / "256.png")
    shutil.copy2(
        ROOT / "resources" / "icons" / "dpdesk.png", bundle / "dpdesk.png"
    )  # the tarball's older layout
    shutil.copy2(ROOT / "resources" / "icons" / "dpdesk.svg", bundle / "icons" / "dpdesk.svg")
    data = tmp_path / 'data $x `y` "z" 数据'
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(data),
        "XDG_DATA_DIRS": "/usr/share",
        "LANG": "C.UTF-8",
    }
    r = subprocess.run(
        [str(bundle / "install-desktop-entry.sh")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return bundle, data, record, env


def test_glib_launches_the_program_in_the_folder_with_the_file(
    installed: tuple[Path, Path, Path, dict[str, str]],
) -> None:
    bundle, data, record, env = installed
    desktop = data / "applications" / "dpdesk.desktop"
    target = bundle.parent / "a plan $1.json"
    target.write_text("{}", encoding="utf-8")
    r = subprocess.run(
        ["gio", "launch", str(desktop), str(target)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    for _ in range(100):  # gio starts the program and returns: wait for its record (no timing asserted)
        if record.exists() and record.read_text(encoding="utf-8").count("\n") >= 2:
            break
        subprocess.run(["sleep", "0.1"], check=True)
    assert record.read_text(encoding="utf-8").splitlines() == [str(bundle / "dpdesk"), str(target)]


def test_the_exec_line_follows_the_desktop_entry_spec(
    installed: tuple[Path, Path, Path, dict[str, str]],
) -> None:
    _bundle, data, _record, _env = installed
    desktop = data / "applications" / "dpdesk.desktop"
    keys = entry(desktop)
    argv = exec_argv(keys["Exec"])
    launcher = data / "dpdesk" / "dpdesk"
    assert argv == [str(launcher), "%f"]
    assert unescape_string(keys["TryExec"]) == str(launcher)
    assert os.access(launcher, os.X_OK)
    out = subprocess.run([str(launcher), "x y"], capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 0
    if shutil.which("desktop-file-validate"):
        v = subprocess.run(
            ["desktop-file-validate", str(desktop)], capture_output=True, text=True, check=False
        )
        assert v.returncode == 0 and not v.stdout.strip(), v.stdout
    assert (data / "icons" / "hicolor" / "256x256" / "apps" / "dpdesk.png").is_file()


@pytest.mark.skipif(not shutil.which("update-mime-database"), reason="shared-mime-info needed")
def test_the_desktop_types_a_ledger_and_a_plan_as_dpdesks(
    installed: tuple[Path, Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    _bundle, data, _record, env = installed
    assert (data / "mime" / "packages" / "dpdesk.xml").is_file()
    files = tmp_path / "files"
    (files / "package").mkdir(parents=True)
    ledger = files / "package" / "ledger.json"
    ledger.write_text(
        json.dumps({"dataset": "ds-0123", "head": {"seq": 1}, "entries": []}, indent=2), encoding="utf-8"
    )
    plan = files / "census plan.json"
    plan.write_bytes((ROOT / "resources" / "samples" / "cps_wages_plan.json").read_bytes())
    other = files / "other.json"
    other.write_text('{"name": "not dpdesk"}\n', encoding="utf-8")

    def mime(p: Path) -> str:
        r = subprocess.run(
            ["gio", "info", "-a", "standard::content-type", str(p)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        m = re.search(r"standard::content-type: (\S+)", r.stdout)
        assert m, r.stdout + r.stderr
        return m.group(1)

    assert mime(ledger) == "application/x-dpdesk-ledger"
    assert mime(plan) == "application/x-dpdesk-plan"
    assert mime(other) == "application/json"
    types = entry(data / "applications" / "dpdesk.desktop")["MimeType"].split(";")
    assert {"application/x-dpdesk-ledger", "application/x-dpdesk-plan"} <= set(types)
    assert "application/json" not in types  # not offered for every JSON file


def test_remove_takes_everything_out(installed: tuple[Path, Path, Path, dict[str, str]]) -> None:
    bundle, data, _record, env = installed
    r = subprocess.run(
        [str(bundle / "install-desktop-entry.sh"), "--remove"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    left = list(data.rglob("*dpdesk*"))
    assert not left, left


def test_a_line_break_in_the_path_is_refused(tmp_path: Path) -> None:
    bundle = tmp_path / "a\nb"
    bundle.mkdir()
    shutil.copy2(LINUX / "install-desktop-entry.sh", bundle / "install-desktop-entry.sh")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    r = subprocess.run(
        [str(bundle / "install-desktop-entry.sh")], capture_output=True, text=True, env=env, check=False
    )
    assert r.returncode == 2 and "line break" in r.stderr
    assert not (tmp_path / "data" / "applications").exists()
