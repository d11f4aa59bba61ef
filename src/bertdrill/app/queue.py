"""A review session's queue: the cards still to show, in order, and what each card shown asks of it.

The review screen asks for every card what comes next, how many of each kind are left and whether
a re-drill's learning step has passed; an answer takes the front card off, may put it back at the
end and must be undoable. A session over a whole collection queues 100,000 cards, so each of
these costs the same whatever the queue's length: the queue is a deque with its counts kept in step,
and undo takes back the changes made since a :meth:`Queue.mark` one by one (a copy of the whole queue
per answer made each answer cost as much as the collection was long). A cram queues every card of the
lessons: those are queued by id (:class:`Later`) and each is built when it reaches the front, so the first card
of 100,000 is shown without building the others (they took 270 MB).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, cast

from bertdrill.core.cards import Card
from bertdrill.core.scheduling.state import AnswerKind

__all__ = ["Entry", "Later", "Queue"]


@dataclass(frozen=True)
class Entry:
    """A card waiting in the queue, and why: a due ``review``, a ``new`` card, or a ``redrill``."""

    card: Card
    kind: AnswerKind
    ready_at: datetime | None = None  # a re-drill: not before this time, unless nothing else is left

    @property
    def card_id(self) -> str:
        return self.card.id


class Later(NamedTuple):
    """A card queued by its id, built when it comes to the front (an :class:`Entry` then); counted as one."""

    card_id: str
    kind: AnswerKind
    ready_at: None = None  # never timed: a re-drill is put back built


Queued = Entry | Later


class Queue:
    """Entries in the order they are shown; every change is kept until :meth:`back_to` takes it back.

    ``build`` gives the cards of some ids, in their order (an id of no card left out): how an entry queued
    :class:`Later` is built when it comes to the front. Building is no change of the queue (nothing to undo):
    the entry is the same card, asked the same way."""

    def __init__(self, entries: Iterable[Queued] = (), build: Callable[[Sequence[str]], Sequence[Card]] | None = None):
        self._line: deque[Queued] = deque()
        self._build = build
        self._kinds: Counter[AnswerKind] = Counter()
        self._cards: Counter[tuple[str, AnswerKind]] = Counter()  # a card's entries queued, by kind
        self._timed = 0  # entries with a ready_at: re-drills waiting for their learning step
        self._undo: list[Callable[[], None]] = []  # how to take back each change, latest last
        self._refill(entries)

    def __len__(self) -> int:
        return len(self._line)

    def __iter__(self) -> Iterator[Entry]:
        """Every entry in order, those queued by id built first: a look at the whole queue (the session never
        takes one) builds every card of it."""
        if any(isinstance(queued, Later) for queued in self._line):
            assert self._build is not None, "a queue of cards by id is given how to build them"
            built = {card.id: card for card in self._build([queued.card_id for queued in self._line
                                                             if isinstance(queued, Later)])}
            self._refill(Entry(built[queued.card_id], queued.kind) if isinstance(queued, Later) else queued
                         for queued in list(self._line) if not isinstance(queued, Later) or queued.card_id in built)
        return iter(cast(deque[Entry], self._line))

    @property
    def front(self) -> Entry | None:
        self._build_front()
        return self._line[0] if self._line else None  # type: ignore[return-value]  # built, or nothing left

    def holds(self, card_id: str, *, but: AnswerKind | None = None) -> bool:
        """Whether the card is queued (``but``: as another kind than this one)."""
        return any(self._cards[card_id, kind] for kind in AnswerKind if kind is not but)

    def count(self, kind: AnswerKind) -> int:
        return self._kinds[kind]

    # ------------------------------------------------------------- changes, each undoable

    def mark(self) -> int:
        """Where the queue is now: :meth:`back_to` it takes back every change made since."""
        return len(self._undo)

    def back_to(self, mark: int) -> None:
        while len(self._undo) > mark:
            self._undo.pop()()

    def take_front(self) -> Entry:
        entry = self.front
        assert entry is not None, "take_front of an empty queue"
        self._take(at_end=False)
        self._undo.append(lambda: self._add(entry, at_end=False))
        return entry

    def put_back(self, entry: Entry) -> None:
        """Queue ``entry`` after every other."""
        self._add(entry, at_end=True)

        def undo() -> None:
            self._take(at_end=True)

        self._undo.append(undo)

    def replace_front(self, entry: Entry) -> None:
        """The front entry becomes ``entry`` (the same card, asked with other numbers)."""
        self._build_front()
        before = self._take(at_end=False)
        self._add(entry, at_end=False)

        def undo() -> None:
            self._take(at_end=False)
            self._add(before, at_end=False)

        self._undo.append(undo)

    def drop(self, card_ids: Collection[str]) -> None:
        """Take every entry of these cards out of the queue (they are buried or suspended)."""
        if not any(self.holds(card_id) for card_id in card_ids):
            return
        before = list(self._line)
        self._refill(entry for entry in before if entry.card_id not in card_ids)
        self._undo.append(lambda: self._refill(before))

    def bring_forward_ready(self, now: datetime) -> None:
        """Move the first entry whose learning step has passed (``ready_at <= now``) to the front.

        Timed entries are put back at the end, so they are looked for from there: only as many
        entries are read as there are timed ones behind the front (all of them, in order, unless
        another was moved ahead of them)."""
        if not self._timed or (self._line[0].ready_at is not None and self._line[0].ready_at <= now):
            return  # none waiting, or the front one is ready already
        wanted = self._timed - (self._line[0].ready_at is not None)
        found: int | None = None
        last = len(self._line) - 1
        for back, entry in enumerate(reversed(self._line)):
            if not wanted:
                break
            if entry.ready_at is not None:
                wanted -= 1
                if entry.ready_at <= now:
                    found = last - back  # the earliest ready one so far, from the end
        if found is None or found == 0:
            return
        entry = self._line[found]
        del self._line[found]  # near the end: a deque deletes from its nearer end
        self._line.appendleft(entry)

        def undo() -> None:
            self._line.popleft()
            self._line.insert(found, entry)

        self._undo.append(undo)

    def _build_front(self) -> None:
        """Build the front entry if it is queued :class:`Later`. An id that builds no card (none of the lessons',
        or one a review does not show) is left out, as a queue of built cards would never have held it."""
        while self._line and isinstance(later := self._line[0], Later):
            assert self._build is not None, "a queue of cards by id is given how to build them"
            built = self._build([later.card_id])
            if built:
                self._line[0] = Entry(built[0], later.kind)
            else:
                self._take(at_end=False)

    # ------------------------------------------------------------- the counts kept in step

    def _add(self, entry: Queued, *, at_end: bool) -> None:
        if at_end:
            self._line.append(entry)
        else:
            self._line.appendleft(entry)
        self._counted(entry, 1)

    def _take(self, *, at_end: bool) -> Queued:
        entry = self._line.pop() if at_end else self._line.popleft()
        self._counted(entry, -1)
        return entry

    def _counted(self, entry: Queued, step: int) -> None:
        self._kinds[entry.kind] += step
        self._cards[entry.card_id, entry.kind] += step
        self._timed += step if entry.ready_at is not None else 0

    def _refill(self, entries: Iterable[Queued]) -> None:
        """The queue becomes ``entries``, counted in one pass each (a cram's 100,000: 0.3 s one by one)."""
        self._line.clear()
        self._line.extend(entries)
        self._kinds = Counter(entry.kind for entry in self._line)
        self._cards = Counter((entry.card_id, entry.kind) for entry in self._line)
        self._timed = sum(entry.ready_at is not None for entry in self._line)
