"""Values read back are checked (issue 23): what a command prints from a database row is valid, whatever
the row holds."""

from __future__ import annotations

import json


def test_json_output_is_always_valid_json(capsys):
    from bertdrill.cli.base import print_json

    print_json({"retention": float("nan"), "rows": [{"ef": float("inf")}, (1.5, float("-inf"))], "name": "ann"})
    assert json.loads(capsys.readouterr().out) == {"retention": None, "rows": [{"ef": None}, [1.5, None]],
                                                    "name": "ann"}


# --------------------------------------------------------------------------- tampered rows (SQLite)

import sqlite3  # noqa: E402
from contextlib import closing  # noqa: E402

import pytest  # noqa: E402

NOW = "2025-03-03T09:00:00+03:00"
FIRST = "(SELECT card_id FROM schedule WHERE due IS NOT NULL ORDER BY card_id LIMIT 1)"
# (table, column, value, which row, the row's key as the message names it)
TAMPERED = [
    ("schedule", "ef100", "'abc'", f"card_id = {FIRST}", "card_id = "),
    ("schedule", "due", "'not-a-date'", f"card_id = {FIRST}", "card_id = "),
    ("schedule", "interval", "1e300", f"card_id = {FIRST}", "card_id = "),
    ("schedule", "repetitions", "'two'", f"card_id = {FIRST}", "card_id = "),
    ("schedule", "stability", "'soft'", f"card_id = {FIRST}", "card_id = "),
    ("review", "study_day", "'someday'", "id = 1", "id = 1"),
    ("review", "grade", "'A'", "id = 1", "id = 1"),
    ("review", "kind", "'guess'", "id = 1", "id = 1"),
    ("review", "reviewed_at", "'yesterday'", "id = 1", "id = 1"),
    ("review", "ef100_after", "'x'", "id = 1", "id = 1"),
    ("review", "due_before", "'13th'", "id = 1", "id = 1"),
    ("review", "duration_ms", "'long'", "id = 1", "id = 1"),
    ("scheduler", "name", "'anki'", "1 = 1", "learner = "),
    ("scheduler", "retention", "'high'", "1 = 1", "learner = "),
    ("fsrs_parameters", "parameters", "'[0.4, 1.2'", "1 = 1", "number = 1"),
]
COMMANDS = (["status"], ["status", "--json"], ["stats"], ["stats", "--json"], ["class", "report"],
            ["class", "report", "--json"], ["scheduler"], ["stats", "--calibration", "--json"], ["review"])
MUST_SAY = {  # the commands that read the value past SQL: they must name the row
    ("schedule", "ef100"): ["stats", "review"], ("schedule", "due"): ["stats"], ("schedule", "interval"): ["stats"],
    ("schedule", "repetitions"): ["stats", "review"], ("schedule", "stability"): ["stats", "review"],
    ("review", "study_day"): ["stats --calibration --json"], ("review", "grade"): ["stats --calibration --json"],
    ("review", "kind"): ["status", "review"], ("review", "reviewed_at"): ["class report"],
    ("scheduler", "name"): ["scheduler", "review", "stats"], ("scheduler", "retention"): ["scheduler", "review"],
    ("fsrs_parameters", "parameters"): ["scheduler", "review"],
}


@pytest.fixture(scope="module")
def reviewed_database(tmp_path_factory):
    """A learner's file: three cards answered, FSRS chosen with a fitted-looking set of parameters."""
    import os

    from typer.testing import CliRunner

    from bertdrill.cli import app

    folder = tmp_path_factory.mktemp("read-back")
    db = folder / "base.db"
    env = {"BERTDRILL_NOW": NOW, "BERTDRILL_DB": str(db), "BERTDRILL_HOME": str(folder), "NO_COLOR": "1",
           "BERTDRILL_LEARNER": "ann", "BERTDRILL_CACHE": str(folder / "cache"), "LANG": "C.UTF-8"}
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        result = CliRunner().invoke(app, ["review", "--new", "3"], input="5\n5\n5\n")
        assert result.exit_code == 0, result.output
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    with closing(sqlite3.connect(db)) as connection:
        connection.execute("INSERT INTO fsrs_parameters (learner, number, parameters, reviews, fitted_at) VALUES "
                           "('ann', 1, '[0.4, 1.2, 3.1, 15.7]', 3, '2025-03-03 06:00:00.000000')")
        connection.execute("INSERT INTO scheduler (learner, name, retention, switched_at, parameters) VALUES "
                           "('ann', 'sm2', NULL, '2025-03-03 06:00:00.000000', NULL)")
        connection.execute(f"UPDATE schedule SET due = '2025-03-01' WHERE card_id = {FIRST}")  # due: review shows it
        connection.commit()
    return db


def tampered(base, folder, table, column, value, where):
    import shutil

    db = folder / "tampered.db"
    shutil.copy(base, db)
    with closing(sqlite3.connect(db)) as connection:
        connection.execute("PRAGMA ignore_check_constraints = ON")  # as another program or a hand edit might
        if (table, column) in (("scheduler", "retention"),):
            connection.execute("UPDATE scheduler SET name = 'fsrs'")
        if table == "fsrs_parameters":
            connection.execute("UPDATE scheduler SET name = 'fsrs', retention = 0.9, parameters = 1")
        assert connection.execute(f"UPDATE {table} SET {column} = {value} WHERE {where}").rowcount == 1
        connection.commit()
    return db


@pytest.mark.parametrize("table, column, value, where, key", TAMPERED, ids=[f"{t}.{c}" for t, c, *_ in TAMPERED])
def test_a_tampered_value_is_named_by_every_command_that_reads_it(cli, tmp_path, monkeypatch, reviewed_database,
                                                                   table, column, value, where, key):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    monkeypatch.setenv("BERTDRILL_LEARNER", "ann")
    db = tampered(reviewed_database, tmp_path, table, column, value, where)
    said = []
    for command in COMMANDS:
        result = cli(*command, "--db", str(db), input="5\n5\n")
        shown = result.output
        assert "unexpected" not in shown and "Traceback" not in shown, (command, shown)
        assert result.exit_code in (0, 1), (command, shown)
        if result.exit_code == 1:
            assert result.stderr.startswith(f"Error: {db} is damaged: in table {table}, the row "), (command, shown)
            assert key in result.stderr and f" in {column}, where bertdrill writes " in result.stderr, shown
            said.append(" ".join(command))
        elif "--json" in command:
            json.loads(result.stdout)  # valid JSON whatever the row holds
    assert set(MUST_SAY.get((table, column), [])) <= set(said), said


# --------------------------------------------------------------------------- values only SQL reads

# Every column a figure of status or stats counts, sums, averages, compares or groups in SQL, with values
# bertdrill never writes there: each once gave a wrong figure and exit 0. (table, column, value, which row)
ONLY_SQL_READS = [
    *[("schedule", "ef100", value, f"card_id = {FIRST}") for value in ("'abc'", "1.5", "9e999", "-5", "X'00'")],
    *[("schedule", "due", value, f"card_id = {FIRST}") for value in ("'not-a-date'", "'2025-13-45'", "20250301")],
    ("schedule", "interval", "'soon'", f"card_id = {FIRST}"),
    ("schedule", "repetitions", "-1", f"card_id = {FIRST}"),
    ("schedule", "lapses", "'many'", f"card_id = {FIRST}"),
    ("schedule", "suspended", "2", f"card_id = {FIRST}"),
    ("schedule", "buried_until", "'tomorrow'", f"card_id = {FIRST}"),
    *[("schedule", "stability", value, f"card_id = {FIRST}") for value in ("'NaN'", "9e999", "-1")],
    *[("review", "study_day", value, "id = 1") for value in ("'someday'", "'2025-02-30'", "45000")],
    *[("review", "reviewed_at", value, "id = 1") for value in ("'infinity'", "'never'")],
    *[("review", "grade", value, "id = 1") for value in ("9", "'A'", "3.5")],
    ("review", "duration_ms", "'long'", "id = 1"),
    ("review", "duration_ms", "-1", "id = 1"),
    ("review", "interval_before", "'x'", "id = 1"),
    ("review", "due_after", "'later'", "id = 1"),
    ("card", "removed", "'yes'", f"id = {FIRST}"),
    ("card", "position", "'first'", f"id = {FIRST}"),
]


@pytest.mark.parametrize("table, column, value, where", ONLY_SQL_READS,
                         ids=[f"{t}.{c}={v}" for t, c, v, _ in ONLY_SQL_READS])
def test_a_damaged_value_only_sql_reads_is_named_not_counted(cli, tmp_path, monkeypatch, reviewed_database,
                                                              table, column, value, where):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    monkeypatch.setenv("BERTDRILL_LEARNER", "ann")
    db = tampered(reviewed_database, tmp_path, table, column, value, where)
    for command in (["status"], ["stats", "--json"], ["class", "report"]):
        result = cli(*command, "--db", str(db))
        assert result.exit_code == 1, (command, result.output)
        assert result.stderr.startswith(f"Error: {db} is damaged: in table {table}, the row "), result.stderr
        assert f" in {column}, where bertdrill writes " in result.stderr, result.stderr


@pytest.mark.parametrize("version", ["new", "store-v12.db"])
def test_the_check_before_a_figure_is_a_lookup_in_each_tables_index(reviewed_database, version):
    """Checking every row before each status would be a scan of a million answers: the check asks each table's
    index of damaged rows instead, and must say its condition exactly as the index does for the database to use
    it. The frozen version 12 file fails this when the damage rules change without a migration making the indexes
    again."""
    from pathlib import Path

    from bertdrill.adapters.store import damage

    path = reviewed_database if version == "new" else Path(__file__).parent / "fixtures" / version
    with closing(sqlite3.connect(f"file:{path}?immutable=1", uri=True)) as connection:  # no -wal, -shm made
        for table in damage.TABLES:
            present = {row[1] for row in connection.execute(f"PRAGMA table_info({table.name})")}
            condition = damage.damaged_condition(table, present, "sqlite")
            plan = connection.execute(f"EXPLAIN QUERY PLAN SELECT 1 FROM main.{table.name} WHERE {condition} LIMIT 1")
            assert any(f"USING INDEX {damage.index_name(table)}" in row[-1] for row in plan), table.name
    from sqlalchemy import create_engine

    engine = create_engine(f"sqlite:///file:{path}?immutable=1&uri=true")
    with engine.connect() as connection:  # the one statement the store runs: every table by its index
        steps = [row[-1] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {damage.damaged_query(connection)}")]
    engine.dispose()
    scans = [step for step in steps if step.startswith("SCAN main.")]
    assert len(scans) == len(damage.TABLES) and all("_damaged" in step for step in scans), steps


def test_a_database_without_its_index_of_damaged_rows_is_still_checked(cli, tmp_path, monkeypatch, reviewed_database):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    monkeypatch.setenv("BERTDRILL_LEARNER", "ann")
    db = tampered(reviewed_database, tmp_path, "schedule", "ef100", "'abc'", f"card_id = {FIRST}")
    with closing(sqlite3.connect(db)) as connection:
        connection.execute("DROP INDEX ix_schedule_damaged")  # another program's doing, or an older index
        connection.commit()
    result = cli("status", "--db", str(db))
    assert result.exit_code == 1 and " in ef100, where bertdrill writes " in result.stderr, result.output


# PostgreSQL's types keep a value's kind, not its range or its finiteness: what a figure could still misread.
ON_POSTGRESQL = [
    ("schedule", "stability", "'NaN'", "stability IS NOT NULL OR due IS NOT NULL"),
    ("schedule", "ef100", "-5", "due IS NOT NULL"),
    ("schedule", "due", "'infinity'", "due IS NOT NULL"),
    ("review", "reviewed_at", "'infinity'", "1 = 1"),
    ("review", "study_day", "'-infinity'", "1 = 1"),
    ("review", "duration_ms", "-1", "1 = 1"),
    ("review", "stability_after", "'Infinity'", "1 = 1"),
]


@pytest.mark.parametrize("table, column, value, where", ON_POSTGRESQL, ids=[f"{t}.{c}" for t, c, *_ in ON_POSTGRESQL])
def test_a_damaged_value_only_sql_reads_is_named_on_postgresql(cli, postgres, monkeypatch, table, column, value, where):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    assert cli("class", "init", "--db", postgres.url).exit_code == 0
    assert cli("review", "--db", postgres.url, "--new", "2", input="5\n5\n").exit_code == 0
    with postgres.connect() as admin:
        first = admin.execute(f"SELECT ctid FROM {table} WHERE {where} ORDER BY 1 LIMIT 1").fetchone()
        assert first is not None
        admin.execute(f"UPDATE {table} SET {column} = {value} WHERE ctid = %s", (first[0],))
    for command in (["status"], ["stats", "--json"], ["class", "report"]):
        result = cli(*command, "--db", postgres.url)
        assert result.exit_code == 1, (command, result.output)
        assert f" is damaged: in table {table}, the row " in result.stderr, result.stderr
        assert f" in {column}, where bertdrill writes " in result.stderr, result.stderr
