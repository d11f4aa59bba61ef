"""The PostgreSQL test harness itself: a database of the test's own, dropped afterwards; loud skips."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import postgres as postgres_server


def test_each_test_gets_a_fresh_database_that_is_dropped(postgres):
    with postgres.connect() as connection:
        assert connection.execute("SELECT current_database()").fetchone() == (postgres.database,)
        assert connection.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone() == (0,)
    role = postgres.role("someone")
    with postgres.connect() as connection:
        connection.execute(f'CREATE ROLE "{role}" LOGIN')
    gen = postgres_server.create_database()
    other = next(gen)
    assert other.database != postgres.database
    gen.close()  # runs the clean-up
    with postgres.connect() as connection:
        assert connection.execute("SELECT count(*) FROM pg_database WHERE datname = %s",
                                  (other.database,)).fetchone() == (0,)


def run_pytest_with_no_server(tmp_path, ci: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_needs_server.py"
    test.write_text(textwrap.dedent("""
        def test_it(postgres):
            assert False, "must not run without a server"
    """))
    conftest = postgres_server.__file__.replace("postgres.py", "conftest.py")
    (tmp_path / "conftest.py").write_text(open(conftest).read())
    (tmp_path / "postgres.py").write_text(open(postgres_server.__file__).read())
    env = {"PATH": "/usr/bin:/bin", "CI": ci,
           # a port nothing listens on: the server is "not reachable"
           "BERTDRILL_TEST_POSTGRES": "postgresql://postgres@127.0.0.1:1/postgres"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_without_a_server_the_tests_skip_loudly(tmp_path):
    result = run_pytest_with_no_server(tmp_path, ci="")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout
    assert "PostgreSQL tests SKIPPED" in result.stdout
    assert "no PostgreSQL server at postgresql://postgres@127.0.0.1:1/postgres" in result.stdout


def test_under_ci_an_unreachable_server_fails_the_run(tmp_path):
    result = run_pytest_with_no_server(tmp_path, ci="true")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 error" in result.stdout or "1 failed" in result.stdout
    assert "CI=true and the PostgreSQL tests cannot run: no PostgreSQL server at" in result.stdout
