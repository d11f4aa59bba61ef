"""Readers never write (issue 23): ``status``, ``stats``, ``scheduler`` (no name), ``class report`` and
``sheet --from-class`` leave the database exactly as it was, whatever they are given: a learner nobody
has heard of, lessons newer than the database, a file that is not there, an older schema, a backup on
read-only media; on SQLite (the file's bytes, its folder's listing) and on PostgreSQL (every row).

Each case also checks that the figures are the ones a synced database would give, so writing nothing
is not bought by showing less."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from bertdrill.adapters.store import SCHEMA_VERSION, Store

NOW = "2025-03-03T09:00:00+03:00"
FIXTURES = Path(__file__).parent / "fixtures"
EXTRA_ITEM = '''
[[item]]
id = "reader-extra"
kind = "fact"
question = { en = "Does a reader write?", tr = "Okuyan yazar mı?" }
answer = { en = "Never.", tr = "Asla." }
'''
READERS = (["status"], ["status", "--json"], ["stats"], ["stats", "--json"], ["scheduler"],
           ["class", "report"], ["class", "report", "--json"])


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def reviewed(cli, db: Path, answers: str = "5\n5\n") -> None:
    result = cli("review", "--db", str(db), "--new", "2", input=answers)
    assert result.exit_code == 0, result.output
    Store.open(str(db)).close()  # the WAL folded in: the file alone is the database


def status(cli, db, *more) -> dict[str, int | str | None]:
    result = cli("status", "--json", "--db", str(db), *more)
    assert result.exit_code == 0, result.output
    shown: dict[str, int | str | None] = json.loads(result.stdout)  # one object of numbers, days and a path
    return shown


def schedules(db: Path) -> list[tuple[str, int]]:
    with closing(sqlite3.connect(db)) as connection:  # closed: no -wal or -shm left open for the listings
        return connection.execute("SELECT learner, count(*) FROM schedule GROUP BY learner").fetchall()


def test_a_learner_nobody_knows_is_shown_everything_new_and_written_nowhere(cli, tmp_path, monkeypatch):
    db = tmp_path / "mine.db"
    monkeypatch.setenv("BERTDRILL_LEARNER", "ayse")
    reviewed(cli, db)
    monkeypatch.delenv("BERTDRILL_LEARNER")
    before, files, theirs = digest(db), listing(tmp_path), schedules(db)
    assert [learner for learner, _count in theirs] == ["ayse"]
    ghost = status(cli, db, "--learner", "ghost-typo")
    assert (ghost["new_unseen"], ghost["learned"], ghost["cards"], ghost["due_now"]) == (32, 0, 32, 0)
    for command in READERS:
        result = cli(*command, "--db", str(db), "--learner", "ghost-typo")
        assert result.exit_code in (0, 2), (command, result.output)  # class report takes no --learner
        if result.exit_code == 2:
            assert cli(*command, "--db", str(db)).exit_code == 0
    assert digest(db) == before and listing(tmp_path) == files  # not a byte, not a -wal left behind
    assert schedules(db) == theirs
    report = json.loads(cli("class", "report", "--json", "--db", str(db)).stdout)
    assert [row["learner"] for row in report["learners"]] == ["ayse"]


def test_lessons_newer_than_the_database_are_counted_as_a_sync_would_count_them(cli, tmp_path, lesson_text):
    db = tmp_path / "mine.db"
    lesson = tmp_path / "lesson.toml"
    lesson.write_text(lesson_text, encoding="utf-8")
    result = cli("review", "--db", str(db), "-f", str(lesson), "--new", "2", input="5\n5\n")
    assert result.exit_code == 0, result.output
    Store.open(str(db)).close()
    unseen = status(cli, db, "-f", str(lesson))["new_unseen"]
    assert isinstance(unseen, int)
    lesson.write_text(lesson_text + EXTRA_ITEM, encoding="utf-8")  # one card more
    before = digest(db)
    shown = status(cli, db, "-f", str(lesson))
    stats = json.loads(cli("stats", "--json", "--db", str(db), "-f", str(lesson)).stdout)
    assert digest(db) == before
    assert (shown["cards"], shown["new_unseen"]) == (33, unseen + 1)
    assert stats["cards"]["new"] == unseen + 1 and sum(stats["cards"].values()) == 33
    # the same figures once a writer has synced the new card
    copy = tmp_path / "synced.db"
    shutil.copy(db, copy)
    with Store.open(str(copy)) as store:
        from bertdrill.adapters.lessons import all_cards, load_lessons

        store.sync(all_cards(load_lessons([lesson])))
    assert status(cli, copy, "-f", str(lesson)) | {"database": None} == shown | {"database": None}


def test_a_removed_item_is_counted_removed_without_being_marked(cli, tmp_path, lesson_text):
    db = tmp_path / "mine.db"
    lesson = tmp_path / "lesson.toml"
    lesson.write_text(lesson_text + EXTRA_ITEM, encoding="utf-8")
    result = cli("review", "--db", str(db), "-f", str(lesson), "--new", "40", input="5\n" * 40)
    assert result.exit_code == 0, result.output
    Store.open(str(db)).close()
    lesson.write_text(lesson_text, encoding="utf-8")  # the extra item is gone
    before = digest(db)
    stats = json.loads(cli("stats", "--json", "--db", str(db), "-f", str(lesson)).stdout)
    assert digest(db) == before
    assert stats["cards"]["removed"] == 1
    with closing(sqlite3.connect(db)) as connection:
        assert connection.execute("SELECT removed FROM card WHERE id LIKE '%reader-extra%'").fetchall() == [(0,)]


def test_a_missing_database_is_not_created_nor_its_folder(cli, tmp_path):
    db = tmp_path / "not" / "yet" / "bertdrill.db"
    shown = status(cli, db)
    assert (shown["new_unseen"], shown["learned"], shown["database"]) == (32, 0, str(db))
    for command in READERS:
        assert cli(*command, "--db", str(db)).exit_code == 0, command
    assert listing(tmp_path) == []


def test_an_older_schema_is_read_without_being_upgraded(cli, tmp_path):
    oldest = min(FIXTURES.glob("store-v*.db"))
    db = tmp_path / oldest.name
    shutil.copy(oldest, db)
    before = digest(db)
    with closing(sqlite3.connect(db)) as connection:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
    assert version < SCHEMA_VERSION
    for command in READERS:
        result = cli(*command, "--db", str(db))
        assert result.exit_code == 0, (command, result.output)
    assert digest(db) == before and listing(tmp_path) == [db.name]


def test_a_reader_of_an_older_schema_ends_without_a_word_on_stderr(tmp_path):
    """The reader's copy in memory replaces the file's engine: the connection the store kept between units went back
    first, else disposing the engine closed it under the pool, whose reset printed a traceback as the process
    ended (seen in a real process only: the interpreter's exit runs it)."""
    db = tmp_path / "store-v16.db"
    shutil.copy(FIXTURES / "store-v16.db", db)
    env = {**os.environ, "BERTDRILL_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    ended = subprocess.run([sys.executable, "-m", "bertdrill", "status", "--db", str(db)], env=env,
                           capture_output=True, text=True, timeout=60)
    assert (ended.returncode, ended.stderr) == (0, "")
    assert "Due now" in ended.stdout


def test_a_reader_of_an_older_schema_holds_no_copy_of_it_in_memory(tmp_path):
    """The upgraded copy is SQLite's temporary file, not memory: on the 1M-answer store a copy in memory made
    `status` peak at 363 MB. Here an older file of 40 MB (padded with a table of its own) is read by `status`,
    whose peak must stay well under the file's size above the same command on the fixture itself."""
    small, padded = tmp_path / "small.db", tmp_path / "padded.db"
    shutil.copy(FIXTURES / "store-v16.db", small)
    shutil.copy(FIXTURES / "store-v16.db", padded)
    with closing(sqlite3.connect(padded)) as connection:
        connection.execute("CREATE TABLE padding (bytes BLOB)")
        connection.executemany("INSERT INTO padding VALUES (randomblob(4000))", [()] * 10_000)
        connection.commit()
    assert padded.stat().st_size > 40_000_000

    def peak_of_status(db: Path) -> int:
        env = {**os.environ, "BERTDRILL_HOME": str(tmp_path / "home"), "BERTDRILL_CACHE": str(tmp_path / "home"),
               "NO_COLOR": "1"}
        # The peak from here on: a child's counts from its fork, so it would start at pytest's own (clear_refs: 5)
        script = ("import pathlib, sys; pathlib.Path('/proc/self/clear_refs').write_text('5')\n"
                  "from bertdrill.cli import run; sys.argv = ['bertdrill', 'status', '--db', "
                  f"{str(db)!r}]\ntry:\n    run()\nfinally:\n    print(next(line for line in "
                  "pathlib.Path('/proc/self/status').read_text().splitlines() if line.startswith('VmHWM')), "
                  "file=sys.stderr)")
        ended = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert "Due now" in ended.stdout, ended.stderr
        return int(ended.stderr.split()[-2]) * 1024

    before = hashlib.sha256(padded.read_bytes()).hexdigest()
    peak_of_status(small)  # the lessons verified once, into the cache: their peak is not the store's
    grown = peak_of_status(padded) - peak_of_status(small)
    assert grown < 10_000_000, grown
    assert hashlib.sha256(padded.read_bytes()).hexdigest() == before
    assert listing(tmp_path) == ["home", "padded.db", "small.db"]  # and no copy left beside it


def test_a_reader_store_refuses_to_write(tmp_path, cli):
    db = tmp_path / "mine.db"
    reviewed(cli, db)
    with Store.open(str(db), read_only=True) as store, pytest.raises(AssertionError, match="reader writes nothing"):
        store.set_flags(store.new_ids(__import__("datetime").date(2025, 3, 3))[0], suspended=True)
    with closing(sqlite3.connect(db)) as connection:  # and SQLite itself would refuse it: the authorizer
        assert connection.execute("SELECT count(*) FROM schedule WHERE suspended").fetchone() == (0,)


# --------------------------------------------------------------------------- read-only media


def read_only_folder(folder: Path, *, files: bool = False):
    """Make a folder unwritable, and its files too if ``files`` (read-only media): chattr +i for root, chmod
    for others. Returns the undo function, or skips."""
    paths = [folder, *(sorted(folder.iterdir()) if files else [])]
    if os.geteuid() != 0:
        for path in paths:
            path.chmod(0o555 if path.is_dir() else 0o444)
        def undo() -> None:
            for path in paths:
                path.chmod(0o755 if path.is_dir() else 0o644)
        return undo
    if shutil.which("chattr") and subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True).returncode == 0:
        return lambda: subprocess.run(["chattr", "-i", *map(str, paths)], check=True)
    pytest.skip("no way to make a folder read-only here")


def backup_with_frames(cli, tmp_path: Path, folder: Path, *, shm: bool) -> tuple[Path, int]:
    """A WAL database copied while its -wal held committed answers the file does not have yet (no
    checkpoint): ``folder`` gets the file and its -wal (and its -shm if ``shm``). Returns the copy and the
    answers it holds."""
    live = tmp_path / "live.db"
    reviewed(cli, live)
    connection = sqlite3.connect(live)
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    connection.execute("UPDATE schedule SET due = '2025-03-01', repetitions = 1, interval = 1 WHERE card_id IN "
                       "(SELECT id FROM card WHERE kind != 'practice' AND id IN "
                       "(SELECT card_id FROM schedule WHERE due IS NULL) ORDER BY id LIMIT 3)")
    connection.commit()
    folder.mkdir()
    for suffix in ("", "-wal") + (("-shm",) if shm else ()):
        shutil.copyfile(f"{live}{suffix}", folder / f"live.db{suffix}")
    connection.close()
    assert (folder / "live.db-wal").stat().st_size > 0
    return folder / "live.db", 3


@pytest.mark.parametrize("shm", [False, True], ids=["wal-only", "wal-and-shm"])
def test_a_backup_on_read_only_media_is_read_with_the_answers_of_its_wal(cli, tmp_path, shm):
    copy, due = backup_with_frames(cli, tmp_path, tmp_path / "media", shm=shm)
    files = {path.name: digest(path) for path in copy.parent.iterdir()}
    writable = tmp_path / "writable"
    shutil.copytree(copy.parent, writable)  # what SQLite reads of the same files where it may write
    expected = status(cli, writable / copy.name)
    expected_stats = json.loads(cli("stats", "--json", "--db", str(writable / copy.name)).stdout)
    undo = read_only_folder(copy.parent, files=True)
    try:
        shown = status(cli, copy)
        stats = json.loads(cli("stats", "--json", "--db", str(copy)).stdout)
        for command in READERS:
            assert cli(*command, "--db", str(copy)).exit_code == 0, command
    finally:
        undo()
    assert shown["due_now"] == expected["due_now"] == due  # the -wal's answers: immutable=1 alone misses them
    assert shown | {"database": None} == expected | {"database": None}
    assert stats | {"database": None} == expected_stats | {"database": None}
    assert {path.name: digest(path) for path in copy.parent.iterdir()} == files


def test_a_checkpointed_backup_on_read_only_media_is_read_where_it_is(cli, tmp_path):
    db = tmp_path / "media" / "mine.db"
    db.parent.mkdir()
    reviewed(cli, db)
    expected = status(cli, db)
    before = digest(db)
    undo = read_only_folder(db.parent)
    try:
        shown = status(cli, db)
    finally:
        undo()
    learned = shown["learned"]
    assert shown == expected and isinstance(learned, int) and learned >= 1 and digest(db) == before and listing(db.parent) == ["mine.db"]


def test_a_review_in_a_read_only_folder_is_told_the_folder_is_the_problem(cli, tmp_path):
    db = tmp_path / "media" / "mine.db"
    db.parent.mkdir()
    reviewed(cli, db)
    undo = read_only_folder(db.parent)
    try:
        result = cli("review", "--db", str(db), input="5\n")
    finally:
        undo()
    assert result.exit_code == 1
    assert f"the folder {db.parent} cannot be written" in result.stderr
    assert "make the folder writable" in result.stderr and "Make it writable" not in result.stderr


# --------------------------------------------------------------------------- PostgreSQL


def rows(postgres) -> dict[str, list[tuple[object, ...]]]:
    with postgres.connect() as admin:
        return {table: admin.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
                for table in ("meta", "lesson", "card", "schedule", "review", "scheduler")}


def test_readers_on_postgresql_write_no_row(cli, postgres, tmp_path, lesson_text):
    assert cli("class", "init", "--db", postgres.url).exit_code == 0
    assert cli("review", "--db", postgres.url, "--new", "1", input="5\n").exit_code == 0
    lesson = tmp_path / "lesson.toml"
    lesson.write_text(lesson_text + EXTRA_ITEM, encoding="utf-8")  # newer than the class's lessons
    before = rows(postgres)
    ghost = status(cli, postgres.url, "--learner", "ghost-typo")
    assert (ghost["new_unseen"], ghost["learned"]) == (32, 0)
    assert status(cli, postgres.url, "--learner", "ghost-typo", "-f", str(lesson))["new_unseen"] == 33
    for command in READERS:
        result = cli(*command, "--db", postgres.url, "--learner", "ghost-typo")
        assert result.exit_code in (0, 2), (command, result.output)
    assert cli("stats", "--db", postgres.url, "-f", str(lesson)).exit_code == 0
    assert rows(postgres) == before
    report = json.loads(cli("class", "report", "--json", "--db", postgres.url).stdout)
    assert "ghost-typo" not in [row["learner"] for row in report["learners"]]


def test_a_reader_on_an_empty_postgresql_database_creates_no_table(cli, postgres):
    result = cli("status", "--db", postgres.url)
    assert result.exit_code == 1 and "bertdrill class init" in result.stderr
    with postgres.connect() as admin:
        assert admin.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone() == (0,)
