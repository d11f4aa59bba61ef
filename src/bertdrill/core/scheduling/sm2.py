"""SM-2 scheduling, as the team pinned it: when a card comes back.

This module is pure: standard library only, no clock reads, no I/O. The caller
supplies "today" (a study day, see :func:`bertdrill.core.scheduling.state.study_day`)
and gets back a new :class:`~bertdrill.core.scheduling.state.Schedule`; nothing is ever mutated.

The easiness factor is kept in integer hundredths (``ef100``) so that every
step is exact integer arithmetic: the same grades always give the same
intervals on every machine, and the golden vectors in the tests can pin them.
EF, the run of recalls and the lapses are kept by every scheduler
(:func:`bertdrill.core.scheduling.state.bookkeeping`); SM-2's own rule is the interval.

Same-session repeats (SM-2 step 7): a card graded below 4 comes back later in
the same session until it is graded 4 or 5. Those repeats are logged by the
session but do not change the schedule
(:func:`bertdrill.core.scheduling.state.redrill_needed`); :func:`review` must be
called only for the first answer to a card on a study day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from bertdrill.core.errors import DateRangeError
from bertdrill.core.i18n import ngettext
from bertdrill.core.scheduling.replay import DayLog, scheduling_days
from bertdrill.core.scheduling.state import (
    EF_DELTA,
    EF_FLOOR,
    EF_START,
    GRADES,
    NEW,
    PASSING,
    Adjust,
    NextStates,
    Schedule,
    bookkeeping,
    check_day,
    check_grade,
)

FIRST_INTERVAL = 1
"""Days until the review after the first successful recall."""

SECOND_INTERVAL = 6
"""Days until the review after the second successful recall in a row."""

LAST_DAY = date.max.toordinal()


def _next_interval(repetitions: int, previous: int, ef100: int) -> int:
    """Interval after the n-th successful recall in a row.

    For n >= 3 it is ceil(previous * EF), with the EF from before this
    review's update, computed in integers so it is exact.
    """
    if repetitions == 1:
        return FIRST_INTERVAL
    if repetitions == 2:
        return SECOND_INTERVAL
    return (previous * ef100 + 99) // 100


def review(schedule: Schedule, quality: int, *, today: date) -> Schedule:
    """Return the schedule after grading a card ``quality`` (0..5) on ``today``.

    ``today`` is the study day of the review, not a clock time. Call this only for
    the first answer to a card on a study day; same-session repeats must not reach
    it, since SM-2 leaves n, EF and I alone for them.

    A grade of 3 or more extends the run of successful recalls; a lower grade
    resets it to 0 with a 1-day interval, and counts as a lapse if the card
    was ever learned (:func:`is_lapse`). EF changes on every review.

    There is no cap on EF or the interval, as pinned. Raises DateRangeError (an OverflowError) if
    the due date would fall after ``date.max`` (year 9999); in real time that
    cannot happen, but a simulation that keeps answering 4 or 5 reaches it
    after a dozen or so reviews.
    """
    grade = check_grade(quality)
    check_day(today)
    counts = bookkeeping(schedule, grade)
    if counts.repetitions:
        interval = _next_interval(counts.repetitions, schedule.interval, schedule.ef100)
    else:
        interval = FIRST_INTERVAL
    try:
        due = today + timedelta(days=interval)
    except OverflowError:
        raise past_the_calendar(today, interval) from None
    return Schedule(
        repetitions=counts.repetitions,
        ef100=counts.ef100,
        interval=interval,
        due=due,
        lapses=counts.lapses,
    )


def past_the_calendar(day: date, interval: int) -> DateRangeError:
    return DateRangeError(ngettext("due date {today} + {interval} day is past {last}",
                                   "due date {today} + {interval} days is past {last}", interval).format(
        today=day, interval=interval, last=date.max))


def next_states(schedule: Schedule, *, today: date) -> NextStates:
    """The schedule each grade 0-5 would give on ``today``: what :func:`review` returns, for every grade.

    For a review screen that previews the intervals before the learner grades.
    """
    return NextStates.of({grade: review(schedule, grade, today=today) for grade in GRADES})


@dataclass(frozen=True)
class SM2:
    """SM-2 as a :class:`bertdrill.ports.Scheduler`: the functions of this module, behind one object."""

    initial: Schedule = NEW

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule:
        return review(state, grade, today=today)

    def next_states(self, state: Schedule, *, today: date) -> NextStates:
        return next_states(state, today=today)

    def replay(self, log: DayLog, *, adjust: Adjust | None = None) -> Schedule:
        """The state after the logged answers (:data:`DayLog`: days as ordinals, re-drills included): what
        :meth:`review` gives for the first answer of each study day, answer after answer, in integers and without
        a Schedule per answer (a switch replays a million); ``adjust`` changes each answer's interval (the fuzz,
        :mod:`.spread`). tests/test_replay.py holds it to :meth:`review`."""
        return _replayed(log, adjust, distinct=False)


def _replayed(log: DayLog, adjust: Adjust | None, *, distinct: bool) -> Schedule:
    """:meth:`SM2.replay`; ``distinct``: every day of ``log`` is a different one (:func:`scheduling_days`)."""
    repetitions, ef100, interval, lapses, last = 0, EF_START, 0, 0, 0  # day 0: none yet (ordinals start at 1)
    passing, first, second, floor, deltas = int(PASSING), FIRST_INTERVAL, SECOND_INTERVAL, EF_FLOOR, EF_DELTA
    for day, grade in log:
        if day <= last and not distinct:  # the last answer's day (a re-drill), or an earlier one: a clock set back
            if day == last:
                continue
            return _replayed(scheduling_days(log), adjust, distinct=True)  # days out of order: the general rule
        delta = deltas[grade]  # KeyError for anything but a grade 0-5 (the store reads them checked)
        if grade >= passing:
            repetitions += 1
            given = (first if repetitions == 1 else second if repetitions == 2
                     else (interval * ef100 + 99) // 100)  # EF before this review's update, as review has it
        else:
            if repetitions or lapses:  # is_lapse (both count up from 0)
                lapses += 1
            repetitions, given = 0, first
        ef100 += delta
        if ef100 < floor:  # max(floor, ef100), without the call
            ef100 = floor
        interval = given if adjust is None or given <= 2 else adjust(given, interval, grade, day)  # Adjust keeps <= 2
        last = day
    if not last:
        return NEW
    if last + interval > LAST_DAY:
        raise past_the_calendar(date.fromordinal(last), interval)
    return Schedule(repetitions=repetitions, ef100=ef100, interval=interval, due=date.fromordinal(last + interval),
                    lapses=lapses)
