"""Tests for bertdrill.core.scheduling.sm2: golden vectors, study days, bad grades, invariants."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bertdrill.core.scheduling.sm2 import review
from bertdrill.core.scheduling.state import NEW, Grade, Schedule, redrill_needed, study_day

START = date(2026, 1, 1)


def run(grades, start=START):
    """Review from NEW, each review on the day the previous one was due."""
    schedule, today, out = NEW, start, []
    for q in grades:
        schedule = review(schedule, q, today=today)
        out.append((today, schedule))
        today = schedule.due
    return out


# grades, n after each, EF (hundredths) after each, I after each, lapses at end
GOLDEN = [
    (
        [5, 5, 5, 5, 5, 5],
        [1, 2, 3, 4, 5, 6],
        [260, 270, 280, 290, 300, 310],
        [1, 6, 17, 48, 140, 420],
        0,
    ),
    (
        [4, 4, 4, 4, 4, 4],
        [1, 2, 3, 4, 5, 6],
        [250] * 6,
        [1, 6, 15, 38, 95, 238],
        0,
    ),
    (
        [3] * 8,
        [1, 2, 3, 4, 5, 6, 7, 8],
        [236, 222, 208, 194, 180, 166, 152, 138],
        [1, 6, 14, 30, 59, 107, 178, 271],
        0,
    ),
    (
        [5, 5, 5, 2, 4, 4, 5],
        [1, 2, 3, 0, 1, 2, 3],
        [260, 270, 280, 248, 248, 248, 258],
        [1, 6, 17, 1, 1, 6, 15],
        1,
    ),
    (
        [0, 1, 2, 3, 4, 4],
        [0, 0, 0, 1, 2, 3],
        [170, 130, 130, 130, 130, 130],
        [1, 1, 1, 1, 6, 8],
        0,
    ),
]


@pytest.mark.parametrize("grades,ns,efs,intervals,lapses", GOLDEN)
def test_golden_vectors(grades, ns, efs, intervals, lapses):
    results = run(grades)
    assert [s.repetitions for _, s in results] == ns
    assert [s.ef100 for _, s in results] == efs
    assert [s.interval for _, s in results] == intervals
    # Due dates: each review happens on the previous due date.
    expected_due, day = [], START
    for i in intervals:
        day = day + timedelta(days=i)
        expected_due.append(day)
    assert [s.due for _, s in results] == expected_due
    assert results[-1][1].lapses == lapses


def test_golden_due_dates_spelled_out():
    due = [s.due for _, s in run([5, 5, 5, 5, 5, 5])]
    assert due == [
        date(2026, 1, 2),
        date(2026, 1, 8),
        date(2026, 1, 25),
        date(2026, 3, 14),
        date(2026, 8, 1),
        date(2027, 9, 25),
    ]


def test_lapses_count_every_failure_of_a_learned_card():
    lapses = [s.lapses for _, s in run([5, 5, 5, 2, 4, 4, 5])]
    assert lapses == [0, 0, 0, 1, 1, 1, 1]
    lapses = [s.lapses for _, s in run([0, 1, 2, 3, 4, 4])]
    assert lapses == [0] * 6
    # issue 21: a learned card failed day after day lapses every day, as Anki counts every failed
    # review of a learned card; failures before it was ever learned are no lapses.
    lapses = [s.lapses for _, s in run([4, 1, 1, 4, 0])]
    assert lapses == [0, 1, 2, 2, 3]
    assert [s.lapses for _, s in run([4] + [1] * 8)][-1] == 8  # a leech after eight failed days


def test_new_schedule():
    assert NEW == Schedule()
    assert NEW.is_new
    assert (NEW.repetitions, NEW.ef100, NEW.interval, NEW.due, NEW.lapses) == (
        0, 250, 0, None, 0,
    )
    assert NEW.ef == 2.5
    after = review(NEW, 0, today=START)
    assert not after.is_new
    assert after.ef == pytest.approx(1.7)


def test_schedule_is_frozen():
    with pytest.raises(AttributeError):
        NEW.ef100 = 300  # type: ignore[misc]  # assigning to the frozen field is what is tested


# --- study days -------------------------------------------------------------


def test_study_day_after_midnight_belongs_to_previous_day():
    assert study_day(datetime(2026, 3, 10, 0, 30)) == date(2026, 3, 9)
    assert study_day(datetime(2026, 3, 10, 3, 59, 59)) == date(2026, 3, 9)


def test_study_day_rollover_hour_starts_the_day():
    assert study_day(datetime(2026, 3, 10, 4, 0)) == date(2026, 3, 10)
    assert study_day(datetime(2026, 3, 10, 23, 59)) == date(2026, 3, 10)


def test_study_day_across_month_and_year():
    assert study_day(datetime(2026, 1, 1, 0, 30)) == date(2025, 12, 31)
    assert study_day(datetime(2026, 3, 1, 1, 0)) == date(2026, 2, 28)


def test_study_day_custom_rollover():
    moment = datetime(2026, 3, 10, 5, 30)
    assert study_day(moment, rollover_hour=6) == date(2026, 3, 9)
    assert study_day(moment, rollover_hour=5) == date(2026, 3, 10)
    assert study_day(datetime(2026, 3, 10, 0, 0), rollover_hour=0) == date(2026, 3, 10)
    assert study_day(datetime(2026, 3, 10, 6, 0), 6) == date(2026, 3, 10)


def test_study_day_aware_local_time_uses_wall_clock():
    plus9 = timezone(timedelta(hours=9))
    assert study_day(datetime(2026, 3, 10, 0, 30, tzinfo=plus9)) == date(2026, 3, 9)
    assert study_day(datetime(2026, 3, 10, 4, 0, tzinfo=plus9)) == date(2026, 3, 10)


@pytest.mark.parametrize("hour", [-1, 24, 4.0, True, "4"])
def test_study_day_bad_rollover(hour):
    with pytest.raises(ValueError):
        study_day(datetime(2026, 3, 10, 12, 0), rollover_hour=hour)


# --- grades -----------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, 6, 2.5, 3.0, True, False, "3", None])
def test_invalid_grades_raise(bad):
    with pytest.raises(ValueError, match="grade"):
        review(NEW, bad, today=START)
    with pytest.raises(ValueError, match="grade"):
        redrill_needed(bad)


def test_redrill_needed():
    assert [redrill_needed(q) for q in range(6)] == [True, True, True, True, False, False]


def test_today_must_be_a_date_not_a_datetime():
    with pytest.raises(TypeError):
        review(NEW, 4, today=datetime(2026, 1, 1, 12, 0))


# --- invariants -------------------------------------------------------------

grades = st.integers(min_value=0, max_value=5)
grade_lists = st.lists(grades, min_size=1, max_size=30)
days = st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 1, 1))
gaps = st.integers(min_value=0, max_value=400)


def test_due_past_year_9999_raises_overflow():
    """No interval cap, as pinned: following due dates with 5s runs off date.max."""
    schedule, today = NEW, START
    with pytest.raises(OverflowError, match="past"):
        for _ in range(30):
            schedule = review(schedule, 5, today=today)
            assert schedule.due is not None
            today = schedule.due
    assert schedule.repetitions >= 10


def would_overflow(before, q, today):
    """True if the reference interval for this review lands past date.max."""
    ref = Ref(n=before.repetitions, ef=Fraction(before.ef100, 100), i=before.interval)
    return q >= 3 and ref.next_interval(q) > (date.max - today).days


@given(grade_lists, days)
@example([5] * 30, START)
@example([4] * 30, START)
def test_invariants_hold_on_random_sequences(qs, start):
    schedule, today = NEW, start
    for q in qs:
        before = schedule
        snapshot = (
            before.repetitions, before.ef100, before.interval, before.due, before.lapses,
        )
        if would_overflow(before, q, today):
            with pytest.raises(OverflowError):
                review(before, q, today=today)
            break
        schedule = review(before, q, today=today)
        # review never mutates its input
        assert (
            before.repetitions, before.ef100, before.interval, before.due, before.lapses,
        ) == snapshot
        assert schedule is not before
        assert schedule.ef100 >= 130
        assert schedule.interval >= 1
        assert schedule.due == today + timedelta(days=schedule.interval)
        if q < 3:
            assert schedule.repetitions == 0
            assert schedule.interval == 1
        else:
            assert schedule.repetitions == before.repetitions + 1
            assert schedule.interval >= before.interval
        assert schedule.lapses >= before.lapses
        today = schedule.due


@given(st.lists(st.tuples(grades, gaps), min_size=1, max_size=30), days)
def test_due_is_review_day_plus_interval_whatever_the_review_day(steps, start):
    """Reviews early or late (not on the due day) still schedule from the review day."""
    schedule, today = NEW, start
    for q, gap in steps:
        if would_overflow(schedule, q, today):
            break
        schedule = review(schedule, q, today=today)
        assert schedule.due == today + timedelta(days=schedule.interval)
        today = today + timedelta(days=gap)


# --- independent reference model ---------------------------------------------


@dataclass
class Ref:
    """A plain SM-2 written from the textbook formula, in exact fractions."""

    n: int = 0
    ef: Fraction = Fraction(5, 2)
    i: int = 0
    due: date | None = None
    lapses: int = 0

    def next_interval(self, q: int) -> int:
        """Interval the next review would give, without changing anything."""
        if q < 3:
            return 1
        if self.n + 1 == 1:
            return 1
        if self.n + 1 == 2:
            return 6
        return math.ceil(self.i * self.ef)

    def grade(self, q: int, today: date) -> None:
        ef_before = self.ef
        new_ef = ef_before + Fraction(1, 10) - (5 - q) * (
            Fraction(8, 100) + (5 - q) * Fraction(2, 100)
        )
        self.ef = max(Fraction(13, 10), new_ef)
        if q >= 3:
            self.n += 1
            if self.n == 1:
                self.i = 1
            elif self.n == 2:
                self.i = 6
            else:
                self.i = math.ceil(self.i * ef_before)
        else:
            if self.n >= 1 or self.lapses >= 1:  # a learned card lapses on every failure (Anki)
                self.lapses += 1
            self.n = 0
            self.i = 1
        self.due = today + timedelta(days=self.i)


@given(st.lists(st.tuples(grades, gaps), min_size=1, max_size=30), days)
@example([(5, 0)] * 30, START)
@example([(3, 400)] * 30, START)
def test_agrees_with_reference_model(steps, start):
    schedule, ref, today = NEW, Ref(), start
    for q, gap in steps:
        if q >= 3 and ref.next_interval(q) > (date.max - today).days:
            with pytest.raises(OverflowError):
                review(schedule, q, today=today)
            break
        schedule = review(schedule, q, today=today)
        ref.grade(q, today)
        assert schedule.repetitions == ref.n
        assert Fraction(schedule.ef100, 100) == ref.ef
        assert schedule.interval == ref.i
        assert schedule.due == ref.due
        assert schedule.lapses == ref.lapses
        today = today + timedelta(days=gap)


def test_reference_model_reproduces_a_golden_row():
    """Guard the reference itself against agreeing with a shared mistake."""
    ref, today, seen = Ref(), START, []
    for q in [5, 5, 5, 2, 4, 4, 5]:
        ref.grade(q, today)
        seen.append(ref.i)
        assert ref.due is not None
        today = ref.due
    assert seen == [1, 6, 17, 1, 1, 6, 15]


def test_next_states_previews_every_grade():
    from bertdrill.core.scheduling import sm2
    from bertdrill.core.scheduling.sm2 import SM2, next_states
    from bertdrill.core.scheduling.state import NEW

    today = date(2025, 3, 3)
    learned = sm2.review(sm2.review(NEW, 5, today=today), 4, today=today)
    preview = next_states(learned, today=today)
    assert [grade for grade, _state in preview.items()] == [0, 1, 2, 3, 4, 5]
    assert all(state == sm2.review(learned, grade, today=today) for grade, state in preview.items())
    assert (preview.blackout, preview.hard, preview.perfect) == (preview.after(Grade(0)), preview.after(Grade(3)),
                                                                  preview.after(Grade(5)))
    assert [state.interval for _grade, state in preview.items()] == [1, 1, 1, 16, 16, 16]
    assert SM2().next_states(learned, today=today) == preview and SM2().initial == NEW
