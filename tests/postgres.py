"""A real PostgreSQL server for the tests: each test gets a database of its own, created and dropped.

The server is ``$BERTDRILL_TEST_POSTGRES`` (a ``postgresql://`` URL of a role that may create databases and
roles), else the local server on 127.0.0.1:5432. Where none answers, the PostgreSQL tests skip and the run ends
with a banner saying so; under ``CI=true`` they fail instead, so CI never passes without having run them.

Roles are shared by every database of a server: a test names the roles it creates with :attr:`Server.prefix`
(the database's name), and they are dropped with the database.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from bertdrill.adapters.store import PostgresStore
    from bertdrill.ports import SyncCard

LOCAL = "postgresql://postgres@127.0.0.1:5432/postgres"
CONNECT_TIMEOUT = 3  # seconds: a server that does not answer by then is "not reachable"
unreachable: list[str] = []  # why the PostgreSQL tests were skipped, for the summary banner


def admin_url() -> str:
    return os.environ.get("BERTDRILL_TEST_POSTGRES") or LOCAL


def class_store(url: str) -> PostgresStore:
    """``Store.open(url)`` on a PostgreSQL URL, as a teacher's command opens it: the class's store, with
    open_class, add_member and the other class methods."""
    from bertdrill.adapters.store import PostgresStore, Store

    store = Store.open(url)
    assert isinstance(store, PostgresStore), url
    return store


@contextmanager
def class_learners(server: Server, cards: Sequence[SyncCard], *names: str) -> Iterator[dict[str, PostgresStore]]:
    """A class of these learners, as the class server reaches them: the teacher's ``class init`` (the cards, the
    server's roles and policies) and ``class add-learner``; yields each learner's store as the server opens it,
    acting as them (their own rows under row-level security, their schedules made as at their first visit)."""
    from bertdrill.adapters.store import PostgresStore

    with class_store(server.url) as teacher:
        teacher.open_class(cards, [])
        members = {name: teacher.add_member(name, f"{name}-password") for name in names}
    serving = PostgresStore.serving(server.url_as(f"{server.database}_server"))
    try:
        learners = {name: serving.acting_as(member) for name, member in members.items()}
        for store in learners.values():
            store.schedule_every_card()
        yield learners
    finally:
        serving.close()


OLD_CLASS = """
CREATE ROLE "{group}" NOLOGIN;
GRANT USAGE ON SCHEMA public TO "{group}";
GRANT SELECT ON meta, lesson, card TO "{group}";
GRANT SELECT, INSERT, UPDATE, DELETE ON schedule, review, scheduler, fsrs_parameters, card_action, lesson_exam
    TO "{group}";
GRANT USAGE ON SEQUENCE review_id_seq, card_action_id_seq TO "{group}"
"""
OLD_POLICY = ("ALTER TABLE {table} ENABLE ROW LEVEL SECURITY; CREATE POLICY own_rows ON {table} "
              "USING (learner = current_user) WITH CHECK (learner = current_user)")


def old_class(server: Server, cards: Sequence[SyncCard], *roles: str) -> None:
    """A class as bertdrill made it before the class server (what its ``class init`` and ``add-learner`` did, which
    bertdrill no longer does): the tables, a learners' group named after the database, row-level security on
    ``learner = current_user``, and a login role per learner in the group, each with the password ``old``."""
    with class_store(server.url) as teacher:
        teacher.sync(cards, schedules=False)
    group = f"{server.database}_learners"
    with server.connect() as connection:
        statements = [*OLD_CLASS.format(group=group).split(";")]
        for table in ("schedule", "review", "scheduler", "fsrs_parameters", "card_action", "lesson_exam"):
            statements += OLD_POLICY.format(table=table).split(";")
        for role in roles:
            statements += [f"CREATE ROLE \"{role}\" LOGIN PASSWORD 'old'", f'GRANT "{group}" TO "{role}"']
        for statement in statements:
            connection.execute(statement)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def _conninfo(url: str, database: str | None = None) -> str:
    """libpq form of a URL (SQLAlchemy's ``+psycopg`` driver suffix removed), on another database if given."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url).set(drivername="postgresql")
    if database is not None:
        parsed = parsed.set(database=database)
    return parsed.render_as_string(hide_password=False)


def sqlalchemy_url(url: str, database: str) -> str:
    """The URL bertdrill is given for ``database`` (``--db``), with the server's role and address."""
    return _conninfo(url, database)


@dataclass
class Server:
    """The server the tests run on, and the database this test owns."""

    admin: str  # URL of the administrator's connection, on the maintenance database
    database: str
    prefix: str  # names of roles this test may create start with it
    created_roles: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The test database, as the teacher (the administrator role) connects to it."""
        return sqlalchemy_url(self.admin, self.database)

    def url_as(self, role: str) -> str:
        """The test database, connecting as ``role`` (the server trusts local connections, or has a password)."""
        from sqlalchemy.engine import make_url

        return make_url(self.url).set(username=role, password=None).render_as_string(hide_password=False)

    def connect(self, role: str | None = None, *, autocommit: bool = True):
        """A raw psycopg connection to the test database, as the administrator or as ``role``."""
        import psycopg

        return psycopg.connect(_conninfo(self.url_as(role) if role else self.url), autocommit=autocommit,
                               connect_timeout=CONNECT_TIMEOUT)

    def role(self, name: str) -> str:
        """A role name unique to this test (roles are server-wide), dropped afterwards."""
        full = f"{self.prefix}_{name}"
        self.created_roles.append(full)
        return full


def _admin_connection():
    """psycopg connection to the maintenance database, or pytest.skip / pytest.fail (under CI) saying why not."""
    url = admin_url()
    shown = _shown(url)
    try:
        import psycopg
    except ImportError:
        return _unavailable(f"psycopg is not installed (pip install -e '.[test]'), so {shown} was not tried")
    try:
        return psycopg.connect(_conninfo(url), autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return _unavailable(f"no PostgreSQL server at {shown} ({first_line}); set BERTDRILL_TEST_POSTGRES")


def _shown(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _unavailable(reason: str):
    if in_ci():
        pytest.fail(f"CI=true and the PostgreSQL tests cannot run: {reason}", pytrace=False)
    if reason not in unreachable:
        unreachable.append(reason)
    pytest.skip(f"PostgreSQL tests skipped: {reason}")


def create_database():
    """Create a uniquely named database; yields a :class:`Server`, then drops the database and the test's roles."""
    admin = _admin_connection()
    name = f"bertdrill_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin.execute(f'CREATE DATABASE "{name}"')
    server = Server(admin=admin_url(), database=name, prefix=name)
    try:
        yield server
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        # Roles are server-wide: drop every role this test made (its grants went with the database).
        leftover = [row[0] for row in admin.execute(
            "SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)", (name,))]
        for role in sorted(set(leftover) | set(server.created_roles)):
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')
        admin.close()
