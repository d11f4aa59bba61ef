"""Schema versions: every earlier version's fixture opens and migrates without losing a row; a newer
file, or another program's, is refused and left byte for byte as it was.

Fixtures: ``tests/fixtures/store-v{N}.db``, one per schema version, written by
``tests/fixtures/make_store_v{N}.py`` while that version was current. Schema version 1 is the
first bertdrill ever wrote (the store had ``PRAGMA user_version`` and the ``meta`` table from its
first commit), so there is no legacy version 0: a file at user_version 0 with tables in it is
not a bertdrill database. When the schema moves to version 2, add store-v2.db: the first test
fails until it exists.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest

from bertdrill.adapters import store
from bertdrill.adapters.store import Store
from bertdrill.core.errors import StoreError

FIXTURES = Path(__file__).parent / "fixtures"
META_REWRITTEN_ON_OPEN = {"schema_version", "opened_at"}


def version_of(path: Path) -> int:
    named = re.fullmatch(r"store-v(\d+)\.db", path.name)
    assert named is not None, path
    return int(named[1])


VERSIONED = sorted(FIXTURES.glob("store-v*.db"), key=version_of)  # by number: store-v10 after store-v9


def tables(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every user table's rows (with their column names first), in primary-key order."""
    with sqlite3.connect(path) as connection:
        names = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        found = {}
        for name in names:
            cursor = connection.execute(f'SELECT * FROM "{name}" ORDER BY 1')
            found[name] = [tuple(column[0] for column in cursor.description), *cursor.fetchall()]
        return found


CHECK = re.compile(r"CHECK \(((?:[^()]|\([^()]*\))*)\)")  # a CHECK's condition, one level of parentheses inside


def schema(path: Path) -> dict[str, tuple[object, ...]]:
    """The schema as SQLite reads it, table by table: columns (name, type, not null, default, key position),
    indexes (name, unique, columns), foreign keys and CHECK conditions. What a database does, not how its
    DDL was spelled: a new database's tables are compiled by SQLAlchemy, an old file's were written by hand."""
    found: dict[str, tuple[object, ...]] = {}
    with closing(sqlite3.connect(path)) as connection:
        tables = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
        for name, sql in tables:
            columns = [(column, kind.upper(), notnull, default, key)
                       for _, column, kind, notnull, default, key in connection.execute(f'PRAGMA table_info("{name}")')]
            indexes = sorted((index, unique, tuple(row[2] for row in connection.execute(f'PRAGMA index_info("{index}")')))
                             for _, index, unique, origin, _partial in connection.execute(f'PRAGMA index_list("{name}")')
                             if origin == "c")  # made by CREATE INDEX (not a primary key's own index)
            foreign = sorted(row[2:5] for row in connection.execute(f'PRAGMA foreign_key_list("{name}")'))
            checks = sorted(" ".join(condition.split()) for condition in CHECK.findall(sql))
            found[name] = (columns, indexes, foreign, checks)
    return found


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))


def test_there_is_a_fixture_for_every_schema_version():
    assert [version_of(path) for path in VERSIONED] == list(range(1, store.SCHEMA_VERSION + 1))
    for path in VERSIONED:
        with sqlite3.connect(f"file:{path}?immutable=1", uri=True) as connection:  # creates no -wal, -shm
            assert connection.execute("PRAGMA user_version").fetchone() == (version_of(path),)
        assert not Path(f"{path}-wal").exists()  # one file is the whole store


@pytest.mark.parametrize("fixture", VERSIONED, ids=lambda path: path.name)
def test_an_earlier_version_opens_and_migrates_without_losing_a_row(fixture, tmp_path):
    path = tmp_path / fixture.name
    shutil.copy(fixture, path)
    old = tables(path)
    opened = Store.open(str(path))
    assert opened.migrate() == store.SCHEMA_VERSION  # migrated on the first open: nothing left to do
    opened.close()
    new = tables(path)
    for name, (columns, *rows) in old.items():
        kept = [tuple(row[new[name][0].index(column)] for column in columns) for row in new[name][1:]]
        if name == "meta":
            rows = [row for row in rows if row[0] not in META_REWRITTEN_ON_OPEN]
            kept = [row for row in kept if row[0] not in META_REWRITTEN_ON_OPEN]
            assert set(rows) <= set(kept), "meta lost a key"
        else:
            assert kept == rows, f"table {name} changed"
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (store.SCHEMA_VERSION,)
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    meta = {key: value for key, value in new["meta"][1:]}  # each row is exactly (key, value)
    assert meta["schema_version"] == str(store.SCHEMA_VERSION)
    assert all(f"migrated_to_{v}" in meta for v in range(version_of(fixture), store.SCHEMA_VERSION + 1))


@pytest.mark.parametrize("fixture", VERSIONED, ids=lambda path: path.name)
def test_a_migrated_file_has_the_schema_of_a_new_one(fixture, tmp_path):
    """Migrating an old file and creating a new one end at the same tables, columns and indexes."""
    path = tmp_path / fixture.name
    shutil.copy(fixture, path)
    Store.open(str(path)).close()
    Store.open(str(tmp_path / "new.db")).close()
    assert schema(path) == schema(tmp_path / "new.db")


def test_two_programs_opening_an_old_file_at_once_migrate_it_once(tmp_path, monkeypatch):
    """The version is read again under the write lock, so the second opener finds the work done."""
    ran = []

    def to_next(connection):
        ran.append(threading.current_thread().name)
        time.sleep(0.3)  # the other opener arrives meanwhile, and waits
        connection.exec_driver_sql("ALTER TABLE card ADD COLUMN note TEXT")

    following = store.SCHEMA_VERSION + 1
    monkeypatch.setattr(store.migrations, "SCHEMA_VERSION", following)
    monkeypatch.setitem(store.MIGRATIONS, following, to_next)
    path = tmp_path / "old.db"
    shutil.copy(VERSIONED[-1], path)
    errors = []

    def open_it():
        try:
            Store.open(str(path)).close()
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    openers = [threading.Thread(target=open_it, name=f"opener-{n}") for n in range(2)]
    for opener in openers:
        opener.start()
    for opener in openers:
        opener.join()
    assert errors == [] and len(ran) == 1
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (following,)
        assert connection.execute("SELECT count(*) FROM review").fetchone() == (len(tables(VERSIONED[-1])["review"]) - 1,)


# --------------------------------------------------------------------------- files bertdrill must not touch


def newer(tmp_path: Path, journal: str) -> Path:
    path = tmp_path / f"newer-{journal}.db"
    shutil.copy(FIXTURES / "store-v1.db", path)
    # closing(): `with connect()` only commits; a connection left to the garbage collector would checkpoint the
    # WAL into the file whenever it is collected, perhaps in the middle of the test (seen under load).
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(f"PRAGMA journal_mode = {journal}")
        connection.execute(f"PRAGMA user_version = {store.SCHEMA_VERSION + 1}")
    return path


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_a_newer_file_is_refused_and_left_byte_for_byte(tmp_path, journal):
    """Before the fix, a newer file in rollback-journal mode was switched to WAL (its header rewritten)
    before its version was read."""
    path = newer(tmp_path, journal)
    before, files = digest(path), siblings(path)
    with pytest.raises(StoreError) as caught:
        Store.open(str(path))
    assert str(caught.value) == (
        f"{path} was written by a newer bertdrill (schema version {store.SCHEMA_VERSION + 1}; this one knows up "
        f"to {store.SCHEMA_VERSION}); upgrade bertdrill to open it")
    assert digest(path) == before and siblings(path) == files


def test_a_newer_file_is_refused_by_every_command(cli, tmp_path, monkeypatch):
    path = newer(tmp_path, "delete")
    before = digest(path)
    monkeypatch.setenv("BERTDRILL_DB", str(path))
    for command in (["review"], ["status"], ["status", "--json"]):
        result = cli(*command, input="5\n")
        assert result.exit_code == 1, command
        assert result.stderr.startswith(f"Error: {path} was written by a newer bertdrill"), command
        assert "Card 1" not in result.stdout
    assert digest(path) == before and siblings(path) == [path.name]


def test_another_programs_database_is_refused_and_left_byte_for_byte(tmp_path):
    path = tmp_path / "photos.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE photo (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("INSERT INTO photo (name) VALUES ('cat.jpg')")
    before = digest(path)
    with pytest.raises(StoreError, match="is an SQLite database but not a bertdrill one; use another file"):
        Store.open(str(path))
    assert digest(path) == before and siblings(path) == [path.name]
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("delete",)
