"""What the readers of a lesson's parts need of whoever reads the whole: the shape of the parser, as types.

The parser (:mod:`.parse`) reads the lesson's tables and hands each ``[[item]]`` to :mod:`.items`, which
hands its claims to :mod:`.claims`; the readers report errors and read values through the parser. They
depend on these Protocols, not on :class:`~.parse.Parser`, so the imports run one way (parse -> items ->
claims -> here), in the types too.
"""

from __future__ import annotations

from typing import Any, Protocol

from bertdrill.core.formula import Number
from bertdrill.core.lesson.positions import Lines


class Skip(Exception):
    """Stop parsing the current item; its error is already recorded."""


class FieldReader(Protocol):
    """The parser, as an item's reader uses it: it records errors and reads checked values."""

    @property
    def lines(self) -> Lines: ...
    @property
    def languages(self) -> tuple[str, ...]: ...

    def fail(self, line: int | None, message: str) -> Skip:
        """Record ``message`` at ``line``; the caller raises the :class:`Skip` it returns."""
        ...

    def ident(self, value: object, line: int | None, what: str) -> str: ...
    def plain(self, value: object, line: int | None, what: str) -> str: ...
    def visible(self, value: str, line: int | None, what: str) -> str: ...
    def number(self, value: object, line: int | None, what: str) -> Number: ...
    def text(self, data: dict[str, Any], key: str, table: str, *, required: bool = False) -> dict[str, str]: ...
    def tags(self, data: dict[str, Any], table: str) -> tuple[str, ...]: ...


class ItemFields(Protocol):
    """One item's fields, as the reader of a part of it (its claims) uses them."""

    @property
    def data(self) -> dict[str, Any]: ...
    @property
    def line(self) -> int: ...

    def at(self, key: str) -> int | None:
        """The line of the item's field ``key``, when the file has it."""
        ...

    def fail(self, key: str, message: str) -> Skip:
        """Record ``message`` at the field ``key``; the caller raises the :class:`Skip` it returns."""
        ...
