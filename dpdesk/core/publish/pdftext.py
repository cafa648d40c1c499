"""The report's text in PDF: the fonts (DejaVu Sans; runs in Chinese in the bundled Droid Sans Fallback, which has
the TrueType outlines reportlab needs), text runs and markup that show control characters, the paragraph styles
and the tables. Shared by the release report and budget statement (``dpdesk.core.publish.report``), their charts
(``dpdesk.core.publish.pdf_charts``) and the synthetic table's section (``dpdesk.core.publish.synthetic_report``); it imports
none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from dpdesk.core.common.text import shown

LATIN = "DejaVuSans"
LATIN_BOLD = "DejaVuSans-Bold"
CJK = "DroidSansFallback"
_FONTS_READY = False
_LATIN_CMAP: set[int] = set()
_LATIN_WIDEST = [1000.0]  # the widest DejaVu Sans glyph, in thousandths of the font size


def _register_fonts() -> None:
    global _FONTS_READY  # noqa: PLW0603 - fonts are registered once per process
    if _FONTS_READY:
        return
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    ttf = _dejavu_folder()
    latin = TTFont(LATIN, str(ttf / "DejaVuSans.ttf"))
    pdfmetrics.registerFont(latin)
    pdfmetrics.registerFont(TTFont(LATIN_BOLD, str(ttf / "DejaVuSans-Bold.ttf")))
    from reportlab.lib.fonts import addMapping

    addMapping(LATIN, 0, 0, LATIN)
    addMapping(LATIN, 1, 0, LATIN_BOLD)
    addMapping(LATIN, 0, 1, LATIN)
    addMapping(LATIN, 1, 1, LATIN_BOLD)
    _LATIN_CMAP.update(latin.face.charToGlyph.keys())
    _LATIN_WIDEST[0] = float(max(latin.face.charWidths.values(), default=1000.0))
    _FONTS_READY = True


_CJK_READY = False


def _register_cjk() -> None:
    """The CJK font, registered when a report first needs it (parsing it takes 0.15 s; Latin-only reports
    never do)."""
    global _CJK_READY  # noqa: PLW0603 - fonts are registered once per process
    if _CJK_READY:
        return
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    from dpdesk.resources import resource

    pdfmetrics.registerFont(TTFont(CJK, str(resource("fonts", "DroidSansFallbackFull.ttf"))))
    _CJK_READY = True


def _dejavu_folder() -> Path:
    """matplotlib's bundled DejaVu fonts, found without importing matplotlib (a second of imports that the
    report, drawn with reportlab alone, does not need)."""
    import importlib.util

    spec = importlib.util.find_spec("matplotlib")
    if spec is None or spec.origin is None:  # pragma: no cover - matplotlib is a dependency
        raise ImportError("matplotlib's fonts are needed for the report")
    return Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf"


def text_runs(text: str) -> list[tuple[str, str]]:
    """``text`` (control characters made visible) split into runs of (font name, characters): the characters
    DejaVu lacks (CJK) in the CJK font, the others in DejaVu Sans. Fonts must be registered."""
    if text.isascii() and text.isprintable():  # no control character, every one in DejaVu: one run as it is
        return [(LATIN, text)] if text else []
    out: list[tuple[str, str]] = []
    run: list[str] = []
    in_cjk = False
    for ch in shown(text, keep_newlines=True):
        cjk = ord(ch) not in _LATIN_CMAP and not ch.isspace()
        if cjk != in_cjk and run:
            out.append((CJK if in_cjk else LATIN, "".join(run)))
            run = []
        in_cjk = cjk
        run.append(ch)
    if run:
        out.append((CJK if in_cjk else LATIN, "".join(run)))
    if any(font == CJK for font, _chunk in out):
        _register_cjk()
    return out


def markup(text: str) -> str:
    """Escape text for a Paragraph and set the characters DejaVu lacks (CJK) in the CJK font; control
    characters are made visible (user-supplied titles, names, labels and reasons pass here)."""
    return "".join(
        f'<font name="{CJK}">{escape(chunk)}</font>' if font == CJK else escape(chunk)
        for font, chunk in text_runs(text)
    )


#: Code notation in the engine's formula and derivation texts (stored in the ledger's traces, also printed by the
#: command line) and its mathematical form, applied in order to the text before it is escaped.
_MATH_WORDS: tuple[tuple[str, str], ...] = (
    (r"\bsqrt\(", "√("),
    (r"\be\^(?:epsilon|eps)\b", "e^ε"),
    (r"\b(?:epsilon|eps)\b", "ε"),
    (r"\bdelta\b", "δ"),
    (r"\bsigma\b", "σ"),
    (r"\brho\b", "ρ"),
    (r"\bPhi\(", "Φ("),
    (r"\bDu\b", "Δᵤ"),
    (r"\bD/2s\b", "Δ/(2s)"),
    (r"\bD\b", "Δ"),
    (r"(?<== )(?:sensitivity|敏感度)(?= /)", "Δ"),
    (r"(?<=\* )(?:sensitivity|敏感度)(?= /)", "Δ"),
    (r"\bL1\b", "L₁"),
    (r"\bL2\b", "L₂"),
    (r"\bqn\b", "q·n"),
    (r"\bproportional to\b", "∝"),
    (r"<=", "≤"),
    (r">=", "≥"),
    (r" \* ", " · "),
    (r" x ", " × "),
    (r"(?<=[\s(=,\[|])-(?=[\w(#|])", "−"),
    (r" - ", " − "),
    (r"(?<=\d)-(?=[a-z])", "−"),
    (r"(?<=\b[a-z])-(?=\d)", "−"),
)
#: After escaping: exponents as superscripts (a^b, a^(b), e^ε) and powers of ten (1e-07 as 10 to the −7).
_MATH_MARKS: tuple[tuple[str, str], ...] = (
    (r"\b(\d+(?:\.\d+)?)e-0*(\d+)\b", r"\1·10<super>−\2</super>"),
    (r"·10<super>(?=−\d+</super>)", "·10<super>"),
    (r"\^\(([^()]*)\)", r"<super>\1</super>"),
    (r"\^([\w.]+)", r"<super>\1</super>"),
)


def math_markup(text: str) -> str:
    """Paragraph markup of a formula or derivation written in code notation (``sqrt(2 ln(1.25/delta))``,
    ``exp(epsilon u(r) / (2 Du))``, ``<=``): typeset as mathematics, with Greek letters, operators, sub- and
    superscripts (DejaVu Sans has every glyph), escaped like :func:`markup`."""
    import re

    for pattern, repl in _MATH_WORDS:
        text = re.sub(pattern, repl, text)
    out = markup(text)
    for pattern, repl in _MATH_MARKS:
        out = re.sub(pattern, repl, out)
    return re.sub(r"\b1·10<super>", "10<super>", out)


def unbroken(markup_text: str) -> str:
    """Paragraph markup in which "ε = 0.2" (and δ, σ, ρ, Δ) is never split across lines: non-breaking spaces
    around the equals sign."""
    import re

    return re.sub(r"([εδσρΔ]) = ", "\\1\u00a0=\u00a0", markup_text)


def _styles() -> dict[str, Any]:
    from reportlab.lib import colors
    from reportlab.lib.styles import ParagraphStyle

    base = ParagraphStyle("body", fontName=LATIN, fontSize=9.5, leading=13)
    return {
        "body": base,
        "small": ParagraphStyle(
            "small", parent=base, fontSize=8, leading=10.5, textColor=colors.HexColor("#444444")
        ),
        "mono": ParagraphStyle(
            "mono", parent=base, fontSize=7, leading=9, textColor=colors.HexColor("#333333")
        ),
        "title": ParagraphStyle(
            "title", parent=base, fontName=LATIN_BOLD, fontSize=20, leading=26, spaceAfter=10
        ),
        "h1": ParagraphStyle(
            "h1", parent=base, fontName=LATIN_BOLD, fontSize=14, leading=18, spaceBefore=12, spaceAfter=6
        ),
        "h2": ParagraphStyle(
            "h2", parent=base, fontName=LATIN_BOLD, fontSize=11, leading=15, spaceBefore=10, spaceAfter=4
        ),
    }


def _p(text: str, style: Any, *, raw: bool = False) -> Any:
    from reportlab.platypus import Paragraph

    return Paragraph(text if raw else markup(text), style)


def _table(rows: list[list[Any]], widths: Sequence[float], st: dict[str, Any], header: bool = True) -> Any:
    from reportlab.lib import colors
    from reportlab.platypus import Table, TableStyle

    small = st["small"]
    cells = [
        [
            c if not isinstance(c, str) or _plain(c, w - 12) else _p(c, small)
            for c, w in zip(r, widths, strict=True)
        ]
        for r in rows
    ]
    t = Table(cells, colWidths=list(widths), repeatRows=1 if header else 0)
    style = [
        # a short Latin cell is a plain string in the small style (no paragraph to parse and wrap: a large
        # plan's tables have tens of thousands of cells); anything else is a paragraph
        ("FONT", (0, 0), (-1, -1), LATIN, small.fontSize, small.leading),
        ("TEXTCOLOR", (0, 0), (-1, -1), small.textColor),
        ("GRID", (0, 0), (-1, -1), 0.25, colors.HexColor("#b0b7bf")),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("TOPPADDING", (0, 0), (-1, -1), 2),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
    ]
    if header:
        style.append(("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8edf2")))
    t.setStyle(TableStyle(style))
    return t


def _plain(text: str, width: float) -> bool:
    """Whether ``text`` can be set as a plain string in a cell ``width`` points wide: one line of DejaVu
    characters (no CJK, control or markup-sensitive character) that fits."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    if not text.isprintable():
        return False
    if not text.isascii() and (shown(text) != text or any(ord(ch) not in _LATIN_CMAP for ch in text)):
        return False
    # measured only when the widest glyph would not fit as many times as there are characters
    return len(text) * _LATIN_WIDEST[0] * 8 / 1000 <= width or bool(stringWidth(text, LATIN, 8) <= width)
