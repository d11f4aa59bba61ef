"""An exam date: before it, no review leaves a card whose next interval jumps past the exam with predicted
recall below the target; on and after it, FSRS alone; ``--exam off`` gives FSRS's own schedules back exactly."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import date, timedelta

import pytest
from test_fitted import first_answers, random_history

from bertdrill.adapters.store import Store
from bertdrill.core.scheduling.exam import ExamScheduler, decay_of, plan, recall_on
from bertdrill.core.scheduling.fsrs import FSRS
from bertdrill.core.scheduling.replay import replay
from bertdrill.core.scheduling.state import NEW

EXAM = date(2026, 6, 1)


@pytest.mark.parametrize("target", [0.85, 0.95, 0.99])
def test_before_the_exam_every_card_comes_back_before_it_or_holds_the_target_on_the_day(target):
    inner = FSRS(0.85)
    exam = ExamScheduler(inner, EXAM, target)
    rng = random.Random(int(target * 100))
    for _card in range(60):
        state = NEW
        for day, grade in first_answers(random_history(rng)):
            plain = inner.review(state, grade, today=day)
            state = exam.review(state, grade, today=day)
            if day >= EXAM:
                assert state == plain  # the normal schedule resumes on the day
                continue
            assert (state.stability, state.difficulty) == (plain.stability, plain.difficulty)  # memory is FSRS's
            assert state.due is not None and plain.due is not None and state.due <= plain.due
            assert state.due <= EXAM or recall_on(state, EXAM, decay_of(inner)) >= target  # due by the day


def test_a_target_at_or_below_the_desired_retention_changes_nothing():
    """A due day past the exam already means recall on the exam day above the desired retention."""
    inner = FSRS(0.9)
    exam = ExamScheduler(inner, EXAM, 0.9)
    rng = random.Random(1)
    for _card in range(40):
        log = random_history(rng)
        assert replay(exam, log) == replay(inner, log)


def test_new_cards_the_pace_cannot_introduce_in_time_cannot_make_it():
    exam = ExamScheduler(FSRS(), date(2026, 3, 11), 0.9)
    states = [(f"card-{n}", NEW) for n in range(30)]
    found = plan(exam, states, date(2026, 3, 1), reviews_per_day=1000, new_per_day=2)
    assert found.days == 10
    assert found.cannot == tuple(f"card-{n}" for n in range(18, 30))  # 2 a day on the 9 days before the eve
    assert all(count >= 1 for count in found.needed.values())
    tight = plan(exam, states, date(2026, 3, 1), reviews_per_day=3, new_per_day=100)
    assert tight.reviews <= 3 * 10 < tight.reviews + sum(tight.needed[card] for card in tight.cannot)  # the pace's


@pytest.fixture
def fsrs_year(cli, isolated_home, monkeypatch):
    """A month of the shipped lesson, answered through the command, under FSRS with fuzz and no load balancer (a
    replay gives back fuzzed intervals exactly; balanced ones depend on the forecast of the day they were given)."""
    monkeypatch.setenv("BERTDRILL_NOW", "2026-03-02T09:00:00+00:00")
    assert cli("scheduler", "fsrs", "--spread", "fuzz").exit_code == 0
    for offset in range(0, 28, 7):
        day = date(2026, 3, 2) + timedelta(days=offset)
        monkeypatch.setenv("BERTDRILL_NOW", f"{day.isoformat()}T09:00:00+00:00")
        assert cli("review", "--new", "5", input="4\n" * 40).exit_code == 0
    monkeypatch.setenv("BERTDRILL_NOW", "2026-03-31T09:00:00+00:00")
    return isolated_home / "bertdrill.db"


def schedules(path):
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT * FROM schedule ORDER BY card_id").fetchall()


def test_an_exam_plan_replans_every_card_and_off_restores_fsrs_exactly(cli, fsrs_year):
    before = schedules(fsrs_year)
    result = cli("review", "--exam", "2026-04-10", "--exam-target", "0.97", input=":quit\n")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Exam on 2026-04-10: ") and lines[0].endswith(
        " cards replanned so their predicted recall on the day reaches 0.97.")
    assert lines[1].startswith("Before the exam: ")
    with Store.open(str(fsrs_year)) as store:
        choice = store.scheduler_choice()
        assert (choice.exam, choice.exam_target) == (date(2026, 4, 10), 0.97)
    planned = schedules(fsrs_year)
    assert planned != before  # some cards come back before the exam
    assert all(new[4] <= old[4] for new, old in zip(planned, before) if old[4] is not None)  # due only earlier
    shown = cli("stats").stdout
    assert "Exam on 2026-04-10: predicted recall on the day if you review nothing more (target 0.97)" in shown
    data = json.loads(cli("stats", "--json").stdout)["exam"]
    assert data["day"] == "2026-04-10" and data["lessons"][0]["lesson"] == "bert-basics"
    assert 0 < data["lessons"][0]["predicted_recall"] < 1
    ended = cli("review", "--exam", "off", input=":quit\n")
    assert ended.stdout.splitlines()[0].startswith("Exam plan ended: ")
    assert schedules(fsrs_year) == before  # every column of every card
    assert "Exam on" not in cli("stats").stdout


@pytest.mark.parametrize("options, message", [
    (("--exam", "2026-13-01"), "Error: --exam takes a day such as 2027-01-15, or off; got '2026-13-01'\n"),
    (("--exam", "2026-03-31"), "Error: the exam day 2026-03-31 is not after today (2026-03-31)\n"),
    (("--exam", "2026-04-10", "--exam-target", "0.5"), "Error: --exam-target must be from 0.70 to 0.99, got 0.5\n"),
    (("--exam-target", "0.9"), "Error: --exam-target goes with --exam: bertdrill review --exam YYYY-MM-DD "
                               "--exam-target R\n"),
])
def test_bad_exam_options_are_refused_and_nothing_changes(cli, fsrs_year, options, message):
    before = schedules(fsrs_year)
    result = cli("review", *options, input=":quit\n")
    assert result.exit_code == 1
    assert result.stderr == message
    assert schedules(fsrs_year) == before


def test_an_exam_plan_needs_fsrs(cli, monkeypatch):
    monkeypatch.setenv("BERTDRILL_NOW", "2026-03-02T09:00:00+00:00")
    result = cli("review", "--exam", "2026-04-10", input=":quit\n")
    assert result.exit_code == 1
    assert result.stderr == ("Error: an exam plan needs FSRS's predicted recall: switch with `bertdrill scheduler "
                             "fsrs` (or `--fit`) first\n")


def test_the_outlook_counts_one_card_in_the_singular_and_more_in_the_plural():
    from bertdrill.cli.exam import Outlook

    lessons = (("mini", 1, 0.9, 0, EXAM, 0.9), ("big", 12, 0.8, 3, EXAM, 0.9))
    shown = Outlook(EXAM, 0.9, lessons).lines()
    assert shown[2:] == ["  mini: 90.0% over 1 card, 0 below the target",
                         "  big: 80.0% over 12 cards, 3 below the target"]
    own = Outlook(None, None, lessons[:1]).lines()
    assert own[2] == "  mini, exam on 2026-06-01: 90.0% over 1 card, 0 below the target 0.90"


def test_the_outlook_writes_shares_the_turkish_way():
    from bertdrill.adapters import catalogs
    from bertdrill.cli.exam import Outlook
    from bertdrill.core import i18n

    with i18n.speaking(catalogs.translation("tr"), "tr"):
        shown = Outlook(EXAM, 0.9, (("mini", 1, 0.875, 0, EXAM, 0.9),)).lines()
    assert shown[2] == "  mini: 1 kart üzerinde %87,5, 0 tanesi hedefin altında"  # was 87,5 %: the sign goes first
