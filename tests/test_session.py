"""A review session without a terminal: queue, limits, re-drill, undo, suspend, bury, summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, timezone
from typing import TypeVar

import pytest

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import DayCounts, Store
from bertdrill.adapters.store.memory import MemoryStore
from bertdrill.app.deck import Deck
from bertdrill.app.session import (
    LEARNING_STEPS,
    MAX_REDRILLS,
    LeechAction,
    Limits,
    Position,
    Session,
    interleave_by_kind,
    record_attempt,
    room_today,
)
from bertdrill.core.cards import Card
from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.actions import CardAction
from bertdrill.core.scheduling.state import GRADES, NEW, AnswerKind, NextStates, Schedule, study_day

ISTANBUL = timezone(timedelta(hours=3))
T = TypeVar("T")


def required(value: T | None) -> T:
    """``value``, asserted to be there: the card on screen, the answer to undo, the preview."""
    assert value is not None
    return value


class Clock:
    """A wall clock that moves only when told to."""

    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)

    def to(self, day: date, hour: int = 9) -> None:
        self.now = datetime(day.year, day.month, day.day, hour, tzinfo=ISTANBUL)


@pytest.fixture(scope="module")
def cards():
    return all_cards(load_lessons())


@pytest.fixture
def shown(cards):
    """The cards a review session can show, in the order it shows new ones (practice cards are not among them)."""
    return interleave_by_kind(card for card in cards if card.kind != "practice")


@pytest.fixture
def db(cards):
    """The in-memory store: the same contract as SQLite's (tests/test_store.py runs it on both), no fsync."""
    opened = MemoryStore()
    opened.sync(cards)
    return opened


@pytest.fixture
def sqlite_db(tmp_path, cards):
    """The SQLite store, for the sessions that check what reaches the file."""
    with Store.open(str(tmp_path / "review.db")) as opened:
        opened.sync(cards)
        yield opened


@pytest.fixture
def clock():
    return Clock(datetime(2025, 3, 3, 9, 0, tzinfo=ISTANBUL))


def session(db, cards, clock, *, bury: bool = False, **limits) -> Session:
    """A session over the lesson's cards; siblings are buried only with ``bury`` (the default of a real review,
    tested in its own tests below), so the tests of limits and order see every card of an item."""
    return Session(db, cards, clock=clock, limits=Limits(**limits), bury_siblings=bury)


def queue_keys(s: Session) -> list[tuple[str, str]]:
    return [(entry.card.key, entry.kind) for entry in s._queue]


def answer_all(s: Session, grade: int = 4) -> None:
    while s.show() is not None:
        s.answer(grade)


# --------------------------------------------------------------------------- the queue


def test_first_day_ten_new_cards_in_lesson_order(db, cards, shown, clock):
    s = session(db, cards, clock)
    assert [entry.card.id for entry in s._queue] == [card.id for card in shown[:10]]
    assert {entry.kind for entry in s._queue} == {"new"}
    assert s.position == Position(index=1, total=10, new=10, review=0, redrill=0)


def test_new_cards_are_interleaved_by_kind_so_the_lessons_questions_come_on_day_one(db, cards, clock):
    """Lesson order showed only facts and totals on day 1 (the choice, blank and match came on day 3)."""
    s = session(db, cards, clock)
    assert [entry.card.key for entry in s._queue] == [
        "bert-definition", "total-params@bert-base", "bert-vs-gpt", "attention-projections", "bert-base-match#layers",
        "bert-acronym", "total-params@bert-large", "bert-base-match#d-model", "bidirectional",
        "head-size@bert-base"]
    assert {entry.card.kind for entry in s._queue} == {"fact", "numeric", "choice", "blank", "match"}
    # With siblings buried (a real review's default), every kind still comes on day one, one card of an item
    buried = session(db, cards, clock, bury=True)
    assert [entry.card.key for entry in buried._queue] == [
        "bert-definition", "total-params@bert-base", "bert-vs-gpt", "attention-projections", "bert-base-match#layers",
        "bidirectional", "head-size@bert-base", "pre-training", "embedding-params@bert-base", "fine-tuning"]
    assert {entry.card.kind for entry in buried._queue} == {"fact", "numeric", "choice", "blank", "match"}


def test_interleaving_keeps_lesson_order_within_a_kind_and_lessons_apart():
    from types import SimpleNamespace as Card

    cards = [Card(id=f"{lesson}/{kind}{i}", lesson_id=lesson, kind=kind)
             for lesson in ("one", "two") for kind, count in (("fact", 3), ("numeric", 1), ("choice", 2))
             for i in range(count)]
    # stand-ins with only what the interleaving reads: id, lesson_id, kind
    assert [card.id for card in interleave_by_kind(cards)] == [
        "one/fact0", "one/numeric0", "one/choice0", "one/fact1", "one/choice1", "one/fact2",
        "two/fact0", "two/numeric0", "two/choice0", "two/fact1", "two/choice1", "two/fact2"]


def test_practice_cards_never_come_up(db, cards, clock):
    s = session(db, cards, clock, new=100)
    assert len(s._queue) == 32 and all(entry.card.kind != "practice" for entry in s._queue)


def test_new_limit_counts_the_whole_study_day(db, cards, shown, clock):
    s = session(db, cards, clock, new=5)
    for _ in range(3):
        s.show()
        s.answer(5)
    clock.advance(hours=17)  # 02:00 the next morning: still the same study day (rollover at 4)
    later = session(db, cards, clock, new=5)
    assert [entry.card.id for entry in later._queue] == [card.id for card in shown[3:5]]
    clock.advance(hours=2)  # 04:00: a new study day
    tomorrow = session(db, cards, clock, new=5)
    assert queue_keys(tomorrow)[:3] == [(card.key, "review") for card in shown[:3]]
    assert [kind for _, kind in queue_keys(tomorrow)[3:]] == ["new"] * 5


def test_rollover_hour_is_configurable(db, cards, clock):
    s = session(db, cards, clock, new=1)
    s.show()
    s.answer(5)
    clock.to(date(2025, 3, 4), hour=1)
    assert session(db, cards, clock, new=1, rollover_hour=4).done  # still the 3rd
    assert not session(db, cards, clock, new=1, rollover_hour=0).done  # already the 4th


def test_due_cards_first_most_overdue_first(db, cards, shown, clock):
    first_day = clock.now
    for offset, card in enumerate(shown[:3]):
        clock.now = first_day - timedelta(days=10 - offset)
        Session(db, [card], clock=clock).show()
        db.answer(card.id, grade=4, kind="new", reviewed_at=clock.now, study_day=study_day(clock.now),
                  reschedule=lambda s, d=study_day(clock.now): sm2.review(s, 4, today=d))
    clock.now = first_day
    s = session(db, cards, clock, new=2)
    assert queue_keys(s) == [(shown[0].key, "review"), (shown[1].key, "review"), (shown[2].key, "review"),
                             (shown[3].key, "new"), (shown[4].key, "new")]


def test_the_daily_limit_counts_due_and_new_together(db, cards, shown, clock):
    answer_all(session(db, cards, clock, new=6))
    clock.advance(days=1)
    s = session(db, cards, clock, new=10, reviews=8)
    assert [kind for _, kind in queue_keys(s)] == ["review"] * 6 + ["new"] * 2
    s.show()
    s.answer(5)
    again = session(db, cards, clock, new=10, reviews=8)
    assert len(again._queue) == 7
    assert len(session(db, cards, clock, new=10, reviews=3)._queue) == 2
    assert session(db, cards, clock, new=10, reviews=1).done


def test_room_today():
    limits = Limits(new=10, reviews=200)
    assert room_today(DayCounts(), limits, 0) == (200, 10)
    assert room_today(DayCounts(new=4, review=50), limits, 100) == (146, 6)
    assert room_today(DayCounts(review=195), limits, 3) == (5, 2)
    assert room_today(DayCounts(new=12), limits, 0) == (188, 0)


def test_removed_suspended_and_buried_cards_are_skipped(db, cards, shown, clock):
    db.set_flags(shown[0].id, suspended=True)
    db.set_flags(shown[1].id, buried_until=date(2025, 3, 4))
    db.sync([card for card in cards if card.id != shown[2].id])
    s = session(db, cards, clock, new=3)
    assert [entry.card.id for entry in s._queue] == [card.id for card in shown[3:6]]


def test_only_the_given_lessons(db, cards, clock):
    assert Session(db, cards, clock=clock, lessons=["another-lesson"]).done


def test_nothing_to_do(db, cards, clock):
    s = session(db, cards, clock, new=0)
    assert s.done and s.show() is None and s.current is None
    with pytest.raises(LookupError):
        s.answer(4)
    assert s.undo() is None


# --------------------------------------------------------------------------- answers and re-drill


def test_answer_reschedules_and_logs_with_duration(db, cards, shown, clock):
    s = session(db, cards, clock)
    entry = s.show()
    clock.advance(seconds=7, milliseconds=250)
    outcome = s.answer(5, "BERT")
    assert outcome.entry == entry and outcome.rescheduled and not outcome.again
    assert outcome.after == sm2.review(NEW, 5, today=date(2025, 3, 3))
    [logged] = db.answers()
    assert (logged.kind, logged.grade, logged.typed, logged.duration_ms) == ("new", 5, "BERT", 7250)
    assert logged.reviewed_at == datetime(2025, 3, 3, 6, 0, 7, 250000, tzinfo=UTC)
    assert required(s.current).card == shown[1]


def test_a_low_grade_comes_back_until_4_or_5_without_touching_the_schedule(db, cards, shown, clock):
    s = session(db, cards, clock, new=6)
    s.show()
    first = s.answer(2)
    assert first.again
    after_first = db.state(shown[0].id).schedule
    assert after_first == sm2.review(NEW, 2, today=date(2025, 3, 3))
    keys = queue_keys(s)
    assert keys[-1] == (shown[0].key, "redrill")  # after the other cards: the clock has not moved a minute
    assert s.position == Position(index=2, total=7, new=5, review=0, redrill=1)
    for _ in range(5):
        s.show()
        s.answer(5)
    assert required(s.show()).kind == "redrill"
    again = s.answer(3)
    assert again.again and not again.rescheduled and again.before == again.after == after_first
    while required(s.current).card != shown[0]:
        s.show()
        s.answer(4)
    s.show()
    assert not s.answer(4).again
    assert db.state(shown[0].id).schedule == after_first
    assert [(a.kind, a.grade) for a in db.answers(shown[0].id)] == [("new", 2), ("redrill", 3), ("redrill", 4)]
    assert all(entry.card != shown[0] for entry in s._queue)


def test_the_last_card_comes_straight_back(db, cards, shown, clock):
    s = session(db, cards, clock, new=1)
    s.show()
    s.answer(0)
    assert queue_keys(s) == [(shown[0].key, "redrill")]


def test_redrills_left_from_an_earlier_session_today_come_back(db, cards, shown, clock):
    s = session(db, cards, clock, new=2)
    s.show()
    s.answer(1)
    clock.advance(minutes=30)
    later = session(db, cards, clock, new=2)
    assert queue_keys(later) == [(shown[0].key, "redrill"), (shown[1].key, "new")]
    clock.advance(days=1)
    assert (shown[0].key, "review") in queue_keys(session(db, cards, clock, new=2))


@pytest.mark.parametrize("grade", [-1, 6, 2.5, "4", None, True])
def test_bad_grades_record_nothing(db, cards, clock, grade):
    s = session(db, cards, clock)
    s.show()
    with pytest.raises(ValueError):
        s.answer(grade)
    assert db.answers() == [] and s.position.index == 1


# --------------------------------------------------------------------------- undo, suspend, bury


def test_undo_restores_the_store_and_the_queue_position(db, cards, shown, clock):
    s = session(db, cards, clock, new=5)
    snapshots = []
    for grade in (5, 2, 4):
        s.show()
        snapshots.append((queue_keys(s), s.position, db.state(required(s.current).card.id)))
        s.answer(grade)
    assert len(db.answers()) == 3
    for keys, position, state in reversed(snapshots):
        back = required(s.undo())
        assert queue_keys(s) == keys and s.position == position
        assert back.card.id == state.card_id and db.state(state.card_id) == state
    assert db.answers() == [] and s.undo() is None
    assert not s.can_undo


def test_undo_of_a_redrill_answer(db, cards, shown, clock):
    s = session(db, cards, clock, new=1)
    s.show()
    s.answer(2)
    s.show()
    s.answer(5)
    assert s.done
    assert required(s.undo()).kind == "redrill"
    assert [(a.kind, a.grade) for a in db.answers()] == [("new", 2)]
    s.show()
    s.answer(4)
    assert s.done


def test_suspend_and_bury_leave_the_session_and_undo_puts_them_back(db, cards, shown, clock):
    s = session(db, cards, clock, new=3)
    s.show()
    s.answer(1)  # shown[0] waits for a re-drill, after the two other new cards
    for _ in range(2):
        s.show()
        s.answer(4)
    assert required(s.current).card == shown[0]
    assert s.suspend().card == shown[0]
    assert all(entry.card != shown[0] for entry in s._queue)
    assert db.state(shown[0].id).suspended
    assert required(s.undo()).card == shown[0] and not db.state(shown[0].id).suspended
    assert s.bury().card == shown[0]
    assert db.state(shown[0].id).buried_until == date(2025, 3, 4)
    assert s.done
    clock.advance(days=1)
    assert shown[0].id in [entry.card.id for entry in session(db, cards, clock)._queue]


def test_suspended_cards_stay_away(db, cards, shown, clock):
    s = session(db, cards, clock, new=2)
    s.show()
    s.suspend()
    clock.advance(days=30)
    assert shown[0].id not in [entry.card.id for entry in session(db, cards, clock, new=50)._queue]


class Counting:
    """A lesson's cards for a :class:`Deck`, counting each card it builds."""

    def __init__(self, lesson_id: str, cards: list[Card]):
        self.id, self.cards = lesson_id, cards  # the rows too, as a lesson's index lists them
        self.built: Counter[str] = Counter()

    def new_order(self) -> list[str]:
        return [card.id for card in interleave_by_kind(card for card in self.cards if card.kind.reviewed)]

    def cards_of(self, card_ids: Iterable[str]) -> dict[str, Card]:
        wanted = set(card_ids)
        found = {card.id: card for card in self.cards if card.id in wanted}
        self.built.update(found.keys())
        return found


def test_a_cram_goes_through_every_card_in_order_building_each_when_it_is_shown(db, cards, clock):
    """issue 25: `review --cram` built all 100,002 cards of the 1M-answer store's lessons before showing the
    first (409 MB). Each is built now when it comes to the front, and the cram is what it was: every card of the
    lessons not suspended or removed (buried and learned ones too), interleaved by kind lesson by lesson, a
    failed card again after the rest, undo showing the card again."""
    copy = [replace(card, id="copy/" + card.key, lesson_id="copy") for card in cards]
    every = interleave_by_kind(card for card in [*cards, *copy] if card.kind.reviewed)  # over both at once
    db.sync([card for card in [*cards, *copy] if card.id != every[-1].id])  # removed from its lesson
    db.set_flags(every[1].id, suspended=True)
    db.set_flags(every[2].id, buried_until=date(2025, 3, 4))
    db.answer(every[3].id, grade=5, kind="new", reviewed_at=clock() - timedelta(days=1), study_day=date(2025, 3, 2),
              reschedule=lambda state: Schedule(1, 250, 6, date(2025, 3, 8)))
    crammed = [card.id for card in every if card.id not in (every[1].id, every[-1].id)]
    lessons = [Counting("bert-basics", cards), Counting("copy", copy)]
    s = Session(db, Deck(lessons), clock=clock, cram=True)
    assert sum(lesson.built.total() for lesson in lessons) == 0  # none built before the first is shown
    assert s.position.total == s.position.cram == len(crammed) == 62
    shown: list[str] = []
    while (entry := s.show()) is not None:
        shown.append(entry.card.id)
        assert entry.kind is AnswerKind.CRAM and sum(lesson.built.total() for lesson in lessons) == len(set(shown))
        s.answer(1 if len(shown) == 5 else 5)
        if len(shown) == 8:
            assert required(s.undo()).card.id == crammed[7]
    assert shown == [*crammed[:8], crammed[7], *crammed[8:], crammed[4]]
    assert all(count == 1 for lesson in lessons for count in lesson.built.values())  # each built once
    one = Session(db, Deck(lessons), clock=clock, cram=True, lessons=["copy"])
    assert [entry.card.id for entry in one._queue] == [card_id for card_id in crammed if card_id.startswith("copy/")]


# --------------------------------------------------------------------------- summary and time


def test_summary(db, cards, shown, clock):
    s = session(db, cards, clock, new=3)
    for grade in (5, 2, 4, 4):
        s.show()
        clock.advance(seconds=10)
        s.answer(grade)
    summary = s.summary()
    assert (summary.answered, summary.correct, summary.redrills, summary.left) == (4, 3, 1, 0)
    assert summary.seconds == 40
    assert summary.due_tomorrow == 3


def test_a_session_spanning_the_rollover_reschedules_on_the_new_day(db, cards, shown, clock):
    clock.to(date(2025, 3, 3), hour=3)  # still the 2nd
    s = session(db, cards, clock, new=2)
    assert s.day == date(2025, 3, 2)
    s.show()
    s.answer(4)
    clock.advance(hours=2)  # 05:00 on the 3rd
    s.show()
    outcome = s.answer(4)
    assert outcome.after.due == date(2025, 3, 4)
    assert db.answers()[1].study_day == date(2025, 3, 3)


# --------------------------------------------------------------------------- SM-2 through sessions, day by day


@pytest.mark.parametrize("grades, intervals, ef100s", [
    ([5, 5, 5, 2, 4, 4, 5], [1, 6, 17, 1, 1, 6, 15], [260, 270, 280, 248, 248, 248, 258]),
    ([0, 1, 2, 3, 4, 4], [1, 1, 1, 1, 6, 8], [170, 130, 130, 130, 130, 130]),
    ([4, 3, 5, 1, 5, 3, 4, 4], [1, 6, 15, 1, 1, 6, 12, 23], [250, 236, 246, 192, 202, 188, 188, 188]),
])
def test_sm2_vectors_through_daily_sessions(db, cards, shown, clock, grades, intervals, ef100s):
    """One card answered on each due day; low grades are re-drilled the same day with a 5."""
    card = shown[0]
    day = date(2025, 3, 3)
    for grade, interval, ef100 in zip(grades, intervals, ef100s):
        clock.to(day)
        s = Session(db, [card], clock=clock)
        assert required(s.show()).card == card
        s.answer(grade)
        while s.show() is not None:  # re-drill until 4 or 5
            assert required(s.current).kind == "redrill"
            s.answer(5)
        schedule = db.state(card.id).schedule
        assert (schedule.interval, schedule.ef100, schedule.due) == (interval, ef100, day + timedelta(days=interval))
        clock.to(day + timedelta(days=interval - 1))
        assert Session(db, [card], clock=clock).done  # not due a day early
        day = schedule.due


def test_record_attempt_reschedules_once_a_day(db, cards, clock):
    practice = next(card for card in cards if card.kind == "practice")
    first = record_attempt(db, practice.id, 2, moment=clock.now)
    second = record_attempt(db, practice.id, 5, moment=clock.now + timedelta(minutes=5), typed="23837184")
    assert first.after == sm2.review(NEW, 2, today=date(2025, 3, 3))
    assert second.before == second.after == first.after
    assert [a.kind for a in db.answers(practice.id)] == ["practice", "practice"]
    third = record_attempt(db, practice.id, 5, moment=clock.now + timedelta(days=1))
    assert third.after.repetitions == 1


# --------------------------------------------------------------------------- bugs of issue 10


def test_bury_across_the_rollover_hides_the_card_until_the_day_after_the_current_one(db, cards, shown, clock):
    clock.to(date(2025, 3, 3), hour=3)  # study day 2 March
    s = session(db, cards, clock, new=2)
    clock.advance(hours=2)  # 05:00 on the 3rd: study day 3 March now
    assert s.bury().card == shown[0]
    assert db.state(shown[0].id).buried_until == date(2025, 3, 4)  # not the 3rd, when it would come back at once


def test_a_refused_undo_leaves_the_stack_so_earlier_steps_can_be_undone(sqlite_db, cards, shown, clock, tmp_path):
    from bertdrill.core.errors import StoreError

    db = sqlite_db
    s = session(db, cards, clock, new=3)
    s.show()
    s.answer(5)  # shown[0]
    s.show()
    s.answer(5)  # shown[1]
    other = Store.open(str(tmp_path / "review.db"))  # another window answers shown[1] again
    other.answer(shown[1].id, grade=3, kind=AnswerKind.REVIEW, reviewed_at=clock(), study_day=s.day)
    other.close()
    with pytest.raises(StoreError, match="answered again since"):
        s.undo()
    back = s.undo()  # the step before the refused one
    assert back is not None and back.card == shown[0]
    assert [a.card_id for a in db.answers()] == [shown[1].id, shown[1].id]
    assert not s.can_undo


def test_session_takes_any_scheduler(db, cards, shown, clock):
    """A Scheduler plugs in without the session knowing it: here one that always waits three days."""

    class ThreeDays:
        name = "three-days"
        initial = NEW

        def review(self, state, grade, *, today):
            return Schedule(state.repetitions + 1, state.ef100, 3, today + timedelta(days=3), state.lapses)

        def next_states(self, state, *, today):
            return NextStates.of({grade: self.review(state, grade, today=today) for grade in GRADES})

    s = Session(db, cards, clock=clock, scheduler=ThreeDays())
    s.show()
    assert s.answer(1).after.due == date(2025, 3, 6)


def test_the_preview_comes_from_the_sessions_scheduler(db, cards, shown, clock):
    """What each grade would give, asked of the session's scheduler (FSRS plugs in here), not of SM-2."""

    class ByGrade:
        name = "by-grade"
        initial = NEW

        def review(self, state, grade, *, today):
            return Schedule(state.repetitions + 1, state.ef100, grade + 1, today + timedelta(days=grade + 1),
                                state.lapses)

        def next_states(self, state, *, today):
            return NextStates.of({grade: self.review(state, grade, today=today) for grade in GRADES})

    s = Session(db, cards, clock=clock, scheduler=ByGrade())
    s.show()
    assert {grade: state.interval for grade, state in required(s.preview()).items()} == {0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6}
    outcome = s.answer(4)
    assert outcome.after.interval == 5  # the preview said so
    sm2_session = session(db, cards, clock)
    sm2_session.show()
    assert sm2_session.preview() == sm2.next_states(NEW, today=sm2_session.day)


def test_the_answer_gives_what_the_preview_showed_while_the_card_is_as_previewed(db, cards, shown, clock):
    """As Anki answers with the states it previewed: the preview's state for the grade, not a second review, while
    the card, the day, the scheduler and the forecast are as they were; a card changed since (another window) is
    reviewed from the state the answer reads."""

    class Counting:
        name = "counting"
        initial = NEW
        reviews = 0

        def review(self, state, grade, *, today):
            Counting.reviews += 1
            return Schedule(state.repetitions + 1, state.ef100, grade + 1, today + timedelta(days=grade + 1),
                            state.lapses)

        def next_states(self, state, *, today):
            return NextStates.of({grade: replace(self.review(state, grade, today=today), lapses=7) for grade in GRADES})

    s = Session(db, cards, clock=clock, scheduler=Counting())
    s.show()
    s.preview()
    counted = Counting.reviews
    outcome = s.answer(4)
    assert (outcome.after.interval, outcome.after.lapses, Counting.reviews) == (5, 7, counted)  # the preview's state
    s.show()
    card = required(s.current).card.id
    s.preview()
    db.set_flags(card, suspended=False)  # touches the row only: the schedule is as previewed
    assert s.answer(3).after.lapses == 7
    s.show()
    s.preview()
    card = required(s.current).card.id
    db.manage(card, CardAction.RESCHEDULE, at=clock(), study_day=s.day, due=s.day + timedelta(days=3))  # elsewhere
    counted = Counting.reviews
    changed = s.answer(4)
    assert (changed.before.due, changed.after.lapses, Counting.reviews) == (s.day + timedelta(days=3), 0, counted + 1)
    counted = Counting.reviews
    s.show()
    s.answer(4)  # no preview asked for: reviewed
    assert Counting.reviews == counted + 1


def test_a_re_drill_has_no_preview(db, cards, clock):
    s = session(db, cards, clock, new=1)
    s.show()
    s.answer(1)
    assert required(s.current).kind == "redrill" and s.preview() is None


def test_a_leech_is_suspended_and_undo_restores_it(db, cards, shown, clock):
    card = shown[0]
    for i in range(15):  # right, wrong, ...: 7 lapses, due on the 16th day
        record_attempt(db, card.id, 4 if i % 2 == 0 else 1, moment=clock(),
                       kind=AnswerKind.NEW if i == 0 else AnswerKind.REVIEW)
        clock.advance(days=1)
    s = session(db, cards, clock, new=0)
    assert required(s.current).card == card and db.state(card.id).schedule.lapses == 7
    outcome = s.answer(1)
    assert (outcome.suspended, outcome.again, db.state(card.id).suspended) == (True, False, True)
    assert all(entry.card != card for entry in s._queue)
    s.undo()
    state = db.state(card.id)
    assert (state.suspended, state.schedule.lapses, state.leech) == (False, 7, False)
    tagged = Session(db, cards, clock=clock, leech_action=LeechAction.TAG)
    outcome = tagged.answer(1)
    assert (outcome.suspended, outcome.again, db.state(card.id).suspended, db.state(card.id).leech) == \
        (False, True, False, True)


# --- issue 11, item 3: the first answer of a study day always schedules ----------------------

def test_a_redrill_that_crosses_the_rollover_is_the_new_days_first_answer(db, cards, shown, clock):
    """Grade 1 at 03:59:55, grade 4 after 04:00: that second answer belonged to a new study day and froze the card
    (logged as a re-drill, repetitions 0, every later answer that day "re-drill, schedule unchanged")."""
    clock.now = datetime(2025, 3, 4, 3, 59, 55, tzinfo=ISTANBUL)  # study day 2025-03-03 (rollover 04:00)
    s = session(db, cards, clock, new=1)
    s.show()
    first = s.answer(1)
    assert first.again and first.study_day == date(2025, 3, 3)
    clock.advance(seconds=10)  # 04:00:05: study day 2025-03-04
    assert required(s.show()).kind == "redrill"
    assert s.preview() is not None  # it will schedule, so the screen previews it
    second = s.answer(4)
    assert second.rescheduled and second.kind == "review" and not second.again
    yesterday = sm2.review(NEW, 1, today=date(2025, 3, 3))
    assert second.before == yesterday
    assert second.after == sm2.review(yesterday, 4, today=date(2025, 3, 4))
    assert db.state(shown[0].id).schedule.repetitions == 1
    assert [(a.kind, a.grade, a.study_day) for a in db.answers(shown[0].id)] == [
        ("new", 1, date(2025, 3, 3)), ("review", 4, date(2025, 3, 4))]


def test_a_redrill_on_the_same_study_day_still_leaves_the_schedule(db, cards, shown, clock):
    clock.now = datetime(2025, 3, 4, 3, 59, 50, tzinfo=ISTANBUL)
    s = session(db, cards, clock, new=1)
    s.show()
    s.answer(1)
    clock.advance(seconds=5)  # 03:59:55: the same study day
    s.show()
    assert s.preview() is None
    again = s.answer(4)
    assert not again.rescheduled and again.kind == "redrill"


# --- issue 21: learning steps as Anki's ----------------------------------------------------------

def test_a_failed_card_comes_back_after_its_learning_step_or_after_the_rest(db, cards, shown, clock):
    s = session(db, cards, clock, new=6)
    s.show()
    s.answer(1)
    assert queue_keys(s)[-1] == (shown[0].key, "redrill")
    s.show()
    s.answer(4)
    clock.advance(seconds=LEARNING_STEPS[0].total_seconds())  # a minute later it is ready: it comes first
    assert required(s.show()).card == shown[0] and required(s.current).kind == "redrill"
    s.answer(1)  # failed again: back in ten minutes, the new cards meanwhile
    clock.advance(minutes=5)
    assert required(s.show()).card == shown[2]


def test_a_learner_who_fails_everything_meets_the_new_cards_and_the_loop_ends(db, cards, shown, clock):
    s = session(db, cards, clock, new=5)
    seen_new, answers = [], 0
    while (entry := s.show()) is not None:
        if entry.kind == "new":
            seen_new.append(entry.card)
        s.answer(0)
        answers += 1
        clock.advance(seconds=20)
    assert seen_new == list(shown[:5])  # every new card of the day, whatever came before
    assert answers == 5 * (1 + MAX_REDRILLS)  # each failed card re-drilled at most MAX_REDRILLS times
    assert all(db.state(card.id).schedule.due == date(2025, 3, 4) for card in shown[:5])


def test_a_carried_over_redrill_shows_no_preview_it_would_not_honour(db, cards, shown, clock):
    first = session(db, cards, clock, new=1)
    first.show()
    first.answer(1)
    clock.advance(hours=1)
    later = session(db, cards, clock, new=0)
    assert required(later.show()).kind == "redrill" and later.preview() is None
    assert not later.answer(4).rescheduled  # as the missing preview said


# --- issue 21: siblings buried, as Anki buries a note's other cards ---------------------------------

def test_siblings_never_share_a_day_and_wait_for_the_next(db, cards, clock):
    """An item's parameter sets, a table's pairs, and a card whose explanation gives another's answer away
    (bert-base-settings lists d_model, the FFN size and the vocabulary: bert-base-match asks them) are buried
    until the next study day once one of them is answered; the new-card limit is filled by the cards after."""
    s = session(db, cards, clock, bury=True, new=100)
    keys = [entry.card.key for entry in s._queue]
    for first, second in (("total-params@bert-base", "total-params@bert-large"),
                          ("bert-base-match#layers", "bert-base-match#d-model"),
                          ("bert-definition", "bert-acronym")):
        assert first in keys and second not in keys
    assert len(keys) == 17 < 32
    ten = session(db, cards, clock, bury=True)
    assert len(ten._queue) == 10  # the limit is met with other cards
    assert required(ten.show()).card.key == "bert-definition"
    outcome = ten.answer(5)
    assert outcome.buried == ("bert-basics/bert-acronym",)  # held back from today's queue for it
    assert db.state("bert-basics/bert-acronym").buried_until == date(2025, 3, 4)
    while ten.show() is not None:
        ten.answer(5)
    again = session(db, cards, clock, bury=True, new=100)  # a second session the same day: still buried
    assert "bert-acronym" not in [entry.card.key for entry in again._queue]
    clock.advance(days=1)
    assert "bert-basics/bert-acronym" in db.new_ids(date(2025, 3, 4), limit=100)  # back among the new cards
    tomorrow = session(db, cards, clock, bury=True)  # bert-definition is due again, and holds it back again
    assert "bert-acronym" not in [entry.card.key for entry in tomorrow._queue]
    assert "bert-acronym" in [entry.card.key for entry in session(db, cards, clock, bury=False)._queue]


def test_a_card_whose_explanation_gives_another_away_buries_it_and_undo_unburies(db, cards, clock):
    """Card 5's explanation lists d_model, FFN size and vocabulary; card 8 then asked d_model (issue 21)."""
    due = {"bert-basics/bert-base-settings", "bert-basics/bert-base-match#d-model"}
    for card_id in due:  # both learned and due today
        db.answer(card_id, grade=5, kind="new", reviewed_at=clock() - timedelta(days=1),
                  study_day=date(2025, 3, 2), reschedule=lambda state: Schedule(1, 260, 1, date(2025, 3, 3)))
    s = session(db, cards, clock, bury=True, new=0)
    assert [entry.card.key for entry in s._queue] == ["bert-base-settings"]
    assert required(s.show()).card.key == "bert-base-settings"
    outcome = s.answer(2)  # failed: it comes back, and its answer was shown all the same
    assert outcome.buried == ("bert-basics/bert-base-match#d-model",)
    assert db.state("bert-basics/bert-base-match#d-model").buried_until == date(2025, 3, 4)
    s.undo()
    assert db.state("bert-basics/bert-base-match#d-model").buried_until is None
    assert required(s.show()).card.key == "bert-base-settings"


def test_without_burying_every_card_of_an_item_comes(db, cards, clock):
    s = session(db, cards, clock, bury=False, new=100)
    assert len(s._queue) == 32
