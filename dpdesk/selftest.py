"""``dpdesk --selftest``: prove an installed (or frozen) dpdesk works, without a screen.

It runs a real release of the bundled sample (``resources/samples/cps_wages_plan.json`` on
``census_sample.csv``) into a throw-away dpdesk home, never the user's ledger, then checks:

* the release package is written and ``review`` finds it intact;
* the PDF report has pages and embeds the bundled CJK font (the plan's title is given a Chinese
  suffix for this, so reportlab has to set CJK text);
* OpenDP's native library was loaded (the release draws its noise) and, in a bundle, from the bundle;
* the CJK font file and Qt's Chinese translation are present, and Qt's widgets module imports;
* a table reads the same from .csv and from .xlsx (the .xlsx reader, fastexcel, is imported by name);
* cryptography's native library (officer keys): an Ed25519 key signs, the signature verifies, a changed
  message is refused, and an encrypted PEM (scrypt, AES) round-trips;
* the app's charts: matplotlib draws a figure with its Agg renderer (its native ``_path``, ``ft2font``,
  ``_image`` and kiwisolver's layout solver) and writes a PNG through Pillow, which reads it back.

Prints one line per check and returns 0 when all pass, 1 otherwise. The temporary home is deleted
on success and kept (its path printed) on failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

CJK_TITLE_SUFFIX = " · 自检"  # "self-test": makes the report set Chinese text in the bundled font
FONT_FILE = "DroidSansFallbackFull.ttf"


def _check(results: list[tuple[str, bool, str]], name: str, fn: Callable[[], str]) -> bool:
    """Run one check; record (name, passed, detail)."""
    try:
        detail = fn()
        results.append((name, True, detail))
        return True
    except Exception as exc:  # noqa: BLE001 - a self-test reports every failure, not just the first
        results.append((name, False, f"{type(exc).__name__}: {exc}"))
        if os.environ.get("DPDESK_SELFTEST_TRACEBACK"):
            traceback.print_exc()
        return False


def _write_xlsx(path: Path, rows: list[list[str]]) -> None:
    """A minimal .xlsx (one sheet, inline strings and numbers), so no spreadsheet library is needed."""
    import zipfile
    from xml.sax.saxutils import escape

    def cell(ref: str, value: str) -> str:
        try:
            float(value)
            return f'<c r="{ref}"><v>{value}</v></c>'
        except ValueError:
            return f'<c r="{ref}" t="inlineStr"><is><t>{escape(value)}</t></is></c>'

    def col(i: int) -> str:
        name = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            name = chr(65 + r) + name
        return name

    sheet_rows = "".join(
        f'<row r="{r + 1}">' + "".join(cell(f"{col(c)}{r + 1}", v) for c, v in enumerate(row)) + "</row>"
        for r, row in enumerate(rows)
    )
    ns = "http://schemas.openxmlformats.org"
    files = {
        "[Content_Types].xml": f'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="{ns}/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
        "_rels/.rels": f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{ns}/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{ns}/officeDocument/2006/relationships/officeDocument" '
        'Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{ns}/spreadsheetml/2006/main" '
        f'xmlns:r="{ns}/officeDocument/2006/relationships"><sheets>'
        '<sheet name="data" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<?xml version="1.0" encoding="UTF-8"?>'
        f'<Relationships xmlns="{ns}/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{ns}/officeDocument/2006/relationships/worksheet" '
        'Target="worksheets/sheet1.xml"/></Relationships>',
        "xl/worksheets/sheet1.xml": f'<?xml version="1.0" encoding="UTF-8"?>'
        f'<worksheet xmlns="{ns}/spreadsheetml/2006/main"><sheetData>{sheet_rows}</sheetData></worksheet>',
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            z.writestr(name, text)


def _pdf_pages(pdf: bytes) -> int:
    """Count page objects in a PDF (reportlab writes no object streams, so the dictionaries are plain text)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def run() -> int:
    """Run the self-test; print a short report; return 0 if every check passed, else 1."""
    t0 = time.perf_counter()
    for stream in (sys.stdout, sys.stderr):  # a console that cannot show a path must not fail the test
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    tmp = Path(tempfile.mkdtemp(prefix="dpdesk-selftest-"))
    home = tmp / "home"
    home.mkdir()
    previous_home = os.environ.get("DPDESK_HOME")
    # Before any dpdesk module can ask for its home: the user's ledger is never touched.
    os.environ["DPDESK_HOME"] = str(home)
    results: list[tuple[str, bool, str]] = []
    try:
        _run_checks(results, tmp, home)
    finally:
        if previous_home is None:
            os.environ.pop("DPDESK_HOME", None)
        else:
            os.environ["DPDESK_HOME"] = previous_home
    ok = all(passed for _, passed, _ in results)
    from dpdesk import __version__

    frozen = "frozen" if getattr(sys, "frozen", False) else "source"
    print(f"dpdesk {__version__} self-test ({frozen}, Python {sys.version.split()[0]}, {sys.platform})")
    for name, passed, detail in results:
        print(f"  {'OK  ' if passed else 'FAIL'} {name}: {detail}")
    print(
        f"{'OK' if ok else 'FAIL'}: {sum(p for _, p, _ in results)}/{len(results)} checks passed "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    if ok:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"  (temporary home kept for inspection: {tmp})")
    return 0 if ok else 1


def _run_checks(results: list[tuple[str, bool, str]], tmp: Path, home: Path) -> None:
    from dpdesk.resources import resource, resources_dir

    out_dir = tmp / "release"
    plan_path = tmp / "plan.json"
    data_path = resource("samples", "census_sample.csv")

    def resources() -> str:
        for part in (
            ("samples", "cps_wages_plan.json"),
            ("samples", "census_sample.csv"),
            ("fonts", FONT_FILE),
        ):
            p = resource(*part)
            if not p.is_file() or p.stat().st_size == 0:
                raise FileNotFoundError(p)
        return f"{resources_dir()}"

    def font() -> str:
        p = resource("fonts", FONT_FILE)
        size = p.stat().st_size
        with p.open("rb") as f:
            magic = f.read(4)
        if magic not in (b"\x00\x01\x00\x00", b"true"):
            raise ValueError(f"{p} is not a TrueType font")
        return f"{FONT_FILE}, {size / 2**20:.1f} MiB"

    def plan_file() -> str:
        raw = json.loads(resource("samples", "cps_wages_plan.json").read_text(encoding="utf-8"))
        raw["title"] = str(raw.get("title", "dpdesk")) + CJK_TITLE_SUFFIX
        plan_path.write_text(json.dumps(raw, ensure_ascii=False, indent=2), encoding="utf-8")
        return f"{len(raw['queries'])} queries"

    state: dict[str, object] = {}

    def do_release() -> str:
        from dpdesk.core.plan.reader import load_plan
        from dpdesk.core.release.steps import release

        plan = load_plan(plan_path)
        t = time.perf_counter()
        result = release(plan, data_path, home, out_dir)
        state["result"] = result
        missing = [
            n
            for n in ("release.csv", "report.pdf", "plan.json", "ledger.json")
            if not (out_dir / n).is_file()
        ]
        if missing:
            raise FileNotFoundError(f"the package lacks {', '.join(missing)}")
        return f"{len(result.rows)} rows in {time.perf_counter() - t:.1f} s"

    def do_review() -> str:
        from dpdesk.core.publish.review import review

        r = review(out_dir)
        if not r.intact:
            raise AssertionError("; ".join(r.problems))
        return "package intact"

    def pdf() -> str:
        data = (out_dir / "report.pdf").read_bytes()
        if not data.startswith(b"%PDF-"):
            raise ValueError("report.pdf is not a PDF")
        pages = _pdf_pages(data)
        if pages < 1:
            raise ValueError("report.pdf has no pages")
        if b"DroidSansFallback" not in data:
            raise ValueError("report.pdf does not embed the CJK font")
        return f"{pages} page(s), {len(data) / 1024:.0f} KiB, CJK font embedded"

    def opendp() -> str:
        lib_mod = sys.modules.get("opendp._lib")
        lib = getattr(lib_mod, "lib", None)
        path = getattr(lib, "_name", None)
        if lib is None or not path:
            raise RuntimeError("OpenDP's native library was not loaded by the release")
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(p)
        bundle = getattr(sys, "_MEIPASS", None)
        if bundle and Path(bundle).resolve() not in p.resolve().parents:
            raise RuntimeError(f"OpenDP's library was loaded from outside the bundle: {p}")
        return f"{p.name}, {p.stat().st_size / 2**20:.0f} MiB, loaded from {p.parent}"

    def ledger() -> str:
        files = [p for p in home.rglob("*") if p.is_file()]
        if not files:
            raise RuntimeError(f"no ledger written in the temporary home {home}")
        return f"{len(files)} file(s) in the temporary home"

    def readers() -> str:
        import csv

        from dpdesk.core.loading import suggest_types

        with data_path.open(encoding="utf-8", newline="") as f:
            rows = [r for _, r in zip(range(201), csv.reader(f), strict=False)]
        xlsx = tmp / "sample.xlsx"
        _write_xlsx(xlsx, rows)
        want = suggest_types(data_path)
        got = suggest_types(xlsx)  # polars + fastexcel (calamine), imported by name at run time
        if got != want:
            raise AssertionError(f"the .xlsx copy reads as {got}, the CSV as {want}")
        return f".csv and .xlsx agree on {len(want)} column types"

    def qt() -> str:
        from PySide6 import __version__ as pyside_version
        from PySide6.QtCore import QLibraryInfo
        from PySide6.QtWidgets import QWidget  # noqa: F401 - the import is the check

        folder = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath))
        if not (folder / "qtbase_zh_CN.qm").is_file():
            raise FileNotFoundError(folder / "qtbase_zh_CN.qm")
        return f"PySide6 {pyside_version}, QtWidgets imports, qtbase_zh_CN.qm present"

    def crypto() -> str:
        from cryptography import __version__ as crypto_version
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.backends.openssl.backend import backend
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = Ed25519PrivateKey.generate()
        message = b"dpdesk self-test " + os.urandom(16)
        signature = key.sign(message)
        key.public_key().verify(signature, message)  # raises InvalidSignature if the library is broken
        try:
            key.public_key().verify(signature, message + b"!")
        except InvalidSignature:
            pass
        else:
            raise AssertionError("a signature verified for a changed message")
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"self-test passphrase"),
        )
        again = serialization.load_pem_private_key(pem, b"self-test passphrase")
        if again.public_key().public_bytes_raw() != key.public_key().public_bytes_raw():  # type: ignore[union-attr]
            raise AssertionError("an encrypted key did not read back as itself")
        return f"cryptography {crypto_version} ({backend.openssl_version_text()}): Ed25519 signs and verifies"

    def charts() -> str:
        import io

        import matplotlib
        from matplotlib.figure import Figure
        from PIL import Image

        fig = Figure(figsize=(3, 2), dpi=50, layout="constrained")  # constrained: kiwisolver's solver
        ax = fig.add_subplot()
        ax.bar(["a", "b"], [1.0, 2.0])
        ax.set_title("dpdesk")
        buf = io.BytesIO()
        fig.savefig(buf, format="png")  # Agg renders, Pillow writes the PNG
        buf.seek(0)
        with Image.open(buf) as im:
            size = im.size
        if size != (150, 100):
            raise AssertionError(f"the chart is {size} pixels, not 150x100")
        return f"matplotlib {matplotlib.__version__} drew a {size[0]}x{size[1]} PNG, Pillow read it"

    _check(results, "resources", resources)
    _check(results, "CJK font", font)
    if _check(results, "plan", plan_file) and _check(results, "release", do_release):
        _check(results, "review", do_review)
        _check(results, "report.pdf", pdf)
        _check(results, "ledger", ledger)
    _check(results, "OpenDP native library", opendp)
    _check(results, "table readers", readers)
    _check(results, "cryptography", crypto)
    _check(results, "charts", charts)
    _check(results, "Qt", qt)


if __name__ == "__main__":
    sys.exit(run())
