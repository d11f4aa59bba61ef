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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from bertdrill.adapters.store import PostgresStore

LOCAL = "postgresql://postgres@127.0.0.1:5432/postgres"
CONNECT_TIMEOUT = 3  # seconds: a server that does not answer by then is "not reachable"
unreachable: list[str] = []  # why the PostgreSQL tests were skipped, for the summary banner


def admin_url() -> str:
    return os.environ.get("BERTDRILL_TEST_POSTGRES") or LOCAL


def class_store(url: str) -> PostgresStore:
    """``Store.open(url)`` on a PostgreSQL URL, as a teacher's command opens it: the class's store, with
    class_init, add_learner and the other class methods."""
    from bertdrill.adapters.store import PostgresStore, Store

    store = Store.open(url)
    assert isinstance(store, PostgresStore), url
    return store


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
