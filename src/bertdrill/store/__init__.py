"""The review database: SQLModel tables over SQLite, and every query bertdrill runs.

The only package that knows SQL. Its modules:

- :mod:`.schema`: the tables (SQLModel classes) and the SQL fragments the queries share;
- :mod:`.migrations`: the DDL of each schema version, and upgrading a file to the newest;
- :mod:`.sqlite`: everything SQLite-specific: the file's URL, pragmas, WAL, locks and retries,
  error messages, and :class:`~.sqlite.Database`, the one way to run a unit of work or a query;
- :mod:`.reviews`: what a review session writes and reads (sync, queue, answer, flags, undo);
- :mod:`.reports`: the figures of ``status`` and ``stats`` (reads only).

:class:`Store` puts them together and implements :class:`bertdrill.ports.ReviewStore`. It is
a context manager: ``with Store.open(db) as store: ...`` closes it on every path.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.engine import URL
from sqlmodel import Session

from .. import __version__
from ..ports import KEEP, Answer, CardState, DayCounts, Retention, ReviewStore, Status, SyncReport
from ..sm2 import EF_START, LEECH_LAPSES
from . import migrations
from .migrations import MIGRATIONS, SCHEMA_VERSION
from .reports import Reports
from .reviews import ReviewWrites
from .schema import ANSWER_KINDS, CARD_STATES, MATURE_DAYS, TYPED_MAX, CardRow, LessonRow, Meta, ReviewRow, ScheduleRow
from .sqlite import (
    BUSY_TIMEOUT_MS,
    LOCK_TIMEOUT,
    database_url,
    describe,
    engine,
    lock_timeout_from_environment,
    utc_text,
)

__all__ = [
    "ANSWER_KINDS", "BUSY_TIMEOUT_MS", "CARD_STATES", "EF_START", "KEEP", "LEECH_LAPSES", "LOCK_TIMEOUT", "MATURE_DAYS",
    "MIGRATIONS", "SCHEMA_VERSION", "TYPED_MAX", "Answer", "CardRow", "CardState", "DayCounts", "LessonRow",
    "Meta", "Retention", "ReviewRow", "ScheduleRow", "Status", "Store", "SyncReport", "database_url", "describe",
    "engine",
]


class Store(ReviewWrites, Reports):
    """Every read and write of review data; one short transaction per method."""

    @classmethod
    def open(cls, db: str | URL | None = None, *, lock_timeout: float | None = None,
             read_only: bool = False) -> Store:
        """Open (creating or migrating) the database named by ``db`` or the environment.

        ``lock_timeout`` (seconds) defaults to ``$BERTDRILL_LOCK_TIMEOUT``, else :data:`LOCK_TIMEOUT`.
        ``read_only``: for a command that only reads (``status``, ``stats``): a file already at
        the current schema is not written at all, so a read-only copy (a backup), a full disk
        or another program's write lock does not stop it. A file still to create or migrate is
        created or migrated all the same.
        """
        if lock_timeout is None:
            lock_timeout = lock_timeout_from_environment()
        busy_timeout_ms = min(BUSY_TIMEOUT_MS, int(lock_timeout * 1000))
        store = cls(engine(db, busy_timeout_ms=busy_timeout_ms, read_only=read_only), lock_timeout=lock_timeout)
        try:
            store.migrate(read_only=read_only)
        except BaseException:
            store.close()  # no connection left open on a refused file (nor its -wal and -shm files)
            raise
        return store

    def migrate(self, *, read_only: bool = False) -> int:
        """Create or upgrade the schema; refuse files from a newer bertdrill. Returns the version found.

        The version is checked in a read-only transaction first and WAL switched on only
        then, so a refused file is never written to; the write transaction checks again,
        since another process may have migrated the file in between. ``read_only``: stop
        after the check when the file is up to date.
        """
        found = self._run(lambda session: migrations.version_of(session.connection(), self.where))
        if read_only and found == migrations.SCHEMA_VERSION:
            return found
        self._use_wal()

        def work(session: Session) -> int:
            connection = session.connection()
            found = migrations.version_of(connection, self.where)
            migrations.upgrade(connection, found, utc_text(datetime.now(UTC)), f"bertdrill {__version__}")
            return found

        return self._run(work, write=True)

    def meta(self) -> dict[str, str]:
        return {key: value for key, value in self.rows("SELECT key, value FROM meta")}


_: type[ReviewStore] = Store  # mypy checks here that Store has every method of the protocol
