"""Fuzz and the load balancer (core/scheduling/spread.py): Anki's rules to its own test vectors, seeded so every
answer's day is exact, replays equal to answering, and a forecast evened out."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

import pytest

from bertdrill.core.scheduling.exam import ExamScheduler, LessonExams
from bertdrill.core.scheduling.fitted import FittedFSRS, default_parameters
from bertdrill.core.scheduling.fsrs import FSRS
from bertdrill.core.scheduling.replay import replay
from bertdrill.core.scheduling.sm2 import SM2
from bertdrill.core.scheduling.spread import (
    Load,
    Spread,
    SpreadCard,
    Spreading,
    balanced_interval,
    card_number,
    card_scheduler,
    constrained_fuzz_bounds,
    fuzz_bounds,
    fuzz_factor,
    fuzz_seed,
    load_weight,
    minimum_review_fuzz_interval,
    with_review_fuzz,
)
from bertdrill.core.scheduling.state import NEW, Grade
from bertdrill.ports import Scheduler

DAY = date(2026, 3, 2)


# --------------------------------------------------------------------------- Anki's fuzz.rs tests, line for line

def test_no_fuzz_rounds_and_clamps():
    assert with_review_fuzz(None, 1.5, 1, 100) == 2
    assert with_review_fuzz(None, 0.1, 1, 100) == 1
    assert with_review_fuzz(None, 101.0, 1, 100) == 100


@pytest.mark.parametrize("interval, minimum, maximum, lower, middle, upper", [
    (1.0, 1, 1000, 1, 1, 1),  # no fuzzing for an interval of 1-2.49
    (2.49, 1, 1000, 2, 2, 2),
    (2.5, 1, 1000, 2, 3, 4),  # 1 day for intervals >= 2.5
    (7.0, 1, 1000, 5, 7, 9),  # ... plus 0.15 for every day in the range 2.5-7
    (17.0, 1, 1000, 14, 17, 20),  # ... plus 0.1 for every day in the range 7-20
    (37.0, 1, 1000, 33, 37, 41),  # ... plus 0.05 for every day above 20
    (2.0, 2, 1000, 2, 2, 2),  # ensure fuzz range of at least 2, if allowed
    (2.0, 3, 1000, 3, 4, 4),
    (2.0, 3, 3, 3, 3, 3),
    (6.9, 3, 1000, 5, 7, 9),  # fuzz range transitions
    (7.0, 3, 1000, 5, 7, 9),
    (7.1, 3, 1000, 5, 7, 9),
    (19.9, 3, 1000, 17, 20, 23),
    (20.0, 3, 1000, 17, 20, 23),
    (20.1, 3, 1000, 17, 20, 23),
    (100.0, 101, 1000, 101, 105, 108),  # respect limits and preserve uniform distribution of valid intervals
    (100.0, 1, 99, 92, 96, 99),
    (100.0, 97, 103, 97, 100, 103),
])
def test_fuzz_to_ankis_vectors(interval, minimum, maximum, lower, middle, upper):
    assert with_review_fuzz(0.0, interval, minimum, maximum) == lower
    assert with_review_fuzz(0.5, interval, minimum, maximum) == middle
    assert with_review_fuzz(0.99, interval, minimum, maximum) == upper


def test_invalid_bounds_do_not_fail():
    assert constrained_fuzz_bounds(1.0, 3, 2) == (2, 2)


def test_the_minimum_keeps_the_previous_interval_only_within_range():
    assert minimum_review_fuzz_interval(2.7269483, 4, 36500) == 4
    assert minimum_review_fuzz_interval(2.7269483, 5, 36500) == 0
    assert minimum_review_fuzz_interval(4.591988, 4, 36500) == 5


def test_whole_day_bounds_as_the_ranges_say():
    """1 day plus 15 % of the days 2.5-7, 10 % of 7-20, 5 % beyond, worked out by hand: 100 days is 100 -+ 6.975
    (1 + 0.675 + 1.3 + 4), 365 days 365 -+ 20.225."""
    assert [fuzz_bounds(days) for days in (1, 2, 3, 6, 10, 21, 100, 365)] == [
        (1, 1), (2, 2), (2, 4), (4, 8), (8, 12), (18, 24), (93, 107), (345, 385)]


# --------------------------------------------------------------------------- the seed

def test_splitmix64_gives_its_reference_numbers():
    """SplitMix64's first outputs from seed 0 (Vigna's splitmix64.c): 0xE220A8397B1DCDAF, then 0x6E789E6AA1B965F4."""
    from bertdrill.core.scheduling.spread import _splitmix64

    assert _splitmix64(0) == 0xE220A8397B1DCDAF
    assert _splitmix64(0x9E3779B97F4A7C15) == 0x6E789E6AA1B965F4


def test_the_seed_is_the_card_and_the_day():
    card = "bert-basics/bert-definition"
    assert card_number(card) == int.from_bytes(__import__("hashlib").sha256(card.encode()).digest()[:8], "big")
    assert fuzz_seed(card, DAY) == (card_number(card) + DAY.toordinal()) % 2**64
    assert fuzz_seed(card, DAY + timedelta(days=1)) == fuzz_seed(card, DAY) + 1  # as Anki's card id + reps
    factors = [fuzz_factor(fuzz_seed(f"lesson/card-{n}", DAY)) for n in range(2000)]
    assert all(0 <= each < 1 for each in factors)
    assert [sum(low <= each < low + 0.1 for each in factors) for low in (0.0, 0.5, 0.9)] == pytest.approx(
        [200, 200, 200], abs=45)  # spread evenly


# --------------------------------------------------------------------------- the balancer

def test_load_weights_are_ankis():
    assert load_weight(0, 5) == 1.0
    assert load_weight(4, 5) == pytest.approx(4 ** -2.15 / 125)


def test_the_balancer_picks_by_weight():
    """Interval 10 (minimum 1): days 8 to 12. Day 11 is empty (weight 1); the rest carry 10 cards (weights near
    1e-5): almost every draw lands on 11, and the draws at the very ends land on the loaded days beside it."""
    due = {8: 10, 9: 10, 10: 10, 11: 0, 12: 10}
    weights = [load_weight(due[day], day) for day in range(8, 13)]
    total = sum(weights)
    assert balanced_interval(10, 1, 36500, due.__getitem__, 0.5) == 11
    assert balanced_interval(10, 1, 36500, due.__getitem__, 0.0) == 8
    assert balanced_interval(10, 1, 36500, due.__getitem__, (sum(weights[:3]) - 1e-12) / total) == 10
    assert balanced_interval(10, 1, 36500, due.__getitem__, 0.999999999) == 12
    assert balanced_interval(91, 1, 36500, lambda days: due.get(days, 0), 0.5) is None  # past 90 days: fuzz only
    assert balanced_interval(30, 91, 36500, lambda days: due.get(days, 0), 0.5) is None


def test_load_moves_with_answers_and_undo():
    load = Load.of(DAY, [(DAY, 3), (DAY + timedelta(days=2), 1)])
    load.moved(DAY - timedelta(days=4), DAY + timedelta(days=2))  # an overdue card, counted today, now in 2 days
    assert (load.on(0), load.on(2)) == (2, 2)
    load.moved(DAY + timedelta(days=2), DAY - timedelta(days=4))  # undone
    assert (load.on(0), load.on(2)) == (3, 1)
    load.moved(None, DAY + timedelta(days=1))  # a new card
    assert load.on(1) == 1


def answered(spreading: Spreading, load: Load, cards: int) -> Load:
    """``cards`` cards answered Good on DAY, each with an interval of 30 days (SM-2: 12 days at EF 2.5), one
    after another over the moving forecast ``load``."""
    scheduler = Spread(SM2(), spreading)
    state = NEW.__class__(repetitions=3, ef100=250, interval=12, due=DAY, lapses=0)
    for number in range(cards):
        after = card_scheduler(scheduler, f"lesson/card-{number}", load).review(state, 4, today=DAY)
        load.moved(state.due, after.due)
    return load


def test_the_balancer_keeps_reviews_off_a_day_that_already_carries_many():
    """Day 30 carries 100 reviews, its neighbours 5 each: fuzz alone sends a seventh of 140 new reviews there;
    the balancer sends none, and spreads them over the other days of the range (27-33)."""
    forecast = [(DAY + timedelta(days=days), 100 if days == 30 else 5) for days in range(20, 40)]
    fuzzed = answered(Spreading.FUZZ, Load.of(DAY, forecast), 140)
    balanced = answered(Spreading.BALANCE, Load.of(DAY, forecast), 140)
    assert fuzzed.on(30) - 100 == pytest.approx(140 / 7, abs=14)  # 32 of 140 with these seeds
    assert balanced.on(30) == 100
    assert [balanced.on(days) for days in (20, 26, 34, 39)] == [5, 5, 5, 5]  # outside the fuzz range: untouched
    counts = [balanced.on(days) for days in (27, 28, 29, 31, 32, 33)]
    assert sum(counts) == 6 * 5 + 140 and max(counts) - min(counts) <= 8


# --------------------------------------------------------------------------- around the schedulers

def random_log(rng: random.Random, answers: int) -> list[tuple[date, int]]:
    day, log = date(2025, 1, 6), []
    for _ in range(answers):
        log.append((day, rng.choice([0, 1, 3, 4, 4, 4, 5])))
        day += timedelta(days=rng.choice([1, 1, 2, 3, 5, 8, 13, 30]))
    return log


SCHEDULERS: dict[str, Scheduler] = {"sm2": SM2(), "fsrs": FSRS(), "fsrs 0.8": FSRS(0.8),
              "fitted": FittedFSRS(default_parameters(), 0.85)}


@pytest.mark.parametrize("name", SCHEDULERS)
def test_a_replay_gives_what_answering_gives(name):
    """The fast replays (FSRS's memory steps, fsrs-rs) fuzz every answer as answering does, card by card."""
    rng = random.Random(22)
    scheduler = Spread(SCHEDULERS[name], Spreading.FUZZ)
    fuzzed = 0
    for number in range(60):
        card, log = f"lesson/card-{number}", random_log(rng, rng.randrange(1, 25))
        one = card_scheduler(scheduler, card)
        state = one.initial
        for day, grade in log:
            before = state
            state = one.review(state, grade, today=day)
            plain = SCHEDULERS[name].review(before, grade, today=day)
            assert (state.stability, state.difficulty, state.ef100, state.lapses) == (
                plain.stability, plain.difficulty, plain.ef100, plain.lapses)  # the memory is the scheduler's
            least = 1
            if grade >= 3 and before.interval > 0:
                least = max(1, minimum_review_fuzz_interval(plain.interval, before.interval, 36500))
            low, high = constrained_fuzz_bounds(plain.interval, least, 36500)
            assert low <= state.interval <= high
            assert state.due == day + timedelta(days=state.interval)
            fuzzed += state.interval != plain.interval
        assert replay(scheduler, log, card) == state
    assert fuzzed > 100


def test_fuzz_is_the_same_day_for_the_same_answer_and_differs_between_cards():
    scheduler = Spread(FSRS(), Spreading.FUZZ)
    state = FSRS().review(NEW, 4, today=DAY)
    later = DAY + timedelta(days=state.interval)
    intervals = {card_scheduler(scheduler, f"lesson/card-{n}").review(state, 5, today=later).interval for n in range(50)}
    plain = FSRS().review(state, 5, today=later).interval
    low, high = constrained_fuzz_bounds(plain, 1, 36500)
    assert intervals == set(range(low, high + 1))
    one = card_scheduler(scheduler, "lesson/card-7")
    assert one.review(state, 5, today=later) == one.review(state, 5, today=later)
    assert one.next_states(state, today=later).after(Grade(5)) == one.review(state, 5, today=later)  # preview == answer


def test_spreading_off_is_the_scheduler_itself():
    assert card_scheduler(Spread(SM2(), Spreading.OFF), "lesson/card") == SM2()
    assert isinstance(card_scheduler(Spread(SM2(), Spreading.FUZZ), "lesson/card"), SpreadCard)
    fuzzing = card_scheduler(Spread(SM2(), Spreading.FUZZ), "lesson/card", Load(DAY))
    balancing = card_scheduler(Spread(SM2(), Spreading.BALANCE), "lesson/card", Load(DAY))
    assert isinstance(fuzzing, SpreadCard) and isinstance(balancing, SpreadCard)
    assert fuzzing.load is None and balancing.load is not None  # fuzz: no balance


def test_a_card_due_before_the_exam_is_never_fuzzed_past_it():
    exam = DAY + timedelta(days=20)
    scheduler = Spread(ExamScheduler(FSRS(), exam, 0.9), Spreading.BALANCE)
    state = FSRS().review(NEW, 5, today=DAY - timedelta(days=8))
    for number in range(200):
        card = f"lesson/card-{number}"
        planned = ExamScheduler(FSRS(), exam, 0.9).review(state, 4, today=DAY)
        after = card_scheduler(scheduler, card, Load(DAY)).review(state, 4, today=DAY)
        if planned.due is not None and planned.due < exam:
            assert after.due is not None and after.due < exam
        else:
            assert after.due is not None and after.due >= exam - timedelta(days=1)


def test_an_exam_per_lesson_plans_that_lessons_cards_alone():
    """A Good answer on DAY gives 14 days, with predicted recall 0.933 eight days on: below a target of 0.95 for
    an exam in 8 days, so the physics card comes back before it, the other card in 14 days."""
    exam = DAY + timedelta(days=8)
    scheduler = LessonExams(FSRS(), (("physics", exam, 0.95),))
    state = FSRS().review(NEW, 4, today=DAY - timedelta(days=3))
    assert scheduler.for_card("physics/force") == ExamScheduler(FSRS(), exam, 0.95)
    assert scheduler.for_card("bert-basics/bert-definition") == FSRS()
    physics = card_scheduler(scheduler, "physics/force").review(state, 4, today=DAY)
    other = card_scheduler(scheduler, "bert-basics/x").review(state, 4, today=DAY)
    assert other == FSRS().review(state, 4, today=DAY) and other.interval == 14
    assert physics.due is not None and physics.due < exam  # brought back before the lesson's exam
    every = ExamScheduler(FSRS(), exam + timedelta(days=5), 0.9)
    with_default = LessonExams(FSRS(), (("physics", exam, 0.95),), every)
    assert with_default.for_card("bert-basics/x") == every  # the exam for every lesson, where a lesson has none


# --------------------------------------------------------------------------- in a session

def test_a_balancing_session_reads_its_forecast_when_a_preview_first_needs_it():
    """The first card is shown before the load balancer's forecast is read (a pass over every schedule); the
    preview, the answer and the undo after it read it once, before the answer is written."""
    from datetime import UTC, datetime

    from bertdrill.adapters.lessons import all_cards, load_lessons
    from bertdrill.adapters.store.memory import MemoryStore
    from bertdrill.app.session import Limits, Session

    cards = all_cards(load_lessons())
    store = MemoryStore()
    store.sync(cards)
    asked: list[date] = []
    forecast = store.forecast

    def counted(day: date, days: int, **options: Any) -> list[tuple[date, int]]:
        asked.append(day)
        return forecast(day, days, **options)

    store.forecast = counted  # type: ignore[method-assign, assignment]
    session = Session(store, cards, clock=lambda: datetime(2025, 3, 3, 9, tzinfo=UTC), limits=Limits(10, 100),
                      scheduler=Spread(SM2(), Spreading.BALANCE))
    assert session.show() is not None and asked == []
    session.preview()
    before = dict(session._load.due) if session._load is not None else None
    session.answer(4)
    session.undo()
    assert asked == [date(2025, 3, 3)] and session._load is not None and session._load.due == before


def test_a_session_balances_previews_what_it_gives_and_undo_gives_the_same_day_again():
    """Every shipped card learned on one day and reviewed Good on the next: under the balancer each answer's day
    is the one its preview showed; undoing an answer and giving it again gives the same day; the session's load
    is the store's forecast after every answer (it started from the store's and moved with each)."""
    from datetime import UTC, datetime

    from bertdrill.adapters.lessons import all_cards, load_lessons
    from bertdrill.adapters.store.memory import MemoryStore
    from bertdrill.app.session import Limits, Session

    cards = all_cards(load_lessons())
    store = MemoryStore()
    store.sync(cards)
    scheduler = Spread(SM2(), Spreading.BALANCE)
    day = DAY
    for _round in range(6):  # SM-2's intervals grow 1, 6, 15...: from the third round on they are fuzzed
        clock = lambda day=day: datetime(day.year, day.month, day.day, 9, tzinfo=UTC)  # noqa: E731
        session = Session(store, cards, clock=clock, limits=Limits(100, 1000), scheduler=scheduler)
        assert session._load is not None and session._load.due == {
            each: count for each, count in store.forecast(day, 100) if count}
        while not session.done:
            entry = session.show()
            assert entry is not None
            preview = session.preview()
            outcome = session.answer(4)
            assert preview is not None and outcome.after == preview.after(Grade(4))
            session.undo()
            session.show()
            again = session.answer(4)
            assert again.after == outcome.after  # the same day: same seed, same forecast
        # the load moves each answered card from its due day to its new one (burying a sibling, which moves it in
        # the store's forecast by a day, is not counted: Anki's balancer counts due days too)
        counted: dict[date, int] = {}
        for card in cards:
            state = store.state(card.id)
            if card.kind != "practice" and state.schedule.due is not None and not state.suspended:
                counted[max(state.schedule.due, day)] = counted.get(max(state.schedule.due, day), 0) + 1
        assert session._load.due == counted
        dues = [store.state(card.id).schedule.due for card in cards if card.kind != "practice"]
        day = min(due for due in dues if due is not None and due > day)  # siblings held back stay new a while
    fuzzed = [store.state(card.id).schedule for card in cards if card.kind != "practice"]
    assert any(state.interval not in (1, 6, 15, 38, 95) for state in fuzzed)


def test_the_remembered_ranges_are_ankis_rules():
    """The switch's shortcut (bounds remembered per interval) gives minimum_review_fuzz_interval and
    constrained_fuzz_bounds exactly, on every interval to 400 days, previous intervals around it, and caps."""
    from bertdrill.core.scheduling.spread import _fuzz_range

    for maximum in (36500, 45, 3):
        for interval in range(1, 401):
            for previous in {0, 1, 2, interval - 3, interval - 1, interval, interval + 1, interval + 5, 2 * interval}:
                if previous < 0:
                    continue
                minimum = max(1, minimum_review_fuzz_interval(interval, previous, maximum)) if previous else 1
                assert _fuzz_range(interval, previous, maximum) == (
                    minimum, *constrained_fuzz_bounds(interval, minimum, maximum)), (interval, previous, maximum)
