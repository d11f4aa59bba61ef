"""Fuzz, the load balancer and exams per lesson through the commands, on SQLite and on a PostgreSQL class."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import nullcontext
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path

from postgres import class_learners

from bertdrill.adapters.store import Store
from bertdrill.core.scheduling.exam import ExamScheduler, LessonExams
from bertdrill.core.scheduling.fsrs import FSRS
from bertdrill.core.scheduling.registry import SchedulerName, Spreading
from bertdrill.core.scheduling.replay import replay
from bertdrill.core.scheduling.sm2 import SM2
from bertdrill.core.scheduling.spread import Spread, constrained_fuzz_bounds
from bertdrill.core.scheduling.state import AnswerKind
from bertdrill.ports import CardLog, LessonExam, SchedulerChoice

ROOT = Path(__file__).parent.parent
LESSONS = ("--file", str(ROOT / "decks" / "bert-basics.toml"), "--file", str(ROOT / "tests" / "lessons" / "minimal.toml"))
MONDAY = "2025-03-03T09:00:00+00:00"


def schedules(path) -> list[tuple[str, int, str | None, float | None]]:
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT card_id, interval, due, stability FROM schedule ORDER BY card_id").fetchall()


def test_the_preview_shows_the_day_the_balanced_answer_gives(cli, monkeypatch):
    """A card at repetitions 2, interval 6, EF 2.50: SM-2 gives 15 days; fuzzed and balanced, a day of 13-17,
    the same in the preview as in the answer."""
    from bertdrill.adapters.lessons import all_cards, load_lessons
    from bertdrill.app.session import record_attempt

    monkeypatch.setenv("BERTDRILL_NOW", MONDAY)
    with Store.open() as db:
        db.sync(all_cards(load_lessons()))
        for offset, kind in ((-7, AnswerKind.NEW), (-6, AnswerKind.REVIEW)):
            record_attempt(db, "bert-basics/bert-definition", 4, kind=kind,
                           moment=datetime.fromisoformat(MONDAY) + timedelta(days=offset))
    result = cli("review", "--new", "0", input="4\n")
    previewed = re.search(r"Comes back: 0–2 tomorrow · 3–5 in (\d+) days\n", result.stdout)
    saved = re.search(r"Saved: grade 4 · next review in (\d+) days", result.stdout)
    assert previewed and saved, result.stdout
    assert previewed[1] == saved[1] and 13 <= int(saved[1]) <= 17
    assert constrained_fuzz_bounds(15, 7, 36500) == (13, 17)


def test_the_spread_is_shown_switched_and_switched_back(cli, monkeypatch):
    monkeypatch.setenv("BERTDRILL_NOW", MONDAY)
    assert "Intervals: fuzzed and spread by the load balancer, as Anki does" in cli("scheduler").stdout
    result = cli("scheduler", "--spread", "fuzz")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "To undo, switch back: bertdrill scheduler sm2 --spread balance"
    assert "Intervals: fuzzed, as Anki does, without the load balancer" in cli("scheduler").stdout
    assert cli("scheduler", "fsrs").exit_code == 0  # the spread stays
    with Store.open() as store:
        assert store.scheduler_choice() == SchedulerChoice(SchedulerName.FSRS, 0.9, spread=Spreading.FUZZ)
    refused = cli("scheduler", "--spread", "sometimes")
    assert refused.exit_code == 2 and "'sometimes' is not one of 'off', 'fuzz', 'balance'" in refused.output


def test_switching_replays_with_the_fuzz_and_switching_back_is_exact(cli, monkeypatch, isolated_home):
    """Answers given under fuzz alone, day after day; a switch to FSRS and back to SM-2 gives every schedule back
    exactly (the fuzz is seeded by the card and the day); each stored state is the fuzzed replay of its log."""
    monkeypatch.setenv("BERTDRILL_NOW", MONDAY)
    assert cli("scheduler", "--spread", "fuzz").exit_code == 0
    day = date(2025, 3, 3)
    for _round in range(8):
        monkeypatch.setenv("BERTDRILL_NOW", f"{day.isoformat()}T09:00:00+00:00")
        assert cli("review", "--new", "10", input="4\n" * 40).exit_code == 0
        day += timedelta(days=4)
    path = isolated_home / "bertdrill.db"
    before = schedules(path)
    with Store.open() as store:
        logs: dict[str, CardLog] = {answer.card_id: [] for answer in store.answers()}
        for answer in store.answers():
            logs[answer.card_id].append((answer.study_day, answer.grade))
        states = {card: store.state(card).schedule for card in logs}
    assert all(states[card] == replay(Spread(SM2(), Spreading.FUZZ), log, card) for card, log in logs.items())
    assert any(states[card] != replay(SM2(), log) for card, log in logs.items())  # some were fuzzed
    assert cli("scheduler", "fsrs").exit_code == 0
    assert schedules(path) != before
    assert cli("scheduler", "sm2").exit_code == 0
    assert schedules(path) == before


def test_an_exam_per_lesson_plans_its_cards_and_stats_shows_each_lessons_day(cli, monkeypatch, isolated_home):
    """Two lessons under FSRS; an exam for "mini" alone replans only mini's cards, exactly as an exam for every
    lesson replans them; stats shows each lesson on its own day; ending it gives FSRS's schedules back."""
    from bertdrill.adapters.lessons import all_cards, load_lessons
    from bertdrill.core.scheduling.spread import card_scheduler

    monkeypatch.setenv("BERTDRILL_NOW", "2026-03-02T09:00:00+00:00")
    assert cli("scheduler", "fsrs", "--spread", "fuzz").exit_code == 0
    cards = [card for card in all_cards(load_lessons([Path(each) for each in LESSONS[1::2]])) if card.kind.reviewed]
    assert {card.lesson_id for card in cards} == {"bert-basics", "mini"}
    fuzzed = Spread(FSRS(), Spreading.FUZZ)
    with Store.open() as db:  # a month of reviews, every card Good (or Hard) every week, as review would log them
        db.sync(cards)
        for number, card in enumerate(cards):
            for offset in range(0, 28, 7):
                day, grade = date(2026, 3, 2) + timedelta(days=offset), 3 + (number + offset) % 2
                db.answer(card.id, grade=grade, kind=AnswerKind.REVIEW, reviewed_at=datetime(2026, 3, 2, 9, tzinfo=UTC)
                          + timedelta(days=offset), study_day=day, once_per_day=True,
                          reschedule=partial(card_scheduler(fuzzed, card.id).review, grade=grade, today=day))
    monkeypatch.setenv("BERTDRILL_NOW", "2026-03-31T09:00:00+00:00")
    path = isolated_home / "bertdrill.db"
    assert cli("review", *LESSONS, "--new", "0", input=":quit\n").exit_code == 0  # every card has its row now
    before = dict((row[0], row) for row in schedules(path))
    result = cli("review", *LESSONS, "--lesson", "mini", "--exam", "2026-04-06", "--exam-target", "0.97",
                 input=":quit\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == ("Exam of mini on 2026-04-06: its cards replanned so their predicted "
                                             "recall on the day reaches 0.97.")
    with Store.open(str(path)) as store:
        choice = store.scheduler_choice()
        assert choice.exam is None and choice.lesson_exams == (LessonExam("mini", date(2026, 4, 6), 0.97),)
        logs: dict[str, CardLog] = {}
        for answer in store.answers():
            logs.setdefault(answer.card_id, []).append((answer.study_day, answer.grade))
        planned = Spread(ExamScheduler(FSRS(), date(2026, 4, 6), 0.97), Spreading.FUZZ)
        for card_id, log in logs.items():
            expected = replay(planned if card_id.startswith("mini/") else Spread(FSRS(), Spreading.FUZZ), log, card_id)
            assert store.state(card_id).schedule == expected
    after = dict((row[0], row) for row in schedules(path))
    assert all(after[card] == before[card] for card in before if not card.startswith("mini/"))
    assert any(after[card] != before[card] for card in before if card.startswith("mini/"))
    # an exam for every lesson beside it: bert-basics takes that one, mini keeps its own
    assert cli("review", *LESSONS, "--exam", "2026-05-01", input=":quit\n").exit_code == 0
    shown = cli("stats", *LESSONS).stdout
    assert "Exams: predicted recall on each lesson's exam day if you review nothing more" in shown
    assert re.search(r"  bert-basics, exam on 2026-05-01: [\d.]+% over \d+ cards, \d+ below the target 0.90", shown)
    assert re.search(r"  mini, exam on 2026-04-06: [\d.]+% over \d+ cards, \d+ below the target 0.97", shown)
    data = json.loads(cli("stats", *LESSONS, "--json").stdout)["exam"]
    assert data["day"] == "2026-05-01"
    assert [(each["lesson"], each["day"], each["target"]) for each in data["lessons"]] == [
        ("bert-basics", "2026-05-01", 0.9), ("mini", "2026-04-06", 0.97)]
    assert cli("review", *LESSONS, "--exam", "off", input=":quit\n").exit_code == 0
    ended = cli("review", *LESSONS, "--lesson", "mini", "--exam", "off", input=":quit\n")
    assert ended.stdout.splitlines()[0].startswith("Exam plan of mini ended: ")
    assert dict((row[0], row) for row in schedules(path)) == before
    assert "Exam" not in cli("stats", *LESSONS).stdout


def test_a_class_keeps_each_learners_spread_and_lesson_exams_on_postgresql(postgres):
    """Each learner's spread and exams are theirs (row-level security on lesson_exam too); a switch on the server
    replays each learner's cards with their own fuzz and exam, exactly as the pure replay does."""
    from bertdrill.adapters.lessons import all_cards, load_lessons
    from bertdrill.core.scheduling.spread import card_scheduler

    cards = [card for card in all_cards(load_lessons()) if card.kind.reviewed][:8]
    ayse, bora = "ayse", "bora"
    with class_learners(postgres, cards, ayse, bora) as learners:
        exam = date(2025, 4, 10)
        chosen = {ayse: SchedulerChoice(SchedulerName.FSRS, 0.9, spread=Spreading.FUZZ,
                                        lesson_exams=(LessonExam("bert-basics", exam, 0.95),)),
                  bora: SchedulerChoice(SchedulerName.FSRS, 0.85, spread=Spreading.OFF)}
        scheduler = {ayse: Spread(LessonExams(FSRS(0.9), (("bert-basics", exam, 0.95),)), Spreading.FUZZ),
                     bora: Spread(FSRS(0.85), Spreading.OFF)}
        for learner in (ayse, bora):
            with nullcontext(learners[learner]) as own:
                own.switch_scheduler(chosen[learner], scheduler[learner])
                for number, card in enumerate(cards):
                    day = datetime(2025, 3, 1, 9, tzinfo=UTC)
                    for grade in (4, 5, 3, 4, 5)[: 2 + number % 4]:
                        own.answer(card.id, grade=grade, kind=AnswerKind.REVIEW, reviewed_at=day, study_day=day.date(),
                                   reschedule=partial(card_scheduler(scheduler[learner], card.id).review, grade=grade,
                                                      today=day.date()))
                        day += timedelta(days=5 + number)
                live = {card.id: own.state(card.id).schedule for card in cards}
                switch = own.switch_scheduler(chosen[learner], scheduler[learner])  # the same choice: replayed
                assert switch.choice == chosen[learner] == own.scheduler_choice()
                assert {card.id: own.state(card.id).schedule for card in cards} == live  # replay == answering
        with nullcontext(learners[bora]) as other:
            assert other.scheduler_choice().lesson_exams == ()  # ayse's exam row is not bora's to see
        with Store.open(postgres.url) as teacher:
            rows = teacher._run(lambda connection: connection.exec_driver_sql(
                "SELECT learner, lesson_id FROM lesson_exam").all())
            assert rows == [(learners[ayse].learner, "bert-basics")]
