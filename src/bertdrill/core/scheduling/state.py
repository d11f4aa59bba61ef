"""What every scheduler, the ports and the store share: a card's state, the grades, and the rules no
scheduler owns (the study day, passing, re-drills, leeches, the bookkeeping of recalls and lapses).

A scheduler (:mod:`.sm2`, :mod:`.fsrs`, one of :mod:`.registry`) decides only *when* a card comes
back: its interval and due day, and any memory state of its own. Everything else here is the same
whichever scheduler runs, so a switch of scheduler keeps what ``stats`` says (leeches, lapses,
hardest cards by EF) meaning the same.

Pure: standard library only, no clock, no I/O; ``today`` is always a study day passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import IntEnum, StrEnum
from typing import NamedTuple, Protocol, TypeAlias, assert_never

from bertdrill.core.limits import DEFAULT_ROLLOVER


class Grade(IntEnum):
    """The grades a learner gives, SM-2's 0-5 (an int: stored and compared as one)."""

    BLACKOUT = 0  # nothing came back
    WRONG = 1  # wrong; the answer looked familiar once seen
    ALMOST = 2  # wrong; the answer seemed easy once seen
    HARD = 3  # right, with serious difficulty
    GOOD = 4  # right, after a hesitation
    PERFECT = 5  # right at once


GRADES = tuple(Grade)
"""Every grade, lowest first."""

PASSING = Grade.HARD
"""Lowest grade that counts as a successful recall."""

REDRILL_BELOW = Grade.GOOD
"""Grades below this bring the card back later in the same session."""

MATURE_DAYS = 21
"""An interval (days) from which a card counts as mature: Anki's line."""

LEECH_LAPSES = 8
"""A card that lapsed this often is a leech: it keeps costing time and is worth rewriting."""


EF_START = 250
"""Starting easiness factor, in hundredths (2.50)."""

EF_FLOOR = 130
"""Lowest easiness factor, in hundredths (1.30). There is no upper cap."""

EF_DELTA: dict[int, int] = {int(grade): delta for grade, delta in (
    (Grade.PERFECT, 10), (Grade.GOOD, 0), (Grade.HARD, -14), (Grade.ALMOST, -32), (Grade.WRONG, -54), (Grade.BLACKOUT, -80))}
"""Change in EF (hundredths) for each grade: 0.1 - (5-q) * (0.08 + (5-q) * 0.02). Keyed by plain ints, which a
replay's lookups of a million logged grades find by identity (a Grade key is compared by value)."""


class AnswerKind(StrEnum):
    """What an answer in the review log was, as stored (``review.kind``)."""

    REVIEW = "review"  # the first answer of a study day to a card reviewed before: it schedules
    NEW = "new"  # the first answer ever to a card: it schedules
    REDRILL = "redrill"  # a later answer the same study day: logged, never rescheduling
    PRACTICE = "practice"  # a practice exercise checked by ``bertdrill practice``
    CRAM = "cram"  # an answer in ``bertdrill review --cram``: logged, never rescheduling, in no daily limit

    @property
    def schedules(self) -> bool:
        """Whether an answer of this kind may reschedule its card (a cram answer never does, nor counts as the
        day's answer to it: the day's review still schedules)."""
        match self:
            case AnswerKind.REVIEW | AnswerKind.NEW | AnswerKind.REDRILL | AnswerKind.PRACTICE:
                return True
            case AnswerKind.CRAM:
                return False
            case unreachable:
                assert_never(unreachable)

    @property
    def first_of_day(self) -> bool:
        """Whether the answer took a card from the daily limits (a due review or a new card)."""
        match self:
            case AnswerKind.REVIEW | AnswerKind.NEW:
                return True
            case AnswerKind.REDRILL | AnswerKind.PRACTICE | AnswerKind.CRAM:
                return False
            case unreachable:
                assert_never(unreachable)

    def logged_as(self, *, first_of_day: bool) -> AnswerKind:
        """What an answer the caller calls ``self`` is logged as, by whether it is the card's first that study day.

        The first answer of a day always schedules, whatever the caller's queue called it (a re-drill answered
        after the rollover is that day's review); a later one never does (SM-2 step 7), and practice stays
        practice either way.
        """
        match self:
            case AnswerKind.REVIEW | AnswerKind.NEW:
                return self if first_of_day else AnswerKind.REDRILL
            case AnswerKind.REDRILL:
                return AnswerKind.REVIEW if first_of_day else AnswerKind.REDRILL
            case AnswerKind.PRACTICE:
                return AnswerKind.PRACTICE
            case AnswerKind.CRAM:
                return AnswerKind.CRAM
            case unreachable:
                assert_never(unreachable)


class CardStage(StrEnum):
    """Where a card is in its life, as ``stats`` counts it (the order is the order it is shown in)."""

    NEW = "new"  # never answered
    LEARNING = "learning"  # answered, but not recalled twice in a row since its first answer or latest lapse
    YOUNG = "young"  # an interval under MATURE_DAYS
    MATURE = "mature"  # MATURE_DAYS or more
    SUSPENDED = "suspended"  # kept out of reviews by the learner (or as a leech): counted here only
    REMOVED = "removed"  # its lesson no longer has it: counted here only

    @property
    def active(self) -> bool:
        """Whether reviews still reach the card (a workload forecast counts it)."""
        match self:
            case CardStage.NEW | CardStage.LEARNING | CardStage.YOUNG | CardStage.MATURE:
                return True
            case CardStage.SUSPENDED | CardStage.REMOVED:
                return False
            case unreachable:
                assert_never(unreachable)


@dataclass(frozen=True)
class Schedule:
    """The state of one card after its latest scheduling review, whichever scheduler gave it.

    Frozen so a state can be shared, compared and stored without anyone changing it behind the
    caller's back; a scheduler returns a new one.
    """

    repetitions: int = 0  # n: successful recalls in a row (every scheduler keeps it, see bookkeeping)
    ef100: int = EF_START  # SM-2's EF in integer hundredths (kept under FSRS too, see bookkeeping)
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
"""The state of a card that has never been reviewed."""


def stage_of(schedule: Schedule, *, suspended: bool, removed: bool) -> CardStage:
    """The stage a card counts in (the store's reports say the same in SQL, :func:`reports.card_states`)."""
    if removed:
        return CardStage.REMOVED
    if suspended:
        return CardStage.SUSPENDED
    if schedule.due is None:
        return CardStage.NEW
    if schedule.repetitions < 2:
        return CardStage.LEARNING
    return CardStage.YOUNG if schedule.interval < MATURE_DAYS else CardStage.MATURE


class Bookkeeping(NamedTuple):
    """The counts every scheduler keeps by SM-2's rules: they depend on the grades alone, not on the intervals.

    A tuple, not a dataclass: a replay makes one per answer of a million-answer log.
    """

    repetitions: int = 0  # successful recalls in a row
    ef100: int = EF_START  # SM-2's EF in hundredths
    lapses: int = 0  # failures after at least one successful recall


class Counted(Protocol):
    """Anything holding the counts: a :class:`Schedule` or a :class:`Bookkeeping`."""

    @property
    def repetitions(self) -> int: ...
    @property
    def ef100(self) -> int: ...
    @property
    def lapses(self) -> int: ...


def is_lapse(repetitions: int, lapses: int, passed: bool) -> bool:
    """Whether a failed review is a lapse: the card was ever learned, as Anki counts every failed
    review of a learned card. A card failed every day still lapses every day: its repetitions are 0
    after the first failure, but its lapses say it was learned."""
    return not passed and (repetitions >= 1 or lapses >= 1)


def bookkeeping(counts: Counted, grade: Grade) -> Bookkeeping:
    """The counts after ``grade``: a passing grade extends the run of recalls; a failing one resets it and is
    a lapse if the card was ever learned (:func:`is_lapse`). EF changes on every review, never below the floor."""
    passed = grade >= PASSING
    return Bookkeeping(
        counts.repetitions + 1 if passed else 0,
        max(EF_FLOOR, counts.ef100 + EF_DELTA[grade]),
        counts.lapses + is_lapse(counts.repetitions, counts.lapses, passed),
    )


@dataclass(frozen=True)
class NextStates:
    """What each grade would give, computed before the learner grades (Anki's ``NextCardStates``)."""

    blackout: Schedule
    wrong: Schedule
    almost: Schedule
    hard: Schedule
    good: Schedule
    perfect: Schedule

    def after(self, grade: Grade) -> Schedule:
        """The state ``grade`` gives."""
        match grade:
            case Grade.BLACKOUT:
                return self.blackout
            case Grade.WRONG:
                return self.wrong
            case Grade.ALMOST:
                return self.almost
            case Grade.HARD:
                return self.hard
            case Grade.GOOD:
                return self.good
            case Grade.PERFECT:
                return self.perfect
            case unreachable:
                assert_never(unreachable)

    def items(self) -> list[tuple[Grade, Schedule]]:
        """Each grade with its state, lowest grade first."""
        return [(grade, self.after(grade)) for grade in GRADES]

    @classmethod
    def of(cls, state_after: dict[Grade, Schedule]) -> NextStates:
        """The record of a state per grade (every grade must be there)."""
        return cls(*(state_after[grade] for grade in GRADES))


def check_grade(quality: int) -> Grade:
    """Reject anything but an int 0..5, so a bad grade never skews a schedule (the one grade check).

    bool is a subclass of int, but True/False are not grades; a float such as
    3.0 or a string such as "3" points at a caller bug, so those fail too.
    """
    if isinstance(quality, bool) or not isinstance(quality, int):
        raise ValueError(f"grade must be an int from 0 to 5, got {quality!r}")
    grade = _GRADE_OF.get(quality)
    if grade is None:
        raise ValueError(f"grade must be from 0 to 5, got {quality}")
    return grade


_GRADE_OF = {int(grade): grade for grade in Grade}  # a lookup, not Grade(n): a replay checks a million grades


def check_day(today: date) -> date:
    """``today`` if it is a study day (a date, not a datetime), else TypeError: a caller bug."""
    if isinstance(today, datetime) or not isinstance(today, date):
        raise TypeError(f"today must be a date (a study day), got {today!r}")
    return today


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

    The repeat is logged but does not reach the scheduler again.
    """
    return check_grade(quality) < REDRILL_BELOW


def became_leech(before: Schedule, after: Schedule) -> bool:
    """Whether this review made the card a leech (its lapses reached :data:`LEECH_LAPSES`)."""
    return before.lapses < LEECH_LAPSES <= after.lapses


Adjust: TypeAlias = "Callable[[int, int, int, int], int]"
"""What changes a replayed answer's interval (the fuzz of :mod:`.spread`): (interval the scheduler gave, interval
before the answer, grade, study day as ``date.toordinal()``) -> the interval to keep. Pure; a given interval of 2
days or less it keeps as it is, and it reads the interval before only for a passing grade (3 or more) and a given
interval over 2 days, as the fuzz does (under 2.5 days nothing is fuzzed): a replay calls it only for intervals over
2 days (SM-2's first interval and every fail's are 1: three answers in four), and one whose next state reads no
interval (FSRS) for the answers the last interval depends on alone."""
