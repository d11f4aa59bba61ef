"""An exam date: FSRS plans so that every card's predicted recall on that day reaches a target.

:class:`ExamScheduler` wraps FSRS (default or fitted parameters). Before the exam, a review whose
interval would jump past the exam day while leaving the card's predicted recall on that day below the
target is brought back to the day the recall falls to the target (at the latest), so the card comes
back before the exam, and again, until an interval that jumps past the exam leaves enough recall on it.
On and after the exam day the wrapped scheduler runs unchanged: the normal schedule resumes by itself,
since FSRS's next interval depends on the memory state and the days since the last review, not on the
interval that brought the card back.

Predicted recall is FSRS-6's forgetting curve for the card's stability, with the decay of the parameters
in use (:func:`bertdrill.core.scheduling.evaluation.recall`). SM-2 predicts no recall of its own, so an
exam plan needs FSRS.

:func:`plan` says what the plan costs from today: the reviews each card needs before the exam if every
one of them is answered Good, and, at the learner's pace (reviews and new cards a day), which cards
cannot make it.

Pure: days are arguments.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta

from bertdrill.core.scheduling.evaluation import recall
from bertdrill.core.scheduling.fitted import FittedFSRS
from bertdrill.core.scheduling.fsrs import FSRS
from bertdrill.core.scheduling.state import NextStates, Schedule

DEFAULT_EXAM_TARGET = 0.90
"""The predicted recall every card should have on the exam day, unless the learner asks for another."""

GOOD = 4
"""The grade a plan assumes for every review: right, after a pause (FSRS's Good)."""


def decay_of(scheduler: FSRS | FittedFSRS) -> float:
    """The forgetting curve's decay (w20) of the parameters the scheduler runs with."""
    match scheduler:
        case FittedFSRS():
            return scheduler.parameters[20]
        case FSRS():
            from fsrs.scheduler import DEFAULT_PARAMETERS

            return float(DEFAULT_PARAMETERS[20])


def recall_on(state: Schedule, day: date, decay: float) -> float:
    """The card's predicted recall on ``day`` (0 for a card FSRS has no memory of)."""
    if state.due is None or state.stability is None:
        return 0.0
    last = state.due - timedelta(days=state.interval)
    return recall(state.stability, max(0, (day - last).days), decay)


def days_to(stability: float, target: float, decay: float) -> int:
    """Whole days after a review until predicted recall falls to ``target`` (at least 1)."""
    factor = 0.9 ** (-1 / decay) - 1
    return max(1, math.floor(float(stability / factor * (target ** (-1 / decay) - 1))))


@dataclass(frozen=True)
class ExamScheduler:
    """``inner`` (FSRS) with an exam on ``exam`` at predicted recall ``target``."""

    inner: FSRS | FittedFSRS
    exam: date
    target: float

    @property
    def initial(self) -> Schedule:
        return self.inner.initial

    @property
    def retention(self) -> float:
        return self.inner.retention

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule:
        return self.planned(self.inner.review(state, grade, today=today), today)

    def next_states(self, state: Schedule, *, today: date) -> NextStates:
        return NextStates.of({grade: self.planned(after, today) for grade, after in
                              self.inner.next_states(state, today=today).items()})

    def latest_due(self, today: date, after: Schedule) -> date | None:
        """The last day the fuzz (:mod:`.spread`) may move ``after`` to: before the exam, a card due by the exam
        stays by it (the eve, or the day itself where it was due on it); None: no limit."""
        if today >= self.exam or after.due is None or after.due > self.exam:
            return None
        return max(after.due, self.exam - timedelta(days=1))

    def planned(self, after: Schedule, today: date) -> Schedule:
        """``after``, brought back before the exam if its interval would leave too little recall on the day."""
        if today >= self.exam or after.due is None or after.stability is None or after.due <= self.exam:
            return after
        decay = decay_of(self.inner)
        if recall_on(after, self.exam, decay) >= self.target:
            return after
        latest = max(1, (self.exam - today).days - 1)  # the eve of the exam at the latest
        interval = min(after.interval, days_to(after.stability, self.target, decay), latest)
        return replace(after, interval=interval, due=today + timedelta(days=interval))


def lesson_of(card_id: str) -> str:
    """The lesson a card belongs to: its id's first part (``bert-basics/embedding-params@bert-base``)."""
    return card_id.partition("/")[0]


@dataclass(frozen=True)
class LessonExams:
    """``inner`` (FSRS) with an exam per lesson: a card of a lesson in ``exams`` (lesson, day, target) is planned
    for its lesson's exam, any other for ``default`` (an :class:`ExamScheduler` for every lesson) or not at all.
    Only :meth:`for_card` knows the card; the Scheduler methods of this object are ``default``'s (or ``inner``'s)."""

    inner: FSRS | FittedFSRS
    exams: tuple[tuple[str, date, float], ...]
    default: ExamScheduler | None = None

    @property
    def initial(self) -> Schedule:
        return self.inner.initial

    @property
    def retention(self) -> float:
        return self.inner.retention

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule:
        return (self.default or self.inner).review(state, grade, today=today)

    def next_states(self, state: Schedule, *, today: date) -> NextStates:
        return (self.default or self.inner).next_states(state, today=today)

    def exam_of(self, lesson: str) -> tuple[date, float] | None:
        """The exam day and target of a lesson's cards (None: no exam)."""
        for each, day, target in self.exams:
            if each == lesson:
                return day, target
        return None if self.default is None else (self.default.exam, self.default.target)

    def for_card(self, card_id: str, _load: object = None) -> FSRS | FittedFSRS | ExamScheduler:
        found = self.exam_of(lesson_of(card_id))
        return self.inner if found is None else ExamScheduler(self.inner, *found)


@dataclass(frozen=True)
class Plan:
    """What the exam asks from today: the reviews each card needs, and the cards that cannot make it."""

    needed: dict[str, int]  # card id -> reviews before the exam, if each is answered Good
    cannot: tuple[str, ...]  # cards that cannot reach the target at the learner's pace
    days: int  # study days left before the exam, today included

    @property
    def reviews(self) -> int:
        """Reviews before the exam for the cards that can make it."""
        return sum(count for card_id, count in self.needed.items() if card_id not in self.cannot)


def reviews_needed(scheduler: ExamScheduler, state: Schedule, today: date) -> int:
    """Reviews before the exam for the card to reach the target on the day, every answer Good."""
    day = today
    if state.due is not None:
        planned = scheduler.planned(state, state.due - timedelta(days=state.interval))  # brought back if it must be
        assert planned.due is not None
        if planned.due > scheduler.exam:
            return 0  # the card holds the target through the exam as it stands
        day = max(today, planned.due)
    count = 0
    while day < scheduler.exam:
        state = scheduler.review(state, GOOD, today=day)
        count += 1
        if state.due is None or state.due > scheduler.exam:
            break
        day = state.due
    return count


def plan(scheduler: ExamScheduler, states: Iterable[tuple[str, Schedule]], today: date, *,
         reviews_per_day: int, new_per_day: int) -> Plan:
    """The reviews each card needs before the exam, and which cards cannot make it at the learner's pace:
    new cards beyond what ``new_per_day`` introduces in time, then, while the reviews needed exceed
    ``reviews_per_day`` on the days left, the cards needing the most."""
    days = max(0, (scheduler.exam - today).days)
    needed, fresh = {}, []
    for card_id, state in states:
        needed[card_id] = reviews_needed(scheduler, state, today)
        if state.due is None:
            fresh.append(card_id)
    cannot = set(fresh[new_per_day * max(0, days - 1):])  # a card met on the eve gets no second look
    load = sum(count for card_id, count in needed.items() if card_id not in cannot)
    for card_id in sorted(needed, key=lambda each: -needed[each]):
        if load <= reviews_per_day * days:
            break
        if card_id not in cannot and needed[card_id]:
            cannot.add(card_id)
            load -= needed[card_id]
    return Plan(needed, tuple(card_id for card_id in needed if card_id in cannot), days)


def predicted(scheduler: FSRS | FittedFSRS, states: Sequence[Schedule], exam: date) -> float:
    """The mean predicted recall on the exam day of ``states`` (0 for a card never reviewed)."""
    decay = decay_of(scheduler)
    return sum(recall_on(state, exam, decay) for state in states) / len(states) if states else 0.0
