"""Writing an output file the one safe way, for every command that writes one (``sheet``, ``export anki``,
``stats --chart``, ``practice start``, and bertdrill's own lesson cache and login).

- Only a regular file is ever written: a device, a FIFO, a socket or a folder is refused with a message, so
  ``-o /dev/null`` never replaces the node (as root it could) and ``-o fifo`` never blocks.
- A symbolic link is followed: the file it points to is replaced and the link stays a link to it (a link
  to something that is not a regular file is refused like that thing).
- The new file appears whole or not at all: it is written to a temporary file beside the target, synced,
  then renamed over it, and the folder is synced, so a crash leaves the old file or the new one.
- A file being replaced keeps its permission bits (a private 0600 sheet stays private); a new file gets
  what a plain ``open()`` would give (0666 minus the umask).
- An existing file is replaced only when bertdrill wrote it (:data:`Replace.OURS`: it carries one of the marks of
  :mod:`bertdrill.adapters.export.marks`), so ``sheet -o essay.md`` never replaces the user's essay; ``--force``
  (:data:`Replace.ANY`) replaces any regular file, as do bertdrill's own files in its own folders (the lesson
  cache, the login). Every caller says which: the rule is here, once.
- A command never replaces its own inputs (not even with ``--force``): the caller names them (:class:`Input`: the lessons it reads,
  the review database in use and its journal files), and an output that is one of them, by any path or
  link, is refused before any work.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO, assert_never

from bertdrill.adapters.export.marks import is_ours
from bertdrill.core.errors import BertdrillError, os_reason
from bertdrill.core.i18n import _


class WriteError(BertdrillError):
    """An output file cannot be written; the message says why and what to do."""


class Replace(StrEnum):
    """Which existing regular file a write may replace."""

    OURS = "ours"  # only one bertdrill wrote (or an empty one): every output a person names, without --force
    ANY = "any"  # any: --force said so, or the file is bertdrill's own in a folder of its own (cache, login)

    @classmethod
    def forced(cls, force: bool) -> Replace:
        """What ``--force`` asks for."""
        return cls.ANY if force else cls.OURS


class InputKind(StrEnum):
    LESSON = "lesson"
    DATABASE = "database"  # the review database in use, or one of its journal files (-wal, -shm, -journal)
    ROSTER = "roster"  # sheet --students ROSTER.csv


@dataclass(frozen=True)
class Input:
    """A file the command reads (or may yet create, as a database), which its output must never be."""

    path: Path
    kind: InputKind
    shown: str = ""  # how the message names it (default: the path): the database for its journal files


def check_writable(path: Path, *, replace: Replace, example: str = "out.html", inputs: Iterable[Input] = (),
                   option: str = "-o") -> Path:
    """The regular file that writing ``path`` will replace or create (a link followed); refuse anything else,
    any of the command's ``inputs``, and a file ``replace`` does not allow replacing (``option``: the command's
    option that names the file, for the message).

    Called before any work, so a long export does not fail at its very end.
    """
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    for each in inputs:
        if _same_file(target, each.path):
            raise WriteError(_input_message(path, each))
    folder = target.parent
    try:
        mode: int | None = target.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):  # a new file; a missing folder is told below
        mode = None
    except OSError as exc:
        raise WriteError(_("cannot write {path}: {reason}").format(path=str(path), reason=os_reason(exc))) from None
    if mode is not None and not stat.S_ISREG(mode):
        what = _not_a_file(mode)
        if stat.S_ISDIR(mode):
            example = str(path / example)
        raise WriteError(_("cannot write {path}: {what}; give a file name such as {example}").format(
            path=str(path), what=what, example=example))
    if not folder.exists():
        raise WriteError(_("cannot write {path}: the folder {folder} does not exist").format(
            path=str(path), folder=str(folder)))
    if not folder.is_dir():
        raise WriteError(_("cannot write {path}: {folder} is not a folder").format(path=str(path), folder=str(folder)))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise WriteError(_("cannot write {path}: permission denied for the folder {folder}").format(
            path=str(path), folder=str(folder)))
    if mode is not None and not os.access(target, os.W_OK):
        raise WriteError(_("cannot write {path}: the file is read-only").format(path=str(path)))
    if mode is not None and not _may_replace(target, replace):
        raise WriteError(_("{path} exists and is not a file bertdrill wrote; use --force to replace it, or {option} "
                           "to choose another file").format(path=str(path), option=option))
    return target


def _may_replace(target: Path, replace: Replace) -> bool:
    match replace:
        case Replace.ANY:
            return True
        case Replace.OURS:
            return is_ours(target)
        case unreachable:
            assert_never(unreachable)


Content = bytes | Callable[[BinaryIO], None]
"""A file's content: its bytes, or a function that writes them to a binary file (for one too large to hold)."""


def as_bytes(content: Content) -> bytes:
    """The bytes ``content`` writes, for a caller that holds a file whole (a page served, a test)."""
    if isinstance(content, bytes):
        return content
    buffer = io.BytesIO()
    content(buffer)
    return buffer.getvalue()


def write_atomic(path: Path, content: Content, *, replace: Replace,
                 example: str = "out.html", inputs: Iterable[Input] = (), mode: int | None = None,
                 option: str = "-o") -> None:
    """Write ``content`` (bytes, or a function that writes to a binary file) to ``path``, whole or not at all;
    never over one of ``inputs``, nor over a file ``replace`` does not allow. ``mode``: the file's permission bits
    (a secret's 0o600), else those of the file it replaces, else what the umask gives."""
    target = check_writable(path, replace=replace, example=example, inputs=inputs, option=option)
    try:
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise WriteError(_("cannot write {path}: {reason}").format(path=str(path), reason=os_reason(exc))) from None
    try:
        with os.fdopen(handle, "wb") as out:
            os.fchmod(out.fileno(), _mode_for(target) if mode is None else mode)  # mkstemp's: only the owner's
            if isinstance(content, bytes):
                out.write(content)
            else:
                content(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
        _sync_folder(target.parent)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise WriteError(_("cannot write {path}: {reason}").format(path=str(path), reason=os_reason(exc))) from None
        raise


def _same_file(path: Path, other: Path) -> bool:
    """The same file, through any path, link or hard link; for files not there yet, the same resolved path."""
    try:
        return os.path.samefile(path, other)
    except OSError:
        return os.path.realpath(path) == os.path.realpath(other)


def _input_message(path: Path, read: Input) -> str:
    match read.kind:
        case InputKind.LESSON:
            return _("cannot write {path}: it is the lesson file {input}, which this command reads; "
                     "write somewhere else").format(path=str(path), input=read.shown or str(read.path))
        case InputKind.ROSTER:
            return _("cannot write {path}: it is the roster {input}, which this command reads; "
                     "write somewhere else").format(path=str(path), input=read.shown or str(read.path))
        case InputKind.DATABASE:
            return _("cannot write {path}: it is the review database {input} or one of its journal files, "
                     "which hold every answer; write somewhere else").format(path=str(path),
                                                                           input=read.shown or str(read.path))
        case _:
            assert_never(read.kind)


def _mode_for(target: Path) -> int:
    """The permission bits of the file being replaced, or what the umask gives a new file."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (the folder's entry), where the platform allows opening a folder."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _not_a_file(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return _("it is a folder")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return _("it is a device, not a regular file")
    if stat.S_ISFIFO(mode):
        return _("it is a named pipe (FIFO), not a regular file")
    if stat.S_ISSOCK(mode):
        return _("it is a socket, not a regular file")
    return _("it is not a regular file")


