"""The figures ``status`` and ``stats`` show, counted by the database: reads only."""

from __future__ import annotations

from collections.abc import Collection
from datetime import date, timedelta
from typing import Any

from bertdrill.adapters.store.database import Database, as_date, day_of
from bertdrill.adapters.store.schema import (
    ACTIVE,
    ANSWER_KINDS,
    CARD_STATES,
    FROM_CARDS,
    MATURE_DAYS,
    REVIEWED_CARD,
    STATE_COLUMNS,
    from_review,
    lesson_filter,
    state_of,
)
from bertdrill.core.scheduling.sm2 import LEECH_LAPSES
from bertdrill.ports import AnswerTimes, CardState, DayCounts, Retention, Status


class Reports(Database):
    """Counts over the cards and the log, for some lessons or all."""

    def day_counts(self, day: date, *, lessons: Collection[str] | None = None) -> DayCounts:
        """How many answers of each kind the log holds for a study day, for some lessons or all.

        The daily limits are per lesson, as Anki's are per deck: a session of one lesson
        never uses up the new cards of another reviewed in a second window.
        """
        counts = dict(self.rows(f"SELECT r.kind, count(*) {from_review(lessons)} WHERE r.study_day = :day "
                                f"{lesson_filter(lessons)} GROUP BY r.kind", lessons, day=day))
        return DayCounts(**{kind: counts.get(kind, 0) for kind in ANSWER_KINDS})

    def due_count(self, day: date, *, lessons: Collection[str] | None = None) -> int:
        """Cards that will be due on or before ``day`` (suspended, buried and removed ones left out)."""
        return self._count(f"s.due <= :today {ACTIVE}", day, lessons)

    def status(self, today: date, *, lessons: Collection[str] | None = None) -> Status:
        due_now = self.due_count(today, lessons=lessons)
        new_cards = self._count(f"s.due IS NULL {ACTIVE}", today, lessons)
        learned = self._count(f"s.due IS NOT NULL AND c.removed = false AND {REVIEWED_CARD}", today, lessons)
        next_due = self._first(f"SELECT min(s.due) {FROM_CARDS} WHERE s.due > :today {ACTIVE} "
                               f"{lesson_filter(lessons)}", lessons, today=today)
        return Status(due_now=due_now, new_cards=new_cards, learned=learned,
                      next_due=as_date(next_due),
                      streak=self.streaks(today, lessons=lessons)[0], counts=self.day_counts(today, lessons=lessons))

    def _count(self, where: str, today: date, lessons: Collection[str] | None) -> int:
        return int(self._first(f"SELECT count(*) {FROM_CARDS} WHERE {where} {lesson_filter(lessons)}",
                               lessons, today=today))

    def _first(self, query: str, lessons: Collection[str] | None = None, **params: Any) -> Any:
        """The first column of the first row of a query that returns one row (count, min, avg)."""
        return self.rows(query, lessons, **params)[0][0]

    def reviews_per_day(self, since: date, until: date, *, lessons: Collection[str] | None = None) -> dict[date, int]:
        """Answers of every kind per study day in [since, until], for a heatmap; days without answers are absent."""
        rows = self.rows(f"SELECT r.study_day, count(*) {from_review(lessons)} WHERE r.study_day BETWEEN :since AND :until "
                          f"{lesson_filter(lessons)} GROUP BY r.study_day ORDER BY r.study_day",
                          lessons, since=since, until=until)
        return {day_of(day): count for day, count in rows}

    def streaks(self, today: date, *, lessons: Collection[str] | None = None) -> tuple[int, int]:
        """(current, longest) runs of study days with at least one answer, up to ``today``.

        The current run ends today, or yesterday when nothing was answered yet today.
        """
        rows = self.rows(f"SELECT DISTINCT r.study_day {from_review(lessons)} WHERE r.study_day <= :today "
                          f"{lesson_filter(lessons)} ORDER BY r.study_day", lessons, today=today)
        longest = run = 0
        previous = None
        for day in (day_of(row[0]) for row in rows):
            run = run + 1 if previous is not None and day - previous == timedelta(days=1) else 1
            longest = max(longest, run)
            previous = day
        current = run if previous is not None and (today - previous).days <= 1 else 0
        return current, longest

    def forecast(self, today: date, days: int, *, lessons: Collection[str] | None = None) -> list[tuple[date, int]]:
        """Cards due on today and each of the next ``days - 1`` days, as review will show them.

        Today's count includes everything overdue; a buried card counts on the day it comes back.
        """
        days = max(days, 1)
        last = today + timedelta(days=days - 1)
        rows = self.rows(
            f"SELECT d, count(*) FROM (SELECT {self.greatest}(s.due, coalesce(s.buried_until, s.due), :today) AS d "
            f"{FROM_CARDS} WHERE s.due IS NOT NULL AND s.suspended = false AND c.removed = false AND {REVIEWED_CARD} "
            f"{lesson_filter(lessons)}) shown WHERE d <= :last GROUP BY d", lessons, today=today, last=last)
        counts = {day_of(day): count for day, count in rows}
        return [(today + timedelta(days=i), counts.get(today + timedelta(days=i), 0)) for i in range(days)]

    def retention(self, since: date | None = None, *, lessons: Collection[str] | None = None) -> Retention:
        """How often due reviews were passed (grade 3 or more), young (interval < 21 days) and mature.

        Only ``review`` answers count: a new card's first answer, same-day re-drills and practice
        checks say nothing about recall after an interval.
        """
        rows = self.rows(
            f"SELECT r.interval_before >= {MATURE_DAYS} AS mature, sum(CASE WHEN r.grade >= 3 THEN 1 ELSE 0 END), count(*) {from_review(lessons)} "
            f"WHERE r.kind = 'review' AND r.study_day >= :since {lesson_filter(lessons)} GROUP BY mature",
            lessons, since=since or date.min)
        found = {bool(mature): (int(passed), int(total)) for mature, passed, total in rows}
        young, mature = found.get(False, (0, 0)), found.get(True, (0, 0))
        return Retention(young[0], young[1], mature[0], mature[1])

    def card_states(self, today: date, *, lessons: Collection[str] | None = None) -> dict[str, int]:
        """How many cards are in each state: new, learning, young, mature, suspended, removed.

        learning: reviewed, but not recalled twice in a row since its first answer or its latest
        lapse; young: interval under 21 days; mature: 21 days or more. A removed card counts as
        removed only, a suspended one as suspended only; a buried card counts by its schedule.
        """
        rows = self.rows(
            "SELECT CASE WHEN c.removed THEN 'removed' WHEN s.suspended THEN 'suspended' "
            "WHEN s.due IS NULL THEN 'new' "
            f"WHEN s.repetitions < 2 THEN 'learning' WHEN s.interval < {MATURE_DAYS} THEN 'young' "
            f"ELSE 'mature' END AS state, count(*) {FROM_CARDS} WHERE 1 = 1 {lesson_filter(lessons)} GROUP BY state",
            lessons)
        counts = dict(rows)
        return {state: counts.get(state, 0) for state in CARD_STATES}

    def answer_count(self, *, lessons: Collection[str] | None = None) -> int:
        """How many answers the log holds."""
        return int(self._first(f"SELECT count(*) {from_review(lessons)} WHERE 1 = 1 {lesson_filter(lessons)}", lessons))

    def answer_times(self, *, lessons: Collection[str] | None = None) -> AnswerTimes:
        """The log's answers and their milliseconds by kind and grade (practice left out), and its study days."""
        rows = self.rows(f"SELECT r.kind, r.grade, count(*), sum(r.duration_ms) {from_review(lessons)} "
                         f"WHERE r.kind <> 'practice' {lesson_filter(lessons)} GROUP BY r.kind, r.grade", lessons)
        days = self._first(f"SELECT count(DISTINCT r.study_day) {from_review(lessons)} WHERE r.kind <> 'practice' "
                           f"{lesson_filter(lessons)}", lessons)
        durations = {(kind, int(grade)): (int(count), int(ms or 0)) for kind, grade, count, ms in rows}
        return AnswerTimes(durations, int(days or 0), sum(count for (kind, _grade), (count, _ms) in durations.items()
                                                          if kind == "new"))

    def average_ef(self, *, lessons: Collection[str] | None = None) -> float | None:
        """Mean easiness factor of reviewed cards still in their lessons."""
        value = self._first(f"SELECT avg(s.ef100) {FROM_CARDS} WHERE s.due IS NOT NULL AND c.removed = false "
                            f"{lesson_filter(lessons)}", lessons)
        return float(value) / 100 if value is not None else None  # PostgreSQL averages to a Decimal

    def leeches(self, min_lapses: int = LEECH_LAPSES, *, lessons: Collection[str] | None = None) -> list[CardState]:
        """Cards that lapsed at least ``min_lapses`` times, most lapses first."""
        return self._states("s.lapses >= :least", "s.lapses DESC", lessons, least=min_lapses)

    def hardest(self, limit: int = 10, *, lessons: Collection[str] | None = None) -> list[CardState]:
        """Reviewed cards with the lowest easiness factor, lowest first (more lapses first among equals)."""
        return self._states("s.due IS NOT NULL", "s.ef100, s.lapses DESC", lessons, limit=limit)

    def _states(self, where: str, order: str, lessons: Collection[str] | None, *, limit: int = -1,
                **params: Any) -> list[CardState]:
        """Cards still in their lessons (``c.removed = false``) that meet ``where``, in ``order``; all when ``limit`` is -1."""
        rows = self.rows(f"SELECT {STATE_COLUMNS} {FROM_CARDS} WHERE {where} AND c.removed = false "
                         f"{lesson_filter(lessons)} ORDER BY {order}, s.card_id {'LIMIT :limit' if limit >= 0 else ''}",
                         lessons, limit=limit, **params)
        return [state_of(row) for row in rows]
