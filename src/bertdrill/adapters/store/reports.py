"""The figures ``status`` and ``stats`` show, counted by the database: reads only.

Every statement is built from the tables (:mod:`.schema`), like the review's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Date,
    Executable,
    Select,
    and_,
    case,
    false,
    func,
    literal,
    not_,
    or_,
    select,
)

from bertdrill.adapters.store.database import Database, as_date, day_of
from bertdrill.adapters.store.schema import (
    CARD,
    HIDDEN_CARD,
    LEARNER,
    MATURE_DAYS,
    REVIEW,
    SCHEDULE,
    SCHEDULE_FIELDS,
    TALLY,
    active,
    answered_on,
    available,
    in_lessons,
    mine_with_cards,
    reviewed_card,
    state_of,
    unindexed,
)
from bertdrill.core.kinds import Kind
from bertdrill.core.scheduling.state import EF_FLOOR, LEECH_LAPSES, PASSING, AnswerKind, CardStage
from bertdrill.ports import CardFigures, CardState, DayCounts, Retention, Status

if TYPE_CHECKING:  # made when asked for: a learner's start-up makes none (bertdrill.ports.later)
    from bertdrill.ports import AnswerTimes

_HELD_LESSONS = select(CARD.c.lesson_id).distinct()
LISTED = 1000  # hidden cards left out by id; more are left out by joining each schedule to its card
REMOVED_CARD: ColumnElement[bool] = CARD.c.removed.is_(True)
"""The hidden cards :meth:`Reports._schedules_except` leaves out when a removed card is all it leaves out."""
_UNREVIEWED = frozenset(kind.value for kind in Kind if not kind.reviewed)
_KEPT_STATE = select(SCHEDULE.c.card_id, *(SCHEDULE.c[field] for field in SCHEDULE_FIELDS), SCHEDULE.c.suspended,
                     SCHEDULE.c.buried_until, SCHEDULE.c.leech, false().label("removed"))
"""The columns :func:`state_of` reads, of a card still in its lesson (removed: false)."""
_STATE_COLUMNS = len(_KEPT_STATE.selected_columns)
_HiddenCards = list[tuple[str, bool, str]]
"""The cards no review shows, as :func:`_hidden_cards` reads them: (id, removed, kind) of each."""


def _cards(columns: Select[*tuple[Any, ...]], lessons: Collection[str] | None) -> Select[*tuple[Any, ...]]:
    """``columns`` over the learner's schedules with their cards, of some lessons or all."""
    return columns.select_from(mine_with_cards()).where(in_lessons(lessons))


def _status_columns(today: date) -> Select[*tuple[Any, ...]]:
    """Due now, new and learned, counted over schedules (available or not: a learned card is learned). Counts with
    a filter, its rarest test first, as :func:`_stage_counts` counts: SQLite steps no aggregate for a row the filter
    leaves out, where a sum of CASEs added a 0 for each (36.8 -> 23.3 ms for 100,000 schedules, raw)."""
    def counted(*conditions: Any) -> Any:
        return func.count().filter(and_(*conditions))

    return select(counted(SCHEDULE.c.due <= today, available(today)), counted(SCHEDULE.c.due.is_(None),
                  available(today)), counted(SCHEDULE.c.due.is_not(None)))


def _cards_with_schedules() -> Any:
    """The cards, each with the learner's schedule of it: a pass over the cards, each schedule found by its key
    (the card's id kept off the card's index, so SQLite's planner walks the cards, not the schedules)."""
    return CARD.join(SCHEDULE, (SCHEDULE.c.learner == LEARNER) & (SCHEDULE.c.card_id == unindexed(CARD.c.id)))


class Reports(Database):
    """Counts over the cards and the log, for some lessons or all."""

    def _log(self, columns: Select[*tuple[Any, ...]], lessons: Collection[str] | None, *,
             answers: ColumnElement[bool] | None = None) -> Select[*tuple[Any, ...]]:
        """``columns`` over the learner's review log (or the ``answers`` of it a condition picks, the learner's
        only), joined to its cards only when a lesson filter needs them: the join costs a lookup per answer (a
        million for a long-time learner's streak), so lessons that hold every card of the store filter nothing
        and are not joined (:meth:`_scope`)."""
        mine = columns.where(REVIEW.c.learner == LEARNER if answers is None else answers)
        lessons = self._scope(lessons)
        return mine if lessons is None else mine.join_from(REVIEW, CARD, CARD.c.id == REVIEW.c.card_id).where(
            in_lessons(lessons))

    def _scope(self, lessons: Collection[str] | None) -> Collection[str] | None:
        """``lessons``, or None when every card the store holds is in them (the usual case: a learner's
        status names every lesson synced). One scan of the cards' lesson index."""
        if lessons is None:
            return None
        held = {row[0] for row in self.read(_HELD_LESSONS)}
        return None if held <= set(lessons) else lessons

    def _schedules_except(self, columns: Select[*tuple[Any, ...]], lessons: Collection[str] | None,
                          hidden: ColumnElement[bool], *conditions: Any) -> Select[*tuple[Any, ...]]:
        """``columns`` (of the schedule) over the learner's schedules meeting ``conditions``, of some lessons or all,
        but those of the cards ``hidden`` names (:data:`HIDDEN_CARD`, or :data:`REMOVED_CARD`: the removed ones).

        A lesson filter joins each schedule to its card. Lessons that hold every card (:meth:`_scope`), the usual
        case, need no join: the hidden cards are read first, from their own index (usually none, or few), and
        their schedules left out by id, instead of each of 100,000 schedules looking up its card. Many hidden
        cards (more than :data:`LISTED`) are left out by the join after all."""
        return self._except(lessons, hidden)(columns, *conditions)

    def _except(self, lessons: Collection[str] | None, hidden: ColumnElement[bool]) -> Callable[..., Select[*tuple[Any, ...]]]:
        """:meth:`_schedules_except` as a function of ``(columns, *conditions)``, the hidden cards read once for every
        statement it makes (:meth:`hardest` makes two)."""
        assert hidden is HIDDEN_CARD or hidden is REMOVED_CARD, "the hidden cards' index knows these two"
        scope = self._scope(lessons)
        if scope is None and (found := _hidden_cards(self.read)) is not None:
            return _listed_except([card_id for card_id, removed, _kind in found if removed or hidden is HIDDEN_CARD])
        return lambda columns, *conditions: _cards(columns, scope).where(*conditions, not_(hidden))

    def _removed_count(self, lessons: Collection[str] | None, hidden: _HiddenCards | None = None) -> int:
        """How many of the cards a review would show are removed, of some lessons or all: their schedules are
        looked up from the removed cards (few), not the other way round; ``hidden``: the hidden cards of every
        lesson, read already (:func:`_hidden_cards`), so none removed is none counted, with no statement."""
        if hidden is not None:
            removed_ids = [card_id for card_id, removed, kind in hidden if removed and kind not in _UNREVIEWED]
            return int(self._first(select(func.count()).select_from(SCHEDULE).where(
                SCHEDULE.c.learner == LEARNER, SCHEDULE.c.card_id.in_(removed_ids)))) if removed_ids else 0
        removed = REMOVED_CARD & reviewed_card()
        scope = self._scope(lessons)
        if scope is not None:
            return int(self._first(_cards(select(func.count()), scope).where(removed)))
        return int(self._first(select(func.count()).select_from(SCHEDULE).where(
            SCHEDULE.c.learner == LEARNER, SCHEDULE.c.card_id.in_(select(CARD.c.id).where(HIDDEN_CARD, removed)))))

    def _tally(self, columns: Select[*tuple[Any, ...]], lessons: Collection[str] | None) -> Select[*tuple[Any, ...]]:
        """``columns`` over the learner's count of answers per day, lesson and kind (:attr:`tallied` stores only):
        a row per study day and lesson where the log has an answer per answer."""
        mine = columns.where(TALLY.c.learner == LEARNER)
        return mine if lessons is None else mine.where(TALLY.c.lesson_id.in_(list(lessons)))

    def day_counts(self, day: date, *, lessons: Collection[str] | None = None) -> DayCounts:
        """How many answers of each kind the log holds for a study day, for some lessons or all.

        The daily limits are per lesson, as Anki's are per deck: a session of one lesson
        never uses up the new cards of another reviewed in a second window.
        """
        query = self._log(select(REVIEW.c.kind, func.count()), lessons, answers=answered_on(day)).group_by(
            REVIEW.c.kind)
        counts = dict(self.read(query))
        return DayCounts.of({AnswerKind(kind): count for kind, count in counts.items()})

    def due_count(self, day: date, *, lessons: Collection[str] | None = None) -> int:
        """Cards that will be due on or before ``day`` (suspended, buried and removed ones left out): the schedules
        alone less the hidden cards' (:meth:`_schedules_except`), where joining each of 100,000 schedules to its
        card cost 0.3 s of CPU, twice in every ``bertdrill scheduler`` switch. The due day is kept off its index on
        SQLite: the index found each due card and then looked its row up (0.10 s for 90,000 of 100,000 due), where
        one pass over the table is 0.01 s, and no more than that when few are due."""
        return int(self._first(self._schedules_except(select(func.count()), lessons, HIDDEN_CARD,
                                                      unindexed(SCHEDULE.c.due) <= day, available(day))))

    def status(self, today: date, *, lessons: Collection[str] | None = None) -> Status:
        next_due = self._first(_cards(select(func.min(SCHEDULE.c.due)), lessons).where(
            SCHEDULE.c.due > today, active(today)))

        due_now, new_cards, learned = self._status_counts(today, lessons)
        return Status(due_now=due_now, new_cards=new_cards, learned=learned,
                      next_due=as_date(next_due),
                      streak=self._current_streak(today, lessons), counts=self.day_counts(today, lessons=lessons))

    def _status_counts(self, today: date, lessons: Collection[str] | None) -> tuple[int, int, int]:
        """Cards due now, new cards and learned cards, of the cards a review of these lessons shows.

        Counted over the learner's schedules alone, less the schedules of the cards left out (removed, never
        reviewed, of other lessons): joining each of 100,000 schedules to its card cost two lookups a row (65 ms
        of every ``status``), where the schedules alone are one pass and the cards left out are found from the
        index of hidden cards (usually none), or by a pass over the cards when some lessons are left out, their
        few schedules through the schedule's key. Every schedule has its card (a foreign key), so the
        difference is the join's count.
        """
        def counts(query: Select[*tuple[Any, ...]]) -> tuple[int, int, int]:
            due_now, new_cards, learned = self.read(query)[0]
            return int(due_now), int(new_cards), int(learned)

        every = counts(_status_columns(today).where(SCHEDULE.c.learner == LEARNER))
        scope = self._scope(lessons)  # usually every lesson held: only the hidden cards, from their own index
        left_out = counts(_status_columns(today).select_from(_cards_with_schedules()).where(
            HIDDEN_CARD if scope is None else or_(HIDDEN_CARD, CARD.c.lesson_id.not_in(list(scope)))))
        return every[0] - left_out[0], every[1] - left_out[1], every[2] - left_out[2]

    def _count(self, lessons: Collection[str] | None, *conditions: Any) -> int:
        return int(self._first(_cards(select(func.count()), lessons).where(*conditions)))

    def _first(self, query: Select[*tuple[Any, ...]]) -> Any:
        """The first column of the first row of a query that returns one row (count, min, avg)."""
        return self.read(query)[0][0]

    def reviews_per_day(self, since: date, until: date, *, lessons: Collection[str] | None = None) -> dict[date, int]:
        """Answers of every kind per study day in [since, until], for a heatmap; days without answers are absent."""
        if not self.tallied:
            return self._reviews_per_day_from_log(since, until, lessons)
        query = (self._tally(select(TALLY.c.study_day, func.sum(TALLY.c.answers)), lessons)
                 .where(TALLY.c.study_day.between(since, until)).group_by(TALLY.c.study_day)
                 .order_by(TALLY.c.study_day))
        return {day_of(day): int(count) for day, count in self.read(query)}

    def _reviews_per_day_from_log(self, since: date, until: date, lessons: Collection[str] | None) -> dict[date, int]:
        query = (self._log(select(REVIEW.c.study_day, func.count()), lessons)
                 .where(REVIEW.c.study_day.between(since, until)).group_by(REVIEW.c.study_day)
                 .order_by(REVIEW.c.study_day))
        return {day_of(day): count for day, count in self.read(query)}

    def streaks(self, today: date, *, lessons: Collection[str] | None = None) -> tuple[int, int]:
        """(current, longest) runs of study days with an answer, up to ``today``; a day with nothing due does
        not break a run (:func:`bertdrill.core.stats.streaks`).

        The current run ends today, or on the last study day when nothing was due since.
        """
        from bertdrill.core.stats import streaks

        days = self._study_days(today, lessons)
        if not days or (not _gaps(days) and (today - days[-1]).days <= 1):
            return streaks(days, [], today)  # no day without an answer to judge: the owed days are not read
        return streaks(days, self._late(today, lessons) + self._waiting(today, lessons), today)

    def _current_streak(self, today: date, lessons: Collection[str] | None) -> int:
        """:meth:`streaks`' current run alone, for ``status``: the log is read only as far back as that run.

        The cards waiting now owe every day since the first of them came due, so they alone bound the run; only
        a day without an answer inside what is left of it needs the late answers, and only those of its days (a
        late answer owes the days before it). A learner back from a break with cards due reads no log at all."""
        from bertdrill.core.stats import streaks

        days = self._study_days(today, lessons)
        if not days:
            return 0
        unanswered = _gaps(days) or (today - days[-1]).days > 1  # a day to judge, between study days or since
        waiting = self._waiting(today, lessons) if unanswered else []
        current = streaks(days, waiting, today)[0]
        run = days[len(days) - current:]
        if not current or not _gaps(run):
            return current
        return streaks(run, self._late(today, lessons, since=run[0]) + waiting, today)[0]

    def _study_days(self, until: date, lessons: Collection[str] | None) -> list[date]:
        """The study days up to ``until`` with an answer, in order: from the tally where the store keeps one (a row
        per day and lesson, where the log's day index holds a million answers: 8 of ``stats``' ms)."""
        if not self.tallied:
            return self._study_days_from_log(until, lessons)
        query = (self._tally(select(TALLY.c.study_day).distinct(), lessons).where(TALLY.c.study_day <= until)
                 .order_by(TALLY.c.study_day))
        return [day_of(row[0]) for row in self.read(query)]

    def _study_days_from_log(self, until: date, lessons: Collection[str] | None) -> list[date]:
        query = (self._log(select(REVIEW.c.study_day).distinct(), lessons).where(REVIEW.c.study_day <= until)
                 .order_by(REVIEW.c.study_day))
        return [day_of(row[0]) for row in self.read(query)]

    def _late(self, today: date, lessons: Collection[str] | None, *, since: date = date.min) -> list[tuple[date, date]]:
        """Spans of days when some card was due and not answered, owed by the late answers (of study days from
        ``since``): each from the day its card was due (the schedule it had before, as the log keeps it for
        undo) to the day before it.

        One span per study day: the late answers of a day owed, together, from the earliest of their due days
        to the day before. One pass over the log, with no window over each card's answers: a learner back from
        a break had ``status`` sort a million answers by card (5 s) and read back one span per late answer."""
        late = (self._log(select(REVIEW.c.study_day, func.min(REVIEW.c.due_before)), lessons)
                .where(REVIEW.c.kind.not_in(["practice", AnswerKind.CRAM.value]),
                       REVIEW.c.study_day.between(since, today), REVIEW.c.due_before < REVIEW.c.study_day)
                .group_by(REVIEW.c.study_day))
        return [(day_of(due), day_of(day) - timedelta(days=1)) for day, due in self.read(late)]

    def _waiting(self, today: date, lessons: Collection[str] | None) -> list[tuple[date, date]]:
        """The days owed by the cards due now and still waiting: from the first of them that came due to today."""
        waiting = self._first(_cards(select(func.min(SCHEDULE.c.due)), lessons).where(  # buried or not: it was due
            SCHEDULE.c.suspended.is_(False), CARD.c.removed.is_(False), reviewed_card()))
        return [(day_of(waiting), today)] if waiting is not None and day_of(waiting) <= today else []

    def forecast(self, today: date, days: int, *, lessons: Collection[str] | None = None) -> list[tuple[date, int]]:
        """Cards due on today and each of the next ``days - 1`` days, as review will show them.

        Today's count includes everything overdue; a buried card counts on the day it comes back.
        """
        days = max(days, 1)
        last = today + timedelta(days=days - 1)
        if (every := self._forecast_of_every_lesson(today, last, lessons)) is not None:
            return _each_day(every, today, days)
        # The largest of several values: SQLite's max(a, b, c), PostgreSQL's greatest (Database.greatest).
        shown = getattr(func, self.greatest)(SCHEDULE.c.due, func.coalesce(SCHEDULE.c.buried_until, SCHEDULE.c.due),
                                             literal(today, Date), type_=Date).label("d")
        # a card shown by the last day was due by then: the cheap test first (on SQLite, off the due day's index:
        # a pass), so the largest of three days is taken of the 12,000 cards it keeps, not of 100,000 (24 -> 12 ms)
        days_shown = self._schedules_except(select(shown), lessons, HIDDEN_CARD, unindexed(SCHEDULE.c.due) <= last,
                                            SCHEDULE.c.suspended.is_(False)).subquery("shown")
        query = select(days_shown.c.d, func.count()).where(days_shown.c.d <= last).group_by(days_shown.c.d)
        counts = {day_of(day): count for day, count in self.read(query)}
        return _each_day(counts, today, days)

    def _forecast_of_every_lesson(self, today: date, last: date, lessons: Collection[str] | None) -> dict[date, int] | None:
        """:meth:`forecast`'s counts over every lesson (the usual case: None otherwise, or with many hidden cards):
        each due day's schedules counted from the due-day index alone (it covers them: 3 ms for 100,000), less the
        few it counts on a day review does not show them (suspended, buried, of a hidden card), found by one plain
        pass (10 ms), where taking the largest of three days of each schedule due by the last day took 28 ms (the
        preview of a review's first card reads it for the load balancer)."""
        if self._scope(lessons) is not None:
            return None
        # one unit, so one snapshot: a card answered, suspended or buried between the statements would be taken
        # off a day the counts never had (a KeyError when two reviews of one lesson ran at once)
        return self._run(lambda connection: _forecast_counts(connection, self.learner, today, last))

    def retention(self, since: date | None = None, *, lessons: Collection[str] | None = None) -> Retention:
        """How often due reviews were passed (grade 3 or more), young (interval < 21 days) and mature.

        Only ``review`` answers count: a new card's first answer, same-day re-drills and practice
        checks say nothing about recall after an interval.
        """
        if self.tallied:  # a row per day and lesson: a million answers are not read
            query = (self._tally(select(TALLY.c.mature, func.sum(TALLY.c.passed), func.sum(TALLY.c.answers)), lessons)
                     .where(TALLY.c.kind == AnswerKind.REVIEW.value, TALLY.c.study_day >= (since or date.min))
                     .group_by(TALLY.c.mature))
            return _retention(self.read(query))
        return self._retention_from_log(since, lessons)

    def _retention_from_log(self, since: date | None, lessons: Collection[str] | None) -> Retention:
        mature = (REVIEW.c.interval_before >= MATURE_DAYS).label("mature")
        query = (self._log(select(mature, func.sum(case((REVIEW.c.grade >= PASSING, 1), else_=0)), func.count()), lessons)
                 .where(REVIEW.c.kind == AnswerKind.REVIEW.value, REVIEW.c.study_day >= (since or date.min))
                 .group_by(mature))
        return _retention(self.read(query))

    def card_states(self, today: date, *, lessons: Collection[str] | None = None) -> dict[CardStage, int]:
        """How many of the cards a review shows are in each state: new, learning, young, mature, suspended,
        removed (a practice card is checked, never reviewed: ``status`` does not count it either).

        learning: reviewed, but not recalled twice in a row since its first answer or its latest
        lapse; young: interval under 21 days; mature: 21 days or more. A removed card counts as
        removed only, a suspended one as suspended only; a buried card counts by its schedule.
        """
        found = self.read(self._schedules_except(select(*_stage_counts(None)), lessons, HIDDEN_CARD))[0]
        return self._stages(found, lessons)

    def _stages(self, found: Sequence[Any], lessons: Collection[str] | None,
                hidden: _HiddenCards | None = None) -> dict[CardStage, int]:
        """The card states from a row of :func:`_stage_counts`, with the removed cards counted from their own index
        (``hidden``: as :meth:`_removed_count`)."""
        *first_passed, every = (int(count or 0) for count in found)
        counts = {stage.value: count for (_test, stage), count in zip(_STAGE_TESTS, first_passed, strict=True)}
        counts[CardStage.MATURE.value] = every - sum(first_passed)
        counts[CardStage.REMOVED.value] = self._removed_count(lessons, hidden)
        return {stage: counts.get(stage.value, 0) for stage in CardStage}

    def card_figures(self, today: date, *, lessons: Collection[str] | None = None) -> CardFigures:
        """:meth:`card_states`, :meth:`average_ef` and :meth:`leeches` in one pass over the schedules of the cards
        still in their lessons (a practice card's left out of the states by a filter), where three passes read
        each of 100,000 rows three times; the pass counts the cards that lapsed often enough too, so the leeches
        are listed only when there are some (usually none: a fourth pass saved). 40 -> 25 ms. A count with a
        filter, not the most lapses of any card: SQLite steps no aggregate for a row the filter leaves out
        (43.4 -> 40.5 ms for the pass on 100,000 schedules)."""
        def columns(shown: ColumnElement[bool] | None) -> Select[*tuple[Any, ...]]:
            return select(*_stage_counts(shown), func.avg(SCHEDULE.c.ef100).filter(SCHEDULE.c.due.is_not(None)),
                          func.count().filter(SCHEDULE.c.lapses >= LEECH_LAPSES))

        statement, hidden = self._kept_schedules(columns, lessons)
        *stages, ef, lapsed = self.read(statement)[0]
        return CardFigures(self._stages(stages, lessons, hidden), _average_ef(ef), self.leeches(lessons=lessons)
                           if lapsed else [])

    def _kept_schedules(self, columns: Callable[[ColumnElement[bool] | None], Select[*tuple[Any, ...]]],
                        lessons: Collection[str] | None) -> tuple[Select[*tuple[Any, ...]], _HiddenCards | None]:
        """``columns(shown)`` over the learner's schedules of cards still in their lessons (some lessons or all), as
        :meth:`_schedules_except` leaves the removed ones out; ``shown`` is the condition that a schedule's card is
        one a review shows (None: every one is), for the columns that leave the practice cards out too. With it the
        hidden cards it read (:func:`_hidden_cards`; None: it joined the cards instead)."""
        scope = self._scope(lessons)
        if scope is None and (hidden := _hidden_cards(self.read)) is not None:
            removed = [card_id for card_id, gone, _kind in hidden if gone]
            practice = [card_id for card_id, gone, _kind in hidden if not gone]
            mine = columns(SCHEDULE.c.card_id.not_in(practice) if practice else None).select_from(SCHEDULE).where(
                SCHEDULE.c.learner == LEARNER)
            return (mine.where(SCHEDULE.c.card_id.not_in(removed)) if removed else mine), hidden
        return _cards(columns(reviewed_card()), scope).where(not_(REMOVED_CARD)), None

    def answer_count(self, *, lessons: Collection[str] | None = None) -> int:
        """How many answers the log holds."""
        if self.tallied:
            return int(self._first(self._tally(select(func.coalesce(func.sum(TALLY.c.answers), 0)), lessons)))
        return self._answer_count_from_log(lessons)

    def _answer_count_from_log(self, lessons: Collection[str] | None) -> int:
        return int(self._first(self._log(select(func.count()).select_from(REVIEW), lessons)))

    def answer_times(self, *, lessons: Collection[str] | None = None) -> AnswerTimes:
        """The log's answers and their milliseconds by kind and grade (practice left out), and its study days."""
        from bertdrill.ports import AnswerTimes

        answered = REVIEW.c.kind.not_in(["practice", AnswerKind.CRAM.value])  # the answers of reviews
        rows = self.read(self._log(select(REVIEW.c.kind, REVIEW.c.grade, func.count(), func.sum(REVIEW.c.duration_ms)),
                              lessons).where(answered).group_by(REVIEW.c.kind, REVIEW.c.grade))
        days = self._first(self._log(select(func.count(REVIEW.c.study_day.distinct())).select_from(REVIEW), lessons)
                           .where(answered))
        durations = {(kind, int(grade)): (int(count), int(ms or 0)) for kind, grade, count, ms in rows}
        return AnswerTimes(durations, int(days or 0), sum(count for (kind, _grade), (count, _ms) in durations.items()
                                                          if kind == "new"))

    def average_ef(self, *, lessons: Collection[str] | None = None) -> float | None:
        """Mean easiness factor of reviewed cards still in their lessons."""
        return _average_ef(self._first(self._schedules_except(select(func.avg(SCHEDULE.c.ef100)), lessons,
                                                              REMOVED_CARD, SCHEDULE.c.due.is_not(None))))

    def leeches(self, min_lapses: int = LEECH_LAPSES, *, lessons: Collection[str] | None = None) -> list[CardState]:
        """Cards that lapsed at least ``min_lapses`` times, most lapses first."""
        return self._states(lessons, SCHEDULE.c.lapses >= min_lapses, order=(SCHEDULE.c.lapses.desc(),))

    def hardest(self, limit: int = 10, *, lessons: Collection[str] | None = None) -> list[CardState]:
        """Reviewed cards with the lowest easiness factor, lowest first (more lapses first among equals).

        The cards at SM-2's floor (EF 1.30) are looked for first, by a pass that asks that of each schedule before
        anything else: a learner with a long history has many (605 of the 1M store's 100,000), and sorting those
        alone is quick (7.4 ms, where sorting every reviewed card took 21.4). The cards above the floor are sorted
        only when the floor holds fewer than ``limit`` (both passes then: 28 ms), in the same unit: one state of
        the schedules, so a card answered meanwhile is never listed from both sides of the floor."""
        kept = self._except(lessons, REMOVED_CARD)  # the hidden cards read once, for both statements
        floor, above = _lowest(kept, SCHEDULE.c.ef100 <= EF_FLOOR, limit), _lowest(kept, SCHEDULE.c.ef100 > EF_FLOOR, limit)

        def read(connection: Connection) -> list[CardState]:
            found = [state_of(row) for row in connection.execute(floor, {"learner": self.learner})]
            if len(found) < limit:
                found += [state_of(row) for row in connection.execute(above, {"learner": self.learner})]
            return found[:limit]
        return self._run(read)

    def forecast_and_hardest(self, today: date, days: int, limit: int, *,
                             lessons: Collection[str] | None = None) -> tuple[list[tuple[date, int]], list[CardState]]:
        """:meth:`forecast` and :meth:`hardest` together, in one unit: over every lesson (the usual case) the
        forecast's pass over the schedules a review does not show on their due day also finds the cards at SM-2's
        floor, where each was a pass of its own (5.6 and 4.1 ms of 100,000 schedules, raw; 6.3 together)."""
        days = max(days, 1)
        last = today + timedelta(days=days - 1)
        if self._scope(lessons) is None and (found := self._run(
                lambda connection: self._forecast_and_hardest(connection, today, last, limit))) is not None:
            counts, hardest = found
            return _each_day(counts, today, days), hardest
        return self.forecast(today, days, lessons=lessons), self.hardest(limit, lessons=lessons)

    def _forecast_and_hardest(self, connection: Connection, today: date, last: date,
                              limit: int) -> tuple[dict[date, int], list[CardState]] | None:
        """:meth:`forecast_and_hardest`'s counts and cards over every lesson, read in ``connection``'s transaction
        (None: too many hidden cards to list)."""
        def read(statement: Executable) -> list[Any]:
            return list(connection.execute(statement, {"learner": self.learner}).all())

        hidden = _hidden_cards(read)
        if hidden is None:
            return None
        removed = {card_id for card_id, gone, _kind in hidden if gone}
        floor = SCHEDULE.c.ef100 <= EF_FLOOR
        counts = _due_days(read, last)
        # the forecast's rare test first, then the floor (605 of the 1M store's 100,000); what each row is for is
        # asked again of the few rows found
        ids = [card_id for card_id, _gone, _kind in hidden]
        apart = and_(_apart(ids), unindexed(SCHEDULE.c.due) <= last)
        low = and_(floor, SCHEDULE.c.due.is_not(None))
        rows = read(_KEPT_STATE.add_columns(apart.label("apart"), low.label("low"), _is_hidden(ids).label("hidden"))
                    .where(or_(apart, low), SCHEDULE.c.learner == LEARNER))
        forecast = _forecast_from(counts, today, last, [(row.due, row.buried_until, row.suspended, row.hidden)
                                                        for row in rows if row.apart])
        # hardest's order: lowest EF, most lapses, then by id (SQLite's binary order of UTF-8 is the code points')
        found = sorted((row for row in rows if row.low and row.card_id not in removed),
                       key=lambda row: (row.ef100, -row.lapses, row.card_id))[:limit]
        hardest = [state_of(row[:_STATE_COLUMNS]) for row in found]
        if len(hardest) < limit:
            above = _lowest(_listed_except(sorted(removed)), SCHEDULE.c.ef100 > EF_FLOOR, limit)
            hardest += [state_of(row) for row in read(above)]
        return forecast, hardest[:limit]

    def _states(self, lessons: Collection[str] | None, condition: Any, *, order: tuple[Any, ...]) -> list[CardState]:
        """Cards still in their lessons that meet ``condition``, in ``order`` (then by id)."""
        return [state_of(row) for row in self.read(self._states_query(lessons, condition, order=order))]

    def _states_query(self, lessons: Collection[str] | None, condition: Any, *,
                      order: tuple[Any, ...]) -> Select[*tuple[Any, ...]]:
        """:meth:`_states`' statement."""
        return self._schedules_except(_KEPT_STATE, lessons, REMOVED_CARD, condition).order_by(*order, SCHEDULE.c.card_id)


_STAGE_TESTS = ((SCHEDULE.c.suspended.is_(True), CardStage.SUSPENDED), (SCHEDULE.c.due.is_(None), CardStage.NEW),
                (SCHEDULE.c.repetitions < 2, CardStage.LEARNING), (SCHEDULE.c.interval < MATURE_DAYS, CardStage.YOUNG))
"""state.stage_of's tests of a schedule, in its order (the first, removed, is asked of the removed cards alone)."""


def _stage_counts(shown: ColumnElement[bool] | None) -> list[Any]:
    """Columns counting the schedules ``shown`` picks (None: all) that each test of :data:`_STAGE_TESTS` is the first
    to pass, then all of them (the rest, mature, is the difference): every stage in one pass, no grouping. A count
    with a filter, not a sum of CASEs: SQLite evaluates fewer steps a row (30 -> 18 ms for 100,000 schedules). Each
    filter asks the stage's own test first, then that no earlier test passed (the latest first), then ``shown``: a
    card is in one stage, so most rows fail the first test and SQLite asks no more of them (the card figures' pass
    39.6 -> 29.0 ms on the 1M store's 100,000 schedules, raw), where the earlier tests first passed for most."""
    picked = [] if shown is None else [shown]
    return [func.count().filter(and_(test, *(not_(earlier) for earlier, _stage in reversed(_STAGE_TESTS[:position])),
                                     *picked))
            for position, (test, _stage) in enumerate(_STAGE_TESTS)] + [
        func.count().filter(shown) if shown is not None else func.count()]


def _average_ef(value: Any) -> float | None:
    """An average of ``ef100`` as an EF (PostgreSQL averages to a Decimal)."""
    return float(value) / 100 if value is not None else None


def _retention(rows: Sequence[Sequence[Any]]) -> Retention:
    """Retention from rows of (mature, passed, total)."""
    found = {bool(is_mature): (int(passed), int(total)) for is_mature, passed, total in rows}
    young, old = found.get(False, (0, 0)), found.get(True, (0, 0))
    return Retention(young[0], young[1], old[0], old[1])


def _forecast_counts(connection: Connection, learner: str, today: date, last: date) -> dict[date, int] | None:
    """:meth:`ReviewReports._forecast_of_every_lesson`'s counts, read in ``connection``'s transaction."""

    def read(statement: Executable) -> list[Any]:
        return list(connection.execute(statement, {"learner": learner}).all())

    found = _hidden_cards(read)
    if found is None:
        return None
    hidden = [card_id for card_id, _removed, _kind in found]
    counts = _due_days(read, last)
    # the rare test first: SQLite asks the terms in their order, and most schedules are neither suspended, buried
    # nor hidden (14.9 -> 10.4 ms for 100,000, raw), where most are this learner's and due by the last day
    apart = select(SCHEDULE.c.due, SCHEDULE.c.buried_until, SCHEDULE.c.suspended, _is_hidden(hidden)).where(
        _apart(hidden), SCHEDULE.c.learner == LEARNER, unindexed(SCHEDULE.c.due) <= last)
    return _forecast_from(counts, today, last, read(apart))


def _is_hidden(ids: list[str]) -> ColumnElement[bool]:
    """Whether a schedule's card is one of the hidden cards ``ids`` names."""
    return SCHEDULE.c.card_id.in_(ids) if ids else false()


def _apart(hidden: list[str]) -> ColumnElement[bool]:
    """A schedule review does not show on its due day: buried, suspended, or of a card ``hidden`` names."""
    return or_(SCHEDULE.c.buried_until.is_not(None), SCHEDULE.c.suspended.is_not(False), _is_hidden(hidden))


def _each_day(counts: dict[date, int], today: date, days: int) -> list[tuple[date, int]]:
    """Each of ``days`` days from ``today`` with its count (0 where ``counts`` has none)."""
    return [(day, counts.get(day, 0)) for day in (today + timedelta(days=i) for i in range(days))]


def _due_days(read: Callable[[Executable], list[Any]], last: date) -> dict[date, int]:
    """The learner's schedules due on each day up to ``last``, from the due day's index alone (it covers them)."""
    return {day_of(due): count for due, count in read(select(SCHEDULE.c.due, func.count()).where(
        SCHEDULE.c.learner == LEARNER, SCHEDULE.c.due <= last).group_by(SCHEDULE.c.due))}


def _forecast_from(due_days: dict[date, int], today: date, last: date, apart: Sequence[Sequence[Any]]) -> dict[date, int]:
    """The forecast's counts from ``due_days`` (:func:`_due_days`): anything overdue on ``today``, and each of the
    ``apart`` schedules (due, buried until, suspended, hidden) taken off its due day, buried ones put on the day
    they come back."""
    counts: dict[date, int] = {}
    for due, count in due_days.items():
        shown = max(due, today)
        counts[shown] = counts.get(shown, 0) + count
    for due, buried_until, suspended, hidden_card in apart:
        counted = max(day_of(due), today)
        counts[counted] -= 1
        shown = max(counted, day_of(buried_until) if buried_until is not None else counted)
        if not suspended and not hidden_card and shown <= last:
            counts[shown] = counts.get(shown, 0) + 1
    return counts


def _lowest(kept: Callable[..., Select[*tuple[Any, ...]]], test: ColumnElement[bool],
            limit: int) -> Select[*tuple[Any, ...]]:
    """:meth:`Reports.hardest`'s statement: the reviewed schedules ``kept`` keeps that pass ``test`` (asked first),
    the lowest EF first (more lapses first among equals), at most ``limit``."""
    return (kept(_KEPT_STATE.where(test), SCHEDULE.c.due.is_not(None))
            .order_by(SCHEDULE.c.ef100, SCHEDULE.c.lapses.desc(), SCHEDULE.c.card_id).limit(limit))


def _listed_except(ids: list[str]) -> Callable[..., Select[*tuple[Any, ...]]]:
    """:meth:`Reports._except` of every lesson: ``columns`` over the learner's schedules meeting ``conditions``, but
    those of the cards ``ids`` names."""
    def listed(columns: Select[*tuple[Any, ...]], *conditions: Any) -> Select[*tuple[Any, ...]]:
        mine = columns.select_from(SCHEDULE).where(SCHEDULE.c.learner == LEARNER, *conditions)
        return mine.where(SCHEDULE.c.card_id.not_in(ids)) if ids else mine
    return listed


def _hidden_cards(read: Callable[[Executable], list[Any]]) -> _HiddenCards | None:
    """The cards no review shows (:data:`HIDDEN_CARD`), from their own index: (id, removed, kind) of each, or None
    when there are more than :data:`LISTED`. One statement for every report that leaves them out, whichever of
    them it leaves out: each statement SQLAlchemy meets first in a process costs about 1 ms to build and compile,
    where running it again costs 0.06."""
    found = [(card_id, bool(removed), kind) for card_id, removed, kind in
             read(select(CARD.c.id, CARD.c.removed, CARD.c.kind).where(HIDDEN_CARD).limit(LISTED + 1))]
    return found if len(found) <= LISTED else None


def _gaps(days: Sequence[date]) -> bool:
    """Whether some day between the first and the last of these days (in order) is not among them."""
    return any((later - earlier).days > 1 for earlier, later in zip(days, days[1:], strict=False))
