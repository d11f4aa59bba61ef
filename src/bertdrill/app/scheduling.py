"""Choosing a learner's scheduler: what ``bertdrill scheduler`` and ``bertdrill review --exam`` (on a store of
one's own, or through the class server) and the class server's forms ask for, made into the choice to store,
and switched to.

One implementation for every interface: the options are checked (:func:`check`), the choice they ask for is
worked out from the one in use (:func:`wanted_choice`: FSRS keeps its retention and parameters unless told
otherwise, an exam plan stays), a new parameter set is fitted to the learner's own log by fsrs-rs
(:func:`fit_log`; below the minimum history, :class:`~bertdrill.core.scheduling.fitted.NotEnoughHistory` says
how many reviews are missing, and nothing changes), and the store's all-or-nothing replay switches to it
(:func:`switch`). An exam plan is part of the choice: :func:`plan_exam` stores it the same way and says what it
asks before the exam. Nothing here prints: the interfaces pass what shows progress and notices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _
from bertdrill.core.scheduling.registry import registered
from bertdrill.ports import ExamAsked, ExamPlanned, FittedSet, SchedulerAsked, SchedulerChoice, Switched

if TYPE_CHECKING:
    from bertdrill.ports import ReviewStore, Scheduler, SyncCard

MIN_TARGET, MAX_TARGET = 0.70, 0.99  # an exam's target recall
Track = Callable[[list[str], str], Iterable[str]]
"""Shows progress over a list of card ids, under a label (the CLI's bar); yields the ids."""


def quiet(ids: list[str], label: str) -> Iterable[str]:
    return iter(ids)


class ChoiceError(BertdrillError):
    """Options that ask for no scheduler choice (a setting of FSRS with SM-2, a set that does not exist)."""


def check(asked: SchedulerAsked) -> None:
    """ChoiceError for options that cannot go together (``name`` None: no scheduler named, so no setting of
    FSRS either; :func:`switch` checks with the name in use when only the spread is asked for)."""
    if asked.name is None or not registered(asked.name).has_retention:
        for given, option in ((asked.retention is not None, "--retention"), (asked.fit, "--fit"),
                              (asked.parameters is not None, "--parameters")):
            if given:
                raise ChoiceError(_("{option} is a setting of FSRS: use it with `bertdrill scheduler fsrs`").format(
                    option=option))
    if asked.fit and asked.parameters is not None:
        raise ChoiceError(_("--fit makes a new parameter set; --parameters picks a stored one: give one of them"))


def switch(store: ReviewStore, asked: SchedulerAsked, today: date, follow: Callable[[SchedulerChoice], Scheduler], *,
           now: datetime, track: Track = quiet, notice: Callable[[str], None] = lambda text: None) -> Switched:
    """Store the choice ``asked`` for, every card's schedule replayed from its log under ``follow(choice)``
    (one transaction: all or nothing); ``today`` is the study day the due counts are of, ``now`` when a fit
    is made. ChoiceError, RetentionError or NotEnoughHistory (nothing changed) for what cannot be done."""
    current = store.scheduler_choice()
    named = replace(asked, name=current.name if asked.name is None else asked.name)  # a spread alone keeps it
    check(named)
    wanted = wanted_choice(store, current, named, now=now, track=track, notice=notice)
    wanted = replace(wanted, spread=current.spread if asked.spread is None else asked.spread)
    if wanted == current:
        return Switched(current, current)
    due_before = store.due_count(today)
    done = store.switch_scheduler(wanted, follow(wanted),
                                  track=lambda cards: track(cards, _("Replaying the review log")))
    return Switched(current, done.choice or wanted, done, due_before, store.due_count(today))


def wanted_choice(store: ReviewStore, current: SchedulerChoice, asked: SchedulerAsked, *, now: datetime, track: Track = quiet,
                  notice: Callable[[str], None] = lambda text: None) -> SchedulerChoice:
    """The choice the options ask for (``asked.name`` given). FSRS keeps the retention and parameters in use
    unless ``fit`` or ``parameters`` say otherwise; an exam plan stays."""
    from bertdrill.core.scheduling.fsrs import DEFAULT_RETENTION, check_retention

    name = asked.name
    assert name is not None
    if not registered(name).has_retention:
        return SchedulerChoice(name)  # SM-2 predicts no recall: an exam plan ends with FSRS
    kept = asked.retention if asked.retention is not None else current.retention if current.name is name else None
    chosen = check_retention(DEFAULT_RETENTION if kept is None else kept)
    fitted: FittedSet | None
    if asked.fit:
        fitted = fit_log(store, now=now, track=track, notice=notice)
    elif asked.parameters is not None:
        fitted = stored_set(store, asked.parameters)
    else:
        fitted = current.fitted if current.name is name else None
    return SchedulerChoice(name, chosen, fitted, current.exam, current.exam_target,
                           lesson_exams=current.lesson_exams)  # an exam plan stays


def fit_log(store: ReviewStore, *, now: datetime, track: Track = quiet,
            notice: Callable[[str], None] = lambda text: None) -> FittedSet:
    """A new parameter set fitted to the learner's whole log (numbered when stored), or NotEnoughHistory."""
    from bertdrill.core.scheduling.fitted import Training, fit_training

    training = Training()  # each card's log becomes its items as it is read: the log is never held whole
    store.card_logs(training.add, track=lambda cards: track(cards, _("Reading the review log")))
    notice(_("Fitting FSRS's parameters to your reviews (fsrs-rs)..."))
    result = fit_training(training.collected())
    return FittedSet(0, result.parameters, result.reviews, now.astimezone(UTC))


def stored_set(store: ReviewStore, wanted: str) -> FittedSet | None:
    """The learner's stored set named by ``--parameters`` (a number, or ``default`` for None)."""
    if wanted.strip().casefold() == "default":
        return None
    sets = {each.number: each for each in store.fitted_sets()}
    try:
        return sets[int(wanted)]
    except (ValueError, KeyError):
        numbers = ", ".join(str(number) for number in sorted(sets)) or _("none yet: `bertdrill scheduler fsrs --fit`")
        raise ChoiceError(_("--parameters takes `default` or the number of a fitted set ({numbers}), got {value!r}")
                          .format(numbers=numbers, value=wanted)) from None


def check_target(target: float) -> float:
    """The exam's target recall, or ChoiceError for one outside 0.70-0.99 (or not a number)."""
    if isinstance(target, bool) or not isinstance(target, int | float) or math.isnan(target) \
            or not MIN_TARGET <= target <= MAX_TARGET:
        raise ChoiceError(_("--exam-target must be from {low} to {high}, got {value}").format(
            low=f"{MIN_TARGET:.2f}", high=f"{MAX_TARGET:.2f}", value=target))
    return float(target)


def plan_exam(store: ReviewStore, cards: Sequence[SyncCard], asked: ExamAsked, today: date,
              follow: Callable[[SchedulerChoice], Scheduler], *, new: int, limit: int,
              track: Track = quiet) -> ExamPlanned:
    """Store the exam plan ``asked`` for, for every lesson or for ``asked.lesson`` alone (the log replayed, in one
    transaction, if it changes), and what it asks of ``cards`` before the exam at ``new`` and ``limit`` a day.
    ChoiceError (nothing changed) for a day not after ``today``, a target out of range, or SM-2 in use."""
    from bertdrill.core.scheduling.exam import DEFAULT_EXAM_TARGET, ExamScheduler, lesson_of, plan
    from bertdrill.core.scheduling.registry import scheduler_named
    from bertdrill.ports import LessonExam

    day, lesson = asked.day, asked.lesson
    if lesson is not None and all(card.lesson_id != lesson for card in cards):
        raise ChoiceError(_("no lesson {lesson!r} here").format(lesson=lesson))
    if day is not None and day <= today:
        raise ChoiceError(_("the exam day {day} is not after today ({today})").format(
            day=day.isoformat(), today=today.isoformat()))
    current = store.scheduler_choice()
    if day is not None and not registered(current.name).has_retention:
        raise ChoiceError(_("an exam plan needs FSRS's predicted recall: switch with `bertdrill scheduler fsrs` "
                            "(or `--fit`) first"))
    target = None if day is None else check_target(DEFAULT_EXAM_TARGET if asked.target is None else asked.target)
    if lesson is None:
        wanted = replace(current, exam=day, exam_target=target)
    else:
        others = tuple(each for each in current.lesson_exams if each.lesson != lesson)
        wanted = replace(current, lesson_exams=others if day is None or target is None else (
            *others, LessonExam(lesson, day, target)))
    switch = None if wanted == current else store.switch_scheduler(
        wanted, follow(wanted), track=lambda ids: track(ids, _("Planning every card for the exam")))
    if day is None or target is None:
        return ExamPlanned(asked, None, switch)
    scheduler = ExamScheduler(scheduler_named(wanted.name, wanted.retention,  # type: ignore[arg-type]
                                              wanted.fitted.parameters if wanted.fitted else None), day, target)
    own = {each.lesson for each in wanted.lesson_exams}  # lessons with an exam of their own
    reviewed = [card for card in cards if card.kind.reviewed
                and (lesson_of(card.id) == lesson if lesson is not None else lesson_of(card.id) not in own)]
    found = plan(scheduler, [(card.id, store.state(card.id).schedule) for card in reviewed], today,
                 reviews_per_day=limit, new_per_day=new)
    return ExamPlanned(asked, target, switch, found.reviews, found.days, found.cannot, new, limit)
