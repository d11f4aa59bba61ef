"""The teacher's view of a class: every learner, and every card across the class, hardest first.

Plain SQL both backends run (no FILTER, no DISTINCT ON; dates and day numbers as the backend spells
them), over the whole class: the teacher's role reads every learner's rows (row-level security lets
it; a learner's role running it sees a class of one).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import Connection, bindparam, text

from bertdrill.adapters.store.database import Database, as_utc

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


def _lessons(statement, lessons: Collection[str] | None, params: dict):
    if lessons is None:
        return statement, params
    return statement.bindparams(bindparam("lessons", expanding=True)), {**params, "lessons": list(lessons)}


def report(connection: Connection, database: Database, today: date, *,
           lessons: Collection[str] | None = None) -> ClassReport:
    """The report of the class on ``today`` (the backend says how it spells dates and day numbers)."""
    day, day_number = database.day, database.day_number
    only = "" if lessons is None else "AND c.lesson_id IN :lessons"
    # The log joins its cards only for a lesson filter: the join costs a lookup per answer.
    log = "FROM review r" if lessons is None else "FROM review r JOIN card c ON c.id = r.card_id"
    params = {"today": day(today), "yesterday": day(today - timedelta(days=1)), "week": day(today - timedelta(days=WEEK - 1)),
              "month": day(today - timedelta(days=RETENTION_DAYS - 1))}

    def rows(sql: str) -> list:
        statement, bound = _lessons(text(sql), lessons, params)
        return list(connection.execute(statement, bound))

    answered = {row[0]: row[1:] for row in rows(
        "SELECT r.learner, "
        "sum(CASE WHEN r.study_day >= :week THEN 1 ELSE 0 END), "
        "sum(CASE WHEN r.kind = 'review' AND r.study_day >= :month THEN 1 ELSE 0 END), "
        "sum(CASE WHEN r.kind = 'review' AND r.study_day >= :month AND r.grade >= 3 THEN 1 ELSE 0 END), "
        "max(r.reviewed_at) "
        f"{log} WHERE r.study_day <= :today {only} GROUP BY r.learner")}
    due = dict(rows(
        "SELECT s.learner, sum(CASE WHEN s.due <= :today AND s.suspended = false "
        "AND (s.buried_until IS NULL OR s.buried_until <= :today) THEN 1 ELSE 0 END) "
        f"FROM schedule s JOIN card c ON c.id = s.card_id WHERE c.removed = false AND c.kind != 'practice' {only} "
        "GROUP BY s.learner"))
    streaks = dict(rows(_STREAK.format(only=only, log=log, day=day_number("r.study_day"),
                                       yesterday=day_number("CAST(:yesterday AS DATE)"))))
    learners = [
        LearnerSummary(learner=name, due=int(due.get(name) or 0),
                       answered_week=int(answered.get(name, (0,))[0] or 0),
                       reviews=int(answered.get(name, (0, 0))[1] or 0),
                       passed=int(answered.get(name, (0, 0, 0))[2] or 0),
                       streak=int(streaks.get(name, 0)),
                       last_active=as_utc(answered[name][3]) if name in answered else None)
        for name in sorted(set(answered) | set(due))
    ]
    return ClassReport(today=today, learners=learners, cards=_cards(rows, only, log))


# Streaks in SQL, so a class's 300,000 learner-days never cross the wire: days in a row share
# "day number - rank", and the run that ends today or yesterday is the current streak. (The ORDER BY
# lets PostgreSQL walk the (learner, study_day) index instead of hashing a million answers.)
_STREAK = """
WITH days AS (
    SELECT r.learner, {day} AS d {log}
    WHERE r.study_day <= :today {only} GROUP BY r.learner, r.study_day ORDER BY r.learner, r.study_day),
runs AS (SELECT learner, d, d - row_number() OVER (PARTITION BY learner ORDER BY d) AS run FROM days)
SELECT learner, count(*) FROM runs GROUP BY learner, run HAVING max(d) >= {yesterday}
"""


def _cards(rows, only: str, log: str) -> list[CardSummary]:
    logged = {row[0]: row[1:] for row in rows(
        "SELECT r.card_id, count(*), "
        "sum(CASE WHEN r.kind = 'review' AND r.reps_before > 0 THEN 1 ELSE 0 END), "
        "sum(CASE WHEN r.kind = 'review' AND r.reps_before > 0 AND r.grade < 3 THEN 1 ELSE 0 END) "
        f"{log} WHERE r.study_day <= :today {only} GROUP BY r.card_id")}
    # A first answer of a study day graded below 3 resets the repetitions to 0 (SM-2's rule, which the FSRS
    # scheduler keeps too): the schedule says who failed the card at their latest scheduling answer, without
    # walking the log.
    cards = [
        CardSummary(card_id=card_id, item_id=item_id, lesson_id=lesson_id,
                    answers=int(logged.get(card_id, (0,))[0]), reviews=int(logged.get(card_id, (0, 0))[1] or 0),
                    lapses=int(logged.get(card_id, (0, 0, 0))[2] or 0), learners=int(learned or 0),
                    failing=int(failing or 0), ef100=float(ef100) if ef100 is not None else None,
                    stability=float(stability) if stability is not None else None)
        for card_id, item_id, lesson_id, learned, failing, ef100, stability in rows(
            "SELECT c.id, c.item_id, c.lesson_id, "
            "sum(CASE WHEN s.due IS NOT NULL THEN 1 ELSE 0 END), "
            "sum(CASE WHEN s.due IS NOT NULL AND s.repetitions = 0 THEN 1 ELSE 0 END), "
            "avg(CASE WHEN s.due IS NOT NULL THEN s.ef100 END), avg(s.stability) "
            "FROM card c JOIN schedule s ON s.card_id = c.id "
            f"WHERE c.removed = false AND c.kind != 'practice' {only} GROUP BY c.id, c.item_id, c.lesson_id")
    ]
    return sorted(cards, key=_hardness)


def _hardness(card: CardSummary):
    """Most failed at the latest answer first, then most lapses, then lowest ease; unanswered cards last."""
    return (card.learners == 0, -(card.failed_share or 0), -(card.lapse_rate or 0),
            card.ef100 if card.ef100 is not None else 1e9, card.card_id)
