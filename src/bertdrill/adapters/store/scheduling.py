"""Which scheduler runs, switching it by replaying the review log, and reading the log for calibration.

A switch rebuilds every card's state from its log (:func:`bertdrill.core.scheduling.replay.replay`)
and stores the choice, in one write transaction: all or nothing. The log is read in card
order in one pass, one card at a time, so a million answers take no more memory than one
card's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime
from itertools import chain, groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import (
    ColumnClause,
    Connection,
    Update,
    bindparam,
    case,
    delete,
    func,
    insert,
    literal_column,
    select,
    update,
)

from bertdrill.adapters.store.database import (
    Database,
    all_rows,
    as_date,
    as_utc,
    day_of,
    execute_compiled_many,
    first_row,
    learner_of,
    real,
    whole,
)
from bertdrill.adapters.store.schema import (
    CARD,
    FITTED,
    LEARNER,
    LESSON_EXAM,
    REVIEW,
    SCHEDULE,
    SCHEDULE_FIELDS,
    SCHEDULER,
    day_number,
    in_lessons,
)
from bertdrill.core import collector
from bertdrill.core.errors import StoreError
from bertdrill.core.scheduling.registry import Spreading, stored_name
from bertdrill.core.scheduling.state import LEECH_LAPSES, AnswerKind, Schedule
from bertdrill.ports import CardLog, SchedulerChoice, Switch

if TYPE_CHECKING:  # made where they are read: a learner's start-up makes none (bertdrill.ports.later)
    from bertdrill.ports import FittedSet, LessonExam
from bertdrill.ports import Scheduler as SchedulerPort

_CHOICE = select(SCHEDULER.c.name, SCHEDULER.c.retention, SCHEDULER.c.exam, SCHEDULER.c.exam_target,
                 SCHEDULER.c.spread, FITTED.c.number, FITTED.c.parameters, FITTED.c.reviews, FITTED.c.fitted_at).select_from(
    SCHEDULER.outerjoin(FITTED, (FITTED.c.learner == SCHEDULER.c.learner) & (FITTED.c.number == SCHEDULER.c.parameters))
).where(SCHEDULER.c.learner == LEARNER)
_LESSON_EXAMS = select(LESSON_EXAM.c.lesson_id, LESSON_EXAM.c.exam, LESSON_EXAM.c.target).where(
    LESSON_EXAM.c.learner == LEARNER).order_by(LESSON_EXAM.c.lesson_id)
_FITTED_SETS = select(FITTED.c.number, FITTED.c.parameters, FITTED.c.reviews, FITTED.c.fitted_at).where(
    FITTED.c.learner == LEARNER).order_by(FITTED.c.number.desc())
_SCHEDULED_CARDS = select(SCHEDULE.c.card_id, SCHEDULE.c.card_id.label("key")).where(SCHEDULE.c.learner == LEARNER).order_by(
    SCHEDULE.c.card_id)
"""Each schedule's card and the key its replayed schedule is written by (:data:`_REPLAYED`): the card itself."""
_ROWID: ColumnClause[Any] = literal_column("rowid")
_SCHEDULED_ROWS = select(SCHEDULE.c.card_id, _ROWID).where(SCHEDULE.c.learner == LEARNER).order_by(SCHEDULE.c.card_id)
"""SQLite's: the key is the row's rowid (read from the schedule's key index, which holds it), found by the table's
own tree where the learner and card are a search of that index for each of 100,000 rows (0.68 -> 0.58 s of CPU
for the write in raw sqlite3). Both are read in the switch's write transaction, which no other writer enters."""
_NEW: dict[str, Any] = {field: bindparam(f"new_{field}") for field in (*SCHEDULE_FIELDS, "leech")}
# "owner", not "learner": an UPDATE keeps its columns' names for the values it sets
_REPLAYED: Update = update(SCHEDULE).where(SCHEDULE.c.learner == bindparam("owner"),
                                           SCHEDULE.c.card_id == bindparam("key")).values(_NEW)
_REPLAYED_ROW: Update = update(SCHEDULE).where(_ROWID == bindparam("key")).values(_NEW)
T = TypeVar("T")
_LAST_SET = select(func.max(FITTED.c.number)).where(FITTED.c.learner == LEARNER)


class Scheduling(Database):
    """The scheduler setting and the replays of the log."""

    def scheduler_choice(self) -> SchedulerChoice:
        return self._run(choice_of)

    def fitted_sets(self) -> list[FittedSet]:
        return [_fitted_set(row) for row in self.read(_FITTED_SETS)]

    def switch_scheduler(self, choice: SchedulerChoice, scheduler: SchedulerPort, *,
                         track: Callable[[list[str]], Iterable[str]] = iter) -> Switch:
        """Rebuild every card's state from its log under ``scheduler``, and store ``choice``: one transaction."""

        from bertdrill.core.scheduling.replay import card_replayer  # loaded for a switch, not with every store

        def work(connection: Connection) -> Switch:
            learner = learner_of(connection)
            # every card's schedule row locked first (PostgreSQL; SQLite's write lock holds the file): an answer in
            # another window commits before the log is read, or waits and then schedules under the new choice
            by_row = connection.dialect.name == "sqlite"
            locked = connection.execute((_SCHEDULED_ROWS if by_row else _SCHEDULED_CARDS).with_for_update(),
                                        {"learner": learner}).cursor
            scheduled = locked.fetchall()  # the driver's rows: no Row made of each of 100,000
            card_ids = [card_id for card_id, _key in scheduled]
            updates, answers = [], 0
            replayed, values = card_replayer(scheduler), _values(learner, self.value)
            # the collector paused while the switch makes its few million objects, none of them in a cycle: its
            # runs walked every object alive, the 100,000 schedules made so far among them (0.1-0.15 s of CPU)
            with collector.paused():
                for (_card, key), (card_id, log) in zip(scheduled, _merged(track(card_ids), _day_logs(connection, None)),
                                                        strict=True):
                    answers += len(log)
                    updates.append(values(key, replayed(card_id, log)))
            execute_compiled_many(connection, _REPLAYED_ROW if by_row else _REPLAYED, updates, converted=True)
            stored = _store_fitted(connection, choice)
            row = {"learner": learner, "name": stored.name.value, "retention": stored.retention,
                   "switched_at": datetime.now(UTC), "parameters": stored.fitted.number if stored.fitted else None,
                   "exam": stored.exam, "exam_target": stored.exam_target,
                   "spread": None if stored.spread is None else stored.spread.value}
            upsert = self.upsert(SCHEDULER).values(row)
            connection.execute(upsert.on_conflict_do_update(index_elements=[SCHEDULER.c.learner], set_={
                name: upsert.excluded[name] for name in row if name != "learner"}))
            connection.execute(delete(LESSON_EXAM).where(LESSON_EXAM.c.learner == learner))
            if stored.lesson_exams:
                connection.execute(insert(LESSON_EXAM), [
                    {"learner": learner, "lesson_id": each.lesson, "exam": each.exam, "target": each.target}
                    for each in stored.lesson_exams])
            return Switch(cards=len(updates), answers=answers, choice=stored)

        return self._run(work, write=True)

    def card_logs(self, visit: Callable[[CardLog], None], *, lessons: Collection[str] | None = None,
                  track: Callable[[list[str]], Iterable[str]] = iter) -> int:
        """Call ``visit`` with each card's log, (study day, grade) oldest first, for cards with answers."""

        def work(connection: Connection) -> int:
            answered = _of_lessons(select(REVIEW.c.card_id).distinct(), lessons).order_by(REVIEW.c.card_id)
            card_ids = list(connection.execute(answered, {"learner": learner_of(connection)}).scalars())
            answers = 0
            for _card_id, log in _merged(track(card_ids), _card_logs(connection, lessons)):
                answers += len(log)
                visit(log)
            return answers

        return self._run(work)


_NEVER_SCHEDULE = [kind.value for kind in AnswerKind if not kind.schedules]
"""Answers a replay leaves out: cram answers (bertdrill review --cram) never scheduled their card."""


def _of_lessons(columns: Any, lessons: Collection[str] | None) -> Any:
    """``columns`` over the learner's log (the answers that schedule), joined to its cards only when a lesson
    filter needs them."""
    mine = columns.where(REVIEW.c.learner == LEARNER, REVIEW.c.kind.not_in(_NEVER_SCHEDULE))
    return mine if lessons is None else mine.join_from(REVIEW, CARD, CARD.c.id == REVIEW.c.card_id).where(
        in_lessons(lessons))


def choice_of(connection: Connection) -> SchedulerChoice:
    """The learner's scheduler choice as stored, read in ``connection``'s transaction (an answer reads it in its own);
    read again only when something was committed since it was last read (:meth:`.Database.kept_read`)."""
    database: Database = connection.info["database"]
    return database.kept_read(connection, _stored_choice)


def _stored_choice(connection: Connection) -> SchedulerChoice:
    """:func:`choice_of`, read from the tables."""
    learner = {"learner": learner_of(connection)}
    found = first_row(connection, _CHOICE, learner)
    exams = _lesson_exams(all_rows(connection, _LESSON_EXAMS, learner))
    if found is None:
        return SchedulerChoice(lesson_exams=exams)
    name, retention, exam, exam_target, spread, *fitted = found
    return SchedulerChoice(stored_name(name), real(retention), _fitted_set(fitted) if fitted[0] is not None else None,
                           as_date(exam), real(exam_target), None if spread is None else _spreading(spread), exams)


def _lesson_exams(rows: Sequence[Sequence[Any]]) -> tuple[LessonExam, ...]:
    """The lessons' exams from their rows (usually none: their record is made only for a learner who has one)."""
    if not rows:
        return ()
    from bertdrill.ports import LessonExam

    return tuple(LessonExam(lesson, day_of(exam), target) for lesson, exam, target in rows)


def _spreading(name: str) -> Spreading:
    """The load balancer a stored setting names: its module (three dataclasses, 2 ms) loads only for a store
    that names one, not in every ``status`` and ``stats``."""
    from bertdrill.core.scheduling.spread import spreading_named

    return spreading_named(name)


def _store_fitted(connection: Connection, choice: SchedulerChoice) -> SchedulerChoice:
    """The choice with its fitted set stored: a set numbered 0 becomes the learner's next set."""
    fitted = choice.fitted
    if fitted is None or fitted.number:
        return choice
    learner = learner_of(connection)
    number = 1 + (connection.execute(_LAST_SET, {"learner": learner}).scalar() or 0)
    stored = replace(fitted, number=number)
    connection.execute(FITTED.insert().values(learner=learner, number=number,
                                              parameters=json.dumps(list(fitted.parameters)),
                                              reviews=fitted.reviews, fitted_at=fitted.fitted_at))
    return replace(choice, fitted=stored)


def _fitted_set(row: Sequence[Any]) -> FittedSet:
    from bertdrill.ports import FittedSet

    number, parameters, reviews, fitted_at = row
    moment = as_utc(fitted_at)
    assert moment is not None  # the column is NOT NULL
    numbers = json.loads(parameters)
    if not isinstance(numbers, list) or None in numbers:
        raise TypeError(f"FSRS parameters are not a list of numbers: {parameters!r}")
    return FittedSet(whole(number), tuple(float(real(value) or 0) for value in numbers), whole(reviews), moment)


ROWS_AT_ONCE = 4096  # answers fetched together while a log is read: few round trips, little memory


def _day_logs(connection: Connection, lessons: Collection[str] | None) -> Iterator[tuple[str, list[tuple[int, int]]]]:
    """Each card's log in card order, read in one pass: (card, [(day's ordinal, grade), ...]), re-drills included.

    The covering index on (learner, card_id, id, study_day, kind, grade) gives the order and every column read
    (schema version 14), so the million answers are one walk of an index, not a million lookups of table rows
    (the read's CPU 1.65 -> 0.75 s in SQLite alone). The database computes each day's number and checks each
    grade as it reads (NULL for a damaged one: a TypeError or KeyError in the replay, which the store names).
    """
    grade = case((REVIEW.c.grade.between(0, 5), REVIEW.c.grade))
    query = _of_lessons(select(REVIEW.c.card_id, day_number(REVIEW.c.study_day), grade), lessons).order_by(
        REVIEW.c.card_id, REVIEW.c.id)
    # Rows straight from the driver's cursor, many at a time: SQLAlchemy's fetch made a Row of each answer, 40 % of
    # reading a million (3.5 -> 2.1 s CPU); the columns need no conversion.
    cursor = connection.execute(query, {"learner": learner_of(connection)}).cursor
    rows: Iterable[Sequence[Any]] = chain.from_iterable(iter(lambda: cursor.fetchmany(ROWS_AT_ONCE), []))
    for card_id, answers in groupby(rows, key=itemgetter(0)):
        yield card_id, [(day, grade) for _card, day, grade in answers]


def _card_logs(connection: Connection, lessons: Collection[str] | None) -> Iterator[tuple[str, CardLog]]:
    """:func:`_day_logs` with each study day a ``date`` (what a calibration reads), each day made once."""
    days: dict[int, date] = {}  # a long log has a million answers on a few thousand days
    for card_id, log in _day_logs(connection, lessons):
        yield card_id, [(days[day] if day in days else days.setdefault(day, date.fromordinal(day)),
                         grade if grade is not None else _damaged_grade(grade)) for day, grade in log]


def _damaged_grade(grade: Any) -> int:
    """A logged grade that is no grade: a ValueError, which the store turns into the damaged row's message."""
    raise ValueError(f"a logged grade is not a whole number from 0 to 5: {grade!r}")


def _merged(card_ids: Iterable[str], logs: Iterator[tuple[str, list[T]]]) -> Iterator[tuple[str, list[T]]]:
    """Each card id with its log (empty for a card never answered); both come in the database's card order."""
    waiting = next(logs, None)
    for card_id in card_ids:
        if waiting is not None and waiting[0] == card_id:
            yield card_id, waiting[1]
            waiting = next(logs, None)
        else:
            yield card_id, []
    if waiting is not None:
        raise StoreError(f"the review log has answers to {waiting[0]!r}, which has no schedule; nothing was changed")


def _values(learner: str, value: Callable[[Any], Any]) -> Callable[[Any, Schedule], dict[str, Any]]:
    """The parameters of :data:`_REPLAYED` (or :data:`_REPLAYED_ROW`) for one card of ``learner``, written by its key
    (its card's id, or its row's), as the driver stores them (``value``: :meth:`Database.value`, for the two that may
    need converting, the due day and the leech flag). Each distinct due day and flag is converted once: 100,000 due
    days fall on a few thousand dates, and a flag is one of two (200,000 calls of ``value`` were 0.1 s of a switch)."""
    days: dict[date | None, Any] = {}
    flags = (value(False), value(True))

    def values(key: Any, state: Schedule) -> dict[str, Any]:
        due = state.due
        return {"owner": learner, "key": key, "new_repetitions": state.repetitions, "new_ef100": state.ef100,
                "new_interval": state.interval, "new_due": days[due] if due in days else days.setdefault(due, value(due)),
                "new_lapses": state.lapses, "new_leech": flags[state.lapses >= LEECH_LAPSES],
                "new_stability": state.stability, "new_difficulty": state.difficulty}

    return values
