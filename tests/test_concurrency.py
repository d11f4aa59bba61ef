"""Two reviews on one database at the same time: no crash, no "database is locked", nothing lost or doubled.

Real `bertdrill review` processes, started together on the same file and fed grades as fast as
they read them (every answer a write transaction, so the two fight for the lock all the time):
on the same lesson (they show the same cards) and on different lessons (the second one a lesson
made by benchmarks/lessons.py). Checked afterwards: both exit 0 with nothing on stderr and no
word of a lock on stdout; the log holds exactly the answers the two transcripts acknowledged,
each once; per card and study day only the first answer rescheduled (the later one, from the
other window, is logged as a re-drill); every schedule equals an independent SM-2 replay
(review_log.audit); ``PRAGMA integrity_check`` is ``ok``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import sqlite3
import subprocess
import threading
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from review_log import HEADER, acknowledged, audit, log_rows, start, start_review

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import Store
from bertdrill.app.session import Limits, Session
from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.state import NEW

REPO = Path(__file__).resolve().parent.parent
SEED = 7


def generated_lesson(items: int, lesson_id: str) -> str:
    spec = importlib.util.spec_from_file_location("bench_lessons", REPO / "benchmarks" / "lessons.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text: str = module.generated_lesson(items, lesson_id)
    return text


@pytest.fixture(scope="module")
def second_lesson(tmp_path_factory) -> Path:
    path: Path = tmp_path_factory.mktemp("lessons") / "second.toml"
    path.write_text(generated_lesson(40, "second"), encoding="utf-8")
    return path


def feed(rng: random.Random, lines: int) -> bytes:
    return "".join(f"{rng.choice('2344555')}\n" for _ in range(lines)).encode()


def review_together(db: Path, day: date, sessions: list[list[str]], rng: random.Random) -> list[str]:
    """Run the sessions at the same time to the end of their input; returns their transcripts."""
    processes = [start_review(db, f"{day.isoformat()}T09:00:00+03:00", *args) for args in sessions]
    # Answer only once every window shows its first card: on a loaded machine one window could otherwise
    # finish before the other starts, and the two would never meet.
    shown = [first_card(process) for process in processes]
    feeds = [feed(rng, 150) for _ in processes]
    results: list[tuple[bytes, bytes]] = [(b"", b"")] * len(processes)

    def run(index: int) -> None:
        out, err = processes[index].communicate(feeds[index], timeout=120)
        results[index] = (shown[index] + out, err)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(processes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    transcripts = []
    for process, (out, err) in zip(processes, results):
        text = out.decode()
        assert process.returncode == 0, err.decode()
        assert err == b"", err.decode()
        assert "locked" not in text.lower()
        transcripts.append(text)
    return transcripts


def first_card(process: subprocess.Popen[bytes]) -> bytes:
    """What a review printed until it showed its first card (it then waits for an answer)."""
    assert process.stdout is not None
    seen = b""
    while b"Card 1 of" not in seen:
        chunk = os.read(process.stdout.fileno(), 65536)
        if not chunk:
            break
        seen += chunk
    return seen


def check_log(db: Path, before: int, transcripts: list[str]) -> int:
    """Every acknowledged answer is in the log once, and nothing else is; the audit holds."""
    logged = log_rows(db, before)
    expected = Counter((a.card_id, a.kind, a.grade) for t in transcripts for a in acknowledged(t)[0])
    assert Counter((card_id, kind, grade) for _, card_id, kind, grade in logged) == expected
    audit(db)
    return len(logged)


def answered_first_elsewhere(transcript: str) -> int:
    """Answers to a card shown as new or due that were logged as re-drills: the other window got there first."""
    count, why = 0, None
    for line in transcript.splitlines():
        if header := HEADER.match(line):
            why = header["why"]
        elif line.startswith("Saved:") and "re-drill, schedule unchanged" in line and why != "re-drill":
            count += 1
    return count


def newest_id(db: Path) -> int:
    rows = log_rows(db) if db.exists() else []
    return rows[-1][0] if rows else 0


def test_two_reviews_of_the_same_lesson_at_once(tmp_path):
    """Both start on a file that does not exist yet: both create it, sync it and show the same cards."""
    rng = random.Random(SEED)
    db = tmp_path / "shared.db"
    day = date(2025, 3, 3)
    total = elsewhere = 0
    for _ in range(3):
        before = newest_id(db)
        transcripts = review_together(db, day, [["--new", "15"], ["--new", "15"]], rng)
        total += check_log(db, before, transcripts)
        elsewhere += sum(answered_first_elsewhere(t) for t in transcripts)
        day += timedelta(days=rng.choice([1, 2, 6]))
    assert total > 60
    assert elsewhere > 0  # the two really did answer the same cards


def test_two_reviews_of_different_lessons_at_once(tmp_path, second_lesson):
    rng = random.Random(SEED + 1)
    db = tmp_path / "shared.db"
    day = date(2025, 3, 3)
    for _ in range(2):
        before = newest_id(db)
        transcripts = review_together(db, day, [["--new", "20"], ["--file", str(second_lesson), "--new", "20"]], rng)
        check_log(db, before, transcripts)
        first, second = (acknowledged(t)[0] for t in transcripts)
        assert {a.card_id.split("/")[0] for a in first} == {"bert-basics"}
        assert {a.card_id.split("/")[0] for a in second} == {"second"}
        assert not any(answered_first_elsewhere(t) for t in transcripts)
        day += timedelta(days=1)


def test_status_reads_while_a_review_writes(tmp_path):
    """WAL: `status` in another terminal reads while a review writes, and neither sees a lock."""
    db = tmp_path / "shared.db"
    Store.open(str(db)).close()
    now = "2025-03-03T09:00:00+03:00"
    writer = start_review(db, now, "--new", "25")
    assert writer.stdin is not None and writer.stdout is not None and writer.stderr is not None
    writer.stdin.write(feed(random.Random(SEED + 2), 100))
    writer.stdin.close()
    statuses = 0
    while writer.poll() is None or statuses < 2:
        reader = start("status", db, now, "--json")
        out, err = reader.communicate(timeout=60)
        assert reader.returncode == 0 and err == b"", err.decode()
        assert json.loads(out)["answered_today"] >= 0
        statuses += 1
    assert writer.returncode == 0 and writer.stderr.read() == b""
    check_log(db, 0, [writer.stdout.read().decode()])


# --------------------------------------------------------------------------- the rule, in-process


MORNING = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def test_the_same_card_answered_in_two_sessions_is_rescheduled_once(tmp_path):
    """The bug this file found: two sessions built their queues before either answered, so both
    logged the card as new and SM-2 ran twice on one day (EF and interval moved twice)."""
    cards = all_cards(load_lessons())
    first = Store.open(str(tmp_path / "two.db"))
    first.sync(cards, now=MORNING)
    second = Store.open(str(tmp_path / "two.db"))
    clock = lambda: MORNING  # noqa: E731
    window_a = Session(first, cards, clock=clock, limits=Limits(new=3))
    window_b = Session(second, cards, clock=clock, limits=Limits(new=3))
    shown_a, shown_b = window_a.show(), window_b.show()
    assert shown_a is not None and shown_b is not None
    card = shown_a.card
    assert shown_b.card == card
    a = window_a.answer(5)
    b = window_b.answer(3)
    assert (a.kind, a.rescheduled) == ("new", True)
    assert (b.kind, b.rescheduled, b.before, b.after) == ("redrill", False, a.after, a.after)
    assert b.again  # graded 3: it comes back in window b, as any low grade does
    assert first.state(card.id).schedule == sm2.review(NEW, 5, today=date(2025, 3, 3))
    assert [(x.kind, x.grade) for x in first.answers(card.id)] == [("new", 5), ("redrill", 3)]
    assert window_b.summary().redrills == 1


def test_undo_in_one_window_after_the_other_answered_is_refused_and_the_session_goes_on(cli, tmp_path, monkeypatch):
    db = tmp_path / "undo.db"
    monkeypatch.setenv("BERTDRILL_NOW", "2025-03-03T09:00:00+03:00")
    cards = all_cards(load_lessons())
    other = Store.open(str(db))
    other.sync(cards, now=MORNING)
    original = Store.answer

    def the_other_window_answers_too(self, card_id, **kwargs):
        logged = original(self, card_id, **kwargs)
        if kwargs["kind"] == "new":
            original(other, card_id, **dict(kwargs, kind="new", grade=4))
        return logged

    monkeypatch.setattr(Store, "answer", the_other_window_answers_too)
    # the second new card is the total (new cards alternate kinds): an answer, then a grade
    result = cli("review", "--db", str(db), "--new", "2", input="5\n:undo\n109482240\n4\n")
    assert result.exit_code == 0, result.stderr
    assert "Not undone: bert-basics/bert-definition was answered again since (in another window?)" in result.stdout
    monkeypatch.setattr(Store, "answer", original)
    log = [(a.card_id.split("/")[1], a.kind, a.grade) for a in other.answers()]
    assert log == [("bert-definition", "new", 5), ("bert-definition", "redrill", 4),
                   ("total-params@bert-base", "new", 4), ("total-params@bert-base", "redrill", 4)]
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
