"""Fitted FSRS scored out of sample (time-series splits) beside default FSRS and SM-2, on synthetic learners
whose memory is known: the seeded power-curve learner, and one whose memory is FSRS-6 with known parameters."""

from __future__ import annotations

import math
import random
from datetime import UTC, date, datetime, timedelta

import fsrs as py_fsrs
import pytest
from synthetic_learner import TRUE_PARAMETERS, simulate, simulate_fsrs

from bertdrill.core.scheduling.calibration import out_of_sample
from bertdrill.core.scheduling.evaluation import FittedForecast, auc, recall, time_series_splits
from bertdrill.core.scheduling.fitted import default_parameters, fit
from bertdrill.core.scheduling.replay import scheduling_answers


@pytest.fixture(scope="module")
def power_learner():
    return simulate()


def test_fitted_fsrs_beats_default_fsrs_and_both_beat_sm2_on_reviews_they_never_saw(power_learner):
    report = out_of_sample(power_learner)
    scores = {score.name: score for score in report.scores}
    assert list(scores) == ["sm2", "fsrs", "fsrs-fitted"]
    assert scores["fsrs-fitted"].log_loss < scores["fsrs"].log_loss < scores["sm2"].log_loss
    assert scores["fsrs-fitted"].auc > scores["fsrs"].auc > scores["sm2"].auc
    assert scores["fsrs-fitted"].rmse_bins < scores["sm2"].rmse_bins
    splits = time_series_splits(power_learner)
    everything = splits.reviews
    assert 0.75 * everything < report.reviews < 0.9 * everything  # the first of six parts only trains


def test_the_scored_reviews_are_those_after_the_first_part_and_each_is_predicted_by_the_past():
    logs = simulate(cards=200, days=300)
    splits = time_series_splits(logs)
    assert len(splits.starts) == 5 and list(splits.starts) == sorted(set(splits.starts))
    days = sorted(day for log in logs for day, _grade in list(scheduling_answers(log))[1:])
    for start, parameters in zip(splits.starts, splits.parameters):
        before = [log for log in ([(day, grade) for day, grade in log if day < start] for log in logs) if log]
        assert parameters == fit(before).parameters  # fitted on the reviews before the part, and nothing else
    report = out_of_sample(logs)
    assert report.reviews == sum(day >= splits.starts[0] for day in days)


def test_the_batched_scores_are_those_of_replaying_each_model_review_by_review():
    """out_of_sample takes every FSRS state from fsrs-rs in batches and steps SM-2 inline; replaying each model
    review after review (fsrs-rs's next_states, sm2.review) gives the very same figures, bit for bit. A log with
    same-day answers, lapses and a card answered once."""
    from bertdrill.core.scheduling.calibration import Calibration, SM2Forecast

    logs = simulate(cards=150, days=240) + [[(date(2025, 3, 1), 4)]]
    splits = time_series_splits(logs)
    reference = Calibration([SM2Forecast(), FittedForecast(default_parameters(), "fsrs"), splits.forecast()],
                            since=splits.starts[0])
    for log in logs:
        reference.add(log)
    assert out_of_sample(logs) == reference.report()


def test_fitting_recovers_a_learner_whose_memory_is_fsrs_with_known_parameters():
    """The parameters that data can pin (the initial stabilities of the common first ratings, Again and Good)
    come back close, and the fitted model's recall is far closer to the true model's than the defaults' is."""
    logs = simulate_fsrs(cards=300, days=365)
    fitted = fit(logs).parameters
    assert fitted[0] == pytest.approx(TRUE_PARAMETERS[0], rel=0.25)  # Again's first stability
    assert fitted[2] == pytest.approx(TRUE_PARAMETERS[2], rel=0.25)  # Good's
    models = [FittedForecast(each) for each in (TRUE_PARAMETERS, fitted, default_parameters())]
    error = [0.0, 0.0]
    count = 0
    for log in logs:
        memories, last = [model.start() for model in models], None
        for day, grade in scheduling_answers(log):
            if last is not None:
                true, fit_recall, default_recall = (model.recall(memory, day) for model, memory in zip(models, memories))
                error[0] += abs(fit_recall - true)
                error[1] += abs(default_recall - true)
                count += 1
            memories = [model.review(memory, grade, day) for model, memory in zip(models, memories)]
            last = day
    assert error[0] / count < 0.6 * error[1] / count


def test_the_forgetting_curve_is_py_fsrs_retrievability_for_the_same_parameters():
    scheduler = py_fsrs.Scheduler(parameters=TRUE_PARAMETERS)
    rng = random.Random(3)
    for _ in range(200):
        stability, elapsed = rng.uniform(0.1, 500), rng.randint(1, 2000)
        reviewed = datetime(2026, 1, 1, tzinfo=UTC)
        card = py_fsrs.Card(card_id=1, state=py_fsrs.State.Review, stability=stability, difficulty=5.0,
                            due=reviewed, last_review=reviewed)
        expected = scheduler.get_card_retrievability(card, reviewed + timedelta(days=elapsed))
        assert recall(stability, elapsed, TRUE_PARAMETERS[20]) == pytest.approx(expected, rel=1e-12)


def test_auc_is_the_share_of_recalled_forgotten_pairs_ranked_right():
    assert auc([0.9, 0.8, 0.3, 0.2], [1, 1, 0, 0]) == 1.0
    assert auc([0.1, 0.9], [1, 0]) == 0.0
    assert auc([0.5, 0.5, 0.5], [1, 0, 1]) == 0.5  # ties count half
    rng = random.Random(5)
    predictions = [rng.random() for _ in range(300)]
    outcomes = [int(rng.random() < p) for p in predictions]
    pairs = [(p, q) for p, y in zip(predictions, outcomes) if y for q, z in zip(predictions, outcomes) if not z]
    expected = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p, q in pairs) / len(pairs)
    assert auc(predictions, outcomes) == pytest.approx(expected, rel=1e-12)
    assert math.isnan(auc([0.3, 0.4], [1, 1]))


def test_a_short_log_scores_nothing_out_of_sample():
    logs = [[(date(2026, 1, 1), 4), (date(2026, 1, 3), 4)]]
    report = out_of_sample(logs)
    assert report.reviews == 0 and not report.enough
