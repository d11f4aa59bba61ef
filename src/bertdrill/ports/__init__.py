"""What the application (session, practice, the review and stats commands) needs from the outside world.

Two Protocols and the plain records they exchange; standard library and core only, so an
adapter (the SQLite store today, a PostgreSQL store or an FSRS scheduler next) plugs in by
having these methods, without the application importing it.

- :class:`Scheduler`: turns a card's state and a grade into the next state (SM-2 is
  :class:`bertdrill.core.scheduling.sm2.SM2`; every scheduler is in
  :mod:`bertdrill.core.scheduling.registry`), and previews what each grade would give.
- :class:`ReviewStore`: every read and write of review data a session, ``status``,
  ``stats`` and ``practice check`` make. It is :class:`ReviewQueue` (what a session
  reads and writes) plus :class:`ReviewReports` (the read-only figures).

A card's scheduling state is :class:`bertdrill.core.scheduling.state.Schedule`, shared by every
scheduler (due day, lapses, the SM-2 counts and FSRS's memory); the store keeps it and hands it to the scheduler inside the answer's
transaction, so a scheduler never touches the store and the store never knows which
scheduler runs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from enum import Enum
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self, assert_never

from bertdrill.core.kinds import Kind
from bertdrill.core.scheduling.actions import CardAction
from bertdrill.core.scheduling.registry import DEFAULT, SchedulerName, Spreading
from bertdrill.core.scheduling.state import AnswerKind, CardStage, NextStates, Schedule

if TYPE_CHECKING:
    from bertdrill.core.lesson import Item, Lesson

    # re-exported (the redundant aliases say so): made when first asked for, by __getattr__ below
    from bertdrill.ports.later import Action as Action
    from bertdrill.ports.later import Answer as Answer
    from bertdrill.ports.later import AnswerTimes as AnswerTimes
    from bertdrill.ports.later import ExamAsked as ExamAsked
    from bertdrill.ports.later import FittedSet as FittedSet
    from bertdrill.ports.later import LessonExam as LessonExam
    from bertdrill.ports.later import PublishedLesson as PublishedLesson
    from bertdrill.ports.later import SchedulerAsked as SchedulerAsked

_LATER = frozenset({"Action", "Answer", "AnswerTimes", "ExamAsked", "FittedSet", "LessonExam", "PublishedLesson", "SchedulerAsked"})


def __getattr__(name: str) -> Any:
    """The records a learner's start-up never makes (:mod:`bertdrill.ports.later`), made when first asked for."""
    if name in _LATER:
        from bertdrill.ports import later

        value = getattr(later, name)
        globals()[name] = value  # asked once: the module's own name from then on
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# --------------------------------------------------------------------------- records


class Keep(Enum):
    """``KEEP``: leave this flag as it is (in :meth:`ReviewQueue.set_flags`)."""

    KEEP = "keep"


KEEP = Keep.KEEP


@dataclass(frozen=True)
class CardState:
    """A card's schedule and flags, as stored."""

    card_id: str
    schedule: Schedule
    suspended: bool = False
    buried_until: date | None = None
    leech: bool = False
    removed: bool = False




@dataclass(frozen=True)
class SyncReport:
    added: int = 0
    changed: int = 0  # text changed (new fingerprint); schedule and history kept
    removed: int = 0  # gone from their lesson; kept, never shown
    restored: int = 0  # back in their lesson after being removed
    moved: int = 0  # only the position or kind changed

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.changed or self.removed or self.restored or self.moved)

    def __add__(self, other: SyncReport) -> SyncReport:
        return SyncReport(self.added + other.added, self.changed + other.changed, self.removed + other.removed,
                          self.restored + other.restored, self.moved + other.moved)


@dataclass(frozen=True)
class DayCounts:
    """Answers logged on one study day, by kind."""

    new: int = 0
    review: int = 0
    redrill: int = 0
    practice: int = 0
    cram: int = 0  # bertdrill review --cram: in no limit

    @property
    def first_answers(self) -> int:
        """Cards taken from the daily limits: due reviews plus new cards."""
        return self.new + self.review

    @classmethod
    def of(cls, counts: Mapping[AnswerKind, int]) -> DayCounts:
        """From the count of each kind (a kind left out counted 0)."""
        new = review = redrill = practice = cram = 0
        for kind, count in counts.items():
            match kind:
                case AnswerKind.NEW:
                    new = count
                case AnswerKind.REVIEW:
                    review = count
                case AnswerKind.REDRILL:
                    redrill = count
                case AnswerKind.PRACTICE:
                    practice = count
                case AnswerKind.CRAM:
                    cram = count
                case unreachable:
                    assert_never(unreachable)
        return cls(new=new, review=review, redrill=redrill, practice=practice, cram=cram)


@dataclass(frozen=True)
class Status:
    due_now: int
    new_cards: int  # never reviewed, available (before daily limits)
    learned: int  # reviewed at least once (practice cards and removed cards left out)
    next_due: date | None  # first day after today with something due
    streak: int  # study days in a row with an answer, up to today (or yesterday)
    counts: DayCounts  # what was answered today


@dataclass(frozen=True)
class CardFigures:
    """What ``stats`` shows of the cards a review shows: how many are in each stage, the average EF of the reviewed
    ones and the leeches (:meth:`ReviewReports.card_states`, :meth:`~ReviewReports.average_ef` and
    :meth:`~ReviewReports.leeches`, which a store may count together)."""

    states: dict[CardStage, int]
    average_ef: float | None
    leeches: list[CardState]


@dataclass(frozen=True)
class Retention:
    """Share of review answers graded 3 or more, for young and mature cards."""

    young_passed: int
    young_total: int
    mature_passed: int
    mature_total: int

    @staticmethod
    def _rate(passed: int, total: int) -> float | None:
        return passed / total if total else None

    @property
    def young(self) -> float | None:
        return self._rate(self.young_passed, self.young_total)

    @property
    def mature(self) -> float | None:
        return self._rate(self.mature_passed, self.mature_total)






@dataclass(frozen=True)
class SchedulerChoice:
    """Which scheduler a learner chose, and its setting, as stored (``bertdrill scheduler``)."""

    name: SchedulerName = DEFAULT
    retention: float | None = None  # FSRS's desired retention; None for SM-2
    fitted: FittedSet | None = None  # FSRS's fitted parameters; None: FSRS's defaults (or SM-2)
    exam: date | None = None  # FSRS plans for an exam on this study day (bertdrill review --exam)
    exam_target: float | None = None  # the predicted recall every card should have on the exam day
    spread: Spreading | None = None  # fuzz and the load balancer (bertdrill scheduler --spread); None: the default
    lesson_exams: tuple[LessonExam, ...] = ()  # exams of single lessons, by lesson id; each wins over ``exam``

    def __post_init__(self) -> None:  # one order, so two choices with the same exams are equal
        object.__setattr__(self, "lesson_exams", tuple(sorted(self.lesson_exams, key=lambda each: each.lesson)))


@dataclass(frozen=True)
class Switch:
    """What switching scheduler did: every card's state rebuilt from its log."""

    cards: int  # cards whose state was rebuilt (every card of the learner)
    answers: int  # answers replayed, re-drills included (they are read, and do not schedule)
    choice: SchedulerChoice | None = None  # the choice as stored (a new fitted set has its number)



@dataclass(frozen=True)
class Switched:
    """What asking for a scheduler did: the choice before, and as stored after; the cards due today before and
    after. ``switch`` None: the choice asked for is the one in use, so nothing was replayed (or counted)."""

    before: SchedulerChoice
    after: SchedulerChoice
    switch: Switch | None = None
    due_before: int = 0
    due_after: int = 0



@dataclass(frozen=True)
class ExamPlanned:
    """What setting an exam plan did and what it asks (:func:`bertdrill.app.scheduling.plan_exam`): ``switch``
    None when the plan was already this one; for a plan set, its target, the reviews before the exam at ``new``
    and ``limit`` a day over ``days`` study days, and the cards that cannot reach the target at that pace."""

    asked: ExamAsked
    target: float | None
    switch: Switch | None = None
    reviews: int = 0
    days: int = 0
    cannot: tuple[str, ...] = ()
    new: int = 0
    limit: int = 0


CardLog = list[tuple[date, int]]
"""One card's answers as (study day, grade), oldest first: what a replay reads."""


class SyncCard(Protocol):
    """What the store needs of a card to keep its row up to date (a :class:`bertdrill.core.cards.Card` has it)."""

    @property
    def id(self) -> str: ...
    @property
    def lesson_id(self) -> str: ...
    @property
    def item_id(self) -> str: ...
    @property
    def kind(self) -> Kind: ...
    @property
    def fingerprint(self) -> str: ...


class SyncLesson(Protocol):
    """A lesson as a store syncs it: its cards, and their digest (:func:`bertdrill.core.digests.cards_digest`),
    which the store compares with the one it kept. The cards are read only when the digests differ: the lesson
    cache knows a lesson's digest without reading its cards (:class:`bertdrill.adapters.lessons.LessonIndex`)."""

    @property
    def id(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def cards(self) -> Sequence[SyncCard]: ...


class IndexedLesson(Protocol):
    """A lesson as its index gives it (:class:`bertdrill.adapters.lessons.LessonIndex`): its cards as rows, its
    head (everything but the items), an item read alone by its id, or the whole lesson. A drawn sheet reads
    only the items it reaches of 100,000."""

    @property
    def id(self) -> str: ...
    @property
    def languages(self) -> tuple[str, ...]: ...
    @property
    def cards(self) -> Sequence[SyncCard]: ...
    def head(self) -> Lesson: ...
    def item(self, item_id: str) -> Item: ...
    def lesson(self) -> Lesson: ...


# --------------------------------------------------------------------------- scheduler


class Scheduler(Protocol):
    """A spaced-repetition algorithm: pure, no clock (``today`` is a study day passed in)."""

    @property
    def initial(self) -> Schedule:
        """The state of a card never reviewed."""
        ...

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule:
        """The state after grading the card ``grade`` (0-5) on ``today``: the first answer of a study day only."""
        ...

    def next_states(self, state: Schedule, *, today: date) -> NextStates:
        """What :meth:`review` would give for each grade 0-5 on ``today``, for a preview of the intervals."""
        ...


# --------------------------------------------------------------------------- store


class ReviewQueue(Protocol):
    """What a review session reads and writes: today's queue, answers, flags and undo.

    Every write is one committed transaction when the method returns.
    """

    def due_ids(self, today: date, *, lessons: Collection[str] | None = None, limit: int = ...) -> list[str]:
        """Cards due on or before ``today``, most overdue first (then in lesson order), at most ``limit``."""
        ...

    def new_ids(self, today: date, *, lessons: Collection[str] | None = None, limit: int = ...) -> list[str]:
        """Cards never reviewed, in lesson order, at most ``limit``."""
        ...

    def redrill_ids(self, today: date, *, lessons: Collection[str] | None = None) -> list[str]:
        """Cards whose latest answer on ``today`` was below 4, oldest first."""
        ...

    def day_counts(self, day: date, *, lessons: Collection[str] | None = None) -> DayCounts:
        """Answers logged on the study day ``day``, by kind (the daily limits count these)."""
        ...

    def due_count(self, day: date, *, lessons: Collection[str] | None = None) -> int:
        """Cards that will be due on or before ``day``."""
        ...

    def answer(
        self,
        card_id: str,
        *,
        grade: int,
        kind: AnswerKind,
        reviewed_at: datetime,
        study_day: date,
        reschedule: Callable[[Schedule], Schedule] | None = None,
        typed: str | None = None,
        duration_ms: int = 0,
        once_per_day: bool = False,
        variant: str | None = None,
        rescheduler: Callable[[SchedulerChoice], Callable[[Schedule], Schedule]] | None = None,
        request: str | None = None,
    ) -> Answer:
        """Log an answer and store ``reschedule(stored state)`` (None keeps it), in one transaction.

        ``request``: an id the caller made for this answer (a client of the class server makes one per answer):
        an answer already logged with it is returned as it was, and nothing is logged again.

        ``rescheduler``: instead of ``reschedule``, the store reads the learner's scheduler choice in the
        answer's own transaction and reschedules with ``rescheduler(choice)``, so an answer always
        schedules under the scheduler it is committed with (a switch in another window included).

        ``variant``: what was asked when the card drew fresh numbers (``"seed:key"``), logged with the answer.

        ``once_per_day``: when the card already has an answer on ``study_day``, keep the schedule
        and log the answer as :meth:`AnswerKind.logged_as` says (a ``redrill``; ``practice`` stays
        ``practice``), decided under the write lock. Returns the answer as logged.
        """
        ...

    def undo(self, review_id: int) -> CardState:
        """Delete a logged answer and restore the schedule before it; only a card's latest answer."""
        ...

    def set_flags(self, card_id: str, *, suspended: bool | None = None,
                  buried_until: date | None | Keep = KEEP) -> CardState:
        """Suspend or unsuspend a card, or bury it until a day (None unburies). Returns the state before."""
        ...

    def state(self, card_id: str) -> CardState:
        ...


class ReviewReports(Protocol):
    """The figures ``status`` and ``stats`` show: reads only, never a write."""

    @property
    def where(self) -> str:
        """The database as a person would name it (a file path)."""
        ...

    def status(self, today: date, *, lessons: Collection[str] | None = None) -> Status: ...
    def reviews_per_day(self, since: date, until: date, *,
                        lessons: Collection[str] | None = None) -> Mapping[date, int]: ...
    def streaks(self, today: date, *, lessons: Collection[str] | None = None) -> tuple[int, int]: ...
    def forecast(self, today: date, days: int, *,
                 lessons: Collection[str] | None = None) -> list[tuple[date, int]]: ...
    def retention(self, since: date | None = None, *, lessons: Collection[str] | None = None) -> Retention: ...
    def card_states(self, today: date, *, lessons: Collection[str] | None = None) -> dict[CardStage, int]: ...
    def answer_count(self, *, lessons: Collection[str] | None = None) -> int: ...
    def answer_times(self, *, lessons: Collection[str] | None = None) -> AnswerTimes:
        """What answering takes this learner: the log's answers and milliseconds by kind and grade."""
        ...
    def average_ef(self, *, lessons: Collection[str] | None = None) -> float | None: ...
    def leeches(self, min_lapses: int = ..., *, lessons: Collection[str] | None = None) -> list[CardState]: ...
    def card_figures(self, today: date, *, lessons: Collection[str] | None = None) -> CardFigures:
        """The card states, the average EF and the leeches (of :data:`~bertdrill.core.scheduling.state.LEECH_LAPSES`
        lapses or more), together."""
        ...
    def hardest(self, limit: int = ..., *, lessons: Collection[str] | None = None) -> list[CardState]: ...
    def forecast_and_hardest(self, today: date, days: int, limit: int, *, lessons: Collection[str] | None = None
                             ) -> tuple[list[tuple[date, int]], list[CardState]]:
        """:meth:`forecast` and :meth:`hardest` together (a store may find both in one pass)."""
        ...


class SchedulerSettings(Protocol):
    """Which scheduler runs, switching it, and the log a replay or a calibration reads."""

    def scheduler_choice(self) -> SchedulerChoice:
        """The stored choice (SM-2 until the learner switches)."""
        ...

    def switch_scheduler(self, choice: SchedulerChoice, scheduler: Scheduler, *,
                         track: Callable[[list[str]], Iterable[str]] = ...) -> Switch:
        """Rebuild every card's state by replaying its log through ``scheduler`` and store ``choice``: one
        transaction (all or nothing). A fitted set numbered 0 is stored as the learner's next set, in the
        same transaction. ``track`` wraps the card ids (the CLI passes a progress bar)."""
        ...

    def fitted_sets(self) -> list[FittedSet]:
        """The learner's fitted parameter sets, newest first (every set is kept)."""
        ...

    def card_logs(self, visit: Callable[[CardLog], None], *, lessons: Collection[str] | None = None,
                  track: Callable[[list[str]], Iterable[str]] = ...) -> int:
        """Call ``visit`` with each card's log (cards with answers only), inside one read; returns the answers read.
        ``track`` wraps the card ids (the CLI passes a progress bar)."""
        ...


class CardManagement(Protocol):
    """What ``bertdrill cards`` does to a learner's cards, each action logged and undoable (Anki's browser)."""

    def manage(self, card_id: str, action: CardAction, *, at: datetime, study_day: date,
               due: date | None = None) -> Action:
        """Apply ``action`` (:func:`bertdrill.core.scheduling.actions.managed`) and log it, in one transaction;
        ``due``: the day a reschedule asks for. Returns the action as logged."""
        ...

    def undo_action(self, action_id: int | None = None) -> Action:
        """Put the card back as it was before the action (None: the learner's latest) and delete it from the log.
        Refused (StoreError) when the card was answered or changed since."""
        ...

    def actions(self, card_id: str | None = None) -> list[Action]:
        """The actions' log, oldest first: for one card, or all of it."""
        ...

    def answers(self, card_id: str | None = None, *, since: date | None = None) -> list[Answer]:
        """The review log, oldest first: for one card, or all of it (from a study day on)."""
        ...


class ReviewStore(ReviewQueue, ReviewReports, SchedulerSettings, Protocol):
    """Everything the application reads and writes, opened once per command and closed on every path."""

    def state_under_choice(self, card_id: str) -> tuple[CardState, SchedulerChoice]:
        """:meth:`state` and :meth:`scheduler_choice`, read together (a review's preview of each grade: one read)."""
        ...

    def sync(self, cards: Sequence[SyncCard], *, now: datetime | None = None,
             track: Callable[[list[str]], Iterable[str]] = ...) -> SyncReport:
        """Make the stored cards match the lessons' cards, keeping every schedule and history."""
        ...

    def sync_lessons(self, lessons: Sequence[SyncLesson], *, now: datetime | None = None,
                     track: Callable[[list[str]], Iterable[str]] = ...) -> SyncReport:
        """:meth:`sync`, a lesson at a time: a lesson whose digest is the stored one is not read."""
        ...

    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None: ...
