"""FSRS through py-fsrs: every state and interval is py-fsrs's own for the same history.

The expected values are computed here with the library directly (its Scheduler and Card,
reviews at a fixed time of each study day), never copied from our module.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import fsrs as library
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bertdrill.core.errors import BertdrillError
from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.fsrs import FSRS, RATING_OF_GRADE, RetentionError
from bertdrill.core.scheduling.registry import SchedulerName, scheduler_named
from bertdrill.core.scheduling.replay import replay
from bertdrill.core.scheduling.state import NEW

START = date(2026, 3, 1)


def library_history(grades_and_gaps, retention=0.9):
    """py-fsrs's own card after each review, at 09:30 UTC of each study day (no steps, no fuzz)."""
    scheduler = library.Scheduler(desired_retention=retention, learning_steps=(), relearning_steps=(),
                                  enable_fuzzing=False)
    card = library.Card(card_id=1, due=datetime(2026, 1, 1, tzinfo=UTC))
    moment = datetime(START.year, START.month, START.day, 9, 30, tzinfo=UTC)
    cards = []
    for grade, gap in grades_and_gaps:
        moment += timedelta(days=gap)
        rating = {0: library.Rating.Again, 1: library.Rating.Again, 2: library.Rating.Again,
                  3: library.Rating.Hard, 4: library.Rating.Good, 5: library.Rating.Easy}[grade]
        card, _log = scheduler.review_card(card, rating, moment)
        cards.append((moment.date(), card))
    return cards


def ours(grades_and_gaps, retention=0.9):
    scheduler = FSRS(retention)
    state, day, states = NEW, START, []
    for grade, gap in grades_and_gaps:
        day += timedelta(days=gap)
        state = scheduler.review(state, grade, today=day)
        states.append((day, state))
    return states


def assert_same(ours_states, library_cards):
    assert len(ours_states) == len(library_cards)
    for (day, state), (library_day, card) in zip(ours_states, library_cards):
        assert day == library_day
        assert card.state == library.State.Review  # no steps: Review from the first answer on
        assert state.stability == card.stability  # exactly: the same floats, computed by the same code
        assert state.difficulty == card.difficulty
        assert state.due == card.due.date()
        assert state.interval == (card.due - card.last_review).days
        assert state.interval >= 1


def test_a_first_review_gives_each_rating_its_initial_stability():
    for grade, expected in [(0, 0.212), (2, 0.212), (3, 1.2931), (4, 2.3065), (5, 8.2956)]:
        state = FSRS().review(NEW, grade, today=START)
        assert state.stability == expected  # py-fsrs's default parameters w[0..3]
        assert state.interval == max(1, round(expected))  # at 90 %, the interval is the stability
        assert state.due == START + timedelta(days=state.interval)


def test_a_known_history_matches_the_library():
    history = [(4, 0), (4, 2), (3, 11), (5, 30), (1, 150), (4, 4), (4, 10), (2, 30), (5, 1)]
    assert_same(ours(history), library_history(history))
    states = [state for _day, state in ours(history)]
    assert [state.interval for state in states] == [2, 11, 32, 140, 4, 10, 22, 2, 4]  # py-fsrs 6.3.2 gave these
    assert [state.repetitions for state in states] == [1, 2, 3, 4, 0, 1, 2, 0, 1]
    assert [state.lapses for state in states] == [0, 0, 0, 0, 1, 1, 1, 2, 2]


histories = st.lists(st.tuples(st.integers(0, 5), st.integers(1, 400)), min_size=1, max_size=25)


@settings(max_examples=300, deadline=None)
@given(histories, st.sampled_from([0.7, 0.8, 0.9, 0.95, 0.97]))
def test_any_history_gives_the_librarys_states_and_intervals(history, retention):
    assert_same(ours(history, retention), library_history(history, retention))


@settings(max_examples=100, deadline=None)
@given(histories)
def test_replaying_a_log_with_same_day_repeats_gives_the_librarys_card(history):
    """The session's re-drills (later answers the same study day) do not reach FSRS."""
    log, day = [], START
    for grade, gap in history:
        day += timedelta(days=gap)
        log += [(day, grade), (day, 4), (day, 0)]
    state = replay(FSRS(), log)
    (_last_day, card), *_ = reversed(library_history(history))
    assert (state.stability, state.difficulty, state.due) == (card.stability, card.difficulty, card.due.date())


def test_next_states_are_what_each_grade_would_give():
    scheduler, state = FSRS(), FSRS().review(NEW, 4, today=START)
    assert state.due is not None
    today = state.due + timedelta(days=3)
    previews = scheduler.next_states(state, today=today)
    assert [grade for grade, _state in previews.items()] == [0, 1, 2, 3, 4, 5]
    for grade, preview in previews.items():
        assert preview == scheduler.review(state, grade, today=today)
    again = [(preview.due, preview.stability, preview.difficulty) for preview in (previews.blackout, previews.wrong, previews.almost)]
    assert again[0] == again[1] == again[2]  # all Again to FSRS (only SM-2's EF differs)
    assert previews.almost.interval < previews.hard.interval < previews.good.interval < previews.perfect.interval


def test_retrievability_is_the_librarys_and_falls_to_the_desired_retention_by_the_due_day():
    state = FSRS().review(FSRS().review(NEW, 4, today=START), 4, today=START + timedelta(days=2))
    (_day, card), = library_history([(4, 0), (4, 2)])[1:]
    scheduler = library.Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    for days in (0, 1, 5, state.interval, 100):
        moment = card.last_review + timedelta(days=days)
        assert FSRS().retrievability(state, today=moment.date()) == scheduler.get_card_retrievability(card, moment)
    assert state.due is not None
    assert FSRS().retrievability(state, today=state.due) == pytest.approx(0.9, abs=0.01)
    assert FSRS().retrievability(NEW, today=START) == 0


def test_a_lower_retention_gives_longer_intervals():
    history = [(4, 0), (4, 3), (4, 10)]
    intervals = [ours(history, retention)[-1][1].interval for retention in (0.7, 0.9, 0.97)]
    assert intervals[0] > intervals[1] > intervals[2]


@pytest.mark.parametrize("retention", [0.69, 0.98, 1.0, 0, -1, float("nan"), True, "0.9"])
def test_a_retention_outside_the_range_is_refused_with_a_message(retention):
    with pytest.raises(RetentionError, match="desired retention must be from 0.70 to 0.97") as raised:
        FSRS(retention)
    assert isinstance(raised.value, BertdrillError)


@pytest.mark.parametrize("grade", [-1, 6, 3.0, "3", True, None])
def test_a_bad_grade_is_refused(grade):
    with pytest.raises(ValueError, match="grade must be"):
        FSRS().review(NEW, grade, today=START)


def test_today_must_be_a_study_day():
    with pytest.raises(TypeError, match="study day"):
        FSRS().review(NEW, 4, today=datetime(2026, 3, 1, 12))


def test_the_grade_mapping_is_the_documented_one():
    assert RATING_OF_GRADE == {0: library.Rating.Again, 1: library.Rating.Again, 2: library.Rating.Again,
                               3: library.Rating.Hard, 4: library.Rating.Good, 5: library.Rating.Easy}


def test_it_is_a_scheduler_by_name():
    assert scheduler_named(SchedulerName.FSRS, 0.85) == FSRS(0.85) and scheduler_named(SchedulerName("fsrs")) == FSRS()
    assert FSRS().initial == NEW


@settings(max_examples=200, deadline=None)
@given(histories)
def test_repetitions_ef_and_lapses_are_sm2s_under_fsrs_too(history):
    """They depend on the grades alone: FSRS keeps them by SM-2's rules, so leeches and EF mean the same."""
    day, fsrs_state, sm2_state = START, NEW, NEW
    for grade, gap in history:
        day += timedelta(days=gap)
        fsrs_state = FSRS().review(fsrs_state, grade, today=day)
        sm2_state = sm2.review(sm2_state, grade, today=day)
        assert (fsrs_state.repetitions, fsrs_state.ef100, fsrs_state.lapses) == (
            sm2_state.repetitions, sm2_state.ef100, sm2_state.lapses)
