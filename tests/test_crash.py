"""Crash safety: `bertdrill review` killed with SIGKILL at random points loses no acknowledged answer.

Real processes on a real database file, killed at random moments chosen by a seeded RNG
(``BERTDRILL_TEST_SEED`` picks another run). Each run feeds a scripted session a stream of
grades on its line protocol (docs/review.md) and kills it in one of three ways:

- ``start``: a random time after launch, so kills land while the interpreter starts, the
  lesson loads, the file is created or migrated, the lessons sync, the queue is built;
- ``answering``: a random time after the first card is shown, while answers stream in
  (each one a committed write), so kills land inside transactions;
- ``acks``: right after the k-th ``Saved:`` is read, while the next answer is being written.

After every kill: ``PRAGMA integrity_check`` is ``ok``; the answers this run logged are
exactly the ones it acknowledged, in order, plus at most one more (committed, killed before
its ``Saved:`` reached the screen) for the card that was on screen; every schedule equals an
independent SM-2 replay of the log (see review_log.audit). The study day moves on now and
then, so later runs review due cards as well as new ones. Two lanes, each with its own
database, run side by side to halve the wall time.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path

from review_log import acknowledged, audit, has_log, last_id, log_rows, start_review

SEED = int(os.environ.get("BERTDRILL_TEST_SEED", "20250303"))
KILLS_PER_LANE = 16
LANES = 2
MAX_RUNS_PER_LANE = 40  # runs that end without a kill (nothing left to review) don't count
FIRST_DAY = date(2025, 3, 3)


def read_until(process: subprocess.Popen[bytes], seen: bytearray, done: Callable[[bytearray], bool],
               timeout: float = 30) -> bool:
    """Read the process's stdout into ``seen`` until ``done(seen)``; False if it ended first."""
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    fd = process.stdout.fileno()
    while not done(seen):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; output so far:\n{seen.decode(errors='replace')}")
        chunk = _read_some(fd, deadline)
        if chunk is None:
            continue
        if not chunk:
            return False
        seen += chunk
    return True


def _read_some(fd: int, deadline: float) -> bytes | None:
    import select

    ready, _, _ = select.select([fd], [], [], max(0.0, min(0.05, deadline - time.monotonic())))
    return os.read(fd, 65536) if ready else None


def grades(rng: random.Random, count: int) -> bytes:
    """Lines for the line protocol: each is a valid grade, and on a typed card also the answer."""
    return "".join(f"{rng.choices(range(6), weights=(1, 1, 2, 3, 4, 4))[0]}\n" for _ in range(count)).encode()


def one_run(db: Path, day: date, rng: random.Random) -> tuple[bool, str]:
    """Start a session, kill it the way the RNG says, check the database. Returns (killed, how)."""
    before = last_id(db)
    process = start_review(db, f"{day.isoformat()}T09:00:00+03:00", "--new", "12")
    assert process.stdin is not None
    process.stdin.write(grades(rng, 200))  # stdin stays open: the session never ends by itself
    process.stdin.flush()
    seen = bytearray()
    how = rng.choice(["start", "answering", "answering", "acks", "acks"])
    if how == "start":
        time.sleep(rng.uniform(0.3, 1.2))
        alive = process.poll() is None
    elif how == "answering":
        alive = read_until(process, seen, lambda s: b"Card 1 of" in s or b"Nothing to review" in s)
        alive = alive and b"Nothing to review" not in seen
        time.sleep(rng.uniform(0, 0.25))
    else:
        wanted = rng.randint(1, 8)
        alive = read_until(process, seen, lambda s: s.count(b"\nSaved:") >= wanted or b"Session over" in s)
        alive = alive and b"Session over" not in seen
    if alive:
        process.send_signal(signal.SIGKILL)
    rest, errors = process.communicate(timeout=30)
    seen += rest
    killed = process.returncode == -signal.SIGKILL
    assert killed or process.returncode == 0, errors.decode(errors="replace")
    assert b"Traceback" not in errors and b"Error" not in errors, errors.decode(errors="replace")

    acked, on_screen = acknowledged(seen.decode("utf-8", errors="replace"))
    logged = log_rows(db, before)
    expected = [(a.card_id, a.kind, a.grade) for a in acked]
    found = [(card_id, kind, grade) for _, card_id, kind, grade in logged]
    assert found[: len(expected)] == expected, f"{how}: acknowledged {expected}, logged {found}"
    extra = found[len(expected):]
    assert len(extra) <= 1 and all(card_id == on_screen for card_id, _, _ in extra), \
        f"{how}: more logged than acknowledged: {extra} (on screen: {on_screen})"
    if has_log(db):  # a kill before the first schema was committed leaves a file with none
        audit(db)
    return killed, how


def lane(number: int, folder: Path) -> list[str]:
    rng = random.Random(SEED * 100 + number)
    db = folder / f"lane-{number}.db"
    day = FIRST_DAY
    kills: list[str] = []
    for _ in range(MAX_RUNS_PER_LANE):
        killed, how = one_run(db, day, rng)
        if killed:
            kills.append(how)
        else:  # the session ran out of cards: tomorrow brings due ones
            day += timedelta(days=1)
        if len(kills) == KILLS_PER_LANE:
            break
        if rng.random() < 0.3:
            day += timedelta(days=rng.choice([1, 1, 2, 3, 6]))
    return kills


def test_sigkill_at_random_points_loses_no_acknowledged_answer(tmp_path):
    with ThreadPoolExecutor(LANES) as pool:
        results = list(pool.map(lambda n: lane(n, tmp_path), range(LANES)))
    kills = [how for result in results for how in result]
    assert len(kills) >= 30, f"only {len(kills)} kills (seed {SEED})"
    assert {"start", "answering", "acks"} <= set(kills)
    for number in range(LANES):  # after all that, the file still opens and reviews normally
        db = tmp_path / f"lane-{number}.db"
        answers = audit(db)
        assert answers > 0
        process = start_review(db, "2025-06-01T09:00:00+03:00", "--new", "0")
        out, err = process.communicate(b":quit\n", timeout=60)
        assert process.returncode == 0 and err == b"", err.decode()
        assert b"Session over: 0 answered" in out
