"""From a sheet to files: pick the format, render, and write without ever leaving half a file."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import assert_never

from bertdrill.adapters.export.files import Content
from bertdrill.adapters.export.marks import Mark, seal, sealed
from bertdrill.adapters.export.sheets.formats import KeyMode, SheetFormat
from bertdrill.adapters.export.sheets.model import Bank, Sheet


def key_path(path: Path) -> Path:
    """Where ``--key separate`` writes the answer keys: ``quiz.html`` -> ``quiz-key.html``."""
    return path.with_name(f"{path.stem}-key{path.suffix}")


def version_path(path: Path, letter: str) -> Path:
    """Where ``--split`` writes a version: ``quiz.pdf`` -> ``quiz-A.pdf``."""
    return path.with_name(f"{path.stem}-{letter}{path.suffix}")


def documents(sheet: Sheet, fmt: SheetFormat, path: Path, key: KeyMode = KeyMode.pages, *, split: bool = False,
              duplex: bool = True) -> list[tuple[Path, Content]]:
    """The files to write, as (path, content) pairs, each with its mark (:mod:`bertdrill.adapters.export.marks`):
    the content's bytes, or for a Moodle bank (which can be larger than memory) what writes it.

    ``split`` writes each version to its own file (``quiz-A.pdf``, with its key as ``key`` says);
    ``duplex`` pads each version of a PDF, and each key, to an even number of pages, so that
    printed on both sides no version starts on the back of another.
    """
    match fmt:
        case SheetFormat.gift | SheetFormat.moodle_xml:
            return bank_documents(sheet, fmt, path)
        case SheetFormat.html | SheetFormat.pdf | SheetFormat.md:
            return _printed(sheet, fmt, path, key, split=split, duplex=duplex)
        case unreachable:
            assert_never(unreachable)


def bank_documents(bank: Sheet | Bank, fmt: SheetFormat, path: Path) -> list[tuple[Path, Content]]:
    """A question bank's file, with its mark: what writes it as it is made (it can be larger than memory), from a
    sheet's bank or from a bank made a lesson at a time (:class:`~.model.Bank`)."""
    match fmt:
        case SheetFormat.gift:
            from bertdrill.adapters.export.sheets import gift

            mark, chunks = Mark.GIFT, gift.chunks(bank) if isinstance(bank, Sheet) else gift.bank_chunks(bank)
        case SheetFormat.moodle_xml:
            from bertdrill.adapters.export.sheets import moodle

            mark, chunks = Mark.MOODLE_XML, moodle.chunks(bank) if isinstance(bank, Sheet) else moodle.bank_chunks(bank)
        case SheetFormat.html | SheetFormat.pdf | SheetFormat.md:
            raise ValueError(f"{fmt} is a sheet to print, not a question bank")
        case unreachable:
            assert_never(unreachable)
    return [(path, sealed(mark, (chunk.encode("utf-8") for chunk in chunks)))]


def _printed(sheet: Sheet, fmt: SheetFormat, path: Path, key: KeyMode, *, split: bool,
             duplex: bool) -> list[tuple[Path, Content]]:
    """The files of a sheet to print: each version (or all in one file) and its answer keys as ``key`` says."""
    parts = [(path, sheet)]
    if split:
        parts = [(version_path(path, version.letter), replace(sheet, versions=(version,)))
                 for version in sheet.versions]
    files: list[tuple[Path, Content]] = []
    for target, part in parts:
        if key is KeyMode.separate:
            files += [(target, _render(part, fmt, sheets=True, keys=False, duplex=duplex)),
                      (key_path(target), _render(part, fmt, sheets=False, keys=True, duplex=duplex))]
        else:
            files.append((target, _render(part, fmt, sheets=True, keys=key is KeyMode.pages, duplex=duplex)))
    return files


def _render(sheet: Sheet, fmt: SheetFormat, *, sheets: bool, keys: bool, duplex: bool) -> bytes:
    match fmt:
        case SheetFormat.md:
            from bertdrill.adapters.export.sheets import markdown

            return seal(Mark.MARKDOWN, markdown.render(sheet, sheets=sheets, keys=keys).encode("utf-8"))
        case SheetFormat.html:
            from bertdrill.adapters.export.sheets import html

            return seal(Mark.HTML, html.render(sheet, sheets=sheets, keys=keys).encode("utf-8"))
        case SheetFormat.pdf:
            from bertdrill.adapters.export.sheets import html, pdf

            # Each version and each key laid out on its own: its pages count from 1, and it can be padded.
            one = [replace(sheet, versions=(version,)) for version in sheet.versions]
            sections = ([html.render(part, keys=False) for part in one] if sheets else []) + \
                       ([html.render(part, sheets=False) for part in one] if keys else [])
            return seal(Mark.PDF, pdf.render(sections, duplex=duplex))
        case SheetFormat.gift | SheetFormat.moodle_xml:
            raise ValueError(f"{fmt} is a question bank, not a sheet to print")
        case unreachable:
            assert_never(unreachable)
