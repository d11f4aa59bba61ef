"""``bertdrill review --exam DAY``: set (or end) an exam plan, replan every card, and say what it asks.

The plan is part of the scheduler choice (:mod:`bertdrill.core.scheduling.exam`): setting it replays every
card's log through FSRS with the exam, in one transaction like any switch, so the cards whose next review
would jump past the exam with too little recall left come back before it. ``--exam off`` replays without
it: the schedules are FSRS's own again, exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

from bertdrill.cli.base import card_count, clock, day_count, decimal, err, number, out, progress
from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _, ngettext

if TYPE_CHECKING:
    from bertdrill.ports import ReviewStore, SyncCard

MIN_TARGET, MAX_TARGET = 0.70, 0.99
SHOWN = 10  # cards named when some cannot make it


def exam_day(text: str, today: date) -> date | None:
    """The exam day ``--exam`` names (None for ``off``), or BertdrillError."""
    if text.strip().casefold() == "off":
        return None
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise BertdrillError(_("--exam takes a day such as 2027-01-15, or off; got {value!r}").format(
            value=text)) from None
    if day <= today:
        raise BertdrillError(_("the exam day {day} is not after today ({today})").format(
            day=day.isoformat(), today=today.isoformat()))
    return day


def check_target(target: float) -> float:
    if math.isnan(target) or not MIN_TARGET <= target <= MAX_TARGET:
        raise BertdrillError(_("--exam-target must be from {low} to {high}, got {value}").format(
            low=f"{MIN_TARGET:.2f}", high=f"{MAX_TARGET:.2f}", value=target))
    return target


def set_exam(store: ReviewStore, cards: Sequence[SyncCard], text: str, target: float | None, rollover_hour: int, *,
             new: int, limit: int, lesson: str | None = None) -> None:
    """Store the exam plan ``--exam`` asks for, for every lesson or for ``lesson`` alone (replaying the log if it
    changes), and print what it asks."""
    from bertdrill.cli.base import scheduler_of
    from bertdrill.core.scheduling.exam import DEFAULT_EXAM_TARGET, ExamScheduler, lesson_of, plan
    from bertdrill.core.scheduling.registry import scheduler_named
    from bertdrill.core.scheduling.state import study_day
    from bertdrill.ports import LessonExam

    today = study_day(clock()(), rollover_hour)
    day = exam_day(text, today)
    current = store.scheduler_choice()
    if day is not None and current.name != "fsrs":
        raise BertdrillError(_("an exam plan needs FSRS's predicted recall: switch with `bertdrill scheduler fsrs` "
                               "(or `--fit`) first"))
    wanted_target = None if day is None else check_target(DEFAULT_EXAM_TARGET if target is None else target)
    if lesson is None:
        wanted = replace(current, exam=day, exam_target=wanted_target)
    else:
        others = tuple(each for each in current.lesson_exams if each.lesson != lesson)
        assert day is None or wanted_target is not None
        wanted = replace(current, lesson_exams=others if day is None else (
            *others, LessonExam(lesson, day, wanted_target)))  # type: ignore[arg-type]
    if wanted != current:
        switch = store.switch_scheduler(wanted, scheduler_of(wanted),
                                        track=lambda ids: progress(ids, _("Planning every card for the exam")))
        if day is None:
            if lesson is None:
                out.print(_("Exam plan ended: {cards} rescheduled by FSRS alone.").format(
                    cards=card_count(switch.cards)))
            else:
                out.print(_("Exam plan of {lesson} ended: {cards} rescheduled.").format(
                    lesson=lesson, cards=card_count(switch.cards)))
            return
        assert wanted_target is not None  # an exam day has its target
        if lesson is None:
            out.print(_("Exam on {day}: {cards} replanned so their predicted recall on the day reaches "
                        "{target}.").format(day=day.isoformat(), cards=card_count(switch.cards),
                                            target=decimal(wanted_target, 2)))
        else:
            out.print(_("Exam of {lesson} on {day}: its cards replanned so their predicted recall on the day "
                        "reaches {target}.").format(lesson=lesson, day=day.isoformat(), target=decimal(wanted_target, 2)))
    if day is None:
        return
    assert wanted_target is not None
    scheduler = ExamScheduler(scheduler_named(wanted.name, wanted.retention,  # type: ignore[arg-type]
                                              wanted.fitted.parameters if wanted.fitted else None),
                              day, wanted_target)
    own = {each.lesson for each in wanted.lesson_exams}  # lessons with an exam of their own
    reviewed = [card for card in cards if card.kind.reviewed
                and (lesson_of(card.id) == lesson if lesson is not None else lesson_of(card.id) not in own)]
    states = [(card.id, store.state(card.id).schedule) for card in reviewed]
    found = plan(scheduler, states, today, reviews_per_day=limit, new_per_day=new)
    out.print(_("Before the exam: {reviews} in {days} if you answer each Good (your limits: {limit} and {new} a "
                "day).").format(reviews=review_count(found.reviews), days=day_count(found.days),
                                limit=review_count(limit), new=ngettext("{count} new card", "{count} new cards", new)
                                .format(count=number(new))))
    if found.cannot:
        err.print(ngettext("At today's pace {count} card cannot reach {target} by the exam, for example:",
                           "At today's pace {count} cards cannot reach {target} by the exam, for example:",
                           len(found.cannot)).format(
            count=number(len(found.cannot)), target=decimal(wanted_target, 2)))
        for card_id in found.cannot[:SHOWN]:
            err.print(f"  {card_id}", markup=False)


def review_count(count: int) -> str:
    return ngettext("{count} review", "{count} reviews", count).format(count=number(count))


@dataclass(frozen=True)
class Outlook:
    """Predicted recall on the exam day, per lesson: what ``stats`` shows while an exam plan is set. Each lesson
    has its exam day and target: its own (``--exam DAY --lesson L``), else the one for every lesson."""

    exam: date | None  # the exam for every lesson (None: only lessons' own)
    target: float | None
    lessons: tuple[tuple[str, int, float, int, date, float], ...]  # lesson, cards, mean predicted recall on its
    # exam day, cards below its target, the day, the target

    def as_data(self) -> dict[str, object]:
        return {"day": self.exam.isoformat() if self.exam else None, "target": self.target,
                "lessons": [{"lesson": lesson, "cards": count, "predicted_recall": round(mean, 4), "below_target": below,
                             "day": day.isoformat(), "target": target}
                            for lesson, count, mean, below, day, target in self.lessons]}

    def lines(self) -> list[str]:
        if self.exam is not None and all((day, target) == (self.exam, self.target)
                                         for *_figures, day, target in self.lessons):
            shown = ["", _("Exam on {day}: predicted recall on the day if you review nothing more (target {target})")
                     .format(day=self.exam.isoformat(), target=decimal(self.target or 0, 2))]
            for lesson, count, mean, below, _day, _target in self.lessons:
                shown.append("  " + _("{lesson}: {recall} over {cards}, {below} below the target").format(
                    lesson=lesson, recall=f"{decimal(mean * 100, 1)} %", cards=card_count(count), below=number(below)))
            return shown
        shown = ["", _("Exams: predicted recall on each lesson's exam day if you review nothing more")]
        for lesson, count, mean, below, day, target in self.lessons:
            shown.append("  " + _("{lesson}, exam on {day}: {recall} over {cards}, {below} below the target "
                                  "{target}").format(lesson=lesson, day=day.isoformat(),
                                                     recall=f"{decimal(mean * 100, 1)} %", cards=card_count(count),
                                                     below=number(below), target=decimal(target, 2)))
        return shown


def exam_outlook(store: ReviewStore, cards: Sequence[SyncCard]) -> Outlook | None:
    """Each lesson's predicted recall on its exam day (the lesson's own, else the one for every lesson), if an exam
    plan is set (None otherwise)."""
    from bertdrill.core.scheduling.exam import decay_of, recall_on
    from bertdrill.core.scheduling.registry import scheduler_named

    choice = store.scheduler_choice()
    if choice.exam is None and not choice.lesson_exams:
        return None
    inner = scheduler_named(choice.name, choice.retention, choice.fitted.parameters if choice.fitted else None)
    decay = decay_of(inner)  # type: ignore[arg-type]
    exams = {each.lesson: (each.exam, each.target) for each in choice.lesson_exams}
    from bertdrill.core.scheduling.exam import DEFAULT_EXAM_TARGET

    every = None if choice.exam is None else (
        choice.exam, DEFAULT_EXAM_TARGET if choice.exam_target is None else choice.exam_target)
    by_lesson: dict[str, list[float]] = {}
    days: dict[str, tuple[date, float]] = {}
    for card in cards:
        found = exams.get(card.lesson_id, every)
        if card.kind.reviewed and found is not None:
            days[card.lesson_id] = found
            by_lesson.setdefault(card.lesson_id, []).append(recall_on(store.state(card.id).schedule, found[0], decay))
    return Outlook(choice.exam, choice.exam_target, tuple(
        (lesson, len(values), sum(values) / len(values), sum(value < days[lesson][1] for value in values),
         days[lesson][0], days[lesson][1]) for lesson, values in sorted(by_lesson.items())))
