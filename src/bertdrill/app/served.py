"""What the class server does with what a learner's terminal sends: the server stays the only writer.

The terminal runs the same :class:`bertdrill.app.session.Session` over a store that speaks to the server
(:mod:`bertdrill.adapters.remote`); what it sends of an answer is which card, what was typed, the grade chosen,
how long it took and the numbers asked. Everything that decides the record is done here, on the server: the
time and the study day are the server's clock; the kind of answer (new, due review, re-drill) comes from the
card's stored state, so a card that is not due cannot be answered to push its interval on; a typed answer is
graded again, and a passing grade for an answer the grader marks wrong is recorded as the highest failing
grade; the schedule is computed from the grade by the learner's own scheduler, under the choice stored when
the answer commits. Undo and flags are held to what a review does: today's answers only, a burial until
tomorrow at most.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from bertdrill.core.cards import Card, NumericCard
from bertdrill.core.errors import BertdrillError
from bertdrill.core.grading import Verdict
from bertdrill.core.grading import grade as grade_typed
from bertdrill.core.i18n import _
from bertdrill.core.lesson import Lesson
from bertdrill.core.scheduling.actions import CardAction
from bertdrill.core.scheduling.spread import LOAD_BALANCE_DAYS, Load, card_scheduler
from bertdrill.core.scheduling.state import PASSING, AnswerKind, Schedule, check_grade
from bertdrill.core.variants import find, read_logged, variant_card
from bertdrill.ports import Action, Answer, CardManagement, CardState, ReviewStore, Scheduler, SchedulerChoice

HIGHEST_FAILING = PASSING - 1  # what a passing grade for an answer graded wrong is recorded as


class Refused(BertdrillError):
    """What was sent is not something a review does (a card not due, an answer graded wrong given a pass by a
    forged client, another day's answer undone): nothing is written."""


@dataclass(frozen=True)
class Sent:
    """An answer as the terminal sends it."""

    card_id: str
    grade: int
    typed: str | None
    duration_ms: int
    request: str  # the client's id of this answer: sent again after a dropped connection, it is logged once
    language: str  # the language the card was asked in: a typed answer is graded again in it
    cram: bool = False  # bertdrill review --cram: logged as cram, never scheduling
    variant: str | None = None  # fresh numbers asked ("seed:key"), graded with those numbers


@dataclass(frozen=True)
class Recording:
    """What recording needs of the server: the learner's store (as a queue and as the card actions' log: one
    object), the class's cards and lessons, the learner's scheduler, the server's clock."""

    store: ReviewStore
    managing: CardManagement
    cards: Callable[[str], Card | None]  # a card of the class by id
    lessons: Callable[[str], Lesson | None]  # a lesson of the class by id
    follow: Callable[[SchedulerChoice], Scheduler]  # the scheduler a stored choice names
    now: datetime
    today: date
    balance: Balance | None = None  # the learner's kept between answers; None: read for this answer


def record(desk: Recording, sent: Sent, *, learner_judges: Callable[[Card], bool]) -> Answer:
    """Log ``sent`` as the server decides it (see the module's docstring); the answer as logged.

    ``learner_judges``: whether a card is one the learner grades themselves (a fact, whose answer is prose):
    such a card may be answered without typing, and its typed answer is never capped."""
    card = desk.cards(sent.card_id)
    if card is None:
        raise Refused(_("{card} is not a card of this class").format(card=sent.card_id))
    check_grade(sent.grade)
    state = desk.store.state(card.id)
    kind = _kind(desk, state, sent.cram)
    grade = _regraded(desk, card, sent, learner_judges(card))
    choice, scheduler, load = desk.balance.of(desk) if desk.balance is not None else _balance(desk)

    def rescheduler(stored: SchedulerChoice) -> Callable[[Schedule], Schedule]:
        chosen = card_scheduler(scheduler if stored == choice else desk.follow(stored), card.id, load)
        return lambda before: chosen.review(before, grade, today=desk.today)

    logged = desk.store.answer(card.id, grade=grade, kind=kind, reviewed_at=desk.now, study_day=desk.today,
                               typed=sent.typed, duration_ms=sent.duration_ms, once_per_day=True,
                               variant=sent.variant, rescheduler=rescheduler if kind.schedules else None,
                               request=sent.request)
    if load is not None:
        with desk.balance.lock if desk.balance is not None else nullcontext():
            load.moved(logged.before.due, logged.after.due)
    return logged


def _balance(desk: Recording) -> tuple[SchedulerChoice, Scheduler, Load | None]:
    """The learner's scheduler choice, its scheduler, and the load its balancer reads (None: it balances nothing)."""
    choice = desk.store.scheduler_choice()
    scheduler = desk.follow(choice)
    load = Load.of(desk.today, desk.store.forecast(desk.today, LOAD_BALANCE_DAYS + 1)) \
        if getattr(scheduler, "balancing", False) else None
    return choice, scheduler, load


@dataclass
class Balance:
    """One learner's scheduler choice and balancer load, kept on the server between their answers and moved by
    each (as a review session keeps its own), read from the store again on a new study day or after ``fresh``
    seconds (another window's answers, a switch). The choice an answer commits under is still read in its own
    transaction; this is what the load balancer picks days by, and saves two reads per answer."""

    monotonic: Callable[[], float]
    fresh: float = 60.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    _kept: tuple[date, SchedulerChoice, Scheduler, Load | None, float] | None = None

    def of(self, desk: Recording) -> tuple[SchedulerChoice, Scheduler, Load | None]:
        with self.lock:
            kept = self._kept
            if kept is not None and kept[0] == desk.today and self.monotonic() - kept[4] < self.fresh:
                return kept[1], kept[2], kept[3]
        choice, scheduler, load = _balance(desk)
        with self.lock:
            self._kept = (desk.today, choice, scheduler, load, self.monotonic())
        return choice, scheduler, load


def _kind(desk: Recording, state: CardState, cram: bool) -> AnswerKind:
    """New, due or a re-drill, from the stored state; a card the review would not show now is refused."""
    if state.removed or state.suspended:
        raise Refused(_("{card} is suspended or no longer in its lesson").format(card=state.card_id))
    if cram:
        return AnswerKind.CRAM
    if state.buried_until is not None and state.buried_until > desk.today:
        raise Refused(_("{card} is buried until {day}").format(card=state.card_id, day=state.buried_until))
    due = state.schedule.due
    if due is None:
        return AnswerKind.NEW
    if due <= desk.today:
        return AnswerKind.REVIEW
    today = desk.managing.answers(state.card_id, since=desk.today)
    if any(answer.kind is not AnswerKind.CRAM for answer in today):
        return AnswerKind.REDRILL  # answered today already: logged, the schedule left alone
    raise Refused(_("{card} is not due until {day}").format(card=state.card_id, day=due))


def _regraded(desk: Recording, card: Card, sent: Sent, learner_judges: bool) -> int:
    """The grade to record: as sent, except a passing grade for a typed answer the grader marks wrong."""
    if sent.typed is None:
        if not learner_judges:
            raise Refused(_("{card} is graded from what was typed: send the typed answer").format(card=card.id))
        return sent.grade
    asked = _asked(desk, card, sent.variant)
    verdict = grade_typed(asked, sent.typed, sent.language)
    if verdict.retry:
        raise Refused(_("{typed!r} is not graded for {card}: {reason}").format(
            typed=sent.typed, card=card.id, reason=verdict.feedback))  # the grader's reason: no option, no number
    return recorded_grade(sent.grade, verdict, learner_judges)


def recorded_grade(grade: int, verdict: Verdict | None, learner_judges: bool) -> int:
    """What a class records for ``grade`` given to an answer graded ``verdict``: the grade, but at most the highest
    failing one for an answer the grader marks wrong on a card the grader decides (the browser's review in a class
    applies it too, so both of a class's reviews record alike)."""
    if verdict is None or learner_judges or verdict.judge or verdict.correct:
        return grade
    return min(grade, HIGHEST_FAILING)


def _asked(desk: Recording, card: Card, variant: str | None) -> Card:
    """The card as it was asked: with the fresh numbers the client drew, if the lesson allows them."""
    if variant is None:
        return card
    lesson = desk.lessons(card.lesson_id)
    seed, key = read_logged(variant)
    drawn = find(lesson, key) if lesson is not None and isinstance(card, NumericCard) and lesson.variant_space else None
    if lesson is None or drawn is None or not isinstance(card, NumericCard):
        raise Refused(_("{variant!r} is not a variant {card} may be asked with").format(variant=variant, card=card.id))
    return variant_card(lesson, card, drawn, seed)


def undo(desk: Recording, review_id: int) -> CardState:
    """Take back one of today's answers (the review's ``u``); an earlier day's history is never deleted."""
    if not any(answer.id == review_id for answer in desk.managing.answers(since=desk.today)):
        raise Refused(_("answer {id} is not one of today's answers: only those can be undone").format(id=review_id))
    return desk.store.undo(review_id)


def set_flags(desk: Recording, card_id: str, *, suspended: bool | None, bury: bool,
              buried_until: date | None) -> CardState:
    """Suspend, unsuspend, bury or unbury as a review does: a burial lasts until tomorrow at most."""
    if desk.cards(card_id) is None:
        raise Refused(_("{card} is not a card of this class").format(card=card_id))
    if bury and buried_until is not None and buried_until > desk.today + timedelta(days=1):
        raise Refused(_("a card is buried until tomorrow at most"))
    if bury:
        return desk.store.set_flags(card_id, suspended=suspended, buried_until=buried_until)
    return desk.store.set_flags(card_id, suspended=suspended)


def suspend(desk: Recording, card_id: str) -> Action:
    """The review's ``s`` (and a leech's suspension), logged as a card action."""
    if desk.cards(card_id) is None:
        raise Refused(_("{card} is not a card of this class").format(card=card_id))
    return desk.managing.manage(card_id, CardAction.SUSPEND, at=desk.now, study_day=desk.today)


def undo_action(desk: Recording, action_id: int) -> Action:
    """Take back one of today's card actions."""
    if not any(action.id == action_id and action.study_day == desk.today for action in desk.managing.actions()):
        raise Refused(_("card action {id} is not one of today's: only those can be undone").format(id=action_id))
    return desk.managing.undo_action(action_id)
