"""Database URLs (issue 23): no command prints a password it did not create, in any part of a URL; a
malformed URL gets a clear error; an error that is not a connection failure is not called one."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError, ProgrammingError

from bertdrill.adapters.store import postgresql


@pytest.mark.parametrize("url", [
    "postgresql://teacher:SECRET@127.0.0.1:5432/class",
    "postgresql://teacher@127.0.0.1:5432/class?password=SECRET",
    "postgresql://teacher@127.0.0.1/class?sslmode=require&sslpassword=SECRET&password=SECRET",
])
def test_a_described_url_holds_no_password(url):
    shown = postgresql.describe(make_url(url))
    assert "SECRET" not in shown and "***" in shown and "127.0.0.1" in shown


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://u:pw@127.0.0.1:notaport/test?password=S0", "postgresql://u:***@127.0.0.1:notaport/test?password=***"),
    ("postgresql://u@[::1/test", "postgresql://u@[::1/test"),
])
@pytest.mark.parametrize("command", [["status"], ["status", "--json"], ["stats"], ["review"]])
def test_a_malformed_url_gets_a_clear_error(cli, url, shown, command):
    result = cli(*command, "--db", url)
    assert result.exit_code == 1
    assert f"Error: {shown} is not a database URL: its host or port cannot be read" in result.output
    assert "unexpected" not in result.output and "pw" not in result.output.replace("pw@", "")


def test_only_a_failure_to_connect_is_called_one():
    database = SimpleNamespace(where="postgresql://127.0.0.1/class", lock_timeout=1.0)
    client_side = ProgrammingError("SELECT %s", {}, Exception("the query has 1 placeholder but 0 parameters"))
    refused = OperationalError("connect", {}, Exception("connection refused"))
    # a stand-in for the database: _error reads only its where and lock_timeout
    error = postgresql.PostgresDatabase._error
    assert not str(error(database, client_side)).startswith("cannot connect")  # type: ignore[arg-type]
    assert str(error(database, refused)).startswith("cannot connect")  # type: ignore[arg-type]


def test_status_on_postgresql_never_shows_a_password_from_the_url(cli, postgres):
    url = make_url(postgres.url)
    secret = url.update_query_dict({"password": "SECRET-IN-QUERY"}).render_as_string(hide_password=False)
    assert "SECRET-IN-QUERY" not in cli("class", "init", "--db", secret).output  # a reader creates no tables
    for command in (["status"], ["status", "--json"]):
        result = cli(*command, "--db", secret)
        assert result.exit_code == 0, result.output
        assert "SECRET-IN-QUERY" not in result.output
    data = json.loads(cli("status", "--json", "--db", secret).stdout)
    assert "password=***" in data["database"]

