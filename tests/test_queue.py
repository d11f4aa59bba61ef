"""A session's queue: undo puts it back exactly, its counts stay in step, and nothing walks it per card."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from timing import cpu_seconds

from bertdrill.app.queue import Entry, Queue
from bertdrill.core.cards import FactCard
from bertdrill.core.scheduling.state import AnswerKind

START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
KINDS = [AnswerKind.NEW, AnswerKind.REVIEW, AnswerKind.REDRILL, AnswerKind.CRAM]


def card(number: int) -> FactCard:
    return FactCard(id=f"l/c{number}", lesson_id="l", item_id=f"c{number}", prompt={"en": "?"}, answer={"en": "!"})


def entries(count: int, kind: AnswerKind = AnswerKind.NEW) -> list[Entry]:
    return [Entry(card(number), kind) for number in range(count)]


def first_ready_moved(line: list[Entry], now: datetime) -> list[Entry]:
    """What the session did before the queue kept counts: read every entry for the first one ready."""
    ready = [i for i, entry in enumerate(line) if entry.ready_at is not None and entry.ready_at <= now]
    return [line[ready[0]], *line[:ready[0]], *line[ready[0] + 1:]] if ready and ready[0] > 0 else line


def counted(queue: Queue) -> dict[AnswerKind, int]:
    return {kind: queue.count(kind) for kind in AnswerKind}


OPERATIONS = st.lists(st.tuples(st.sampled_from(["take", "back", "replace", "drop", "forward", "mark", "undo"]),
                                st.integers(0, 40), st.sampled_from(KINDS), st.integers(-5, 30)), max_size=60)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(KINDS), max_size=12), OPERATIONS)
def test_every_change_is_taken_back_exactly_and_the_counts_follow(kinds, operations):
    queue = Queue(Entry(card(number), kind) for number, kind in enumerate(kinds))
    line = list(queue)
    marks: list[tuple[int, list[Entry]]] = []
    for operation, number, kind, minutes in operations:
        now = START + timedelta(minutes=minutes)
        if operation == "take" and line:
            assert queue.take_front() is line.pop(0)
        elif operation == "back":
            line.append(Entry(card(number), kind, ready_at=START + timedelta(minutes=number % 20)))
            queue.put_back(line[-1])
        elif operation == "replace" and line:
            line[0] = Entry(line[0].card, line[0].kind, ready_at=line[0].ready_at)
            queue.replace_front(line[0])
        elif operation == "drop":
            gone = {f"l/c{number}", f"l/c{number + 1}"}
            line = [entry for entry in line if entry.card.id not in gone]
            queue.drop(gone)
        elif operation == "forward" and line:
            line = first_ready_moved(line, now)
            queue.bring_forward_ready(now)
        elif operation == "mark":
            marks.append((queue.mark(), list(line)))
        elif operation == "undo" and marks:
            mark, line = marks.pop()
            queue.back_to(mark)
        assert list(queue) == line and all(a is b for a, b in zip(queue, line, strict=True))
        assert counted(queue) == {kind: Counter(entry.kind for entry in line)[kind] for kind in AnswerKind}
        assert queue.front is (line[0] if line else None)
        for entry in line:
            assert queue.holds(entry.card.id)
            assert queue.holds(entry.card.id, but=entry.kind) == any(
                other.card.id == entry.card.id and other.kind is not entry.kind for other in line)


def test_a_card_shown_costs_the_same_in_a_queue_of_100000_as_in_one_of_1000():
    """Before, showing a card read the whole queue for a ready re-drill, its position counted the queue by
    kind and its answer copied the queue for undo: 100 times the work at 100 times the cards."""

    def shown_and_answered(size: int) -> float:
        queue = Queue(entries(size))
        for number in range(3):  # three failed cards waiting for their learning step, behind the rest
            queue.put_back(Entry(card(size + number), AnswerKind.REDRILL, ready_at=START + timedelta(hours=1)))

        def cards() -> None:
            for _ in range(300):
                queue.bring_forward_ready(START)
                {kind: queue.count(kind) for kind in AnswerKind}  # noqa: B018 - the screen's header
                mark = queue.mark()
                entry = queue.take_front()
                queue.put_back(Entry(entry.card, AnswerKind.REDRILL, ready_at=START + timedelta(hours=1)))
                queue.back_to(mark)  # undone, and answered again
                queue.take_front()

        return min(cpu_seconds(cards) for _ in range(3))

    small, large = shown_and_answered(1_000), shown_and_answered(100_000)
    assert large < 3 * small + 0.002, (small, large)
