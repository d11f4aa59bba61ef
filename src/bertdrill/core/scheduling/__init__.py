"""The schedulers a learner can choose, behind :class:`bertdrill.ports.Scheduler`.

- ``sm2``: SM-2 as the team pinned it (:mod:`bertdrill.core.scheduling.sm2`), the default.
- ``fsrs``: FSRS-6 through py-fsrs (:mod:`bertdrill.core.scheduling.fsrs`) with its default parameters,
  or through fsrs-rs with parameters fitted to the learner's log (:mod:`bertdrill.core.scheduling.fitted`).

Also pure: :mod:`.replay` rebuilds a card's state from its review log (switching scheduler),
and :mod:`.calibration` scores how well each scheduler predicted the learner's recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from bertdrill.core.scheduling.exam import DEFAULT_EXAM_TARGET, ExamScheduler
from bertdrill.core.scheduling.fitted import FittedFSRS
from bertdrill.core.scheduling.fsrs import DEFAULT_RETENTION, FSRS
from bertdrill.core.scheduling.sm2 import SM2

NAMES = ("sm2", "fsrs")
"""The schedulers by their stored names; ``sm2`` is the default."""

TITLES = {"sm2": "SM-2", "fsrs": "FSRS", "fsrs-fitted": "FSRS*"}
"""How the screen names each scheduler (FSRS*: FSRS with parameters fitted to the learner's log)."""

DEFAULT = "sm2"


def scheduler_chosen(name: str, retention: float | None = None, parameters: Sequence[float] | None = None,
                     exam: date | None = None, exam_target: float | None = None) -> SM2 | FSRS | FittedFSRS | ExamScheduler:
    """The scheduler a stored choice names, with its settings: FSRS's parameters, and an exam if one is set
    (an exam plans FSRS only: SM-2 predicts no recall)."""
    scheduler = scheduler_named(name, retention, parameters)
    if exam is None or isinstance(scheduler, SM2):
        return scheduler
    return ExamScheduler(scheduler, exam, DEFAULT_EXAM_TARGET if exam_target is None else exam_target)


def scheduler_named(name: str, retention: float | None = None,
                    parameters: Sequence[float] | None = None) -> SM2 | FSRS | FittedFSRS:
    """The scheduler stored as ``name``; ``retention`` is FSRS's desired retention (None: 0.90), ``parameters``
    FSRS's fitted parameters (None: its defaults)."""
    match name:
        case "sm2":
            return SM2()
        case "fsrs" if parameters is not None:
            return FittedFSRS(tuple(parameters), DEFAULT_RETENTION if retention is None else retention)
        case "fsrs":
            return FSRS(DEFAULT_RETENTION if retention is None else retention)
    raise ValueError(f"no scheduler named {name!r}; the names are {', '.join(NAMES)}")
