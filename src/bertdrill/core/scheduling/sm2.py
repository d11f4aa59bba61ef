"""SM-2 scheduling, as the team pinned it.

This module is pure: standard library only, no clock reads, no I/O. The caller
supplies "today" (a study day, see :func:`study_day`) and gets back a new
:class:`Schedule`; nothing is ever mutated.

The easiness factor is kept in integer hundredths (``ef100``) so that every
step is exact integer arithmetic: the same grades always give the same
intervals on every machine, and the golden vectors in the tests can pin them.

Same-session repeats (SM-2 step 7): a card graded below 4 comes back later in
the same session until it is graded 4 or 5. Those repeats are logged by the
session but do not change the schedule. :func:`redrill_needed` tells the
session whether to queue a repeat; :func:`review` must be called only for the
first answer to a card on a study day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from bertdrill.core.errors import DateRangeError
from bertdrill.core.i18n import _
from bertdrill.core.limits import DEFAULT_ROLLOVER  # noqa: F401 (re-exported: the study day is told here)

EF_START = 250
MATURE_DAYS = 21
"""An interval (days) from which a card counts as mature: Anki's line."""
"""Starting easiness factor, in hundredths (2.50)."""

EF_FLOOR = 130
"""Lowest easiness factor, in hundredths (1.30). There is no upper cap."""

DELTA = {5: 10, 4: 0, 3: -14, 2: -32, 1: -54, 0: -80}
"""Change in EF (hundredths) for each grade: 0.1 - (5-q) * (0.08 + (5-q) * 0.02)."""

FIRST_INTERVAL = 1
"""Days until the review after the first successful recall."""

SECOND_INTERVAL = 6
"""Days until the review after the second successful recall in a row."""

PASSING = 3
"""Lowest grade that counts as a successful recall."""

REDRILL_BELOW = 4
"""Grades below this bring the card back later in the same session."""


LEECH_LAPSES = 8
"""A card that lapsed this often is a leech: it keeps costing time and is worth rewriting."""


@dataclass(frozen=True)
class Schedule:
    """The SM-2 state of one card, after its latest review.

    Frozen so a schedule can be shared, compared and stored without anyone
    changing it behind the caller's back; :func:`review` returns a new one.
    """

    repetitions: int = 0  # n: successful recalls in a row
    ef100: int = EF_START  # EF in integer hundredths
    interval: int = 0  # days; 0 for a new card
    due: date | None = None  # None for a new card
    lapses: int = 0  # failed first answers of a day once the card was learned (see is_lapse)
    # FSRS's memory state (bertdrill.core.scheduling.fsrs); None until FSRS has scheduled the card.
    stability: float | None = None  # days until recall falls to 90 %
    difficulty: float | None = None  # 1 (easy) to 10 (hard)

    @property
    def ef(self) -> float:
        """EF as a float, for display only; computations use ``ef100``."""
        return self.ef100 / 100

    @property
    def is_new(self) -> bool:
        """True until the card has been reviewed once (it has no due date yet)."""
        return self.due is None


NEW = Schedule()
"""The schedule of a card that has never been reviewed."""


def is_lapse(repetitions: int, lapses: int, passed: bool) -> bool:
    """Whether a failed review is a lapse: the card was ever learned, as Anki counts every failed
    review of a learned card. A card failed every day still lapses every day: its repetitions are 0
    after the first failure, but its lapses say it was learned."""
    return not passed and (repetitions >= 1 or lapses >= 1)


def became_leech(before: Schedule, after: Schedule) -> bool:
    """Whether this review made the card a leech (its lapses reached :data:`LEECH_LAPSES`)."""
    return before.lapses < LEECH_LAPSES <= after.lapses


def check_grade(quality: int) -> int:
    """Reject anything but an int 0..5, so a bad grade never skews a schedule (the one grade check).

    bool is a subclass of int, but True/False are not grades; a float such as
    3.0 or a string such as "3" points at a caller bug, so those fail too.
    """
    if isinstance(quality, bool) or not isinstance(quality, int):
        raise ValueError(f"grade must be an int from 0 to 5, got {quality!r}")
    if quality not in DELTA:
        raise ValueError(f"grade must be from 0 to 5, got {quality}")
    return quality


def _next_ef100(ef100: int, quality: int) -> int:
    """EF after a review: add delta(q), never below the floor."""
    return max(EF_FLOOR, ef100 + DELTA[quality])


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

    ``today`` is the study day of the review (see :func:`study_day`), not a
    clock time. Call this only for the first answer to a card on a study day;
    same-session repeats (see :func:`redrill_needed`) must not reach it, since
    SM-2 leaves n, EF and I alone for them.

    A grade of 3 or more extends the run of successful recalls; a lower grade
    resets it to 0 with a 1-day interval, and counts as a lapse if the card
    was ever learned (:func:`is_lapse`). EF changes on every review.

    There is no cap on EF or the interval, as pinned. Raises DateRangeError (an OverflowError) if
    the due date would fall after ``date.max`` (year 9999); in real time that
    cannot happen, but a simulation that keeps answering 4 or 5 reaches it
    after a dozen or so reviews.
    """
    quality = check_grade(quality)
    if isinstance(today, datetime) or not isinstance(today, date):
        raise TypeError(f"today must be a date (a study day), got {today!r}")
    ef100 = _next_ef100(schedule.ef100, quality)
    if quality >= PASSING:
        repetitions = schedule.repetitions + 1
        interval = _next_interval(repetitions, schedule.interval, schedule.ef100)
        lapses = schedule.lapses
    else:
        repetitions = 0
        interval = FIRST_INTERVAL
        lapses = schedule.lapses + is_lapse(schedule.repetitions, schedule.lapses, passed=False)
    try:
        due = today + timedelta(days=interval)
    except OverflowError:
        raise DateRangeError(_("due date {today} + {interval} days is past {last}").format(
            today=today, interval=interval, last=date.max)) from None
    return Schedule(
        repetitions=repetitions,
        ef100=ef100,
        interval=interval,
        due=due,
        lapses=lapses,
    )


def study_day(moment: datetime, rollover_hour: int = DEFAULT_ROLLOVER) -> date:
    """The study day a local time belongs to.

    A day of study runs from ``rollover_hour`` to ``rollover_hour`` the next
    morning, so a late session at 00:30 still counts for the evening before.
    ``moment`` must be local time (naive or aware); this function does not
    convert time zones.
    """
    if isinstance(rollover_hour, bool) or not isinstance(rollover_hour, int):
        raise ValueError(f"rollover_hour must be an int from 0 to 23, got {rollover_hour!r}")
    if not 0 <= rollover_hour <= 23:
        raise ValueError(f"rollover_hour must be from 0 to 23, got {rollover_hour}")
    return (moment - timedelta(hours=rollover_hour)).date()


def redrill_needed(quality: int) -> bool:
    """Whether the card comes back later in the same session (grade below 4).

    The repeat is logged but does not call :func:`review` again.
    """
    return check_grade(quality) < REDRILL_BELOW


def next_states(schedule: Schedule, *, today: date) -> dict[int, Schedule]:
    """The schedule each grade 0-5 would give on ``today``: what :func:`review` returns, for every grade.

    For a review screen that previews the intervals before the learner grades.
    """
    return {quality: review(schedule, quality, today=today) for quality in sorted(DELTA)}


@dataclass(frozen=True)
class SM2:
    """SM-2 as a :class:`bertdrill.ports.Scheduler`: the functions of this module, behind one object."""

    name: str = "sm2"
    initial: Schedule = NEW

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule:
        return review(state, grade, today=today)

    def next_states(self, state: Schedule, *, today: date) -> dict[int, Schedule]:
        return next_states(state, today=today)
