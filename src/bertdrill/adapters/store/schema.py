"""The tables, as SQLModel classes, and the pieces of statement the queries share.

The queries are built from these tables (SQLAlchemy Core over each model's ``__table__``), so a
column is named in one place and its type converts its values on both backends: dates and UTC
times as the file stores them, flags as booleans. The DDL that creates them is written out in
:mod:`.migrations` (so version 1 stays version 1); a test checks that the newest migration matches
these models.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, date, datetime
from typing import Any, cast

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    DateTime,
    Dialect,
    Index,
    Integer,
    String,
    Table,
    TypeDecorator,
    bindparam,
    literal_column,
    select,
    text,
    true,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.visitors import InternalTraversal
from sqlmodel import Field, SQLModel

from bertdrill.adapters.store.database import as_date, real, utc, whole
from bertdrill.core.kinds import Kind
from bertdrill.core.scheduling.state import EF_START, AnswerKind, CardStage, Schedule
from bertdrill.core.scheduling.state import MATURE_DAYS as MATURE_DAYS  # re-exported: the stores count mature cards
from bertdrill.ports import CardState

TYPED_MAX = 1000  # characters of a typed answer kept in the log
ANSWER_KINDS = tuple(kind.value for kind in AnswerKind)  # as stored in review.kind
CARD_STATES = tuple(CardStage)  # in the order stats shows them



class UTCTime(TypeDecorator[datetime]):
    """A moment, stored as naive UTC (``2024-05-01 06:30:00.000000`` on SQLite, ``timestamp`` on PostgreSQL)
    and read back as an aware UTC time: an aware local time going in is converted, never cut."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else utc(value).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


class Stored(SQLModel):
    """What every table here is: SQLModel classes whose rows are never built as models (the queries use each
    one's ``__table__``), so pydantic builds no validator for them unless one is asked for (``defer_build``:
    3-4 ms of every command that opens a store, of the ten tables' 45)."""

    model_config = {"defer_build": True}


class Meta(Stored, table=True):
    """Facts about the file itself: schema version, when it was created and migrated."""

    __tablename__ = "meta"
    key: str = Field(primary_key=True)
    value: str


class LessonRow(Stored, table=True):
    """A lesson as last synced: the digest of its cards tells whether anything changed."""

    __tablename__ = "lesson"
    id: str = Field(primary_key=True)
    digest: str
    cards: int
    synced_at: datetime = Field(sa_type=UTCTime)


class CardRow(Stored, table=True):
    """A card the store has seen; ``removed`` once its lesson no longer has it."""

    __tablename__ = "card"
    # ix_card_hidden: the cards no review shows (removed ones, practice ones), usually none; its condition is
    # HIDDEN_CARD's, as migrations' version 16 writes it (SQLite uses the index only for a query that says it).
    # PostgreSQL's condition (removed IS true ...) is in that DDL only: a postgresql_where here would load
    # SQLAlchemy's PostgreSQL dialect (20-30 ms) into every learner's command, to check the keyword.
    __table_args__ = (Index("ix_card_lesson", "lesson_id", "position"),
                      Index("ix_card_hidden", "id", sqlite_where=text("removed IS 1 OR kind IN ('practice')")))
    id: str = Field(primary_key=True)
    lesson_id: str
    item_id: str
    kind: str
    position: int  # order within the lesson: new cards come in this order
    fingerprint: str  # Card.fingerprint: tells a text change from no change
    removed: bool = False
    first_seen: datetime = Field(sa_type=UTCTime)
    updated: datetime = Field(sa_type=UTCTime)


class ScheduleRow(Stored, table=True):
    """The SM-2 state of a card, plus what the learner decided about it."""

    __tablename__ = "schedule"
    __table_args__ = (Index("ix_schedule_due", "learner", "due"),)
    card_id: str = Field(primary_key=True, foreign_key="card.id")
    repetitions: int = 0
    ef100: int = EF_START
    interval: int = 0
    due: date | None = None  # None: a new card
    lapses: int = 0
    suspended: bool = False
    buried_until: date | None = None  # hidden while the study day is before this
    leech: bool = False
    learner: str = Field(primary_key=True)  # whose schedule (the primary key is learner, card_id)
    stability: float | None = None  # FSRS's memory state, when FSRS scheduled the card (schema version 3)
    difficulty: float | None = None


class ReviewRow(Stored, table=True):
    """One answer, with the schedule before and after it so undo restores it exactly."""

    __tablename__ = "review"
    # ix_review_card covers what a replay reads of a card's log (schema version 14, migrations._version_14)
    __table_args__ = (Index("ix_review_card", "learner", "card_id", "id", "study_day", "kind", "grade"),
                      Index("ix_review_day", "learner", "study_day"),
                      Index("ix_review_request", "learner", "request", unique=True))
    id: int | None = Field(default=None, primary_key=True)
    card_id: str = Field(foreign_key="card.id")
    reviewed_at: datetime = Field(sa_type=UTCTime)  # UTC
    study_day: date
    kind: str  # review | new | redrill | practice
    grade: int
    typed: str | None = None
    duration_ms: int = 0
    reps_before: int
    ef100_before: int
    interval_before: int
    due_before: date | None = None
    lapses_before: int
    reps_after: int
    ef100_after: int
    interval_after: int
    due_after: date | None = None
    lapses_after: int
    learner: str  # whose answer
    stability_before: float | None = None  # FSRS's state before and after (schema version 3)
    difficulty_before: float | None = None
    stability_after: float | None = None
    difficulty_after: float | None = None
    variant: str | None = None  # fresh numbers asked: "seed:key" (schema version 6)
    request: str | None = None  # the id the client gave the answer: sent twice, it is logged once (version 11)


class SchedulerRow(Stored, table=True):
    """The scheduler a learner chose (``bertdrill scheduler``); no row: SM-2, the default."""

    __tablename__ = "scheduler"
    learner: str = Field(primary_key=True)
    name: str  # sm2 | fsrs
    retention: float | None = None  # FSRS's desired retention
    switched_at: datetime = Field(sa_type=UTCTime)  # UTC
    parameters: int | None = None  # the learner's fitted set FSRS runs with (its number); None: defaults (v4)
    exam: date | None = None  # an exam FSRS plans for (v5)
    exam_target: float | None = None  # the predicted recall wanted on the exam day (v5)
    spread: str | None = None  # off | fuzz | balance: how intervals are spread; None: the default (v10)


class FittedParametersRow(Stored, table=True):
    """FSRS parameters fitted to a learner's log; every set is kept, so an earlier one can come back (v4)."""

    __tablename__ = "fsrs_parameters"
    learner: str = Field(primary_key=True)
    number: int = Field(primary_key=True)  # 1, 2, 3... per learner
    parameters: str  # JSON: the 21 numbers, each written so it reads back as the same float
    reviews: int  # the reviews they were fitted on
    fitted_at: datetime = Field(sa_type=UTCTime)  # UTC


class LessonExamRow(Stored, table=True):
    """An exam date a learner set for one lesson (``bertdrill review --exam DAY --lesson L``) (v10)."""

    __tablename__ = "lesson_exam"
    learner: str = Field(primary_key=True)
    lesson_id: str = Field(primary_key=True)
    exam: date
    target: float  # the predicted recall wanted on the exam day


class ActionRow(Stored, table=True):
    """What a learner did to a card outside a review (``bertdrill cards``), with its state before and after (v8)."""

    __tablename__ = "card_action"
    __table_args__ = (Index("ix_card_action_card", "learner", "card_id", "id"),)
    id: int | None = Field(default=None, primary_key=True)
    learner: str
    card_id: str = Field(foreign_key="card.id")
    at: datetime = Field(sa_type=UTCTime)  # UTC
    study_day: date
    action: str  # core.scheduling.actions.CardAction
    reps_before: int
    ef100_before: int
    interval_before: int
    due_before: date | None = None
    lapses_before: int
    stability_before: float | None = None
    difficulty_before: float | None = None
    suspended_before: bool
    reps_after: int
    ef100_after: int
    interval_after: int
    due_after: date | None = None
    lapses_after: int
    stability_after: float | None = None
    difficulty_after: float | None = None
    suspended_after: bool


class AnswerTallyRow(Stored, table=True):
    """The log's answers counted by learner, study day, lesson, kind and maturity (v13, SQLite only): kept by
    triggers on the log (:func:`bertdrill.adapters.store.migrations._version_13`), read by ``stats``."""

    __tablename__ = "answer_tally"
    learner: str = Field(primary_key=True)
    study_day: date = Field(primary_key=True)
    lesson_id: str = Field(primary_key=True)  # the card's lesson; '' for an answer whose card is gone
    kind: str = Field(primary_key=True)  # the answer's kind, as review.kind
    mature: bool = Field(primary_key=True)  # interval_before >= MATURE_DAYS
    answers: int
    passed: int  # graded PASSING or more


# --------------------------------------------------------------------------- shared by the queries

def from_review(lessons: Collection[str] | None) -> str:
    """The learner's review log, joined to its cards only when a lesson filter needs them (the join costs a
    lookup per row). A derived table, so the queries' own WHERE stays theirs; both databases flatten it."""
    mine = "(SELECT * FROM review WHERE learner = :learner) r"
    return f"FROM {mine}" if lessons is None else f"FROM {mine} JOIN card c ON c.id = r.card_id"


def lesson_filter(lessons: Collection[str] | None) -> str:
    return "" if lessons is None else "AND c.lesson_id IN :lessons"


def state_of(row: Sequence[Any]) -> CardState:
    """A :class:`CardState` from a row of :data:`STATE`."""
    card_id, repetitions, ef100, interval, due, lapses, stability, difficulty, suspended, buried_until, leech, \
        removed = row
    return CardState(card_id, checked_schedule(repetitions, ef100, interval, due, lapses, stability, difficulty),
                     bool(suspended), as_date(buried_until), bool(leech), bool(removed))


def checked_schedule(repetitions: Any, ef100: Any, interval: Any, due: Any, lapses: Any, stability: Any,
                     difficulty: Any) -> Schedule:
    """A :class:`Schedule` from the values of a row, each checked to be of its kind (a TypeError or ValueError
    for a damaged one, which the store turns into a message naming the row: :mod:`.damage`)."""
    return Schedule(whole(repetitions), whole(ef100), whole(interval), as_date(due), whole(lapses), real(stability),
                    real(difficulty))



# --------------------------------------------------------------------------- the tables, for expressions

def _table(model: type[SQLModel]) -> Table:
    return cast(Table, model.__table__)  # type: ignore[attr-defined]  # SQLModel sets it on table=True models


META, LESSON, CARD, SCHEDULE, REVIEW, SCHEDULER, FITTED, ACTION, LESSON_EXAM, TALLY = (_table(model) for model in (
    Meta, LessonRow, CardRow, ScheduleRow, ReviewRow, SchedulerRow, FittedParametersRow, ActionRow, LessonExamRow,
    AnswerTallyRow))

LEARNER: BindParameter[str] = bindparam("learner", type_=String())
"""The store's learner: every statement over a learner's rows binds it."""

SCHEDULE_FIELDS = ("repetitions", "ef100", "interval", "due", "lapses", "stability", "difficulty")
"""The columns of a :class:`Schedule`, in its order (``schedule``'s names; the log's say ``reps`` for
``repetitions`` and add ``_before`` or ``_after``)."""


def logged(field: str, when: str) -> str:
    """The log's column of a schedule field before or after an answer: ``reps_before``, ``due_after``."""
    return f"{'reps' if field == 'repetitions' else field}_{when}"


def mine_with_cards() -> Any:
    """The learner's schedules joined to their cards (``FROM_CARDS``, as an expression)."""
    return SCHEDULE.join(CARD, (CARD.c.id == SCHEDULE.c.card_id) & (SCHEDULE.c.learner == LEARNER))


HIDDEN_CARD: ColumnElement[bool] = CARD.c.removed.is_(True) | CARD.c.kind.in_(
    [literal_column(f"'{kind.value}'") for kind in Kind if not kind.reviewed])
"""A card no review shows: removed, or a practice card. Its values are written out (no parameters), so SQLite finds
the index of these cards (``ix_card_hidden``), whose condition is this one, word for word."""


def reviewed_card() -> ColumnElement[bool]:
    """The card is one a review session shows (practice cards are checked, never reviewed)."""
    return CARD.c.kind.not_in([kind.value for kind in Kind if not kind.reviewed])


def available(today: Any) -> ColumnElement[bool]:
    """The schedule's part of :func:`active`: not suspended, not buried past ``today``."""
    free: ColumnElement[bool] = (SCHEDULE.c.suspended.is_(False)  # a comparison with Any is Any
                                 & (SCHEDULE.c.buried_until.is_(None) | (SCHEDULE.c.buried_until <= today)))
    return free


def shown_card() -> ColumnElement[bool]:
    """The card's part of :func:`active`: not removed, and one a review session shows."""
    return CARD.c.removed.is_(False) & reviewed_card()


def active(today: Any) -> ColumnElement[bool]:
    """A card the learner can be shown on ``today``: not suspended, not buried past it, not removed, reviewed."""
    return available(today) & shown_card()


def in_lessons(lessons: Collection[str] | None) -> ColumnElement[bool]:
    """The card ``c`` is in one of ``lessons`` (None: every lesson)."""
    return true() if lessons is None else CARD.c.lesson_id.in_(list(lessons))


STATE = select(SCHEDULE.c.card_id, *(SCHEDULE.c[field] for field in SCHEDULE_FIELDS), SCHEDULE.c.suspended,
               SCHEDULE.c.buried_until, SCHEDULE.c.leech, CARD.c.removed).select_from(mine_with_cards())
"""The columns :func:`state_of` reads: a card's schedule, flags and whether it was removed."""


def answered_on(day: Any) -> ColumnElement[bool]:
    """The answer is one of the learner's on ``day``, as found through the day index (``ix_review_day``).

    Since version 14 ``ix_review_card`` covers the kind and grade a replay reads, and SQLite's planner takes it,
    covering and with no statistics in a learner's file, for "this learner's answers of this day, by kind": a
    walk of every answer the learner ever gave (90 to 130 ms for 1M answers, in every ``status`` and at the
    start of every ``review``). Asked for the day's ids alone, the day index covers the question and is taken:
    the day's few answers, then each by its id. It stands for the learner's condition too: a query that also
    names the learner in its own FROM lets the planner walk ``ix_review_card`` again."""
    of_day = REVIEW.alias("of_day")
    return REVIEW.c.id.in_(select(of_day.c.id).where(of_day.c.learner == LEARNER, of_day.c.study_day == day))


class Unindexed(ColumnElement[Any]):
    """A column compared without its index (:func:`unindexed`)."""

    inherit_cache = True
    _traverse_internals = [("column", InternalTraversal.dp_clauseelement)]

    def __init__(self, column: ColumnElement[Any]):
        self.column = column
        self.type = column.type


def unindexed(column: ColumnElement[Any]) -> Unindexed:
    """``column``, kept off its index in a comparison. SQLite's planner, with no statistics in a learner's
    file, takes the log's day index for "this card, this day" and walks every answer of the day; the card's
    index finds its few answers at once. SQLite's documented way to keep a term off an index is a unary
    ``+``; PostgreSQL plans from its statistics and gets the column as it is."""
    return Unindexed(column)


@compiles(Unindexed)
def _plain(element: Unindexed, compiler: Any, **options: Any) -> str:
    return str(compiler.process(element.column, **options))


@compiles(Unindexed, "sqlite")
def _sqlite_unindexed(element: Unindexed, compiler: Any, **options: Any) -> str:
    return "+" + str(compiler.process(element.column, **options))


class DayNumber(ColumnElement[int]):
    """A date as its ``date.toordinal()`` (consecutive days differ by one): :func:`day_number`."""

    inherit_cache = True
    _traverse_internals = [("day", InternalTraversal.dp_clauseelement)]
    type = Integer()

    def __init__(self, day: ColumnElement[Any]):
        self.day = day


def day_number(day: ColumnElement[Any]) -> DayNumber:
    """A date expression as the whole number Python's ``date.toordinal()`` gives (NULL for a value that is no
    date); each backend has its own way (SQLite's julianday, PostgreSQL's date subtraction), and nothing in the
    SQL standard both take. A switch reads a million study days this way: no ``date`` is made of each."""
    return DayNumber(day)


JULIAN_DAY_ZERO = 1721424.5
"""SQLite's ``julianday('0001-01-01')`` less 1: a day's midnight (a Julian day's .5) less it is its ordinal."""


@compiles(DayNumber, "sqlite")
def _sqlite_day_number(element: DayNumber, compiler: Any, **options: Any) -> str:
    return f"CAST(julianday({compiler.process(element.day, **options)}) - {JULIAN_DAY_ZERO} AS INTEGER)"


@compiles(DayNumber, "postgresql")
def _postgresql_day_number(element: DayNumber, compiler: Any, **options: Any) -> str:
    return f"(CAST({compiler.process(element.day, **options)} AS DATE) - DATE '0001-01-01' + 1)"


class VariantKey(ColumnElement[str]):
    """The variant's key in a logged ``"seed:key"`` (:func:`bertdrill.core.variants.logged`): :func:`variant_key`."""

    inherit_cache = True
    _traverse_internals = [("logged", InternalTraversal.dp_clauseelement)]
    type = String()

    def __init__(self, logged: ColumnElement[Any]):
        self.logged = logged


def variant_key(logged: ColumnElement[Any]) -> VariantKey:
    """What follows the colon of a logged ``"seed:key"``: answers to the same numbers share it whatever seed drew
    them (each showing has its own). Each backend has its own way (SQLite's instr, PostgreSQL's split_part)."""
    return VariantKey(logged)


@compiles(VariantKey, "sqlite")
def _sqlite_variant_key(element: VariantKey, compiler: Any, **options: Any) -> str:
    logged = compiler.process(element.logged, **options)
    return f"substr({logged}, instr({logged}, ':') + 1)"


@compiles(VariantKey, "postgresql")
def _postgresql_variant_key(element: VariantKey, compiler: Any, **options: Any) -> str:
    return f"split_part({compiler.process(element.logged, **options)}, ':', 2)"
