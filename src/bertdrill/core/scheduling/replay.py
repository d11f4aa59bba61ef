"""A card's state, rebuilt from its review log: what switching scheduler does to every card.

The schedule is made by the first answer to a card on each study day; later answers that day
are the session's re-drills, logged but never rescheduling (SM-2 step 7, and FSRS without
minute steps). Replaying that subsequence through a scheduler gives the state the card would
have had if that scheduler had run all along; replaying it through SM-2 gives back SM-2's
stored schedule exactly, so a switch is undone by switching back.

Pure: the caller reads the log (study day and grade of each answer, oldest first, practice
answers left out) and stores the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date
from typing import Protocol

from bertdrill.core.scheduling.state import Schedule


class Reviewing(Protocol):
    """The part of :class:`bertdrill.ports.Scheduler` a replay needs."""

    @property
    def initial(self) -> Schedule: ...

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule: ...


def scheduling_answers(answers: Iterable[tuple[date, int]]) -> Iterator[tuple[date, int]]:
    """The answers that schedule: the first on each study day, in the order given (oldest first)."""
    seen: set[date] = set()
    for day, grade in answers:
        if day not in seen:
            seen.add(day)
            yield day, grade


def replay(scheduler: Reviewing, answers: Iterable[tuple[date, int]], card_id: str | None = None) -> Schedule:
    """The card's state after its logged ``answers`` (study day, grade; oldest first) under ``scheduler``.

    ``card_id`` names the card, for a scheduler that decides per card (``for_card``: the fuzz of
    :mod:`.spread` is seeded by the card, an exam may be a lesson's).
    A scheduler with a ``replay`` method of its own (FSRS: it skips converting states between
    answers) is trusted to give what reviewing answer after answer gives; the tests check it does.
    """
    if card_id is not None:
        for_card = getattr(scheduler, "for_card", None)
        if for_card is not None:
            scheduler = for_card(card_id, None)
    own = getattr(scheduler, "replay", None)
    if own is not None:
        replayed: Schedule = own(scheduling_answers(answers))
        return replayed
    state = scheduler.initial
    for day, grade in scheduling_answers(answers):
        state = scheduler.review(state, grade, today=day)
    return state


def states(scheduler: Reviewing, answers: Iterable[tuple[date, int]]) -> Iterator[tuple[date, int, Schedule]]:
    """Each scheduling answer (study day, grade) with the state before it; the last state is :func:`replay`'s."""
    state = scheduler.initial
    for day, grade in scheduling_answers(answers):
        yield day, grade, state
        state = scheduler.review(state, grade, today=day)
