"""A dropped PostgreSQL connection loses no answer (issue 23): the server ends the session between two answers
(``pg_terminate_backend``, as a restart or a NAT timeout would) or in the middle of one, and the next answer is
saved, exactly once. On the real server of tests/postgres.py."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import Store
from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.state import AnswerKind
from bertdrill.ports import Answer

DAY = date(2025, 3, 3)
MORNING = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def cards():
    return all_cards(load_lessons())


def answer(store, card_id, moment=MORNING, reschedule=None):
    return store.answer(card_id, grade=4, kind=AnswerKind.NEW, reviewed_at=moment, study_day=DAY,
                        reschedule=reschedule or (lambda s: sm2.review(s, 4, today=DAY)), once_per_day=True)


def terminate_others(postgres) -> int:
    """End every session on the test database but the administrator's own; how many were ended."""
    with postgres.connect() as admin:
        return len(admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                                 "AND pid <> pg_backend_pid()", (postgres.database,)).fetchall())


def logged(postgres, card_id) -> int:
    with postgres.connect() as admin:
        count: int = admin.execute("SELECT count(*) FROM review WHERE card_id = %s", (card_id,)).fetchone()[0]
        return count


def test_an_answer_after_the_idle_connection_was_dropped_is_saved_once(postgres, cards):
    with Store.open(postgres.url) as store:
        store.sync(cards)
        answer(store, cards[0].id)
        assert terminate_others(postgres) >= 1  # the store's pooled connection, idle between answers
        second = answer(store, cards[1].id, MORNING + timedelta(seconds=30))
        assert second.kind == "new"
        assert [a.card_id for a in store.answers()] == [cards[0].id, cards[1].id]
    assert logged(postgres, cards[1].id) == 1


def test_an_answer_whose_connection_drops_midway_is_saved_once(postgres, cards):
    """The connection dies inside the answer's transaction (after the schedule was read, before the log is
    written): the whole unit runs again on a new connection, and the log has the answer once."""
    dropped: list[int] = []

    def reschedule(state):
        if not dropped:
            dropped.append(terminate_others(postgres))  # this very transaction's session
        return sm2.review(state, 4, today=DAY)

    with Store.open(postgres.url) as store:
        store.sync(cards)
        saved = answer(store, cards[2].id, reschedule=reschedule)
        assert dropped and dropped[0] >= 1
        assert saved.after.repetitions == 1
        assert [a.id for a in store.answers(cards[2].id)] == [saved.id]
    assert logged(postgres, cards[2].id) == 1


def test_a_retried_answer_finds_the_one_its_first_try_committed(tmp_path, cards, monkeypatch):
    """The first try committed and its reply was lost: the unit runs again, finds its row, logs nothing more
    (the store's check, on SQLite, by running the answer's work twice)."""
    with Store.open(str(tmp_path / "x.db")) as store:
        store.sync(cards)
        original = store._run
        runs: list[Answer] = []

        def twice(work, *, write=False):
            if write and not runs:
                runs.append(original(work, write=write))  # committed; the caller never heard
            return original(work, write=write)

        with monkeypatch.context() as patched:
            patched.setattr(store, "_run", twice)
            saved = answer(store, cards[0].id)
        assert saved.id == runs[0].id
        assert len(store.answers(cards[0].id)) == 1


def test_a_url_that_never_connected_fails_at_once(postgres):
    """Reconnecting is for a store that was connected: a wrong port still says so without waiting."""
    import time

    from bertdrill.core.errors import StoreError

    wrong = postgres.url.replace(":5432/", ":1/")
    started = time.monotonic()
    with pytest.raises(StoreError, match="cannot connect"):
        Store.open(wrong)
    assert time.monotonic() - started < 5
