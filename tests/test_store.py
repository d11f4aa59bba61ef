"""The review database: where it lives, how it opens, syncs, logs, undoes and refuses."""

from __future__ import annotations

import dataclasses
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from files import make_read_only
from sqlalchemy import event, inspect, text

from bertdrill.adapters import catalogs, store
from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import Store, damage
from bertdrill.adapters.store.memory import MemoryStore
from bertdrill.adapters.store.schema import SchedulerRow
from bertdrill.core import i18n
from bertdrill.core.errors import StoreError
from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.registry import SchedulerName
from bertdrill.core.scheduling.state import LEECH_LAPSES, NEW, Schedule
from bertdrill.ports import CardFigures, CardLog

FIXTURES = Path(__file__).parent / "fixtures"
DAY = date(2025, 3, 3)
MORNING = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def cards():
    return all_cards(load_lessons())


@pytest.fixture(params=["sqlite", "postgresql", "memory"])
def backend(request, tmp_path):
    """Open a fresh store on each backend: an SQLite file, a database of the test's own on PostgreSQL, or
    the in-memory store (the same contract, in Python)."""
    if request.param == "sqlite":
        return lambda name="review.db", **options: Store.open(str(tmp_path / name), **options)
    if request.param == "memory":
        return lambda name=None, **options: MemoryStore(**options)
    server = request.getfixturevalue("postgres")
    return lambda name=None, **options: Store.open(server.url, **options)


@pytest.fixture(params=["sqlite", "postgresql"])
def sql_backend(request, tmp_path):
    """The two SQL backends only: for what is about the database (its constraints)."""
    if request.param == "sqlite":
        return lambda: Store.open(str(tmp_path / "review.db"))
    server = request.getfixturevalue("postgres")
    return lambda: Store.open(server.url)


@pytest.fixture
def db(backend, cards):
    """A store with the shipped lessons synced, on each backend."""
    with backend() as opened:
        opened.sync(cards, now=MORNING)
        yield opened


@pytest.fixture
def sqlite_db(tmp_path, cards):
    """The same, on SQLite only: for what is about the file (pragmas, locks, its bytes)."""
    with Store.open(str(tmp_path / "review.db")) as opened:
        opened.sync(cards, now=MORNING)
        yield opened


def ids(cards, *keys):
    by_key = {card.key: card.id for card in cards}
    return [by_key[key] for key in keys]


def review(db, card_id, grade, day=DAY, kind="review"):
    return db.answer(card_id, grade=grade, kind=kind, reviewed_at=datetime.combine(day, MORNING.timetz()),
                     study_day=day, reschedule=lambda s: sm2.review(s, grade, today=day))


# --------------------------------------------------------------------------- where it lives


def test_db_option_wins_over_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("BERTDRILL_DB", str(tmp_path / "env.db"))
    assert store.database_url(str(tmp_path / "option.db")).database == str(tmp_path / "option.db")
    assert store.database_url().database == str(tmp_path / "env.db")


def test_home_then_platform_data_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("BERTDRILL_DB")
    assert store.database_url().database == str(tmp_path / "home" / "bertdrill.db")
    monkeypatch.delenv("BERTDRILL_HOME")
    assert store.database_url().database == str(tmp_path / "xdg" / "bertdrill" / "bertdrill.db")


def test_created_on_first_use_with_its_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("BERTDRILL_DB")
    monkeypatch.delenv("BERTDRILL_HOME")
    Store.open().close()
    assert (tmp_path / "xdg" / "bertdrill" / "bertdrill.db").is_file()


def test_sqlite_urls_are_accepted_and_relative_paths_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert store.database_url("sqlite:///rel.db").database == "rel.db"
    assert store.database_url("here.db").database == str(tmp_path / "here.db")
    Store.open(f"sqlite:///{tmp_path}/url.db").close()
    assert (tmp_path / "url.db").is_file()
    assert store.database_url("sqlite+pysqlite:///rel.db").database == "rel.db"


def test_other_databases_are_refused_clearly():
    with pytest.raises(StoreError, match=r"bertdrill keeps reviews in SQLite .* or, for a class, in PostgreSQL") as caught:
        store.database_url("mysql://user:secret@host/db")
    assert "secret" not in str(caught.value)
    with pytest.raises(StoreError, match="is not a database URL"):
        store.database_url("sqlite+nosuchdriver:::")


# --------------------------------------------------------------------------- how it opens


def test_pragmas_and_schema_version(sqlite_db, tmp_path):
    db = sqlite_db
    with db.engine.connect() as connection:
        pragma = lambda name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()  # noqa: E731
        assert pragma("journal_mode") == "wal"
        assert pragma("foreign_keys") == 1
        assert pragma("synchronous") == 2  # FULL
        assert pragma("busy_timeout") == store.BUSY_TIMEOUT_MS
        assert pragma("user_version") == store.SCHEMA_VERSION
    meta = db.meta()
    assert meta["schema_version"] == str(store.SCHEMA_VERSION)
    assert meta["created_by"].startswith("bertdrill ")
    assert "migrated_to_1" in meta and "opened_at" in meta


def test_migrations_build_exactly_the_models(tmp_path):
    """The hand-written DDL of the newest version and the SQLModel tables agree column by column."""
    from sqlmodel import SQLModel

    from bertdrill.adapters.store import damage

    migrated = Store.open(str(tmp_path / "migrated.db"))
    inspector = inspect(migrated.engine)
    for name, table in SQLModel.metadata.tables.items():
        columns = {c["name"]: (c["nullable"], bool(c.get("primary_key"))) for c in inspector.get_columns(name)}
        assert columns == {c.name: (c.nullable, c.primary_key) for c in table.columns}, name
        # a table's index of damaged rows is the damage rules', not the model's (tests/test_read_back.py)
        indexes = {i["name"]: i["column_names"] for i in inspector.get_indexes(name)
                   if i["name"] != damage.index_name(table)}
        assert indexes == {i.name: [c.name for c in i.columns] for i in table.indexes}, name
        foreign = {(f["constrained_columns"][0], f["referred_table"]) for f in inspector.get_foreign_keys(name)}
        assert foreign == {(f.parent.name, f.column.table.name) for f in table.foreign_keys}, name
    assert set(inspector.get_table_names()) == set(SQLModel.metadata.tables)
    assert sorted(store.MIGRATIONS) == list(range(1, store.SCHEMA_VERSION + 1))


def test_foreign_keys_are_enforced(sql_backend):
    insert = "INSERT INTO schedule (card_id, learner) VALUES ('bert-basics/no-such-card', 'me')"
    with sql_backend() as db, pytest.raises(StoreError, match="FOREIGN KEY constraint failed|violates foreign key"):
        db._run(lambda connection: connection.exec_driver_sql(insert), write=True)


def test_no_constraint_lists_the_schedulers_or_the_answer_kinds(sql_backend, cards):
    """A third scheduler or a new kind of answer needs no table rebuilt (schema version 7): the database takes
    any name; the code's registry and AnswerKind say which are valid. The grade's range is still checked."""
    with sql_backend() as db:
        db.sync(cards, now=MORNING)
        card = cards[0].id

        def write(grade: int):
            def work(connection):
                connection.exec_driver_sql(
                    "INSERT INTO scheduler (learner, name, switched_at) VALUES ('x', 'a-third-scheduler', "
                    "'2025-01-01 00:00:00') ON CONFLICT (learner) DO NOTHING")
                connection.execute(text(
                    "INSERT INTO review (card_id, reviewed_at, study_day, kind, grade, reps_before, ef100_before, "
                    "interval_before, lapses_before, reps_after, ef100_after, interval_after, lapses_after, learner) "
                    "VALUES (:card, '2025-01-01 00:00:00', '2025-01-01', 'a-new-kind', :grade, 0, 250, 0, 0, 0, 250, "
                    "0, 0, 'x')"), {"card": card, "grade": grade})
            db._run(work, write=True)

        write(3)
        assert db._run(lambda c: c.exec_driver_sql("SELECT name FROM scheduler WHERE learner = 'x'").scalar_one()) \
            == "a-third-scheduler"
        with pytest.raises(StoreError, match="CHECK constraint failed|violates check constraint"):
            write(6)


def test_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "newer.db"
    Store.open(str(path)).close()
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError) as caught:
        Store.open(str(path))
    assert str(caught.value) == (f"{path} was written by a newer bertdrill (schema version 99; this one knows up to "
                                 f"{store.SCHEMA_VERSION}); upgrade bertdrill to open it")


def test_a_file_that_is_not_a_database(tmp_path):
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(StoreError, match=r"notes.db is not a bertdrill database \(SQLite says: file is not a database\)"):
        Store.open(str(path))
    assert path.read_bytes().startswith(b"these are my notes")  # untouched


def test_another_programs_sqlite_database(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY)")
    with pytest.raises(StoreError, match="is an SQLite database but not a bertdrill one"):
        Store.open(str(path))


def test_a_folder_is_not_a_database(tmp_path):
    with pytest.raises(StoreError, match="is a folder, not a database file"):
        Store.open(str(tmp_path))


def test_read_only_uri_is_refused_at_open_not_at_the_first_answer(sqlite_db, tmp_path):
    path = tmp_path / "review.db"
    with pytest.raises(StoreError, match="is read-only; bertdrill writes every answer to it"):
        Store.open(f"sqlite:///file:{path}?mode=ro&uri=true")


def test_read_only_file(tmp_path):
    path = tmp_path / "locked-down.db"
    Store.open(str(path)).close()
    undo = make_read_only(path)
    if undo is None:
        pytest.skip("cannot make a file read-only here")
    try:
        with pytest.raises(StoreError, match="locked-down.db is read-only"):
            Store.open(str(path))
    finally:
        undo()


@contextmanager
def locked_by_another_program(path: Path) -> Iterator[None]:
    """A store at ``path`` that another program holds an exclusive lock on, for the ``with`` block."""
    Store.open(str(path)).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_locked_by_another_process_gives_up_with_a_clear_message(tmp_path):
    with locked_by_another_program(path := tmp_path / "busy.db"):
        began = time.monotonic()
        with pytest.raises(StoreError, match=r"busy.db is locked by another program \(waited 0.3 s\); close it"):
            Store.open(str(path), lock_timeout=0.3)
        assert 0.3 <= time.monotonic() - began < 3


def test_the_seconds_waited_and_a_columns_bounds_are_written_the_learners_way(tmp_path):
    """0,3 sn in Turkish, not 0.3: a measure in a message takes the language's decimal mark, like every number."""
    with locked_by_another_program(path := tmp_path / "busy.db"), i18n.speaking(catalogs.translation("tr"), "tr"):
        with pytest.raises(StoreError, match=r"\(0,3 sn beklendi\)"):
            Store.open(str(path), lock_timeout=0.3)
    retention = SchedulerRow.__table__.c.retention  # type: ignore[attr-defined]
    assert "0.5 to 0.999" in damage._expected(retention)
    with i18n.speaking(catalogs.translation("tr"), "tr"):
        assert "0,5 ile 0,999 arasında" in damage._expected(retention)


def test_a_short_lock_is_waited_out_and_never_seen(sqlite_db, cards, tmp_path):
    db = sqlite_db
    holder = sqlite3.connect(tmp_path / "review.db", isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    threading.Timer(0.3, lambda: holder.execute("COMMIT")).start()
    try:
        answer = review(db, cards[0].id, 5)  # waits for the other writer, then commits
    finally:
        time.sleep(0.35)
        holder.close()
    assert db.answers() == [answer]


def test_a_unit_is_one_transaction_whether_its_statements_go_through_sqlalchemy_or_the_driver(sqlite_db, tmp_path):
    """SQLite's units say BEGIN and COMMIT to the driver themselves; a statement sent through SQLAlchemy inside one
    joins the same transaction. Committed together, rolled back together (a failure midway, a commit refused), and
    the store's next unit starts clean on its kept connection."""
    db = sqlite_db
    outside = sqlite3.connect(tmp_path / "review.db")

    def both(marker: str) -> Callable[[Any], None]:
        def work(connection: Any) -> None:
            connection.connection.driver_connection.execute("INSERT INTO meta (key, value) VALUES (?, 'driver')",
                                                            (f"{marker}-driver",))
            connection.execute(text("INSERT INTO meta (key, value) VALUES (:key, 'sqlalchemy')"),
                               {"key": f"{marker}-sqlalchemy"})
        return work

    def markers() -> set[str]:
        return {key for (key,) in outside.execute("SELECT key FROM meta WHERE key LIKE 'unit-%'")}

    db._run(both("unit-kept"), write=True)
    assert markers() == {"unit-kept-driver", "unit-kept-sqlalchemy"}

    def failing(connection) -> None:
        both("unit-failed")(connection)
        raise RuntimeError("midway")

    with pytest.raises(RuntimeError, match="midway"):
        db._run(failing, write=True)

    def refused_at_commit(connection) -> None:  # a deferred foreign key is checked by COMMIT itself
        connection.connection.driver_connection.execute("PRAGMA defer_foreign_keys = ON")
        both("unit-refused")(connection)
        connection.connection.driver_connection.execute(
            "INSERT INTO schedule (learner, card_id) VALUES ('nobody', 'no/such-card')")

    with pytest.raises(StoreError, match="FOREIGN KEY"):
        db._run(refused_at_commit, write=True)
    assert markers() == {"unit-kept-driver", "unit-kept-sqlalchemy"}
    assert db._run(lambda connection: connection.connection.driver_connection.in_transaction)  # a read's own
    assert db._idle is not None and not db._idle.connection.driver_connection.in_transaction
    db._run(both("unit-after"), write=True)
    assert markers() == {"unit-kept-driver", "unit-kept-sqlalchemy", "unit-after-driver", "unit-after-sqlalchemy"}
    outside.close()


# --------------------------------------------------------------------------- schema versions


def copy_fixture(tmp_path) -> Path:
    target: Path = tmp_path / "store-v1.db"
    shutil.copy(FIXTURES / "store-v1.db", target)
    return target


def test_the_version_1_fixture_opens_with_its_history(tmp_path, cards):
    fixture = Store.open(str(copy_fixture(tmp_path)))
    assert fixture.migrate() == store.SCHEMA_VERSION  # migrated on open
    definition, embedding, acronym, training, ffn = ids(
        cards, "bert-definition", "embedding-params@bert-base", "bert-acronym", "pre-training", "ffn-share")
    assert fixture.state(definition).schedule == Schedule(3, 280, 17, date(2025, 1, 30), 0)
    assert fixture.state(embedding).schedule == Schedule(1, 218, 1, date(2025, 1, 8), 0)
    assert fixture.state(acronym).suspended
    assert fixture.state(training).buried_until == date(2025, 1, 14)
    assert fixture.state(ffn).removed
    log = fixture.answers()
    assert [(a.kind, a.grade) for a in fixture.answers(embedding)] == [("new", 2), ("redrill", 4), ("review", 4)]
    assert len(log) == 8 and log[0].reviewed_at == datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
    assert fixture.sync(cards).restored == 1  # ffn-share is back in the shipped lesson


def test_an_older_schema_is_migrated_in_order_keeping_the_data(tmp_path, monkeypatch, cards):
    """A pretend next version adds a column: opening the version 1 fixture runs every version up to it
    once, in order, in one transaction."""
    ran = []
    following = store.SCHEMA_VERSION + 1
    real = dict(store.MIGRATIONS)

    def recorded(version):
        def migrate(connection):
            ran.append(version)
            if version in real:
                real[version](connection)
            else:
                connection.exec_driver_sql("ALTER TABLE card ADD COLUMN note TEXT")
        return migrate

    monkeypatch.setattr(store.migrations, "SCHEMA_VERSION", following)
    for version in range(2, following + 1):
        monkeypatch.setitem(store.MIGRATIONS, version, recorded(version))
    path = copy_fixture(tmp_path)
    upgraded = Store.open(str(path))
    assert ran == list(range(2, following + 1))
    assert upgraded.meta()["schema_version"] == str(following) and f"migrated_to_{following}" in upgraded.meta()
    assert len(upgraded.answers()) == 8
    Store.open(str(path))
    assert ran == list(range(2, following + 1))  # not twice
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (following,)


def test_a_failed_migration_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    def broken(connection):
        connection.exec_driver_sql("ALTER TABLE card ADD COLUMN half_done TEXT")
        connection.exec_driver_sql("THIS IS NOT SQL")

    monkeypatch.setattr(store.migrations, "SCHEMA_VERSION", store.SCHEMA_VERSION + 1)
    monkeypatch.setitem(store.MIGRATIONS, store.SCHEMA_VERSION + 1, broken)
    path = copy_fixture(tmp_path)
    with pytest.raises(StoreError, match="syntax error"):
        Store.open(str(path))
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (1,)
        assert "half_done" not in [row[1] for row in connection.execute("PRAGMA table_info(card)")]


# --------------------------------------------------------------------------- sync


def test_sync_adds_then_finds_nothing_to_do(backend, cards):
    fresh = backend("fresh.db")
    assert fresh.sync(cards) == store.SyncReport(added=len(cards))
    assert fresh.sync(cards).unchanged
    assert fresh.state(cards[0].id).schedule == NEW


def test_unchanged_sync_writes_nothing(sqlite_db, cards, tmp_path):
    db = sqlite_db
    path = tmp_path / "review.db"
    before = path.stat().st_mtime_ns, (tmp_path / "review.db-wal").stat().st_size
    assert db.sync(cards).unchanged
    assert (path.stat().st_mtime_ns, (tmp_path / "review.db-wal").stat().st_size) == before


def test_edited_text_keeps_schedule_and_history(db, cards):
    answered = review(db, cards[0].id, 5)
    edited = [dataclasses.replace(cards[0], prompt={"en": "What is BERT, in one line?", "tr": "BERT nedir?"})]
    report = db.sync(edited + cards[1:])
    assert report == store.SyncReport(changed=1)
    assert db.state(cards[0].id).schedule == answered.after
    assert db.answers(cards[0].id) == [answered]


def test_removed_cards_are_kept_with_history_never_shown_and_restored(db, cards):
    gone = cards[0]
    review(db, gone.id, 4, day=DAY - timedelta(days=5))
    assert gone.id in db.due_ids(DAY)
    report = db.sync(cards[1:])
    assert report.removed == 1 and report.moved == len(cards) - 1  # the others moved up one place
    assert db.state(gone.id).removed
    assert gone.id not in db.due_ids(DAY) and gone.id not in db.new_ids(DAY, limit=100)
    assert len(db.answers(gone.id)) == 1
    assert db.sync(cards).restored == 1
    assert not db.state(gone.id).removed and gone.id in db.due_ids(DAY)


def test_sync_only_touches_the_lessons_it_is_given(db, cards):
    other = [dataclasses.replace(card, id=card.id.replace("bert-basics/", "other/"), lesson_id="other")
             for card in cards[:3]]
    assert db.sync(other).added == 3
    assert db.sync(cards).unchanged  # bert-basics is complete; "other" is not marked removed
    assert not db.state(other[0].id).removed


# --------------------------------------------------------------------------- answers and undo


def test_answer_logs_before_and_after(db, cards):
    card_id = cards[0].id
    first = db.answer(card_id, grade=5, kind="new", reviewed_at=MORNING, study_day=DAY,
                      reschedule=lambda s: sm2.review(s, 5, today=DAY), typed="BERT", duration_ms=4321)
    assert first.before == NEW
    assert first.after == Schedule(1, 260, 1, DAY + timedelta(days=1), 0)
    assert db.state(card_id).schedule == first.after
    assert (first.kind, first.grade, first.typed, first.duration_ms, first.study_day) == ("new", 5, "BERT", 4321, DAY)
    assert first.reviewed_at == MORNING
    again = db.answer(card_id, grade=2, kind="redrill", reviewed_at=MORNING, study_day=DAY)
    assert again.before == again.after == first.after  # a re-drill leaves the schedule alone


def test_reviewed_at_is_stored_in_utc(db, cards):
    istanbul = timezone(timedelta(hours=3))
    answer = db.answer(cards[0].id, grade=4, kind="review", reviewed_at=datetime(2025, 3, 3, 12, 0, tzinfo=istanbul),
                       study_day=DAY)
    assert answer.reviewed_at == datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
    assert db.answers()[0].reviewed_at == datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def test_typed_answers_are_capped(db, cards):
    answer = db.answer(cards[0].id, grade=1, kind="review", reviewed_at=MORNING, study_day=DAY, typed="x" * 100_000)
    assert len(db.answers()[0].typed) == store.TYPED_MAX == len(answer.typed)


@pytest.mark.parametrize("grade", [-1, 6, 3.0, "4", True, None])
def test_bad_grades_never_reach_the_log(db, cards, grade):
    with pytest.raises(ValueError):
        db.answer(cards[0].id, grade=grade, kind="review", reviewed_at=MORNING, study_day=DAY)
    assert db.answers() == []


def test_unknown_card_and_kind(db):
    with pytest.raises(StoreError, match="no card 'bert-basics/nope'"):
        db.answer("bert-basics/nope", grade=4, kind="review", reviewed_at=MORNING, study_day=DAY)
    with pytest.raises(ValueError, match="kind must be one of"):
        db.answer("bert-basics/nope", grade=4, kind="quiz", reviewed_at=MORNING, study_day=DAY)


def test_undo_restores_exactly_and_is_repeatable(db, cards):
    card_id = cards[0].id
    states = [db.state(card_id)]
    answers = []
    for offset, grade in enumerate([5, 5, 2]):
        answers.append(review(db, card_id, grade, day=DAY + timedelta(days=offset * 7)))
        states.append(db.state(card_id))
    assert states[-1].schedule.lapses == 1
    for answer, state in zip(reversed(answers), reversed(states[:-1])):
        assert db.undo(answer.id) == state
    assert db.answers() == []


def test_only_the_latest_answer_to_a_card_can_be_undone(db, cards):
    first = review(db, cards[0].id, 5)
    review(db, cards[0].id, 4, day=DAY + timedelta(days=1))
    with pytest.raises(StoreError, match="answered again since .* only its latest answer can be undone"):
        db.undo(first.id)
    with pytest.raises(StoreError, match="not in the log"):
        db.undo(12345)


def test_leech_flag_follows_lapses(db, cards):
    card_id = cards[0].id
    for offset in range(store.LEECH_LAPSES):
        review(db, card_id, 4, day=DAY + timedelta(days=2 * offset))
        last = review(db, card_id, 1, day=DAY + timedelta(days=2 * offset + 1))
    assert db.state(card_id).leech and db.state(card_id).schedule.lapses == store.LEECH_LAPSES
    assert [s.card_id for s in db.leeches()] == [card_id]
    db.undo(last.id)
    assert not db.state(card_id).leech


# --------------------------------------------------------------------------- the queue


def test_due_cards_most_overdue_first_skipping_what_is_set_aside(db, cards):
    a, b, c, d, e = (card.id for card in cards[:5])
    for card_id, days_ago in ((b, 4), (a, 4), (c, 9), (d, 30), (e, 7)):
        review(db, card_id, 4, day=DAY - timedelta(days=days_ago))  # due the next day
    assert a > b  # by id b would come first; a and b are due the same day, so lesson order decides
    assert db.due_ids(DAY) == [d, c, e, a, b]
    assert db.due_ids(DAY, limit=2) == [d, c]
    db.set_flags(d, suspended=True)
    db.set_flags(c, buried_until=DAY + timedelta(days=1))
    assert db.due_ids(DAY) == [e, a, b]
    assert db.due_ids(DAY + timedelta(days=1)) == [c, e, a, b]  # the bury is over
    assert db.due_ids(DAY, lessons=["other"]) == []


def test_new_cards_in_lesson_order_without_practice(db, cards):
    shown = [card.id for card in cards if card.kind != "practice"]
    assert db.new_ids(DAY, limit=100) == shown
    assert db.new_ids(DAY, limit=3) == shown[:3]
    assert db.new_ids(DAY, limit=0) == []
    review(db, shown[1], 4)
    assert db.new_ids(DAY, limit=3) == [shown[0], shown[2], shown[3]]


def test_redrill_ids_are_todays_cards_last_graded_below_4(db, cards):
    a, b, c, d = (card.id for card in cards[:4])
    review(db, a, 2)
    review(db, b, 3)
    db.answer(b, grade=4, kind="redrill", reviewed_at=MORNING, study_day=DAY)
    review(db, c, 5)
    review(db, d, 3)  # passed, but below 4: drilled again today
    assert db.redrill_ids(DAY) == [a, d]
    assert db.redrill_ids(DAY + timedelta(days=1)) == []


def test_day_counts(db, cards):
    review(db, cards[0].id, 2, kind="new")
    db.answer(cards[0].id, grade=4, kind="redrill", reviewed_at=MORNING, study_day=DAY)
    review(db, cards[1].id, 4, kind="review")
    db.answer(cards[2].id, grade=4, kind="practice", reviewed_at=MORNING, study_day=DAY)
    counts = db.day_counts(DAY)
    assert counts == store.DayCounts(new=1, review=1, redrill=1, practice=1)
    assert counts.first_answers == 2
    assert db.day_counts(DAY - timedelta(days=1)) == store.DayCounts()


def test_day_counts_per_lesson(db, cards, lesson_text):
    """Daily limits are per lesson: answers to another lesson's cards leave this one's room alone."""
    from bertdrill.core.cards import compile_lesson
    from bertdrill.core.lesson import parse

    other = compile_lesson(parse(lesson_text.replace('id = "bert-basics"', 'id = "other"'), "other.toml"))
    db.sync(other, now=MORNING)
    review(db, other[0].id, 4, kind="new")
    review(db, cards[0].id, 4, kind="new")
    review(db, cards[1].id, 4, kind="new")
    assert db.day_counts(DAY, lessons=["bert-basics"]) == store.DayCounts(new=2)
    assert db.day_counts(DAY, lessons=["other"]) == store.DayCounts(new=1)
    assert db.day_counts(DAY) == store.DayCounts(new=3)


# --------------------------------------------------------------------------- overview, for status and stats


def test_status_streaks_and_forecast(db, cards):
    for offset in (10, 3, 2, 1):
        review(db, cards[offset].id, 4, day=DAY - timedelta(days=offset))
    status = db.status(DAY)
    assert status.due_now == 4 and status.learned == 4
    assert status.new_cards == sum(card.kind != "practice" for card in cards) - 4
    assert status.next_due is None and status.streak == 3
    assert db.streaks(DAY) == (3, 3)
    assert db.streaks(DAY + timedelta(days=2)) == (0, 3)
    review(db, cards[3].id, 5)
    assert db.status(DAY).next_due == DAY + timedelta(days=6)
    assert db.forecast(DAY, 3) == [(DAY, 3), (DAY + timedelta(days=1), 0), (DAY + timedelta(days=2), 0)]
    assert db.forecast(DAY, 7)[6] == (DAY + timedelta(days=6), 1)
    db.set_flags(cards[1].id, buried_until=DAY + timedelta(days=2))  # due, but hidden until the day after tomorrow
    assert db.forecast(DAY, 3) == [(DAY, 2), (DAY + timedelta(days=1), 0), (DAY + timedelta(days=2), 1)]
    assert db.reviews_per_day(DAY - timedelta(days=3), DAY) == {
        DAY - timedelta(days=3): 1, DAY - timedelta(days=2): 1, DAY - timedelta(days=1): 1, DAY: 1}


@pytest.mark.parametrize("after", [1, 2, 3])
def test_the_forecast_reads_one_state_while_another_session_writes(sql_backend, cards, after):
    """Two reviews of one lesson at once (tests/test_concurrency.py) failed with a KeyError: the forecast counted
    the schedules by due day, then, in a statement of its own, took off the cards review does not show on their
    day; a card the other session answered and suspended in between was taken off a day never counted. Whenever
    the other session writes (after the forecast's first, second or third statement), the forecast is one state
    of the schedules, before the writes or after them, never a mix of the two."""
    reviewed = [card for card in cards if card.kind.reviewed]
    with sql_backend() as store, sql_backend() as other:
        store.sync(cards, now=MORNING)
        for card in reviewed[:3]:
            review(store, card.id, 4, day=DAY - timedelta(days=5))
        before = store.forecast(DAY, 30)
        statements = 0

        def meanwhile(*_args: object) -> None:
            nonlocal statements
            statements += 1
            if statements == after:  # a new card answered (due tomorrow, a day with no card yet) and suspended
                review(other, reviewed[5].id, 4)
                other.set_flags(reviewed[5].id, suspended=True)
                review(other, reviewed[6].id, 4)
                other.set_flags(reviewed[6].id, buried_until=DAY + timedelta(days=3))

        event.listen(store.engine, "after_cursor_execute", meanwhile)
        try:
            during = store.forecast(DAY, 30)
        finally:
            event.remove(store.engine, "after_cursor_execute", meanwhile)
        written = store.forecast(DAY, 30)
        assert statements >= after and written != before
        assert during in (before, written)
        assert dict(written)[DAY + timedelta(days=3)] == 1 + dict(before)[DAY + timedelta(days=3)]


def test_status_counts_only_the_cards_a_review_shows(db, cards):
    """status counts over the schedules alone, less the cards left out: a removed card, a practice card and
    another lesson's cards are in no count; a suspended or buried card is learned, or new, but never due or
    new today; every count agrees with the queue a review builds."""
    other = [dataclasses.replace(card, id=card.id.replace("bert-basics/", "other/"), lesson_id="other")
             for card in cards if card.kind.reviewed][:4]
    db.sync(other, now=MORNING)
    reviewed = [card for card in cards if card.kind.reviewed]
    due, gone, suspended, buried, new_buried = (card.id for card in reviewed[:5])
    for card_id in (due, gone, suspended, buried, other[0].id, other[1].id):
        review(db, card_id, 4, day=DAY - timedelta(days=5))
    db.sync([card for card in cards if card.id != gone], now=MORNING)  # removed, its history kept
    db.set_flags(suspended, suspended=True)
    db.set_flags(buried, buried_until=DAY + timedelta(days=1))
    db.set_flags(new_buried, buried_until=DAY + timedelta(days=1))
    practice = [card.id for card in cards if not card.kind.reviewed]
    assert practice  # the shipped lesson has a practice card: it is never counted
    mine = ["bert-basics"]
    status = db.status(DAY, lessons=mine)
    assert (status.due_now, status.learned) == (1, 3) == (len(db.due_ids(DAY, lessons=mine)), 3)
    assert status.new_cards == len(reviewed) - 5 == len(db.new_ids(DAY, limit=1000, lessons=mine))
    everything = db.status(DAY)
    assert (everything.due_now, everything.learned, everything.new_cards) == (3, 5, len(reviewed) - 5 + 2)


def test_a_day_with_nothing_due_keeps_the_streak(db, cards):
    """issue 21: the streak broke on a day with nothing due. A run counts the days studied; a day between them
    breaks it only when a card was due on it and waited."""
    card = cards[0].id
    review(db, card, 5, day=DAY - timedelta(days=10), kind="new")  # due the next day
    review(db, card, 5, day=DAY - timedelta(days=9))  # due in 6 days: nothing due from day -8 to day -4
    review(db, card, 5, day=DAY - timedelta(days=3))  # due in 16 days
    assert db.streaks(DAY) == (3, 3)  # days -2 and -1 had nothing due either
    assert db.status(DAY).streak == 3
    review(db, cards[1].id, 5, day=DAY - timedelta(days=3), kind="new")  # due on day -2, and never answered
    assert db.streaks(DAY) == (0, 3)
    assert db.streaks(DAY - timedelta(days=2)) == (3, 3)  # that day itself can still be studied
    late = cards[2].id
    review(db, late, 5, day=DAY - timedelta(days=30), kind="new")  # due on day -29, answered on day -27
    review(db, late, 5, day=DAY - timedelta(days=27))
    db.set_flags(late, suspended=True)  # a suspended card waits for nothing: only its late answer counts
    assert db.streaks(DAY) == (0, 4)  # day -30 alone (days -29 and -28 owed it); then days -27, -10, -9, -3


def test_a_card_moved_later_owes_no_day_before_its_new_due_day(db, cards):
    """A late answer owes from the due day its card had before it: a card due on day -8, moved on day -9 to
    day -3 and answered then, left days -8 to -4 free (the previous answer's due day would have owed them)."""
    from bertdrill.core.scheduling.actions import CardAction

    card = cards[0].id
    review(db, card, 5, day=DAY - timedelta(days=10), kind="new")  # due on day -9
    review(db, card, 5, day=DAY - timedelta(days=9))  # due in 6 days: day -3
    db.manage(card, CardAction.RESCHEDULE, at=MORNING - timedelta(days=9), study_day=DAY - timedelta(days=9),
              due=DAY - timedelta(days=1))
    review(db, card, 5, day=DAY - timedelta(days=1))  # on its new due day: nothing was owed
    assert db.streaks(DAY) == (3, 3)
    late = cards[1].id
    review(db, late, 5, day=DAY - timedelta(days=9), kind="new")  # due on day -8, answered on day -1: owed
    review(db, late, 5, day=DAY - timedelta(days=1))
    assert db.streaks(DAY) == (1, 2)  # days -10 and -9; then day -1 alone


def test_retention_states_and_ease(db, cards):
    young, mature = cards[0].id, cards[1].id
    review(db, young, 5, day=DAY - timedelta(days=40))
    review(db, young, 2, day=DAY - timedelta(days=39))
    for day, grade in ((0, 5), (1, 5), (7, 5), (24, 5), (80, 3)):  # intervals 1, 6, 17, 48: mature at the last
        review(db, mature, grade, day=DAY - timedelta(days=200) + timedelta(days=day))
    retention = db.retention()
    assert (retention.young_passed, retention.young_total, retention.mature_passed, retention.mature_total) == (5, 6, 1, 1)
    assert retention.young == 5 / 6 and retention.mature == 1.0
    assert db.retention(since=DAY - timedelta(days=100)) == store.Retention(1, 2, 0, 0)
    db.set_flags(cards[2].id, suspended=True)
    db.set_flags(cards[3].id, buried_until=DAY + timedelta(days=1))
    states = db.card_states(DAY)
    assert states["learning"] == 1 and states["mature"] == 1 and states["suspended"] == 1
    reviewed = [card for card in cards if card.kind.reviewed]  # a practice card is checked, never reviewed
    assert states["new"] == len(reviewed) - 3  # the buried card counts by its schedule: new
    assert list(states) == ["new", "learning", "young", "mature", "suspended", "removed"]
    assert sum(states.values()) == len(reviewed) < len(cards)
    assert db.average_ef() == pytest.approx((db.state(young).schedule.ef100 + db.state(mature).schedule.ef100) / 200)
    assert [s.card_id for s in db.hardest(1)] == [young]


def test_the_hardest_cards_come_from_the_floor_first_then_from_above_it(db, cards):
    """The cards at the EF floor (1.30) are the hardest, more lapses first, then by id; those above it follow only
    when the floor holds too few; a removed card is never one of them, however low its EF."""
    from bertdrill.core.scheduling.state import EF_FLOOR

    def scheduled(card_id, ef100, lapses):
        db.answer(card_id, grade=1, kind="review", reviewed_at=MORNING, study_day=DAY,
                  reschedule=lambda schedule: Schedule(2, ef100, 1, DAY + timedelta(days=1), lapses))

    reviewed = sorted(card.id for card in cards if card.kind.reviewed)
    low, lower, tied, above, far, gone = reviewed[:6]
    for card_id, ef100, lapses in ((low, EF_FLOOR, 1), (lower, EF_FLOOR, 3), (tied, EF_FLOOR, 1),
                                   (above, EF_FLOOR + 1, 5), (far, 200, 0), (gone, EF_FLOOR, 7)):
        scheduled(card_id, ef100, lapses)
    db.sync([card for card in cards if card.id != gone], now=MORNING)  # removed, its schedule kept
    order = [lower, low, tied, above, far]  # EF, then more lapses first, then by id
    for limit in (1, 2, 3, 4, 5, 10):
        assert [state.card_id for state in db.hardest(limit)] == order[:limit], limit
    assert [state.schedule.ef100 for state in db.hardest(5)] == [EF_FLOOR] * 3 + [EF_FLOOR + 1, 200]


@pytest.mark.parametrize("after", [1, 2, 3])
def test_the_hardest_cards_are_one_state_while_another_session_writes(sql_backend, cards, after):
    """The floor's cards and those above it are read in one unit: a card the other session moves off the floor
    between the two statements is listed once, from the state before the write or after it, never from both."""
    from bertdrill.core.scheduling.state import EF_FLOOR

    def scheduled(store, card_id, ef100):
        store.answer(card_id, grade=1, kind="review", reviewed_at=MORNING, study_day=DAY,
                     reschedule=lambda schedule: Schedule(2, ef100, 1, DAY + timedelta(days=1), 1))

    low, above, far = sorted(card.id for card in cards if card.kind.reviewed)[:3]
    with sql_backend() as store, sql_backend() as other:
        store.sync(cards, now=MORNING)
        for card_id, ef100 in ((low, EF_FLOOR), (above, EF_FLOOR + 1), (far, 200)):
            scheduled(store, card_id, ef100)
        before = [state.card_id for state in store.hardest(3)]
        statements = 0

        def meanwhile(*_args: object) -> None:
            nonlocal statements
            statements += 1
            if statements == after:
                scheduled(other, low, 150)  # off the floor, between the two others

        event.listen(store.engine, "after_cursor_execute", meanwhile)
        try:
            during = [state.card_id for state in store.hardest(3)]
        finally:
            event.remove(store.engine, "after_cursor_execute", meanwhile)
        written = [state.card_id for state in store.hardest(3)]
        assert statements >= after and (before, written) == ([low, above, far], [above, low, far])
        assert during in (before, written)


def test_the_card_figures_are_the_states_the_average_ef_and_the_leeches(db, cards):
    """card_figures counts the three together: the figures card_states, average_ef and leeches give, with no leech
    and with some, a removed leech left out of all three, a practice card with a schedule out of the states only."""
    def apart(lessons=None):
        return CardFigures(db.card_states(DAY, lessons=lessons), db.average_ef(lessons=lessons),
                           db.leeches(lessons=lessons))

    def lapsed(card_id, lapses):
        db.answer(card_id, grade=1, kind="review", reviewed_at=MORNING, study_day=DAY,
                  reschedule=lambda schedule: Schedule(2, 150 + lapses, 1, DAY + timedelta(days=1), lapses))

    for lessons in (None, ["bert-basics"], ["other"]):
        assert db.card_figures(DAY, lessons=lessons) == apart(lessons)
    assert db.card_figures(DAY).leeches == [] and db.card_figures(DAY).average_ef is None
    reviewed = [card for card in cards if card.kind.reviewed]
    [practice] = [card.id for card in cards if not card.kind.reviewed]
    leech, gone, young = (card.id for card in reviewed[:3])
    for card_id, lapses in ((leech, LEECH_LAPSES), (gone, LEECH_LAPSES + 2), (young, 1), (practice, LEECH_LAPSES + 1)):
        lapsed(card_id, lapses)
    db.sync([card for card in cards if card.id != gone], now=MORNING)  # removed, its history kept
    figures = db.card_figures(DAY)
    assert [state.card_id for state in figures.leeches] == [practice, leech]
    assert figures.states["young"] == 2 and figures.states["removed"] == 1  # the practice card is in no state
    for lessons in (None, ["bert-basics"], ["other"]):
        assert db.card_figures(DAY, lessons=lessons) == apart(lessons)


def test_every_report_honours_the_lesson_filter(db, cards, lesson_text):
    """Answers to another lesson's cards change no figure of this lesson's (status's streak once did)."""
    from bertdrill.core.cards import compile_lesson
    from bertdrill.core.lesson import parse

    other = compile_lesson(parse(lesson_text.replace('id = "bert-basics"', 'id = "other"'), "other.toml"))
    db.sync(other, now=MORNING)
    for offset in (9, 4, 3):
        review(db, cards[offset].id, 4, day=DAY - timedelta(days=offset))
    mine = ["bert-basics"]

    def figures():
        return (db.status(DAY, lessons=mine), db.streaks(DAY, lessons=mine), db.forecast(DAY, 7, lessons=mine),
                db.reviews_per_day(DAY - timedelta(days=30), DAY, lessons=mine), db.retention(lessons=mine),
                db.card_states(DAY, lessons=mine), db.answer_count(lessons=mine), db.average_ef(lessons=mine),
                db.leeches(lessons=mine), db.hardest(lessons=mine), db.day_counts(DAY, lessons=mine),
                db.due_count(DAY, lessons=mine), db.due_ids(DAY, lessons=mine), db.new_ids(DAY, lessons=mine),
                db.redrill_ids(DAY, lessons=mine))

    before = figures()
    assert before[0].streak == 0  # nothing answered today or yesterday in this lesson
    for offset in (2, 1, 0):  # a streak of three in the other lesson
        review(db, other[offset].id, 2, day=DAY - timedelta(days=offset))
    db.set_flags(other[5].id, suspended=True)
    assert db.status(DAY).streak == 5  # all lessons: days 4 to 0
    assert figures() == before


def test_only_the_first_answer_of_a_study_day_reschedules(db, cards):
    """once_per_day: a second answer that day is a re-drill; a re-drill answered after the rollover is the new
    day's review; a practice check stays a practice check."""
    card_id = cards[0].id

    def answer(grade, kind, day):
        return db.answer(card_id, grade=grade, kind=kind, reviewed_at=datetime.combine(day, MORNING.timetz()),
                         study_day=day, reschedule=lambda s: sm2.review(s, grade, today=day), once_per_day=True)

    first = answer(2, "new", DAY)
    again = answer(5, "review", DAY)
    assert (first.kind, again.kind) == ("new", "redrill") and again.after == again.before == first.after
    assert answer(4, "practice", DAY).kind == "practice"
    tomorrow = answer(4, "redrill", DAY + timedelta(days=1))
    assert tomorrow.kind == "review" and tomorrow.after == sm2.review(first.after, 4, today=DAY + timedelta(days=1))


def test_fitted_parameter_sets_are_numbered_kept_and_chosen(db):
    """A set numbered 0 is stored as the learner's next one, in the switch's transaction; every set is kept,
    newest first, and the stored choice gives back every float exactly."""
    from bertdrill.core.scheduling.fitted import FittedFSRS, default_parameters
    from bertdrill.ports import FittedSet, SchedulerChoice

    assert db.fitted_sets() == []
    first = tuple(value * 1.1 for value in default_parameters())  # floats that need all 64 bits
    second = tuple(value * 0.9 for value in default_parameters())
    fitted_at = datetime(2025, 3, 4, 7, 30, tzinfo=UTC)
    for parameters, reviews in ((first, 120), (second, 300)):
        switch = db.switch_scheduler(SchedulerChoice(SchedulerName.FSRS, 0.9, FittedSet(0, parameters, reviews, fitted_at)),
                                     FittedFSRS(parameters))
        assert switch.choice == db.scheduler_choice()
    assert db.fitted_sets() == [FittedSet(2, second, 300, fitted_at), FittedSet(1, first, 120, fitted_at)]
    assert db.scheduler_choice() == SchedulerChoice(SchedulerName.FSRS, 0.9, FittedSet(2, second, 300, fitted_at))
    again = db.switch_scheduler(SchedulerChoice(SchedulerName.FSRS, 0.8, db.fitted_sets()[1]), FittedFSRS(first, 0.8))
    assert again.choice == SchedulerChoice(SchedulerName.FSRS, 0.8, FittedSet(1, first, 120, fitted_at))
    assert len(db.fitted_sets()) == 2  # choosing a stored set stores nothing new


def test_answered_today_finds_the_cards_answers_through_its_index(sqlite_db, cards):
    """An answer asks whether its card was answered on the study day: through the card's index (its few
    answers), not the day's (every answer of the day, thousands on a big day), whatever the planner knows."""
    from bertdrill.adapters.store import reviews

    statement = reviews._ANSWERED_ON.compile(sqlite_db.engine)
    values = statement.construct_params({"learner": "me", "card": cards[0].id, "day": DAY.isoformat()})
    with sqlite_db.engine.connect() as connection:
        plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}",
                                          tuple(values[name] for name in statement.positiontup or ())).all()
    assert "ix_review_card" in str(plan) and "ix_review_day" not in str(plan)
    review(sqlite_db, cards[0].id, 4)
    assert sqlite_db._run(lambda connection: reviews._answered_on(connection, cards[0].id, DAY))
    assert not sqlite_db._run(lambda connection: reviews._answered_on(connection, cards[0].id, DAY + timedelta(1)))


def test_a_days_answers_are_found_through_the_day_index(sqlite_db, cards):
    """status's counts of the day and review's re-drills read the day's answers through ix_review_day: since
    version 14 made ix_review_card cover kind and grade, SQLite's planner took it for them, covering, and walked
    every answer the learner ever gave (90-130 ms for 1M answers) for a day's few."""
    from sqlalchemy import event

    plans: list[str] = []

    def explain(connection, cursor, statement, parameters, context, executemany):
        if "FROM review" in statement:
            plans.append(str(cursor.connection.execute(f"EXPLAIN QUERY PLAN {statement}", parameters).fetchall()))

    review(sqlite_db, cards[0].id, 4, kind="new")
    review(sqlite_db, cards[1].id, 1, kind="new")
    review(sqlite_db, cards[2].id, 1, day=DAY - timedelta(days=1), kind="new")
    event.listen(sqlite_db.engine, "before_cursor_execute", explain)
    try:
        counts = sqlite_db.day_counts(DAY)
        redrills = sqlite_db.redrill_ids(DAY)
        mine = sqlite_db.day_counts(DAY, lessons=["bert-basics"])
    finally:
        event.remove(sqlite_db.engine, "before_cursor_execute", explain)
    assert counts == mine == store.DayCounts(new=2) and redrills == [cards[1].id]
    assert len(plans) == 3 and all("ix_review_day" in plan and "ix_review_card (learner=?)" not in plan
                                   for plan in plans), plans


# --------------------------------------------------------------------------- card actions (issue 21)


def test_card_actions_are_logged_and_undone(db, cards):
    """bertdrill cards: suspend, unsuspend, forget, reset and reschedule each change the card in one transaction
    and are logged with its state before and after; undo puts the latest back, and refuses once the card moved."""
    from bertdrill.core.scheduling.actions import CardAction

    card = cards[0].id
    for offset in (9, 8):
        review(db, card, 5, day=DAY - timedelta(days=offset), kind="new" if offset == 9 else "review")
    learned = db.state(card).schedule
    suspended = db.manage(card, CardAction.SUSPEND, at=MORNING, study_day=DAY)
    assert (suspended.action, suspended.suspended_before, suspended.suspended_after) == ("suspend", False, True)
    assert db.state(card).suspended and card not in db.due_ids(DAY)
    db.manage(card, CardAction.UNSUSPEND, at=MORNING, study_day=DAY)
    assert not db.state(card).suspended and db.state(card).schedule == learned  # back with its schedule
    forgotten = db.manage(card, CardAction.FORGET, at=MORNING, study_day=DAY)
    assert forgotten.before == learned and db.state(card).schedule.is_new and card in db.new_ids(DAY, limit=100)
    db.undo_action()
    assert db.state(card).schedule == learned
    moved = db.manage(card, CardAction.RESCHEDULE, at=MORNING, study_day=DAY, due=DAY + timedelta(days=3))
    assert moved.after == dataclasses.replace(learned, due=DAY + timedelta(days=3))
    assert db.status(DAY).next_due == DAY + timedelta(days=3)
    assert [done.action for done in db.actions(card)] == ["suspend", "unsuspend", "reschedule"]
    review(db, card, 4, day=DAY + timedelta(days=3))  # answered since: the reschedule stays
    with pytest.raises(StoreError, match="has changed since its reschedule"):
        db.undo_action()
    assert len(db.actions()) == 3 and len(db.answers(card)) == 3


def test_reset_clears_a_leech_and_forget_keeps_it(db, cards):
    from bertdrill.core.scheduling.actions import CardAction

    leech, other = cards[0].id, cards[1].id
    for card_id in (leech, other):
        review(db, card_id, 5, day=DAY - timedelta(days=30), kind="new")
        for offset in range(29, 21, -1):  # failed eight days: eight lapses
            review(db, card_id, 1, day=DAY - timedelta(days=offset))
        db.set_flags(card_id, suspended=True)  # as a review suspends a leech
    assert db.state(leech).leech and db.state(leech).schedule.lapses == 8
    db.manage(leech, CardAction.RESET, at=MORNING, study_day=DAY)
    state = db.state(leech)
    assert (state.schedule, state.suspended, state.leech) == (NEW, False, False)
    db.manage(other, CardAction.FORGET, at=MORNING, study_day=DAY)
    state = db.state(other)
    assert state.schedule.is_new and state.schedule.lapses == 8 and state.leech and state.suspended
    assert [s.card_id for s in db.leeches()] == [other]
    with pytest.raises(ValueError, match="before today"):
        db.manage(other, CardAction.RESCHEDULE, at=MORNING, study_day=DAY, due=DAY - timedelta(days=1))
    assert len(db.actions()) == 2  # the refused one logged nothing


def test_a_cram_answer_never_schedules_nor_counts_as_the_days_answer(db, cards):
    """bertdrill review --cram: logged as cram, schedule kept; the day's review after it still schedules (it is
    the day's first answer), no re-drill is owed for a failed cram, and a replay leaves cram answers out."""
    card = cards[0].id
    review(db, card, 5, day=DAY - timedelta(days=1), kind="new")
    learned = db.state(card).schedule
    crammed = db.answer(card, grade=1, kind="cram", reviewed_at=MORNING, study_day=DAY, once_per_day=True,
                        reschedule=lambda s: sm2.review(s, 1, today=DAY))
    assert (crammed.kind, crammed.after) == ("cram", learned) and db.state(card).schedule == learned
    assert db.redrill_ids(DAY) == [] and db.day_counts(DAY) == store.DayCounts(cram=1)
    assert db.answer_times().durations.keys() == {("new", 5)}
    logged = db.answer(card, grade=5, kind="review", reviewed_at=MORNING, study_day=DAY, once_per_day=True,
                       reschedule=lambda s: sm2.review(s, 5, today=DAY))
    assert logged.kind == "review" and logged.after.interval == 6
    logs: list[CardLog] = []
    db.card_logs(logs.append)
    assert logs == [[(DAY - timedelta(days=1), 5), (DAY, 5)]]
    from bertdrill.ports import SchedulerChoice

    switched = db.switch_scheduler(SchedulerChoice(), sm2.SM2())
    assert switched.answers == 2 and db.state(card).schedule == logged.after


def test_an_answer_sent_again_with_its_request_id_is_logged_once(db, cards):
    """The class server's client makes an id per answer and sends it again when the reply was lost: the second
    send returns the first answer as logged, and neither the log nor the schedule moves (all three stores)."""
    first, other = ids(cards, "embedding-params@bert-base", "bert-acronym")

    def send(card_id, grade, request):
        return db.answer(card_id, grade=grade, kind="review", reviewed_at=MORNING, study_day=DAY,
                         reschedule=lambda s: sm2.review(s, grade, today=DAY), once_per_day=True,
                         request=request)

    sent = send(first, 4, "req-1")
    scheduled = db.state(first).schedule
    again = send(first, 2, "req-1")  # a replay, even a forged one with another grade, logs nothing
    assert again == sent and db.state(first).schedule == scheduled
    assert [answer.id for answer in db.answers()] == [sent.id]
    assert send(other, 4, "req-2").id != sent.id and send(first, 5, None).kind == "redrill"
    assert len(db.answers()) == 3  # answers without an id are never taken for one another


def test_the_current_streak_status_shows_is_the_one_streaks_counts(db, cards):
    """status counts its streak reading the log only as far back as the current run (_current_streak):
    on logs with free and owed days between study days, early and late answers, it agrees with streaks(),
    which reads every owed day, on every day from the first answer to a week after the last."""
    import random

    chance = random.Random(7)
    reviewed = [card.id for card in cards if card.kind.reviewed][:6]
    for offset in sorted(chance.sample(range(2, 60), 24), reverse=True):
        review(db, chance.choice(reviewed), chance.choice((2, 4, 5)), day=DAY - timedelta(days=offset))
    for day in (DAY - timedelta(days=offset) for offset in range(60, -8, -1)):
        assert db.status(day).streak == db.streaks(day)[0], day
