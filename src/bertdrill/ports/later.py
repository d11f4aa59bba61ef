"""The records of :mod:`bertdrill.ports` that a learner's start-up never makes: the log's answers and actions, the
answer times, fitted sets, exams, a scheduler or an exam asked for, a class's published lessons.

Each frozen dataclass costs about 0.5 ms to make (Python 3.11 compiles its six methods from source), so
:mod:`bertdrill.ports` makes these when one is first asked for (``bertdrill stats``, ``status`` and the first card
of ``review`` make none: 4 ms of each start). Import them from :mod:`bertdrill.ports`, as any record; the store's
modules that make them import them where they do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime

from bertdrill.core.scheduling.actions import CardAction
from bertdrill.core.scheduling.registry import SchedulerName, Spreading
from bertdrill.core.scheduling.state import AnswerKind, Schedule


@dataclass(frozen=True)
class Answer:
    """One row of the review log."""

    id: int
    card_id: str
    reviewed_at: datetime  # UTC, aware
    study_day: date
    kind: AnswerKind
    grade: int
    typed: str | None
    duration_ms: int
    before: Schedule
    after: Schedule
    variant: str | None = None  # a card asked with fresh numbers: "seed:key" (core.variants.logged)


@dataclass(frozen=True)
class Action:
    """One row of the card actions' log: what a learner did to a card outside a review (``bertdrill cards``)."""

    id: int
    card_id: str
    at: datetime  # UTC, aware
    study_day: date
    action: CardAction
    before: Schedule
    after: Schedule
    suspended_before: bool
    suspended_after: bool


@dataclass(frozen=True)
class AnswerTimes:
    """The log's answers grouped by (kind, grade), practice left out: how many, and their milliseconds."""

    durations: Mapping[tuple[str, int], tuple[int, int]]  # (kind, grade) -> (answers, total milliseconds)
    days: int  # study days with an answer
    new: int  # first answers to new cards

    @property
    def new_per_day(self) -> float:
        return self.new / self.days if self.days else 0.0


@dataclass(frozen=True)
class FittedSet:
    """FSRS parameters fitted to a learner's log (``bertdrill scheduler fsrs --fit``), as stored."""

    number: int  # the learner's sets count 1, 2, 3...; 0 for a set not stored yet
    parameters: tuple[float, ...]
    reviews: int  # the reviews they were fitted on
    fitted_at: datetime  # UTC


@dataclass(frozen=True)
class PublishedLesson:
    """A lesson as a class's teacher published it: the class's store keeps every version, its server sends the
    one in use to a learner's terminal."""

    lesson_id: str
    version: int  # 1, 2, ... per lesson
    path: str  # the file's name when published, for messages
    source: str  # the lesson file's text
    published_at: datetime  # UTC


@dataclass(frozen=True)
class LessonExam:
    """An exam date for one lesson's cards (``bertdrill review --exam DAY --lesson L``)."""

    lesson: str
    exam: date
    target: float  # the predicted recall every card of the lesson should have on the exam day


@dataclass(frozen=True)
class SchedulerAsked:
    """What a learner asks to change of their scheduler, as ``bertdrill scheduler [NAME] [--retention R] [--fit]
    [--parameters SET] [--spread S]`` says it (the class server's form and API take the same); None and False
    keep what is in use (:mod:`bertdrill.app.scheduling`)."""

    name: SchedulerName | None = None
    retention: float | None = None
    fit: bool = False
    parameters: str | None = None  # the number of a stored set, or "default"
    spread: Spreading | None = None

    @property
    def shows(self) -> bool:
        """Nothing to change: show the choice in use."""
        return self.name is None and self.spread is None


@dataclass(frozen=True)
class ExamAsked:
    """An exam plan asked for (``bertdrill review --exam DAY [--exam-target R] [--lesson L]``; the class server's
    form and API take the same): ``day`` None ends the plan, of ``lesson`` or of every lesson; ``target`` None:
    the default."""

    day: date | None
    target: float | None = None
    lesson: str | None = None
