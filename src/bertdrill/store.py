"""The review database: SQLModel tables over SQLite, and every query bertdrill runs.

The only module that knows SQL. A :class:`Store` wraps an engine that is
passed in (or built by :func:`engine`), and each public method is one short
unit of work in its own transaction, so an answer is on disk when
:meth:`Store.answer` returns.

Durability choices, in one place:

- WAL journal: readers (``bertdrill status``) never block the writer.
- ``synchronous=FULL``: each commit is fsynced to the WAL before it returns.
  ``NORMAL`` already survives a killed process in WAL mode, but may drop the
  last commits on power loss; one fsync per answer costs a few milliseconds a
  person never notices, and a grade the screen acknowledged must never vanish.
- Writes start with ``BEGIN IMMEDIATE`` (no lock upgrades, so no deadlock
  between two bertdrill processes), SQLite waits up to ``busy_timeout`` for a
  lock, and a unit that still meets "database is locked" is retried as a whole
  until :data:`LOCK_TIMEOUT` has passed; only then does the learner hear of it.
- ``PRAGMA user_version`` carries the schema version (the ``meta`` table
  repeats it with dates); :data:`MIGRATIONS` brings older files up to date and
  a newer file is refused rather than misread. The version is read before
  anything is written (WAL included, which changes the file's header), so a
  refused file, newer or not bertdrill's, is left exactly as it was.
- "Only the first answer of a study day reschedules" is decided inside the
  answer's write transaction, so two sessions answering the same card at once
  log both answers and reschedule it once.

Dates are ISO strings (``2024-05-01``), times are UTC (``2024-05-01 06:30:00.000000``),
the formats SQLAlchemy uses for ``Date`` and ``DateTime`` on SQLite.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import platformdirs
from sqlalchemy import Engine, Index, bindparam, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlmodel import Field, Session, SQLModel, select

from . import __version__
from .cards import Card
from .errors import StoreError
from .sm2 import EF_START, LEECH_LAPSES, REDRILL_BELOW, Schedule

SCHEMA_VERSION = 1
LOCK_TIMEOUT = 10.0  # seconds to wait for another program's lock before giving up ($BERTDRILL_LOCK_TIMEOUT)
BUSY_TIMEOUT_MS = 5000  # how long SQLite itself waits, per statement, within that
TYPED_MAX = 1000  # characters of a typed answer kept in the log
MATURE_DAYS = 21  # an interval from which a card counts as mature (Anki's line)
ANSWER_KINDS = ("review", "new", "redrill", "practice")
CARD_STATES = ("new", "learning", "young", "mature", "suspended", "removed")
KEEP = object()  # "leave this flag as it is" in Store.set_flags
T = TypeVar("T")


# --------------------------------------------------------------------------- tables


class Meta(SQLModel, table=True):
    """Facts about the file itself: schema version, when it was created and migrated."""

    __tablename__ = "meta"
    key: str = Field(primary_key=True)
    value: str


class LessonRow(SQLModel, table=True):
    """A lesson as last synced: the digest of its cards tells whether anything changed."""

    __tablename__ = "lesson"
    id: str = Field(primary_key=True)
    digest: str
    cards: int
    synced_at: datetime


class CardRow(SQLModel, table=True):
    """A card the store has seen; ``removed`` once its lesson no longer has it."""

    __tablename__ = "card"
    __table_args__ = (Index("ix_card_lesson", "lesson_id", "position"),)
    id: str = Field(primary_key=True)
    lesson_id: str
    item_id: str
    kind: str
    position: int  # order within the lesson: new cards come in this order
    fingerprint: str  # Card.fingerprint: tells a text change from no change
    removed: bool = False
    first_seen: datetime
    updated: datetime


class ScheduleRow(SQLModel, table=True):
    """The SM-2 state of a card, plus what the learner decided about it."""

    __tablename__ = "schedule"
    __table_args__ = (Index("ix_schedule_due", "due"),)
    card_id: str = Field(primary_key=True, foreign_key="card.id")
    repetitions: int = 0
    ef100: int = EF_START
    interval: int = 0
    due: date | None = None  # None: a new card
    lapses: int = 0
    suspended: bool = False
    buried_until: date | None = None  # hidden while the study day is before this
    leech: bool = False


class ReviewRow(SQLModel, table=True):
    """One answer, with the schedule before and after it so undo restores it exactly."""

    __tablename__ = "review"
    __table_args__ = (Index("ix_review_card", "card_id", "id"), Index("ix_review_day", "study_day"))
    id: int | None = Field(default=None, primary_key=True)
    card_id: str = Field(foreign_key="card.id")
    reviewed_at: datetime  # UTC
    study_day: date
    kind: str  # review | new | redrill | practice
    grade: int
    typed: str | None = None
    duration_ms: int = 0
    reps_before: int
    ef100_before: int
    interval_before: int
    due_before: date | None = None
    lapses_before: int
    reps_after: int
    ef100_after: int
    interval_after: int
    due_after: date | None = None
    lapses_after: int


# --------------------------------------------------------------------------- migrations

# Each migration brings the file from version - 1 to version. The DDL is written out
# rather than generated from the models above, so version 1 stays version 1 when the
# models move on; tests check that the newest migration matches the models.
_V1 = """
CREATE TABLE meta (
    key TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE lesson (
    id TEXT NOT NULL PRIMARY KEY,
    digest TEXT NOT NULL,
    cards INTEGER NOT NULL,
    synced_at DATETIME NOT NULL
);
CREATE TABLE card (
    id TEXT NOT NULL PRIMARY KEY,
    lesson_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    position INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    removed BOOLEAN NOT NULL DEFAULT 0,
    first_seen DATETIME NOT NULL,
    updated DATETIME NOT NULL
);
CREATE INDEX ix_card_lesson ON card (lesson_id, position);
CREATE TABLE schedule (
    card_id TEXT NOT NULL PRIMARY KEY REFERENCES card (id),
    repetitions INTEGER NOT NULL DEFAULT 0,
    ef100 INTEGER NOT NULL DEFAULT 250,
    interval INTEGER NOT NULL DEFAULT 0,
    due DATE,
    lapses INTEGER NOT NULL DEFAULT 0,
    suspended BOOLEAN NOT NULL DEFAULT 0,
    buried_until DATE,
    leech BOOLEAN NOT NULL DEFAULT 0
);
CREATE INDEX ix_schedule_due ON schedule (due);
CREATE TABLE review (
    id INTEGER NOT NULL PRIMARY KEY,
    card_id TEXT NOT NULL REFERENCES card (id),
    reviewed_at DATETIME NOT NULL,
    study_day DATE NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('review', 'new', 'redrill', 'practice')),
    grade INTEGER NOT NULL CHECK (grade BETWEEN 0 AND 5),
    typed TEXT,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    reps_before INTEGER NOT NULL,
    ef100_before INTEGER NOT NULL,
    interval_before INTEGER NOT NULL,
    due_before DATE,
    lapses_before INTEGER NOT NULL,
    reps_after INTEGER NOT NULL,
    ef100_after INTEGER NOT NULL,
    interval_after INTEGER NOT NULL,
    due_after DATE,
    lapses_after INTEGER NOT NULL
);
CREATE INDEX ix_review_card ON review (card_id, id);
CREATE INDEX ix_review_day ON review (study_day);
"""


def _migrate_to_1(connection) -> None:
    for statement in _V1.split(";"):
        if statement.strip():
            connection.exec_driver_sql(statement)


MIGRATIONS: dict[int, Callable] = {1: _migrate_to_1}
"""version -> function(connection) that brings a file at version - 1 up to it."""


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CardState:
    """A card's schedule and flags, as stored."""

    card_id: str
    schedule: Schedule
    suspended: bool = False
    buried_until: date | None = None
    leech: bool = False
    removed: bool = False


@dataclass(frozen=True)
class Answer:
    """One row of the review log."""

    id: int
    card_id: str
    reviewed_at: datetime  # UTC, aware
    study_day: date
    kind: str
    grade: int
    typed: str | None
    duration_ms: int
    before: Schedule
    after: Schedule


@dataclass(frozen=True)
class SyncReport:
    added: int = 0
    changed: int = 0  # text changed (new fingerprint); schedule and history kept
    removed: int = 0  # gone from their lesson; kept, never shown
    restored: int = 0  # back in their lesson after being removed
    moved: int = 0  # only the position or kind changed

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.changed or self.removed or self.restored or self.moved)


@dataclass(frozen=True)
class DayCounts:
    """Answers logged on one study day, by kind."""

    new: int = 0
    review: int = 0
    redrill: int = 0
    practice: int = 0

    @property
    def first_answers(self) -> int:
        """Cards taken from the daily limits: due reviews plus new cards."""
        return self.new + self.review


@dataclass(frozen=True)
class Status:
    due_now: int
    new_cards: int  # never reviewed, available (before daily limits)
    learned: int  # reviewed at least once (practice cards and removed cards left out)
    next_due: date | None  # first day after today with something due
    streak: int  # study days in a row with an answer, up to today (or yesterday)
    counts: DayCounts  # what was answered today


@dataclass(frozen=True)
class Retention:
    """Share of review answers graded 3 or more, for young and mature cards."""

    young_passed: int
    young_total: int
    mature_passed: int
    mature_total: int

    @staticmethod
    def _rate(passed: int, total: int) -> float | None:
        return passed / total if total else None

    @property
    def young(self) -> float | None:
        return self._rate(self.young_passed, self.young_total)

    @property
    def mature(self) -> float | None:
        return self._rate(self.mature_passed, self.mature_total)


# --------------------------------------------------------------------------- opening


def database_url(db: str | None = None) -> URL:
    """Where the database lives: ``--db``, else ``BERTDRILL_DB``, else ``BERTDRILL_HOME/bertdrill.db``,
    else the platform's user data folder (``~/.local/share/bertdrill/bertdrill.db`` on Linux).

    A value with ``://`` (or starting ``sqlite:`` or ``sqlite+``) is an SQLAlchemy URL; anything else
    is a file path.
    """
    raw = db or os.environ.get("BERTDRILL_DB")
    if not raw:
        home = os.environ.get("BERTDRILL_HOME")
        folder = Path(home) if home else Path(platformdirs.user_data_dir("bertdrill", appauthor=False))
        raw = str(folder / "bertdrill.db")
    if "://" in raw or raw.startswith(("sqlite:", "sqlite+")):
        try:
            url = make_url(raw)
        except ArgumentError:
            raise StoreError(f"{raw!r} is not a database URL (try a file path, or sqlite:///path/to/file.db)") from None
        if url.get_backend_name() != "sqlite":
            raise StoreError(
                f"{url.render_as_string(hide_password=True)}: bertdrill keeps reviews in SQLite "
                "(it relies on WAL and SQLite's locking); use a file path or a sqlite:/// URL"
            )
        return url
    return URL.create("sqlite", database=str(Path(raw).expanduser().absolute()))


def describe(url: URL) -> str:
    """The database as a person would name it: the file path, or the URL."""
    database = url.database or ""
    if database in ("", ":memory:"):
        return "the in-memory database"
    if database.startswith("file:"):
        return database.removeprefix("file:").split("?", 1)[0]
    return database


def engine(db: str | URL | None = None, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Engine:
    """An engine for the database, its folder created if needed; the schema is not touched yet."""
    url = db if isinstance(db, URL) else database_url(db)
    _check_file(url)
    try:
        built = create_engine(url)
    except (ArgumentError, NoSuchModuleError) as exc:
        raise StoreError(f"{describe(url)}: {exc}") from None

    @event.listens_for(built, "connect")
    def _on_connect(dbapi_connection, _record):
        # The driver's own transaction handling is off: we say BEGIN ourselves (below).
        dbapi_connection.isolation_level = None
        dbapi_connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        dbapi_connection.execute("PRAGMA foreign_keys = ON")
        dbapi_connection.execute("PRAGMA synchronous = FULL")
        # WAL is set once by Store.migrate, after the version check: it rewrites the file's header.

    @event.listens_for(built, "begin")
    def _on_begin(connection):
        immediate = connection.get_execution_options().get("immediate")
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return built


def _check_file(url: URL) -> None:
    """Clear messages for the file problems SQLite would report vaguely, or too late."""
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return
    path = Path(database)
    if path.is_dir():
        raise StoreError(f"{path} is a folder, not a database file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder for the database {path}: {exc.strerror or exc}") from None
    if path.exists() and not os.access(path, os.W_OK):
        raise StoreError(_read_only_message(path))


def _lock_timeout_from_environment() -> float:
    text = os.environ.get("BERTDRILL_LOCK_TIMEOUT")
    if not text:
        return LOCK_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 3600:
        raise StoreError(f"BERTDRILL_LOCK_TIMEOUT={text!r} is not a number of seconds from 0 to 3600")
    return seconds


def _read_only_message(where: object) -> str:
    return (f"{where} is read-only; bertdrill writes every answer to it. "
            "Make it writable, or point --db / BERTDRILL_DB at another file")


# --------------------------------------------------------------------------- the store


class Store:
    """Every read and write of review data; one short transaction per method."""

    def __init__(self, engine: Engine, *, lock_timeout: float = LOCK_TIMEOUT):
        self.engine = engine
        self.lock_timeout = lock_timeout
        self.where = describe(engine.url)

    @classmethod
    def open(cls, db: str | URL | None = None, *, lock_timeout: float | None = None) -> Store:
        """Open (creating or migrating) the database named by ``db`` or the environment.

        ``lock_timeout`` (seconds) defaults to ``$BERTDRILL_LOCK_TIMEOUT``, else :data:`LOCK_TIMEOUT`.
        """
        if lock_timeout is None:
            lock_timeout = _lock_timeout_from_environment()
        busy_timeout_ms = min(BUSY_TIMEOUT_MS, int(lock_timeout * 1000))
        store = cls(engine(db, busy_timeout_ms=busy_timeout_ms), lock_timeout=lock_timeout)
        try:
            store.migrate()
        except BaseException:
            store.close()  # no connection left open on a refused file (nor its -wal and -shm files)
            raise
        return store

    def close(self) -> None:
        self.engine.dispose()

    # ----------------------------------------------------------------- units of work

    def _run(self, work: Callable[[Session], T], *, write: bool = False) -> T:
        """Run ``work`` in one transaction, retried as a whole while the file is locked."""

        def transaction() -> T:
            with Session(self.engine, expire_on_commit=False) as session:
                if write:
                    session.connection(execution_options={"immediate": True})
                result = work(session)
                if write:
                    session.commit()
                return result

        return self._retrying(transaction)

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, again while the file is locked, until :attr:`lock_timeout` has passed."""
        deadline = time.monotonic() + self.lock_timeout
        tries = 0
        while True:
            try:
                return attempt()
            except (DBAPIError, sqlite3.Error) as exc:
                if _is_locked(exc) and time.monotonic() < deadline:
                    time.sleep(min(0.05 * 2**tries, 0.5, max(0.0, deadline - time.monotonic())))
                    tries += 1
                    continue
                raise self._error(exc) from None

    def _error(self, exc: Exception) -> StoreError:
        message = str(getattr(exc, "orig", exc) or exc)
        lowered = message.lower()
        if _is_locked(exc):
            return StoreError(f"{self.where} is locked by another program (waited {self.lock_timeout:g} s); "
                              "close it (another bertdrill?) and try again")
        if "not a database" in lowered or "encrypted" in lowered:
            return StoreError(f"{self.where} is not a bertdrill database (SQLite says: {message})")
        if "malformed" in lowered or "corrupt" in lowered:
            return StoreError(f"{self.where} is damaged (SQLite says: {message}); restore it from a backup")
        if "readonly" in lowered or "read-only" in lowered:
            return StoreError(_read_only_message(self.where))
        if "unable to open" in lowered:
            return StoreError(f"cannot open {self.where}: check that its folder exists and is writable")
        if "disk is full" in lowered:
            return StoreError(f"the disk holding {self.where} is full; nothing was written")
        return StoreError(f"{self.where}: {message}")

    def migrate(self) -> int:
        """Create or upgrade the schema; refuse files from a newer bertdrill. Returns the version found.

        The version is checked in a read-only transaction first and WAL switched on only
        then, so a refused file is never written to; the write transaction checks again,
        since another process may have migrated the file in between.
        """
        self._run(lambda session: self._version(session.connection()))
        self._use_wal()

        def work(session: Session) -> int:
            connection = session.connection()
            found = self._version(connection)
            now = _utc_text(datetime.now(UTC))
            for version in range(found + 1, SCHEMA_VERSION + 1):
                MIGRATIONS[version](connection)
                _put_meta(connection, f"migrated_to_{version}", now)
            if found == 0:
                _put_meta(connection, "created_at", now)
                _put_meta(connection, "created_by", f"bertdrill {__version__}")
            _put_meta(connection, "schema_version", str(SCHEMA_VERSION))
            _put_meta(connection, "opened_at", now)  # also proves the file is writable now, not at the first answer
            connection.exec_driver_sql(f"PRAGMA user_version = {SCHEMA_VERSION}")
            return found

        return self._run(work, write=True)

    def _version(self, connection) -> int:
        """The file's schema version, or StoreError for a file bertdrill must not touch."""
        found = connection.exec_driver_sql("PRAGMA user_version").scalar_one()
        if found > SCHEMA_VERSION:
            raise StoreError(
                f"{self.where} was written by a newer bertdrill (schema version {found}; this one knows "
                f"up to {SCHEMA_VERSION}); upgrade bertdrill to open it"
            )
        tables = connection.exec_driver_sql("SELECT count(*) FROM sqlite_master WHERE type = 'table'").scalar_one()
        if found == 0 and tables:
            raise StoreError(f"{self.where} is an SQLite database but not a bertdrill one; use another file")
        return found

    def _use_wal(self) -> None:
        """Switch the file to WAL (a lasting property of the file; a no-op once set).

        SQLite refuses the switch inside a transaction, so it runs on the bare driver connection.
        """

        def switch() -> None:
            raw = self.engine.raw_connection()
            try:
                raw.driver_connection.execute("PRAGMA journal_mode = WAL")
            finally:
                raw.close()

        self._retrying(switch)

    def meta(self) -> dict[str, str]:
        return self._run(lambda s: {row.key: row.value for row in s.exec(select(Meta))})

    # ----------------------------------------------------------------- sync

    def sync(self, cards: Sequence[Card], *, now: datetime | None = None,
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
        stamp = _utc_text(now or datetime.now(UTC))

        def stale(session: Session) -> list[str]:
            marks = ", ".join("?" * len(digests))
            stored = dict(_driver(session).execute(f"SELECT id, digest FROM lesson WHERE id IN ({marks})", list(digests)))
            return [lesson_id for lesson_id, digest in digests.items() if stored.get(lesson_id) != digest]

        def apply(session: Session) -> SyncReport:
            report = SyncReport()
            for lesson_id in track(stale(session)):  # again, now under the write lock
                report = _add(report, _sync_lesson(_driver(session), lesson_id, by_lesson[lesson_id], stamp))
                _driver(session).execute(
                    "INSERT OR REPLACE INTO lesson (id, digest, cards, synced_at) VALUES (?, ?, ?, ?)",
                    (lesson_id, digests[lesson_id], len(by_lesson[lesson_id]), stamp))
            return report

        if not self._run(stale):
            return SyncReport()
        return self._run(apply, write=True)

    # ----------------------------------------------------------------- the queue

    def due_ids(self, today: date, *, lessons: Collection[str] | None = None, limit: int = 200) -> list[str]:
        """Cards due on or before ``today``, most overdue first (then in lesson order), at most ``limit``."""
        return self._ids("s.due <= :today", "s.due, c.lesson_id, c.position", today=today, lessons=lessons,
                         limit=limit)

    def new_ids(self, today: date, *, lessons: Collection[str] | None = None, limit: int = 10) -> list[str]:
        """Cards never reviewed, in lesson order, at most ``limit``."""
        return self._ids("s.due IS NULL", "c.lesson_id, c.position", today=today, lessons=lessons, limit=limit)

    def redrill_ids(self, today: date, *, lessons: Collection[str] | None = None) -> list[str]:
        """Cards whose latest answer on ``today`` was below 4: still to re-drill today, oldest first."""
        query = (
            "SELECT r.card_id FROM review r JOIN schedule s ON s.card_id = r.card_id "
            "JOIN card c ON c.id = r.card_id "
            "WHERE r.id IN (SELECT max(id) FROM review WHERE study_day = :today AND kind != 'practice' GROUP BY card_id) "
            f"AND r.grade < {REDRILL_BELOW} {_ACTIVE} {_lesson_filter(lessons)} ORDER BY r.id"
        )
        return self._select_ids(query, today=today, lessons=lessons)

    def _ids(self, condition: str, order: str, *, today: date, lessons, limit: int) -> list[str]:
        query = (f"SELECT s.card_id {_FROM} WHERE {condition} {_ACTIVE} {_lesson_filter(lessons)} "
                 f"ORDER BY {order} LIMIT :limit")
        return self._select_ids(query, today=today, lessons=lessons, limit=max(0, limit))

    def _select_ids(self, query: str, **params) -> list[str]:
        statement = text(query)
        if params.get("lessons") is not None:
            statement = statement.bindparams(bindparam("lessons", expanding=True))
            params["lessons"] = list(params["lessons"])
        else:
            params.pop("lessons", None)
        params["today"] = params["today"].isoformat()

        def work(session: Session) -> list[str]:
            return [row[0] for row in session.connection().execute(statement, params)]

        return self._run(work)

    def day_counts(self, day: date, *, lessons: Collection[str] | None = None) -> DayCounts:
        """How many answers of each kind the log holds for a study day, for some lessons or all.

        The daily limits are per lesson, as Anki's are per deck: a session of one lesson
        never uses up the new cards of another reviewed in a second window.
        """
        if lessons is None:
            query = text("SELECT kind, count(*) FROM review WHERE study_day = :day GROUP BY kind")
            params: dict = {"day": day.isoformat()}
        else:
            query = text("SELECT r.kind, count(*) FROM review r JOIN card c ON c.id = r.card_id "
                         "WHERE r.study_day = :day AND c.lesson_id IN :lessons GROUP BY r.kind"
                         ).bindparams(bindparam("lessons", expanding=True))
            params = {"day": day.isoformat(), "lessons": list(lessons)}
        counts = self._run(lambda s: dict(s.connection().execute(query, params).all()))
        return DayCounts(**{kind: counts.get(kind, 0) for kind in ANSWER_KINDS})

    # ----------------------------------------------------------------- one card

    def state(self, card_id: str) -> CardState:
        def work(session: Session) -> CardState:
            return _state(_schedule_row(session, card_id), session.get(CardRow, card_id))

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
        if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 5:
            raise ValueError(f"grade must be an int from 0 to 5, got {grade!r}")
        moment = _utc(reviewed_at)
        kept = typed[:TYPED_MAX] if typed is not None else None
        duration = max(0, min(int(duration_ms), 86_400_000))

        def work(session: Session) -> Answer:
            row = _schedule_row(session, card_id)
            before = _schedule(row)
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
                                  .order_by(ReviewRow.id.desc()).limit(1)).one()
            if latest != review_id:
                raise StoreError(f"{review.card_id} was answered again since (in another window?), "
                                 "and only its latest answer can be undone")
            row = _schedule_row(session, review.card_id)
            _set_schedule(row, _answer(review).before)
            session.add(row)
            session.delete(review)
            session.flush()
            return _state(row, session.get(CardRow, review.card_id))

        return self._run(work, write=True)

    def set_flags(self, card_id: str, *, suspended: bool | None = None, buried_until: object = KEEP) -> CardState:
        """Suspend or unsuspend a card, or bury it until a day (None unburies). Returns the state before."""

        def work(session: Session) -> CardState:
            row = _schedule_row(session, card_id)
            before = _state(row, None)
            if suspended is not None:
                row.suspended = suspended
            if buried_until is not KEEP:
                row.buried_until = buried_until
            session.add(row)
            return before

        return self._run(work, write=True)

    def answers(self, card_id: str | None = None, *, since: date | None = None) -> list[Answer]:
        """The log, oldest first: for one card, or all of it (from a study day on)."""

        def work(session: Session) -> list[Answer]:
            query = select(ReviewRow).order_by(ReviewRow.id)
            if card_id is not None:
                query = query.where(ReviewRow.card_id == card_id)
            if since is not None:
                query = query.where(ReviewRow.study_day >= since)
            return [_answer(row) for row in session.exec(query)]

        return self._run(work)

    # ----------------------------------------------------------------- overview

    def due_count(self, day: date, *, lessons: Collection[str] | None = None) -> int:
        """Cards that will be due on or before ``day`` (suspended, buried and removed ones left out)."""
        return self._count(f"s.due <= :day {_ACTIVE}", day, lessons)

    def status(self, today: date, *, lessons: Collection[str] | None = None) -> Status:
        due_now = self.due_count(today, lessons=lessons)
        new_cards = self._count(f"s.due IS NULL {_ACTIVE}", today, lessons)
        learned = self._count("s.due IS NOT NULL AND c.removed = 0 AND c.kind != 'practice'", today, lessons)
        next_due = self._scalar(f"SELECT min(s.due) {_FROM} WHERE s.due > :day {_ACTIVE} {_lesson_filter(lessons)}",
                                today, lessons)
        return Status(due_now=due_now, new_cards=new_cards, learned=learned,
                      next_due=date.fromisoformat(next_due) if next_due else None,
                      streak=self.streaks(today)[0], counts=self.day_counts(today, lessons=lessons))

    def _count(self, where: str, day: date, lessons) -> int:
        return self._scalar(f"SELECT count(*) {_FROM} WHERE {where} {_lesson_filter(lessons)}", day, lessons)

    def _scalar(self, query: str, day: date, lessons):
        statement = text(query.replace(":today", ":day"))
        params: dict = {"day": day.isoformat()}
        if lessons is not None:
            statement = statement.bindparams(bindparam("lessons", expanding=True))
            params["lessons"] = list(lessons)
        return self._run(lambda s: s.connection().execute(statement, params).scalar())

    def _rows(self, query: str, lessons: Collection[str] | None = None, **params) -> list:
        """All rows of a read-only query; ``:lessons`` (if used) expands to the lesson ids."""
        statement = text(query)
        if lessons is not None:
            statement = statement.bindparams(bindparam("lessons", expanding=True))
            params["lessons"] = list(lessons)
        params = {key: value.isoformat() if isinstance(value, date) else value for key, value in params.items()}
        return self._run(lambda s: s.connection().execute(statement, params).all())

    def reviews_per_day(self, since: date, until: date, *, lessons: Collection[str] | None = None) -> dict[date, int]:
        """Answers of every kind per study day in [since, until], for a heatmap; days without answers are absent."""
        rows = self._rows(f"SELECT r.study_day, count(*) {_from_review(lessons)} WHERE r.study_day BETWEEN :since AND :until "
                          f"{_lesson_filter(lessons)} GROUP BY r.study_day ORDER BY r.study_day",
                          lessons, since=since, until=until)
        return {date.fromisoformat(day): count for day, count in rows}

    def streaks(self, today: date, *, lessons: Collection[str] | None = None) -> tuple[int, int]:
        """(current, longest) runs of study days with at least one answer, up to ``today``.

        The current run ends today, or yesterday when nothing was answered yet today.
        """
        rows = self._rows(f"SELECT DISTINCT r.study_day {_from_review(lessons)} WHERE r.study_day <= :today "
                          f"{_lesson_filter(lessons)} ORDER BY r.study_day", lessons, today=today)
        longest = run = 0
        previous = None
        for day in (date.fromisoformat(row[0]) for row in rows):
            run = run + 1 if previous is not None and day - previous == timedelta(days=1) else 1
            longest = max(longest, run)
            previous = day
        current = run if previous is not None and (today - previous).days <= 1 else 0
        return current, longest

    def forecast(self, today: date, days: int, *, lessons: Collection[str] | None = None) -> list[tuple[date, int]]:
        """Cards due on today and each of the next ``days - 1`` days, as review will show them.

        Today's count includes everything overdue; a buried card counts on the day it comes back.
        """
        days = max(days, 1)
        last = today + timedelta(days=days - 1)
        rows = self._rows(
            "SELECT max(s.due, coalesce(s.buried_until, s.due), :today) AS d, count(*) "
            f"{_FROM} WHERE s.due IS NOT NULL AND s.suspended = 0 AND c.removed = 0 AND c.kind != 'practice' "
            f"{_lesson_filter(lessons)} GROUP BY d HAVING d <= :last", lessons, today=today, last=last)
        counts = dict(rows)
        return [(today + timedelta(days=i), counts.get((today + timedelta(days=i)).isoformat(), 0))
                for i in range(days)]

    def retention(self, since: date | None = None, *, lessons: Collection[str] | None = None) -> Retention:
        """How often due reviews were passed (grade 3 or more), young (interval < 21 days) and mature.

        Only ``review`` answers count: a new card's first answer, same-day re-drills and practice
        checks say nothing about recall after an interval.
        """
        rows = self._rows(
            f"SELECT r.interval_before >= {MATURE_DAYS} AS mature, sum(r.grade >= 3), count(*) {_from_review(lessons)} "
            f"WHERE r.kind = 'review' AND r.study_day >= :since {_lesson_filter(lessons)} GROUP BY mature",
            lessons, since=since or date.min)
        found = {bool(mature): (passed, total) for mature, passed, total in rows}
        young, mature = found.get(False, (0, 0)), found.get(True, (0, 0))
        return Retention(young[0], young[1], mature[0], mature[1])

    def card_states(self, today: date, *, lessons: Collection[str] | None = None) -> dict[str, int]:
        """How many cards are in each state: new, learning, young, mature, suspended, removed.

        learning: reviewed, but not recalled twice in a row since its first answer or its latest
        lapse; young: interval under 21 days; mature: 21 days or more. A removed card counts as
        removed only, a suspended one as suspended only; a buried card counts by its schedule.
        """
        rows = self._rows(
            "SELECT CASE WHEN c.removed THEN 'removed' WHEN s.suspended THEN 'suspended' "
            "WHEN s.due IS NULL THEN 'new' "
            f"WHEN s.repetitions < 2 THEN 'learning' WHEN s.interval < {MATURE_DAYS} THEN 'young' "
            f"ELSE 'mature' END AS state, count(*) {_FROM} WHERE 1 {_lesson_filter(lessons)} GROUP BY state",
            lessons)
        counts = dict(rows)
        return {state: counts.get(state, 0) for state in CARD_STATES}

    def answer_count(self, *, lessons: Collection[str] | None = None) -> int:
        """How many answers the log holds."""
        return self._rows(f"SELECT count(*) {_from_review(lessons)} WHERE 1 {_lesson_filter(lessons)}", lessons)[0][0]

    def average_ef(self, *, lessons: Collection[str] | None = None) -> float | None:
        """Mean easiness factor of reviewed cards still in their lessons."""
        value = self._rows(f"SELECT avg(s.ef100) {_FROM} WHERE s.due IS NOT NULL AND c.removed = 0 "
                           f"{_lesson_filter(lessons)}", lessons)[0][0]
        return value / 100 if value is not None else None

    def leeches(self, min_lapses: int = LEECH_LAPSES, *, lessons: Collection[str] | None = None) -> list[CardState]:
        """Cards that lapsed at least ``min_lapses`` times, most lapses first."""
        return self._states(ScheduleRow.lapses >= min_lapses, ScheduleRow.lapses.desc(), lessons=lessons)

    def hardest(self, limit: int = 10, *, lessons: Collection[str] | None = None) -> list[CardState]:
        """Reviewed cards with the lowest easiness factor, lowest first (more lapses first among equals)."""
        return self._states(ScheduleRow.due.is_not(None), (ScheduleRow.ef100, ScheduleRow.lapses.desc()),
                            limit=limit, lessons=lessons)

    def _states(self, where, order, *, limit: int | None = None, lessons=None) -> list[CardState]:
        def work(session: Session) -> list[CardState]:
            query = (select(ScheduleRow, CardRow).join(CardRow, CardRow.id == ScheduleRow.card_id)
                     .where(where, CardRow.removed == False)  # noqa: E712
                     .order_by(*(order if isinstance(order, tuple) else (order,)), ScheduleRow.card_id))
            if lessons is not None:
                query = query.where(CardRow.lesson_id.in_(list(lessons)))
            if limit is not None:
                query = query.limit(limit)
            return [_state(row, card) for row, card in session.exec(query)]

        return self._run(work)


# --------------------------------------------------------------------------- helpers

_FROM = "FROM schedule s JOIN card c ON c.id = s.card_id"
# A card the learner can be shown: not suspended, not buried past today, not removed, not a practice card.
_ACTIVE = ("AND s.suspended = 0 AND (s.buried_until IS NULL OR s.buried_until <= :today) "
           "AND c.removed = 0 AND c.kind != 'practice'")


def _digest(rows: list[tuple[str, str, str, str]]) -> str:
    """One hash of a lesson's cards in order: equal digests mean nothing to sync."""
    joined = "\x1e".join("\x1f".join(row) for row in rows)
    return "v1:" + hashlib.sha256(joined.encode()).hexdigest()


def _sync_lesson(raw: sqlite3.Connection, lesson_id: str, rows: list[tuple[str, str, str, str]],
                 stamp: str) -> SyncReport:
    """Compare one lesson card by card and write the differences."""
    stored = {row[0]: row for row in raw.execute(
        "SELECT id, item_id, kind, position, fingerprint, removed FROM card WHERE lesson_id = ?", (lesson_id,))}
    added, changed, moved, restored = [], [], [], []
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


def _add(a: SyncReport, b: SyncReport) -> SyncReport:
    return SyncReport(a.added + b.added, a.changed + b.changed, a.removed + b.removed, a.restored + b.restored,
                      a.moved + b.moved)


def _driver(session: Session) -> sqlite3.Connection:
    """The sqlite3 connection under a session (in its transaction), for bulk work where
    SQLAlchemy's row objects would cost several times more than the query."""
    return session.connection().connection.driver_connection


def _from_review(lessons: Collection[str] | None) -> str:
    """The review log, joined to its cards only when a lesson filter needs them (the join costs a lookup per row)."""
    return "FROM review r" if lessons is None else "FROM review r JOIN card c ON c.id = r.card_id"


def _lesson_filter(lessons: Collection[str] | None) -> str:
    return "" if lessons is None else "AND c.lesson_id IN :lessons"


def _is_locked(exc: Exception) -> bool:
    message = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in message or "database table is locked" in message or "busy" in message


def _utc(moment: datetime) -> datetime:
    """An aware UTC time; a naive one is taken as local time (what datetime.astimezone does)."""
    return moment.astimezone(UTC)


def _utc_text(moment: datetime) -> str:
    return _utc(moment).strftime("%Y-%m-%d %H:%M:%S.%f")


def _put_meta(connection, key: str, value: str) -> None:
    connection.exec_driver_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def _schedule_row(session: Session, card_id: str) -> ScheduleRow:
    row = session.get(ScheduleRow, card_id)
    if row is None:
        raise StoreError(f"no card {card_id!r} in {describe(session.get_bind().url)}; sync its lesson first")
    return row


def _answered_on(session: Session, card_id: str, day: date) -> bool:
    query = select(ReviewRow.id).where(ReviewRow.card_id == card_id, ReviewRow.study_day == day).limit(1)
    return session.exec(query).first() is not None


def _schedule(row: ScheduleRow) -> Schedule:
    return Schedule(repetitions=row.repetitions, ef100=row.ef100, interval=row.interval, due=row.due,
                    lapses=row.lapses)


def _set_schedule(row: ScheduleRow, schedule: Schedule) -> None:
    row.repetitions = schedule.repetitions
    row.ef100 = schedule.ef100
    row.interval = schedule.interval
    row.due = schedule.due
    row.lapses = schedule.lapses
    row.leech = schedule.lapses >= LEECH_LAPSES


def _columns(schedule: Schedule, suffix: str) -> dict:
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
    return Answer(id=row.id, card_id=row.card_id, reviewed_at=moment,
                  study_day=row.study_day, kind=row.kind, grade=row.grade, typed=row.typed,
                  duration_ms=row.duration_ms, before=schedule("before"), after=schedule("after"))


def _state(row: ScheduleRow, card: CardRow | None) -> CardState:
    return CardState(card_id=row.card_id, schedule=_schedule(row), suspended=row.suspended,
                     buried_until=row.buried_until, leech=row.leech, removed=bool(card and card.removed))
