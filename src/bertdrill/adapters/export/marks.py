"""The mark each file bertdrill writes for people carries, so that an output replaces only a file bertdrill wrote.

``sheet -o quiz.html`` run every day replaces yesterday's sheet; ``sheet -o essay.md`` over the user's essay is
refused (without ``--force``). What tells them apart is a short mark, ``bertdrill VERSION``, where each format
keeps such a thing, showing nothing a reader or an importer sees, and found by reading a few bytes:

- HTML, Markdown, SVG: a comment on the first line, ``<!-- bertdrill 0.1.0 #1f0c2b9a6d4e7c35 -->`` (before
  ``<!DOCTYPE html>``, where HTML allows comments, in no-quirks mode still);
- GIFT: the same as a ``//`` comment line (Moodle's importer skips comments);
- Moodle XML: the same comment on the line after the XML declaration (the importer skips comments);
- practice script: the same as a Python comment, ``# bertdrill 0.1.0 starter #…``;
- PDF: a comment line ``%bertdrill 0.1.0`` just before ``startxref`` at the file's end (PDF readers skip
  comments; nothing before it moves, so every offset stays right). The document's Creator says
  ``bertdrill 0.1.0`` too (the HTML's generator), for a person looking at its properties;
- Anki package: the zip file's comment (Anki reads the archive's entries, never its comment).

A text mark carries a digest of everything after its line: a file stays ours only as bertdrill wrote it. A teacher
who edits ``quiz.md`` before printing (what Markdown is for), a learner who writes a solution into the practice
starter, made the file theirs, and ``--force`` is needed to replace it. A PDF annotated and saved in a viewer has
its changes appended after the mark (or is rewritten without it), so it is not ours either. A file of ours in any
format counts for any output (an HTML sheet where ``-o quiz.md`` now writes Markdown: nothing of the user's is
lost by replacing it), and any version's mark does.

Each format's mark is defined once, here: :func:`seal` writes it, :func:`is_ours` finds it.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO, assert_never

from bertdrill import __version__

SIGNATURE = f"bertdrill {__version__}"
"""What every mark says."""

_SIGNED = rb"bertdrill [0-9][0-9A-Za-z.+-]*"  # any version's signature
DIGEST_LENGTH = 16  # hexadecimal digits of a text mark's digest
_DIGEST = rb" #(?P<digest>[0-9a-f]{%d})" % DIGEST_LENGTH
HEAD, TAIL = 4096, 512  # bytes read from a file's start and from its end to find a mark
CHUNK = 1 << 20  # bytes hashed at a time: a large file is never read into memory whole


class Mark(StrEnum):
    """The kinds of files bertdrill writes for people, each marked its own way."""

    HTML = "html"
    MARKDOWN = "markdown"
    SVG = "svg"
    GIFT = "gift"
    MOODLE_XML = "moodle-xml"
    SCRIPT = "script"
    PDF = "pdf"
    APKG = "apkg"


def seal(mark: Mark, data: bytes) -> bytes:
    """``data``, a whole file in the format ``mark`` names, with its mark written in."""
    match mark:
        case Mark.HTML | Mark.MARKDOWN | Mark.SVG | Mark.GIFT | Mark.SCRIPT:
            return _line(mark, _digest(data)) + data
        case Mark.MOODLE_XML:
            declaration, rest = _declaration(data)
            return declaration + _line(mark, _digest(rest)) + rest
        case Mark.PDF:
            at = data.rfind(b"\nstartxref")
            if at < 0:
                raise ValueError("a PDF ends with its startxref line")
            return data[:at + 1] + f"%{SIGNATURE}\n".encode() + data[at + 1:]
        case Mark.APKG:
            raise ValueError("an Anki package is marked by its zip comment: see zip_comment")
        case unreachable:
            assert_never(unreachable)


def sealed(mark: Mark, chunks: Iterable[bytes]) -> Callable[[BinaryIO], None]:
    """What writes ``chunks``, a whole file in the text format ``mark`` names, with its mark written in, to a
    seekable file (:func:`.files.write_atomic` takes it): for a file too large to hold whole (a Moodle bank of
    100,000 questions is 750 MB). The mark's digest is written last, over a placeholder of its length."""
    def write(out: BinaryIO) -> None:
        pieces = iter(chunks)
        before = b""
        if mark is Mark.MOODLE_XML:  # the mark goes after the declaration, the first chunk
            before, rest = _declaration(next(pieces, b""))
            if rest:
                raise ValueError("Moodle XML's first chunk is its XML declaration's line alone")
        out.write(before)
        at = out.tell()
        out.write(_line(mark, "0" * DIGEST_LENGTH))
        digest = hashlib.sha256()
        for chunk in pieces:
            digest.update(chunk)
            out.write(chunk)
        end = out.tell()
        out.seek(at)
        out.write(_line(mark, digest.hexdigest()[:DIGEST_LENGTH]))
        out.seek(end)
    return write


def _line(mark: Mark, digest: str) -> bytes:
    """A text format's mark, the line before what its digest covers."""
    match mark:
        case Mark.HTML | Mark.MARKDOWN | Mark.SVG | Mark.MOODLE_XML:
            return f"<!-- {SIGNATURE} #{digest} -->\n".encode()
        case Mark.GIFT:
            return f"// {SIGNATURE} #{digest}\n".encode()
        case Mark.SCRIPT:
            return f"# {SIGNATURE} starter #{digest}\n".encode()
        case Mark.PDF | Mark.APKG:
            raise ValueError(f"a {mark} file's mark is not a line at its start")
        case unreachable:
            assert_never(unreachable)


def _declaration(data: bytes) -> tuple[bytes, bytes]:
    """Moodle XML's declaration line (with its newline), and the rest."""
    declaration, newline, rest = data.partition(b"\n")
    if not declaration.startswith(b"<?xml ") or not newline:
        raise ValueError("Moodle XML starts with its XML declaration on a line of its own")
    return declaration + newline, rest


def zip_comment() -> bytes:
    """The Anki package's mark, its zip file's comment."""
    return SIGNATURE.encode()


@functools.cache
def _mark_of(mark: Mark) -> re.Pattern[bytes]:
    """What :func:`is_ours` looks for: at the file's start (the first :data:`HEAD` bytes) or, for a PDF and an
    Anki package, at its end (the last :data:`TAIL`)."""
    match mark:
        case Mark.HTML | Mark.MARKDOWN | Mark.SVG:  # one comment for all three: one pattern
            return re.compile(rb"\A<!-- " + _SIGNED + _DIGEST + rb" -->\n")
        case Mark.GIFT:
            return re.compile(rb"\A// " + _SIGNED + _DIGEST + rb"\n")
        case Mark.SCRIPT:
            return re.compile(rb"\A# " + _SIGNED + rb" starter" + _DIGEST + rb"\n")
        case Mark.MOODLE_XML:
            return re.compile(rb"\A<\?xml [^\n>]{0,200}\?>\n<!-- " + _SIGNED + _DIGEST + rb" -->\n")
        case Mark.PDF:
            return re.compile(rb"\n%" + _SIGNED + rb"\nstartxref\r?\n[0-9]+\r?\n%%EOF\r?\n?\Z")
        case Mark.APKG:  # the end-of-central-directory record: its signature, 16 bytes, the comment's length
            return re.compile(rb"PK\x05\x06.{16}(?P<length>..)(?P<comment>" + _SIGNED + rb")\Z", re.DOTALL)
        case unreachable:
            assert_never(unreachable)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:DIGEST_LENGTH]


def is_ours(path: Path) -> bool:
    """Whether the regular file at ``path`` is one bertdrill wrote and nobody changed since (it carries one of the
    marks, any format's, any version's), or is empty (nothing in it to lose: a file ``mktemp`` made for an output).
    A file that cannot be read is not."""
    try:
        with path.open("rb") as file:
            head = file.read(HEAD)
            if not head:
                return True
            size = file.seek(0, 2)
            file.seek(max(0, size - TAIL))
            tail = file.read(TAIL)
            return any(_carries(mark, file, head, tail) for mark in Mark)
    except OSError:
        return False


def _carries(mark: Mark, file: BinaryIO, head: bytes, tail: bytes) -> bool:
    match mark:
        case Mark.MARKDOWN | Mark.SVG:
            return False  # the same comment as HTML's, looked for as HTML's
        case Mark.HTML | Mark.GIFT | Mark.SCRIPT | Mark.MOODLE_XML:
            found = _mark_of(mark).match(head)
            return found is not None and _digest_from(file, found.end()) == found["digest"].decode()
        case Mark.PDF:
            return _mark_of(mark).search(tail) is not None
        case Mark.APKG:
            found = _mark_of(mark).search(tail)
            return found is not None and int.from_bytes(found["length"], "little") == len(found["comment"])
        case unreachable:
            assert_never(unreachable)


def _digest_from(file: BinaryIO, offset: int) -> str:
    """The digest of the file's bytes from ``offset`` to its end, read a chunk at a time."""
    file.seek(offset)
    digest = hashlib.sha256()
    while chunk := file.read(CHUNK):
        digest.update(chunk)
    return digest.hexdigest()[:DIGEST_LENGTH]
