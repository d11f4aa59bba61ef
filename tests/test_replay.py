"""Replaying a card's log: the first answer of each study day schedules, and SM-2's replay is the schedule."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.fsrs import FSRS
from bertdrill.core.scheduling.replay import replay, scheduling_answers, states
from bertdrill.core.scheduling.state import NEW

SM2 = sm2.SM2()
DAY = date(2026, 4, 1)


def test_only_the_first_answer_of_a_study_day_schedules():
    log = [(DAY, 2), (DAY, 4), (DAY + timedelta(days=1), 5), (DAY + timedelta(days=1), 0), (DAY + timedelta(days=7), 4)]
    assert list(scheduling_answers(log)) == [(DAY, 2), (DAY + timedelta(days=1), 5), (DAY + timedelta(days=7), 4)]


def test_a_log_with_no_answers_is_a_new_card():
    assert replay(SM2, []) == NEW
    assert replay(FSRS(), []) == NEW


logs = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 5), st.integers(0, 3)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(logs)
def test_replaying_sm2_gives_the_schedule_a_session_would_have_stored(entries):
    """What the session does: review the first answer of a day, log re-drills without rescheduling."""
    day, schedule = DAY, NEW
    log: list[tuple[date, int]] = []
    for gap, grade, repeats in entries:
        day += timedelta(days=gap)
        if all(logged_day != day for logged_day, _ in log):
            schedule = sm2.review(schedule, grade, today=day)
        log.append((day, grade))
        log += [(day, 4)] * repeats
    assert replay(SM2, log) == schedule


@given(st.integers(0, (1 << 64) - 1), st.integers(1, 2), st.integers(0, 36500), st.integers(0, 5),
       st.integers(1, date.max.toordinal()))
def test_the_fuzz_keeps_an_interval_of_two_days_or_less(number, interval, previous, grade, day):
    """Adjust's rule that SM-2's replay relies on to skip the call (three answers in four): the fuzz keeps 1 and 2."""
    from bertdrill.core.scheduling.spread import fuzz_adjust

    assert fuzz_adjust(number, interval, previous, grade, day) == interval


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 400), st.integers(0, 5)), max_size=40), st.booleans())
def test_sm2s_own_replay_is_answer_after_answer(entries, fuzzed):
    """SM-2's integer replay (a switch's) equals sm2.review answer after answer, with the fuzz too, on logs
    whose days go back as well as forward (a clock set back)."""
    from bertdrill.core.scheduling.spread import Spread, Spreading, card_scheduler

    day, log = DAY, []
    for gap, grade in entries:
        day += timedelta(days=gap)
        log.append((day, grade))
    one = card_scheduler(Spread(SM2, Spreading.FUZZ), "lesson/card") if fuzzed else SM2
    state = NEW
    for logged_day, grade in scheduling_answers(log):
        state = one.review(state, grade, today=logged_day)
    assert replay(one, log) == state
    assert SM2.replay([(day.toordinal(), grade) for day, grade in log]) == replay(SM2, log)


def test_states_gives_each_scheduling_answer_with_the_state_before_it():
    log = [(DAY, 4), (DAY, 5), (DAY + timedelta(days=1), 3)]
    steps = list(states(SM2, log))
    assert [(day, grade) for day, grade, _ in steps] == [(DAY, 4), (DAY + timedelta(days=1), 3)]
    assert steps[0][2] == NEW
    assert steps[1][2] == sm2.review(NEW, 4, today=DAY)


@settings(max_examples=200, deadline=None)
@given(logs, st.sampled_from([0.7, 0.9, 0.97]))
def test_fsrs_own_replay_is_answer_after_answer(entries, retention):
    day, log = DAY, []
    for gap, grade, repeats in entries:
        day += timedelta(days=gap)
        log += [(day, grade)] + [(day, 4)] * repeats
    scheduler, state = FSRS(retention), NEW
    for logged_day, grade in scheduling_answers(log):
        state = scheduler.review(state, grade, today=logged_day)
    assert replay(scheduler, log) == state


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(-40, 400), st.integers(0, 5)), max_size=40), st.sampled_from([0.7, 0.9, 0.97]))
def test_fsrs_own_replay_follows_a_clock_that_went_back(entries, retention):
    """Days that go backwards (a clock set back, a log merged from two machines) take py-fsrs's same-day path
    in review_card (less than a day since the last review): the replay takes it too, float for float."""
    day, log = DAY, []
    for gap, grade in entries:
        day += timedelta(days=gap)
        log.append((day, grade))
    scheduler, state = FSRS(retention), NEW
    for logged_day, grade in scheduling_answers(log):
        state = scheduler.review(state, grade, today=logged_day)
    assert replay(scheduler, log) == state


@pytest.mark.parametrize("retention", [0.7, 0.9, 0.97])
def test_the_written_out_steps_are_py_fsrs_own(retention):
    """The replay's arithmetic (MemorySteps) is used because it agrees with py-fsrs's methods on every probe;
    one changed parameter makes it disagree, and the replay would then call py-fsrs itself."""
    from bertdrill.core.scheduling.fsrs import MemorySteps, _scheduler, memory_steps

    assert isinstance(memory_steps(retention), MemorySteps)
    steps = MemorySteps(_scheduler(retention))
    steps.p = (*steps.p[:9], steps.p[9] * 1.0000001, *steps.p[10:])
    assert not steps.agrees()


day_logs = st.lists(st.tuples(st.integers(-40, 400), st.integers(0, 5), st.integers(0, 2)), max_size=40)


def _ordinal_log(entries: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """A DayLog from (gap in days, grade, re-drills after it): gaps may go back (a clock set back)."""
    day, log = DAY.toordinal(), []
    for gap, grade, repeats in entries:
        day += gap
        log += [(day, grade)] + [(day, 4)] * repeats
    return log


@settings(max_examples=200, deadline=None)
@given(day_logs, st.sampled_from(["off", "fuzz", "balance"]), st.sampled_from(["sm2", "fsrs"]),
       st.sampled_from(["fact-1", "lesson/choice-2", "x"]))
def test_a_switchs_card_replayer_is_replay_days(entries, spreading, name, card_id):
    """What a switch calls for each card (card_replayer: the fuzz decided once per switch) gives what
    replay_days gives through the card's own SpreadCard, with the fuzz and re-drills and days going back."""
    from bertdrill.core.scheduling.replay import card_replayer, replay_days
    from bertdrill.core.scheduling.spread import Spread, Spreading

    scheduler = Spread(SM2 if name == "sm2" else FSRS(), Spreading(spreading))
    log = _ordinal_log(entries)
    assert card_replayer(scheduler)(card_id, log) == replay_days(scheduler, log, card_id)


@settings(max_examples=300, deadline=None)
@given(day_logs, st.sampled_from([0.7, 0.9, 0.97]), st.booleans())
def test_the_replays_one_loop_is_the_written_out_steps_and_py_fsrs(entries, retention, fuzzed):
    """MemorySteps.replayed (every step written into one loop) against the same replay taking MemorySteps' steps
    one call each, and py-fsrs's own methods one call each (LibrarySteps): the same floats."""
    from bertdrill.core.scheduling.fsrs import LibrarySteps, MemorySteps, _scheduler
    from bertdrill.core.scheduling.spread import fuzz_adjust

    log = _ordinal_log(entries)
    adjust = (lambda interval, previous, grade, day: fuzz_adjust(7, interval, previous, grade, day)) if fuzzed else None
    written = MemorySteps(_scheduler(retention))
    one_loop = written.replayed(log, adjust)
    assert one_loop == LibrarySteps.replayed(written, log, adjust)
    assert one_loop == LibrarySteps(_scheduler(retention)).replayed(log, adjust)


def test_a_long_log_reaches_the_steps_extremes_and_stays_py_fsrs():
    """Answers years apart and on the same day, Again and Easy in runs: stabilities from under a tenth of a day to
    decades, difficulties from 1 to 10, each replay against py-fsrs's review_card answer after answer."""
    import random

    rng = random.Random(25)
    for _ in range(30):
        day, log = DAY, []
        for _answer in range(60):
            day += timedelta(days=rng.choice([0, 0, 1, 3, 40, 900, 4000]) if day.year < 9000 else 0)
            log.append((day, rng.choice([0, 5, 5, 3, 1, 4])))
        scheduler, state = FSRS(), NEW
        for logged_day, grade in scheduling_answers(log):
            state = scheduler.review(state, grade, today=logged_day)
        assert replay(scheduler, log) == state


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(3, 5), st.integers(0, 1)), max_size=40),
       st.integers(0, 2**64 - 1))
def test_fsrs_fuzzes_only_what_its_last_interval_reads_and_gets_every_answers_fuzz(entries, number):
    """FSRS's replay adjusts only the answers back to one whose fuzz reads no interval before it (a fail, or two
    days or less); on runs of passing answers, where each fuzz range can start at the interval before, the result
    is the replay that fuzzes every answer (py-fsrs's steps one call each)."""
    from functools import partial

    from bertdrill.core.scheduling.fsrs import LibrarySteps, MemorySteps, _scheduler
    from bertdrill.core.scheduling.spread import fuzz_adjust

    log, adjust = _ordinal_log(entries), partial(fuzz_adjust, number)
    written = MemorySteps(_scheduler(0.9))
    assert written.replayed(log, adjust) == LibrarySteps(_scheduler(0.9)).replayed(log, adjust)
