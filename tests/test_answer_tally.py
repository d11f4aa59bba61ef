"""The answers' running tally (schema version 13, SQLite): the triggers keep ``answer_tally`` equal to the log
counted by learner, study day, lesson, kind and maturity, whoever writes the log (an answer, an undo, a hand
edit, a migration), and the figures read from it are the figures counted from the log."""

from __future__ import annotations

import random
import shutil
import sqlite3
from contextlib import closing
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import Store
from bertdrill.core.cards import Card
from bertdrill.core.scheduling.state import MATURE_DAYS, PASSING, AnswerKind, Schedule

FIXTURES = Path(__file__).parent / "fixtures"
FIRST_DAY = date(2025, 1, 1)
COUNTED = """SELECT r.learner, r.study_day, coalesce(c.lesson_id, ''), r.kind, r.interval_before >= :mature, count(*),
                    sum(r.grade >= :passing)
             FROM review r LEFT JOIN card c ON c.id = r.card_id GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"""


def tally(path: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT learner, study_day, lesson_id, kind, mature, answers, passed "
                                  "FROM answer_tally ORDER BY 1, 2, 3, 4, 5").fetchall()


def counted(path: Path) -> list[tuple[Any, ...]]:
    """The log counted as the tally counts it, by a query of its own."""
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute(COUNTED, {"mature": MATURE_DAYS, "passing": int(PASSING)}).fetchall()


def edit(path: Path, statement: str, *parameters: object) -> None:
    """A change made by another program (the sqlite3 shell, a script), outside bertdrill's code."""
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute(statement, parameters)


@pytest.fixture(scope="module")
def cards():
    return all_cards(load_lessons())


def answer_at_random(db: Store, cards: list[Card], rng: random.Random, count: int) -> list[int]:
    ids = []
    reviewed = [card for card in cards if card.kind.reviewed]
    for number in range(count):
        card = rng.choice(reviewed)
        day = FIRST_DAY + timedelta(days=rng.randrange(40))
        interval = rng.choice([0, 1, 5, MATURE_DAYS - 1, MATURE_DAYS, 60])
        kind = rng.choice([AnswerKind.NEW, AnswerKind.REVIEW, AnswerKind.REVIEW, AnswerKind.REDRILL, AnswerKind.CRAM])
        grade = rng.randrange(6)

        def reschedule(schedule: Schedule, interval: int = interval) -> Schedule:
            return Schedule(schedule.repetitions + 1, schedule.ef100, interval, FIRST_DAY + timedelta(days=interval),
                            schedule.lapses)

        ids.append(db.answer(card.id, grade=grade, kind=kind, reviewed_at=datetime(2025, 1, 1, 9, tzinfo=UTC)
                             + timedelta(minutes=number), study_day=day, reschedule=reschedule).id)
    return ids


def figures(db: Store, lessons: list[str] | None) -> tuple[object, ...]:
    return (db.retention(lessons=lessons), db.retention(FIRST_DAY + timedelta(days=20), lessons=lessons),
            db.answer_count(lessons=lessons), db.reviews_per_day(FIRST_DAY, FIRST_DAY + timedelta(days=30),
                                                                 lessons=lessons),
            db._study_days(FIRST_DAY + timedelta(days=30), lessons), db._study_days(date.max, lessons))


def from_log(db: Store, lessons: list[str] | None) -> tuple[object, ...]:
    return (db._retention_from_log(None, lessons), db._retention_from_log(FIRST_DAY + timedelta(days=20), lessons),
            db._answer_count_from_log(lessons),
            db._reviews_per_day_from_log(FIRST_DAY, FIRST_DAY + timedelta(days=30), lessons),
            db._study_days_from_log(FIRST_DAY + timedelta(days=30), lessons), db._study_days_from_log(date.max, lessons))


def test_the_tally_is_the_log_counted_through_answers_undos_and_hand_edits(tmp_path, cards):
    path = tmp_path / "review.db"
    rng = random.Random(13)
    with Store.open(str(path), learner="ayse") as ayse, Store.open(str(path), learner="bora") as bora:
        for db in (ayse, bora):
            db.sync(cards, now=datetime(2025, 1, 1, tzinfo=UTC))
        ids = answer_at_random(ayse, cards, rng, 300)
        answer_at_random(bora, cards, rng, 50)
        assert tally(path) == counted(path)
        assert sum(row[5] for row in tally(path)) == 350
        lessons = sorted({card.lesson_id for card in cards})
        for db in (ayse, bora):
            for scope in (None, lessons, lessons[:1], ["no-such-lesson"]):
                assert figures(db, scope) == from_log(db, scope)
        assert ayse.retention().young_total > 0 and ayse.retention().mature_total > 0  # both halves were counted

        for review_id in reversed(ids[-20:]):  # undo takes each answer out of the count again
            card_id = next(answer.card_id for answer in ayse.answers() if answer.id == review_id)
            if max(answer.id for answer in ayse.answers(card_id)) == review_id:
                ayse.undo(review_id)
        assert tally(path) == counted(path)

    edit(path, "UPDATE review SET grade = 5 - grade WHERE id % 3 = 0")  # each counted column, by hand
    edit(path, "UPDATE review SET kind = 'review', interval_before = 30 WHERE id % 5 = 0")
    edit(path, "UPDATE review SET study_day = '2025-02-20' WHERE id % 7 = 0")
    edit(path, "UPDATE review SET learner = 'cem' WHERE id % 11 = 0")
    edit(path, "UPDATE review SET typed = 'x', duration_ms = 1")  # no counted column: the tally stays
    edit(path, "DELETE FROM review WHERE id % 4 = 0")
    assert tally(path) == counted(path)
    assert all(row[5] > 0 for row in tally(path))  # a key whose last answer went is gone, not left at 0
    edit(path, "DELETE FROM review")
    assert tally(path) == []


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("store-v*.db")), ids=lambda path: path.name)
def test_a_migrated_file_tallies_the_answers_it_had(fixture, tmp_path):
    path = tmp_path / fixture.name
    shutil.copy(fixture, path)
    Store.open(str(path)).close()
    assert tally(path) == counted(path)
    with closing(sqlite3.connect(path)) as connection:
        answers = connection.execute("SELECT count(*) FROM review").fetchone()[0]
    assert sum(row[5] for row in tally(path)) == answers


def test_a_reader_of_an_older_file_reads_the_figures_its_log_gives(tmp_path):
    """A reader never writes (the file is migrated in memory): the tally it reads is made from the log there."""
    path = tmp_path / "store-v12.db"
    shutil.copy(FIXTURES / "store-v12.db", path)
    before = path.read_bytes()
    with Store.open(str(path), read_only=True, learner="ayse") as reader:
        assert reader.tallied
        assert figures(reader, None) == from_log(reader, None)
        assert reader.answer_count() > 0
    assert path.read_bytes() == before
