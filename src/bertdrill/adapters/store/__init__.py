"""The review database: SQLite for one learner, PostgreSQL for a class, and every query bertdrill runs.

The only package that knows SQL. Its modules:

- :mod:`.schema`: the tables (SQLModel classes) and the SQL fragments the queries share;
- :mod:`.migrations`: the DDL of each schema version, and upgrading a database to the newest;
- :mod:`.database`: what the shared code needs of a backend (:class:`~.database.Database`), and
  :func:`~.database.execute`, the one way to run a statement;
- :mod:`.sqlite`: everything SQLite-specific: the file's URL, pragmas, WAL, locks and retries,
  error messages, the file's formats of values;
- :mod:`.postgresql`: everything PostgreSQL-specific: the engine (psycopg 3), row locks and
  retries, errors, the version in ``meta``, DDL words, a class's roles and row-level security;
- :mod:`.classroom`: the teacher's report over every learner;
- :mod:`.reviews`: what a review session writes and reads (sync, queue, answer, flags, undo);
- :mod:`.reports`: the figures of ``status`` and ``stats`` (reads only);
- :mod:`.scheduling`: the scheduler the learner chose, switching it by replaying the log, and
  reading the log for calibration.

:class:`Store` puts them together and implements :class:`bertdrill.ports.ReviewStore`;
:meth:`Store.open` picks :class:`SQLiteStore` or :class:`PostgresStore` from the URL. It is a
context manager: ``with Store.open(db) as store: ...`` closes it on every path.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, date, datetime

from sqlalchemy import Connection
from sqlalchemy.engine import URL

from bertdrill import __version__
from bertdrill.adapters.store import classroom, migrations, postgresql
from bertdrill.adapters.store.classroom import CardSummary, ClassReport, LearnerSummary
from bertdrill.adapters.store.database import learner_name, utc_text
from bertdrill.adapters.store.migrations import MIGRATIONS, SCHEMA_VERSION
from bertdrill.adapters.store.postgresql import PostgresDatabase
from bertdrill.adapters.store.reports import Reports
from bertdrill.adapters.store.reviews import ReviewWrites
from bertdrill.adapters.store.scheduling import Scheduling
from bertdrill.adapters.store.schema import (
    ANSWER_KINDS,
    CARD_STATES,
    MATURE_DAYS,
    TYPED_MAX,
    CardRow,
    FittedParametersRow,
    LessonRow,
    Meta,
    ReviewRow,
    ScheduleRow,
    SchedulerRow,
)
from bertdrill.adapters.store.sqlite import (
    BUSY_TIMEOUT_MS,
    LOCK_TIMEOUT,
    SQLiteDatabase,
    database_url,
    describe,
    engine,
    lock_timeout_from_environment,
)
from bertdrill.core.scheduling.state import EF_START, LEECH_LAPSES
from bertdrill.ports import KEEP, Answer, CardState, DayCounts, Retention, ReviewStore, Status, SyncCard, SyncReport

__all__ = [
    "ANSWER_KINDS", "BUSY_TIMEOUT_MS", "CardSummary", "ClassReport", "LearnerSummary", "PostgresStore", "SQLiteStore", "CARD_STATES", "EF_START", "KEEP", "LEECH_LAPSES", "LOCK_TIMEOUT", "MATURE_DAYS",
    "MIGRATIONS", "SCHEMA_VERSION", "TYPED_MAX", "Answer", "CardRow", "CardState", "FittedParametersRow", "DayCounts", "LessonRow",
    "Meta", "Retention", "ReviewRow", "ScheduleRow", "SchedulerRow", "Status", "Store", "SyncReport", "database_url", "describe",
    "engine",
]


class Store(ReviewWrites, Reports, Scheduling):
    """Every read and write of review data; one short transaction per method.

    :meth:`open` picks the backend from the database's URL: :class:`SQLiteStore` for a file,
    :class:`PostgresStore` for ``postgresql://`` (a class).
    """

    @classmethod
    def open(cls, db: str | URL | None = None, *, lock_timeout: float | None = None,
             read_only: bool = False, learner: str | None = None) -> Store:
        """Open (creating or migrating) the database named by ``db`` or the environment.

        ``lock_timeout`` (seconds) defaults to ``$BERTDRILL_LOCK_TIMEOUT``, else :data:`LOCK_TIMEOUT`.
        ``read_only``: for a command that only reads (``status``, ``stats``): a database already at
        the current schema is not written at all, so a read-only copy (a backup), a full disk
        or another program's write lock does not stop it. A file still to create or migrate is
        created or migrated all the same. ``learner``: whose reviews (default ``$BERTDRILL_LEARNER``,
        else the login name on SQLite, the database role on PostgreSQL).
        """
        if lock_timeout is None:
            lock_timeout = lock_timeout_from_environment()
        url = db if isinstance(db, URL) else database_url(db)
        store: Store
        if postgresql.is_postgres(url):
            built = postgresql.engine(url, lock_timeout=lock_timeout)
            try:
                store = PostgresStore(built, lock_timeout=lock_timeout, learner=learner)
            except BaseException:
                built.dispose()
                raise
        else:
            busy_timeout_ms = min(BUSY_TIMEOUT_MS, int(lock_timeout * 1000))
            store = SQLiteStore(engine(url, busy_timeout_ms=busy_timeout_ms, read_only=read_only),
                                lock_timeout=lock_timeout, learner=learner)
        try:
            store.migrate(read_only=read_only)
        except BaseException:
            store.close()  # no connection left open on a refused file (nor its -wal and -shm files)
            raise
        return store

    def migrate(self, *, read_only: bool = False) -> int:
        """Create or upgrade the schema; refuse databases from a newer bertdrill. Returns the version found.

        The version is checked in a read-only transaction first and the backend prepared only
        then (SQLite: WAL), so a refused database is never written to; the write transaction
        checks again, since another process may have migrated it in between. ``read_only``:
        stop after the check when the database is up to date.
        """
        found = self._run(lambda connection: migrations.version_of(connection, self))
        if found == migrations.SCHEMA_VERSION and (read_only or not self.writes_on_open):
            return found
        self.prepare()

        def work(connection: Connection) -> int:
            self.lock_schema(connection)
            found = migrations.version_of(connection, self)
            migrations.upgrade(connection, self, found, utc_text(datetime.now(UTC)), f"bertdrill {__version__}")
            return found

        return self._run(work, write=True)

    def meta(self) -> dict[str, str]:
        return {key: value for key, value in self.rows("SELECT key, value FROM meta")}

    def class_report(self, today: date, *, lessons: Collection[str] | None = None) -> ClassReport:
        """The teacher's view: every learner, and every card across the class, hardest first."""
        return self._run(lambda connection: classroom.report(connection, self, today, lessons=lessons))


class SQLiteStore(Store, SQLiteDatabase):
    """The store in one SQLite file: one learner's, on their machine."""


class PostgresStore(Store, PostgresDatabase):
    """The store of a class, on PostgreSQL: many learners, each with a role of their own."""

    def class_init(self, cards: Sequence[SyncCard]) -> str:
        """Sync the class's lessons and put row-level security on; returns the learners' group role."""
        self.sync(cards, schedules=False)  # the lessons; the teacher is no learner
        return self._run(lambda connection: postgresql.class_init(connection), write=True)

    def add_learner(self, name: str, password: str) -> tuple[bool, str]:
        """Create the learner's role (True) or add an existing one to the class (False); and the URL
        the learner connects with."""
        learner_name(name, lambda: name)  # the same rules as any learner's name
        created = self._run(lambda connection: postgresql.add_learner(connection, name, password), write=True)
        return created, postgresql.learner_url(self.engine.url, name, password)


# mypy checks here that each backend's store has every method of the protocol (Store itself is abstract).
_sqlite: type[ReviewStore] = SQLiteStore
_postgres: type[ReviewStore] = PostgresStore
