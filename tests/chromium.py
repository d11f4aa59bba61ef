"""Headless Chromium for the tests: what a browser really draws and prints.

Sheets and Anki cards are HTML that people open in a browser (or in Anki's own Chromium-based
web view). These helpers load a page in a fresh headless Chromium, with nothing from a user's
profile and no network chatter, and give back a PNG, a PDF, the PDF's text page by page, or the
DOM after the page's scripts ran (pages measure themselves with a script and write the figures
into the DOM; see :func:`measure`).

Tests that need Chromium use the ``chromium`` marker's skip: ``requires_chromium``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from html import escape, unescape
from pathlib import Path

import pytest

BINARY = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
# Skipped loudly where Chromium is missing, but never in CI (CI=true), where .ci/run installs it:
# there a missing browser fails the tests that need it.
requires_chromium = pytest.mark.skipif(BINARY is None and not os.environ.get("CI"),
                                       reason="headless Chromium is not installed (see .ci/run)")

# Flags for a quiet, reproducible browser: no sandbox (the tests may run as root), no GPU, no
# first-run screens, and none of the background requests a fresh profile would make.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--disable-extensions", "--mute-audio")
TIMEOUT = 90  # seconds: a page that hangs fails the test instead of the suite


def _run(html: str, *args: str, dark: bool = False) -> subprocess.CompletedProcess[str]:
    """Load ``html`` from a temporary file in a fresh profile, with the given output flags."""
    assert BINARY is not None, "headless Chromium is not installed: .ci/run installs it (apt-get install chromium)"
    with tempfile.TemporaryDirectory(prefix="bertdrill-chromium-") as folder:
        page = Path(folder) / "page.html"
        page.write_text(html, encoding="utf-8")
        colour = ("--force-dark-mode", "--blink-settings=preferredColorScheme=0") if dark else ()
        command = [BINARY, *FLAGS, *colour, f"--user-data-dir={folder}/profile", *args, page.as_uri()]
        result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    if result.returncode != 0:
        raise AssertionError(f"chromium failed ({result.returncode}): {result.stderr[-2000:]}")
    return result


def screenshot(html: str, png: Path, *, width: int, height: int = 900, dark: bool = False) -> Path:
    """Draw the page in a ``width`` x ``height`` window and save what shows as a PNG."""
    _run(html, f"--window-size={width},{height}", f"--screenshot={png}", dark=dark)
    assert png.exists() and png.stat().st_size > 0, f"no screenshot written to {png}"
    return png


def print_pdf(html: str, pdf: Path) -> Path:
    """Print the page to PDF as a browser's Print does, without the browser's own header and footer."""
    _run(html, f"--print-to-pdf={pdf}", "--no-pdf-header-footer", "--virtual-time-budget=2000")
    assert pdf.exists() and pdf.stat().st_size > 0, f"no PDF written to {pdf}"
    return pdf


def pdf_pages(pdf: Path) -> list[str]:
    """The text of every page of a PDF, read back with pypdf."""
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(str(pdf)).pages]


def dom(html: str, *, dark: bool = False) -> str:
    """The document as it stands after its scripts ran (``--dump-dom``)."""
    return _run(html, "--virtual-time-budget=3000", "--dump-dom", dark=dark).stdout


# A page's window is at least 500 px wide in headless Chromium whatever --window-size says (the
# screenshot is cut to size afterwards), so a measurement at phone width loads the page in an
# iframe of that width and reads it from the outside.
_HARNESS = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="frame" style="width:{width}px;height:{height}px;border:0" srcdoc="{page}"></iframe>
<pre id="measured"></pre>
<script>
document.getElementById("frame").addEventListener("load", function () {{
  var win = this.contentWindow, document_ = this.contentDocument;
  var measure = function (window, document) {{ {script} }};
  var result = measure(win, document_);
  document.getElementById("measured").textContent = "MEASURED" + JSON.stringify(result) + "END";
}});
</script></body></html>"""


def measure(html: str, script: str, *, width: int, height: int = 900, dark: bool = False):
    """Load ``html`` at ``width`` CSS pixels, run ``script`` (a function body over ``window`` and
    ``document`` that returns something JSON can hold) after the page's own scripts, and return it."""
    harness = _HARNESS.format(width=width, height=height, page=escape(html, quote=True), script=script)
    found = re.search(r"MEASURED(.*?)END", dom(harness, dark=dark), re.S)
    assert found, "the measuring script did not run"
    return json.loads(unescape(found.group(1)))
