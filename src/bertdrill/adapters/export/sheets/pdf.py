"""Quiz sheets as PDF: the HTML sheet laid out by WeasyPrint, an optional extra.

WeasyPrint is imported here, when a PDF is asked for, so everything else in
bertdrill works (and starts fast) without it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _

INSTALL = "pip install 'bertdrill[pdf]'"
# The fonts WeasyPrint embeds carry a "modified" time stamp; fontTools takes it from
# SOURCE_DATE_EPOCH when set, so the same sheet gives the same bytes (1980-01-01, as in zip files).
FIXED_EPOCH = "315532800"


# An empty page the size of the sheets, to pad a section to an even number of pages.
BLANK_PAGE = '<!DOCTYPE html><html><head><style>@page { size: A4; margin: 0; }</style></head><body></body></html>'


def render(sections: str | Sequence[str], *, duplex: bool = True) -> bytes:
    """Lay out HTML documents (from :mod:`.html`; one, or several in order) in one PDF, the same bytes
    for the same sheet. Each section numbers its own pages; with ``duplex`` each gets an even number of pages
    (a blank one at its end where needed), so printed on both sides every section starts on a new sheet."""
    try:
        from weasyprint import HTML
    except ImportError:
        raise BertdrillError(_("PDF output needs WeasyPrint: {install}").format(install=INSTALL)) from None
    except OSError as exc:  # installed, but its system libraries (Pango) are missing
        raise BertdrillError(_("PDF output needs WeasyPrint's system libraries (Pango): {reason}; see {page}").format(
            reason=exc, page="https://doc.courtbouillon.org/weasyprint/stable/first_steps.html")) from None
    # WeasyPrint logs what it skips or substitutes as warnings; the CSS is ours, not the user's.
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    if isinstance(sections, str):
        sections = [sections]
    with _reproducible():
        documents = [HTML(string=section, base_url=None).render() for section in sections]
        blank = HTML(string=BLANK_PAGE, base_url=None).render().pages[0]
        pages = []
        for document in documents:
            pages += document.pages
            if duplex and len(document.pages) % 2:
                pages.append(blank)
        return bytes(documents[0].copy(pages).write_pdf())


@contextmanager
def _reproducible() -> Iterator[None]:
    """Pin SOURCE_DATE_EPOCH while rendering, unless the user set one."""
    if "SOURCE_DATE_EPOCH" in os.environ:
        yield
        return
    os.environ["SOURCE_DATE_EPOCH"] = FIXED_EPOCH
    try:
        yield
    finally:
        os.environ.pop("SOURCE_DATE_EPOCH", None)
