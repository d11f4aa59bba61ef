"""What the teacher's dashboard charts and a learner's page read, beside the class report (:mod:`.classroom`).

- :func:`activity`: the class's answers and active learners per study day, for the activity chart;
- :func:`failed_most`: "who failed what": the cards one learner fails most, with what they typed.

Statements built from the tables, as the store's others are, read through the teacher's role: row-level
security lets it read every learner's rows (a learner's role running them sees a class of one).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import Connection, case, func, select

from bertdrill.adapters.store.classroom import REPORT_DAY
from bertdrill.adapters.store.database import day_of
from bertdrill.adapters.store.schema import REVIEW
from bertdrill.core.scheduling.state import PASSING, AnswerKind
from bertdrill.core.variants import read_logged

SCHEDULING = (AnswerKind.NEW.value, AnswerKind.REVIEW.value)  # the first answer of a study day: what a grade judges


def activity(connection: Connection, since: date, until: date) -> dict[date, tuple[int, int]]:
    """(answers, learners who answered) per study day in [since, until]; days without answers are absent. From
    the log's summary per learner and day (:data:`.classroom.REPORT_DAY`: a row is a learner who answered that day),
    a few thousand rows where the log holds a million."""
    day = REPORT_DAY
    rows = connection.execute(select(day.c.study_day, func.sum(day.c.answers), func.count())
                              .where(day.c.study_day.between(since, until)).group_by(day.c.study_day))
    return {day_of(study_day): (int(answers), int(learners)) for study_day, answers, learners in rows}


@dataclass(frozen=True)
class Failed:
    """One card a learner failed: how often, out of how many answers, and what they typed when they did."""

    card_id: str
    failed: int  # first answers of a study day graded below 3
    answers: int  # first answers of a study day
    last_failed: date
    # their latest distinct wrong answers, newest first, each with the key of the fresh numbers it answered
    # (``d=512,f=2048``; None: the card's own): the same number typed for other numbers is another answer
    typed: tuple[tuple[str, str | None], ...] = ()


def failed_most(connection: Connection, learner: str, *, limit: int = 10, typed: int = 3) -> list[Failed]:
    """The ``limit`` cards ``learner`` failed most (then most recently), each with up to ``typed`` of their wrong
    answers (each with the variant it answered, if the card was asked with fresh numbers)."""
    failing = REVIEW.c.grade < PASSING
    mine = (REVIEW.c.learner == learner) & REVIEW.c.kind.in_(SCHEDULING)
    failures: Any = func.sum(case((failing, 1), else_=0))
    rows = connection.execute(
        select(REVIEW.c.card_id, failures, func.count(), func.max(case((failing, REVIEW.c.study_day))))
        .where(mine).group_by(REVIEW.c.card_id).having(failures > 0)
        .order_by(failures.desc(), func.max(case((failing, REVIEW.c.study_day))).desc(), REVIEW.c.card_id)
        .limit(limit)).all()
    if not rows:
        return []
    wrong: dict[str, list[tuple[str, str | None]]] = {}
    for card_id, text, logged in connection.execute(
            select(REVIEW.c.card_id, REVIEW.c.typed, REVIEW.c.variant)
            .where(REVIEW.c.learner == learner, failing, REVIEW.c.card_id.in_([row[0] for row in rows]),
                   REVIEW.c.typed.is_not(None), REVIEW.c.typed != "")
            .order_by(REVIEW.c.card_id, REVIEW.c.id.desc())):
        kept = wrong.setdefault(card_id, [])
        answer = (text, read_logged(logged)[1] if logged else None)
        if len(kept) < typed and answer not in kept:
            kept.append(answer)
    return [Failed(card_id, int(failed), int(answers), day_of(last), tuple(wrong.get(card_id, ())))
            for card_id, failed, answers, last in rows]
