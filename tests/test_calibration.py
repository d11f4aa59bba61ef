"""Calibration: the figures equal an independent computation on a synthetic learner's year.

The independent side replays each log with ``sm2.review`` and py-fsrs's own Scheduler and
Card, and scores it the way srs-benchmark writes it (group labels ``round(a * b ** floor(log
x / log b))``, a weighted RMSE over the groups, scikit-learn's clipped log loss).
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta

import fsrs as library
import pytest
from synthetic_learner import simulate

from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.calibration import (
    MIN_REVIEWS,
    Calibration,
    both_schedulers,
    group,
    sm2_recall,
    verdict,
)
from bertdrill.core.scheduling.state import NEW


def calibrate(logs):
    calibration = Calibration(both_schedulers())
    for log in logs:
        calibration.add(log)
    return calibration.report()


@pytest.fixture(scope="module")
def year():
    return simulate(cards=500, days=365, seed=20261201)


def independent_records(logs):
    """(Δt, review number, earlier lapses, y, p SM-2, p FSRS) of every scored review."""
    scheduler = library.Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    rating = {0: 1, 1: 1, 2: 1, 3: 2, 4: 3, 5: 4}
    records = []
    for log in logs:
        days_seen, firsts = set(), []
        for day, grade in log:
            if day not in days_seen:
                days_seen.add(day)
                firsts.append((day, grade))
        schedule, card, lapses = NEW, library.Card(card_id=1, due=datetime(2020, 1, 1, tzinfo=UTC)), 0
        for number, (day, grade) in enumerate(firsts, start=1):
            moment = datetime(day.year, day.month, day.day, 15, tzinfo=UTC)
            if number > 1:
                elapsed = (day - firsts[number - 2][0]).days
                p_sm2 = math.exp(math.log(0.9) * elapsed / schedule.interval)  # srs-benchmark's SM-2 line
                p_fsrs = scheduler.get_card_retrievability(card, moment)
                records.append((elapsed, number, lapses, int(grade >= 3), p_sm2, p_fsrs))
                lapses += grade < 3
            schedule = sm2.review(schedule, grade, today=day)
            card, _ = scheduler.review_card(card, library.Rating(rating[grade]), moment)
    return records


def benchmark_rmse(records, column):
    buckets: defaultdict[tuple[float, float, float], list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for record in records:
        elapsed, number, lapses, y = record[:4]
        key = (round(2.48 * 3.62 ** math.floor(math.log(elapsed) / math.log(3.62)), 2),
               round(1.99 * 1.89 ** math.floor(math.log(number) / math.log(1.89)), 0),
               round(1.65 * 1.73 ** math.floor(math.log(lapses) / math.log(1.73)), 0) if lapses else 0)
        buckets[key][0] += 1
        buckets[key][1] += y
        buckets[key][2] += record[column] if column is not None else 0
    mean_y = sum(record[3] for record in records) / len(records)
    total = 0.0
    for count, recalled, sum_p in buckets.values():
        p = sum_p / count if column is not None else mean_y
        total += count * (recalled / count - p) ** 2
    return math.sqrt(total / len(records))


def sklearn_log_loss(ys, ps):
    eps = 2.220446049250313e-16
    return -sum(math.log(min(max(p, eps), 1 - eps)) if y else math.log(1 - min(max(p, eps), 1 - eps))
                for y, p in zip(ys, ps)) / len(ys)


def test_the_figures_match_an_independent_computation(year):
    report = calibrate(year)
    records = independent_records(year)
    ys = [record[3] for record in records]
    assert report.reviews == len(records) > 5000
    assert report.recalled == sum(ys)
    sm2_score, fsrs_score = report.scores
    for score, column in ((sm2_score, 4), (fsrs_score, 5)):
        ps = [record[column] for record in records]
        assert score.log_loss == pytest.approx(sklearn_log_loss(ys, ps), rel=1e-9)
        assert score.rmse_bins == pytest.approx(benchmark_rmse(records, column), rel=1e-9)
        bins = defaultdict(list)
        for y, p in zip(ys, ps):
            bins[min(int(p * 10), 9)].append((y, p))
        assert [(row.low, row.count) for row in score.table] == [(index / 10, len(bins[index])) for index in sorted(bins)]
        for row in score.table:
            members = bins[round(row.low * 10)]
            assert row.observed == pytest.approx(sum(y for y, _p in members) / len(members), rel=1e-12)
            assert row.predicted == pytest.approx(sum(p for _y, p in members) / len(members), rel=1e-12)
    mean = sum(ys) / len(ys)
    assert report.recall == pytest.approx(mean)
    assert report.baseline.log_loss == pytest.approx(sklearn_log_loss(ys, [mean] * len(ys)), rel=1e-9)
    assert report.baseline.rmse_bins == pytest.approx(benchmark_rmse(records, None), rel=1e-9)


def test_fsrs_predicts_the_synthetic_learner_better_than_sm2(year):
    report = calibrate(year)
    sm2_score, fsrs_score = report.scores
    assert fsrs_score.log_loss < sm2_score.log_loss
    assert report.best is fsrs_score
    assert verdict(report) == (f"FSRS predicts your recall better: log loss {fsrs_score.log_loss:.3f} vs "
                               f"{sm2_score.log_loss:.3f} (SM-2); your average recall alone scores "
                               f"{report.baseline.log_loss:.3f}.")
    assert verdict(report, lambda value: f"{value:.2f}") == (
        "FSRS predicts your recall better: log loss 0.37 vs 0.38 (SM-2); your average recall alone scores 0.38.")


def test_under_a_hundred_reviews_there_is_not_enough_history(year):
    few = []
    for log in year:
        few.append(log)
        if calibrate(few).reviews >= MIN_REVIEWS - 10:
            break
    report = calibrate(few)
    assert 0 < report.reviews < MIN_REVIEWS
    assert not report.enough and report.best is None
    assert verdict(report).startswith(f"Not enough history yet: {report.reviews} of the 100 reviews")


def test_only_a_review_after_an_earlier_study_day_is_scored():
    day = date(2026, 5, 1)
    log = [(day, 4), (day, 2), (day, 5),  # one scheduling answer and two re-drills
           (day + timedelta(days=1), 1), (day + timedelta(days=1), 4),
           (day + timedelta(days=7), 5)]
    calibration = Calibration(both_schedulers())
    calibration.add(log)
    report = calibration.report()
    assert (report.reviews, report.recalled) == (2, 1)  # day 2 (forgotten) and day 8 (recalled)
    sm2_score = report.scores[0]
    first = sm2.review(NEW, 4, today=day)  # interval 1
    second = sm2.review(first, 1, today=day + timedelta(days=1))  # interval 1 again
    expected = [0.9 ** (1 / first.interval), 0.9 ** (6 / second.interval)]
    assert sm2_score.log_loss == pytest.approx((-math.log(1 - expected[0]) - math.log(expected[1])) / 2)


def test_the_groups_are_srs_benchmarks():
    assert group(1, 2, 0) == (0, 1, -1)
    assert group(3, 3, 1) == (0, 1, 0)
    assert group(4, 4, 2) == (1, 2, 1)  # 3.62 < 4; 1.89² < 4; 1.73 < 2
    assert group(13, 7, 3) == (1, 3, 2)  # 3.62² = 13.1; 1.89³ = 6.75; 1.73² = 2.99
    assert group(14, 6, 0) == (2, 2, -1)


def test_sm2s_prediction_is_90_percent_on_the_due_day():
    state = sm2.review(sm2.review(NEW, 4, today=date(2026, 1, 1)), 4, today=date(2026, 1, 2))
    assert state.due is not None
    assert sm2_recall(state, state.due) == pytest.approx(0.9)
    assert sm2_recall(state, state.due + timedelta(days=state.interval)) == pytest.approx(0.81)
    with pytest.raises(ValueError):
        sm2_recall(NEW, date(2026, 1, 1))
