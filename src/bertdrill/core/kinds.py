"""What kind of thing a card asks, as a type: code that depends on it uses ``match`` and ``assert_never``."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Protocol, TypeVar, assert_never


class Kind(StrEnum):
    FACT = "fact"  # a question and its answer
    CHOICE = "choice"  # options, one correct
    BLANK = "blank"  # code with a blank to fill
    NUMERIC = "numeric"  # a formula over a parameter set
    MATCH = "match"  # one row of a term/meaning table
    PRACTICE = "practice"  # the lesson's coding exercise

    @property
    def reviewed(self) -> bool:
        """Whether a review session shows it: practice is checked by ``bertdrill practice``, never reviewed."""
        match self:
            case Kind.FACT | Kind.CHOICE | Kind.BLANK | Kind.NUMERIC | Kind.MATCH:
                return True
            case Kind.PRACTICE:
                return False
            case unreachable:
                assert_never(unreachable)


class Sorted(Protocol):
    """What interleaving looks at of a card, or of a row of one."""

    @property
    def lesson_id(self) -> str: ...
    @property
    def kind(self) -> Kind: ...


Listed = TypeVar("Listed", bound=Sorted)


def interleave_by_kind(cards: Iterable[Listed]) -> list[Listed]:
    """New cards taken in turn from each kind, in lesson order within a kind and lesson by lesson.

    A lesson's facts come first in its file; without this, the first days would show only facts
    and totals, and the lesson's own questions (choice, blank, match) not before day 3. In turn,
    every kind of a lesson is among its first new cards.
    """
    lessons: dict[str, dict[str, list[Listed]]] = {}
    for card in cards:
        lessons.setdefault(card.lesson_id, {}).setdefault(card.kind, []).append(card)
    ordered: list[Listed] = []
    for kinds in lessons.values():
        turns = list(kinds.values())
        for index in range(max(len(queue) for queue in turns)):
            ordered.extend(queue[index] for queue in turns if index < len(queue))
    return ordered
