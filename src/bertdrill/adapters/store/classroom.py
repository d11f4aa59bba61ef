"""The teacher's view of a class: every learner, and every card across the class, hardest first.

Statements built from the tables, as the store's others are (nothing either backend lacks: no FILTER,
no DISTINCT ON; a day's number through :func:`.schema.day_number`), over the whole class: the
teacher's role reads every learner's rows (row-level security lets it; a learner's role running it
sees a class of one).

On PostgreSQL the figures of the log come from its summaries (schema version 15: ``report_day``,
``report_learner``, ``report_card``, which triggers on ``review`` keep in the transaction of every answer and
undo), thousands of rows instead of every answer. The log itself is read where they cannot say the same:
on SQLite (no summaries), for the learners' figures of some lessons only (the summaries are not per lesson),
and when some answer's study day is after the report's (a learner whose day began before the teacher's: the
summaries count every day, the report only days up to its own). ``from_log=True`` reads the log anyway, which
the tests compare with.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, assert_never

from sqlalchemy import (
    Column,
    Connection,
    Date,
    DateTime,
    Integer,
    Select,
    Table,
    Text,
    case,
    func,
    literal,
    select,
    text,
)

from bertdrill.adapters.store.database import Backend, Database, as_utc, day_of
from bertdrill.adapters.store.members import CLASS_METADATA
from bertdrill.adapters.store.schema import CARD, REVIEW, SCHEDULE, day_number, in_lessons, reviewed_card, variant_key
from bertdrill.core.scheduling.state import PASSING

WEEK = 7  # "answered in the last 7 days": today and the six study days before
RETENTION_DAYS = 30  # retention over the due reviews of the last 30 study days


@dataclass(frozen=True)
class LearnerSummary:
    learner: str
    due: int  # cards due today or overdue (suspended, buried, removed and practice cards left out)
    answered_week: int  # answers of every kind in the last 7 study days, today included
    reviews: int  # due reviews answered in the last 30 study days
    passed: int  # of which graded 3 or more
    streak: int  # study days in a row with an answer, up to today (or yesterday)
    last_active: datetime | None  # UTC
    learned: int = 0  # cards with a first answer (removed and practice cards left out): the learner's progress

    @property
    def retention(self) -> float | None:
        return self.passed / self.reviews if self.reviews else None


@dataclass(frozen=True)
class CardSummary:
    card_id: str
    item_id: str
    lesson_id: str
    answers: int  # every answer of every learner
    reviews: int  # due reviews of learned cards (a lapse is possible)
    lapses: int  # of which failed (graded below 3)
    learners: int  # learners whose schedule holds a first answer
    failing: int  # of which failed it at their latest scheduling answer
    ef100: float | None  # mean easiness factor (hundredths) over those learners
    stability: float | None = None  # mean FSRS stability (days) over the learners FSRS schedules it for

    @property
    def lapse_rate(self) -> float | None:
        return self.lapses / self.reviews if self.reviews else None

    @property
    def failed_share(self) -> float | None:
        return self.failing / self.learners if self.learners else None


@dataclass(frozen=True)
class ClassReport:
    today: date
    learners: list[LearnerSummary]  # by name
    cards: list[CardSummary]  # hardest first


def _counts(*names: str) -> list[Column[Any]]:
    return [Column(name, Integer, nullable=False) for name in names]


# The summaries of the log (PostgreSQL, schema version 15: :data:`.migrations.V15_TABLES` says what each holds).
REPORT_DAY = Table("report_day", CLASS_METADATA, Column("learner", Text, primary_key=True),
                   Column("study_day", Date, primary_key=True), *_counts("answers", "reviews", "passed"),
                   Column("last_at", DateTime, nullable=False), *_counts("run"))
REPORT_LEARNER = Table("report_learner", CLASS_METADATA, Column("learner", Text, primary_key=True),
                       Column("first_day", Date, nullable=False), Column("last_day", Date, nullable=False),
                       Column("last_at", DateTime, nullable=False))
REPORT_CARD = Table("report_card", CLASS_METADATA, Column("learner", Text, primary_key=True),
                    Column("card_id", Text, primary_key=True), *_counts("answers", "reviews", "lapses"))


def summarized(connection: Connection, today: date) -> bool:
    """Whether the log's summaries say what the log says up to ``today``: on PostgreSQL, while no answer is on a
    later study day (a lookup in 1,000 learners' rows)."""
    database: Database = connection.info["database"]
    match database.backend:
        case Backend.sqlite:
            return False
        case Backend.postgresql:
            latest = connection.execute(select(func.max(REPORT_LEARNER.c.last_day))).scalar()
            return latest is None or day_of(latest) <= today
        case unknown:
            assert_never(unknown)


def _log(columns: Select[*tuple[Any, ...]], lessons: Collection[str] | None) -> Select[*tuple[Any, ...]]:
    """``columns`` over every learner's log; joined to the cards only for a lesson filter (a lookup per answer)."""
    return columns if lessons is None else columns.join_from(REVIEW, CARD, CARD.c.id == REVIEW.c.card_id).where(
        in_lessons(lessons))


def _count(condition: Any) -> Any:
    """SQL: how many rows meet ``condition`` (a sum of CASE: both backends, where FILTER is PostgreSQL's)."""
    return func.sum(case((condition, 1), else_=0))


def report(connection: Connection, database: Database, today: date, *,
           lessons: Collection[str] | None = None, from_log: bool = False) -> ClassReport:
    """The report of the class on ``today``, on one connection (:func:`learners` and :func:`cards` are its halves,
    which a store with a pool of connections may run at once)."""
    return ClassReport(today=today, learners=learners(connection, today, lessons, from_log=from_log),
                       cards=cards(connection, today, lessons, from_log=from_log))


Answered = dict[str, tuple[Any, ...]]  # learner -> (answers in 7 days, due reviews in 30, of which passed, latest)


def learners(connection: Connection, today: date, lessons: Collection[str] | None = None, *,
             from_log: bool = False) -> list[LearnerSummary]:
    """Every learner's figures, by name: their answers (from the summaries, else two passes over the log: the
    counts, the streaks) and one pass over the schedules."""
    if not from_log and lessons is None and summarized(connection, today):
        answered, streaks = _answered_summarized(connection, today)
    else:
        answered, streaks = _answered_from_log(connection, today, lessons), dict(
            connection.execute(_streaks(today, lessons)).all())
    shown = ((SCHEDULE.c.due <= today) & SCHEDULE.c.suspended.is_(False)
             & (SCHEDULE.c.buried_until.is_(None) | (SCHEDULE.c.buried_until <= today)))
    counted = {row[0]: row[1:] for row in connection.execute(
        select(SCHEDULE.c.learner, _count(shown), _count(SCHEDULE.c.due.is_not(None)))
        .join_from(SCHEDULE, CARD, CARD.c.id == SCHEDULE.c.card_id)
        .where(CARD.c.removed.is_(False), reviewed_card(), in_lessons(lessons)).group_by(SCHEDULE.c.learner))}
    due = {name: figures[0] for name, figures in counted.items()}
    summaries = [
        LearnerSummary(learner=name, due=int(due.get(name) or 0),
                       answered_week=int(answered.get(name, (0,))[0] or 0),
                       reviews=int(answered.get(name, (0, 0))[1] or 0),
                       passed=int(answered.get(name, (0, 0, 0))[2] or 0),
                       streak=int(streaks.get(name) or 0),
                       last_active=as_utc(answered[name][3]) if name in answered else None,
                       learned=int(counted.get(name, (0, 0))[1] or 0))
        for name in sorted(set(answered) | set(due))
    ]
    return summaries


def _answered_from_log(connection: Connection, today: date, lessons: Collection[str] | None) -> Answered:
    """Each learner's answers in the last 7 days, due reviews in the last 30, of which passed, and latest answer:
    one pass over the log."""
    week, month = today - timedelta(days=WEEK - 1), today - timedelta(days=RETENTION_DAYS - 1)
    due_review = (REVIEW.c.kind == "review") & (REVIEW.c.study_day >= month)
    return {row[0]: row[1:] for row in connection.execute(_log(select(
        REVIEW.c.learner, _count(REVIEW.c.study_day >= week), _count(due_review),
        _count(due_review & (REVIEW.c.grade >= PASSING)), func.max(REVIEW.c.reviewed_at)).select_from(REVIEW), lessons)
        .where(REVIEW.c.study_day <= today).group_by(REVIEW.c.learner))}


def _answered_summarized(connection: Connection, today: date) -> tuple[Answered, dict[str, int]]:
    """:func:`_answered_from_log`'s figures and the streaks from the summaries: each learner's row and their days
    of the last 30 (the streak is the run of today's row, else yesterday's)."""
    week, month = today - timedelta(days=WEEK - 1), today - timedelta(days=RETENTION_DAYS - 1)
    day, learner = REPORT_DAY, REPORT_LEARNER
    rows = connection.execute(
        select(learner.c.learner, func.sum(case((day.c.study_day >= week, day.c.answers), else_=0)),
               func.sum(day.c.reviews), func.sum(day.c.passed), learner.c.last_at,
               func.coalesce(func.max(case((day.c.study_day == today, day.c.run))),
                             func.max(case((day.c.study_day == today - timedelta(days=1), day.c.run)))))
        .select_from(learner.outerjoin(day, (day.c.learner == learner.c.learner)
                                       & day.c.study_day.between(month, today)))
        .group_by(learner.c.learner, learner.c.last_at)).all()
    return {row[0]: tuple(row[1:5]) for row in rows}, {row[0]: row[5] for row in rows if row[5] is not None}


def _streaks(today: date, lessons: Collection[str] | None) -> Select[*tuple[Any, ...]]:
    """Streaks in SQL, so a class's 300,000 learner-days never cross the wire: days in a row share
    "day number - rank", and the run that ends today or yesterday is the current streak. (The ORDER BY
    lets PostgreSQL walk the (learner, study_day) index instead of hashing a million answers.)"""
    days = (_log(select(REVIEW.c.learner, day_number(REVIEW.c.study_day).label("d")).select_from(REVIEW), lessons)
            .where(REVIEW.c.study_day <= today).group_by(REVIEW.c.learner, REVIEW.c.study_day)
            .order_by(REVIEW.c.learner, REVIEW.c.study_day).subquery("days"))
    runs = select(days.c.learner, days.c.d, (days.c.d - func.row_number().over(
        partition_by=days.c.learner, order_by=days.c.d)).label("run")).subquery("runs")
    yesterday = day_number(literal(today - timedelta(days=1), REVIEW.c.study_day.type))
    return (select(runs.c.learner, func.count()).group_by(runs.c.learner, runs.c.run)
            .having(func.max(runs.c.d) >= yesterday))


def cards(connection: Connection, today: date, lessons: Collection[str] | None = None, *,
          from_log: bool = False) -> list[CardSummary]:
    """Every card across the class, hardest first: its answers (from the summaries, else one pass over the log)
    and one pass over the schedules."""
    if not from_log and summarized(connection, today):
        logged = {row[0]: row[1:] for row in connection.execute(
            select(REPORT_CARD.c.card_id, func.sum(REPORT_CARD.c.answers), func.sum(REPORT_CARD.c.reviews),
                   func.sum(REPORT_CARD.c.lapses)).group_by(REPORT_CARD.c.card_id))}
    else:
        learned = (REVIEW.c.kind == "review") & (REVIEW.c.reps_before > 0)
        logged = {row[0]: row[1:] for row in connection.execute(_log(select(
            REVIEW.c.card_id, func.count(), _count(learned), _count(learned & (REVIEW.c.grade < PASSING)))
            .select_from(REVIEW), lessons).where(REVIEW.c.study_day <= today).group_by(REVIEW.c.card_id))}
    # A first answer of a study day graded below 3 resets the repetitions to 0 (SM-2's rule, which the FSRS
    # scheduler keeps too): the schedule says who failed the card at their latest scheduling answer, without
    # walking the log.
    seen = SCHEDULE.c.due.is_not(None)
    summaries = connection.execute(
        select(CARD.c.id, CARD.c.item_id, CARD.c.lesson_id, _count(seen), _count(seen & (SCHEDULE.c.repetitions == 0)),
               func.avg(case((seen, SCHEDULE.c.ef100))), func.avg(SCHEDULE.c.stability))
        .join_from(CARD, SCHEDULE, SCHEDULE.c.card_id == CARD.c.id)
        .where(CARD.c.removed.is_(False), reviewed_card(), in_lessons(lessons))
        .group_by(CARD.c.id, CARD.c.item_id, CARD.c.lesson_id))
    found = [
        CardSummary(card_id=card_id, item_id=item_id, lesson_id=lesson_id,
                    answers=int(logged.get(card_id, (0,))[0] or 0), reviews=int(logged.get(card_id, (0, 0))[1] or 0),
                    lapses=int(logged.get(card_id, (0, 0, 0))[2] or 0), learners=int(learned_count or 0),
                    failing=int(failing or 0), ef100=float(ef100) if ef100 is not None else None,
                    stability=float(stability) if stability is not None else None)
        for card_id, item_id, lesson_id, learned_count, failing, ef100, stability in summaries
    ]
    return sorted(found, key=_hardness)


WRONG = f"review.grade < {PASSING} AND review.typed IS NOT NULL AND review.typed <> ''"
TYPED_WRONG = f"{WRONG} AND review.variant IS NULL"
"""SQL: an answer typed wrong to a card's own numbers, the rows :func:`wrong_answers` groups by card. Constants,
not parameters: the planner uses the partial index below only for a condition it can see implies the index's,
which a prepared statement's generic plan cannot."""
VARIANT_WRONG = f"{WRONG} AND review.variant IS NOT NULL"
"""SQL: an answer typed wrong to fresh numbers (a variant), which :func:`wrong_answers` groups by card and variant."""


def index_wrong_answers(connection: Connection) -> None:
    """The indexes :func:`wrong_answers` reads instead of the whole log (a class's, on PostgreSQL: ``class init``):
    only the wrong answers, in the order it groups them, so it neither scans nor sorts the log (1M answers: 1.5 s
    to 0.25 s); those to variants apart, so the own numbers' index stays as small and as ordered as it was. Run
    again, it changes nothing. (An index on the variant's key rather than the logged text was slower: PostgreSQL
    reads the table beside an expression index; on 187,000 wrong answers to variants, 0.32 s against 0.17 s.)"""
    connection.exec_driver_sql(f"CREATE INDEX IF NOT EXISTS ix_review_wrong ON review (card_id, typed, learner) "
                               f"WHERE {TYPED_WRONG}")
    connection.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_review_wrong_variant ON review "
                               f"(card_id, typed, learner, variant) WHERE {VARIANT_WRONG}")


@dataclass(frozen=True)
class WrongAnswer:
    """An answer typed wrong for a card (graded below 3), and by how many learners; ``variant`` is the key of the
    fresh numbers it answered (``d=512,f=2048``), None for the card's own."""

    card_id: str
    typed: str
    learners: int
    times: int
    variant: str | None = None


def wrong_answers(connection: Connection, *, lessons: Collection[str] | None = None, per_card: int = 3
                  ) -> dict[str, list[WrongAnswer]]:
    """The most common wrong answers of each card, most learners first: up to ``per_card`` to its own numbers,
    then up to ``per_card`` to its variants, each under the variant it answered (the same typed number answers
    another question with other numbers)."""
    found: dict[str, list[WrongAnswer]] = {}
    for query in (wrong_answers_query(lessons), variant_wrong_answers_query(lessons)):
        counted: dict[str, int] = {}
        for card_id, *grouped, typed, who, times in connection.execute(query):
            if counted.get(card_id, 0) < per_card:
                counted[card_id] = counted.get(card_id, 0) + 1
                found.setdefault(card_id, []).append(
                    WrongAnswer(card_id, typed, int(who), int(times), grouped[0] if grouped else None))
    return found


def wrong_answers_query(lessons: Collection[str] | None = None) -> Select[*tuple[Any, ...]]:
    """Each card's wrong answers to its own numbers (:data:`TYPED_WRONG`), by how many learners typed each, then
    how often."""
    learners = func.count(func.distinct(REVIEW.c.learner))
    return (_log(select(REVIEW.c.card_id, REVIEW.c.typed, learners, func.count()).select_from(REVIEW), lessons)
            .where(text(TYPED_WRONG)).group_by(REVIEW.c.card_id, REVIEW.c.typed)
            .order_by(REVIEW.c.card_id, learners.desc(), func.count().desc(), REVIEW.c.typed))


def variant_wrong_answers_query(lessons: Collection[str] | None = None) -> Select[*tuple[Any, ...]]:
    """Each card's wrong answers to fresh numbers (:data:`VARIANT_WRONG`), grouped by the variant's key (answers
    to the same numbers, whatever seed drew them), by how many learners typed each, then how often."""
    learners = func.count(func.distinct(REVIEW.c.learner))
    key = variant_key(REVIEW.c.variant)
    return (_log(select(REVIEW.c.card_id, key, REVIEW.c.typed, learners, func.count()).select_from(REVIEW), lessons)
            .where(text(VARIANT_WRONG)).group_by(REVIEW.c.card_id, key, REVIEW.c.typed)
            .order_by(REVIEW.c.card_id, learners.desc(), func.count().desc(), key, REVIEW.c.typed))


def _hardness(card: CardSummary) -> tuple[Any, ...]:
    """Most failed at the latest answer first, then most lapses, then lowest ease; unanswered cards last."""
    return (card.learners == 0, -(card.failed_share or 0), -(card.lapse_rate or 0),
            card.ef100 if card.ef100 is not None else 1e9, card.card_id)
