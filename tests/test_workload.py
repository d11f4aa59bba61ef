"""What each desired retention costs: fsrs-rs's simulator told the learner's own habits, the table and the chart."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import fsrs_rs_python as rs
import pytest
from learner_store import learner_store

from bertdrill.core.scheduling.fitted import default_parameters
from bertdrill.core.scheduling.workload import DAYS, RETENTIONS, SEED, Habits, best, habits, simulate, table

DURATIONS = {("new", 4): (50, 250_000), ("new", 1): (10, 90_000), ("review", 4): (300, 1_200_000),
             ("review", 0): (20, 160_000), ("review", 5): (80, 200_000), ("review", 3): (40, 240_000),
             ("redrill", 4): (70, 140_000)}


def test_habits_come_from_the_log_with_redrill_time_on_the_answers_that_brought_it():
    learner = habits(DURATIONS, cards=400, new_per_day=12)
    redrilled = 10 + 20 + 40  # first answers graded below 4: new Again, review Again, review Hard
    extra = 140_000 / redrilled / 1000
    assert learner.first_ratings == (10 / 60, 0.0, 50 / 60, 0.0)
    assert learner.review_ratings == (40 / 420, 300 / 420, 80 / 420)
    assert learner.first_seconds == pytest.approx((9.0 + extra, 10.0 + extra, 5.0, 10.0))  # 10 s where no data
    assert learner.review_seconds == pytest.approx((8.0 + extra, 6.0 + extra, 4.0, 2.5))
    assert (learner.cards, learner.new_per_day) == (400, 12)


def test_without_a_log_the_simulator_gets_fsrs_rs_rating_shares_and_ten_seconds_an_answer():
    learner = habits({}, cards=10, new_per_day=0)
    assert learner.first_ratings == (0.24, 0.094, 0.495, 0.171)
    assert learner.first_seconds == learner.review_seconds == (10.0, 10.0, 10.0, 10.0)
    assert learner.new_per_day == 1


def test_a_year_is_fsrs_rs_simulation_with_those_habits():
    learner = habits(DURATIONS, cards=300, new_per_day=10)
    ours = simulate(default_parameters(), 0.85, learner)
    defaults = rs.default_simulator_config()
    config = rs.SimulatorConfig(
        deck_size=300, learn_span=DAYS, max_cost_perday=1e12, max_ivl=36500.0,
        first_rating_prob=list(learner.first_ratings), review_rating_prob=list(learner.review_ratings),
        learn_limit=10, review_limit=3001, new_cards_ignore_review_limit=True,
        learning_step_transitions=defaults.learning_step_transitions,
        relearning_step_transitions=defaults.relearning_step_transitions,
        state_rating_costs=[list(learner.first_seconds), list(learner.review_seconds), [0.0] * 4],
        learning_step_count=0, relearning_step_count=0)
    result = rs.simulate(list(default_parameters()), 0.85, config, SEED)
    assert ours.reviews_per_day == sum(result.review_cnt_per_day) / DAYS
    assert ours.minutes_per_day == sum(result.cost_per_day) / DAYS / 60
    assert ours.remembered == result.memorized_cnt_per_day[-1]
    assert sum(result.learn_cnt_per_day) == 300  # every card met within the year at 10 a day


def test_higher_retention_costs_more_reviews_and_the_best_is_the_most_knowledge_per_minute():
    rows = table(default_parameters(), habits(DURATIONS, cards=300, new_per_day=10))
    assert [row.retention for row in rows] == list(RETENTIONS)
    assert rows[-1].reviews_per_day > 2 * rows[0].reviews_per_day
    assert rows[-1].remembered > rows[0].remembered
    assert best(rows).per_minute == max(row.per_minute for row in rows)
    assert all(row.per_minute == row.remembered / (row.minutes_per_day * DAYS) for row in rows)


def test_the_command_prints_the_table_and_writes_the_chart(cli, isolated_home, tmp_path, monkeypatch):
    isolated_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("BERTDRILL_NOW", "2025-07-20T10:00:00+00:00")
    learner_store(isolated_home / "bertdrill.db")
    chart = tmp_path / "workload.svg"
    result = cli("stats", "--workload", "--json", "--chart", str(chart))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [row["retention"] for row in data["retentions"]] == list(RETENTIONS)
    assert data["parameters"] == "default" and data["current_retention"] is None
    assert data["best_retention"] == max(data["retentions"], key=lambda row: row["remembered_per_minute"])["retention"]
    svg = ElementTree.parse(chart).getroot()
    axis = [element.text for element in svg.iter("{http://www.w3.org/2000/svg}text") if element.get("y") == "358.0"]
    assert axis == [f"{retention:.2f}" for retention in RETENTIONS]  # one label under each bar
    assert len(list(svg.iter("{http://www.w3.org/2000/svg}rect"))) == 1 + len(RETENTIONS)  # the background and bars
    assert len(list(svg.iter("{http://www.w3.org/2000/svg}circle"))) == len(RETENTIONS) + 1  # the best is ringed
    assert cli("scheduler", "fsrs", "--fit", "--retention", "0.85").exit_code == 0
    screen = cli("stats", "--workload").stdout.splitlines()
    assert screen[0].startswith("What each desired retention costs: a year of ")
    assert "with your fitted FSRS parameters and your own answer times." in screen[0]
    assert [line.split()[0] for line in screen[3:3 + len(RETENTIONS)]] == [f"{r:.2f}" for r in RETENTIONS]
    assert screen[3 + RETENTIONS.index(0.85)].endswith("yours")


def test_the_chart_goes_with_workload_and_is_never_written_over_a_folder(cli, tmp_path):
    result = cli("stats", "--chart", str(tmp_path / "x.svg"))
    assert result.exit_code == 1
    assert result.stderr == "Error: --chart goes with --workload: bertdrill stats --workload --chart FILE.svg\n"
    for alone in (["--force"], ["--workload", "--force"]):  # --force replaces a chart's file: none, nothing to force
        result = cli("stats", *alone)
        assert result.exit_code == 1
        assert result.stderr == "Error: --force goes with --chart: bertdrill stats --workload --chart FILE.svg --force\n"
    folder = tmp_path / "folder.svg"
    folder.mkdir()
    result = cli("stats", "--workload", "--chart", str(folder))
    assert result.exit_code == 1
    assert "Error: " in result.stderr and folder.is_dir() and not any(folder.iterdir())


def test_habits_is_a_frozen_record():
    learner = Habits(1, 1, (1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (1.0,) * 4, (1.0,) * 4)
    with pytest.raises(AttributeError):
        learner.cards = 2  # type: ignore[misc]  # assigning to the frozen field is what is tested
