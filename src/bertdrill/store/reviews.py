"""A review, in the store: syncing cards, today's queue, answers, flags and undo.

Each public method is one short unit of work in its own transaction, so an answer is on
disk when :meth:`ReviewWrites.answer` returns. "Only the first answer of a study day
reschedules" is decided inside the answer's write transaction, so two sessions answering
the same card at once log both answers and reschedule it once.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, date, datetime
from typing import Any

from sqlmodel import Session, col, select

from ..errors import StoreError
from ..limits import DEFAULT_NEW, DEFAULT_REVIEWS
from ..ports import KEEP, Answer, CardState, Keep, SyncCard, SyncReport
from ..sm2 import EF_START, LEECH_LAPSES, REDRILL_BELOW, Schedule, check_grade
from .schema import (
    ACTIVE,
    ANSWER_KINDS,
    FROM_CARDS,
    TYPED_MAX,
    CardRow,
    ReviewRow,
    ScheduleRow,
    card_state,
    lesson_filter,
    schedule_of,
)
from .sqlite import Database, driver, utc, utc_text


class ReviewWrites(Database):
    """The store's side of a review session (and of ``practice check``)."""

    # ----------------------------------------------------------------- sync

    def sync(self, cards: Sequence[SyncCard], *, now: datetime | None = None,
             track: Callable[[list[str]], Iterable[str]] = iter) -> SyncReport:
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
        stamp = utc_text(now or datetime.now(UTC))

        def stale(session: Session) -> list[str]:
            marks = ", ".join("?" * len(digests))
            stored = dict(driver(session).execute(f"SELECT id, digest FROM lesson WHERE id IN ({marks})", list(digests)))
            return [lesson_id for lesson_id, digest in digests.items() if stored.get(lesson_id) != digest]

        def apply(session: Session) -> SyncReport:
            report = SyncReport()
            for lesson_id in track(stale(session)):  # again, now under the write lock
                report += _sync_lesson(driver(session), lesson_id, by_lesson[lesson_id], stamp)
                driver(session).execute(
                    "INSERT OR REPLACE INTO lesson (id, digest, cards, synced_at) VALUES (?, ?, ?, ?)",
                    (lesson_id, digests[lesson_id], len(by_lesson[lesson_id]), stamp))
            return report

        if not self._run(stale):
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
        query = (
            "SELECT r.card_id FROM review r JOIN schedule s ON s.card_id = r.card_id "
            "JOIN card c ON c.id = r.card_id "
            "WHERE r.id IN (SELECT max(id) FROM review WHERE study_day = :today AND kind != 'practice' GROUP BY card_id) "
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
        def work(session: Session) -> CardState:
            return card_state(_schedule_row(session, card_id, self.where), session.get(CardRow, card_id))

        return self._run(work)

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
    ) -> Answer:
        """Log an answer and store the new schedule, in one committed transaction.

        ``reschedule`` turns the stored schedule into the new one (``sm2.review`` for the
        first answer of a study day); it runs inside the transaction, on the state read
        there, so the "before" columns are exactly what was stored. None keeps the schedule.

        ``once_per_day``: reschedule only if the card has no answer yet on ``study_day``;
        otherwise log the answer as a ``redrill`` (a ``practice`` answer stays ``practice``)
        and keep the schedule (SM-2 step 7). Decided under the write lock, so two sessions
        answering the same card at the same time reschedule it once. The returned
        :class:`Answer` has the kind that was logged.
        """
        if kind not in ANSWER_KINDS:
            raise ValueError(f"kind must be one of {ANSWER_KINDS}, got {kind!r}")
        check_grade(grade)
        moment = utc(reviewed_at)
        kept = typed[:TYPED_MAX] if typed is not None else None
        duration = max(0, min(int(duration_ms), 86_400_000))

        def work(session: Session) -> Answer:
            row = _schedule_row(session, card_id, self.where)
            before = schedule_of(row)
            change, logged_kind = reschedule, kind
            if once_per_day and reschedule is not None and _answered_on(session, card_id, study_day):
                change, logged_kind = None, ("practice" if kind == "practice" else "redrill")
            after = change(before) if change else before
            _set_schedule(row, after)
            session.add(row)
            review = ReviewRow(card_id=card_id, reviewed_at=moment, study_day=study_day,
                               kind=logged_kind, grade=grade, typed=kept, duration_ms=duration,
                               **_columns(before, "before"), **_columns(after, "after"))
            session.add(review)
            session.flush()
            return _answer(review)

        return self._run(work, write=True)

    def undo(self, review_id: int) -> CardState:
        """Delete a logged answer and put the card's schedule back exactly as it was before it."""

        def work(session: Session) -> CardState:
            review = session.get(ReviewRow, review_id)
            if review is None:
                raise StoreError(f"answer {review_id} is not in the log (already undone?)")
            latest = session.exec(select(ReviewRow.id).where(ReviewRow.card_id == review.card_id)
                                  .order_by(col(ReviewRow.id).desc()).limit(1)).one()
            if latest != review_id:
                raise StoreError(f"{review.card_id} was answered again since (in another window?), "
                                 "and only its latest answer can be undone")
            row = _schedule_row(session, review.card_id, self.where)
            _set_schedule(row, _answer(review).before)
            session.add(row)
            session.delete(review)
            session.flush()
            return card_state(row, session.get(CardRow, review.card_id))

        return self._run(work, write=True)

    def set_flags(self, card_id: str, *, suspended: bool | None = None,
                  buried_until: date | None | Keep = KEEP) -> CardState:
        """Suspend or unsuspend a card, or bury it until a day (None unburies). Returns the state before."""

        def work(session: Session) -> CardState:
            row = _schedule_row(session, card_id, self.where)
            before = card_state(row, None)
            if suspended is not None:
                row.suspended = suspended
            if not isinstance(buried_until, Keep):
                row.buried_until = buried_until
            session.add(row)
            return before

        return self._run(work, write=True)

    def answers(self, card_id: str | None = None, *, since: date | None = None) -> list[Answer]:
        """The log, oldest first: for one card, or all of it (from a study day on)."""

        def work(session: Session) -> list[Answer]:
            query = select(ReviewRow).order_by(col(ReviewRow.id))
            if card_id is not None:
                query = query.where(ReviewRow.card_id == card_id)
            if since is not None:
                query = query.where(ReviewRow.study_day >= since)
            return [_answer(row) for row in session.exec(query)]

        return self._run(work)



# --------------------------------------------------------------------------- helpers

def _digest(rows: list[tuple[str, str, str, str]]) -> str:
    """One hash of a lesson's cards in order: equal digests mean nothing to sync."""
    joined = "\x1e".join("\x1f".join(row) for row in rows)
    return "v1:" + hashlib.sha256(joined.encode()).hexdigest()


def _sync_lesson(raw: sqlite3.Connection, lesson_id: str, rows: list[tuple[str, str, str, str]],
                 stamp: str) -> SyncReport:
    """Compare one lesson card by card and write the differences."""
    stored = {row[0]: row for row in raw.execute(
        "SELECT id, item_id, kind, position, fingerprint, removed FROM card WHERE lesson_id = ?", (lesson_id,))}
    added: list[tuple[str, str, str, str, int, str, str, str]] = []
    changed: list[tuple[str, str, int, str, str, str]] = []
    moved: list[tuple[str, str, int, str, str, str]] = []
    restored: list[tuple[str, str, int, str, str, str]] = []
    for position, (card_id, item_id, kind, fingerprint) in enumerate(rows):
        row = stored.get(card_id)
        if row is None:
            added.append((card_id, lesson_id, item_id, kind, position, fingerprint, stamp, stamp))
        elif row[5] or row[4] != fingerprint or (row[1], row[2], row[3]) != (item_id, kind, position):
            values = (item_id, kind, position, fingerprint, stamp, card_id)
            (restored if row[5] else changed if row[4] != fingerprint else moved).append(values)
    wanted = {row[0] for row in rows}
    removed = [(stamp, card_id) for card_id, row in stored.items() if not row[5] and card_id not in wanted]
    raw.executemany(
        "INSERT INTO card (id, lesson_id, item_id, kind, position, fingerprint, removed, first_seen, updated) "
        "VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)", added)
    raw.executemany(
        "INSERT OR IGNORE INTO schedule (card_id, repetitions, ef100, interval, due, lapses, suspended, "
        f"buried_until, leech) VALUES (?, 0, {EF_START}, 0, NULL, 0, 0, NULL, 0)", [(row[0],) for row in added])
    raw.executemany("UPDATE card SET item_id = ?, kind = ?, position = ?, fingerprint = ?, removed = 0, updated = ? "
                    "WHERE id = ?", changed + moved + restored)
    raw.executemany("UPDATE card SET removed = 1, updated = ? WHERE id = ?", removed)
    return SyncReport(added=len(added), changed=len(changed), removed=len(removed), restored=len(restored),
                      moved=len(moved))


def _schedule_row(session: Session, card_id: str, where: str) -> ScheduleRow:
    row = session.get(ScheduleRow, card_id)
    if row is None:
        raise StoreError(f"no card {card_id!r} in {where}; sync its lesson first")
    return row


def _answered_on(session: Session, card_id: str, day: date) -> bool:
    query = select(ReviewRow.id).where(ReviewRow.card_id == card_id, ReviewRow.study_day == day).limit(1)
    return session.exec(query).first() is not None


def _set_schedule(row: ScheduleRow, schedule: Schedule) -> None:
    row.repetitions = schedule.repetitions
    row.ef100 = schedule.ef100
    row.interval = schedule.interval
    row.due = schedule.due
    row.lapses = schedule.lapses
    row.leech = schedule.lapses >= LEECH_LAPSES


def _columns(schedule: Schedule, suffix: str) -> dict[str, Any]:
    return {f"reps_{suffix}": schedule.repetitions, f"ef100_{suffix}": schedule.ef100,
            f"interval_{suffix}": schedule.interval, f"due_{suffix}": schedule.due,
            f"lapses_{suffix}": schedule.lapses}


def _answer(row: ReviewRow) -> Answer:
    def schedule(suffix: str) -> Schedule:
        return Schedule(repetitions=getattr(row, f"reps_{suffix}"), ef100=getattr(row, f"ef100_{suffix}"),
                        interval=getattr(row, f"interval_{suffix}"), due=getattr(row, f"due_{suffix}"),
                        lapses=getattr(row, f"lapses_{suffix}"))

    moment = row.reviewed_at  # SQLModel hands back aware UTC times; be safe with naive ones too
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    assert row.id is not None, "a logged answer has an id once flushed"
    return Answer(id=row.id, card_id=row.card_id, reviewed_at=moment,
                  study_day=row.study_day, kind=row.kind, grade=row.grade, typed=row.typed,
                  duration_ms=row.duration_ms, before=schedule("before"), after=schedule("after"))


