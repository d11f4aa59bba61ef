"""How fast is `bertdrill review` on a big store? Prints figures and ratios against baselines.

A store with 100,000 cards and 1,000,000 logged reviews is generated (lesson files of about 100,000
cards, synced by bertdrill; schedules and the log written with raw sqlite3, executemany, one
transaction), then measured; every command loads the lessons its cards come from:

1. start-up: `bertdrill review` in a subprocess, from launch until "Card 1 of" is on its
   stdout (lessons loaded, store opened and synced, queue built, first card shown), minus
   the baseline `python -c "import sqlmodel"` measured in the same run;
2. the same in-process over all 100,000 cards: sync (nothing changed), build the queue,
   show the first card;
3. recording an answer and showing the next card, against a raw sqlite3 insert + commit
   with the same pragmas (WAL, synchronous=FULL).

Run: python benchmarks/review.py [--cards 100000] [--reviews 1000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import EF_START, Store
from bertdrill.core.cards import Card

TODAY = date(2025, 3, 1)
NOW = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def synthetic_cards(count: int, per_lesson: int = 1000) -> list[Card]:
    """Cards of lessons no file holds: for timing the store's queries alone (simulate.py), never a command."""
    from bertdrill.core.cards import FactCard

    cards: list[Card] = []
    for i in range(count):
        lesson = f"bench-{i // per_lesson:04d}"
        cards.append(FactCard(id=f"{lesson}/item-{i}", lesson_id=lesson, item_id=f"item-{i}",
                              prompt={"en": f"Question {i}?"}, answer={"en": f"Answer {i}."}))
    return cards


def fill(path: Path, cards: list[Card], reviews: int, learner: str, seed: int = 7) -> None:
    """Cards, schedules and a review log written straight to SQLite, as fast as it goes."""
    rng = random.Random(seed)
    stamp = "2025-01-01 00:00:00.000000"
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA synchronous = OFF")
    connection.execute("BEGIN")
    positions: dict[str, int] = {}
    card_rows, schedule_rows = [], []
    for card in cards:
        position = positions.get(card.lesson_id, 0)
        positions[card.lesson_id] = position + 1
        card_rows.append((card.id, card.lesson_id, card.item_id, card.kind, position, card.fingerprint, stamp, stamp))
        new = rng.random() < 0.1
        due = None if new else (TODAY + timedelta(days=rng.randint(-30, 300))).isoformat()
        schedule_rows.append((card.id, 0 if new else rng.randint(1, 8), rng.randint(130, 300),
                              0 if new else rng.randint(1, 300), due, rng.randint(0, 3), learner))
    connection.executemany(
        "INSERT OR IGNORE INTO card (id, lesson_id, item_id, kind, position, fingerprint, removed, first_seen, updated) "
        "VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)", card_rows)
    connection.executemany(
        "INSERT OR REPLACE INTO schedule (card_id, repetitions, ef100, interval, due, lapses, suspended, buried_until, leech, "
        "learner) VALUES (?, ?, ?, ?, ?, ?, 0, NULL, 0, ?)", schedule_rows)
    ids = [card.id for card in cards]
    start = TODAY - timedelta(days=1000)

    def review_rows():
        for n in range(reviews):
            day = start + timedelta(days=n * 1000 // reviews)
            yield (ids[n % len(ids)], f"{day.isoformat()} 08:00:00.000000", day.isoformat(), "review",
                   rng.randint(0, 5), None, 4000, 2, EF_START, 6, day.isoformat(), 0, 3, EF_START, 15,
                   (day + timedelta(days=15)).isoformat(), 0, learner)

    connection.executemany(
        "INSERT INTO review (card_id, reviewed_at, study_day, kind, grade, typed, duration_ms, reps_before, "
        "ef100_before, interval_before, due_before, lapses_before, reps_after, ef100_after, interval_after, "
        "due_after, lapses_after, learner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", review_rows())
    connection.execute("COMMIT")
    connection.execute("ANALYZE")
    connection.close()


CARDS_PER_ITEM = 1.4  # lessons.py's five kinds: fact, choice, blank 1 card each; numeric 2 sets; match 2 pairs
PER_FILE = 10_000  # items per generated lesson file (2.7 MB, under the 5 MB a file may hold)


def write_lessons(folder: Path, cards: int) -> list[Path]:
    """Generated lesson files (lessons.py: every kind, both languages) holding about ``cards`` cards."""
    from lessons import generated_lesson

    items = max(5, round(cards / CARDS_PER_ITEM / 5) * 5)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, start in enumerate(range(0, items, PER_FILE)):
        path = folder / f"bench-{number:03d}.toml"
        path.write_text(generated_lesson(min(PER_FILE, items - start), f"bench-{number:03d}"), encoding="utf-8")
        paths.append(path)
    return paths


def lessons_of(db: Path) -> Path:
    """The folder of the lesson files a store built by :func:`build_store` at ``db`` comes from."""
    return db.parent / f"{db.stem}-lessons"


def build_store(db: Path, cards: int = 100_000, reviews: int = 1_000_000) -> list[Card]:
    """A review database at ``db`` as a long-time learner's would be: lesson files of about ``cards``
    cards in the folder :func:`lessons_of` names (generated, every kind), synced by bertdrill itself,
    and ``reviews`` logged answers spread over 1,000 days. A command measured on it loads those
    lessons (``--file FOLDER``), as a learner's does. Returns the cards."""
    paths = write_lessons(lessons_of(db), cards)
    made = all_cards(load_lessons(paths))
    store = Store.open(str(db))
    store.sync(made, now=NOW)
    store.close()
    fill(db, [card for card in made if card.kind.reviewed], reviews, store.learner)
    return made


def timed(action, repeat: int = 5) -> float:
    """The median wall time of ``action()``, in seconds."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def first_card_subprocess(db: Path) -> float:
    """Seconds from launching `bertdrill review` until its first card is on stdout."""
    env = dict(os.environ, BERTDRILL_DB=str(db), BERTDRILL_NOW=NOW.isoformat(), NO_COLOR="1", PYTHONUNBUFFERED="1")
    began = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "bertdrill", "review", "--file", str(lessons_of(db))],
                               stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout is not None and process.stderr is not None
    for line in process.stdout:
        if line.startswith(b"Card 1 of"):
            elapsed = time.perf_counter() - began
            break
    else:
        raise SystemExit(f"no card shown: {process.stderr.read().decode()}")
    process.communicate(b":quit\n")
    return elapsed


def import_baseline() -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import sqlmodel"], check=True)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="build the store in this folder and keep it")
    args = parser.parse_args()

    from bertdrill.app.session import Limits, Session
    from bertdrill.cli import base
    from bertdrill.cli.review import LineInput, Review

    folder = args.keep or Path(tempfile.mkdtemp(prefix="bertdrill-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "bench.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)

    began = time.perf_counter()
    cards = build_store(db, args.cards, args.reviews)
    store = Store.open(str(db))
    print(f"store: {len(cards):,} cards of generated lessons, {args.reviews:,} reviews "
          f"({db.stat().st_size / 1e6:.0f} MB), built in {time.perf_counter() - began:.1f} s")

    # 1. start-up of the real command, against its interpreter baseline
    pairs = [(import_baseline(), first_card_subprocess(db)) for _ in range(7)]  # interleaved: same load on both
    baseline = statistics.median(pair[0] for pair in pairs)
    startup = statistics.median(pair[1] for pair in pairs)
    print(f"baseline  python -c 'import sqlmodel'          {baseline * 1000:7.0f} ms")
    print(f"bertdrill review until the first card is shown {startup * 1000:7.0f} ms  "
          f"(beyond the baseline: {(startup - baseline) * 1000:.0f} ms; ratio {startup / baseline:.2f})")

    # 2. in-process over every card: sync with nothing changed, queue, first card
    store.sync(cards, now=NOW)  # the first sync after generation records each lesson's digest
    fingerprints = timed(lambda: [card.fingerprint for card in cards], repeat=3)
    sync = timed(lambda: store.sync(cards, now=NOW), repeat=3)
    known = [SimpleNamespace(id=c.id, lesson_id=c.lesson_id, item_id=c.item_id, kind=c.kind, fingerprint=c.fingerprint)
             for c in cards]
    sync_known = timed(lambda: store.sync(known, now=NOW), repeat=3)
    screen = io.StringIO()
    base.out.file = screen
    clock = lambda: NOW  # noqa: E731
    reader = LineInput(io.BytesIO())  # the header and the question read nothing

    def first_card():
        session = Session(store, cards, clock=clock, limits=Limits())
        review = Review(session, reader, "en")
        entry = session.show()
        assert entry is not None
        review.header(entry)
        review.question(entry)
        return session, review

    queue = timed(first_card)
    print(f"sync {args.cards:,} unchanged cards                   {sync * 1000:7.0f} ms  "
          f"(computing their fingerprints alone: {fingerprints * 1000:.0f} ms; "
          f"with fingerprints known: {sync_known * 1000:.0f} ms)")
    print(f"build the queue over {args.cards:,} cards, show card 1 {queue * 1000:7.0f} ms")

    # 3. an answer recorded and the next card shown, against a raw insert + commit
    session, review = first_card()
    answer_times = []
    for i in range(60):
        began = time.perf_counter()
        session.answer(4 if i % 3 else 2, "typed answer")
        entry = session.show()
        review.header(entry)
        review.question(entry)
        answer_times.append(time.perf_counter() - began)
    raw = sqlite3.connect(db, isolation_level=None)
    raw.execute("PRAGMA journal_mode = WAL")
    raw.execute("PRAGMA synchronous = FULL")
    raw.execute("CREATE TABLE IF NOT EXISTS bench_baseline (id INTEGER PRIMARY KEY, card_id TEXT, grade INTEGER)")
    raw_times = []
    for i in range(60):
        began = time.perf_counter()
        raw.execute("BEGIN IMMEDIATE")
        raw.execute("INSERT INTO bench_baseline (card_id, grade) VALUES (?, ?)", (cards[i].id, 4))
        raw.execute("COMMIT")
        raw_times.append(time.perf_counter() - began)
    raw.execute("DROP TABLE bench_baseline")
    raw.close()
    base.out.file = sys.stdout
    answer, baseline_write = statistics.median(answer_times), statistics.median(raw_times)
    p95 = sorted(answer_times)[int(len(answer_times) * 0.95)]
    print(f"baseline  raw sqlite3 insert + commit           {baseline_write * 1000:7.2f} ms")
    print(f"record an answer and show the next card        {answer * 1000:7.2f} ms  "
          f"(p95 {p95 * 1000:.2f} ms; ratio {answer / baseline_write:.1f})")
    store.close()
    if not args.keep:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        folder.rmdir()


if __name__ == "__main__":
    main()
