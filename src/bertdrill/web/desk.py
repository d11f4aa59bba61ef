"""What a learner reviews with, and the sittings open in their browsers.

A :class:`Desk` holds one learner's store, cards and diagnosers: everything :class:`bertdrill.app.session.Session`
needs, built once. A :class:`Sitting` is one browser's review session (as one terminal window is): the same
``Session`` object the terminal drives, plus the answer graded but not yet recorded and the messages to show
once. Sittings live in memory: every recorded answer is already committed by
the store, so a restarted server loses only the undo history and the graded-but-ungraded answer.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bertdrill.app.scheduling import plan_exam, switch
from bertdrill.app.session import LeechAction, Limits, Session
from bertdrill.app.variants import FreshNumbers
from bertdrill.core.cards import Card
from bertdrill.core.diagnosis import Diagnoser
from bertdrill.core.grading import Verdict
from bertdrill.core.i18n import _
from bertdrill.core.lesson import Lesson, VariantMode
from bertdrill.core.scheduling.state import study_day
from bertdrill.ports import ExamAsked, ExamPlanned, ReviewStore, Scheduler, SchedulerAsked, SchedulerChoice, Switched

MAX_SITTINGS = 200  # per desk: the oldest idle one is dropped beyond this (its answers are all stored)
IDLE_SECONDS = 12 * 3600  # a sitting untouched this long is dropped


@dataclass
class Desk:
    """One learner's review: the store (opened and synced), the cards, each lesson's diagnoser."""

    store: ReviewStore
    cards: Sequence[Card]
    lessons: Sequence[str]
    diagnosers: Mapping[str, Diagnoser]
    languages: Sequence[str]  # the languages every lesson has texts in: what the pages may speak
    clock: Callable[[], datetime]
    limits: Limits = Limits()
    leech_action: LeechAction = LeechAction.SUSPEND
    scheduler: Callable[[ReviewStore], Scheduler] | None = None  # the learner's chosen scheduler, read per sitting
    # the lessons whose numeric cards may be asked with fresh numbers (their [variants]), and when:
    # ``numbers`` is the learner's choice (None: each lesson's own mode)
    varying: Mapping[str, Lesson] = field(default_factory=dict)
    numbers: VariantMode | None = None
    in_class: bool = False  # a class server's desk: a wrong answer's pass is recorded as a fail (app.served)
    lock: threading.Lock = field(default_factory=threading.Lock)  # one learner's store: one request at a time

    def session(self) -> Session:
        kwargs: dict[str, Any] = {"scheduler": self.scheduler(self.store)} if self.scheduler else {}
        if self.varying:  # each sitting draws its own numbers, as each terminal session does
            kwargs["numbers"] = FreshNumbers(self.varying, mode=self.numbers, salt=secrets.randbits(32))
        return Session(self.store, self.cards, clock=self.clock, limits=self.limits, lessons=self.lessons,
                       leech_action=self.leech_action, **kwargs)

    def diagnoser(self, session: Session, card: Card) -> Diagnoser | None:
        """What explains a wrong number on ``card``: for fresh numbers, a diagnoser of the variant's own."""
        if session.numbers is None:
            return self.diagnosers.get(card.lesson_id)
        return session.numbers.diagnoser(card, self.diagnosers)


@dataclass
class Pending:
    """An answer graded and shown, waiting for the learner's grade (nothing is stored yet)."""

    card_id: str
    typed: str | None
    verdict: Verdict | None  # None: a fact card revealed without a typed answer


@dataclass
class Sitting:
    """One browser's review session."""

    id: str
    session: Session
    pending: Pending | None = None
    notices: list[str] = field(default_factory=list)
    used: float = field(default_factory=time.monotonic)
    started: int = 0  # the desk's restarts when this session began (:meth:`Sittings.restart`)

    def take_notices(self) -> list[str]:
        notices, self.notices = self.notices, []
        return notices


class Sittings:
    """The open sittings of one desk, by the id in the browser's cookie (a random token)."""

    def __init__(self, desk: Desk, *, limit: int = MAX_SITTINGS, idle: float = IDLE_SECONDS,
                 switched: Callable[[], None] = lambda: None):
        self.desk = desk
        self.switched = switched  # told after the learner's scheduler was switched (the class server's API's balance)
        self.limit = limit
        self.idle = idle
        self._open: OrderedDict[str, Sitting] = OrderedDict()
        self._restarts = 0
        self._why = ""

    def restart(self, why: str) -> None:
        """Start every open sitting again when it is next reached, over what is due then: the learner switched
        scheduler, so the queues and the scheduler the sessions hold are the old choice's. What a sitting holds
        graded but unrecorded, and its undo, are dropped (an undo would put back a schedule of the old choice);
        every recorded answer is stored. ``why`` is shown there once."""
        self._restarts += 1
        self._why = why

    def switch_scheduler(self, asked: SchedulerAsked, follow: Callable[[SchedulerChoice], Scheduler]) -> Switched:
        """Switch the learner's scheduler as ``asked`` (:func:`bertdrill.app.scheduling.switch`: the store's
        all-or-nothing replay, a fit on their own log first if asked), under the desk's lock so none of their
        pages answers meanwhile; their open sittings then start again on the new schedules."""
        now = self.desk.clock()
        with self.desk.lock:
            done = switch(self.desk.store, asked, study_day(now, self.desk.limits.rollover_hour), follow, now=now)
            if done.switch is not None:
                self._replanned()
        return done

    def plan_exam(self, asked: ExamAsked, follow: Callable[[SchedulerChoice], Scheduler]) -> ExamPlanned:
        """Set (or end) the learner's exam plan (:func:`bertdrill.app.scheduling.plan_exam`) over the desk's cards,
        at its daily limits, as :meth:`switch_scheduler` switches."""
        today = study_day(self.desk.clock(), self.desk.limits.rollover_hour)
        with self.desk.lock:
            planned = plan_exam(self.desk.store, self.desk.cards, asked, today, follow, new=self.desk.limits.new,
                                limit=self.desk.limits.reviews)
            if planned.switch is not None:
                self._replanned()
        return planned

    def _replanned(self) -> None:
        self.restart(_("Your scheduler was switched: the review starts again over what is due now."))
        self.switched()

    def find(self, sitting_id: str | None) -> Sitting | None:
        """The sitting with this id, still open; None for an unknown, expired or missing id."""
        sitting = self._open.get(sitting_id) if sitting_id else None
        if sitting is None:
            return None
        if time.monotonic() - sitting.used > self.idle:
            del self._open[sitting.id]
            return None
        sitting.used = time.monotonic()
        self._open.move_to_end(sitting.id)
        if sitting.started != self._restarts:
            sitting.session, sitting.pending, sitting.started = self.desk.session(), None, self._restarts
            sitting.notices.append(self._why)
        return sitting

    def start(self) -> Sitting:
        """A new sitting over what is due now (the queue is read from the store)."""
        sitting = Sitting(secrets.token_urlsafe(24), self.desk.session(), started=self._restarts)
        self._open[sitting.id] = sitting
        while len(self._open) > self.limit:
            self._open.popitem(last=False)
        return sitting
