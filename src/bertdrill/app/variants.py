"""Fresh numbers in review: which cards a session asks with a variant of their parameters, and which variant.

The one application-level API for variants, shared by the terminal and the class server: a
:class:`FreshNumbers` is given to a :class:`~bertdrill.app.session.Session`, which asks it for the
card to show (the card itself, or the same card with a variant's numbers: the same id, so every
variant of an item is one card for scheduling) and logs what was asked with the answer. Grading
and diagnosis use :meth:`FreshNumbers.lesson_of`, the lesson with the variant as one of its sets.

Which cards: numeric cards of a lesson with ``[variants]``, whose item does not opt out, when the
mode says so (:class:`~bertdrill.core.lesson.VariantMode`: the learner's choice, else the lesson's).
Which variant: the one drawn from a seed derived from the session's salt, the card and the number
of answers given so far, so a page shown twice shows the same numbers, and a log replays exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from bertdrill.core.cards import Card, MatchCard, NumericCard
from bertdrill.core.i18n import ngettext
from bertdrill.core.lesson import Lesson, NumericItem, Variant, VariantMode
from bertdrill.core.variants import (
    derive_seed,
    draw,
    find,
    from_key,
    variant_card,
    varied_lesson,
    wants_variant,
    with_decoys,
)

if TYPE_CHECKING:
    from bertdrill.core.diagnosis import Diagnoser

__all__ = ["FreshNumbers"]


class FreshNumbers:
    """Draws fresh variants for the numeric cards of ``lessons`` (``mode``: the learner's override)."""

    def __init__(self, lessons: Iterable[Lesson] | Mapping[str, Lesson], *, mode: VariantMode | None = None,
                 salt: int = 0):
        # a mapping may give each lesson as it stands when asked: the part of it whose cards were built so far
        self.lessons: Mapping[str, Lesson] = lessons if isinstance(lessons, Mapping) else {
            lesson.id: lesson for lesson in lessons}
        self.mode = mode
        self.salt = salt
        self._diagnosers: dict[tuple[str, str], Diagnoser | None] = {}  # (lesson id, variant key) -> made once
        self._sized_tables: dict[tuple[str, str], bool] = {}  # (lesson id, item id) -> its sizes pair it

    def mode_of(self, lesson: Lesson) -> VariantMode:
        """The learner's choice, else the lesson's own (``[variants] mode``), else fixed sets."""
        if self.mode is not None:
            return self.mode
        return lesson.variant_space.mode if lesson.variant_space is not None else VariantMode.FIXED

    def may_vary(self, card: Card) -> bool:
        """Whether the card could be asked with fresh numbers at all (before its schedule is looked at), or
        with decoys among its options (a matching table's row whose values the sizes would pair)."""
        lesson = self.lessons.get(card.lesson_id)
        if isinstance(card, MatchCard) and lesson is not None and lesson.variant_space is not None:
            return self._sized(lesson, card.item_id)
        if not isinstance(card, NumericCard) or card.variant or lesson is None or lesson.variant_space is None:
            return False  # (the variants themselves are listed only when one is drawn: it costs ~0.1 s)
        item = lesson.item(card.item_id)
        return isinstance(item, NumericItem) and item.varies and self.mode_of(lesson) is not VariantMode.FIXED

    def ask(self, card: Card, *, interval: int, attempt: int) -> Card:
        """The card to show: ``card`` itself, or ``card`` with the variant its seed draws.

        ``interval`` is the card's current interval in days (the ``mature`` mode looks at it),
        ``attempt`` how many answers the session has logged (so each showing draws anew).
        """
        if not self.may_vary(card):
            return card
        lesson = self.lessons[card.lesson_id]
        if isinstance(card, MatchCard):
            # The table's own set, whatever the mode, with the same decoys at every showing and for every row
            # (as a choice card keeps its options): options that changed from row to row would leave the
            # table's own values as the ones every row shows.
            return with_decoys(lesson, card, derive_seed(0, f"{card.lesson_id}/{card.item_id}", 0))
        assert isinstance(card, NumericCard)
        if not wants_variant(self.mode_of(lesson), interval):
            return card
        seed = derive_seed(self.salt, card.id, attempt)
        variant = draw(lesson, seed)
        return variant_card(lesson, card, variant, seed) if variant is not None else card

    def replayed(self, card: Card, key: str) -> tuple[NumericCard, Variant] | None:
        """``card`` as a log records it was asked: with the variant whose key the log holds (``d=512,f=2048``),
        rebuilt even if the lesson no longer allows it; None if it cannot be (not a numeric card, or its lesson
        has no ``[variants]`` any more)."""
        lesson = self.lessons.get(card.lesson_id)
        if not isinstance(card, NumericCard) or lesson is None or lesson.variant_space is None:
            return None
        variant = find(lesson, key) or from_key(lesson, key)
        return variant_card(lesson, card, variant), variant

    def diagnosed(self, card: Card, typed: str, key: str | None, named: Mapping[str, Diagnoser],
                  language: str) -> tuple[str, str | None]:
        """What the diagnosis says of a logged wrong answer ``typed`` to ``card``, as the learner saw it, and the
        values of the fresh numbers it answered (``d = 512, f = 2,048``; None: the card's own): for a variant's
        ``key``, graded against that variant's own numbers (the teacher's pages, ``class report``)."""
        from bertdrill.core.grading import grade  # only for a teacher's report: it costs an import

        asked = self.replayed(card, key) if key else None
        shown = asked[0] if asked is not None else card
        verdict = grade(shown, typed, language, diagnoser=self.diagnoser(shown, named))
        values = asked[1].shown(asked[1].varying, language) if asked is not None else key or None
        return verdict.note or verdict.feedback, values

    def _sized(self, lesson: Lesson, item_id: str) -> bool:
        """Whether the sizes of a matching table's numbers pair it (:func:`bertdrill.core.leaks.size_orders`)."""
        key = (lesson.id, item_id)
        if key not in self._sized_tables:
            from bertdrill.core.leaks import size_orders  # when a table is first shown: it costs an import

            self._sized_tables[key] = any(order.item_id == item_id
                                          for order in size_orders(lesson, lesson.languages[0]))
        return self._sized_tables[key]

    def lesson_of(self, card: Card) -> Lesson | None:
        """The lesson ``card`` is graded and diagnosed in: with its variant as a parameter set, if it has one."""
        lesson = self.lessons.get(card.lesson_id)
        if lesson is None or not isinstance(card, NumericCard) or not card.variant:
            return lesson
        return varied_lesson(lesson, card)

    def diagnoser(self, card: Card, named: Mapping[str, Diagnoser]) -> Diagnoser | None:
        """The diagnoser ``card`` is graded with: its lesson's (from ``named``), or for a card asked with a
        variant one that knows the variant's numbers ("7,084,800 is the layer without both LayerNorms, for
        d = 512"), made the first time that variant is graded."""
        variant = card.variant if isinstance(card, NumericCard) else None
        if not variant:
            return named.get(card.lesson_id)
        key = (card.lesson_id, variant)
        if key not in self._diagnosers:
            from bertdrill.core.diagnosis import Diagnoser  # only when a variant is graded: it costs an import

            lesson = self.lesson_of(card)
            self._diagnosers[key] = Diagnoser.for_lesson(lesson) if lesson is not None else None
        return self._diagnosers[key]


def learners_typed(learners: int, typed: str, note: str, values: str | None = None) -> str:
    """"2 learners typed 72: …", or for fresh numbers "2 learners typed 7,084,800 for d = 512, f = 2,048: …"."""
    if values is None:
        return ngettext("{count} learner typed {typed}: {note}", "{count} learners typed {typed}: {note}",
                        learners).format(count=learners, typed=typed, note=note)
    return ngettext("{count} learner typed {typed} for {values}: {note}",
                    "{count} learners typed {typed} for {values}: {note}",
                    learners).format(count=learners, typed=typed, values=values, note=note)
