"""A review, in the store: syncing cards, today's queue, answers, flags and undo.

Each public method is one short unit of work in its own transaction, so an answer is on
disk when :meth:`ReviewWrites.answer` returns. "Only the first answer of a study day
reschedules" is decided inside the answer's write transaction, so two sessions answering
the same card at once log both answers and reschedule it once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, date, datetime
from typing import Any

from sqlmodel import Session

from bertdrill.adapters.store.database import Database, as_date, as_utc, day_of, execute, execute_many, utc
from bertdrill.adapters.store.schema import (
    ACTIVE,
    ANSWER_KINDS,
    FROM_CARDS,
    STATE_COLUMNS,
    TYPED_MAX,
    lesson_filter,
    state_of,
)
from bertdrill.core.errors import StoreError
from bertdrill.core.limits import DEFAULT_NEW, DEFAULT_REVIEWS
from bertdrill.core.scheduling.sm2 import EF_START, LEECH_LAPSES, REDRILL_BELOW, Schedule, check_grade
from bertdrill.ports import KEEP, Answer, CardState, Keep, SyncCard, SyncReport


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
        by_lesson: dict[str, list[tuple[str, str, str, str]]] = {}
        for card in cards:
            by_lesson.setdefault(card.lesson_id, []).append((card.id, card.item_id, card.kind, card.fingerprint))
        digests = {lesson_id: _digest(rows) for lesson_id, rows in by_lesson.items()}
        if not digests:
            return SyncReport()
        stamp = now or datetime.now(UTC)

        def stale(session: Session) -> list[str]:
            found = execute(session, "SELECT id, digest FROM lesson WHERE id IN :lessons", list(digests))
            stored: dict[str, str] = dict(tuple(row) for row in found)
            return [lesson_id for lesson_id, digest in digests.items() if stored.get(lesson_id) != digest]

        def apply(session: Session) -> SyncReport:
            report = SyncReport()
            for lesson_id in track(stale(session)):  # again, now under the write lock
                report += _sync_lesson(session, lesson_id, by_lesson[lesson_id], stamp)
                execute(session, "INSERT INTO lesson (id, digest, cards, synced_at) "
                        "VALUES (:id, :digest, :cards, :stamp) ON CONFLICT (id) DO UPDATE SET "
                        "digest = excluded.digest, cards = excluded.cards, synced_at = excluded.synced_at",
                        id=lesson_id, digest=digests[lesson_id], cards=len(by_lesson[lesson_id]), stamp=stamp)
            if schedules:
                _add_schedules(session)
            return report

        if not self._run(stale) and not (schedules and self._run(_schedules_missing)):
            return SyncReport()
        return self._run(apply, write=True)

    # ----------------------------------------------------------------- the queue

    def due_ids(self, today: date, *, lessons: Collection[str] | None = None,
                limit: int = DEFAULT_REVIEWS) -> list[str]:
        """Cards due on or before ``today``, most overdue first (then in lesson order), at most ``limit``."""
        return self._ids("s.due <= :today", "s.due, c.lesson_id, c.position", today=today, lessons=lessons,
                         limit=limit)

    def new_ids(self, today: date, *, lessons: Collection[str] | None = None, limit: int = DEFAULT_NEW) -> list[str]:
        """Cards never reviewed, in lesson order, at most ``limit``."""
        return self._ids("s.due IS NULL", "c.lesson_id, c.position", today=today, lessons=lessons, limit=limit)

    def redrill_ids(self, today: date, *, lessons: Collection[str] | None = None) -> list[str]:
        """Cards whose latest answer on ``today`` was below 4: still to re-drill today, oldest first."""
        # Today's answers (the day index) that no later answer today follows (the card index): a subquery
        # grouping by card_id would let the planner walk the learner's whole log in card order instead.
        query = (
            "SELECT r.card_id FROM review r JOIN schedule s ON s.card_id = r.card_id AND s.learner = :learner "
            "JOIN card c ON c.id = r.card_id "
            "WHERE r.learner = :learner AND r.study_day = :today AND r.kind != 'practice' "
            "AND NOT EXISTS (SELECT 1 FROM review later WHERE later.learner = :learner "
            "AND later.card_id = r.card_id AND later.id > r.id AND later.study_day = :today "
            "AND later.kind != 'practice') "
            f"AND r.grade < {REDRILL_BELOW} {ACTIVE} {lesson_filter(lessons)} ORDER BY r.id"
        )
        return [row[0] for row in self.rows(query, lessons, today=today)]

    def _ids(self, condition: str, order: str, *, today: date, lessons: Collection[str] | None,
             limit: int) -> list[str]:
        query = (f"SELECT s.card_id {FROM_CARDS} WHERE {condition} {ACTIVE} {lesson_filter(lessons)} "
                 f"ORDER BY {order} LIMIT :limit")
        return [row[0] for row in self.rows(query, lessons, today=today, limit=max(0, limit))]

    # ----------------------------------------------------------------- one card

    def state(self, card_id: str) -> CardState:
        return self._run(lambda session: _state(session, card_id, self.where))

    def answer(
        self,
        card_id: str,
        *,
        grade: int,
        kind: str,
        reviewed_at: datetime,
        study_day: date,
        reschedule: Callable[[Schedule], Schedule] | None = None,
        typed: str | None = None,
        duration_ms: int = 0,
        once_per_day: bool = False,
        variant: str | None = None,
    ) -> Answer:
        """Log an answer and store the new schedule, in one committed transaction.

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
        check_grade(grade)
        moment = utc(reviewed_at)
        kept = typed[:TYPED_MAX] if typed is not None else None
        asked = variant[:TYPED_MAX] if variant is not None else None
        duration = max(0, min(int(duration_ms), 86_400_000))

        def work(session: Session) -> Answer:
            before = _state(session, card_id, self.where, lock=True).schedule
            change, logged_kind = reschedule, kind
            if once_per_day and reschedule is not None:
                if _answered_on(session, card_id, study_day):
                    change, logged_kind = None, ("practice" if kind == "practice" else "redrill")
                elif kind == "redrill":  # a re-drill after the rollover is the new day's first answer
                    logged_kind = "review"
            after = change(before) if change else before
            _set_schedule(session, card_id, after)
            logged = execute(session, _LOG, card=card_id, at=moment, day=study_day, kind=logged_kind, grade=grade,
                             typed=kept, duration=duration, variant=asked, **_columns(before, "before"),
                             **_columns(after, "after"))
            review_id = logged.scalar_one()
            return Answer(review_id, card_id, moment, study_day, logged_kind, grade, kept, duration, before, after,
                          asked)

        return self._run(work, write=True)

    def undo(self, review_id: int) -> CardState:
        """Delete a logged answer and put the card's schedule back exactly as it was before it."""

        def work(session: Session) -> CardState:
            found = execute(session, f"SELECT {_ANSWER_COLUMNS} FROM review WHERE id = :id AND learner = :learner",
                            id=review_id).first()
            if found is None:
                raise StoreError(f"answer {review_id} is not in the log (already undone?)")
            review = _answer(found)
            _state(session, review.card_id, self.where, lock=True)  # another window's answer waits, or came first
            latest = execute(session, "SELECT max(id) FROM review WHERE learner = :learner AND card_id = :card",
                             card=review.card_id).scalar()
            if latest != review_id:
                raise StoreError(f"{review.card_id} was answered again since (in another window?), "
                                 "and only its latest answer can be undone")
            _set_schedule(session, review.card_id, review.before)
            execute(session, "DELETE FROM review WHERE id = :id AND learner = :learner", id=review_id)
            return _state(session, review.card_id, self.where)

        return self._run(work, write=True)

    def set_flags(self, card_id: str, *, suspended: bool | None = None,
                  buried_until: date | None | Keep = KEEP) -> CardState:
        """Suspend or unsuspend a card, or bury it until a day (None unburies). Returns the state before."""

        def work(session: Session) -> CardState:
            before = _state(session, card_id, self.where, lock=True)
            if suspended is not None:
                execute(session, "UPDATE schedule SET suspended = :flag WHERE learner = :learner AND card_id = :card",
                        flag=suspended, card=card_id)
            if not isinstance(buried_until, Keep):
                execute(session, "UPDATE schedule SET buried_until = :day WHERE learner = :learner AND card_id = :card",
                        day=buried_until, card=card_id)
            return before

        return self._run(work, write=True)

    def answers(self, card_id: str | None = None, *, since: date | None = None) -> list[Answer]:
        """The log, oldest first: for one card, or all of it (from a study day on)."""
        only_card = "" if card_id is None else "AND card_id = :card"
        only_since = "" if since is None else "AND study_day >= :since"
        rows = self.rows(f"SELECT {_ANSWER_COLUMNS} FROM review WHERE learner = :learner {only_card} {only_since} "
                         "ORDER BY id", card=card_id, since=since)
        return [_answer(row) for row in rows]


# --------------------------------------------------------------------------- helpers

_SCHEDULE = ("repetitions", "ef100", "interval", "due", "lapses", "stability", "difficulty")
_ANSWER_COLUMNS = ("id, card_id, reviewed_at, study_day, kind, grade, typed, duration_ms, "
                   + ", ".join(f"{column}_before" for column in ("reps", *_SCHEDULE[1:])) + ", "
                   + ", ".join(f"{column}_after" for column in ("reps", *_SCHEDULE[1:])) + ", variant")
_LOG = (f"INSERT INTO review ({_ANSWER_COLUMNS.removeprefix('id, ')}, learner) VALUES (:card, :at, :day, :kind, "
        ":grade, :typed, :duration, :reps_before, :ef100_before, :interval_before, :due_before, :lapses_before, "
        ":stability_before, :difficulty_before, :reps_after, :ef100_after, :interval_after, :due_after, "
        ":lapses_after, :stability_after, :difficulty_after, :variant, :learner) RETURNING id")


def _digest(rows: list[tuple[str, str, str, str]]) -> str:
    """One hash of a lesson's cards in order: equal digests mean nothing to sync."""
    joined = "\x1e".join("\x1f".join(row) for row in rows)
    return "v1:" + hashlib.sha256(joined.encode()).hexdigest()


def _sync_lesson(session: Session, lesson_id: str, rows: list[tuple[str, str, str, str]],
                 stamp: datetime) -> SyncReport:
    """Compare one lesson card by card and write the differences."""
    stored: dict[str, tuple[Any, ...]] = {row[0]: tuple(row) for row in execute(
        session, "SELECT id, item_id, kind, position, fingerprint, removed FROM card WHERE lesson_id = :lesson",
        lesson=lesson_id)}
    added: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    restored: list[dict[str, Any]] = []
    for position, (card_id, item_id, kind, fingerprint) in enumerate(rows):
        row = stored.get(card_id)
        values = {"id": card_id, "lesson": lesson_id, "item": item_id, "kind": kind, "position": position,
                  "fingerprint": fingerprint, "stamp": stamp}
        if row is None:
            added.append(values)
        elif row[5] or row[4] != fingerprint or (row[1], row[2], row[3]) != (item_id, kind, position):
            (restored if row[5] else changed if row[4] != fingerprint else moved).append(values)
    wanted = {row[0] for row in rows}
    removed = [{"id": card_id, "stamp": stamp} for card_id, row in stored.items()
               if not row[5] and card_id not in wanted]
    execute_many(session, "INSERT INTO card (id, lesson_id, item_id, kind, position, fingerprint, removed, "
                 "first_seen, updated) VALUES (:id, :lesson, :item, :kind, :position, :fingerprint, false, :stamp, "
                 ":stamp)", added)
    execute_many(session, "UPDATE card SET item_id = :item, kind = :kind, position = :position, "
                 "fingerprint = :fingerprint, removed = false, updated = :stamp WHERE id = :id",
                 changed + moved + restored)
    execute_many(session, "UPDATE card SET removed = true, updated = :stamp WHERE id = :id", removed)
    return SyncReport(added=len(added), changed=len(changed), removed=len(removed), restored=len(restored),
                      moved=len(moved))


def _schedules_missing(session: Session) -> bool:
    """Whether some card has no schedule of this learner yet (a card is never deleted, only marked removed,
    so equal counts mean every card has one)."""
    cards = execute(session, "SELECT count(*) FROM card").scalar_one()
    return bool(execute(session, "SELECT count(*) FROM schedule WHERE learner = :learner").scalar_one() < cards)


def _add_schedules(session: Session) -> None:
    """A new schedule for this learner of every card that has none (a new card, or a learner new to the class)."""
    execute(session, "INSERT INTO schedule (card_id, repetitions, ef100, interval, due, lapses, suspended, "
            f"buried_until, leech, learner) SELECT c.id, 0, {EF_START}, 0, NULL, 0, false, NULL, false, :learner "
            "FROM card c WHERE NOT EXISTS (SELECT 1 FROM schedule s WHERE s.learner = :learner AND s.card_id = c.id) "
            "ON CONFLICT DO NOTHING")


def _state(session: Session, card_id: str, where: str, *, lock: bool = False) -> CardState:
    """The learner's state of a card; ``lock``: its schedule row stays locked until the transaction ends
    (PostgreSQL; SQLite's write transaction holds the whole file already)."""
    database: Database = session.info["database"]
    found = execute(session, f"SELECT {STATE_COLUMNS} {FROM_CARDS} WHERE s.card_id = :card "
                    f"{database.lock_row if lock else ''}", card=card_id).first()
    if found is None:
        raise StoreError(f"no card {card_id!r} in {where}; sync its lesson first")
    return state_of(found)


def _answered_on(session: Session, card_id: str, day: date) -> bool:
    return execute(session, "SELECT 1 FROM review WHERE learner = :learner AND card_id = :card AND study_day = :day "
                   "LIMIT 1",
                   card=card_id, day=day).first() is not None


def _set_schedule(session: Session, card_id: str, schedule: Schedule) -> None:
    execute(session, "UPDATE schedule SET repetitions = :repetitions, ef100 = :ef100, interval = :interval, "
            "due = :due, lapses = :lapses, leech = :leech, stability = :stability, difficulty = :difficulty "
            "WHERE learner = :learner AND card_id = :card", card=card_id, repetitions=schedule.repetitions,
            ef100=schedule.ef100, interval=schedule.interval, due=schedule.due, lapses=schedule.lapses,
            leech=schedule.lapses >= LEECH_LAPSES, stability=schedule.stability, difficulty=schedule.difficulty)


def _columns(schedule: Schedule, suffix: str) -> dict[str, Any]:
    return {f"reps_{suffix}": schedule.repetitions, f"ef100_{suffix}": schedule.ef100,
            f"interval_{suffix}": schedule.interval, f"due_{suffix}": schedule.due,
            f"lapses_{suffix}": schedule.lapses, f"stability_{suffix}": schedule.stability,
            f"difficulty_{suffix}": schedule.difficulty}


def _answer(row: Sequence[Any]) -> Answer:
    """An :class:`Answer` from a row of ``_ANSWER_COLUMNS``."""
    review_id, card_id, reviewed_at, study_day, kind, grade, typed, duration_ms = row[:8]
    before, after = (Schedule(reps, ef100, interval, as_date(due), lapses, stability, difficulty)
                     for reps, ef100, interval, due, lapses, stability, difficulty in (row[8:15], row[15:22]))
    moment = as_utc(reviewed_at)
    assert moment is not None, "every answer has a time"
    return Answer(review_id, card_id, moment, day_of(study_day), kind, grade, typed, duration_ms, before, after,
                  row[22])
