"""Read lesson files: the shipped lessons, or paths a user names.

The only part of the lesson pipeline that touches files. It turns every way a
file can be unreadable into a :class:`LessonError` with the path, so the
parser itself stays a pure function of text.

A :class:`LessonCache` keeps each verified lesson, keyed by a hash of the file's bytes and of the code
that verified it, so a lesson that has not changed is not parsed and verified again.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from pathlib import Path

from bertdrill import __version__
from bertdrill.core.cards import Card, compile_lesson
from bertdrill.core.errors import BertdrillError, LessonError, LessonErrors
from bertdrill.core.i18n import _
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
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise LessonErrors([LessonError(name, line, _("not UTF-8 text (byte 0x{byte:02x}); save the file as UTF-8").format(
            byte=data[exc.start]))]) from None
    if cache is not None and (kept := cache.get(data, name)) is not None:
        return kept
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
    files = expand(paths) if paths else shipped_paths()
    lessons: list[Lesson] = []
    errors: list[LessonError] = []
    for path in track(files):
        try:
            lessons.append(read_lesson(path, cache))
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


def find_lesson(lessons: list[Lesson], lesson_id: str) -> Lesson:
    """The lesson with this id (or file stem), with the known ids in the message when absent."""
    for lesson in lessons:
        if lesson.id == lesson_id or Path(lesson.path).stem == lesson_id:
            return lesson
    known = ", ".join(lesson.id for lesson in lessons) or "none"
    raise LessonErrors([LessonError(lesson_id, None, _("no lesson with this id (known: {known})").format(known=known))])


def all_cards(lessons: list[Lesson]) -> list[Card]:
    return [card for lesson in lessons for card in compile_lesson(lesson)]


# --------------------------------------------------------------------------- the cache of verified lessons

CACHE_FORMAT = b"bertdrill lesson cache 1\n"
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
        entry = self.entry(data)
        try:
            if not self._trusted_folder():
                return None
            with entry.open("rb") as file:
                content = file.read(MAX_ENTRY_BYTES + 1)
        except OSError:
            return None
        head, _newline, payload = content.partition(b"\n")
        if head + b"\n" != CACHE_FORMAT or len(content) > MAX_ENTRY_BYTES:
            return None
        check, _newline, payload = payload.partition(b"\n")
        if check != self._check(entry, payload):
            return None
        try:
            return stored.decode(payload, path)
        except stored.Unreadable:
            return None

    def put(self, data: bytes, lesson: Lesson) -> None:
        """Keep a lesson just verified from ``data``; a folder that cannot take it is left alone."""
        entry = self.entry(data)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self._trusted_folder():
                return
            payload = stored.encode(lesson)
            self.write(entry, CACHE_FORMAT + self._check(entry, payload) + b"\n" + payload)
            self._prune()
        except (OSError, BertdrillError, ValueError):  # ValueError: a number too long for JSON
            return

    @staticmethod
    def _check(entry: Path, payload: bytes) -> bytes:
        return hashlib.sha256(entry.name.encode() + b"\0" + payload).hexdigest().encode()

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
