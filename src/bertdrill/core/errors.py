"""The errors bertdrill raises on purpose.

Every one carries a message a person can act on; only the CLI turns them
into ``Error: ...`` and an exit code, so the library never prints.
"""

from __future__ import annotations

import errno

from bertdrill.core.i18n import _


class BertdrillError(Exception):
    """Base class for every anticipated failure."""


class FormulaError(BertdrillError):
    """A formula is not allowed, does not parse, or cannot be evaluated.

    ``formula`` names the lesson formula at fault, when there is one, so the
    lesson parser can point at its line.
    """

    def __init__(self, message: str, *, formula: str | None = None):
        super().__init__(message)
        self.formula = formula


class LessonError(BertdrillError):
    """A problem in a lesson file, located as ``path:line: message``."""

    def __init__(self, path: str, line: int | None, message: str):
        self.path = path
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


class LessonErrors(BertdrillError):
    """Several lesson problems found in one pass, reported together."""

    def __init__(self, errors: list[LessonError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


class StoreError(BertdrillError):
    """The review database cannot be opened, read or written."""


class DateRangeError(BertdrillError, OverflowError):
    """A date bertdrill works out falls past the calendar's end (``date.max``, in year 9999)."""


def os_reason(exc: OSError) -> str:
    """Why the system refused a file or a socket, in the learner's language: the one wording of every OSError
    a message shows (``exc.strerror`` is English whatever ``--lang`` says)."""
    match exc:
        case PermissionError():
            return _("permission denied")
        case FileNotFoundError():
            return _("the folder does not exist")
        case NotADirectoryError() | FileExistsError():  # mkdir through a file says "File exists"
            return _("a part of the path is not a folder")
        case IsADirectoryError():
            return _("it is a folder")
    match exc.errno:
        case errno.ENOSPC | errno.EDQUOT:
            return _("the disk is full")
        case errno.EROFS:
            return _("the file system is read-only")
        case errno.ENAMETOOLONG:
            return _("the name is too long")
        case errno.ELOOP:
            return _("a symbolic link points back to itself")
        case errno.EADDRINUSE:
            return _("another program is using that port")
        case errno.EADDRNOTAVAIL:
            return _("this machine has no such address")
        case errno.ECONNRESET | errno.EPIPE | errno.ECONNABORTED:
            return _("the connection was cut")
        case errno.ENETUNREACH | errno.EHOSTUNREACH:
            return _("the network cannot reach it")
    return exc.strerror or str(exc)
