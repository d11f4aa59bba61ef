"""Read lesson files: the shipped lessons, or paths a user names.

The only part of the lesson pipeline that touches files. It turns every way a
file can be unreadable into a :class:`LessonError` with the path, so the
parser itself stays a pure function of text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path

from bertdrill.core.cards import Card, compile_lesson
from bertdrill.core.errors import LessonError, LessonErrors
from bertdrill.core.i18n import _
from bertdrill.core.lesson import Lesson, parse

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


def read_lesson(path: Path) -> Lesson:
    """Read, parse and verify one lesson file."""
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
    return parse(text.removeprefix("\ufeff"), name)


def load_lessons(paths: list[Path] | None = None, *,
                 track: Callable[[list[Path]], Iterable[Path]] = iter) -> list[Lesson]:
    """The named lessons, or the shipped ones; every problem in every file is reported together.

    ``track`` wraps the list of files as they are read (the CLI passes a progress bar).
    """
    files = expand(paths) if paths else shipped_paths()
    lessons: list[Lesson] = []
    errors: list[LessonError] = []
    for path in track(files):
        try:
            lessons.append(read_lesson(path))
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
