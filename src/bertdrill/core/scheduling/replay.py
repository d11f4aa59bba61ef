"""A card's state, rebuilt from its review log: what switching scheduler does to every card.

The schedule is made by the first answer to a card on each study day; later answers that day
are the session's re-drills, logged but never rescheduling (SM-2 step 7, and FSRS without
minute steps). Replaying that subsequence through a scheduler gives the state the card would
have had if that scheduler had run all along; replaying it through SM-2 gives back SM-2's
stored schedule exactly, so a switch is undone by switching back.

Pure: the caller reads the log (study day and grade of each answer, oldest first, practice
answers left out) and stores the result. A switch reads the days as numbers (:data:`DayLog`: a day's
``toordinal()``, which SQL computes as it reads), so a million answers build no ``date`` objects, and a
scheduler's own fast replay does without them too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date
from typing import Protocol, TypeAlias

from bertdrill.core.scheduling.state import Schedule

DayLog: TypeAlias = Sequence[tuple[int, int]]
"""One card's answers as (study day's ``date.toordinal()``, grade), oldest first, re-drills included."""


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


def scheduling_days(log: DayLog) -> list[tuple[int, int]]:
    """:func:`scheduling_answers` of a :data:`DayLog`: the first answer on each study day, in the order given."""
    seen: set[int] = set()
    kept = []
    for day, grade in log:
        if day not in seen:
            seen.add(day)
            kept.append((day, grade))
    return kept


def replay(scheduler: Reviewing, answers: Iterable[tuple[date, int]], card_id: str | None = None) -> Schedule:
    """The card's state after its logged ``answers`` (study day, grade; oldest first) under ``scheduler``:
    :func:`replay_days` of the same log."""
    return replay_days(scheduler, [(day.toordinal(), grade) for day, grade in answers], card_id)


def card_replayer(scheduler: Reviewing) -> Callable[[str, DayLog], Schedule]:
    """``replay_days(scheduler, log, card_id)`` as a function of (card_id, log), made once for a switch's 100,000
    cards: a scheduler with a ``replayer`` of its own (:class:`bertdrill.core.scheduling.spread.Spread`) decides
    once what is the same for every card. tests/test_replay.py holds it to :func:`replay_days`."""
    own = getattr(scheduler, "replayer", None)
    made: Callable[[str, DayLog], Schedule] | None = own() if own is not None else None
    if made is not None:
        return made
    return lambda card_id, log: replay_days(scheduler, log, card_id)


def replay_days(scheduler: Reviewing, log: DayLog, card_id: str | None = None) -> Schedule:
    """The card's state after its logged answers (:data:`DayLog`, re-drills included) under ``scheduler``.

    ``card_id`` names the card, for a scheduler that decides per card (``for_card``: the fuzz of
    :mod:`.spread` is seeded by the card, an exam may be a lesson's).
    A scheduler with a ``replay`` method of its own (SM-2, FSRS: they skip building a state per answer, and
    keep the first answer of each day themselves) is trusted to give what reviewing answer after answer
    gives; tests/test_replay.py checks it does.
    """
    if card_id is not None:
        for_card = getattr(scheduler, "for_card", None)
        if for_card is not None:
            scheduler = for_card(card_id, None)
    own = getattr(scheduler, "replay", None)
    if own is not None:
        replayed: Schedule = own(log)
        return replayed
    state = scheduler.initial
    for day, grade in scheduling_days(log):
        state = scheduler.review(state, grade, today=date.fromordinal(day))
    return state


def states(scheduler: Reviewing, answers: Iterable[tuple[date, int]]) -> Iterator[tuple[date, int, Schedule]]:
    """Each scheduling answer (study day, grade) with the state before it; the last state is :func:`replay`'s."""
    state = scheduler.initial
    for day, grade in scheduling_answers(answers):
        yield day, grade, state
        state = scheduler.review(state, grade, today=day)
