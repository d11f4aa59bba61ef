"""What the shared store code needs of a backend: units of work, queries, the schema's version, a learner.

:mod:`.sqlite` and :mod:`.postgresql` each implement :class:`Database`; the review writes
(:mod:`.reviews`), the reports (:mod:`.reports`, :mod:`.classroom`) and the migrations are
written once, in SQL both run, against it. What the two spell differently lives in the backend
that needs it: locking (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's row locks), pragmas, the
version's home (``PRAGMA user_version``, or the ``meta`` table), date values. (DDL words are SQLAlchemy's:
:mod:`.migrations` compiles each version's tables for the dialect.)
"""

from __future__ import annotations

import getpass
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from enum import StrEnum
from operator import itemgetter
from types import TracebackType
from typing import Any, Self, TypeVar

from sqlalchemy import ClauseElement, Connection, CursorResult, Dialect, Engine, Executable, Table, bindparam, text
from sqlalchemy.sql.compiler import SQLCompiler

from bertdrill.core.errors import StoreError
from bertdrill.core.i18n import _

T = TypeVar("T")
LEARNER_MAX = 63  # PostgreSQL's longest role name: a learner is a role in a class


class Backend(StrEnum):
    """The database programs a store runs on (a migration that must say something differently matches on it)."""

    sqlite = "sqlite"
    postgresql = "postgresql"


class Database(ABC):
    """An engine, the learner whose rows are read and written, and how to run work on them."""

    backend: Backend
    engine: Engine
    where: str  # the database as a person would name it
    learner: str
    greatest = "max"  # SQL: the largest of several values
    tallied = False  # the log's answers are also counted in ``answer_tally`` (schema 13, SQLite only)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    # ------------------------------------------------------------- the backend's part

    reading = False
    """A reader's store (``status``, ``stats``...): it writes nothing to the database, ever; its
    connection is the only one (lessons it has not synced live in temporary tables: :mod:`.reading`)."""

    def _run(self, work: Callable[[Connection], T], *, write: bool = False, temporary: bool = False) -> T:
        """Run ``work`` in one transaction on a connection of its own, committed if ``write``, else rolled
        back; the whole unit is run again while the backend says the failure is passing (:meth:`_retrying`).

        The one runner of both backends: a write asks the backend for its write transaction
        (:meth:`_connected`: SQLite's ``BEGIN IMMEDIATE``). The connection's ``info["database"]`` is
        this store, for :func:`execute` and the learner. ``temporary``: the unit writes temporary tables
        only (a reader's shadows), and is committed so they last; a reader's store refuses any other write.
        """
        if write and self.reading:
            raise AssertionError(f"a reader writes nothing, and {self.where} was opened for reading")

        def transaction() -> T:
            with self._connected(write) as connection:
                connection.info["database"] = self
                return self._unit(connection, work, write=write, kept=write or temporary,
                                  read_only=self.reading and not temporary)

        return self._retrying(transaction)

    def _unit(self, connection: Connection, work: Callable[[Connection], T], *, write: bool, kept: bool,
              read_only: bool) -> T:
        """``work`` in one transaction on ``connection``, committed if ``kept``, else rolled back (a read leaves
        nothing to commit)."""
        with connection.begin() as unit:
            if not write:
                self.reading_unit(connection, read_only=read_only)
            self.begun(connection)
            result = work(connection)
            if not kept:
                unit.rollback()
        return result

    def reading_unit(self, connection: Connection, *, read_only: bool) -> None:  # noqa: B027 - SQLite needs nothing
        """What a unit that reads says first: it reads one snapshot of the database, however many statements it
        sends (SQLite's ``BEGIN`` does so already), and with ``read_only`` (a reader's store) the database itself
        refuses any write (PostgreSQL: ``READ ONLY``)."""

    @contextmanager
    def _connected(self, write: bool) -> Iterator[Connection]:
        """A connection for one unit of work, its transaction to begin as a write if ``write`` (a backend that
        begins a write differently says so here), given back to the pool after it."""
        with self.engine.connect() as connection:
            yield connection

    def begun(self, connection: Connection) -> None:  # noqa: B027 - optional: only a class server has something to do
        """The first thing in every transaction (PostgreSQL's class server: who is acting)."""

    @abstractmethod
    def _retrying(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, again while its failure is one the backend waits out; else a :class:`StoreError`."""
        ...

    def rows(self, query: str, lessons: Collection[str] | None = None, **params: Any) -> list[Any]:
        """All rows of a read-only query, in its own transaction (see :func:`execute`)."""
        return self._run(lambda connection: list(execute(connection, query, lessons, **params).all()))

    def read(self, statement: Executable, **params: Any) -> list[Any]:
        """All rows of a statement built from the tables, in its own read transaction (``learner``: the store's)."""
        params.setdefault("learner", self.learner)
        return self._run(lambda connection: list(connection.execute(statement, params).all()))

    @abstractmethod
    def upsert(self, table: Table) -> Any:
        """An INSERT into ``table`` that can say ON CONFLICT (each dialect has its own construct, the same API)."""
        ...

    def value(self, value: Any) -> Any:
        """A parameter as this backend's driver stores it."""
        return value

    def first(self, connection: Connection, statement: Executable, params: dict[str, Any]) -> Sequence[Any] | None:
        """The first row of a statement built from the tables, run in the connection's transaction (None: no row,
        or a write that returns none); its values as :func:`.schema.state_of` and the like read them (SQLite's
        dates may come back as ISO text). What one answer runs (:mod:`.reviews`), five to nine times."""
        result = connection.execute(statement, params)
        return result.first() if result.returns_rows else None

    def every(self, connection: Connection, statement: Executable, params: dict[str, Any]) -> list[Sequence[Any]]:
        """Every row of a statement built from the tables, as :meth:`first` runs it."""
        return list(connection.execute(statement, params).all())

    lock_row = ""  # SQL after a SELECT of the learner's schedule row that locks it until the transaction ends

    locked_from_begin = False
    """A write transaction holds the whole database from its ``BEGIN`` (SQLite's ``BEGIN IMMEDIATE``): every
    statement in it reads what was committed before it began, so a statement may read another table beside the
    row it locks. PostgreSQL locks the row in the statement itself, whose subqueries read from before it waited."""

    def kept_read(self, connection: Connection, read: Callable[[Connection], T]) -> T:
        """``read(connection)`` in the connection's transaction; a backend that can tell nothing was committed to
        the database since it last ran ``read`` gives back what it gave then (SQLite: :meth:`SQLiteDatabase.kept_read`)."""
        return read(connection)

    def leaves_kept_reads(self, connection: Connection) -> None:  # noqa: B027 - optional: only SQLite keeps reads
        """Say that the connection's write unit changes nothing :meth:`kept_read` keeps (an answer: a schedule and a
        row of the log), so what was kept stays good after it commits; any other write unit forgets it all."""

    @abstractmethod
    def schema_version(self, connection: Connection) -> int:
        """The version the database says it has (0: nothing of ours yet)."""
        ...

    @abstractmethod
    def set_schema_version(self, connection: Connection, version: int) -> None:
        ...

    @abstractmethod
    def has_tables(self, connection: Connection) -> bool:
        """Whether the database holds any table (one that does, at version 0, is not ours)."""
        ...

    @abstractmethod
    def not_ours(self) -> str:
        """Why a database with tables but no version of ours is refused."""
        ...

    def written_by_bertdrill(self, connection: Connection) -> bool:
        """Whether ``meta`` says bertdrill created this database (``created_by = 'bertdrill 0.1.0'``).

        What only bertdrill writes, so another program's file that happens to carry a version
        number (SQLite's ``user_version = 1``) or a ``meta(key, value)`` table is never taken for ours.
        """
        found = connection.execute(text("SELECT value FROM meta WHERE key = 'created_by'")).first()
        return found is not None and isinstance(found[0], str) and found[0].startswith("bertdrill ")

    def lock_schema(self, connection: Connection) -> None:  # noqa: B027 - optional: SQLite's BEGIN IMMEDIATE does it
        """Keep another opener from migrating at the same time, until the transaction ends."""

    def prepare(self) -> None:  # noqa: B027 - optional: only SQLite has something to do
        """Anything to do once the version is known good and before the first write (SQLite: WAL)."""

    def upgrade_elsewhere(self, found: int) -> None:
        """For a reader (:attr:`reading`) of a database at an older schema ``found``: upgrade a copy, or refuse."""
        raise StoreError(_("{where} is at schema version {found}; run bertdrill review once to upgrade it").format(
            where=self.where, found=found))

    writes_on_open = True  # note ``opened_at`` in meta on every open (False: only when migrating)



def learner_name(learner: str | None, default: Callable[[], str]) -> str:
    """``--learner``, else ``$BERTDRILL_LEARNER``, else ``default()`` (the login name, or the database role)."""
    name = (learner or os.environ.get("BERTDRILL_LEARNER") or default()).strip()
    if not name or len(name) > LEARNER_MAX or any(ord(ch) < 32 for ch in name):
        raise StoreError(_("{name!r} is not a learner's name (1 to {most} characters, no control characters)")
                         .format(name=name, most=LEARNER_MAX))
    return name


def login_name() -> str:
    """Who is logged in, as the operating system says; 'learner' where it cannot say (a bare container)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "learner"


def utc(moment: datetime) -> datetime:
    """An aware UTC time; a naive one is taken as local time (what datetime.astimezone does)."""
    return moment.astimezone(UTC)


def utc_text(moment: datetime) -> str:
    """A time as both backends store it: naive UTC text, ``2024-05-01 06:30:00.000000``."""
    return utc(moment).strftime("%Y-%m-%d %H:%M:%S.%f")


def whole(value: Any) -> int:
    """An integer column's value, checked: a damaged row (``'abc'``) is a TypeError here, which the store's
    method turns into a message naming the row (:mod:`.damage`), never a number that is text."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"not a whole number: {value!r}")
    return value


def real(value: Any) -> float | None:
    """A float column's value (NULL: None), checked as :func:`whole` checks integers."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    return float(value)


def as_date(value: date | str | None) -> date | None:
    """A date column's value: SQLite hands back ISO text, PostgreSQL a date."""
    return None if value is None else day_of(value)


def day_of(value: date | str) -> date:
    """A date column's value that is never NULL."""
    return value if isinstance(value, date) else date.fromisoformat(value)


def as_utc(value: datetime | str | None) -> datetime | None:
    """A time column's value (naive UTC in both backends) as an aware UTC time."""
    if value is None:
        return None
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def execute(connection: Connection, query: str, lessons: Collection[str] | None = None,
            **params: Any) -> CursorResult[Any]:
    """Run one statement of SQL text in the connection's transaction, for what no expression can say.

    Parameters are named (``:today``) and go in as the backend stores them (:meth:`Database.value`);
    ``:learner`` is the store's learner unless given; ``:lessons``, if the query uses it, expands to
    the lesson ids. The backend is the connection's ``info["database"]`` (set by ``_run``).
    """
    database: Database = connection.info["database"]
    statement = text(query)
    if lessons is not None:
        statement = statement.bindparams(bindparam("lessons", expanding=True))
        params["lessons"] = list(lessons)
    params.setdefault("learner", database.learner)
    return connection.execute(statement, {key: database.value(value) for key, value in params.items()})


def execute_many(connection: Connection, query: str, rows: Sequence[dict[str, Any]]) -> None:
    """One statement of SQL text for each of ``rows`` (named parameters), in the connection's transaction."""
    if rows:
        database: Database = connection.info["database"]
        values = [{"learner": database.learner} | {key: database.value(value) for key, value in row.items()}
                  for row in rows]
        connection.execute(text(query), values)


def execute_compiled_many(connection: Connection, statement: ClauseElement, rows: Sequence[dict[str, Any]], *,
                          converted: bool = False) -> None:
    """A statement built from the tables, run for each of ``rows`` (its parameters by name), compiled once and handed
    to the driver with the values as it stores them (:meth:`Database.value`; ``converted``: the caller did it, for
    the few values that need it): SQLAlchemy's processing of each row's parameters was 40 % of writing a switch's
    100,000 schedules (1.14 -> 0.69 s CPU)."""
    if not rows:
        return
    database: Database = connection.info["database"]
    compiled = statement.compile(dialect=connection.dialect)
    assert isinstance(compiled, SQLCompiler)  # a statement, not DDL
    order = compiled.positiontup  # SQLite's ? marks, in order; None: named marks (psycopg's %(name)s)
    convert = database.value
    values: Sequence[Any]
    if order is None:
        values = rows if converted else [{name: convert(value) for name, value in row.items()} for row in rows]
    else:  # each row's values picked (and converted) by C loops: a generator per row was a third of the write
        pick = itemgetter(*order) if len(order) > 1 else lambda row: (row[order[0]],)
        values = list(map(pick, rows)) if converted else [tuple(map(convert, pick(row))) for row in rows]
    connection.exec_driver_sql(str(compiled), values)


def first_row(connection: Connection, statement: Executable, params: dict[str, Any]) -> Sequence[Any] | None:
    """:meth:`Database.first` of the connection's store."""
    database: Database = connection.info["database"]
    return database.first(connection, statement, params)


def all_rows(connection: Connection, statement: Executable, params: dict[str, Any]) -> list[Sequence[Any]]:
    """:meth:`Database.every` of the connection's store."""
    database: Database = connection.info["database"]
    return database.every(connection, statement, params)


class Precompiled:
    """A statement built from the tables, compiled once for a dialect of positional marks (SQLite's ``?``), with
    the values its literals bind (``LIMIT 1``, ``kind != 'cram'``) and the order its parameters go in."""

    _made: dict[tuple[int, str], Precompiled] = {}

    def __init__(self, statement: Executable, compiled: SQLCompiler):
        assert compiled.positiontup is not None  # a dialect of named marks (psycopg) runs the statement itself
        self.statement = statement  # kept: the statement's id is the key it is found by
        self.sql = str(compiled)
        self.order = tuple(compiled.positiontup)
        self.literals = dict(compiled.params)
        order = self.order  # the values picked by a C loop: a comprehension over the names cost more than the SQL
        self.pick: Callable[[dict[str, Any]], tuple[Any, ...]] = \
            itemgetter(*order) if len(order) > 1 else lambda given: (given[order[0]],)

    @classmethod
    def of(cls, statement: Executable, dialect: Dialect) -> Precompiled:
        key = (id(statement), dialect.name)
        made = cls._made.get(key)
        if made is None:
            compiled = statement.compile(dialect=dialect)  # type: ignore[attr-defined]  # every statement compiles
            assert isinstance(compiled, SQLCompiler)  # a statement, not DDL
            made = cls._made[key] = cls(statement, compiled)
        return made

    def values(self, params: dict[str, Any], convert: Callable[[Any], Any]) -> list[Any]:
        """The statement's parameters, in order, as the driver stores them (``convert``: :meth:`Database.value`)."""
        return list(map(convert, self.pick(self.literals | params)))


def learner_of(connection: Connection) -> str:
    """Whose rows a unit of work reads and writes: the learner of the store running it."""
    database: Database = connection.info["database"]
    return database.learner
