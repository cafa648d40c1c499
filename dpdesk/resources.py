"""Find files under ``resources/``: in a PyInstaller bundle, an installed wheel, or the source tree."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    """The resources folder: ``sys._MEIPASS/resources``, ``dpdesk/_resources`` (wheel) or ``<repo>/resources``."""
    bundle = getattr(sys, "_MEIPASS", None)
    candidates = []
    if bundle:
        candidates.append(Path(bundle) / "resources")
    here = Path(__file__).resolve().parent
    candidates += [here / "_resources", here.parent / "resources"]
    for c in candidates:
        if c.is_dir():
            return c
    return candidates[-1]


def resource(*parts: str) -> Path:
    """A path inside the resources folder; paths that would leave it are refused."""
    root = resources_dir().resolve()
    path = root.joinpath(*parts).resolve()
    if root != path and root not in path.parents:
        raise ValueError(f"resource path {'/'.join(parts)!r} leaves the resources folder")
    return path
