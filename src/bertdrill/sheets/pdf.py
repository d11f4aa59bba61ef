"""Quiz sheets as PDF: the HTML sheet laid out by WeasyPrint, an optional extra.

WeasyPrint is imported here, when a PDF is asked for, so everything else in
bertdrill works (and starts fast) without it.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager

from ..errors import BertdrillError

INSTALL = "pip install 'bertdrill[pdf]'"
# The fonts WeasyPrint embeds carry a "modified" time stamp; fontTools takes it from
# SOURCE_DATE_EPOCH when set, so the same sheet gives the same bytes (1980-01-01, as in zip files).
FIXED_EPOCH = "315532800"


def render(html: str) -> bytes:
    """Lay out an HTML sheet (from :mod:`.html`) as PDF bytes, the same bytes for the same sheet."""
    try:
        from weasyprint import HTML
    except ImportError:
        raise BertdrillError(f"PDF output needs WeasyPrint: {INSTALL}") from None
    except OSError as exc:  # installed, but its system libraries (Pango) are missing
        raise BertdrillError(f"PDF output needs WeasyPrint's system libraries (Pango): {exc}; "
                             "see https://doc.courtbouillon.org/weasyprint/stable/first_steps.html") from None
    # WeasyPrint logs what it skips or substitutes as warnings; the CSS is ours, not the user's.
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    with _reproducible():
        return HTML(string=html, base_url=None).write_pdf()


@contextmanager
def _reproducible():
    """Pin SOURCE_DATE_EPOCH while rendering, unless the user set one."""
    if "SOURCE_DATE_EPOCH" in os.environ:
        yield
        return
    os.environ["SOURCE_DATE_EPOCH"] = FIXED_EPOCH
    try:
        yield
    finally:
        os.environ.pop("SOURCE_DATE_EPOCH", None)
