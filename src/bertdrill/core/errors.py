"""The errors bertdrill raises on purpose.

Every one carries a message a person can act on; only the CLI turns them
into ``Error: ...`` and an exit code, so the library never prints.
"""

from __future__ import annotations


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
