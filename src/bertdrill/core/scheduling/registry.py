"""The schedulers a learner can choose, by the names they are stored under.

Every scheduler is a peer: a module of its own (:mod:`.sm2`, :mod:`.fsrs`) that reads and returns the
shared :class:`~bertdrill.core.scheduling.state.Schedule`. Adding a third is that module plus one entry
here: a member of :class:`SchedulerName` and its case in :func:`registered` (mypy reports the missing
case), nothing in the store (the stored name is checked here, not by a CHECK constraint).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, TypeAlias, assert_never

if TYPE_CHECKING:  # the schedulers' modules load when one is made: `bertdrill --help` needs only the names
    from datetime import date

    from bertdrill.core.scheduling.exam import ExamScheduler, LessonExams
    from bertdrill.core.scheduling.fitted import FittedFSRS
    from bertdrill.core.scheduling.fsrs import FSRS
    from bertdrill.core.scheduling.sm2 import SM2


class SchedulerName(StrEnum):
    """A scheduler's stored name (``scheduler.name``, ``bertdrill scheduler NAME``)."""

    SM2 = "sm2"
    FSRS = "fsrs"


DEFAULT = SchedulerName.SM2
"""The scheduler of a learner who never chose one."""


class Spreading(StrEnum):
    """How a learner's intervals are spread (``bertdrill scheduler --spread``; :mod:`.spread`), as stored."""

    OFF = "off"  # every interval as the scheduler gives it
    FUZZ = "fuzz"  # fuzzed, as Anki always does
    BALANCE = "balance"  # fuzzed, and the day chosen within the fuzz range by the load balancer


DEFAULT_SPREADING = Spreading.BALANCE
"""As Anki: fuzz always, and its load balancer is on unless the learner turns it off."""

AnyScheduler: TypeAlias = "SM2 | FSRS | FittedFSRS"
"""Every registered scheduler (each is a :class:`bertdrill.ports.Scheduler`)."""


@dataclass(frozen=True)
class Registered:
    """What the registry knows of one scheduler."""

    name: SchedulerName
    title: str  # how the screen names it
    # The scheduler, given the desired retention and fitted parameters (None: its defaults).
    make: Callable[[float | None, Sequence[float] | None], AnyScheduler]
    has_retention: bool  # whether a desired retention is one of its settings (and fitted parameters)


def _sm2(_retention: float | None, _parameters: Sequence[float] | None) -> SM2:
    from bertdrill.core.scheduling.sm2 import SM2

    return SM2()


def _fsrs(retention: float | None, parameters: Sequence[float] | None) -> FSRS | FittedFSRS:
    """py-fsrs with the default parameters; fsrs-rs with fitted ones."""
    from bertdrill.core.scheduling.fitted import FittedFSRS
    from bertdrill.core.scheduling.fsrs import DEFAULT_RETENTION, FSRS

    chosen = DEFAULT_RETENTION if retention is None else retention
    return FSRS(chosen) if parameters is None else FittedFSRS(tuple(parameters), chosen)


def registered(name: SchedulerName) -> Registered:
    """The registry's entry for ``name``."""
    match name:
        case SchedulerName.SM2:
            return Registered(name, "SM-2", _sm2, has_retention=False)
        case SchedulerName.FSRS:
            return Registered(name, "FSRS", _fsrs, has_retention=True)
        case unreachable:
            assert_never(unreachable)


def scheduler_named(name: SchedulerName, retention: float | None = None,
                    parameters: Sequence[float] | None = None) -> AnyScheduler:
    """The scheduler stored as ``name``; ``retention`` is its desired retention and ``parameters`` its fitted
    parameters where it has them (None: its defaults)."""
    return registered(name).make(retention, parameters)


def stored_name(text: str) -> SchedulerName:
    """The name read back from a store; ValueError naming the known ones for any other text."""
    try:
        return SchedulerName(text)
    except ValueError:
        known = ", ".join(SchedulerName)
        raise ValueError(f"no scheduler named {text!r}; the names are {known}") from None


def scheduler_chosen(name: SchedulerName, retention: float | None = None, parameters: Sequence[float] | None = None,
                     exam: date | None = None, exam_target: float | None = None,
                     lesson_exams: Sequence[tuple[str, date, float]] = ()) -> AnyScheduler | ExamScheduler | LessonExams:
    """The scheduler a stored choice names, with its settings: its parameters, and an exam if one is set, for
    every lesson or per lesson (``lesson_exams``: lesson, day, target); an exam plans a scheduler with a desired
    retention only: SM-2 predicts no recall."""
    scheduler = scheduler_named(name, retention, parameters)
    if (exam is None and not lesson_exams) or not registered(name).has_retention:
        return scheduler
    from bertdrill.core.scheduling.exam import DEFAULT_EXAM_TARGET, ExamScheduler, LessonExams  # loads FSRS and its fit

    every = None if exam is None else ExamScheduler(
        scheduler, exam, DEFAULT_EXAM_TARGET if exam_target is None else exam_target)  # type: ignore[arg-type]
    if not lesson_exams:
        assert every is not None
        return every
    return LessonExams(scheduler, tuple(lesson_exams), every)  # type: ignore[arg-type]

