"""The review database: SQLite for one learner, PostgreSQL for a class, and every query bertdrill runs.

The only package that knows SQL. Its modules:

- :mod:`.schema`: the tables (SQLModel classes) and the SQL fragments the queries share;
- :mod:`.migrations`: the DDL of each schema version, and upgrading a database to the newest;
- :mod:`.database`: what the shared code needs of a backend (:class:`~.database.Database`), and
  :func:`~.database.execute`, the one way to run a statement;
- :mod:`.sqlite`: everything SQLite-specific: the file's URL, pragmas, WAL, locks and retries,
  error messages, the file's formats of values;
- :mod:`.postgresql`: everything PostgreSQL-specific: the engine (psycopg 3), row locks and
  retries, errors, the version in ``meta``, a class's roles and row-level security;
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

import copy
import dataclasses
import functools
import shutil
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, select
from sqlalchemy.engine import URL

from bertdrill import __version__
from bertdrill.adapters.store import migrations, postgresql, reading
from bertdrill.adapters.store.database import utc_text
from bertdrill.adapters.store.migrations import MIGRATIONS, SCHEMA_VERSION
from bertdrill.adapters.store.postgresql import PostgresDatabase
from bertdrill.adapters.store.reports import Reports
from bertdrill.adapters.store.reviews import ReviewWrites
from bertdrill.adapters.store.scheduling import Scheduling
from bertdrill.adapters.store.schema import (
    ANSWER_KINDS,
    CARD_STATES,
    MATURE_DAYS,
    META,
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
from bertdrill.core.errors import StoreError, os_reason
from bertdrill.core.i18n import _
from bertdrill.core.scheduling.state import EF_START, LEECH_LAPSES
from bertdrill.ports import (
    KEEP,
    CardManagement,
    CardState,
    DayCounts,
    Retention,
    ReviewStore,
    Status,
    SyncCard,
    SyncReport,
)

if TYPE_CHECKING:
    from bertdrill.adapters.store import class_detail, damage, members
    from bertdrill.adapters.store.classroom import CardSummary, ClassReport, LearnerSummary, WrongAnswer
    from bertdrill.ports import Answer, PublishedLesson  # made when asked for: a learner's start-up makes none

_REPORT_TYPES = ("CardSummary", "ClassReport", "LearnerSummary", "WrongAnswer")


def __getattr__(name: str) -> Any:
    """The teacher's report's types, imported when first asked for: a learner's commands never load the report."""
    if name in _REPORT_TYPES:
        from bertdrill.adapters.store import classroom

        return getattr(classroom, name)
    if name == "Answer":  # the ports' record, exported here too: made when first asked for (bertdrill.ports.later)
        from bertdrill.ports import Answer

        return Answer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ANSWER_KINDS", "BUSY_TIMEOUT_MS", "CardSummary", "ClassReport", "LearnerSummary", "WrongAnswer", "PostgresStore", "SQLiteStore", "CARD_STATES", "EF_START", "KEEP", "LEECH_LAPSES", "LOCK_TIMEOUT", "MATURE_DAYS",
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
        ``read_only``: for a command that only reads (``status``, ``stats``, ``class report``): nothing is
        ever written to the database, not even created or upgraded, so a backup on read-only media, a
        full disk or another program's write lock does not stop it (:mod:`.reading` says how).
        ``learner``: whose reviews (default ``$BERTDRILL_LEARNER``, else the login name on SQLite, the
        database role on PostgreSQL).
        """
        if lock_timeout is None:
            lock_timeout = lock_timeout_from_environment()
        url = db if isinstance(db, URL) else database_url(db)
        store: Store
        if postgresql.is_postgres(url):
            built = postgresql.engine(url, lock_timeout=lock_timeout, pinned=read_only)
            try:
                store = PostgresStore(built, lock_timeout=lock_timeout, learner=learner)
            except BaseException:
                built.dispose()
                raise
            store.reading = read_only
        elif read_only:
            store = SQLiteStore.reader(url, lock_timeout=lock_timeout, learner=learner)
        else:
            busy_timeout_ms = min(BUSY_TIMEOUT_MS, int(lock_timeout * 1000))
            store = SQLiteStore(engine(url, busy_timeout_ms=busy_timeout_ms), lock_timeout=lock_timeout,
                                learner=learner)
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
        if self.reading:
            self.upgrade_elsewhere(found)  # SQLite: a copy in memory; PostgreSQL: refused
        self.prepare()

        def work(connection: Connection) -> int:
            self.lock_schema(connection)
            found = migrations.version_of(connection, self)
            migrations.upgrade(connection, self, found, utc_text(datetime.now(UTC)), f"bertdrill {__version__}")
            return found

        return self._run(work, write=True)

    _looked_for_damage = False

    def refuse_damage(self) -> None:
        """Refuse a database a row of which holds a value bertdrill never writes, before any figure is counted
        from it: a value only SQL reads gives a wrong figure, not an error (:func:`.damage.anything_damaged`, a
        lookup in each table's index of damaged rows). Asked once per store, before its first method runs."""
        if self._looked_for_damage:  # before the import: every method of the store asks (two to an answer)
            return
        from bertdrill.adapters.store import damage  # the rules only (2-3 ms to import): the scan runs on a find

        self._looked_for_damage = True
        if self._run(damage.anything_damaged):
            found = self.damaged_row()
            if found is not None:
                raise StoreError(found.message(self.where))

    def damaged_row(self) -> damage.Damage | None:
        """The first value in the database that bertdrill never writes (:func:`.damage.find`), or None."""
        from bertdrill.adapters.store import damage  # here: only a failure reads the whole database for its cause

        try:
            return self._run(damage.find)
        except StoreError:
            return None

    def meta(self) -> dict[str, str]:
        return {key: value for key, value in self.read(select(META.c.key, META.c.value))}

    def class_report(self, today: date, *, lessons: Collection[str] | None = None,
                     from_log: bool = False) -> ClassReport:
        """The teacher's view: every learner, and every card across the class, hardest first. ``from_log``: counted
        from the log itself, not its summaries (what the tests compare the report with)."""
        from bertdrill.adapters.store import classroom  # here: only the teacher's commands report on a class

        return self._run(lambda connection: classroom.report(connection, self, today, lessons=lessons,
                                                             from_log=from_log))


class SQLiteStore(Store, SQLiteDatabase):
    """The store in one SQLite file: one learner's, on their machine."""

    copied: Path | None = None  # a reader's temporary folder holding a copy of the file, removed on close

    @classmethod
    def reader(cls, url: URL, *, lock_timeout: float, learner: str | None) -> SQLiteStore:
        """A store that reads the file without ever writing it (:mod:`.reading`): a file not there is an empty
        database in memory; one in a folder that cannot be written is read as it is, or from a copy."""
        busy_timeout_ms = min(BUSY_TIMEOUT_MS, int(lock_timeout * 1000))
        path = reading.sqlite_file(url)
        copied = None
        if path is not None and not path.exists():
            folder = next(parent for parent in path.parents if parent.exists())
            if not folder.is_dir():  # the file could never be made: say so, as a writer would
                raise StoreError(_("cannot create the folder for the database {path}: {value}").format(
                    path=path, value=os_reason(NotADirectoryError())))
        on_disk = path is not None and path.exists()  # else an empty database in memory: no one's file
        if path is None or not path.exists():
            opened = URL.create("sqlite", database=":memory:")
        elif path.is_dir():
            raise StoreError(_("{path} is a folder, not a database file").format(path=path))
        else:
            opened, copied = reading.sqlite_reader(path)
        store = cls(engine(opened, busy_timeout_ms=busy_timeout_ms, read_only=True, pinned=True, guarded=on_disk),
                    lock_timeout=lock_timeout, learner=learner)
        store.where, store.copied, store.reading = describe(url), copied, on_disk
        return store

    def upgrade_elsewhere(self, found: int) -> None:
        """An older file, for a reader: copied (SQLite's backup) into a temporary database, where it is upgraded.

        SQLite's own temporary file (an empty name), not memory: a million answers would hold 300 MB there for the
        command's life. SQLite removes the file as it opens it, so not even a killed process leaves it behind."""
        temporary = engine(URL.create("sqlite", database="file:", query={"uri": "true"}), pinned=True)
        self.release_idle()
        source, target = self.engine.raw_connection(), temporary.raw_connection()
        try:
            source.driver_connection.backup(target.driver_connection)  # type: ignore[union-attr]
        finally:
            source.close()
            target.close()
        self.engine.dispose()
        self.engine, self.reading = temporary, False

    def close(self) -> None:
        super().close()
        if self.copied is not None:
            shutil.rmtree(self.copied, ignore_errors=True)
            self.copied = None


@dataclass(frozen=True)
class ClassSetup:
    """What ``class init`` did: the roles, the lessons published anew (id, version), the server's login."""

    roles: postgresql.ClassRoles
    learners_group: str  # the group of learner roles of a class from before the server (retired)
    published: list[tuple[str, int]]
    server_created: bool
    address: str | None
    moved: list[tuple[members.Member, str]]  # learner roles of the class from before, now members: with a password


def _move_over(connection: Connection, now: datetime) -> list[tuple[members.Member, str]]:
    """Each learner role of a class from before the server becomes a member whose rows are the role's own (their
    key is the role's name, so every answer stays theirs), with a new password; then the roles lose the class."""
    from bertdrill.adapters.store import members  # the class's tables: a learner's store never loads them

    adopted = {member.learner for member in members.all_members(connection, archived=True)}
    moved = []
    for role in postgresql.learner_roles(connection):
        if role in adopted:
            continue
        name = role
        if members.password_of(connection, name) is not None:  # a member of that name already: keep both apart
            name = f"{role} ({_('database role')})"
        password = members.new_password()
        moved.append((members.adopt(connection, name, role, members.hash_password(password), now), password))
    postgresql.retire_learner_roles(connection)
    return moved


class PostgresStore(Store, PostgresDatabase):
    """The store of a class, on PostgreSQL: its members, its published lessons, and every learner's reviews.

    The teacher's role (the owner) runs ``bertdrill class`` with it. The class server opens it as its own
    role (:meth:`serving`) and runs each unit of work as the acting member (:meth:`acting_as`) or, before
    anyone is known, as the gate (:meth:`gate`).

    The class's own tables (:mod:`.members`, SQLModel classes) are imported by the methods that use them: every
    learner's command opens this module, and defining those tables cost each one 10-20 ms.
    """

    @classmethod
    def serving(cls, db: str | URL | None, *, lock_timeout: float | None = None) -> PostgresStore:
        """The class server's store: its timeouts and pool; it acts only through :meth:`acting_as` and :meth:`gate`."""
        from bertdrill.adapters.store import members  # the class's tables: a learner's store never loads them

        if lock_timeout is None:
            lock_timeout = lock_timeout_from_environment()
        url = db if isinstance(db, URL) else database_url(db)
        built = postgresql.engine(url, lock_timeout=lock_timeout, serving=True)
        try:
            store = cls(built, lock_timeout=lock_timeout, learner="-")
            found = store._run(lambda connection: migrations.version_of(connection, store))  # never migrates
            if found == 0:
                raise StoreError(_("{where} is no class yet: the teacher runs bertdrill class init first").format(
                    where=store.where))
            if found != SCHEMA_VERSION:
                raise StoreError(_("{where} is at schema version {found}: the teacher runs bertdrill class init, "
                                   "which upgrades it, before the server starts").format(where=store.where,
                                                                                         found=found))
            store.roles = store._run(postgresql.class_roles)
            if store.gate()._run(members.classroom_id) is None:
                raise StoreError(_("{where} is no class yet: the teacher runs bertdrill class init first").format(
                    where=store.where))
        except StoreError as exc:
            built.dispose()
            if "permission denied" in str(exc) or "may not do this" in str(exc):
                raise StoreError(_("{where}: the class server connects as its own role, which class init "
                                   "creates ({message})").format(where=store.where, message=exc)) from None
            raise
        except BaseException:
            built.dispose()
            raise
        return store

    roles: postgresql.ClassRoles | None = None

    def _view(self, role: str, learner: str, member: str) -> PostgresStore:
        view = copy.copy(self)
        view.acting, view.learner, view.owns_engine = (role, learner, member), learner, False
        return view

    def acting_as(self, member: members.Member) -> PostgresStore:
        """The store as ``member`` sees it: a learner's own rows, or (a teacher) the class. Shares the engine."""
        roles = self._server_roles()
        return self._view(roles.teacher if member.is_teacher else roles.learner, member.learner, str(member.id))

    def gate(self) -> PostgresStore:
        """The store before anyone is known: names, password hashes and login tokens, nothing else."""
        return self._view(self._server_roles().gate, "-", "")

    def _server_roles(self) -> postgresql.ClassRoles:
        if self.roles is None:
            self.roles = self._run(postgresql.class_roles)
        return self.roles

    # ----------------------------------------------------------------- the teacher's commands

    def upgrade_elsewhere(self, found: int) -> None:
        """A reader never creates or upgrades a class's tables: the teacher does, with ``class init``."""
        raise StoreError(_("{where} holds no class of this bertdrill yet (schema version {found}, this one "
                           "needs {wanted}); the teacher sets it up with: bertdrill class init").format(
                               where=self.where, found=found, wanted=SCHEMA_VERSION))

    def open_class(self, cards: Sequence[SyncCard], sources: Sequence[tuple[str, str, str]], *,
                   address: str | None = None, server_password: str | None = None) -> ClassSetup:
        """``class init``: the lessons' cards synced (every history kept, by fingerprint) and their texts
        published (``sources``: lesson id, file name, text), the class's row, the server's roles and policies."""
        from bertdrill.adapters.store import classroom, members

        self.sync(cards, schedules=False)  # the lessons; the teacher is no learner
        now = datetime.now(UTC)
        database = self.engine.url.database or "class"

        def work(connection: Connection) -> ClassSetup:
            members.ensure_classroom(connection, database, address, now)
            versions = [(lesson_id, version) for lesson_id, path, source in sources
                        if (version := members.publish(connection, lesson_id, path, source, now)) is not None]
            roles, created = postgresql.secure_class(connection, server_password)
            classroom.index_wrong_answers(connection)
            moved = _move_over(connection, now)
            return ClassSetup(roles, postgresql.learners_role(connection), versions, created,
                              members.server_address(connection), moved)

        return self._run(work, write=True)

    def class_report(self, today: date, *, lessons: Collection[str] | None = None,
                     from_log: bool = False) -> ClassReport:
        """:meth:`Store.class_report`, each member under their name; archived members are left out (their
        answers still count in the cards' figures), and so is anyone's key no member has (none, after the move)."""
        from bertdrill.adapters.store.classroom import LearnerSummary

        found = (self._halves_at_once(today, lessons, from_log) if not self.reading
                 else super().class_report(today, lessons=lessons, from_log=from_log))
        everyone = {member.learner: member for member in self.class_members(archived=True)}
        if not everyone:
            return found  # a class from before the server: its learners are roles, named as such
        shown = [dataclasses.replace(row, learner=everyone[row.learner].name) for row in found.learners
                 if row.learner in everyone and not everyone[row.learner].archived]
        active = {row.learner for row in found.learners}
        shown += [LearnerSummary(member.name, 0, 0, 0, 0, 0, None) for member in everyone.values()  # not started
                  if not member.archived and not member.is_teacher and member.learner not in active]
        return dataclasses.replace(found, learners=sorted(shown, key=lambda row: (row.learner.casefold(), row.learner)))

    def _halves_at_once(self, today: date, lessons: Collection[str] | None, from_log: bool) -> ClassReport:
        """The report's learners and cards at once, on two of the pool's connections: each half is a few passes
        over the whole log, and PostgreSQL runs the two on two cores (the dashboard on 1M answers: 0.9 s of it
        was the report on one connection). Under READ COMMITTED every statement reads its own snapshot anyway,
        so the halves are as consistent as on one connection. (A reader has a single connection, which holds
        its shadows of lessons not synced: it runs them in turn.)"""
        from concurrent.futures import ThreadPoolExecutor

        from bertdrill.adapters.store import classroom

        with ThreadPoolExecutor(max_workers=1) as beside:
            cards = beside.submit(self._run, lambda connection: classroom.cards(connection, today, lessons,
                                                                                from_log=from_log))
            learners = self._run(lambda connection: classroom.learners(connection, today, lessons, from_log=from_log))
            return classroom.ClassReport(today, learners, cards.result())

    def wrong_answers(self, *, lessons: Collection[str] | None = None) -> dict[str, list[WrongAnswer]]:
        """Each card's most common wrong answers across the class (the teacher's dashboard)."""
        from bertdrill.adapters.store import classroom

        return self._run(lambda connection: classroom.wrong_answers(connection, lessons=lessons))

    def class_activity(self, since: date, until: date) -> dict[date, tuple[int, int]]:
        """The class's (answers, learners answering) per study day in [since, until] (the dashboard's chart)."""
        from bertdrill.adapters.store import class_detail

        return self._run(lambda connection: class_detail.activity(connection, since, until))

    def failed_most(self, learner: members.Member, *, limit: int = 10) -> list[class_detail.Failed]:
        """The cards ``learner`` fails most, with their wrong answers (run on the teacher's :meth:`acting_as`)."""
        from bertdrill.adapters.store import class_detail

        return self._run(lambda connection: class_detail.failed_most(connection, learner.learner, limit=limit))

    def reading_for(self, learner: members.Member) -> PostgresStore:
        """This teacher's view of one learner's rows, for the teacher's page of that learner: the store's reports
        (``stats``'s figures) filtered to them, under the teacher's role, every unit read only."""
        if self.acting is None or self.acting[0] != self._server_roles().teacher:
            raise StoreError(_("only a teacher reads another member's figures"))
        view = self._view(self.acting[0], learner.learner, self.acting[2])
        view.reading = True
        return view

    def add_member(self, name: str, password: str, role: members.MemberRole | None = None) -> members.Member:
        """A new member (a learner unless ``role`` says otherwise), with this password."""
        from bertdrill.adapters.store import members

        role = members.MemberRole.LEARNER if role is None else role
        hashed = members.hash_password(password)
        return self._run(lambda connection: members.add(connection, name, hashed, role, datetime.now(UTC)),
                         write=True)

    def rename_member(self, name: str, new_name: str) -> members.Member:
        from bertdrill.adapters.store import members

        return self._run(lambda connection: members.rename(connection, name, new_name), write=True)

    def archive_member(self, name: str) -> members.Member:
        from bertdrill.adapters.store import members

        return self._run(lambda connection: members.archive(connection, name, datetime.now(UTC)), write=True)

    def reset_password(self, name: str, password: str) -> members.Member:
        """A new password for the current member called ``name``; every login of theirs ends."""
        from bertdrill.adapters.store import members

        hashed = members.hash_password(password)

        def work(connection: Connection) -> members.Member:
            member = members.find(connection, name)
            members.set_password(connection, member.id, hashed, datetime.now(UTC))
            return member

        return self._run(work, write=True)

    def class_members(self, *, archived: bool = False) -> list[members.Member]:
        from bertdrill.adapters.store import members

        return self._run(lambda connection: members.all_members(connection, archived=archived))

    def server_address(self) -> str | None:
        from bertdrill.adapters.store import members

        return self._run(members.server_address)

    def published_versions(self) -> dict[str, int]:
        from bertdrill.adapters.store import members

        return self._run(members.published_versions)

    def published_lessons(self) -> list[PublishedLesson]:
        """The newest version of every lesson the teacher published (empty: none yet)."""
        from bertdrill.adapters.store import members

        return self._run(members.published)

    # ----------------------------------------------------------------- the server's logins (on :meth:`gate`)

    def log_in(self, name: str, password: str) -> tuple[members.Member, str] | None:
        """The member and a new login token when ``name`` and ``password`` match a current member; else None.

        The hash is checked outside any transaction (scrypt takes a while), and an unknown name costs a
        hash too, so the time taken does not tell which names exist."""
        from bertdrill.adapters.store import members

        found = self._run(lambda connection: members.password_of(connection, name))
        if found is None:
            members.password_matches(password, members.UNKNOWN_NAME_HASH)
            return None
        member, stored = found
        if not members.password_matches(password, stored):
            return None
        token, hashed = members.new_token()
        self._run(lambda connection: members.start_login(connection, member.id, hashed, datetime.now(UTC)),
                  write=True)
        return member, token

    def logged_in(self, token: str) -> members.Member | None:
        from bertdrill.adapters.store import members

        hashed = members.token_hash(token)
        return self._run(lambda connection: members.logged_in(connection, hashed, datetime.now(UTC)))

    def log_out(self, token: str) -> None:
        from bertdrill.adapters.store import members

        hashed = members.token_hash(token)
        self._run(lambda connection: members.end_login(connection, hashed), write=True)

    def change_own_password(self, member: members.Member, old: str, new: str, token: str) -> bool:
        """The acting member's new password (run on :meth:`acting_as`); False when ``old`` is not theirs.
        Their other logins end; this one (``token``) stays."""
        from bertdrill.adapters.store import members

        stored = self._run(lambda connection: members.own_password(connection, member.id))
        if stored is None or not members.password_matches(old, stored):
            return False
        hashed, kept = members.hash_password(new), members.token_hash(token)
        self._run(lambda connection: members.set_password(connection, member.id, hashed, datetime.now(UTC),
                                                          keep_login=kept), write=True)
        return True



T = TypeVar("T")


def _checked(method: Callable[..., T]) -> Callable[..., T]:
    """A store method whose failure on a value the database holds is said as the damaged row (:mod:`.damage`)."""

    @functools.wraps(method)
    def run(self: Store, *args: Any, **kwargs: Any) -> T:
        self.refuse_damage()
        try:
            return method(self, *args, **kwargs)
        except (ValueError, TypeError, ArithmeticError, LookupError) as exc:
            found = self.damaged_row()
            if found is None:
                raise  # no row explains it: the failure is bertdrill's, and shown as it is
            raise StoreError(found.message(self.where)) from exc

    return run


# Every method of the port (and the teacher's report) says a damaged row as one: the whole class of values
# read back, wherever the value is first used.
for _name in sorted({name for name in dir(ReviewStore) if not name.startswith("_")} | {"class_report"}):
    if _name != "close" and callable(getattr(Store, _name, None)):
        setattr(Store, _name, _checked(getattr(Store, _name)))


# mypy checks here that each backend's store has every method of the protocol (Store itself is abstract).
_sqlite: type[ReviewStore] = SQLiteStore
_postgres: type[ReviewStore] = PostgresStore
_sqlite_manages: type[CardManagement] = SQLiteStore
_postgres_manages: type[CardManagement] = PostgresStore
