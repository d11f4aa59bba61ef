"""A class on PostgreSQL: each learner's role reads and writes only its own rows; the teacher reads all."""

from __future__ import annotations

from datetime import UTC, date, datetime

import psycopg
import pytest
from postgres import class_store

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import Store
from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.state import NEW

DAY = date(2025, 3, 3)
MORNING = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def cards():
    return all_cards(load_lessons())


def answer(store, card_id, grade, day=DAY):
    return store.answer(card_id, grade=grade, kind="new", reviewed_at=MORNING, study_day=day,
                        reschedule=lambda s: sm2.review(s, grade, today=day), once_per_day=True)


@pytest.fixture
def classroom(postgres, cards):
    """A class with two learners who have each answered the first card; yields (postgres, ayse, bora)."""
    ayse, bora = postgres.role("ayse"), postgres.role("bora")
    with class_store(postgres.url) as teacher:
        group = teacher.class_init(cards)
        assert group == f"{postgres.database}_learners"
        assert teacher.add_learner(ayse, "secret-1")[0] is True
        created, url = teacher.add_learner(bora, "secret-2")
        assert created is True and url == postgres.url_as(bora).replace(f"{bora}@", f"{bora}:secret-2@")
        assert teacher.add_learner(bora, "secret-2")[0] is False  # already there: only joins the group
    for learner, grade in ((ayse, 5), (bora, 2)):
        with Store.open(postgres.url_as(learner)) as own:
            assert own.learner == learner  # on PostgreSQL the learner is the role, by default
            own.sync(cards)
            answer(own, cards[0].id, grade)
    return postgres, ayse, bora


def test_a_learner_can_neither_read_nor_write_another_learners_rows(classroom, cards):
    postgres, ayse, bora = classroom
    card = cards[0].id
    insert_review = ("INSERT INTO review (card_id, reviewed_at, study_day, kind, grade, reps_before, ef100_before, "
                     "interval_before, lapses_before, reps_after, ef100_after, interval_after, lapses_after, learner) "
                     "VALUES (%s, now(), current_date, 'new', 4, 0, 250, 0, 0, 1, 250, 1, 0, %s)")
    with postgres.connect(ayse) as connection:
        # reading: only her own rows, whatever the query asks for
        assert connection.execute("SELECT DISTINCT learner FROM schedule").fetchall() == [(ayse,)]
        assert connection.execute("SELECT learner, grade FROM review").fetchall() == [(ayse, 5)]
        assert connection.execute("SELECT count(*) FROM review WHERE learner = %s", (bora,)).fetchone() == (0,)
        # changing: bora's rows are not there to update or delete
        assert connection.execute("UPDATE schedule SET ef100 = 130 WHERE learner = %s", (bora,)).rowcount == 0
        assert connection.execute("DELETE FROM review WHERE learner = %s", (bora,)).rowcount == 0
        # writing: a row in bora's name is refused, and so is handing her own row to him
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            connection.execute(insert_review, (card, bora))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            connection.execute("UPDATE schedule SET learner = %s WHERE card_id = %s", (bora, card))
        # the class's lessons: read, never written
        assert connection.execute("SELECT count(*) FROM card").fetchone() == (len(cards),)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            connection.execute("UPDATE card SET removed = true")
    with postgres.connect() as teacher:  # the teacher's role owns the tables and reads the whole class
        assert sorted(teacher.execute("SELECT learner, grade FROM review").fetchall()) == sorted([(ayse, 5), (bora, 2)])
        assert teacher.execute("SELECT ef100 FROM schedule WHERE learner = %s AND card_id = %s",
                               (bora, card)).fetchone() == (218,)


def test_a_learner_cannot_answer_as_another_through_bertdrill(classroom, cards):
    postgres, ayse, bora = classroom
    with Store.open(postgres.url_as(ayse), learner=bora) as pretending:
        assert pretending.answers() == []  # bora's log is invisible to ayse's role
        with pytest.raises(Exception, match=f"no card '{cards[0].id}'"):
            answer(pretending, cards[0].id, 5)
    with Store.open(postgres.url, learner=bora) as teacher_as_bora:  # the teacher may look at any learner
        assert [a.grade for a in teacher_as_bora.answers()] == [2]


# --------------------------------------------------------------------------- learners on one store


def test_learners_on_one_sqlite_file_keep_their_own_schedules(tmp_path, cards):
    path = str(tmp_path / "family.db")
    with Store.open(path, learner="ayse") as ayse, Store.open(path, learner="bora") as bora:
        for store in (ayse, bora):
            store.sync(cards)
        first = answer(ayse, cards[0].id, 5)
        assert ayse.answers() == [first] and bora.answers() == []
        assert bora.state(cards[0].id).schedule == NEW
        assert cards[0].id not in ayse.new_ids(DAY, limit=100) and cards[0].id in bora.new_ids(DAY, limit=100)
        assert (ayse.day_counts(DAY).new, bora.day_counts(DAY).new) == (1, 0)
        with pytest.raises(Exception, match="not in the log"):
            bora.undo(first.id)  # another learner's answer is not theirs to undo
        assert ayse.answers() == [first]


def test_the_learner_comes_from_the_option_then_the_environment_then_the_login(tmp_path, monkeypatch):
    import getpass

    path = str(tmp_path / "who.db")
    with Store.open(path) as store:
        assert store.learner == getpass.getuser()
    monkeypatch.setenv("BERTDRILL_LEARNER", "ayse")
    with Store.open(path) as store, Store.open(path, learner="bora") as other:
        assert (store.learner, other.learner) == ("ayse", "bora")
    with pytest.raises(Exception, match="is not a learner's name"):
        Store.open(path, learner="x" * 64)


def test_a_version_1_file_migrates_to_the_learner_who_opens_it(tmp_path, cards):
    import shutil
    import sqlite3
    from pathlib import Path

    path = tmp_path / "old.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "store-v1.db", path)
    with Store.open(str(path), learner="ayse") as store:
        assert len(store.answers()) == 8
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT DISTINCT learner FROM review").fetchall() == [("ayse",)]
        assert connection.execute("SELECT DISTINCT learner FROM schedule").fetchall() == [("ayse",)]
    with Store.open(str(path), learner="bora") as newcomer:
        assert newcomer.answers() == []


# --------------------------------------------------------------------------- PostgreSQL: versions, strangers, load


def test_a_newer_class_database_is_refused_and_left_as_it_was(postgres, cards):
    from bertdrill.adapters.store import SCHEMA_VERSION
    from bertdrill.core.errors import StoreError

    with class_store(postgres.url) as teacher:
        teacher.class_init(cards)
    with postgres.connect() as connection:
        connection.execute("UPDATE meta SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
        before = connection.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
    with pytest.raises(StoreError, match=f"was written by a newer bertdrill \\(schema version {SCHEMA_VERSION + 1}"):
        Store.open(postgres.url)
    with postgres.connect() as connection:
        assert connection.execute("SELECT key, value FROM meta ORDER BY key").fetchall() == before


def test_another_programs_postgresql_database_is_refused_untouched(postgres):
    from bertdrill.core.errors import StoreError

    with postgres.connect() as connection:
        connection.execute("CREATE TABLE invoice (id integer PRIMARY KEY)")
    with pytest.raises(StoreError, match="already holds tables that are not bertdrill's; use an empty database"):
        Store.open(postgres.url)
    with postgres.connect() as connection:
        tables = connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
        assert tables == [("invoice",)]


def test_a_server_that_does_not_answer_is_a_clear_error():
    from bertdrill.core.errors import StoreError

    with pytest.raises(StoreError, match=r"cannot connect to postgresql://nobody:\*\*\*@127.0.0.1:1/class: .*refused") as caught:
        Store.open("postgresql://nobody:secret@127.0.0.1:1/class")
    assert "secret" not in str(caught.value)


def test_windows_answering_the_same_card_at_once_schedule_it_once(postgres, cards):
    """Row locks: eight windows of one learner answer the same card at the same moment; one answer
    schedules, the others are re-drills, and the schedule is the replay of the one that scheduled."""
    import threading

    with class_store(postgres.url) as teacher:
        teacher.class_init(cards)
    learner = postgres.role("ayse")
    with class_store(postgres.url) as teacher:
        teacher.add_learner(learner, "pw")
    windows = [Store.open(postgres.url_as(learner)) for _ in range(8)]
    windows[0].sync(cards)
    start = threading.Barrier(len(windows))
    logged = []

    def window(store, grade):
        start.wait()
        logged.append(answer(store, cards[0].id, grade))

    threads = [threading.Thread(target=window, args=(store, 1 + n % 5)) for n, store in enumerate(windows)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    scheduling = [a for a in logged if a.kind == "new"]
    assert len(logged) == 8 and len(scheduling) == 1
    assert sorted(a.kind for a in logged) == ["new"] + ["redrill"] * 7
    assert windows[0].state(cards[0].id).schedule == sm2.review(NEW, scheduling[0].grade, today=DAY)
    assert sorted(a.id for a in windows[0].answers()) == sorted(a.id for a in logged)
    for store in windows:
        store.close()
