"""Helpers for tests that run `bertdrill review` as real processes and then audit the database.

- :func:`start_review` launches ``python -m bertdrill review`` on a given database and clock;
- :func:`acknowledged` reads a transcript (complete or cut short by a kill) and returns the
  answers it acknowledged with ``Saved:``, each with the card on screen and its kind;
- :func:`audit` checks a database file: ``PRAGMA integrity_check``, the log's own rules, and
  every schedule against a replay of the logged grades through :func:`reference_review`, an
  SM-2 written here from DESIGN §6, independently of ``bertdrill.core.scheduling.sm2``.
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path

HEADER = re.compile(r"^(?P<card>\S+/\S+) · (?P<kind>\w+) · (?P<why>new|due|re-drill)( · fresh numbers)?$")  # a variant says so
SAVED = re.compile(r"^Saved: grade (?P<grade>[0-5])\b")
KINDS = {"new": "new", "due": "review", "re-drill": "redrill"}


def start(command: str, db: Path, now: str, *args: str) -> subprocess.Popen[bytes]:
    """``bertdrill COMMAND`` in its own process, unbuffered, on ``db`` with its clock at ``now``."""
    env = dict(os.environ, BERTDRILL_DB=str(db), BERTDRILL_NOW=now, NO_COLOR="1", PYTHONUNBUFFERED="1",
               COLUMNS="200")
    return subprocess.Popen([sys.executable, "-m", "bertdrill", command, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def start_review(db: Path, now: str, *args: str) -> subprocess.Popen[bytes]:
    return start("review", db, now, *args)


@dataclass(frozen=True)
class Acknowledged:
    card_id: str
    kind: str  # new | review | redrill: from the card's header, or the Saved: line when it says re-drill
    grade: int


def acknowledged(transcript: str) -> tuple[list[Acknowledged], str | None]:
    """The answers a transcript acknowledged, in order, and the card on screen at its end.

    A transcript cut by a kill may end in the middle of a line; a ``Saved:`` line is printed
    only after the commit, so even a partial one whose grade made it out counts.
    """
    answers: list[Acknowledged] = []
    card = kind = None
    for line in transcript.split("\n"):
        if header := HEADER.match(line):
            card, kind = header["card"], KINDS[header["why"]]
        elif saved := SAVED.match(line):
            assert card is not None and kind is not None, f"Saved: before any card in:\n{transcript}"
            # another session may have answered the card first today: then it was logged as a re-drill
            logged = "redrill" if "re-drill, schedule unchanged" in line else kind
            answers.append(Acknowledged(card, logged, int(saved["grade"])))
    return answers, card


# --------------------------------------------------------------------------- SM-2, from DESIGN §6

DELTA = {5: 10, 4: 0, 3: -14, 2: -32, 1: -54, 0: -80}


@dataclass(frozen=True)
class State:
    repetitions: int = 0
    ef100: int = 250
    interval: int = 0
    due: date | None = None
    lapses: int = 0


def reference_review(state: State, grade: int, day: date) -> State:
    """One first-of-the-day answer: EF in hundredths, floor 130; I = 1, 6, then ceil(I * EF_before)."""
    ef100 = max(130, state.ef100 + DELTA[grade])
    if grade >= 3:
        repetitions = state.repetitions + 1
        interval = {1: 1, 2: 6}.get(repetitions) or -(-state.interval * state.ef100 // 100)
        lapses = state.lapses
    else:
        repetitions, interval = 0, 1
        lapses = state.lapses + (state.repetitions >= 1 or state.lapses >= 1)  # a learned card lapses on every failure
    return State(repetitions, ef100, interval, day + timedelta(days=interval), lapses)


# --------------------------------------------------------------------------- the audit

LOG_COLUMNS = ("id, card_id, study_day, kind, grade, reps_before, ef100_before, interval_before, due_before, "
               "lapses_before, reps_after, ef100_after, interval_after, due_after, lapses_after")


def integrity(db: Path) -> str:
    with sqlite3.connect(db) as connection:
        return "\n".join(row[0] for row in connection.execute("PRAGMA integrity_check"))


def log_rows(db: Path, after_id: int = 0) -> list[tuple[int, str, str, int]]:
    """(id, card_id, kind, grade) of every logged answer with an id above ``after_id``; none in a file a kill left
    before its first schema was committed (SQLite makes the file as it connects)."""
    if not has_log(db):
        return []
    with sqlite3.connect(db) as connection:
        rows: list[tuple[int, str, str, int]] = connection.execute("SELECT id, card_id, kind, grade FROM review WHERE id > ? ORDER BY id",
                                  (after_id,)).fetchall()
        return rows


def has_log(db: Path) -> bool:
    """Whether ``db`` holds a log: a file a kill left before its first schema was committed has none."""
    if not db.exists():
        return False
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'review'").fetchone() is not None


def last_id(db: Path) -> int:
    if not has_log(db):
        return 0
    with sqlite3.connect(db) as connection:
        last: int = connection.execute("SELECT coalesce(max(id), 0) FROM review").fetchone()[0]
        return last


def audit(db: Path) -> int:
    """Check a review database end to end; returns the number of answers in its log.

    - ``PRAGMA integrity_check`` is ``ok`` and foreign keys hold;
    - per card and study day, the first answer is ``new`` (the card's first ever) or
      ``review``, and every later one that day is a ``redrill``;
    - each answer's before/after columns are the replay of the log up to it, and each
      stored schedule (and leech flag) is the replay of its whole log.
    """
    assert integrity(db) == "ok"
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
        log = connection.execute(f"SELECT {LOG_COLUMNS} FROM review ORDER BY id").fetchall()
        schedules = {row[0]: row[1:] for row in connection.execute(
            "SELECT card_id, repetitions, ef100, interval, due, lapses, leech FROM schedule")}
    states: dict[str, State] = {}
    days: dict[str, str] = {}
    for (review_id, card_id, study_day, kind, grade, *columns) in log:
        before = states.get(card_id, State())
        first_today = days.get(card_id) != study_day
        expected_kind = ("new" if card_id not in states else "review") if first_today else "redrill"
        assert kind == expected_kind, f"answer {review_id} to {card_id} on {study_day} logged as {kind}"
        day = date.fromisoformat(study_day)
        after = reference_review(before, grade, day) if first_today else before
        logged_before = _state(columns[:5])
        logged_after = _state(columns[5:])
        if first_today and logged_after.interval != after.interval:
            after = _fuzzed(before, after, logged_after, day, f"answer {review_id} to {card_id}")
        assert (logged_before, logged_after) == (before, after), f"answer {review_id} to {card_id}"
        states[card_id], days[card_id] = after, study_day
    for card_id, (repetitions, ef100, interval, due, lapses, leech) in schedules.items():
        state = states.get(card_id, State())
        assert _state((repetitions, ef100, interval, due, lapses)) == state, card_id
        assert bool(leech) == (state.lapses >= 8), card_id
    return len(log)


def fuzz_bounds(interval: int) -> tuple[int, int]:
    """Anki's fuzz range of an interval (rslib/src/scheduler/states/fuzz.rs), written here again so the audit
    does not take the scheduler's word for it: none under 2.5 days; else 1 day plus 15 % of the days from 2.5
    to 7, 10 % of those from 7 to 20 and 5 % beyond, either way, rounded half up."""
    if interval < 2.5:
        return interval, interval
    delta = 1 + 0.15 * (min(interval, 7) - 2.5) + 0.10 * max(min(interval, 20) - 7, 0) + 0.05 * max(interval - 20, 0)
    return math.floor(interval - delta + 0.5), math.floor(interval + delta + 0.5)


def _fuzzed(before: State, after: State, logged: State, day: date, which: str) -> State:
    """SM-2's ``after`` with the interval the log has, if that is one Anki's fuzz could give it (the review's
    default spreads intervals: docs/scheduling.md): within the fuzz range of SM-2's interval, or one day past
    the previous interval where fuzz keeps a growing interval growing."""
    lower, upper = fuzz_bounds(after.interval)
    assert after.interval > 2 and min(lower, before.interval + 1) <= logged.interval <= max(upper, before.interval + 1), \
        f"{which}: interval {logged.interval} is not SM-2's {after.interval} spread by fuzz ({lower} to {upper})"
    return replace(after, interval=logged.interval, due=day + timedelta(days=logged.interval))


def _state(columns) -> State:
    repetitions, ef100, interval, due, lapses = columns
    return State(repetitions, ef100, interval, date.fromisoformat(due) if due else None, lapses)
