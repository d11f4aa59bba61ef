"""FSRS fitted by fsrs-rs: what fsrs-rs is given, what it fits, and scheduling that is fsrs-rs's own.

The expected values come from fsrs-rs called directly here (``fsrs_rs_python``): its memory state for
the whole history at once (``memory_state``, a different path from review-by-review ``next_states``),
its ``next_states`` and ``next_interval``; never from our module.
"""

from __future__ import annotations

import math
import random
from datetime import date, timedelta

import fsrs_rs_python as rs
import pytest
from synthetic_learner import simulate

from bertdrill.core.scheduling.fitted import (
    MIN_FIT_REVIEWS,
    FittedFSRS,
    NotEnoughHistory,
    ParameterError,
    fit,
    fsrs_items,
)
from bertdrill.core.scheduling.registry import SchedulerName, scheduler_named
from bertdrill.core.scheduling.replay import replay
from bertdrill.core.scheduling.state import NEW, Grade

START = date(2026, 3, 1)
RATING = {0: 1, 1: 1, 2: 1, 3: 2, 4: 3, 5: 4}
NAMES = {1: "again", 2: "hard", 3: "good", 4: "easy"}


@pytest.fixture(scope="module")
def fitted():
    """The parameters fsrs-rs fits to the seeded synthetic learner (60 cards, 200 days)."""
    return fit(simulate(cards=60, days=200))


def random_history(rng: random.Random) -> list[tuple[date, int]]:
    """A card's log: first answers of study days, with same-day re-drills mixed in (they must not count)."""
    day, log = START, []
    for number in range(rng.randint(1, 15)):
        day += timedelta(days=0 if number == 0 else rng.choice((1, 2, 3, 7, 30, 200)))
        log.append((day, rng.randint(0, 5)))
        if rng.random() < 0.3:
            log.append((day, rng.randint(0, 5)))  # a re-drill: logged, never scheduling
    return log


def first_answers(log):
    seen, kept = set(), []
    for day, grade in log:
        if day not in seen:
            seen.add(day)
            kept.append((day, grade))
    return kept


def test_fsrs_rs_gets_one_review_per_card_and_day_with_delta_days_and_the_mapped_rating():
    log = [(START, 4), (START, 2), (START + timedelta(days=3), 0), (START + timedelta(days=3), 5),
           (START + timedelta(days=4), 3), (START + timedelta(days=14), 5)]
    training = fsrs_items([log, [(START, 5)]])
    days = [training.day(index) for index in range(len(training))]
    assert [(date.fromordinal(day), card) for day, card in zip(days, training.cards)] == [
        (START + timedelta(days=3), 0), (START + timedelta(days=4), 0), (START + timedelta(days=14), 0)]
    last = training.items[-1]
    assert repr(last) == ("FSRSItem { reviews: [FSRSReview { rating: 3, delta_t: 0 }, FSRSReview { rating: 1, delta_t: 3 }, "
                          "FSRSReview { rating: 2, delta_t: 1 }, FSRSReview { rating: 4, delta_t: 10 }] }")
    assert [len(item.reviews) for item in training.items] == [2, 3, 4]  # each review with the history before it


def test_items_come_in_the_order_of_their_study_day_across_cards():
    logs = [[(START, 4), (START + timedelta(days=9), 4)], [(START, 4), (START + timedelta(days=2), 4)]]
    training = fsrs_items(logs)
    assert [training.day(index) - START.toordinal() for index in range(len(training))] == [2, 9]
    assert list(training.cards) == [1, 0]
    assert len(training.before(START + timedelta(days=9))) == 1 and len(training.before(START)) == 0


@pytest.mark.parametrize("seed", range(4))
def test_scheduling_with_fitted_parameters_is_fsrs_rs_own(fitted, seed):
    """Review after review, the state is fsrs-rs's memory_state of the whole history, bit for bit, and the
    interval is Anki's rounding of fsrs-rs's next_interval; each preview is fsrs-rs's next_states."""
    rng = random.Random(seed)
    retention = rng.choice((0.7, 0.85, 0.9, 0.97))
    ours = FittedFSRS(fitted.parameters, retention)
    model = rs.FSRS(list(fitted.parameters))
    for _card in range(40):
        log = random_history(rng)
        state, reviews, last = NEW, [], None
        for day, grade in first_answers(log):
            previews = ours.next_states(state, today=day)
            if last is None:
                before = None
            else:
                assert state.stability is not None and state.difficulty is not None
                before = rs.MemoryState(state.stability, state.difficulty)
            expected_next = model.next_states(before, retention, 0 if last is None else (day - last).days)
            for each_grade, preview in previews.items():
                item = getattr(expected_next, NAMES[RATING[each_grade]])
                assert (preview.stability, preview.difficulty) == (item.memory.stability, item.memory.difficulty)
            state = ours.review(state, grade, today=day)
            assert state == previews.after(Grade(grade))
            reviews.append(rs.FSRSReview(RATING[grade], 0 if last is None else (day - last).days))
            memory = model.memory_state(rs.FSRSItem(list(reviews)))
            assert (state.stability, state.difficulty) == (memory.stability, memory.difficulty)
            interval = model.next_interval(memory.stability, retention, RATING[grade])
            assert state.interval == max(1, min(36500, math.floor(interval + 0.5)))
            assert state.due == day + timedelta(days=state.interval)
            last = day
        assert replay(ours, log) == state  # a switch's replay: the same state as answer after answer


def test_repetitions_ef_and_lapses_are_kept_as_default_fsrs_keeps_them(fitted):
    from bertdrill.core.scheduling.fsrs import FSRS

    rng = random.Random(9)
    for _card in range(30):
        log = random_history(rng)
        ours, theirs = replay(FittedFSRS(fitted.parameters), log), replay(FSRS(), log)
        assert (ours.repetitions, ours.ef100, ours.lapses) == (theirs.repetitions, theirs.ef100, theirs.lapses)


def test_a_stored_choice_with_fitted_parameters_schedules_with_them(fitted):
    scheduler = scheduler_named(SchedulerName.FSRS, 0.85, fitted.parameters)
    assert scheduler == FittedFSRS(fitted.parameters, 0.85)
    assert scheduler.review(NEW, 4, today=START).stability == pytest.approx(fitted.parameters[2], rel=1e-6)


def test_fitting_the_synthetic_learner_moves_the_parameters_from_the_defaults(fitted):
    reviews = sum(len(first_answers(log)) - 1 for log in simulate(cards=60, days=200) if log)
    assert fitted.reviews == reviews
    assert len(fitted.parameters) == 21
    assert sum(abs(a - b) > 0.01 for a, b in zip(fitted.parameters, rs.DEFAULT_PARAMETERS)) >= 10


def test_below_the_history_fsrs_rs_needs_it_says_how_many_reviews_are_missing():
    logs = [[(START, 4), (START + timedelta(days=1 + n % 5), 4)] for n in range(MIN_FIT_REVIEWS - 5)]
    with pytest.raises(NotEnoughHistory) as raised:
        fit(logs)
    assert raised.value.missing == 5
    assert str(raised.value) == ("fitting FSRS needs 64 reviews of cards seen on an earlier day; you have 59, 5 more "
                                 "are needed: FSRS keeps its default parameters")


def test_parameters_that_are_not_21_finite_numbers_are_refused():
    with pytest.raises(ParameterError):
        FittedFSRS(tuple(rs.DEFAULT_PARAMETERS[:20]))
    with pytest.raises(ParameterError):
        FittedFSRS((*rs.DEFAULT_PARAMETERS[:20], math.nan))


def test_reviews_fsrs_rs_sets_aside_as_outliers_do_not_count():
    """Twenty cards: over 200 reviews, but every card's first interval is rare, so fsrs-rs keeps none."""
    logs = simulate(cards=20, days=300, seed=7, new_per_day=2)
    assert len(fsrs_items(logs)) > 3 * MIN_FIT_REVIEWS
    with pytest.raises(NotEnoughHistory) as raised:
        fit(logs)
    assert raised.value.missing == MIN_FIT_REVIEWS
    assert "and fsrs-rs kept 0 of your" in str(raised.value)
