"""The cards a review session may show, built when it shows them.

A session asks for few cards: today's due ones (200 at most), its new ones, its re-drills. A
:class:`Deck` builds exactly those, lesson by lesson, through each lesson's :class:`LessonCards`
(the lesson cache's :class:`bertdrill.adapters.lessons.LessonIndex` reads only their items), so the
first card of a collection of 100,000 is shown without compiling the other 99,999. A deck made of
cards already built (:meth:`Deck.of`) gives them as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from bertdrill.core.cards import Card
from bertdrill.core.kinds import interleave_by_kind

__all__ = ["Deck", "LessonCards"]


class LessonCards(Protocol):
    """One lesson's cards as a deck needs them: the ids of those a review shows in the order new cards come
    (:meth:`Deck.new_order`), and built for some ids (those the lesson has; any other id is left out)."""

    @property
    def id(self) -> str: ...
    def new_order(self) -> Sequence[str]: ...
    def cards_of(self, card_ids: Iterable[str]) -> Mapping[str, Card]: ...


class Deck:
    """The reviewed cards of some lessons, by id, each built on first use and kept."""

    def __init__(self, lessons: Iterable[LessonCards]):
        self._lessons = {lesson.id: lesson for lesson in lessons}
        self._built: dict[str, Card] = {}

    @classmethod
    def of(cls, cards: Iterable[Card]) -> Deck:
        """A deck of cards already built; its lessons in the order their first card comes."""
        by_lesson: dict[str, list[Card]] = {}
        for card in cards:
            by_lesson.setdefault(card.lesson_id, []).append(card)
        return cls(_Built(lesson_id, built) for lesson_id, built in by_lesson.items())

    @property
    def lesson_ids(self) -> list[str]:
        return list(self._lessons)

    def new_order(self, lesson_id: str) -> list[str]:
        """The ids of the lesson's cards a review shows, in the order new cards are introduced: interleaved by
        kind (:func:`bertdrill.core.kinds.interleave_by_kind`). The lesson cache keeps it, so the first card
        of a review does not read the lesson's every card for it."""
        lesson = self._lessons.get(lesson_id)
        return [] if lesson is None else list(lesson.new_order())

    def cards(self, card_ids: Iterable[str]) -> list[Card]:
        """The cards a review shows among ``card_ids``, in their order; an id of no card of the deck's lessons
        (or of a card a review does not show) is left out."""
        ids = list(card_ids)
        wanted: dict[str, list[str]] = {}
        for card_id in ids:
            if card_id not in self._built:
                wanted.setdefault(card_id.partition("/")[0], []).append(card_id)
        for lesson_id, missing in wanted.items():
            if (lesson := self._lessons.get(lesson_id)) is not None:
                self._built.update(lesson.cards_of(missing))
        return [card for card_id in ids if (card := self._built.get(card_id)) is not None and card.kind.reviewed]


class _Built:
    """A lesson's cards already built."""

    def __init__(self, lesson_id: str, cards: list[Card]):
        self.id = lesson_id
        self._cards = cards
        self._by_id = {card.id: card for card in cards}

    def new_order(self) -> Sequence[str]:
        return [card.id for card in interleave_by_kind(card for card in self._cards if card.kind.reviewed)]

    def cards_of(self, card_ids: Iterable[str]) -> Mapping[str, Card]:
        return {card_id: self._by_id[card_id] for card_id in card_ids if card_id in self._by_id}
