"""From a sheet to files: pick the format, render, and write without ever leaving half a file."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bertdrill.adapters.export.sheets.model import Sheet
from bertdrill.core.errors import BertdrillError

FORMATS = ("html", "pdf", "md", "gift", "moodle-xml")
EXTENSIONS = {".html": "html", ".htm": "html", ".pdf": "pdf", ".md": "md", ".markdown": "md", ".gift": "gift",
              ".xml": "moodle-xml"}
BANKS = ("gift", "moodle-xml")  # formats for an LMS's question bank: no versions, no separate key


def format_for(path: Path) -> str:
    """The format an output file's extension asks for."""
    try:
        return EXTENSIONS[path.suffix.lower()]
    except KeyError:
        raise BertdrillError(f"cannot tell the format from the name {str(path)!r}; "
                             f"end it in .html, .pdf, .md, .gift or .xml, or pass --format {'|'.join(FORMATS)}") from None


def key_path(path: Path) -> Path:
    """Where ``--key separate`` writes the answer keys: ``quiz.html`` -> ``quiz-key.html``."""
    return path.with_name(f"{path.stem}-key{path.suffix}")


def version_path(path: Path, letter: str) -> Path:
    """Where ``--split`` writes a version: ``quiz.pdf`` -> ``quiz-A.pdf``."""
    return path.with_name(f"{path.stem}-{letter}{path.suffix}")


def documents(sheet: Sheet, fmt: str, path: Path, key: str = "pages", *, split: bool = False,
              duplex: bool = True) -> list[tuple[Path, bytes]]:
    """The files to write, as (path, content) pairs.

    ``split`` writes each version to its own file (``quiz-A.pdf``, with its key as ``key`` says);
    ``duplex`` pads each version of a PDF, and each key, to an even number of pages, so that
    printed on both sides no version starts on the back of another.
    """
    if fmt == "gift":
        from bertdrill.adapters.export.sheets import gift

        return [(path, gift.render(sheet).encode("utf-8"))]
    if fmt == "moodle-xml":
        from bertdrill.adapters.export.sheets import moodle

        return [(path, moodle.render(sheet).encode("utf-8"))]
    parts = [(path, sheet)]
    if split:
        parts = [(version_path(path, version.letter), replace(sheet, versions=(version,)))
                 for version in sheet.versions]
    files = []
    for target, part in parts:
        if key == "separate":
            files += [(target, _render(part, fmt, sheets=True, keys=False, duplex=duplex)),
                      (key_path(target), _render(part, fmt, sheets=False, keys=True, duplex=duplex))]
        else:
            files.append((target, _render(part, fmt, sheets=True, keys=key == "pages", duplex=duplex)))
    return files


def _render(sheet: Sheet, fmt: str, *, sheets: bool, keys: bool, duplex: bool) -> bytes:
    if fmt == "md":
        from bertdrill.adapters.export.sheets import markdown

        return markdown.render(sheet, sheets=sheets, keys=keys).encode("utf-8")
    from bertdrill.adapters.export.sheets import html

    if fmt == "pdf":
        from bertdrill.adapters.export.sheets import pdf

        # Each version and each key laid out on its own: its pages count from 1, and it can be padded.
        one = [replace(sheet, versions=(version,)) for version in sheet.versions]
        sections = ([html.render(part, keys=False) for part in one] if sheets else []) + \
                   ([html.render(part, sheets=False) for part in one] if keys else [])
        return pdf.render(sections, duplex=duplex)
    return html.render(sheet, sheets=sheets, keys=keys).encode("utf-8")
