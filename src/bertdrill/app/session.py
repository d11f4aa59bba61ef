"""A review session with no terminal: today's queue, daily limits, re-drill, undo.

The session decides what comes next and records what the learner answered;
it never reads a key or prints a line (the CLI does), and it never reads the
clock itself (a ``clock`` callable is passed in, so tests are exact).

It talks to a store and a scheduler passed in, through the Protocols of
:mod:`bertdrill.ports` (:class:`~bertdrill.ports.ReviewStore`, :class:`~bertdrill.ports.Scheduler`;
SM-2 by default): every answer goes to the store, committed, before the
session moves on, so quitting or a killed process loses nothing acknowledged.

The queue: due cards, most overdue first; then cards still to re-drill from an
earlier session today; then new cards, interleaved by kind (lesson order within
each kind, see :func:`interleave_by_kind`). The daily limits count
first answers per study day of the session's lessons, from the log: at most
``Limits.new`` new cards and at most ``Limits.reviews`` cards in all (due and new
together).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from bertdrill.app.deck import Deck
from bertdrill.app.queue import Entry, Later, Queue
from bertdrill.app.variants import FreshNumbers
from bertdrill.core.cards import Card, NumericCard
from bertdrill.core.kinds import interleave_by_kind
from bertdrill.core.limits import DEFAULT_NEW, DEFAULT_REVIEWS, DEFAULT_ROLLOVER, Limits, room_today
from bertdrill.core.scheduling.actions import CardAction
from bertdrill.core.scheduling.sm2 import SM2
from bertdrill.core.scheduling.spread import LOAD_BALANCE_DAYS, Load, card_scheduler
from bertdrill.core.scheduling.state import (
    PASSING,
    AnswerKind,
    NextStates,
    Schedule,
    became_leech,
    check_grade,
    redrill_needed,
    study_day,
)
from bertdrill.core.variants import logged as logged_variant
from bertdrill.ports import (
    CardManagement,
    CardState,
    ReviewQueue,
    ReviewStore,
    Scheduler,
    SchedulerChoice,
)

if TYPE_CHECKING:  # the store makes it, when an answer is logged (bertdrill.ports.later)
    from bertdrill.ports import Answer

__all__ = ["DEFAULT_NEW", "DEFAULT_REVIEWS", "DEFAULT_ROLLOVER", "LEARNING_STEPS", "MAX_REDRILLS", "Entry", "LeechAction", "Limits",
           "Outcome", "Position", "Session", "Summary", "interleave_by_kind", "local_now", "record_attempt",
           "room_today"]

LEARNING_STEPS = (timedelta(minutes=1), timedelta(minutes=10))
"""When a failed card comes back, as Anki's learning steps: 1 minute after its first failure, then 10
minutes after each later one; sooner only when nothing else is left to show. Until then the other due
cards and the new ones come first, so a learner who fails everything still meets the day's new cards."""

MAX_REDRILLS = 3
"""Re-drills of one card in one session at most: past them it waits for its next review (tomorrow), so
a learner who keeps failing a card is not held on it (the loop is bounded)."""


class LeechAction(StrEnum):
    """What happens to a card the moment it becomes a leech (``LEECH_LAPSES`` lapses), as in Anki."""

    SUSPEND = "suspend"  # tagged and suspended: it stops costing time until the learner rewrites it
    TAG = "tag"  # tagged only: it keeps coming up


def local_now() -> datetime:
    """The wall clock as an aware local time: the default clock of a session."""
    return datetime.now().astimezone()


@dataclass(frozen=True)
class Position:
    index: int  # the current card's number, from 1
    total: int  # answered so far plus still queued
    new: int  # still queued (the current card included), by kind
    review: int
    redrill: int
    cram: int = 0  # a cram session's cards (bertdrill review --cram)


@dataclass(frozen=True)
class Outcome:
    """What an answer did, once it is committed."""

    entry: Entry
    grade: int
    review_id: int
    before: Schedule
    after: Schedule
    again: bool  # the card comes back later in this session
    kind: AnswerKind  # as logged: the entry's kind, or REDRILL when another session answered the card first today
    suspended: bool = False  # the answer made the card a leech, and the session suspended it
    study_day: date | None = None  # the study day it was logged on
    buried: tuple[str, ...] = ()  # its siblings, buried until the next study day: the answer gave theirs away

    @property
    def rescheduled(self) -> bool:
        return self.kind is not AnswerKind.REDRILL and self.kind.schedules

    @property
    def became_leech(self) -> bool:
        """This answer made the card a leech (its lapses reached ``LEECH_LAPSES``)."""
        return became_leech(self.before, self.after)


@dataclass(frozen=True)
class Summary:
    answered: int  # answers given, re-drills included
    correct: int  # answers graded 3 or more
    redrills: int  # answers that were re-drills
    seconds: float  # since the session started
    due_tomorrow: int  # cards due by the next study day
    left: int  # still queued when the session ended


@dataclass(frozen=True)
class _Step:
    """One undoable action: the queue and answer count before it, and how to reverse it in the store."""

    queue: int  # the queue's mark before it (Queue.back_to)
    answered: int
    review_id: int | None = None  # an answer: delete it and restore the schedule
    flags: tuple[CardState, ...] = ()  # a suspend or bury, a leech's suspension, siblings buried: the flags before
    action_id: int | None = None  # a suspension logged as a card action (the session's ``actions``): undo it


class Session:
    """One sitting of review. Answer, suspend, bury and undo act on :attr:`current`."""

    def __init__(
        self,
        store: ReviewStore,
        cards: Sequence[Card] | Deck,
        *,
        clock: Callable[[], datetime] = local_now,
        limits: Limits = Limits(),
        lessons: Collection[str] | None = None,
        scheduler: Scheduler = SM2(),
        follow: Callable[[SchedulerChoice], Scheduler] | None = None,
        leech_action: LeechAction = LeechAction.SUSPEND,
        numbers: FreshNumbers | None = None,
        bury_siblings: bool = True,
        cram: bool = False,
        actions: CardManagement | None = None,
    ):
        self.store = store
        self.actions = actions  # where suspensions are logged as card actions (bertdrill cards history shows them)
        self.cram = cram  # every card of the lessons, answers logged as cram: see _cram_queue
        self.bury_siblings = bury_siblings and not cram  # Anki's "bury siblings": see _build_queue
        self.numbers = numbers  # fresh variants for numeric cards; None: every card asks its own set
        self.scheduler = scheduler
        # follow: how to build the scheduler of a stored choice; given, each answer schedules under the choice the
        # store holds when it commits (read in its own transaction), so a switch made in another window reaches
        # this session; the preview follows it too
        self.follow = follow
        self._followed: SchedulerChoice | None = None
        self.leech_action = leech_action
        self.clock = clock
        self.limits = limits
        self.deck = cards if isinstance(cards, Deck) else Deck.of(cards)  # the cards are built when shown
        self.lessons = sorted(lessons if lessons is not None else self.deck.lesson_ids)
        self.started = clock()
        self.day = self.study_day(self.started)
        self._siblings: dict[str, frozenset[str]] = {}  # card -> the cards its answer gives away (core.leaks)
        self._held: set[str] = set()  # cards left out of today's queue for a sibling in it: buried once it is answered
        # the forecast the load balancer spreads answers over (bertdrill.core.scheduling.spread), moved as answered:
        # read when a preview or an answer first needs it, not before the first card is shown (a pass over every
        # schedule: 30-60 ms on 100,000 cards)
        self._balancing = bool(getattr(scheduler, "balancing", False))
        self._balanced: Load | None = None
        self._queue = Queue(self._cram_queue(), build=self.deck.cards) if cram else Queue(self._build_queue())
        self._answers: list[Outcome] = []
        self._repeats: Counter[tuple[str, AnswerKind]] = Counter()  # the session's answers by card and kind logged
        self._steps: list[_Step] = []
        self._shown_at = self.started
        self._shown: _Shown | None = None  # the latest preview, which the answer gives when nothing changed since

    @property
    def _load(self) -> Load | None:
        """The load balancer's forecast, read from the store on first use (None: the scheduler does not balance)."""
        if self._balancing and self._balanced is None:
            self._balanced = Load.of(self.day, self.store.forecast(self.day, LOAD_BALANCE_DAYS + 1))
        return self._balanced

    # ----------------------------------------------------------------- the queue

    def study_day(self, moment: datetime) -> date:
        return study_day(moment, self.limits.rollover_hour)

    def _build_queue(self) -> list[Entry]:
        """Due cards, then today's re-drills, then new cards; with :attr:`bury_siblings`, no card after one
        whose answer gives it away (:func:`bertdrill.core.leaks.siblings`): it waits for another day, and
        the daily limits are filled with the cards after it, as Anki gathers its queue."""
        counts = self.store.day_counts(self.day, lessons=self.lessons)
        due = self.deck.cards(self.store.due_ids(self.day, lessons=self.lessons,
                                                 limit=room_today(counts, self.limits, 0)[0]))
        redrill = self.deck.cards(self.store.redrill_ids(self.day, lessons=self.lessons))
        spare = 3 if self.bury_siblings else 1  # new cards beyond the room, to take the place of held siblings
        new = self._new_cards(room_today(counts, self.limits, 0 if self.bury_siblings else len(due))[1] * spare)
        if self.bury_siblings:
            from bertdrill.core.leaks import siblings  # here: `status` imports this module, and needs no leak finder

            self._siblings = siblings([*due, *redrill, *new])
        given_away: set[str] = set()  # the cards whose answers the queue so far shows
        seen: set[str] = set()

        def gather(cards: Sequence[Card], kind: AnswerKind, room: int | None = None) -> list[Entry]:
            taken: list[Entry] = []
            for card in cards:
                if room is not None and len(taken) >= room:
                    break
                if card.id in seen:
                    continue
                if kind is not AnswerKind.REDRILL and card.id in given_away:  # a re-drill was answered already
                    self._held.add(card.id)
                    continue
                seen.add(card.id)
                given_away.update(self._siblings.get(card.id, ()))
                taken.append(Entry(card, kind))
            return taken

        due_entries = gather(due, AnswerKind.REVIEW)
        redrills = gather(redrill, AnswerKind.REDRILL)
        return [*due_entries, *redrills,
                *gather(new, AnswerKind.NEW, room_today(counts, self.limits, len(due_entries))[1])]

    def _cram_queue(self) -> list[Later]:
        """Cram (Anki's custom study without rescheduling): every card of the lessons that is not suspended or
        removed, reviewed and new ones (buried ones too: cramming is on purpose), interleaved by kind in lesson
        order, in no daily limit. Each answer is logged as ``cram`` and leaves the schedule alone; the day's due
        reviews still schedule when answered in a review.

        Queued by id, each card built when it is shown: the order is each lesson's order of new cards (the
        interleaving is lesson by lesson), and the store is asked a lesson at a time, so neither every card nor
        every id of the lessons is held at once (100,000 cards built took 270 MB)."""
        everything = 1 << 30
        included = set(self.lessons)
        queued: list[Later] = []
        for lesson_id in self.deck.lesson_ids:
            if lesson_id not in included:
                continue
            ids = set(self.store.due_ids(date.max, lessons=[lesson_id], limit=everything))  # due by the end of time
            ids.update(self.store.new_ids(date.max, lessons=[lesson_id], limit=everything))
            queued.extend(Later(card_id, AnswerKind.CRAM) for card_id in self.deck.new_order(lesson_id)
                          if card_id in ids)
        return queued

    def _new_cards(self, room: int) -> list[Card]:
        """At most ``room`` new cards, interleaved by kind, lesson by lesson.

        The order is fixed by the lesson (interleaved over all its cards, then the ones seen left
        out), so two short sessions show what one long one would. Lessons are asked one at a time,
        only until the room is filled: a big collection is not read whole for ten new cards.
        """
        if room <= 0:
            return []
        included = set(self.lessons)
        chosen: list[str] = []
        for lesson_id in self.deck.lesson_ids:
            order = self.deck.new_order(lesson_id) if lesson_id in included else []
            if not order:
                continue
            unseen = set(self.store.new_ids(self.day, lessons=[lesson_id], limit=len(order)))
            chosen.extend(card_id for card_id in order if card_id in unseen)
            if len(chosen) >= room:
                break
        return self.deck.cards(chosen[:room])

    @property
    def current(self) -> Entry | None:
        return self._queue.front

    @property
    def done(self) -> bool:
        return not self._queue

    def show(self) -> Entry | None:
        """The card to show now; the time to answer it is counted from this call.

        A re-drill whose learning step has passed comes before the rest; one still waiting comes
        when it is all that is left.
        """
        self._shown_at = now = self.clock()
        self._queue.bring_forward_ready(now)
        self._vary_current()
        return self.current

    def _vary_current(self) -> None:
        """Give the current card fresh numbers when :attr:`numbers` says so; once: undo shows the same again."""
        entry = self._queue.front
        if self.numbers is None or entry is None or not self.numbers.may_vary(entry.card):
            return
        interval = self.store.state(entry.card.id).schedule.interval
        card = self.numbers.ask(entry.card, interval=interval, attempt=len(self._answers))
        if card is not entry.card:
            self._queue.replace_front(replace(entry, card=card))

    @property
    def position(self) -> Position:
        count = self._queue.count
        answered = len(self._answers)
        return Position(index=answered + 1, total=answered + len(self._queue), new=count(AnswerKind.NEW),
                        review=count(AnswerKind.REVIEW), redrill=count(AnswerKind.REDRILL), cram=count(AnswerKind.CRAM))

    @property
    def answers(self) -> tuple[Outcome, ...]:
        return tuple(self._answers)

    def preview(self) -> NextStates | None:
        """What each grade 0-5 would make of the current card's schedule, from the session's scheduler.

        None for a re-drill: its answer leaves the schedule alone.
        """
        entry = self._require_current()
        if entry.kind is AnswerKind.CRAM:
            return None  # a cram answer leaves the schedule alone
        today = self.study_day(self.clock())
        # a re-drill answered already today, in this session or in one before it (the store's carried-over
        # re-drills are the session's first day's): its answer will not reschedule, so nothing is shown
        if entry.kind is AnswerKind.REDRILL and (today == self.day or any(
                outcome.entry.card.id == entry.card.id and outcome.study_day == today for outcome in self._answers)):
            return None
        if self.follow is None:
            state, scheduler = self.store.state(entry.card.id), self.scheduler
        else:
            state, choice = self.store.state_under_choice(entry.card.id)
            scheduler = self._scheduler_for(choice)
        load = self._load
        states = card_scheduler(scheduler, entry.card.id, load).next_states(state.schedule, today=today)
        self._shown = _Shown(entry.card.id, state.schedule, today, scheduler, _moves(load), states)
        return states

    def _scheduler_for(self, choice: SchedulerChoice) -> Scheduler:
        """The scheduler of ``choice`` (built by :attr:`follow`, once per choice): the session's own from now on."""
        if self.follow is not None and choice != self._followed:
            self.scheduler, self._followed = self.follow(choice), choice
        return self.scheduler

    # ----------------------------------------------------------------- actions

    def answer(self, grade: int, typed: str | None = None) -> Outcome:
        """Record a grade (0-5) for the current card, committed before this returns.

        The first answer of the study day reschedules the card with SM-2; a re-drill is
        logged but leaves the schedule alone. A grade below 4 brings the card back later.
        """
        entry = self._require_current()
        check_grade(grade)
        now = self.clock()
        day = self.study_day(now)
        queue, answered = self._queue.mark(), len(self._answers)
        load = self._load  # read before the answer is written: the answer's own move is added below
        # the store keeps the schedule if not the day's first answer; a cram answer never reschedules. Following the
        # stored choice, the store builds the scheduler of the choice it reads (rescheduler): none is built here
        follows = self.follow is not None and entry.kind.schedules
        reschedule = self._reviewing(self.scheduler, entry.card.id, load, grade, day) \
            if entry.kind.schedules and not follows else None

        def rescheduler(choice: SchedulerChoice) -> Callable[[Schedule], Schedule]:
            return self._reviewing(self._scheduler_for(choice), entry.card.id, load, grade, day)

        logged = self.store.answer(
            entry.card.id, grade=grade, kind=entry.kind, reviewed_at=now, study_day=day,
            reschedule=reschedule, typed=typed, duration_ms=_milliseconds(now - self._shown_at), once_per_day=True,
            variant=logged_variant(entry.card) if isinstance(entry.card, NumericCard) else None,
            rescheduler=rescheduler if follows else None,
        )
        if load is not None:
            load.moved(logged.before.due, logged.after.due)
        grade = logged.grade  # as the store logged it: a class server records a wrong answer's pass as a fail
        suspend = self.leech_action is LeechAction.SUSPEND and became_leech(logged.before, logged.after)
        flags: tuple[CardState, ...] = ()
        action_id = None
        if suspend:
            flags, action_id = self._suspended(entry.card.id, now, day)
        buried = self._bury_siblings(entry.card.id, day)
        flags += buried
        again_kind = AnswerKind.CRAM if entry.kind is AnswerKind.CRAM else AnswerKind.REDRILL
        drilled = self._repeats[entry.card.id, again_kind]
        drilled += logged.kind is AnswerKind.REDRILL  # (a cram's repeats: its earlier answers in the session)
        again = redrill_needed(grade) and not suspend and drilled < MAX_REDRILLS
        self._queue.take_front()
        self._queue.drop({state.card_id for state in buried} | ({entry.card.id} if suspend else set()))
        if again:  # after the rest of the queue, or sooner once its learning step has passed
            step = LEARNING_STEPS[min(drilled, len(LEARNING_STEPS) - 1)]
            self._queue.put_back(Entry(entry.card, again_kind, ready_at=now + step))
        outcome = Outcome(entry=entry, grade=grade, review_id=logged.id, before=logged.before,
                          after=logged.after, again=again, kind=logged.kind, suspended=suspend,
                          study_day=logged.study_day, buried=tuple(state.card_id for state in buried))
        self._answers.append(outcome)
        self._repeats[entry.card.id, outcome.kind] += 1
        self._steps.append(_Step(queue, answered, review_id=logged.id, flags=flags, action_id=action_id))
        return outcome

    def _reviewing(self, scheduler: Scheduler, card_id: str, load: Load | None, grade: int,
                   day: date) -> Callable[[Schedule], Schedule]:
        """What the store runs on the stored state, inside the answer's transaction: the state the preview showed for
        ``grade`` while the card is as it was previewed, on the same day, under the same scheduler and forecast, as
        Anki answers with the states it previewed (its ``CardAnswer`` carries them, checked against the card); else
        the scheduler's review of the state (the card changed in another window, the preview was not asked for)."""
        shown = self._shown

        def reviewed(state: Schedule) -> Schedule:
            if shown is not None and shown.shows(card_id, state, day, scheduler, _moves(load)):
                return shown.states.after(check_grade(grade))
            return card_scheduler(scheduler, card_id, load).review(state, grade, today=day)

        return reviewed

    def _suspended(self, card_id: str, now: datetime, day: date) -> tuple[tuple[CardState, ...], int | None]:
        """Suspend a card: logged as a card action where the session has ``actions``, else as a flag; what undo
        needs to take it back (the flags before, or the action's id)."""
        if self.actions is not None:
            return (), self.actions.manage(card_id, CardAction.SUSPEND, at=now, study_day=day).id
        return (self.store.set_flags(card_id, suspended=True),), None

    def _bury_siblings(self, card_id: str, day: date) -> tuple[CardState, ...]:
        """Bury until the next study day the cards this answer gave away that today's queue held back or still
        holds (not re-drills: those were answered today already); the flags before, for undo."""
        given_away = self._siblings.get(card_id, frozenset())
        if not given_away:
            return ()
        answered = {outcome.entry.card.id for outcome in self._answers}  # and those buried already, by an answer
        answered.update(other for outcome in self._answers for other in outcome.buried)
        chosen = sorted(other for other in given_away - answered - {card_id}
                        if other in self._held or self._queue.holds(other, but=AnswerKind.REDRILL))
        return tuple(self.store.set_flags(other, buried_until=day + timedelta(days=1)) for other in chosen)

    def suspend(self) -> Entry:
        """Suspend the current card: it leaves this session and every later one until unsuspended."""
        return self._set_aside(suspended=True)

    def bury(self) -> Entry:
        """Hide the current card until the study day after the current one (not the one the session began on)."""
        return self._set_aside(buried_until=self.study_day(self.clock()) + timedelta(days=1))

    def _set_aside(self, *, suspended: bool | None = None, buried_until: date | None = None) -> Entry:
        entry = self._require_current()
        queue, answered = self._queue.mark(), len(self._answers)
        if suspended:
            now = self.clock()
            flags, action_id = self._suspended(entry.card.id, now, self.study_day(now))
        else:
            flags, action_id = (self.store.set_flags(entry.card.id, buried_until=buried_until),), None
        self._queue.take_front()
        self._queue.drop({entry.card.id})
        self._steps.append(_Step(queue, answered, flags=flags, action_id=action_id))
        return entry

    @property
    def can_undo(self) -> bool:
        return bool(self._steps)

    def undo(self) -> Entry | None:
        """Take back the latest answer, suspend or bury: the store and the queue are as before it.

        Repeatable, back to the start of the session. Returns the card that is current
        again, or None when there is nothing to undo. When the store refuses (the card was
        answered again in another window), the error is raised and the step is dropped all
        the same, so the next undo reaches the step before it.
        """
        if not self._steps:
            return None
        step = self._steps.pop()
        if step.action_id is not None and self.actions is not None:  # a suspension logged as a card action
            self.actions.undo_action(step.action_id)
        for flags in reversed(step.flags):  # a suspend or bury, or a leech suspended and siblings buried by the answer
            self.store.set_flags(flags.card_id, suspended=flags.suspended, buried_until=flags.buried_until)
        if step.review_id is not None:
            load = self._load  # read before the undo is written (an answer read it already)
            self.store.undo(step.review_id)
            if load is not None:  # the answer's card is due where it was again
                undone = self._answers[step.answered]
                load.moved(undone.after.due, undone.before.due)
        self._queue.back_to(step.queue)
        for outcome in self._answers[step.answered:]:
            self._repeats[outcome.entry.card.id, outcome.kind] -= 1
        del self._answers[step.answered:]
        self._shown_at = self.clock()
        return self.current

    def summary(self) -> Summary:
        tomorrow = self.study_day(self.clock()) + timedelta(days=1)
        return Summary(
            answered=len(self._answers),
            correct=sum(outcome.grade >= PASSING for outcome in self._answers),
            redrills=sum(outcome.kind is AnswerKind.REDRILL for outcome in self._answers),
            seconds=(self.clock() - self.started).total_seconds(),
            due_tomorrow=self.store.due_count(tomorrow, lessons=self.lessons),
            left=len(self._queue),
        )

    # ----------------------------------------------------------------- helpers

    def _require_current(self) -> Entry:
        if (entry := self._queue.front) is None:
            raise LookupError("the session has no card left")
        return entry


def record_attempt(store: ReviewQueue, card_id: str, grade: int, *, moment: datetime,
                   rollover_hour: int = DEFAULT_ROLLOVER, kind: AnswerKind = AnswerKind.PRACTICE, typed: str | None = None,
                   duration_ms: int = 0, scheduler: Scheduler = SM2()) -> Answer:
    """Log one answer outside a session (``bertdrill practice check``); returns the store's Answer.

    The first answer to the card on a study day reschedules it with SM-2, as in a
    session; later ones that day are only logged (the store decides, under its lock).
    """
    day = study_day(moment, rollover_hour)
    return store.answer(card_id, grade=grade, kind=kind, reviewed_at=moment, study_day=day,
                        reschedule=_rescheduler(card_scheduler(scheduler, card_id), grade, day), typed=typed,
                        duration_ms=duration_ms, once_per_day=True)


@dataclass(frozen=True)
class _Shown:
    """What a preview showed: the state each grade gives ``card_id`` from ``before`` on ``today`` under ``scheduler``,
    balanced over the forecast after ``moves`` of its moves (-1: none read)."""

    card_id: str
    before: Schedule
    today: date
    scheduler: Scheduler
    moves: int
    states: NextStates

    def shows(self, card_id: str, before: Schedule, today: date, scheduler: Scheduler, moves: int) -> bool:
        """Whether this preview is what reviewing ``card_id`` from ``before`` on ``today`` would show now."""
        return (self.card_id == card_id and self.before == before and self.today == today
                and self.scheduler is scheduler and self.moves == moves)


def _moves(load: Load | None) -> int:
    return -1 if load is None else load.moves


def _rescheduler(scheduler: Scheduler, grade: int, day: date) -> Callable[[Schedule], Schedule]:
    """What the store runs on the stored state, inside the answer's transaction."""
    return lambda state: scheduler.review(state, grade, today=day)


def _milliseconds(elapsed: timedelta) -> int:
    return max(0, int(elapsed.total_seconds() * 1000))
