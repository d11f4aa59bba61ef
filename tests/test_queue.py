"""A session's queue: undo puts it back exactly, its counts stay in step, and nothing walks it per card."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from timing import cpu_seconds

from bertdrill.app.queue import Entry, Later, Queue
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


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(KINDS), max_size=12), OPERATIONS)
def test_cards_queued_by_id_are_built_at_the_front_and_queue_as_built_ones_do(kinds, operations):
    """A cram queues every card of its lessons by id (issue 25: 100,002 cards built took 270 MB): through every
    change and its undo it is the queue of the built cards, and builds no card before it comes to the front."""
    cards = {f"l/c{number}": card(number) for number in range(len(kinds))}
    built: list[str] = []

    def build(card_ids):
        built.extend(card_ids)
        return [cards[card_id] for card_id in card_ids]

    lazy = Queue((Later(f"l/c{number}", kind) for number, kind in enumerate(kinds)), build=build)
    eager = Queue(Entry(cards[f"l/c{number}"], kind) for number, kind in enumerate(kinds))
    marks: list[tuple[int, int]] = []
    fronted = {entry.card.id for entry in [eager.front] if entry is not None}  # the cards that came to the front

    def seen(entry: Entry | None):
        return None if entry is None else (entry.card, entry.kind, entry.ready_at)

    for operation, number, kind, minutes in operations:
        now = START + timedelta(minutes=minutes)
        if operation == "take" and eager:
            assert seen(lazy.take_front()) == seen(eager.take_front())
        elif operation == "back":
            for queue in (lazy, eager):
                queue.put_back(Entry(card(number), kind, ready_at=START + timedelta(minutes=number % 20)))
        elif operation == "replace" and eager:
            for queue in (lazy, eager):
                front = queue.front
                assert front is not None
                queue.replace_front(Entry(front.card, front.kind, ready_at=front.ready_at))
        elif operation == "drop":
            for queue in (lazy, eager):
                queue.drop({f"l/c{number}", f"l/c{number + 1}"})
        elif operation == "forward":
            for queue in (lazy, eager):
                queue.bring_forward_ready(now)
        elif operation == "mark":
            marks.append((lazy.mark(), eager.mark()))
        elif operation == "undo" and marks:
            lazy_mark, eager_mark = marks.pop()
            lazy.back_to(lazy_mark)
            eager.back_to(eager_mark)
        assert seen(lazy.front) == seen(eager.front) and len(lazy) == len(eager) and counted(lazy) == counted(eager)
        fronted.update([front.card.id] if (front := eager.front) is not None else [])
        assert all(lazy.holds(card_id) == eager.holds(card_id) for card_id in cards)
        assert set(built) <= fronted
    assert [seen(entry) for entry in lazy] == [seen(entry) for entry in eager]  # a look at all of it builds it


def test_an_id_queued_that_builds_no_card_is_left_out():
    queue = Queue([Later("l/gone", AnswerKind.CRAM), Later("l/c0", AnswerKind.CRAM)],
                  build=lambda card_ids: [card(0) for card_id in card_ids if card_id == "l/c0"])
    assert len(queue) == 2 and required_front(queue).card == card(0) and len(queue) == 1


def required_front(queue: Queue) -> Entry:
    front = queue.front
    assert front is not None
    return front


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
