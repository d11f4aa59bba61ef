"""The scheduler registry and the shared state: every scheduler a peer, every name stored and shown."""

from datetime import date

import pytest

from bertdrill.core.scheduling.fsrs import FSRS
from bertdrill.core.scheduling.registry import DEFAULT, SchedulerName, registered, scheduler_named, stored_name
from bertdrill.core.scheduling.sm2 import SM2
from bertdrill.core.scheduling.state import GRADES, NEW, AnswerKind, Grade, NextStates, check_grade
from bertdrill.ports import SchedulerChoice


def test_every_stored_name_has_an_entry_with_a_title_and_a_constructor():
    titles = {name: registered(name).title for name in SchedulerName}
    assert titles == {SchedulerName.SM2: "SM-2", SchedulerName.FSRS: "FSRS"}
    assert scheduler_named(SchedulerName.SM2) == SM2() and scheduler_named(SchedulerName.FSRS) == FSRS()
    assert scheduler_named(SchedulerName.FSRS, 0.8) == FSRS(0.8)
    assert [registered(name).has_retention for name in SchedulerName] == [False, True]
    assert DEFAULT is SchedulerName.SM2 and SchedulerChoice().name is DEFAULT


def test_a_stored_name_reads_back_as_its_member_and_any_other_text_is_refused():
    assert stored_name("fsrs") is SchedulerName.FSRS
    with pytest.raises(ValueError, match="no scheduler named 'anki'; the names are sm2, fsrs"):
        stored_name("anki")


@pytest.mark.parametrize("scheduler", [SM2(), FSRS()])
def test_every_scheduler_previews_each_grade_as_a_named_record(scheduler):
    today = date(2026, 5, 1)
    state = scheduler.review(NEW, 4, today=today)
    preview = scheduler.next_states(state, today=today)
    assert isinstance(preview, NextStates)
    assert [grade for grade, _state in preview.items()] == list(GRADES)
    assert preview.good == scheduler.review(state, Grade.GOOD, today=today) == preview.after(Grade(4))


def test_grades_are_checked_into_the_type():
    assert check_grade(3) is Grade.HARD and check_grade(Grade.PERFECT) is Grade.PERFECT
    for bad in (True, 6, -1, 3.0, "3"):
        with pytest.raises(ValueError):
            check_grade(bad)  # type: ignore[arg-type]  # wrong types on purpose: each is refused


def test_only_reviews_and_new_cards_count_against_the_daily_limits():
    assert [kind for kind in AnswerKind if kind.first_of_day] == [AnswerKind.REVIEW, AnswerKind.NEW]
    assert [str(kind) for kind in AnswerKind] == ["review", "new", "redrill", "practice", "cram"]
