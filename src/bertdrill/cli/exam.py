"""``bertdrill review --exam DAY``: set (or end) an exam plan, replan every card, and say what it asks.

The plan is part of the scheduler choice (:mod:`bertdrill.core.scheduling.exam`): setting it replays every
card's log through FSRS with the exam, in one transaction like any switch, so the cards whose next review
would jump past the exam with too little recall left come back before it. ``--exam off`` replays without
it: the schedules are FSRS's own again, exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from bertdrill.cli.base import card_count, clock, day_count, decimal, err, number, out, percent, progress
from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _, ngettext

if TYPE_CHECKING:
    from bertdrill.ports import ExamPlanned, ReviewStore, SyncCard

SHOWN = 10  # cards named when some cannot make it


def exam_day(text: str) -> date | None:
    """The exam day ``--exam`` names (None for ``off``), or BertdrillError."""
    if text.strip().casefold() == "off":
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise BertdrillError(_("--exam takes a day such as 2027-01-15, or off; got {value!r}").format(
            value=text)) from None


def set_exam(store: ReviewStore, cards: Sequence[SyncCard], text: str, target: float | None, rollover_hour: int, *,
             new: int, limit: int, lesson: str | None = None) -> None:
    """Store the exam plan ``--exam`` asks for, for every lesson or for ``lesson`` alone (replaying the log if it
    changes), and print what it asks."""
    from bertdrill.app.scheduling import plan_exam
    from bertdrill.cli.base import scheduler_of
    from bertdrill.core.scheduling.state import study_day
    from bertdrill.ports import ExamAsked

    today = study_day(clock()(), rollover_hour)
    show_plan(plan_exam(store, cards, ExamAsked(exam_day(text), target, lesson), today, scheduler_of, new=new,
                        limit=limit, track=progress))


def show_plan(planned: ExamPlanned) -> None:
    """Print what setting the exam plan did (the cards that cannot make it on standard error)."""
    for line in planned_lines(planned):
        out.print(line, markup=False)
    for line in cannot_lines(planned):
        err.print(line, markup=False)


def planned_lines(planned: ExamPlanned) -> list[str]:
    """What setting (or ending) an exam plan did, and what it asks before the exam (nothing: the plan ended was
    not set)."""
    asked, switch = planned.asked, planned.switch
    if asked.day is None or planned.target is None:
        if switch is None:
            return []
        if asked.lesson is None:
            return [_("Exam plan ended: {cards} rescheduled by FSRS alone.").format(cards=card_count(switch.cards))]
        return [_("Exam plan of {lesson} ended: {cards} rescheduled.").format(lesson=asked.lesson,
                                                                             cards=card_count(switch.cards))]
    lines = []
    if switch is not None and asked.lesson is None:
        lines.append(_("Exam on {day}: {cards} replanned so their predicted recall on the day reaches {target}.").format(
            day=asked.day.isoformat(), cards=card_count(switch.cards), target=decimal(planned.target, 2)))
    elif switch is not None:
        lines.append(_("Exam of {lesson} on {day}: its cards replanned so their predicted recall on the day "
                       "reaches {target}.").format(lesson=asked.lesson, day=asked.day.isoformat(),
                                                   target=decimal(planned.target, 2)))
    lines.append(_("Before the exam: {reviews} in {days} if you answer each Good (your limits: {limit} and {new} a "
                   "day).").format(reviews=review_count(planned.reviews), days=day_count(planned.days),
                                   limit=review_count(planned.limit),
                                   new=ngettext("{count} new card", "{count} new cards", planned.new).format(
                                       count=number(planned.new))))
    return lines


def cannot_lines(planned: ExamPlanned) -> list[str]:
    """The cards that cannot reach the target by the exam at the learner's pace (up to :data:`SHOWN` named)."""
    if not planned.cannot or planned.target is None:
        return []
    return [ngettext("At today's pace {count} card cannot reach {target} by the exam, for example:",
                     "At today's pace {count} cards cannot reach {target} by the exam, for example:",
                     len(planned.cannot)).format(count=number(len(planned.cannot)), target=decimal(planned.target, 2)),
            *(f"  {card_id}" for card_id in planned.cannot[:SHOWN])]


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
                    lesson=lesson, recall=percent(decimal(mean * 100, 1)), cards=card_count(count), below=number(below)))
            return shown
        shown = ["", _("Exams: predicted recall on each lesson's exam day if you review nothing more")]
        for lesson, count, mean, below, day, target in self.lessons:
            shown.append("  " + _("{lesson}, exam on {day}: {recall} over {cards}, {below} below the target "
                                  "{target}").format(lesson=lesson, day=day.isoformat(),
                                                     recall=percent(decimal(mean * 100, 1)), cards=card_count(count),
                                                     below=number(below), target=decimal(target, 2)))
        return shown


def exam_outlook(store: ReviewStore, cards: Sequence[SyncCard]) -> Outlook | None:
    """Each lesson's predicted recall on its exam day (the lesson's own, else the one for every lesson), if an exam
    plan is set (None otherwise)."""
    choice = store.scheduler_choice()
    if choice.exam is None and not choice.lesson_exams:
        return None
    # imported only for a plan: the exam's module brings FSRS's (10-14 ms of every stats with no exam set)
    from bertdrill.core.scheduling.exam import DEFAULT_EXAM_TARGET, decay_of, recall_on
    from bertdrill.core.scheduling.registry import scheduler_named

    inner = scheduler_named(choice.name, choice.retention, choice.fitted.parameters if choice.fitted else None)
    decay = decay_of(inner)  # type: ignore[arg-type]
    exams = {each.lesson: (each.exam, each.target) for each in choice.lesson_exams}
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
