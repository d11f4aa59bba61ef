"""A review database holding a synthetic learner's year, written the way sessions would have left it.

The cards are synthetic fact cards in a lesson of their own (``synthetic``), beside the shipped
lesson; each card's log is :func:`synthetic_learner.simulate`'s. Rows go straight into SQLite in
one transaction (thousands of answers through ``Store.answer`` would spend minutes on fsync), with
exactly what ``Store.answer`` writes: the first answer of a study day rescheduled by SM-2 (kind
``new`` or ``review``), later ones that day logged as ``redrill`` with the schedule unchanged,
before and after columns, the leech flag.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from synthetic_learner import simulate

from bertdrill.adapters.store import Store
from bertdrill.core.cards import FactCard
from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.state import LEECH_LAPSES, NEW, Schedule

LESSON = "synthetic"
SYNCED = datetime(2025, 1, 1, 8, 0, tzinfo=UTC)


def cards(count: int) -> list[FactCard]:
    return [FactCard(id=f"{LESSON}/card-{n:03d}", lesson_id=LESSON, item_id=f"card-{n:03d}",
                     prompt={"en": f"Question {n}?"}, answer={"en": f"Answer {n}."}) for n in range(count)]


def learner_store(path: Path, *, count: int = 60, days: int = 200, seed: int = 20261201) -> dict[str, list[tuple[date, int]]]:
    """Write the store at ``path``; returns each card id's log [(study day, grade), ...]."""
    synthetic = cards(count)
    with Store.open(str(path)) as store:
        store.sync(synthetic, now=SYNCED)
        learner = store.learner
    logs = dict(zip((card.id for card in synthetic), simulate(cards=count, days=days, seed=seed)))
    answers, schedules = [], []
    for card_id, log in logs.items():
        state, seen = NEW, set[date]()
        for number, (day, grade) in enumerate(log):
            before = state
            kind = "redrill" if day in seen else "new" if not seen else "review"
            if day not in seen:
                state = sm2.review(state, grade, today=day)
                seen.add(day)
            moment = datetime(day.year, day.month, day.day, 9, tzinfo=UTC) + timedelta(seconds=number)
            answers.append((card_id, learner, moment.strftime("%Y-%m-%d %H:%M:%S.%f"), day.isoformat(), kind, grade,
                            4000, *_columns(before), *_columns(state)))
        schedules.append((state.repetitions, state.ef100, state.interval, state.due.isoformat() if state.due else None,
                          state.lapses, state.lapses >= LEECH_LAPSES, learner, card_id))
    answers.sort(key=lambda row: row[2])  # the log's ids follow time, as a real log's do
    with sqlite3.connect(path) as connection:
        connection.executemany(
            "INSERT INTO review (card_id, learner, reviewed_at, study_day, kind, grade, duration_ms, reps_before, "
            "ef100_before, interval_before, due_before, lapses_before, reps_after, ef100_after, interval_after, "
            "due_after, lapses_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", answers)
        connection.executemany("UPDATE schedule SET repetitions = ?, ef100 = ?, interval = ?, due = ?, lapses = ?, "
                               "leech = ? WHERE learner = ? AND card_id = ?", schedules)
    return logs


def _columns(state: Schedule) -> tuple[int, int, int, str | None, int]:
    return state.repetitions, state.ef100, state.interval, state.due.isoformat() if state.due else None, state.lapses
