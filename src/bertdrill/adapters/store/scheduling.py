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
from typing import Any

from sqlalchemy import Connection

from bertdrill.adapters.store.database import Database, as_date, as_utc, day_of, execute, execute_many
from bertdrill.adapters.store.schema import from_review, lesson_filter
from bertdrill.core.errors import StoreError
from bertdrill.core.scheduling.registry import stored_name
from bertdrill.core.scheduling.replay import replay
from bertdrill.core.scheduling.state import LEECH_LAPSES, Schedule
from bertdrill.ports import CardLog, FittedSet, SchedulerChoice, Switch
from bertdrill.ports import Scheduler as SchedulerPort


class Scheduling(Database):
    """The scheduler setting and the replays of the log."""

    def scheduler_choice(self) -> SchedulerChoice:
        found = self.rows("SELECT s.name, s.retention, s.exam, s.exam_target, f.number, f.parameters, f.reviews, "
                          "f.fitted_at FROM scheduler s "
                          "LEFT JOIN fsrs_parameters f ON f.learner = s.learner AND f.number = s.parameters "
                          "WHERE s.learner = :learner")
        if not found:
            return SchedulerChoice()
        name, retention, exam, exam_target, *fitted = found[0]
        return SchedulerChoice(stored_name(name), retention, _fitted_set(fitted) if fitted[0] is not None else None,
                               as_date(exam), exam_target)

    def fitted_sets(self) -> list[FittedSet]:
        return [_fitted_set(row) for row in self.rows(
            "SELECT number, parameters, reviews, fitted_at FROM fsrs_parameters WHERE learner = :learner "
            "ORDER BY number DESC")]

    def switch_scheduler(self, choice: SchedulerChoice, scheduler: SchedulerPort, *,
                         track: Callable[[list[str]], Iterable[str]] = iter) -> Switch:
        """Rebuild every card's state from its log under ``scheduler``, and store ``choice``: one transaction."""

        def work(connection: Connection) -> Switch:
            card_ids = [row[0] for row in execute(
                connection, "SELECT card_id FROM schedule WHERE learner = :learner ORDER BY card_id")]
            updates, answers = [], 0
            for card_id, log in _merged(track(card_ids), _card_logs(connection, None)):
                answers += len(log)
                updates.append(_values(card_id, replay(scheduler, log)))
            execute_many(connection, "UPDATE schedule SET repetitions = :repetitions, ef100 = :ef100, "
                         "interval = :interval, due = :due, lapses = :lapses, leech = :leech, stability = :stability, "
                         "difficulty = :difficulty WHERE learner = :learner AND card_id = :card", updates)
            stored = _store_fitted(connection, choice)
            execute(connection, "INSERT INTO scheduler (learner, name, retention, switched_at, parameters, exam, "
                    "exam_target) VALUES (:learner, :name, :retention, :at, :parameters, :exam, :exam_target) "
                    "ON CONFLICT (learner) DO UPDATE SET name = excluded.name, retention = excluded.retention, "
                    "switched_at = excluded.switched_at, parameters = excluded.parameters, exam = excluded.exam, "
                    "exam_target = excluded.exam_target", name=stored.name, retention=stored.retention,
                    at=datetime.now(UTC), parameters=stored.fitted.number if stored.fitted else None,
                    exam=stored.exam, exam_target=stored.exam_target)
            return Switch(cards=len(updates), answers=answers, choice=stored)

        return self._run(work, write=True)

    def card_logs(self, visit: Callable[[CardLog], None], *, lessons: Collection[str] | None = None,
                  track: Callable[[list[str]], Iterable[str]] = iter) -> int:
        """Call ``visit`` with each card's log, (study day, grade) oldest first, for cards with answers."""

        def work(connection: Connection) -> int:
            card_ids = [row[0] for row in execute(
                connection, f"SELECT DISTINCT r.card_id {from_review(lessons)} WHERE 1 = 1 {lesson_filter(lessons)} "
                "ORDER BY r.card_id", lessons)]
            answers = 0
            for _card_id, log in _merged(track(card_ids), _card_logs(connection, lessons)):
                answers += len(log)
                visit(log)
            return answers

        return self._run(work)


def _store_fitted(connection: Connection, choice: SchedulerChoice) -> SchedulerChoice:
    """The choice with its fitted set stored: a set numbered 0 becomes the learner's next set."""
    fitted = choice.fitted
    if fitted is None or fitted.number:
        return choice
    number = 1 + (execute(connection, "SELECT max(number) FROM fsrs_parameters WHERE learner = :learner").scalar() or 0)
    stored = replace(fitted, number=number)
    execute(connection, "INSERT INTO fsrs_parameters (learner, number, parameters, reviews, fitted_at) VALUES "
            "(:learner, :number, :parameters, :reviews, :at)", number=number,
            parameters=json.dumps(list(fitted.parameters)), reviews=fitted.reviews, at=fitted.fitted_at)
    return replace(choice, fitted=stored)


def _fitted_set(row: Sequence[Any]) -> FittedSet:
    number, parameters, reviews, fitted_at = row
    moment = as_utc(fitted_at)
    assert moment is not None  # the column is NOT NULL
    return FittedSet(number, tuple(json.loads(parameters)), reviews, moment)


ROWS_AT_ONCE = 4096  # answers fetched together while a log is read: few round trips, little memory


def _card_logs(connection: Connection, lessons: Collection[str] | None) -> Iterator[tuple[str, CardLog]]:
    """Each card's log in card order, read in one pass (the index on card_id, id gives the order)."""
    partitions: Iterable[Sequence[Any]] = execute(connection, f"SELECT r.card_id, r.study_day, r.grade {from_review(lessons)} WHERE 1 = 1 "
                   f"{lesson_filter(lessons)} ORDER BY r.card_id, r.id", lessons).partitions(ROWS_AT_ONCE)
    rows: Iterable[Sequence[Any]] = chain.from_iterable(partitions)  # fetched many at a time: one fetch per row was a fifth of a switch
    days: dict[Any, date] = {}  # a long log has a million answers on a few thousand days: each read once
    for card_id, answers in groupby(rows, key=itemgetter(0)):
        yield card_id, [(days[day] if day in days else days.setdefault(day, day_of(day)), grade)
                        for _card, day, grade in answers]


def _merged(card_ids: Iterable[str], logs: Iterator[tuple[str, CardLog]]) -> Iterator[tuple[str, CardLog]]:
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


def _values(card_id: str, state: Schedule) -> dict[str, Any]:
    return {"card": card_id, "repetitions": state.repetitions, "ef100": state.ef100, "interval": state.interval,
            "due": state.due, "lapses": state.lapses, "leech": state.lapses >= LEECH_LAPSES,
            "stability": state.stability, "difficulty": state.difficulty}
