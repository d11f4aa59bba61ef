"""A switch reaches sessions already open (issue 23): ``bertdrill scheduler fsrs`` while a review is open in another
window. The open session's next answer schedules under the scheduler the store holds when the answer commits
(read in the answer's own transaction), so no card it answers loses its FSRS memory; its preview follows too.

Two store connections on one SQLite file and on PostgreSQL, and two real processes (``review`` reading answers
from a pipe, ``scheduler fsrs`` run while it waits)."""

from __future__ import annotations

import json
import os
import select
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from datetime import UTC, datetime

import pytest

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import Store
from bertdrill.app.session import Limits, Session
from bertdrill.cli.base import scheduler_of
from bertdrill.core.cards import FactCard
from bertdrill.core.scheduling.fsrs import FSRS
from bertdrill.core.scheduling.registry import SchedulerName
from bertdrill.core.scheduling.sm2 import SM2
from bertdrill.ports import SchedulerChoice

NOW = "2025-03-03T09:00:00+03:00"
MORNING = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def cards():
    return all_cards(load_lessons())


def session_on(store, cards):
    facts = [card for card in cards if isinstance(card, FactCard)]
    return Session(store, facts, clock=lambda: MORNING, limits=Limits(new=5), scheduler=SM2(), follow=scheduler_of)


def switch_to_fsrs(url: str) -> None:
    with Store.open(url) as other:  # another window: its own connection
        other.switch_scheduler(SchedulerChoice(SchedulerName.FSRS, 0.9), FSRS(0.9))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_switch_in_another_window_reaches_the_open_sessions_next_answer(backend, tmp_path, cards, request):
    url = str(tmp_path / "two-windows.db") if backend == "sqlite" else request.getfixturevalue("postgres").url
    with Store.open(url) as store:
        store.sync(cards)
        session = session_on(store, cards)
        first = session.show()
        assert first is not None
        kept = session.answer(5)  # under SM-2, chosen when the session began
        assert kept.after.stability is None
        switch_to_fsrs(url)
        assert session.preview() is not None and isinstance(getattr(session.scheduler, "inner", session.scheduler), FSRS)  # the preview follows
        after = session.answer(5)
        assert after.after.stability is not None and after.after.difficulty is not None  # FSRS's memory
        assert store.state(after.entry.card.id).schedule.stability == after.after.stability
        switched_back = store.state(kept.entry.card.id).schedule  # the switch replayed the first answer too
        assert switched_back.stability is not None


@pytest.mark.parametrize("window", ["another", "the same"])
def test_a_switch_between_the_preview_and_the_answer_reaches_the_answer(window, tmp_path, cards):
    """The preview read the choice, and the answer's read of it may give back what the preview read when nothing was
    committed since (SQLite's data_version; this store's own writes are counted): a switch in between, from another
    connection or through the session's own store, is committed, so the answer reads the new choice."""
    url = str(tmp_path / f"{window}-window.db")
    with Store.open(url) as store:
        store.sync(cards)
        session = session_on(store, cards)
        session.show()
        session.answer(5)
        session.show()
        assert session.preview() is not None  # under SM-2: the choice read, and kept
        if window == "another":
            switch_to_fsrs(url)
        else:
            store.switch_scheduler(SchedulerChoice(SchedulerName.FSRS, 0.9), FSRS(0.9))
        after = session.answer(5)
        assert after.after.stability is not None and after.after.difficulty is not None  # FSRS's memory
        assert store.scheduler_choice().name is SchedulerName.FSRS


def test_a_session_not_following_keeps_the_scheduler_it_was_given(tmp_path, cards):
    """``follow`` is the CLI's (and the store's) choice to make: a session given a scheduler and not told to
    follow keeps it, as the tests and ``practice check`` use it."""
    url = str(tmp_path / "fixed.db")
    with Store.open(url) as store:
        store.sync(cards)
        facts = [card for card in cards if isinstance(card, FactCard)]
        session = Session(store, facts, clock=lambda: MORNING, limits=Limits(new=5), scheduler=SM2())
        session.show()
        switch_to_fsrs(url)
        assert session.answer(5).after.stability is None


def read_until(process: subprocess.Popen[bytes], wanted: bytes, seconds: float = 30) -> bytes:
    """What the process printed, up to and including ``wanted``."""
    assert process.stdout is not None
    seen = b""
    deadline = time.monotonic() + seconds
    while wanted not in seen:
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no {wanted!r} within {seconds} s; saw:\n{seen.decode(errors='replace')}"
        chunk = os.read(process.stdout.fileno(), 65536)
        assert chunk, f"the review ended before {wanted!r}:\n{seen.decode(errors='replace')}"
        seen += chunk
    return seen


def test_two_processes_a_review_open_while_scheduler_fsrs_runs(tmp_path):
    db = tmp_path / "processes.db"
    env = dict(os.environ, BERTDRILL_DB=str(db), BERTDRILL_NOW=NOW, NO_COLOR="1", PYTHONUNBUFFERED="1",
               COLUMNS="200")
    review = subprocess.Popen([sys.executable, "-m", "bertdrill", "review", "--new", "3"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        read_until(review, b": ")  # the first card's prompt: the session is open, under SM-2
        switched = subprocess.run([sys.executable, "-m", "bertdrill", "scheduler", "fsrs"], env=env,
                                  capture_output=True, timeout=60)
        assert switched.returncode == 0, switched.stderr.decode()
        assert review.stdin is not None
        review.stdin.write(b"5\n")
        review.stdin.flush()
        read_until(review, b"Saved: grade 5")
        review.stdin.close()
        review.wait(timeout=60)
    finally:
        if review.poll() is None:
            review.kill()
            review.wait()
    with closing(sqlite3.connect(db)) as connection:
        answered = connection.execute("SELECT card_id, stability_after FROM review ORDER BY id").fetchall()
        assert answered and all(stability is not None for _card, stability in answered), answered
        card = answered[0][0]
        stored = connection.execute("SELECT stability FROM schedule WHERE card_id = ?", (card,)).fetchone()
        assert stored[0] is not None  # the card kept the memory FSRS gave it
    shown = json.loads(subprocess.run([sys.executable, "-m", "bertdrill", "status", "--json"], env=env,
                                      capture_output=True, timeout=60).stdout)
    assert shown["learned"] >= 1
