"""``bertdrill scheduler``: show, switch by replaying the log (one transaction), and switch back exactly."""

from __future__ import annotations

import sqlite3
from contextlib import nullcontext
from dataclasses import replace
from datetime import date
from functools import partial

import pytest
from learner_store import learner_store
from postgres import class_learners

from bertdrill.adapters.store import Store
from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.fsrs import FSRS
from bertdrill.core.scheduling.registry import SchedulerName
from bertdrill.core.scheduling.replay import replay
from bertdrill.core.scheduling.spread import Spread
from bertdrill.core.scheduling.state import NEW, AnswerKind, NextStates, Schedule
from bertdrill.ports import CardLog, SchedulerChoice

FSRS_SCHEMA = 3  # the schema version that added FSRS's columns
NOW = "2025-07-20T10:00:00+00:00"  # the synthetic year starts 2025-01-06; 200 days end in July


@pytest.fixture
def year(isolated_home, monkeypatch):
    """The default database, holding a synthetic learner's 200 days on 60 cards under SM-2."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    return learner_store(isolated_home / "bertdrill.db")


def schedules(path) -> dict[tuple[str, str], tuple[object, ...]]:
    """Every schedule row, by (learner, card id)."""
    with sqlite3.connect(path) as connection:
        connection.row_factory = sqlite3.Row
        return {(row["learner"], row["card_id"]): tuple(row)
                for row in connection.execute("SELECT * FROM schedule ORDER BY learner, card_id")}


def stored(path, card_id) -> Schedule:
    with Store.open(str(path)) as store:
        return store.state(card_id).schedule


def test_a_new_store_uses_sm2(cli):
    result = cli("scheduler")
    assert result.exit_code == 0
    assert result.stdout == ("Scheduler: SM-2.\n"
                             "Intervals: fuzzed and spread by the load balancer, as Anki does (change with "
                             "`bertdrill scheduler --spread balance|fuzz|off`).\n"
                             "Switch with `bertdrill scheduler fsrs [--retention R] [--fit]` or `bertdrill scheduler sm2`.\n")


def test_switching_to_fsrs_replays_every_cards_log(cli, year, isolated_home):
    result = cli("scheduler", "fsrs")
    assert result.exit_code == 0, result.output
    answers = sum(len(log) for log in year.values())
    with Store.open(str(isolated_home / "bertdrill.db")) as store:
        shipped_cards = len(schedules(isolated_home / "bertdrill.db")) - len(year)
        assert store.scheduler_choice() == SchedulerChoice(SchedulerName.FSRS, 0.9)
        for card_id, log in year.items():
            state = store.state(card_id).schedule
            assert state == replay(Spread(FSRS()), log, card_id)  # every float as FSRS computed it, fuzzed
            assert replay(FSRS(), log) == replace(state, interval=replay(FSRS(), log).interval,
                                                   due=replay(FSRS(), log).due)  # only the interval is fuzzed
            assert state.stability is not None
    lines = result.stdout.splitlines()
    assert lines[0] == (f"Switched to FSRS, desired retention 0.90: {len(year) + shipped_cards} cards rescheduled "
                        f"from {answers:,} answers in their log.")
    assert lines[1].startswith("Due today: ")
    assert lines[2] == "To undo, switch back: bertdrill scheduler sm2"
    assert cli("scheduler").stdout.startswith("Scheduler: FSRS, desired retention 0.90.\n")


def test_switching_sm2_to_fsrs_and_back_restores_every_schedule_exactly(cli, year, isolated_home):
    path = isolated_home / "bertdrill.db"
    unfuzzed = schedules(path)  # the synthetic year was scheduled by SM-2 alone, before any fuzz
    assert cli("scheduler", "--spread", "fuzz").exit_code == 0  # replayed: SM-2 with fuzz from the first answer
    before = schedules(path)
    assert before != unfuzzed
    assert cli("scheduler", "fsrs", "--retention", "0.85").exit_code == 0
    under_fsrs = schedules(path)
    assert under_fsrs != before
    moved = sum(under_fsrs[key][4] != before[key][4] for key in before if key[1] in year)
    assert moved > len(year) / 2  # most due days moved
    result = cli("scheduler", "sm2")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "To undo, switch back: bertdrill scheduler fsrs --retention 0.85"
    assert schedules(path) == before  # every column of every card, leech and flags included
    assert cli("scheduler", "--spread", "off").exit_code == 0
    assert schedules(path) == unfuzzed  # without fuzz, SM-2's own intervals again, exactly


def test_a_session_after_the_switch_schedules_with_fsrs(cli, year, isolated_home):
    assert cli("scheduler", "fsrs", "--retention", "0.8", "--spread", "off").exit_code == 0
    path = isolated_home / "bertdrill.db"
    result = cli("review", "--new", "1", input="5\n")
    assert result.exit_code == 0, result.output
    with Store.open(str(path)) as store:
        answer = store.answers()[-1]
    assert (answer.card_id, answer.grade, answer.kind) == ("bert-basics/bert-definition", 5, "new")
    expected = FSRS(0.8).review(NEW, 5, today=answer.study_day)
    assert answer.after == expected == stored(path, answer.card_id)
    assert f"Saved: grade 5 · next review in {expected.interval} days" in result.stdout


def test_the_review_screen_previews_fsrs_intervals_when_fsrs_is_on(cli, monkeypatch):
    """A new card: FSRS's first stabilities (0.21, 1.29, 2.31 and 8.30 days at 90 %) round to 1, 1, 2 and 8 days;
    SM-2 brings every grade back tomorrow."""
    monkeypatch.setenv("BERTDRILL_NOW", "2025-03-03T09:00:00+00:00")
    assert "Comes back: 0–5 tomorrow\n" in cli("review", "--new", "1", input=":quit\n").stdout
    assert cli("scheduler", "fsrs", "--spread", "off").exit_code == 0
    result = cli("review", "--new", "1", input="5\n")
    assert "Comes back: 0–3 tomorrow · 4 in 2 days · 5 in 8 days\n" in result.stdout
    assert "Saved: grade 5 · next review in 8 days (2025-03-11)." in result.stdout


def test_fsrs_intervals_through_the_command_are_the_librarys(cli, monkeypatch):
    """Day after day on one card, as a learner would: every interval is py-fsrs's own for that history."""
    from datetime import UTC, datetime, timedelta

    import fsrs as library

    assert cli("scheduler", "fsrs", "--spread", "off").exit_code == 0
    scheduler = library.Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    card = library.Card(card_id=1, due=datetime(2025, 1, 1, tzinfo=UTC))
    day = date(2025, 3, 3)
    for number, grade in enumerate([4, 5, 3, 1, 4, 4, 5]):
        monkeypatch.setenv("BERTDRILL_NOW", f"{day.isoformat()}T08:30:00+03:00")
        redrill = "5\n" if grade < 4 else ""
        result = cli("review", "--new", "1" if number == 0 else "0", input=f"{grade}\n{redrill}")
        assert result.exit_code == 0, result.stdout
        rating = library.Rating({0: 1, 1: 1, 2: 1, 3: 2, 4: 3, 5: 4}[grade])
        card, _ = scheduler.review_card(card, rating, datetime(day.year, day.month, day.day, 5, 30, tzinfo=UTC))
        schedule = Store.open(None).state("bert-basics/bert-definition").schedule
        assert (schedule.stability, schedule.difficulty, schedule.due) == (card.stability, card.difficulty,
                                                                           card.due.date())
        assert schedule.due is not None
        day = schedule.due + timedelta(days=number % 3)  # on time, a day late, two days late


@pytest.mark.parametrize("retention", ["0.5", "0.98", "nan"])
def test_a_retention_out_of_range_is_refused_and_nothing_changes(cli, year, isolated_home, retention):
    before = schedules(isolated_home / "bertdrill.db")
    result = cli("scheduler", "fsrs", "--retention", retention)
    assert result.exit_code == 1
    assert result.stderr == f"Error: desired retention must be from 0.70 to 0.97, got {float(retention)}\n"
    assert schedules(isolated_home / "bertdrill.db") == before


def test_retention_belongs_to_fsrs(cli):
    result = cli("scheduler", "sm2", "--retention", "0.9")
    assert result.exit_code == 1
    assert result.stderr == "Error: --retention is a setting of FSRS: use it with `bertdrill scheduler fsrs`\n"


def test_switching_to_the_scheduler_in_use_changes_nothing(cli, year, isolated_home):
    assert cli("scheduler", "sm2").stdout == "Already using SM-2: nothing to change.\n"
    assert cli("scheduler", "fsrs").exit_code == 0
    assert cli("scheduler", "fsrs", "--retention", "0.9").stdout == (
        "Already using FSRS, desired retention 0.90: nothing to change.\n")


def test_a_switch_that_fails_half_way_changes_nothing(year, isolated_home):
    """One transaction: a replay that breaks on a card leaves every schedule and the choice as they were."""
    path = isolated_home / "bertdrill.db"
    before = schedules(path)

    class Breaking:  # a scheduler with no fast replay of its own: the switch reviews answer after answer
        reviewed = 0

        @property
        def initial(self) -> Schedule:
            return NEW

        def next_states(self, state: Schedule, *, today: date) -> NextStates:
            return sm2.next_states(state, today=today)

        def review(self, state: Schedule, grade: int, *, today: date) -> Schedule:
            Breaking.reviewed += 1
            if Breaking.reviewed == 500:
                raise RuntimeError("the disk went away")
            return FSRS().review(state, grade, today=today)

    with Store.open(str(path)) as store, pytest.raises(RuntimeError, match="the disk went away"):
        store.switch_scheduler(SchedulerChoice(SchedulerName.FSRS, 0.9), Breaking())
    assert Breaking.reviewed == 500
    assert schedules(path) == before
    with Store.open(str(path)) as store:
        assert store.scheduler_choice() == SchedulerChoice()


def test_the_log_is_read_card_by_card_in_order(year, isolated_home):
    seen: list[CardLog] = []
    with Store.open(str(isolated_home / "bertdrill.db")) as store:
        answers = store.card_logs(seen.append)
        only: list[CardLog] = []
        store.card_logs(only.append, lessons=["bert-basics"])
    assert seen == [year[card_id] for card_id in sorted(year)]
    assert answers == sum(len(log) for log in year.values())
    assert only == []
    assert all(isinstance(day, date) for log in seen for day, _grade in log)


def test_a_store_from_before_fsrs_switches_to_fsrs_and_back_exactly(tmp_path):
    """The last fixture written before FSRS: migrated, every SM-2 schedule comes back from its log."""
    import shutil
    from pathlib import Path

    fixture = Path(__file__).parent / "fixtures" / f"store-v{FSRS_SCHEMA - 1}.db"
    path = tmp_path / fixture.name
    shutil.copy(fixture, path)
    with Store.open(str(path), learner="ayse") as store:
        before = schedules(path)
        assert store.scheduler_choice() == SchedulerChoice()  # SM-2 until the learner switches
        assert all(row[-2:] == (None, None) for row in before.values())  # no FSRS state yet
        switched = store.switch_scheduler(SchedulerChoice(SchedulerName.FSRS, 0.9), FSRS())
        assert switched.answers == 8 and switched.cards == sum(learner == "ayse" for learner, _card in before)
        after = schedules(path)
        assert {key: row for key, row in after.items() if key[0] == "bora"} == {
            key: row for key, row in before.items() if key[0] == "bora"}  # another learner's cards are theirs
        assert after != before
        store.switch_scheduler(SchedulerChoice(), sm2.SM2())
    with Store.open(str(path), learner="bora") as store:
        assert store.scheduler_choice() == SchedulerChoice()
    assert schedules(path) == before


DAYS = [date(1, 1, 1), date(1970, 1, 1), date(2000, 2, 29), date(2025, 12, 31), date(2026, 3, 1), date(9999, 12, 31)]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_day_a_switch_reads_in_sql_is_the_days_ordinal(backend, tmp_path, request):
    """A switch reads each answer's study day as a number the database computes (schema.day_number): on both
    backends it is Python's date.toordinal(), from the calendar's first day to its last."""
    from sqlalchemy import Date, literal, select

    from bertdrill.adapters.store.schema import day_number

    url = request.getfixturevalue("postgres").url if backend == "postgresql" else str(tmp_path / "days.db")
    with Store.open(url) as store:
        numbers = store._run(lambda connection: [connection.execute(select(day_number(literal(day, Date)))).scalar()
                                                 for day in DAYS])
    assert numbers == [day.toordinal() for day in DAYS]


def test_a_learner_in_a_class_on_postgresql_switches_and_back_exactly(postgres):
    """The same switch on PostgreSQL, as a learner's own role: FSRS's floats come back bit for bit
    (DOUBLE PRECISION), the choice is the learner's, and the other learner's schedules are untouched."""
    from datetime import UTC, datetime, timedelta

    from bertdrill.adapters.lessons import all_cards, load_lessons

    cards = [card for card in all_cards(load_lessons()) if card.kind.reviewed][:6]
    ayse, bora = "ayse", "bora"
    with class_learners(postgres, cards, ayse, bora) as learners:
        logs: dict[tuple[str, str], CardLog] = {}
        for learner in (ayse, bora):
            with nullcontext(learners[learner]) as own:
                for number, card in enumerate(cards):
                    day = date(2025, 3, 1)
                    for grade in (4, 5, 2, 4)[: 1 + number % 4]:
                        own.answer(card.id, grade=grade, kind=AnswerKind.REVIEW,
                                   reviewed_at=datetime(2025, 3, 1, 9, tzinfo=UTC), study_day=day,
                                   reschedule=partial(sm2.review, quality=grade, today=day), once_per_day=True)
                        logs.setdefault((learner, card.id), []).append((day, grade))
                        day += timedelta(days=3)
        with nullcontext(learners[ayse]) as own:
            before = {card.id: own.state(card.id).schedule for card in cards}
            own.switch_scheduler(SchedulerChoice(SchedulerName.FSRS, 0.85), FSRS(0.85))
            assert own.scheduler_choice() == SchedulerChoice(SchedulerName.FSRS, 0.85)
            for card in cards:
                assert own.state(card.id).schedule == replay(FSRS(0.85), logs[(ayse, card.id)])
            seen: list[CardLog] = []
            own.card_logs(seen.append)
            assert sorted(seen) == sorted(logs[(ayse, card.id)] for card in cards)  # in the database's card order
        with nullcontext(learners[bora]) as other:
            assert other.scheduler_choice() == SchedulerChoice()
            assert all(other.state(card.id).schedule == replay(sm2.SM2(), logs[(bora, card.id)]) for card in cards)
        with nullcontext(learners[ayse]) as own:
            own.switch_scheduler(SchedulerChoice(), sm2.SM2())
            assert {card.id: own.state(card.id).schedule for card in cards} == before


def test_a_switch_of_one_card_with_one_answer_says_both_in_the_singular(cli, isolated_home, monkeypatch):
    isolated_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    logs = learner_store(isolated_home / "bertdrill.db", count=1, days=2)
    assert [len(log) for log in logs.values()] == [1] and len(schedules(isolated_home / "bertdrill.db")) == 1
    result = cli("scheduler", "fsrs")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == ("Switched to FSRS, desired retention 0.90: 1 card rescheduled from "
                                             "1 answer in their log.")
    turkish = cli("scheduler", "sm2", "--lang", "tr").stdout.splitlines()[0]
    assert ": 1 kart, kayıtlarındaki 1 yanıt temel alınarak " in turkish, turkish


def test_turkish_reads_its_decimals_its_own_way(cli, year, isolated_home):
    """A shown decimal follows the language (0,85 in Turkish); the command to type keeps the dot."""
    result = cli("scheduler", "fsrs", "--retention", "0.85", "--lang", "tr")
    assert result.exit_code == 0, result.output
    assert "0,85" in result.stdout and "0.85" not in result.stdout
    back = cli("scheduler", "sm2", "--lang", "tr")
    assert "bertdrill scheduler fsrs --retention 0.85" in back.stdout
