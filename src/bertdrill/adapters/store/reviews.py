"""A review, in the store: syncing cards, today's queue, answers, flags and undo.

Each public method is one short unit of work in its own transaction, so an answer is on
disk when :meth:`ReviewWrites.answer` returns. "Only the first answer of a study day
reschedules" is decided inside the answer's write transaction, so two sessions answering
the same card at once log both answers and reschedule it once.

Every statement is built from the tables (:mod:`.schema`); the ones an answer runs are built
once, here, so SQLAlchemy compiles each once per process and an answer costs a few lookups.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Executable, bindparam, delete, exists, func, insert, literal, or_, select, update
from sqlalchemy.orm import aliased

from bertdrill.adapters.store import reading
from bertdrill.adapters.store.database import Database, first_row, learner_of, utc, whole
from bertdrill.adapters.store.scheduling import choice_of
from bertdrill.adapters.store.schema import (
    ACTION,
    ANSWER_KINDS,
    CARD,
    LEARNER,
    LESSON,
    REVIEW,
    SCHEDULE,
    SCHEDULE_FIELDS,
    STATE,
    TYPED_MAX,
    active,
    answered_on,
    checked_schedule,
    in_lessons,
    logged,
    mine_with_cards,
    state_of,
    unindexed,
)
from bertdrill.core.digests import cards_digest
from bertdrill.core.errors import StoreError
from bertdrill.core.i18n import _
from bertdrill.core.limits import DEFAULT_NEW, DEFAULT_REVIEWS
from bertdrill.core.scheduling.actions import CardAction, Managed, managed
from bertdrill.core.scheduling.state import EF_START, LEECH_LAPSES, REDRILL_BELOW, AnswerKind, Schedule, check_grade
from bertdrill.ports import KEEP, CardState, Keep, SchedulerChoice, SyncCard, SyncLesson, SyncReport

if TYPE_CHECKING:  # made where they are: a learner's start-up makes none (bertdrill.ports.later)
    from bertdrill.ports import Action, Answer


class ReviewWrites(Database):
    """The store's side of a review session (and of ``practice check``)."""

    # ----------------------------------------------------------------- sync

    def sync(self, cards: Sequence[SyncCard], *, now: datetime | None = None,
             track: Callable[[list[str]], Iterable[str]] = iter, schedules: bool = True) -> SyncReport:
        """Make the store's cards match the lessons' cards, keeping every schedule and history.

        Cards are matched by id. A new fingerprint (edited text) keeps the schedule; a card
        missing from its lesson (every lesson of ``cards`` counts as complete) is marked
        removed, with its history; a removed card that comes back is restored.

        Each lesson's cards are summed up in one digest (ids, kinds, order, fingerprints),
        kept in the ``lesson`` table: when every digest matches, sync is one small query
        and writes nothing, however many cards there are. Only a lesson whose digest
        differs is compared card by card. Needs ``id``, ``lesson_id``, ``item_id``, ``kind``
        and ``fingerprint`` of each card. ``track`` wraps the list of lessons to compare (the
        CLI passes a progress bar).
        """
        return self.sync_lessons(lessons_of(cards), now=now, track=track, schedules=schedules)

    def sync_lessons(self, lessons: Sequence[SyncLesson], *, now: datetime | None = None,
                     track: Callable[[list[str]], Iterable[str]] = iter, schedules: bool = True) -> SyncReport:
        """:meth:`sync`, given each lesson with its digest: a lesson whose digest is the stored one is not
        read at all (the lesson cache knows the digest of an unchanged lesson without reading its cards)."""
        digests = {lesson.id: lesson.digest for lesson in lessons}
        by_id = {lesson.id: lesson for lesson in lessons}
        if not digests:
            return SyncReport()
        stamp = now or datetime.now(UTC)

        def stale(connection: Connection) -> list[str]:
            found = connection.execute(select(LESSON.c.id, LESSON.c.digest).where(LESSON.c.id.in_(list(digests))))
            stored: dict[str, str] = {lesson_id: digest for lesson_id, digest in found}
            return [lesson_id for lesson_id, digest in digests.items() if stored.get(lesson_id) != digest]

        def apply(connection: Connection) -> SyncReport:
            database: Database = connection.info["database"]
            report = SyncReport()
            for lesson_id in track(stale(connection)):  # again, now under the write lock
                rows: list[tuple[str, str, str, str]] = [(card.id, card.item_id, card.kind, card.fingerprint)
                                                         for card in by_id[lesson_id].cards]
                report += _sync_lesson(connection, lesson_id, rows, stamp)
                row = database.upsert(LESSON).values(id=lesson_id, digest=digests[lesson_id],
                                                     cards=len(rows), synced_at=stamp)
                connection.execute(row.on_conflict_do_update(index_elements=[LESSON.c.id], set_={
                    name: row.excluded[name] for name in ("digest", "cards", "synced_at")}))
            if schedules:
                _add_schedules(connection)
            return report

        if not self._run(stale) and not (schedules and self._run(_schedules_missing)):
            return SyncReport()
        if self.reading:  # the lessons are synced into temporary copies of the tables: the database is untouched

            def shadowed(connection: Connection) -> SyncReport:
                if not connection.info.get("shadowed"):
                    reading.shadow(connection)
                    connection.info["shadowed"] = True
                return apply(connection)

            return self._run(shadowed, temporary=True)
        return self._run(apply, write=True)

    def schedule_every_card(self) -> None:
        """A schedule of this learner for every card the store has, writing nothing to the cards themselves:
        the class server's sync for a learner, whose lessons the teacher published (and may republish at any
        time: the store's cards are then newer than the server's, and still nothing is refused)."""
        if self._run(_schedules_missing):
            self._run(_add_schedules, write=True)

    # ----------------------------------------------------------------- the queue

    def due_ids(self, today: date, *, lessons: Collection[str] | None = None,
                limit: int = DEFAULT_REVIEWS) -> list[str]:
        """Cards due on or before ``today``, most overdue first (then in lesson order), at most ``limit``."""
        return self._ids(SCHEDULE.c.due <= today, (SCHEDULE.c.due, CARD.c.lesson_id, CARD.c.position), today=today,
                         lessons=lessons, limit=limit)

    def new_ids(self, today: date, *, lessons: Collection[str] | None = None, limit: int = DEFAULT_NEW) -> list[str]:
        """Cards never reviewed, in lesson order, at most ``limit``."""
        # Of one lesson (a review asks lesson by lesson): its cards in lesson order (ix_card_lesson), each one's
        # schedule by its key, up to the limit. The due-day index walks every lesson's unseen cards and sorts them:
        # 18 ms for a lesson's 1,419 of 14,000 (10,000 unseen in 100,000) against 10. Of several, that index is the
        # shorter walk (cram's every unseen card of 8 lessons: 28 ms against 75).
        unseen = (unindexed(SCHEDULE.c.due) if lessons is not None and len(lessons) == 1 else SCHEDULE.c.due).is_(None)
        return self._ids(unseen, (CARD.c.lesson_id, CARD.c.position), today=today, lessons=lessons, limit=limit)

    def redrill_ids(self, today: date, *, lessons: Collection[str] | None = None) -> list[str]:
        """Cards whose latest answer on ``today`` was below 4: still to re-drill today, oldest first."""
        # Today's answers (the day index) that no later answer today follows (the card index): a subquery
        # grouping by card_id would let the planner walk the learner's whole log in card order instead.
        later = aliased(REVIEW, name="later")
        followed = exists().where(later.c.learner == LEARNER, later.c.card_id == REVIEW.c.card_id,
                                  later.c.id > REVIEW.c.id, later.c.study_day == today,
                                  later.c.kind.not_in(_NOT_DRILLED))
        query = (select(REVIEW.c.card_id)
                 .select_from(REVIEW.join(mine_with_cards(), SCHEDULE.c.card_id == REVIEW.c.card_id))
                 .where(answered_on(today), REVIEW.c.kind.not_in(_NOT_DRILLED),  # the learner's, of the day
                        ~followed, REVIEW.c.grade < REDRILL_BELOW, active(today), in_lessons(lessons))
                 .order_by(REVIEW.c.id))
        return [row[0] for row in self.read(query)]

    def _ids(self, condition: Any, order: tuple[Any, ...], *, today: date, lessons: Collection[str] | None,
             limit: int) -> list[str]:
        query = (select(SCHEDULE.c.card_id).select_from(mine_with_cards())
                 .where(condition, active(today), in_lessons(lessons)).order_by(*order).limit(max(0, limit)))
        return [row[0] for row in self.read(query)]

    # ----------------------------------------------------------------- one card

    def state(self, card_id: str) -> CardState:
        return self._run(lambda connection: _state(connection, card_id, self.where))

    def state_under_choice(self, card_id: str) -> tuple[CardState, SchedulerChoice]:
        """In one read transaction: a second one was a sixth of an answer's CPU (SQLite, 1,000 cards)."""
        return self._run(lambda connection: (_state(connection, card_id, self.where), choice_of(connection)))

    def answer(
        self,
        card_id: str,
        *,
        grade: int,
        kind: AnswerKind,
        reviewed_at: datetime,
        study_day: date,
        reschedule: Callable[[Schedule], Schedule] | None = None,
        typed: str | None = None,
        duration_ms: int = 0,
        once_per_day: bool = False,
        variant: str | None = None,
        rescheduler: Callable[[SchedulerChoice], Callable[[Schedule], Schedule]] | None = None,
        request: str | None = None,
    ) -> Answer:
        """Log an answer and store the new schedule, in one committed transaction.

        ``request``: the id the answer's client made for it: when the learner's log holds an answer with it
        already (the same answer sent again, its reply lost), that answer is returned and nothing is logged.

        ``reschedule`` turns the stored schedule into the new one (``sm2.review`` for the
        first answer of a study day); it runs inside the transaction, on the state read
        there, so the "before" columns are exactly what was stored. None keeps the schedule.

        ``once_per_day``: reschedule only if the card has no answer yet on ``study_day``;
        otherwise log the answer as a ``redrill`` (a ``practice`` answer stays ``practice``)
        and keep the schedule (SM-2 step 7). The first answer of a study day always
        reschedules, whatever the caller's queue called it: a ``redrill`` answered after the
        rollover is logged as that day's ``review``. Decided under the write lock, so two sessions
        answering the same card at the same time reschedule it once. The returned
        :class:`Answer` has the kind that was logged.
        """
        if kind not in ANSWER_KINDS:
            raise ValueError(f"kind must be one of {ANSWER_KINDS}, got {kind!r}")
        kind = AnswerKind(kind)
        check_grade(grade)
        moment = utc(reviewed_at)
        kept = typed[:TYPED_MAX] if typed is not None else None
        asked = variant[:TYPED_MAX] if variant is not None else None
        duration = max(0, min(int(duration_ms), 86_400_000))

        attempts = 0

        def work(connection: Connection) -> Answer:
            nonlocal attempts
            attempts += 1
            if attempts > 1 and (saved := _logged_already(connection, card_id, moment)) is not None:
                return saved  # the try before committed, and its reply was lost with the connection
            answered: bool | None = None  # whether the card has an answer of the day already (once_per_day)
            if once_per_day and self.locked_from_begin:  # read with the state: SQLite's lock came before both
                found = _state_row(connection, card_id, self.where, _STATE_ANSWERED_ON, day=study_day)
                before, answered = state_of(found[:-1]).schedule, bool(found[-1])
            else:
                before = _state(connection, card_id, self.where, lock=True).schedule
            # after the card's lock: the same request sent twice at once waits here, then finds the first one's row
            if request is not None and (sent := _requested_already(connection, request)) is not None:
                return sent
            # the scheduler as stored now, under the card's lock (a switch holds every card's): what this commits under
            change = rescheduler(choice_of(connection)) if rescheduler is not None else reschedule
            logged_kind = kind
            if once_per_day and change is not None:
                # PostgreSQL: read only now, after the row lock (an answer it waited for is committed and seen)
                first = not (answered if answered is not None else _answered_on(connection, card_id, study_day))
                logged_kind = kind.logged_as(first_of_day=first)
                change = change if first else None
            if not kind.schedules:  # a cram answer keeps the schedule, whatever the caller passed
                change = None
            after = change(before) if change else before
            _set_schedule(connection, card_id, after)
            logged_row = first_row(connection, _LOG, {
                "learner": self.learner, "card_id": card_id, "reviewed_at": moment, "study_day": study_day,
                "kind": logged_kind, "grade": grade, "typed": kept, "duration_ms": duration, "variant": asked,
                "request": request,
                **_columns(before, "before"), **_columns(after, "after")})
            assert logged_row is not None  # RETURNING id: one row
            self.leaves_kept_reads(connection)  # a schedule and a row of the log: the choice as it was
            review_id = whole(logged_row[0])
            from bertdrill.ports import Answer

            return Answer(review_id, card_id, moment, study_day, logged_kind, grade, kept, duration, before, after,
                          asked)

        return self._run(work, write=True)

    def undo(self, review_id: int) -> CardState:
        """Delete a logged answer and put the card's schedule back exactly as it was before it."""

        def work(connection: Connection) -> CardState:
            found = connection.execute(_ANSWERS.where(REVIEW.c.id == review_id), {"learner": self.learner}).first()
            if found is None:
                raise StoreError(_("answer {id} is not in the log (already undone?)").format(id=review_id))
            review = _answer(found)
            _state(connection, review.card_id, self.where, lock=True)  # another window's answer waits, or came first
            latest = connection.execute(select(func.max(REVIEW.c.id)).where(
                REVIEW.c.learner == self.learner, REVIEW.c.card_id == review.card_id)).scalar()
            if latest != review_id:
                raise StoreError(_("{card} was answered again since (in another window?), and only its latest "
                                   "answer can be undone").format(card=review.card_id))
            _set_schedule(connection, review.card_id, review.before)
            connection.execute(delete(REVIEW).where(REVIEW.c.id == review_id, REVIEW.c.learner == self.learner))
            return _state(connection, review.card_id, self.where)

        return self._run(work, write=True)

    def set_flags(self, card_id: str, *, suspended: bool | None = None,
                  buried_until: date | None | Keep = KEEP) -> CardState:
        """Suspend or unsuspend a card, or bury it until a day (None unburies). Returns the state before."""
        flags: dict[str, Any] = {} if suspended is None else {"suspended": suspended}
        if not isinstance(buried_until, Keep):
            flags["buried_until"] = buried_until

        def work(connection: Connection) -> CardState:
            before = _state(connection, card_id, self.where, lock=True)
            if flags:
                connection.execute(update(SCHEDULE).where(SCHEDULE.c.learner == self.learner,
                                                          SCHEDULE.c.card_id == card_id).values(**flags))
            return before

        return self._run(work, write=True)

    # ----------------------------------------------------------------- card actions (bertdrill cards)

    def manage(self, card_id: str, action: CardAction, *, at: datetime, study_day: date,
               due: date | None = None) -> Action:
        """Apply a card action (:func:`bertdrill.core.scheduling.actions.managed`) and log it, in one transaction."""
        action = CardAction(action)
        moment = utc(at)

        def work(connection: Connection) -> Action:
            state = _state(connection, card_id, self.where, lock=True)
            after = managed(Managed(state.schedule, state.suspended), action, today=study_day, due=due)
            _set_schedule(connection, card_id, after.schedule)
            connection.execute(update(SCHEDULE).where(SCHEDULE.c.learner == self.learner,
                                                      SCHEDULE.c.card_id == card_id).values(suspended=after.suspended))
            action_id = connection.execute(insert(ACTION).returning(ACTION.c.id), {
                "learner": self.learner, "card_id": card_id, "at": moment, "study_day": study_day, "action": action,
                **_columns(state.schedule, "before"), **_columns(after.schedule, "after"),
                "suspended_before": state.suspended, "suspended_after": after.suspended}).scalar_one()
            from bertdrill.ports import Action

            return Action(action_id, card_id, moment, study_day, action, state.schedule, after.schedule,
                          state.suspended, after.suspended)

        return self._run(work, write=True)

    def undo_action(self, action_id: int | None = None) -> Action:
        """Put the card back as it was before the action (None: the learner's latest) and delete the action.

        Refused when the card is no longer as the action left it (answered, or changed by another action since)."""

        def work(connection: Connection) -> Action:
            query = _ACTIONS.order_by(ACTION.c.id.desc()).limit(1)
            if action_id is not None:
                query = query.where(ACTION.c.id == action_id)
            found = connection.execute(query, {"learner": self.learner}).first()
            if found is None:
                raise StoreError(_("no card action to undo") if action_id is None
                                 else _("card action {id} is not in the log (already undone?)").format(id=action_id))
            done = _action(found)
            state = _state(connection, done.card_id, self.where, lock=True)
            if (state.schedule, state.suspended) != (done.after, done.suspended_after):
                raise StoreError(_("{card} has changed since its {action} (answered, or changed again), so it "
                                   "is left as it is").format(card=done.card_id, action=done.action))
            _set_schedule(connection, done.card_id, done.before)
            connection.execute(update(SCHEDULE).where(SCHEDULE.c.learner == self.learner,
                                                      SCHEDULE.c.card_id == done.card_id).values(
                                                          suspended=done.suspended_before))
            connection.execute(delete(ACTION).where(ACTION.c.id == done.id, ACTION.c.learner == self.learner))
            return done

        return self._run(work, write=True)

    def actions(self, card_id: str | None = None) -> list[Action]:
        """The card actions' log, oldest first: for one card, or all of it."""
        query = _ACTIONS.order_by(ACTION.c.id)
        if card_id is not None:
            query = query.where(ACTION.c.card_id == card_id)
        return [_action(row) for row in self.read(query)]

    def answers(self, card_id: str | None = None, *, since: date | None = None) -> list[Answer]:
        """The log, oldest first: for one card, or all of it (from a study day on)."""
        query = _ANSWERS.order_by(REVIEW.c.id)
        if card_id is not None:
            query = query.where(REVIEW.c.card_id == card_id)
        if since is not None:
            query = query.where(REVIEW.c.study_day >= since)
        return [_answer(row) for row in self.read(query)]


# --------------------------------------------------------------------------- helpers

_LOGGED = [logged(field, when) for when in ("before", "after") for field in SCHEDULE_FIELDS]
_ANSWER_COLUMNS = (REVIEW.c.id, REVIEW.c.card_id, REVIEW.c.reviewed_at, REVIEW.c.study_day, REVIEW.c.kind,
                   REVIEW.c.grade, REVIEW.c.typed, REVIEW.c.duration_ms, *(REVIEW.c[name] for name in _LOGGED),
                   REVIEW.c.variant)
_ANSWERS = select(*_ANSWER_COLUMNS).where(REVIEW.c.learner == LEARNER)
"""The learner's log, as :func:`_answer` reads it."""
_ACTION_COLUMNS = (ACTION.c.id, ACTION.c.card_id, ACTION.c.at, ACTION.c.study_day, ACTION.c.action,
                   *(ACTION.c[name] for name in _LOGGED), ACTION.c.suspended_before, ACTION.c.suspended_after)
_ACTIONS = select(*_ACTION_COLUMNS).where(ACTION.c.learner == LEARNER)
"""The learner's card actions, as :func:`_action` reads them."""
_LOG = insert(REVIEW).values({name: bindparam(name) for name in (
    "learner", "card_id", "reviewed_at", "study_day", "kind", "grade", "typed", "duration_ms", "variant", "request",
    *_LOGGED)}).returning(REVIEW.c.id)
"""An answer's row: the parameters by column name, each named (a statement compiled once: :class:`.Precompiled`)."""
_STATE_OF_CARD = STATE.where(SCHEDULE.c.card_id == bindparam("card"))
_LOCKED_STATE_OF_CARD = _STATE_OF_CARD.with_for_update(of=SCHEDULE)  # PostgreSQL's row lock; SQLite's write
# transaction holds the whole file already, and SQLAlchemy writes no FOR UPDATE for it
_ANSWERED_ON = select(literal(1)).where(REVIEW.c.learner == LEARNER, REVIEW.c.card_id == bindparam("card"),
                                        unindexed(REVIEW.c.study_day) == bindparam("day"),
                                        REVIEW.c.kind != AnswerKind.CRAM.value).limit(1)
"""Whether the card has an answer on the day that counts as the day's (a cram answer does not: AnswerKind.schedules)."""
_STATE_ANSWERED_ON = _STATE_OF_CARD.add_columns(_ANSWERED_ON.exists())
"""A card's state and, last, whether it has an answer of the day (parameter ``day``): one statement where the write
transaction holds the database already (``Database.locked_from_begin``)."""
_NOT_DRILLED = [kind.value for kind in AnswerKind if kind is AnswerKind.PRACTICE or not kind.schedules]
"""Answers that never bring a card back to re-drill: practice checks and cram answers."""
_SET_SCHEDULE = update(SCHEDULE).where(SCHEDULE.c.learner == bindparam("owner"), SCHEDULE.c.card_id == bindparam("card")
                                       ).values({field: bindparam(f"new_{field}") for field in (*SCHEDULE_FIELDS, "leech")})
"""A card's new schedule (parameters ``new_due`` and so on: an UPDATE keeps the columns' own names for itself)."""


@dataclass(frozen=True)
class _Lesson:
    """A lesson's cards as :meth:`ReviewWrites.sync` is given them, with their digest."""

    id: str
    digest: str
    cards: Sequence[SyncCard]


def lessons_of(cards: Sequence[SyncCard]) -> list[_Lesson]:
    """Cards grouped by lesson (each lesson's in the order given), each lesson with its cards' digest."""
    by_lesson: dict[str, list[SyncCard]] = {}
    for card in cards:
        by_lesson.setdefault(card.lesson_id, []).append(card)
    return [_Lesson(lesson_id, cards_digest((card.id, card.item_id, card.kind, card.fingerprint) for card in rows), rows)
            for lesson_id, rows in by_lesson.items()]


def _sync_lesson(connection: Connection, lesson_id: str, rows: list[tuple[str, str, str, str]],
                 stamp: datetime) -> SyncReport:
    """Compare one lesson card by card and write the differences."""
    found = connection.execute(select(CARD.c.id, CARD.c.item_id, CARD.c.kind, CARD.c.position, CARD.c.fingerprint,
                                      CARD.c.removed).where(CARD.c.lesson_id == lesson_id))
    stored: dict[str, tuple[Any, ...]] = {row[0]: tuple(row) for row in found}
    added: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    restored: list[dict[str, Any]] = []
    for position, (card_id, item_id, kind, fingerprint) in enumerate(rows):
        row = stored.get(card_id)
        values = {"card": card_id, "item_id": item_id, "kind": kind, "position": position,
                  "fingerprint": fingerprint, "removed": False, "updated": stamp}
        if row is None:
            added.append(values | {"lesson_id": lesson_id, "first_seen": stamp})
        elif row[5] or row[4] != fingerprint or (row[1], row[2], row[3]) != (item_id, kind, position):
            (restored if row[5] else changed if row[4] != fingerprint else moved).append(values)
    wanted = {row[0] for row in rows}
    removed = [{"card": card_id, "updated": stamp, "removed": True} for card_id, row in stored.items()
               if not row[5] and card_id not in wanted]
    if added:
        connection.execute(insert(CARD).values(id=bindparam("card")), added)  # the other columns: the parameters
    for rewritten in (changed + moved + restored, removed):
        if rewritten:  # SET: the parameters other than the card's id
            connection.execute(update(CARD).where(CARD.c.id == bindparam("card")), rewritten)
    return SyncReport(added=len(added), changed=len(changed), removed=len(removed), restored=len(restored),
                      moved=len(moved))


def _schedules_missing(connection: Connection) -> bool:
    """Whether some card has no schedule of this learner yet (a card is never deleted, only marked removed, and
    a learner has one schedule a card, so equal counts mean every card has one).

    In a store no other learner has a schedule in (a learner's own file), this learner's schedules are the whole
    table's: SQLite counts a whole table from its smallest index without reading a row (0.6 ms for 100,000
    schedules, where this learner's, through the due-day index, took 8 of every ``status``, ``stats`` and
    ``review``). Another learner's schedule is looked for on the primary key, on either side of this learner."""
    learner = learner_of(connection)
    cards = connection.execute(select(func.count()).select_from(CARD)).scalar_one()
    others = connection.execute(select(exists().where(
        or_(SCHEDULE.c.learner < learner, SCHEDULE.c.learner > learner)))).scalar_one()
    schedules = select(func.count()).select_from(SCHEDULE)
    mine = connection.execute(schedules.where(SCHEDULE.c.learner == learner) if others else schedules).scalar_one()
    return bool(mine < cards)


def _add_schedules(connection: Connection) -> None:
    """A new schedule for this learner of every card that has none (a new card, or a learner new to the class)."""
    database: Database = connection.info["database"]
    learner = learner_of(connection)
    unscheduled = select(CARD.c.id, literal(0), literal(EF_START), literal(0), literal(0), literal(False),
                         literal(False), literal(learner)).where(~exists().where(
                             SCHEDULE.c.learner == learner, SCHEDULE.c.card_id == CARD.c.id))
    columns = ["card_id", "repetitions", "ef100", "interval", "lapses", "suspended", "leech", "learner"]
    connection.execute(database.upsert(SCHEDULE).from_select(columns, unscheduled, include_defaults=False)
                       .on_conflict_do_nothing())


def _state(connection: Connection, card_id: str, where: str, *, lock: bool = False) -> CardState:
    """The learner's state of a card; ``lock``: its schedule row stays locked until the transaction ends
    (PostgreSQL; SQLite's write transaction holds the whole file already)."""
    return state_of(_state_row(connection, card_id, where, _LOCKED_STATE_OF_CARD if lock else _STATE_OF_CARD))


def _state_row(connection: Connection, card_id: str, where: str, statement: Executable, **params: Any) -> Sequence[Any]:
    """The row of a statement of the card's state (:data:`.schema.STATE`'s columns first), or a StoreError."""
    found = first_row(connection, statement, {"learner": learner_of(connection), "card": card_id, **params})
    if found is None:
        raise StoreError(f"no card {card_id!r} in {where}; sync its lesson first")
    return found


def _logged_already(connection: Connection, card_id: str, moment: datetime) -> Answer | None:
    """The learner's answer to the card at exactly ``moment``, if the log has it: a unit run again after
    its connection dropped finds the answer its first try committed, and logs it no second time."""
    found = connection.execute(_ANSWERS.where(REVIEW.c.card_id == card_id, REVIEW.c.reviewed_at == moment),
                               {"learner": learner_of(connection)}).first()
    return None if found is None else _answer(found)


def _requested_already(connection: Connection, request: str) -> Answer | None:
    """The learner's answer sent with the client's id ``request``, if the log has it."""
    found = connection.execute(_ANSWERS.where(REVIEW.c.request == request),
                               {"learner": learner_of(connection)}).first()
    return None if found is None else _answer(found)


def _answered_on(connection: Connection, card_id: str, day: date) -> bool:
    """Whether the card has an answer on the study day: its few answers, through the card's index."""
    return first_row(connection, _ANSWERED_ON, {"learner": learner_of(connection), "card": card_id, "day": day}) is not None


def _set_schedule(connection: Connection, card_id: str, schedule: Schedule) -> None:
    first_row(connection, _SET_SCHEDULE, {"owner": learner_of(connection), "card": card_id,
                                          "new_leech": schedule.lapses >= LEECH_LAPSES,
                                          **dict(zip(_NEW_NAMES, _schedule_values(schedule), strict=True))})


_NEW_NAMES = tuple(f"new_{field}" for field in SCHEDULE_FIELDS)
_LOGGED_NAMES = {when: tuple(logged(field, when) for field in SCHEDULE_FIELDS) for when in ("before", "after")}
_schedule_values = attrgetter(*SCHEDULE_FIELDS)  # a schedule's fields in SCHEDULE_FIELDS' order (names made once)


def _columns(schedule: Schedule, suffix: str) -> dict[str, Any]:
    return dict(zip(_LOGGED_NAMES[suffix], _schedule_values(schedule), strict=True))


def _answer(row: Sequence[Any]) -> Answer:
    """An :class:`Answer` from a row of ``_ANSWER_COLUMNS`` (the types have made dates and UTC times of them)."""
    from bertdrill.ports import Answer

    review_id, card_id, reviewed_at, study_day, kind, grade, typed, duration_ms = row[:8]
    before, after = (checked_schedule(*values) for values in (row[8:15], row[15:22]))
    if not isinstance(reviewed_at, datetime) or not isinstance(study_day, date):
        raise TypeError(f"answer {review_id!r}: not a time and a day: {reviewed_at!r}, {study_day!r}")
    check_grade(whole(grade))
    return Answer(whole(review_id), card_id, reviewed_at, study_day, AnswerKind(kind), grade, typed,
                  whole(duration_ms), before, after, row[22])


def _action(row: Sequence[Any]) -> Action:
    """An :class:`Action` from a row of ``_ACTION_COLUMNS``."""
    from bertdrill.ports import Action

    action_id, card_id, at, study_day, action = row[:5]
    before, after = (Schedule(*values) for values in (row[5:12], row[12:19]))
    return Action(action_id, card_id, at, study_day, CardAction(action), before, after, bool(row[19]), bool(row[20]))
