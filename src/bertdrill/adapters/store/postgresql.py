"""Everything PostgreSQL-specific, in one place: the engine, units of work, errors, the schema's version,
DDL words, and a class's roles and row-level security.

A class shares one database, and learners never connect to it: the class server does, as a role of its own
that owns nothing, and each of its transactions acts for one member (:func:`secure_class`); row-level security
on the learners' tables shows and lets change only the acting learner's rows, so the database, not the
server's code, keeps learners apart. The teacher's role owns the tables (it ran ``bertdrill class init``),
which puts it outside those policies: it reads the whole class. (Before the server, each learner had a role
of their own, in a group named after the database; ``class init`` moves such a class over:
:func:`learner_roles`, :func:`retire_learner_roles`.)

Concurrency: a unit that writes runs READ COMMITTED with row locks; one that reads, REPEATABLE READ (its
statements see one snapshot). An answer, an undo and a flag change lock the learner's
schedule row of the card (``SELECT ... FOR UPDATE``) before reading anything else, so two windows of
one learner answering the same card queue up on that row, and the second sees the first's answer
("the first answer of a study day schedules" and the daily counts hold). Learners never share a row,
so they never wait for each other. SERIALIZABLE would give the same guarantee with retries, but its
predicate locks cover index pages that many learners share (the log's indexes), so under a class's
load it would abort and retry transactions that never conflicted; the row lock says what we mean.
A deadlock or serialization failure (none expected) is retried as a whole; a lock held longer than
the lock timeout ends the command with a message instead of hanging it.

Times are naive UTC, as on SQLite: every session runs with ``timezone=UTC``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, Table, create_engine, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.pool import StaticPool

from bertdrill.adapters.store.database import Backend, Database, learner_name, utc
from bertdrill.core.errors import StoreError
from bertdrill.core.i18n import _, language
from bertdrill.core.languages import written_short

T = TypeVar("T")
RETRIED = {"40001", "40P01"}  # serialization failure, deadlock: the unit of work is run again
RETRIES = 5
RECONNECT_SECONDS = 20.0  # how long a store that was connected keeps trying to reconnect (a server restart)
DROPPED = {"57P01", "57P02", "57P03"}  # the server ended the session: terminated, crash, starting up
MIGRATION_LOCK = 0x62657274  # pg_advisory_xact_lock key: one migrating opener at a time ("bert")

LEARNER_TABLES = ("schedule", "review", "scheduler", "fsrs_parameters", "card_action", "lesson_exam")  # rows that belong to a learner
SHARED_TABLES = ("meta", "lesson", "card")  # the class's lessons: learners read them, the teacher writes them
SUMMARY_TABLES = ("report_day", "report_learner", "report_card")  # a learner's rows the log's triggers write (v15)


def is_postgres(url: URL) -> bool:
    return url.get_backend_name() == "postgresql"


SECRET_OPTIONS = ("password", "sslpassword")
"""libpq options that hold a secret, which a URL may carry after ``?`` as well as before ``@``."""


def describe(url: URL) -> str:
    """The database as a person would name it: its URL, every password hidden (``?password=`` too)."""
    hidden = {key: "***" for key in SECRET_OPTIONS if key in url.query}
    shown = url.set(drivername="postgresql").update_query_dict(hidden).render_as_string(hide_password=True)
    return shown.replace("%2A%2A%2A", "***")


def engine(url: URL, *, lock_timeout: float, serving: bool = False, pinned: bool = False) -> Engine:
    """An engine on the class's server, through psycopg 3 (SQLAlchemy's default for postgresql:// is psycopg2).

    Sessions run in UTC, and wait at most ``lock_timeout`` seconds for a row lock. A pooled connection is
    checked before each unit of work (``pool_pre_ping``): one the server dropped while it was idle (a
    terminated backend, a restart, a NAT timeout) is replaced, so the next answer goes through. ``serving``:
    the class server's engine: statement and idle-in-transaction timeouts, and a pool for its request threads.
    ``pinned``: one connection for the engine's life (a reader's temporary tables live in it).
    """
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise StoreError(_("a PostgreSQL database needs psycopg: pip install 'bertdrill[postgres]'")) from None
    options = f"-c timezone=UTC -c lock_timeout={max(1, int(lock_timeout * 1000))}"
    if serving:
        options += (f" -c statement_timeout={STATEMENT_TIMEOUT_MS}"
                    f" -c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_MS}")
    # The class server: as many connections as the request threads that may want one at once (starlette runs
    # blocking work on 40 threads), so no request waits for a connection behind others.
    pool: dict[str, Any] = ({"pool_size": 8, "max_overflow": 32, "pool_timeout": 30} if serving
                            else {"poolclass": StaticPool} if pinned else {"pool_size": 2, "max_overflow": 2})
    return create_engine(url.set(drivername="postgresql+psycopg"),
                         connect_args={"options": options, "connect_timeout": 10}, pool_pre_ping=True, **pool)


class PostgresDatabase(Database):
    """A class's database: units of work that write READ COMMITTED, that read REPEATABLE READ, retried on a
    serialization failure or deadlock.

    The learner is ``learner``, else ``$BERTDRILL_LEARNER``, else the role the session logs in as.
    """

    backend = Backend.postgresql

    greatest = "greatest"
    writes_on_open = False  # a learner's role may not write meta; nothing is written unless migrating
    acting: tuple[str, str, str] | None = None  # the class server's (role, learner key, member id), per transaction
    owns_engine = True  # False for a member's view of the server's store (:meth:`acting_as`): it shares the engine

    def begun(self, connection: Connection) -> None:
        """On the class server, every transaction first takes the acting role and names the acting member, for
        this transaction only (``SET LOCAL ROLE``, PostgREST's pattern): the policies read the member."""
        if self.acting is not None:
            role, learner, member = self.acting
            connection.execute(text("SELECT set_config('role', :role, true), set_config('bertdrill.learner', "
                                    ":learner, true), set_config('bertdrill.member', :member, true)"),
                               {"role": role, "learner": learner, "member": member})

    def close(self) -> None:
        if self.owns_engine:
            self.engine.dispose()

    def __init__(self, engine: Engine, *, lock_timeout: float, learner: str | None = None):
        self.engine = engine
        self.lock_timeout = lock_timeout
        self.where = describe(engine.url)
        self.learner = learner_name(learner, self._role)

    def _role(self) -> str:
        return str(self._run(lambda connection: connection.execute(text("SELECT current_user")).scalar_one()))

    def reading_unit(self, connection: Connection, *, read_only: bool) -> None:
        # READ COMMITTED gives each statement a snapshot of its own: a report of several statements (the forecast's
        # counts, then the cards it shows on another day) would read two states of a learner answering meanwhile.
        # A read-only REPEATABLE READ transaction reads one snapshot and never meets a serialization failure.
        connection.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ" + (", READ ONLY" if read_only else "")))

    lock_row = "FOR UPDATE OF s"  # the learner's schedule row of the card, until the transaction ends

    def upsert(self, table: Table) -> Any:
        from sqlalchemy.dialects.postgresql import insert  # here: a learner's SQLite store never loads the dialect

        return insert(table)

    def value(self, value: Any) -> Any:
        """Times as naive UTC (the columns are ``timestamp``; sessions run in UTC); the rest as they are."""
        if isinstance(value, datetime):
            return utc(value).replace(tzinfo=None)
        return value

    connected = False  # a unit of work has gone through: a connection lost from now on is reconnected

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, again on a serialization failure or deadlock (a few times), and again while a
        connection the server dropped cannot be replaced yet (up to :data:`RECONNECT_SECONDS`, once this
        store has been connected: a URL that never connected fails at once).

        A unit run again after its connection dropped may have been committed already (the server
        committed, the reply was lost): :meth:`ReviewWrites.answer` looks for its own row before it
        logs, so an answer is saved exactly once.
        """
        tries = 0
        deadline = time.monotonic() + RECONNECT_SECONDS
        while True:
            try:
                result = attempt()
                self.connected = True
                return result
            except DBAPIError as exc:
                if _sqlstate(exc) in RETRIED and tries < RETRIES:
                    time.sleep(0.01 * 2**tries)
                    tries += 1
                    continue
                if self.connected and _dropped(exc) and time.monotonic() < deadline:
                    time.sleep(min(0.1 * 2**min(tries, 4), max(0.0, deadline - time.monotonic())))
                    tries += 1
                    continue
                raise self._error(exc) from None

    def _error(self, exc: DBAPIError) -> StoreError:
        state = _sqlstate(exc)
        message = (str(exc.orig) if exc.orig is not None else str(exc)).strip().splitlines()[0]
        if state == "42501":  # insufficient privilege
            return StoreError(_("{where}: your role may not do this ({message}); in a class, the teacher's role "
                                "changes the lessons (bertdrill class init)").format(where=self.where, message=message))
        if state == "55P03":  # lock not available
            return StoreError(_("{where}: another session holds a lock (waited {seconds} s); try again")
                              .format(where=self.where, seconds=written_short(self.lock_timeout, language())))
        # Only a failure to reach or log in is called one: psycopg's own errors (a bad option, a
        # placeholder in a query) have no SQLSTATE either, and are not the server's fault.
        connecting = state is None and isinstance(exc, OperationalError)
        if connecting or (state is not None and (state.startswith(("08", "28")) or state == "3D000")):
            return StoreError(_("cannot connect to {where}: {message}").format(where=self.where, message=message))
        return StoreError(f"{self.where}: {message}")

    # ------------------------------------------------------------- the schema's version

    def schema_version(self, connection: Connection) -> int:
        if connection.execute(text("SELECT to_regclass('meta')")).scalar_one() is None:
            return 0
        found = connection.execute(text("SELECT value FROM meta WHERE key = 'schema_version'")).scalar_one_or_none()
        return int(found) if found is not None else 0

    def set_schema_version(self, connection: Connection, version: int) -> None:
        """Kept in meta only: upgrade writes ``schema_version`` there."""

    def has_tables(self, connection: Connection) -> bool:
        return bool(connection.execute(text(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()")).scalar_one())

    def not_ours(self) -> str:
        return _("{where} already holds tables that are not bertdrill's; use an empty database").format(
            where=self.where)

    def day_number(self, expression: str) -> str:
        return f"(CAST({expression} AS date) - DATE '1970-01-01')"

    def lock_schema(self, connection: Connection) -> None:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})


def _sqlstate(exc: DBAPIError) -> str | None:
    return getattr(exc.orig, "sqlstate", None)


def _dropped(exc: DBAPIError) -> bool:
    """Whether the connection is gone (SQLAlchemy invalidated it, or the server said it ended the session, or
    a new one cannot be made while the server restarts), as opposed to a statement the server refused."""
    state = _sqlstate(exc)
    return (exc.connection_invalidated or state in DROPPED or (state or "").startswith("08")
            or (state is None and isinstance(exc, OperationalError)))


# --------------------------------------------------------------------------- a class: roles and row-level security


def learners_role(connection: Connection) -> str:
    """The group role of this database's learners (roles are server-wide, so it is named after the database)."""
    return f"{connection.execute(text('SELECT current_database()')).scalar_one()}_learners"


def _quote(connection: Connection, name: str) -> str:
    return connection.dialect.identifier_preparer.quote_identifier(name)


def _role_exists(connection: Connection, name: str) -> bool:
    return connection.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :name"), {"name": name}).first() is not None


@dataclass(frozen=True)
class ClassRoles:
    """The roles of a class server (roles are server-wide, so each is named after the database).

    ``server`` logs in and holds no privilege of its own (NOINHERIT): every transaction of the server takes
    one of the other three for itself (``SET LOCAL ROLE``, :meth:`PostgresDatabase.acting`), so a statement
    run outside one is refused, and none of them owns a table, so none can turn row-level security off.
    """

    server: str  # the class server's login
    gate: str  # before anyone is known: reads names and password hashes, keeps login tokens
    learner: str  # a member learning: their own rows only (the policies read bertdrill.learner)
    teacher: str  # a teacher member: reads the whole class, manages the members

    @classmethod
    def of(cls, database: str) -> ClassRoles:
        return cls(f"{database}_server", f"{database}_gate", f"{database}_learner", f"{database}_teacher")


ACTING_LEARNER = "current_setting('bertdrill.learner', true)"
ACTING_MEMBER = "current_setting('bertdrill.member', true)"
MEMBER_TABLES = ("classroom", "member", "member_password", "member_login", "published_lesson")
STATEMENT_TIMEOUT_MS = 5000  # the class server's statements
IDLE_IN_TRANSACTION_MS = 10000


def class_roles(connection: Connection) -> ClassRoles:
    return ClassRoles.of(str(connection.execute(text("SELECT current_database()")).scalar_one()))


def secure_class(connection: Connection, server_password: str | None) -> tuple[ClassRoles, bool]:
    """The class server's roles, their grants and the row-level security policies they run under; run as the
    teacher's role (the owner). Run again, it changes nothing but a password given. Returns the roles and
    whether the server's login role was created now.

    Policies (permissive, so each role gets the union of its own): the learner role sees and changes the rows
    filed under the acting member's key (``bertdrill.learner``), and their own member row and password; the
    teacher role reads every row and manages members; the gate reads names and hashes and keeps login tokens.
    """
    roles = class_roles(connection)
    created = False
    for role in (roles.gate, roles.learner, roles.teacher):
        if not _role_exists(connection, role):
            connection.exec_driver_sql(f"CREATE ROLE {_quote(connection, role)} NOLOGIN")
    server = _quote(connection, roles.server)
    if not _role_exists(connection, roles.server):
        connection.exec_driver_sql(f"CREATE ROLE {server} LOGIN NOINHERIT")
        created = True
    if server_password is not None:
        statement = connection.execute(text("SELECT format('ALTER ROLE %I PASSWORD %L', CAST(:name AS text), "
                                            "CAST(:password AS text))"),
                                       {"name": roles.server, "password": server_password}).scalar_one()
        connection.exec_driver_sql(statement)
    connection.exec_driver_sql(f"ALTER ROLE {server} NOINHERIT NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB")
    connection.exec_driver_sql(f"ALTER ROLE {server} SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
    connection.exec_driver_sql(f"ALTER ROLE {server} SET idle_in_transaction_session_timeout = "
                               f"{IDLE_IN_TRANSACTION_MS}")
    gate, learner, teacher = (_quote(connection, role) for role in (roles.gate, roles.learner, roles.teacher))
    connection.exec_driver_sql(f"GRANT {gate}, {learner}, {teacher} TO {server}")
    for role in (server, gate, learner, teacher):
        connection.exec_driver_sql(f"GRANT USAGE ON SCHEMA public TO {role}")
    connection.exec_driver_sql(f"GRANT SELECT ON meta TO {server}")  # opening the store checks the version
    grants = {
        gate: {"classroom": "SELECT", "published_lesson": "SELECT", "member": "SELECT", "member_password": "SELECT",
               "member_login": "SELECT, INSERT, DELETE"},
        learner: {**{table: "SELECT" for table in (*SHARED_TABLES, "classroom", "published_lesson", "member")},
                  "member_password": "SELECT, UPDATE", "member_login": "SELECT, DELETE",
                  **{table: "SELECT, INSERT, UPDATE, DELETE" for table in LEARNER_TABLES}},
        teacher: {**{table: "SELECT" for table in (*SHARED_TABLES, *LEARNER_TABLES, *MEMBER_TABLES)},
                  "member": "SELECT, INSERT, UPDATE", "member_password": "SELECT, INSERT, UPDATE",
                  "member_login": "SELECT, DELETE"},
    }
    for role, tables in grants.items():
        for table, privileges in tables.items():
            connection.exec_driver_sql(f"GRANT {privileges} ON {table} TO {role}")
    for sequence in ("review_id_seq", "card_action_id_seq"):
        connection.exec_driver_sql(f"GRANT USAGE ON SEQUENCE {sequence} TO {learner}")
    connection.exec_driver_sql(f"GRANT USAGE ON SEQUENCE member_id_seq TO {teacher}")
    mine = f"learner = {ACTING_LEARNER}"
    me = f"CAST(member_id AS text) = {ACTING_MEMBER}"
    policies = {
        **{table: [("acting_learner", "ALL", learner, mine), ("teacher_reads", "SELECT", teacher, "true")]
           for table in LEARNER_TABLES},
        "member": [("gate_reads", "SELECT", gate, "true"), ("own_member", "SELECT", learner,
                                                              f"CAST(id AS text) = {ACTING_MEMBER}"),
                   ("teacher_manages", "ALL", teacher, "true")],
        "member_password": [("gate_reads", "SELECT", gate, "true"), ("own_password", "ALL", learner, me),
                            ("teacher_manages", "ALL", teacher, "true")],
        "member_login": [("gate_keeps", "ALL", gate, "true"), ("own_logins", "ALL", learner, me),
                         ("teacher_manages", "ALL", teacher, "true")],
    }
    _apply_policies(connection, policies)
    secure_summaries(connection)
    return roles, created


def _apply_policies(connection: Connection, policies: dict[str, list[tuple[str, str, str, str]]]) -> None:
    """Row-level security on each table, with its policies (name, command, role, condition) made anew."""
    for table, rules in policies.items():
        connection.exec_driver_sql(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        for name, command, role, condition in rules:
            connection.exec_driver_sql(f"DROP POLICY IF EXISTS {name} ON {table}")
            check = f" WITH CHECK ({condition})" if command in ("ALL", "INSERT", "UPDATE") else ""
            connection.exec_driver_sql(f"CREATE POLICY {name} ON {table} FOR {command} TO {role} "
                                       f"USING ({condition}){check}")


def secure_summaries(connection: Connection) -> None:
    """The report's summaries (:data:`SUMMARY_TABLES`) read as the log is: the acting learner their own rows, a
    teacher every row; nobody but their owner writes them (the log's triggers write them as the owner). Run by
    ``class init`` and by the migration that makes them (a class migrated by another teacher's command keeps a
    server that reads them); nothing to do on a database that is no class's (no roles)."""
    roles = class_roles(connection)
    if not (_role_exists(connection, roles.learner) and _role_exists(connection, roles.teacher)):
        return
    learner, teacher = _quote(connection, roles.learner), _quote(connection, roles.teacher)
    for table in SUMMARY_TABLES:
        connection.exec_driver_sql(f"GRANT SELECT ON {table} TO {learner}, {teacher}")
    _apply_policies(connection, {table: [("acting_learner", "SELECT", learner, f"learner = {ACTING_LEARNER}"),
                                         ("teacher_reads", "SELECT", teacher, "true")] for table in SUMMARY_TABLES})


def learner_roles(connection: Connection) -> list[str]:
    """The learner roles of a class from before the server (members of its learners' group), by name."""
    return [row[0] for row in connection.execute(text(
        "SELECT r.rolname FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member "
        "JOIN pg_roles g ON g.oid = m.roleid WHERE g.rolname = :group ORDER BY r.rolname"),
        {"group": learners_role(connection)})]


def retire_learner_roles(connection: Connection) -> None:
    """The learners' group loses every privilege on the class and its policy: a learner's own role reads
    nothing any more (the roles themselves are the server's, and stay; the teacher may drop them)."""
    group = learners_role(connection)
    if not _role_exists(connection, group):
        return
    quoted = _quote(connection, group)
    for table in LEARNER_TABLES:
        connection.exec_driver_sql(f"DROP POLICY IF EXISTS own_rows ON {table}")
    connection.exec_driver_sql(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {quoted}")
    connection.exec_driver_sql(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {quoted}")
    connection.exec_driver_sql(f"REVOKE ALL ON SCHEMA public FROM {quoted}")
