"""Everything SQLite-specific, in one place: where the file is, pragmas, locking, WAL, errors.

A :class:`SQLiteDatabase` wraps an engine and runs every unit of work (one transaction each);
queries go through :func:`.database.execute`, with the values in this file's formats
(:meth:`SQLiteDatabase.value`). :mod:`.postgresql` is the other backend.

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

import contextlib
import itertools
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import platformdirs
from sqlalchemy import Connection, Engine, Executable, Table, create_engine, event
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.pool import StaticPool

from bertdrill.adapters.store.database import (  # noqa: F401 (utc: re-exported)
    Backend,
    Database,
    Precompiled,
    learner_name,
    login_name,
    utc,
    utc_text,
)
from bertdrill.adapters.store.reading import refuse_writes
from bertdrill.core.errors import StoreError, os_reason
from bertdrill.core.i18n import _, language
from bertdrill.core.languages import written_short

LOCK_TIMEOUT = 10.0  # seconds to wait for another program's lock before giving up ($BERTDRILL_LOCK_TIMEOUT)
BUSY_TIMEOUT_MS = 5000  # how long SQLite itself waits, per statement, within that
T = TypeVar("T")
WRITING = "bertdrill_writing"  # a connection's info: its unit writes (see SQLiteDatabase._connected)
LEAVES_KEPT = "bertdrill_leaves_kept"  # a connection's info: its write unit keeps what reads kept (leaves_kept_reads)
DRIVEN = "bertdrill_driven"  # a connection's info: the driver's transaction is open, said by SQLiteDatabase._unit


def database_url(db: str | None = None) -> URL:
    """Where the database lives: ``--db``, else ``BERTDRILL_DB``, else ``BERTDRILL_HOME/bertdrill.db``,
    else the platform's user data folder (``~/.local/share/bertdrill/bertdrill.db`` on Linux).

    A value with ``://`` (or starting ``sqlite:`` or ``sqlite+``) is an SQLAlchemy URL, SQLite's or
    PostgreSQL's (``postgresql://``, a class: :mod:`.postgresql`); anything else is a file path.
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
            raise StoreError(_('{raw!r} is not a database URL (try a file path, or sqlite:///path/to/file.db)').format(
                raw=_masked(raw))) from None
        except ValueError:  # SQLAlchemy reads the port with int(): "notaport", or an unclosed "[::1"
            raise StoreError(_("{url} is not a database URL: its host or port cannot be read (a port is a number, "
                               "an IPv6 address is written in brackets: [::1])").format(url=_masked(raw))) from None
        if url.get_backend_name() not in ("sqlite", "postgresql"):
            raise StoreError(_(
                "{url}: bertdrill keeps reviews in SQLite (a file path or a sqlite:/// URL) "
                "or, for a class, in PostgreSQL (postgresql://)").format(url=_masked(raw)))
        return _sqlite_file(url, raw) if url.get_backend_name() == "sqlite" else url
    return URL.create("sqlite", database=str(Path(raw).expanduser().absolute()))


def _masked(raw: str) -> str:
    """A URL that could not be read, its passwords hidden all the same (before ``@`` and after ``?``)."""
    text = re.sub(r"(://[^/@:]*:)[^/@]*@", r"\1***@", raw)
    return re.sub(r"((?:^|[?&])(?:ssl)?password=)[^&]*", r"\1***", text)


FILE_MODES = ("ro", "rw", "rwc")
"""SQLite's ``mode`` options that name a file; ``memory`` keeps nothing once the command ends."""


def _sqlite_file(url: URL, shown: str) -> URL:
    """A SQLite URL naming a file through Python's sqlite3, so every answer is kept; ``?mode=ro`` honoured.

    Refused: another driver (``sqlite+pysqlcipher://`` needs a library bertdrill does not use), an
    in-memory database (``sqlite://``, ``:memory:``, ``mode=memory``: answers gone at exit) and
    options SQLite's URI filenames do not take from bertdrill. ``sqlite:///x.db?mode=ro`` becomes
    SQLite's own ``file:x.db?mode=ro`` URI, which the driver honours (it ignores a bare ``mode``).
    """
    if url.get_driver_name() != "pysqlite":
        raise StoreError(_("{url}: bertdrill opens SQLite with Python's own sqlite3 (sqlite:///path), "
                           "not the {driver} driver").format(url=shown, driver=url.get_driver_name()))
    database = url.database or ""
    path = database.removeprefix("file:")
    options = {key: value for key, value in url.query.items() if key != "uri"}
    mode = options.pop("mode", "rwc")
    if path in ("", ":memory:") or mode == "memory" or options.get("vfs") == "memdb":
        raise StoreError(_("{url} is an in-memory database: every answer would be gone when the command ends; "
                           "give a file path").format(url=shown))
    if options or mode not in FILE_MODES:
        raise StoreError(_("{url}: the only option bertdrill takes after '?' is mode=ro (read-only: "
                           "status and stats), mode=rw or mode=rwc").format(url=shown))
    if "mode" not in url.query or database.startswith("file:"):
        return url
    return URL.create("sqlite", database=f"file:{path}", query={"mode": mode, "uri": "true"})


def describe(url: URL) -> str:
    """The database as a person would name it: the file path, or the URL."""
    database = url.database or ""
    if database in ("", ":memory:"):
        return "the in-memory database"
    if database.startswith("file:"):
        return database.removeprefix("file:").split("?", 1)[0]
    return database


def engine(db: str | URL | None = None, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS, read_only: bool = False,
           pinned: bool = False, guarded: bool = False) -> Engine:
    """An engine for the database, its folder created if needed; the schema is not touched yet.

    ``read_only``: a file that cannot be written is fine (a reader never writes to it). ``pinned``: one
    connection for the engine's life (an in-memory database, a reader's temporary tables). ``guarded``: a
    reader's; SQLite refuses every write to the file (:func:`.reading.refuse_writes`), temporary tables in memory.
    """
    url = db if isinstance(db, URL) else database_url(db)
    _check_file(url, read_only=read_only)
    try:
        built = create_engine(url, poolclass=StaticPool) if pinned else create_engine(url)
    except (ArgumentError, NoSuchModuleError) as exc:
        raise StoreError(f"{describe(url)}: {exc}") from None

    @event.listens_for(built, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        # The driver's own transaction handling is off: we say BEGIN ourselves (below).
        dbapi_connection.isolation_level = None
        dbapi_connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        dbapi_connection.execute("PRAGMA foreign_keys = ON")
        dbapi_connection.execute("PRAGMA synchronous = FULL")
        if guarded:
            dbapi_connection.execute("PRAGMA temp_store = MEMORY")
            dbapi_connection.set_authorizer(refuse_writes)
        # WAL is set once by Store.migrate, after the version check: it rewrites the file's header.

    @event.listens_for(built, "begin")
    def _on_begin(connection: Any) -> None:
        if connection.info.get(DRIVEN):
            return  # a statement sent through SQLAlchemy inside a unit that began the driver's transaction itself
        immediate = connection.info.get(WRITING)  # set for a write's unit by SQLiteDatabase._connected
        # on the driver's connection: through SQLAlchemy's statement machinery this one word cost 15-20 us of the
        # 0.1 ms of Python around each transaction (two or three of them per answer)
        connection.connection.driver_connection.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return built


def _end(connection: Connection, driver: sqlite3.Connection, *, commit: bool) -> None:
    """End a unit's transaction (:meth:`SQLiteDatabase._unit`): through SQLAlchemy where a statement sent through it
    began its own, else on the driver. A failed commit is rolled back (SQLite may leave the transaction open) and
    raised; a failed rollback is not raised over the error that asked for it, and the connection, still in a
    transaction, is not kept (:meth:`SQLiteDatabase._connected`)."""
    try:
        if not commit:
            _rolled_back(connection, driver)
            return
        try:
            connection.commit() if connection.get_transaction() is not None else driver.commit()
        except BaseException:
            _rolled_back(connection, driver)
            raise
    finally:
        connection.info[DRIVEN] = False


def _rolled_back(connection: Connection, driver: sqlite3.Connection) -> None:
    """SQLAlchemy's transaction (one whose commit failed too: no longer active, still to be rolled back), then the
    driver's, whichever is left."""
    with contextlib.suppress(Exception):
        if connection.get_transaction() is not None:
            connection.rollback()
        if driver.in_transaction:
            driver.rollback()


def _check_file(url: URL, *, read_only: bool = False) -> None:
    """Clear messages for the file problems SQLite would report vaguely, or too late."""
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return
    path = Path(database)
    if path.is_dir():
        raise StoreError(_('{path} is a folder, not a database file').format(path=path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(_('cannot create the folder for the database {path}: {value}').format(path=path, value=os_reason(exc))) from None
    if path.exists() and not read_only and not os.access(path, os.W_OK):
        raise StoreError(read_only_message(path))
    if not read_only and not os.access(path.parent, os.W_OK):
        raise StoreError(folder_message(path))


def lock_timeout_from_environment() -> float:
    text = os.environ.get("BERTDRILL_LOCK_TIMEOUT")
    if not text:
        return LOCK_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 3600:
        raise StoreError(_('BERTDRILL_LOCK_TIMEOUT={text!r} is not a number of seconds from 0 to 3600').format(text=text))
    return seconds


def read_only_message(where: object) -> str:
    return (f"{where} is read-only; bertdrill writes every answer to it. "
            "Make it writable, or point --db / BERTDRILL_DB at another file")


def folder_message(where: object) -> str:
    """The file may be writable, but its folder is not: SQLite keeps a WAL database's -wal and -shm beside it."""
    folder = Path(str(where)).parent
    return _("the folder {folder} cannot be written, and bertdrill saves every answer to {where} through files "
             "SQLite keeps beside it (-wal and -shm): make the folder writable, or copy the database to one "
             "that is (status and stats read it where it is)").format(folder=folder, where=where)


def _is_locked(exc: Exception) -> bool:
    message = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in message or "database table is locked" in message or "busy" in message


_AS_THEY_ARE = frozenset({int, float, str, bytes, type(None)})
"""The types SQLite's driver stores as they are (a subclass, such as bool, is converted: exact types only)."""


class SQLiteDatabase(Database):
    """An engine, and the one way to run work on it: a transaction, retried while the file is locked.

    The learner is ``learner``, else ``$BERTDRILL_LEARNER``, else the login name: a file made before
    learners existed is migrated to the learner who opens it first (it had only one).
    """

    backend = Backend.sqlite
    tallied = True  # the triggers of schema 13 count every answer in answer_tally
    locked_from_begin = True  # BEGIN IMMEDIATE: the write lock before the first statement

    def __init__(self, engine: Engine, *, lock_timeout: float = LOCK_TIMEOUT, learner: str | None = None):
        self.engine = engine
        self._idle: Connection | None = None  # see _connected
        self._idle_lock = threading.Lock()
        self._writes = itertools.count()  # this store's write units, counted as each ends: see kept_read
        self._written = next(self._writes)
        self._kept: dict[Callable[..., Any], tuple[tuple[Any, ...], Any]] = {}
        self.lock_timeout = lock_timeout
        self.where = describe(engine.url)
        self.learner = learner_name(learner, login_name)

    @contextmanager
    def _connected(self, write: bool) -> Iterator[Connection]:
        """The store's idle connection, else one from the pool; a write's transaction begins ``BEGIN IMMEDIATE``
        (the write lock first, so no lock upgrade can deadlock), said in the connection's ``info`` for the begin
        listener (:func:`engine`).

        One connection is kept between units, neither in a transaction nor locking anything (the unit ended
        both): checking one out of the pool and back, and setting an execution option for a write, were 15 us of
        the Python around each unit, two or three units per answer. A unit run inside another, or in another
        thread meanwhile, takes one from the pool; a connection SQLAlchemy gave up on is not kept."""
        with self._idle_lock:
            connection, self._idle = self._idle, None
        if connection is not None and connection.invalidated:
            connection.close()  # broken: SQLAlchemy gave up on it (an engine replaced releases it first: release_idle)
            connection = None
        if connection is None or connection.closed:
            connection = self.engine.connect()
        connection.info[WRITING] = write
        try:
            yield connection
        finally:
            connection.info[WRITING] = False
            # committed or rolled back: what this store's reads kept may be gone (kept_read), unless the unit said not
            if write and not connection.info.pop(LEAVES_KEPT, False):
                self._written = next(self._writes)
            kept = not (connection.closed or connection.invalidated or connection.get_transaction() is not None
                        or connection.connection.driver_connection.in_transaction)  # type: ignore[union-attr]
            with self._idle_lock:
                if kept and self._idle is None:
                    self._idle, connection = connection, None
            if connection is not None:
                connection.close()

    def _unit(self, connection: Connection, work: Callable[[Connection], T], *, write: bool, kept: bool,
              read_only: bool) -> T:
        """The unit's transaction said to the driver itself: SQLAlchemy's begin, commit and rollback (a transaction
        object, its events, the pool's bookkeeping) were 15 us of the 17 around an empty unit, and an answer runs
        two (its preview's and its own). A statement the work sends through SQLAlchemy (a migration's, a report's)
        starts SQLAlchemy's own transaction over the open one (its begin says nothing: :func:`engine`), which ends
        the driver's with it. SQLite needs nothing more of a read (:meth:`Database.reading_unit`): its ``BEGIN``
        reads one snapshot, and a reader's connection refuses writes (:func:`.reading.refuse_writes`); the unit's hooks
        are asked as :meth:`Database._unit` asks them."""
        driver: sqlite3.Connection = connection.connection.driver_connection  # type: ignore[assignment]
        driver.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        connection.info[DRIVEN] = True
        try:
            if not write:
                self.reading_unit(connection, read_only=read_only)
            self.begun(connection)
            result = work(connection)
        except BaseException:
            _end(connection, driver, commit=False)
            raise
        _end(connection, driver, commit=kept)
        return result

    def close(self) -> None:
        self.release_idle()
        super().close()

    def release_idle(self) -> None:
        """Give the kept connection back before the engine is disposed (closing the store, or a reader's file
        copied into memory): disposing closes the driver's connection under it, and the pool's reset of it later
        printed a traceback at exit. The last connection to close ends the WAL's files."""
        with self._idle_lock:
            idle, self._idle = self._idle, None
        if idle is not None:
            idle.close()

    def kept_read(self, connection: Connection, read: Callable[[Connection], T]) -> T:
        """What ``read`` gave the last time it ran on this connection, if nothing was committed to the file since:
        no other connection (``PRAGMA data_version``, the same in every transaction of a connection until another
        connection commits) and no write unit of this store (which may have used this very connection, whose own
        commits leave ``data_version`` as it was) but those that said they change nothing kept (:meth:`leaves_kept_reads`:
        an answer). The scheduler choice is read in every preview and again in every answer, two statements each time,
        to follow a switch made in another window: each now reads one number instead, while nothing else was written.
        A unit that changes what a read keeps does not read it back through this (a switch never reads the choice)."""
        driver: sqlite3.Connection = connection.connection.driver_connection  # type: ignore[assignment]
        mark = (driver, driver.execute("PRAGMA data_version").fetchone()[0], self._written)
        kept = self._kept.get(read)
        if kept is not None and kept[0] == mark:
            return cast(T, kept[1])
        value = read(connection)
        self._kept[read] = (mark, value)
        return value

    def leaves_kept_reads(self, connection: Connection) -> None:
        connection.info[LEAVES_KEPT] = True

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
            return StoreError(_('{where} is locked by another program (waited {seconds} s); close it (another bertdrill?) and try again').format(where=self.where, seconds=written_short(self.lock_timeout, language())))
        if "not a database" in lowered or "encrypted" in lowered:
            return StoreError(_('{where} is not a bertdrill database (SQLite says: {message})').format(where=self.where, message=message))
        if "malformed" in lowered or "corrupt" in lowered:
            return StoreError(_('{where} is damaged (SQLite says: {message}); restore it from a backup').format(where=self.where, message=message))
        code = getattr(getattr(exc, "orig", exc), "sqlite_errorname", "")
        folder_fails = code in ("SQLITE_READONLY_DIRECTORY", "SQLITE_CANTOPEN", "SQLITE_READONLY_CANTINIT")
        if folder_fails and Path(self.where).exists() and os.access(self.where, os.W_OK):
            return StoreError(folder_message(self.where))  # the file could be written: its folder cannot
        if "readonly" in lowered or "read-only" in lowered:
            return StoreError(read_only_message(self.where))
        if "unable to open" in lowered:
            return StoreError(_('cannot open {where}: check that its folder exists and is writable').format(where=self.where))
        if "disk is full" in lowered:
            return StoreError(_('the disk holding {where} is full; nothing was written').format(where=self.where))
        return StoreError(f"{self.where}: {message}")

    def upsert(self, table: Table) -> Any:
        return sqlite_insert(table)

    def value(self, value: Any) -> Any:
        """Dates as ISO text, times as UTC text, flags as 0 or 1: the formats of the file."""
        if type(value) in _AS_THEY_ARE:  # most values, first: a switch writes a million
            return value
        if isinstance(value, datetime):
            return utc_text(value)
        if isinstance(value, date):
            return value.isoformat()
        if isinstance(value, bool):
            return int(value)
        return value

    def first(self, connection: Connection, statement: Executable, params: dict[str, Any]) -> Sequence[Any] | None:
        return self._cursor(connection, statement, params).fetchone()  # type: ignore[no-any-return]  # sqlite3's row

    def every(self, connection: Connection, statement: Executable, params: dict[str, Any]) -> list[Sequence[Any]]:
        return self._cursor(connection, statement, params).fetchall()

    def _cursor(self, connection: Connection, statement: Executable, params: dict[str, Any]) -> sqlite3.Cursor:
        """The statement, compiled once (:class:`.database.Precompiled`), run on the driver's connection in the
        transaction: SQLAlchemy's execution of a compiled statement (its cache lookup, parameter processing, result
        object) was 15-20 us a statement, most of an answer's CPU beside Anki's. The values come back as the file
        holds them (dates as ISO text), which the readers of these rows take (:func:`.database.as_date`)."""
        compiled = Precompiled.of(statement, connection.dialect)
        driver: sqlite3.Connection = connection.connection.driver_connection  # type: ignore[assignment]
        return driver.execute(compiled.sql, compiled.values(params, self.value))

    def schema_version(self, connection: Connection) -> int:
        return int(connection.exec_driver_sql("PRAGMA user_version").scalar_one())

    def set_schema_version(self, connection: Connection, version: int) -> None:
        connection.exec_driver_sql(f"PRAGMA user_version = {int(version)}")

    def has_tables(self, connection: Connection) -> bool:
        return bool(connection.exec_driver_sql("SELECT count(*) FROM sqlite_master WHERE type = 'table'").scalar_one())

    def not_ours(self) -> str:
        return f"{self.where} is an SQLite database but not a bertdrill one; use another file"

    def written_by_bertdrill(self, connection: Connection) -> bool:
        columns = {row[1] for row in connection.exec_driver_sql("PRAGMA table_info(meta)")}
        return {"key", "value"} <= columns and super().written_by_bertdrill(connection)

    def prepare(self) -> None:
        self._use_wal()

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
