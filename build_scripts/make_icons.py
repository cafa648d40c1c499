"""Render ``resources/icons/dpdesk.svg`` into every icon format the installers need.

    python build_scripts/make_icons.py              # writes resources/icons/dpdesk.png, .ico, .icns
    python build_scripts/make_icons.py --png-dir D  # also D/<size>.png for 16..1024 (Linux icon themes)

Qt renders the SVG (QSvgRenderer from PySide6.QtSvg, part of PySide6-Essentials); the .ico and .icns
containers are written here from PNG images (both formats allow PNG-compressed entries: Windows Vista+,
macOS 10.7+), so no other imaging library or platform tool (iconutil) is needed. The outputs are
committed; run this again after editing the SVG.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "icons" / "dpdesk.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512, 1024)
ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 128, 256)
# ICNS element types holding PNG data, and their pixel sizes (the @2x types are the Retina variants).
ICNS_TYPES = (
    (b"icp4", 16),
    (b"ic11", 32),
    (b"icp5", 32),
    (b"ic12", 64),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic13", 256),
    (b"ic08", 256),
    (b"ic14", 512),
    (b"ic09", 512),
    (b"ic10", 1024),
)
LINUX_PNG = 256  # resources/icons/dpdesk.png: the window and .desktop icon


def render(svg: Path, sizes: set[int]) -> dict[int, bytes]:
    """PNG bytes of the SVG rendered at each size (square, transparent background)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 - Qt needs one
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    out: dict[int, bytes] = {}
    for size in sorted(sizes):
        img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(0)
        painter = QPainter(img)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        img = img.convertToFormat(QImage.Format.Format_ARGB32)
        data = QByteArray()
        buf = QBuffer(data)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        if not img.save(buf, "PNG"):
            raise SystemExit(f"could not encode the {size}px PNG")
        buf.close()
        out[size] = bytes(data.data())
    return out


def ico(pngs: dict[int, bytes], sizes: tuple[int, ...] = ICO_SIZES) -> bytes:
    """A Windows .ico holding one PNG-compressed 32-bit image per size."""
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for s in sizes:
        data = pngs[s]
        dim = 0 if s >= 256 else s  # 0 means 256
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset + len(blobs))
        blobs += data
    return header + entries + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    """An Apple .icns: the 'icns' header, then (type, length, PNG) elements, lengths big-endian."""
    body = b"".join(kind + struct.pack(">I", 8 + len(pngs[s])) + pngs[s] for kind, s in ICNS_TYPES)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--svg", type=Path, default=SVG)
    p.add_argument("--out", type=Path, default=SVG.parent, help="where dpdesk.png/.ico/.icns go")
    p.add_argument("--png-dir", type=Path, help="also write <size>.png for every size here")
    args = p.parse_args(argv)
    needed = set(PNG_SIZES) | set(ICO_SIZES) | {s for _, s in ICNS_TYPES}
    pngs = render(args.svg, needed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dpdesk.png").write_bytes(pngs[LINUX_PNG])
    (args.out / "dpdesk.ico").write_bytes(ico(pngs))
    (args.out / "dpdesk.icns").write_bytes(icns(pngs))
    written = [args.out / n for n in ("dpdesk.png", "dpdesk.ico", "dpdesk.icns")]
    if args.png_dir:
        args.png_dir.mkdir(parents=True, exist_ok=True)
        for s in PNG_SIZES:
            (args.png_dir / f"{s}.png").write_bytes(pngs[s])
        written.append(args.png_dir)
    for w in written:
        size = w.stat().st_size if w.is_file() else sum(f.stat().st_size for f in w.iterdir())
        print(f"{w}: {size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
