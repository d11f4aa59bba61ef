"""Learners on one store: each keeps their own rows (an SQLite file shared by a family; a class on PostgreSQL).

What a class's learners may reach on PostgreSQL, now that only the class server connects (acting for one member
per transaction, under row-level security), is tested in tests/test_class_members.py; a class of learner roles
from before the server is moved over there too.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from postgres import class_learners, class_store

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


@pytest.mark.parametrize("other", [None, "aaron", "zeynep"])
def test_a_schedule_gone_from_a_file_is_made_again_beside_any_other_learner(tmp_path, cards, other):
    """The lessons' digests are the stored ones, so only the count of schedules says a card has none: counted over
    the whole table in a learner's own file, over this learner's rows when another learner (named before or after
    this one) has schedules there too, all of them."""
    import sqlite3

    path = tmp_path / "gone.db"
    for learner in ("ayse", other):
        if learner is not None:
            with Store.open(str(path), learner=learner) as store:
                store.sync(cards)
    with sqlite3.connect(path) as connection:
        connection.execute("DELETE FROM schedule WHERE learner = 'ayse' AND card_id = ?", (cards[0].id,))
    connection.close()
    with Store.open(str(path), learner="ayse") as store:
        with pytest.raises(Exception, match="sync its lesson first"):
            store.state(cards[0].id)
        store.sync(cards)
        assert store.state(cards[0].id).schedule == NEW
    with sqlite3.connect(path) as connection:
        counts = dict(connection.execute("SELECT learner, count(*) FROM schedule GROUP BY learner").fetchall())
    connection.close()
    assert counts == {learner: len({card.id for card in cards}) for learner in ("ayse", other) if learner}


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
        teacher.open_class(cards, [])
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
    """Row locks: eight windows of one learner answer the same card at the same moment through the class server's
    store; one answer schedules, the others are re-drills, and the schedule is the replay of the one that scheduled."""

    import copy
    import threading

    with class_learners(postgres, cards, "Ayşe") as learners:
        windows = [copy.copy(learners["Ayşe"]) for _ in range(8)]  # as the server's acting_as makes one per request
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
