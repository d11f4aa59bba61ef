"""``bertdrill scheduler fsrs --fit``: fitted on the learner's own log, stored per learner with its date and
review count, every earlier set kept, and the switch the same all-or-nothing replay as any other."""

from __future__ import annotations

from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from functools import partial

import pytest
from learner_store import learner_store
from postgres import class_learners
from test_scheduler_cli import NOW, schedules

from bertdrill.adapters.store import Store
from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.fitted import FittedFSRS, fit, fsrs_items
from bertdrill.core.scheduling.fsrs import FSRS
from bertdrill.core.scheduling.registry import SchedulerName
from bertdrill.core.scheduling.replay import replay
from bertdrill.core.scheduling.spread import Spread, Spreading
from bertdrill.core.scheduling.state import AnswerKind
from bertdrill.ports import CardLog, FittedSet, SchedulerChoice


@pytest.fixture
def year(isolated_home, monkeypatch):
    isolated_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    return learner_store(isolated_home / "bertdrill.db")


def test_fit_stores_the_parameters_with_date_and_count_and_replays_every_card(cli, year, isolated_home):
    path = isolated_home / "bertdrill.db"
    result = cli("scheduler", "fsrs", "--fit")
    assert result.exit_code == 0, result.output
    expected = fit(year.values())  # fsrs-rs is deterministic: the same log, the same parameters
    with Store.open(str(path)) as store:
        choice = store.scheduler_choice()
        assert choice.name == "fsrs" and choice.retention == 0.9
        assert choice.fitted is not None
        assert (choice.fitted.number, choice.fitted.parameters, choice.fitted.reviews) == (
            1, expected.parameters, expected.reviews)
        assert abs(choice.fitted.fitted_at - datetime.fromisoformat(NOW)) < timedelta(minutes=5)  # the clock's
        scheduler = FittedFSRS(expected.parameters, 0.9)
        assert all(store.state(card_id).schedule == replay(Spread(scheduler), log, card_id)  # fuzzed, as by default
                   for card_id, log in year.items())
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Switched to FSRS, desired retention 0.90, parameters set 1: fitted "
                               f"2025-07-20 on {expected.reviews:,} reviews: ")
    assert lines[-1] == "To undo, switch back: bertdrill scheduler sm2"
    shown = cli("scheduler").stdout
    assert f"  set 1: fitted 2025-07-20 on {expected.reviews:,} reviews\n" in shown


def test_every_set_is_kept_and_switching_between_them_is_exact(cli, year, isolated_home):
    path = isolated_home / "bertdrill.db"
    assert cli("scheduler", "--spread", "fuzz").exit_code == 0  # SM-2 replayed with fuzz: what a switch gives back
    under_sm2 = schedules(path)
    assert cli("scheduler", "fsrs", "--fit", "--retention", "0.85").exit_code == 0
    first = schedules(path)
    assert first != under_sm2
    again = cli("scheduler", "fsrs", "--fit")  # the same log: a second set, equal numbers, the first kept
    assert again.exit_code == 0
    assert again.stdout.splitlines()[-1] == "To undo, switch back: bertdrill scheduler fsrs --retention 0.85 --parameters 1"
    with Store.open(str(path)) as store:
        sets = store.fitted_sets()
        assert [each.number for each in sets] == [2, 1]
        assert sets[0].parameters == sets[1].parameters
        assert store.scheduler_choice().retention == 0.85  # a new fit keeps the retention in use
    assert cli("scheduler", "fsrs", "--parameters", "1").stdout.startswith("Switched to ")
    assert schedules(path) == first
    result = cli("scheduler", "fsrs", "--parameters", "default")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "To undo, switch back: bertdrill scheduler fsrs --retention 0.85 --parameters 1"
    with Store.open(str(path)) as store:
        assert store.scheduler_choice() == SchedulerChoice(SchedulerName.FSRS, 0.85, spread=Spreading.FUZZ)
        assert all(store.state(card_id).schedule == replay(Spread(FSRS(0.85), Spreading.FUZZ), log, card_id)
                   for card_id, log in year.items())
    assert cli("scheduler", "sm2").exit_code == 0
    assert schedules(path) == under_sm2  # every column of every card


def test_below_the_history_fsrs_rs_needs_it_says_how_many_are_missing_and_changes_nothing(cli, isolated_home,
                                                                                          monkeypatch):
    monkeypatch.setenv("BERTDRILL_NOW", "2025-03-03T09:00:00+00:00")
    assert cli("review", "--new", "3", input="4\n4\n4\n").exit_code == 0
    monkeypatch.setenv("BERTDRILL_NOW", "2025-03-05T09:00:00+00:00")
    assert cli("review", input="4\n4\n4\n").exit_code == 0
    before = schedules(isolated_home / "bertdrill.db")
    logs: list[CardLog] = []
    with Store.open(None) as store:
        store.card_logs(logs.append)
    have = len(fsrs_items(logs))
    assert 1 <= have <= 3
    result = cli("scheduler", "fsrs", "--fit")
    assert result.exit_code == 1
    assert result.stderr.endswith(f"Error: fitting FSRS needs 64 reviews of cards seen on an earlier day; you have {have}, "
                                  f"{64 - have} more are needed: FSRS keeps its default parameters\n")
    assert schedules(isolated_home / "bertdrill.db") == before
    with Store.open(None) as store:
        assert store.scheduler_choice() == SchedulerChoice()
        assert store.fitted_sets() == []


@pytest.mark.parametrize("options, message", [
    (("sm2", "--fit"), "Error: --fit is a setting of FSRS: use it with `bertdrill scheduler fsrs`\n"),
    (("fsrs", "--fit", "--parameters", "1"),
     "Error: --fit makes a new parameter set; --parameters picks a stored one: give one of them\n"),
    (("fsrs", "--parameters", "7"), "Error: --parameters takes `default` or the number of a fitted set (none yet: "
                                    "`bertdrill scheduler fsrs --fit`), got '7'\n"),
])
def test_fit_and_parameters_options_are_checked(cli, options, message):
    result = cli("scheduler", *options)
    assert result.exit_code == 1
    assert result.stderr == message


def test_a_class_keeps_each_learners_fitted_set_on_postgresql(postgres):
    """Each learner's sets are theirs: stored under their own role, numbered per learner, invisible to another
    learner (row-level security), and the switch replays only their cards. (The parameters come from the synthetic
    learner's year: fitting is pure, and answering that year through a server would take minutes.)"""
    from synthetic_learner import simulate

    from bertdrill.adapters.lessons import all_cards, load_lessons

    cards = [card for card in all_cards(load_lessons()) if card.kind.reviewed][:6]
    ayse, bora = "ayse", "bora"
    with class_learners(postgres, cards, ayse, bora) as learners:
        logs: dict[tuple[str, str], CardLog] = {}
        for learner in (ayse, bora):
            with nullcontext(learners[learner]) as own:
                for number, card in enumerate(cards):
                    day = datetime(2025, 3, 1, 9, tzinfo=UTC)
                    for grade in (4, 5, 2, 4)[: 1 + number % 4]:
                        own.answer(card.id, grade=grade, kind=AnswerKind.REVIEW, reviewed_at=day, study_day=day.date(),
                                   reschedule=partial(sm2.review, quality=grade, today=day.date()))
                        logs.setdefault((learner, card.id), []).append((day.date(), grade))
                        day += timedelta(days=3)
        fitted = fit(simulate(cards=60, days=200))
        for learner, retention in ((ayse, 0.9), (bora, 0.8)):
            with nullcontext(learners[learner]) as own:
                chosen = SchedulerChoice(SchedulerName.FSRS, retention, FittedSet(0, fitted.parameters, fitted.reviews,
                                                                      datetime(2025, 4, 1, tzinfo=UTC)))
                switch = own.switch_scheduler(chosen, FittedFSRS(fitted.parameters, retention))
                assert switch.choice == SchedulerChoice(SchedulerName.FSRS, retention, FittedSet(
                    1, fitted.parameters, fitted.reviews, datetime(2025, 4, 1, tzinfo=UTC)))  # every float as stored
                assert own.scheduler_choice() == switch.choice
                assert [each.number for each in own.fitted_sets()] == [1]  # only their own
                scheduler = FittedFSRS(fitted.parameters, retention)
                assert all(own.state(card.id).schedule == replay(scheduler, logs[(learner, card.id)]) for card in cards)
