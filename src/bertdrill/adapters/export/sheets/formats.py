"""The sheet's output formats and answer-key modes, as types: the CLI offers them, the renderers match on them.

Kept free of imports, so the CLI can name them in its options without loading a renderer.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import assert_never

from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _


class SheetFormat(StrEnum):
    html = "html"
    pdf = "pdf"
    md = "md"
    gift = "gift"
    moodle_xml = "moodle-xml"

    @property
    def is_bank(self) -> bool:
        """A format for an LMS's question bank: no versions, no separate key, the answers in each question."""
        match self:
            case SheetFormat.gift | SheetFormat.moodle_xml:
                return True
            case SheetFormat.html | SheetFormat.pdf | SheetFormat.md:
                return False
            case unreachable:
                assert_never(unreachable)


class KeyMode(StrEnum):
    """Where a printed sheet's answer keys go."""

    pages = "pages"  # the last pages of the same file
    separate = "separate"  # a file of their own beside each sheet
    none = "none"


EXTENSIONS = {".html": SheetFormat.html, ".htm": SheetFormat.html, ".pdf": SheetFormat.pdf, ".md": SheetFormat.md,
              ".markdown": SheetFormat.md, ".gift": SheetFormat.gift, ".xml": SheetFormat.moodle_xml}


def format_for(path: Path) -> SheetFormat:
    """The format an output file's extension asks for."""
    try:
        return EXTENSIONS[path.suffix.lower()]
    except KeyError:
        raise BertdrillError(_("cannot tell the format from the name {name!r}; end it in .html, .pdf, .md, .gift or "
                               ".xml, or pass --format {formats}").format(
            name=str(path), formats="|".join(SheetFormat))) from None
