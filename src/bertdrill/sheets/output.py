"""From a sheet to files: pick the format, render, and write without ever leaving half a file."""

from __future__ import annotations

from pathlib import Path

from ..errors import BertdrillError
from .model import Sheet

FORMATS = ("html", "pdf", "md", "gift")
EXTENSIONS = {".html": "html", ".htm": "html", ".pdf": "pdf", ".md": "md", ".markdown": "md", ".gift": "gift"}


def format_for(path: Path) -> str:
    """The format an output file's extension asks for."""
    try:
        return EXTENSIONS[path.suffix.lower()]
    except KeyError:
        raise BertdrillError(f"cannot tell the format from the name {str(path)!r}; "
                             f"end it in .html, .pdf, .md or .gift, or pass --format {'|'.join(FORMATS)}") from None


def key_path(path: Path) -> Path:
    """Where ``--key separate`` writes the answer keys: ``quiz.html`` -> ``quiz-key.html``."""
    return path.with_name(f"{path.stem}-key{path.suffix}")


def documents(sheet: Sheet, fmt: str, path: Path, key: str = "pages") -> list[tuple[Path, bytes]]:
    """The files to write, as (path, content) pairs."""
    if fmt == "gift":
        from . import gift

        return [(path, gift.render(sheet).encode("utf-8"))]
    if key == "separate":
        return [(path, _render(sheet, fmt, sheets=True, keys=False)),
                (key_path(path), _render(sheet, fmt, sheets=False, keys=True))]
    return [(path, _render(sheet, fmt, sheets=True, keys=key == "pages"))]


def _render(sheet: Sheet, fmt: str, *, sheets: bool, keys: bool) -> bytes:
    if fmt == "md":
        from . import markdown

        return markdown.render(sheet, sheets=sheets, keys=keys).encode("utf-8")
    from . import html

    page = html.render(sheet, sheets=sheets, keys=keys)
    if fmt == "pdf":
        from . import pdf

        return pdf.render(page)
    return page.encode("utf-8")
