"""Read lesson files: the shipped lessons, or paths a user names.

The only part of the lesson pipeline that touches files. It turns every way a
file can be unreadable into a :class:`LessonError` with the path, so the
parser itself stays a pure function of text.

A :class:`LessonCache` keeps each verified lesson, keyed by a hash of the file's bytes and of the code
that verified it, so a lesson that has not changed is not parsed and verified again.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import chain
from pathlib import Path
from typing import NamedTuple, TypeVar

from bertdrill import __version__
from bertdrill.core.cards import Card, compile_lesson
from bertdrill.core.errors import BertdrillError, LessonError, LessonErrors
from bertdrill.core.i18n import _
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson import Lesson, parse, stored

MAX_FILE_BYTES = 5_000_000


def shipped_paths() -> list[Path]:
    """The lesson files that ship inside the package (``decks/*.toml`` in the repository)."""
    folder = resources.files("bertdrill.decks")
    return sorted(Path(str(entry)) for entry in folder.iterdir() if entry.name.endswith(".toml"))


def expand(paths: list[Path]) -> list[Path]:
    """Lesson files from the given paths; a directory stands for the ``*.toml`` files in it."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(path.glob("*.toml"))
            if not inside:
                raise LessonErrors([LessonError(str(path), None, _("is a directory with no .toml lesson files"))])
            found.extend(inside)
        else:
            found.append(path)
    return found


def read_lesson(path: Path, cache: LessonCache | None = None) -> Lesson:
    """Read, parse and verify one lesson file; with a ``cache``, a file verified before is read from it."""
    data = _read(path)
    if cache is not None and (kept := cache.get(data, str(path))) is not None:
        return kept
    return _verified(data, str(path), cache)


def read_index(path: Path, cache: LessonCache | None = None) -> LessonIndex:
    """One lesson file's :class:`LessonIndex`: from the cache when the file was verified before, else
    the file is read, parsed and verified (and kept in the cache) as :func:`read_lesson` does."""
    data = _read(path)
    if cache is not None and (kept := cache.index(data, str(path))) is not None:
        return kept
    return index_of(_verified(data, str(path), cache))


def _read(path: Path) -> bytes:
    """A lesson file's bytes, with every way reading it can fail as a LessonError."""
    name = str(path)
    try:
        if path.is_dir():
            raise LessonErrors([LessonError(name, None, _("is a directory, not a lesson file"))])
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise LessonErrors([LessonError(name, None, _("file too large ({size:,} bytes; at most {most:,})").format(
                size=size, most=MAX_FILE_BYTES))])
        data = path.read_bytes()
    except FileNotFoundError:
        raise LessonErrors([LessonError(name, None, _("no such file"))]) from None
    except PermissionError:
        raise LessonErrors([LessonError(name, None, _("permission denied"))]) from None
    except OSError as exc:
        raise LessonErrors([LessonError(name, None, _("cannot read: {reason}").format(reason=exc.strerror or exc))]) from None
    return data


def source_text(path: str) -> str:
    """A lesson file's text, as :func:`read_lesson` parsed it (for ``class init``, which publishes it)."""
    return _read(Path(path)).decode("utf-8").removeprefix("\ufeff")


def _verified(data: bytes, name: str, cache: LessonCache | None) -> Lesson:
    """Parse and verify a lesson file's bytes (the cache knows only bytes that were UTF-8 text)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise LessonErrors([LessonError(name, line, _("not UTF-8 text (byte 0x{byte:02x}); save the file as UTF-8").format(
            byte=data[exc.start]))]) from None
    lesson = parse(text.removeprefix("\ufeff"), name)
    if cache is not None:
        cache.put(data, lesson)
    return lesson


def load_lessons(paths: list[Path] | None = None, *, track: Callable[[list[Path]], Iterable[Path]] = iter,
                 cache: LessonCache | None = None) -> list[Lesson]:
    """The named lessons, or the shipped ones; every problem in every file is reported together.

    ``track`` wraps the list of files as they are read (the CLI passes a progress bar); ``cache``
    keeps verified lessons between runs (:class:`LessonCache`).
    """
    return _load_all(paths, lambda path: read_lesson(path, cache), track)


def load_indexes(paths: list[Path] | None = None, *, track: Callable[[list[Path]], Iterable[Path]] = iter,
                 cache: LessonCache | None = None) -> list[LessonIndex]:
    """What :func:`load_lessons` gives, as each lesson's :class:`LessonIndex`: for the commands that count
    and sync cards but show none (``status``), so an unchanged lesson is not even rebuilt from the cache."""
    return _load_all(paths, lambda path: read_index(path, cache), track)


Loaded = TypeVar("Loaded", Lesson, "LessonIndex")


def _load_all(paths: list[Path] | None, read: Callable[[Path], Loaded],
              track: Callable[[list[Path]], Iterable[Path]]) -> list[Loaded]:
    files = expand(paths) if paths else shipped_paths()
    lessons: list[Loaded] = []
    errors: list[LessonError] = []
    for path in track(files):
        try:
            lessons.append(read(path))
        except LessonErrors as exc:
            errors.extend(exc.errors)
    if errors:
        raise LessonErrors(errors)
    seen: dict[str, str] = {}
    for lesson in lessons:
        if lesson.id in seen:
            errors.append(LessonError(lesson.path, 1, _("lesson id {lesson!r} is also used by {other}").format(
                lesson=lesson.id, other=seen[lesson.id])))
        seen[lesson.id] = lesson.path
    if errors:
        raise LessonErrors(errors)
    return lessons


def find_lesson(lessons: list[Loaded], lesson_id: str) -> Loaded:
    """The lesson with this id (or file stem), with the known ids in the message when absent."""
    for lesson in lessons:
        if lesson.id == lesson_id or Path(lesson.path).stem == lesson_id:
            return lesson
    known = ", ".join(lesson.id for lesson in lessons) or "none"
    raise LessonErrors([LessonError(lesson_id, None, _("no lesson with this id (known: {known})").format(known=known))])


def all_cards(lessons: list[Lesson]) -> list[Card]:
    return [card for lesson in lessons for card in compile_lesson(lesson)]


class CardRow(NamedTuple):
    """What a store keeps of a card (:class:`bertdrill.ports.SyncCard`): enough to sync and count it."""

    id: str
    lesson_id: str
    item_id: str
    kind: Kind
    fingerprint: str


@dataclass(frozen=True)
class LessonIndex:
    """A verified lesson's id, file, languages and cards as rows, without the lesson itself."""

    id: str
    path: str
    languages: tuple[str, ...]
    cards: tuple[CardRow, ...]


def index_of(lesson: Lesson) -> LessonIndex:
    rows = tuple(CardRow(card.id, card.lesson_id, card.item_id, card.kind, card.fingerprint)
                 for card in compile_lesson(lesson))
    return LessonIndex(lesson.id, lesson.path, lesson.languages, rows)


_KINDS = {kind.value: kind for kind in Kind}  # a dict lookup: Kind(name) costs microseconds, on 100,000 rows


def _index_json(index: LessonIndex) -> bytes:
    cards = [list(card) for card in index.cards]
    return json.dumps([index.id, list(index.languages), cards], ensure_ascii=False, separators=(",", ":")).encode()


def _index_from_json(data: bytes, path: str) -> LessonIndex:
    """The index :func:`_index_json` wrote; ValueError for anything else. Checked a column at a time, in C:
    a status of 100,000 cards reads it, and a check per value in Python was most of that."""
    try:
        lesson_id, languages, cards = json.loads(data)
        if type(lesson_id) is not str or type(languages) is not list or type(cards) is not list \
                or set(map(type, languages)) - {str} or set(map(type, cards)) - {list} or set(map(len, cards)) - {5} \
                or set(map(type, chain.from_iterable(cards))) - {str} or {card[1] for card in cards} - {lesson_id} \
                or {card[3] for card in cards} - _KINDS.keys():
            raise ValueError("not a lesson's index")
        for card in cards:
            card[3] = _KINDS[card[3]]
    except (TypeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None
    collecting = gc.isenabled()
    gc.disable()  # 100,000 rows, none of them garbage: collecting while they are made would walk them all again
    try:
        return LessonIndex(lesson_id, path, tuple(languages), tuple(map(CardRow._make, cards)))
    finally:
        if collecting:
            gc.enable()


# --------------------------------------------------------------------------- the cache of verified lessons

CACHE_FORMAT = b"bertdrill lesson cache 3\n"
CACHE_ENTRIES = 200  # entries kept: each edit of a lesson makes a new one, so the oldest go
STALE_TEMPORARY = 3600  # seconds after which a writer's leftover temporary file is its crash's, not its work
MAX_ENTRY_BYTES = 4 * MAX_FILE_BYTES  # an entry is about its lesson's size: a bigger file is not ours


def cache_folder() -> Path:
    """``BERTDRILL_CACHE``, else ``BERTDRILL_HOME/cache``, else the platform's user cache folder
    (``~/.cache/bertdrill/lessons`` on Linux). Never a lesson's own folder."""
    if folder := os.environ.get("BERTDRILL_CACHE"):
        return Path(folder)
    if home := os.environ.get("BERTDRILL_HOME"):
        return Path(home) / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("bertdrill", appauthor=False)) / "lessons"


@cache
def verifier_digest() -> bytes:
    """What a cached lesson depends on besides its text: the format, bertdrill's version, the Python
    version (tomllib), the model's fields, and the source of the core that parsed and verified it, so
    an edited verifier (a fix, a new check) never accepts what it would now refuse."""
    digest = hashlib.sha256(CACHE_FORMAT + f"{__version__} {sys.version_info[:2]} {stored.SCHEMA}".encode())
    core = Path(stored.__file__).resolve().parent.parent
    for source in sorted(core.rglob("*.py")):
        digest.update(str(source.relative_to(core)).encode() + b"\0" + source.read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.digest()


class LessonCache:
    """Verified lessons kept in a folder of the user's, one file per lesson text.

    An entry's name is the hash of the lesson's bytes and of :func:`verifier_digest`, so only the
    very bytes that were verified, by the very code that verified them, find it. Its first lines
    hold the format and a hash of its name and content: a damaged, cut or swapped entry is ignored
    and rebuilt, never trusted. The content is JSON (:mod:`bertdrill.core.lesson.stored`): reading it
    runs no code. The folder must be the user's own and writable by nobody else, or it is not used
    at all (an entry planted there could claim a lesson verified). Every entry is written whole through
    the one atomic writer (``write``, the CLI passes :func:`bertdrill.adapters.export.files.write_atomic`),
    so processes writing at once leave one good entry. The cache never makes a command fail: when it
    cannot be read or written the lesson is simply read from its file.
    """

    def __init__(self, folder: Path, write: Callable[[Path, bytes], None]):
        self.folder = folder
        self.write = write

    def entry(self, data: bytes) -> Path:
        return self.folder / (hashlib.sha256(verifier_digest() + data).hexdigest() + ".json")

    def get(self, data: bytes, path: str) -> Lesson | None:
        """The lesson verified from exactly these bytes, or None."""
        section = self._section(data, b"lesson")
        try:
            return None if section is None else stored.decode(section, path)
        except stored.Unreadable:
            return None

    def index(self, data: bytes, path: str) -> LessonIndex | None:
        """The :class:`LessonIndex` of the lesson verified from exactly these bytes, or None."""
        section = self._section(data, b"index")
        try:
            return None if section is None else _index_from_json(section, path)
        except ValueError:
            return None

    def put(self, data: bytes, lesson: Lesson) -> None:
        """Keep a lesson just verified from ``data``; a folder that cannot take it is left alone."""
        entry = self.entry(data)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self._trusted_folder():
                return
            index, body = _index_json(index_of(lesson)), stored.encode(lesson)
            checks = self._check(entry, b"index", index) + b" " + self._check(entry, b"lesson", body)
            self.write(entry, CACHE_FORMAT + checks + b"\n" + index + b"\n" + body)
            self._prune()
        except (OSError, BertdrillError, ValueError):  # ValueError: a number too long for JSON
            return

    def _section(self, data: bytes, name: bytes) -> bytes | None:
        """One section of the entry for ``data`` (``index`` or ``lesson``), if its checksum holds.

        An entry is four lines: the format, the two sections' checksums, the index and the lesson
        (compact JSON holds no newline). Each checksum is of the entry's name, the section's name and its
        bytes, so a section is good only in its own place of its own entry."""
        entry = self.entry(data)
        try:
            if not self._trusted_folder():
                return None
            with entry.open("rb") as file:
                content = file.read(MAX_ENTRY_BYTES + 1)
        except OSError:
            return None
        parts = content.split(b"\n", 3)
        if len(content) > MAX_ENTRY_BYTES or len(parts) != 4 or parts[0] + b"\n" != CACHE_FORMAT:
            return None
        checks, sections = parts[1].split(b" "), {b"index": parts[2], b"lesson": parts[3]}
        position = 0 if name == b"index" else 1
        if len(checks) != 2 or checks[position] != self._check(entry, name, sections[name]):
            return None
        return sections[name]

    @staticmethod
    def _check(entry: Path, section: bytes, content: bytes) -> bytes:
        return hashlib.sha256(entry.name.encode() + b"\0" + section + b"\0" + content).hexdigest().encode()

    def _trusted_folder(self) -> bool:
        """The folder is ours and nobody else may write in it (where the system has owners)."""
        if not hasattr(os, "getuid"):
            return self.folder.is_dir()
        status = self.folder.stat()
        return (stat.S_ISDIR(status.st_mode) and status.st_uid == os.getuid()
                and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH))

    def _prune(self) -> None:
        """Keep the newest :data:`CACHE_ENTRIES` entries, and drop temporary files a crashed writer left."""
        entries, now = [], time.time()
        for found in os.scandir(self.folder):
            if found.name.endswith(".json") and len(found.name) == 69:
                entries.append((found.stat().st_mtime, found.path))
            elif found.name.endswith(".tmp") and now - found.stat().st_mtime > STALE_TEMPORARY:
                Path(found.path).unlink(missing_ok=True)
        for _mtime, old in sorted(entries, reverse=True)[CACHE_ENTRIES:]:
            Path(old).unlink(missing_ok=True)
