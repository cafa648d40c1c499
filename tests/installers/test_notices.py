"""Issue 25 item 5: the committed third-party notices (read by the About box in a source run, regenerated into
the bundle by the build) name every distribution dpdesk needs at run time, with a licence for each; the Qt
LGPL notice and the licence texts it refers to are there."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LICENSES = ROOT / "resources" / "licenses"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "third_party_notices", ROOT / "build_scripts" / "third_party_notices.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_runtime_distribution_is_in_the_committed_notices() -> None:
    mod = _script()
    text = (LICENSES / "THIRD_PARTY_NOTICES.txt").read_text(encoding="utf-8")
    dists = mod.runtime_closure()
    names = {d.metadata["Name"] for d in dists}
    assert {"PySide6_Essentials", "opendp", "cryptography", "polars", "numpy", "matplotlib"} <= names
    stale = [n for n in sorted(names) if f"\n  {n} " not in text]
    assert not stale, f"not in THIRD_PARTY_NOTICES.txt (python build_scripts/third_party_notices.py): {stale}"
    assert "no licence metadata" not in text


def test_the_qt_notice_and_the_licence_texts_it_names_are_there() -> None:
    notice = (LICENSES / "QT_LGPL_NOTICE.txt").read_text(encoding="utf-8")
    for name in ("LGPL-3.0.txt", "GPL-3.0.txt"):
        assert name in notice
        assert "GNU" in (LICENSES / name).read_text(encoding="utf-8")[:400]
    assert "codesign --force --deep --sign - dpdesk.app" in notice and "libQt6" in notice
