"""Everything SQLite-specific, in one place: where the file is, pragmas, locking, WAL, errors.

A :class:`Database` wraps an engine and runs every unit of work (one transaction each) and
every query (one way: :meth:`Database.rows`). A PostgreSQL backend replaces this module.

Durability choices:

- WAL journal: readers (``bertdrill status``) never block the writer.
- ``synchronous=FULL``: each commit is fsynced to the WAL before it returns.
  ``NORMAL`` already survives a killed process in WAL mode, but may drop the
  last commits on power loss; one fsync per answer costs a few milliseconds a
  person never notices, and a grade the screen acknowledged must never vanish.
- Writes start with ``BEGIN IMMEDIATE`` (no lock upgrades, so no deadlock
  between two bertdrill processes), SQLite waits up to ``busy_timeout`` for a
  lock, and a unit that still meets "database is locked" is retried as a whole
  until :data:`LOCK_TIMEOUT` has passed; only then does the learner hear of it.
- The schema version is read before anything is written (WAL included, which
  changes the file's header), so a refused file, newer or not bertdrill's, is
  left exactly as it was; a store opened for reading only never writes at all.

Dates are ISO strings (``2024-05-01``), times are UTC (``2024-05-01 06:30:00.000000``),
the formats SQLAlchemy uses for ``Date`` and ``DateTime`` on SQLite.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import platformdirs
from sqlalchemy import CursorResult, Engine, bindparam, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlmodel import Session

from ..errors import StoreError

LOCK_TIMEOUT = 10.0  # seconds to wait for another program's lock before giving up ($BERTDRILL_LOCK_TIMEOUT)
BUSY_TIMEOUT_MS = 5000  # how long SQLite itself waits, per statement, within that
T = TypeVar("T")


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


def engine(db: str | URL | None = None, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS, read_only: bool = False) -> Engine:
    """An engine for the database, its folder created if needed; the schema is not touched yet.

    ``read_only``: a file that cannot be written is fine (a reader never writes to it).
    """
    url = db if isinstance(db, URL) else database_url(db)
    _check_file(url, read_only=read_only)
    try:
        built = create_engine(url)
    except (ArgumentError, NoSuchModuleError) as exc:
        raise StoreError(f"{describe(url)}: {exc}") from None

    @event.listens_for(built, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        # The driver's own transaction handling is off: we say BEGIN ourselves (below).
        dbapi_connection.isolation_level = None
        dbapi_connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        dbapi_connection.execute("PRAGMA foreign_keys = ON")
        dbapi_connection.execute("PRAGMA synchronous = FULL")
        # WAL is set once by Store.migrate, after the version check: it rewrites the file's header.

    @event.listens_for(built, "begin")
    def _on_begin(connection: Any) -> None:
        immediate = connection.get_execution_options().get("immediate")
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return built


def _check_file(url: URL, *, read_only: bool = False) -> None:
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
    if path.exists() and not read_only and not os.access(path, os.W_OK):
        raise StoreError(read_only_message(path))


def lock_timeout_from_environment() -> float:
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


def read_only_message(where: object) -> str:
    return (f"{where} is read-only; bertdrill writes every answer to it. "
            "Make it writable, or point --db / BERTDRILL_DB at another file")


def _is_locked(exc: Exception) -> bool:
    message = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in message or "database table is locked" in message or "busy" in message


def utc(moment: datetime) -> datetime:
    """An aware UTC time; a naive one is taken as local time (what datetime.astimezone does)."""
    return moment.astimezone(UTC)


def utc_text(moment: datetime) -> str:
    return utc(moment).strftime("%Y-%m-%d %H:%M:%S.%f")


class Database:
    """An engine, and the one way to run work on it: a transaction, retried while the file is locked."""

    def __init__(self, engine: Engine, *, lock_timeout: float = LOCK_TIMEOUT):
        self.engine = engine
        self.lock_timeout = lock_timeout
        self.where = describe(engine.url)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

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

    def rows(self, query: str, lessons: Collection[str] | None = None, **params: Any) -> list[Any]:
        """All rows of a read-only query, in its own transaction (see :func:`execute`)."""
        return self._run(lambda session: list(execute(session, query, lessons, **params).all()))

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
            return StoreError(read_only_message(self.where))
        if "unable to open" in lowered:
            return StoreError(f"cannot open {self.where}: check that its folder exists and is writable")
        if "disk is full" in lowered:
            return StoreError(f"the disk holding {self.where} is full; nothing was written")
        return StoreError(f"{self.where}: {message}")

    def _use_wal(self) -> None:
        """Switch the file to WAL (a lasting property of the file; a no-op once set).

        SQLite refuses the switch inside a transaction, so it runs on the bare driver connection.
        """

        def switch() -> None:
            raw = self.engine.raw_connection()
            try:
                raw.driver_connection.execute("PRAGMA journal_mode = WAL")  # type: ignore[union-attr]
            finally:
                raw.close()

        self._retrying(switch)


def execute(session: Session, query: str, lessons: Collection[str] | None = None, **params: Any) -> CursorResult[Any]:
    """Run one SQL statement in the session's transaction: the one way bertdrill runs a query.

    Parameters are named (``:today``); dates go in as ISO text, times as UTC text, flags as 0 or 1,
    the formats of the file (see the module's docstring). ``:lessons``, if the query uses it,
    expands to the lesson ids.
    """
    statement = text(query)
    if lessons is not None:
        statement = statement.bindparams(bindparam("lessons", expanding=True))
        params["lessons"] = list(lessons)
    return session.connection().execute(statement, {key: _value(value) for key, value in params.items()})


def execute_many(session: Session, query: str, rows: Sequence[dict[str, Any]]) -> None:
    """One statement for each of ``rows`` (named parameters), in the session's transaction."""
    if rows:
        session.connection().execute(text(query), [{key: _value(value) for key, value in row.items()} for row in rows])


def _value(value: Any) -> Any:
    if isinstance(value, datetime):
        return utc_text(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool):
        return int(value)
    return value


def parse_day(text: str | None) -> date | None:
    """A date as the file keeps it (ISO text), back as a date."""
    return date.fromisoformat(text) if text else None


def parse_moment(text: str) -> datetime:
    """A time as the file keeps it (UTC text), back as an aware UTC datetime."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)
