"""Fuzz and load balancing, as Anki does them: intervals spread a little, so cards learned together do not
stay together, and days of the forecast even out.

**Fuzz** (Anki's ``rslib/src/scheduler/states/fuzz.rs``). An interval under 2.5 days is left alone; a longer
one may move by 1 day plus 15 % of its days from 2.5 to 7, 10 % of those from 7 to 20 and 5 % of those past
20, either way (:func:`fuzz_bounds`): 7 days becomes 5 to 9, 37 days 33 to 41. Where in that range is
decided by the card's fuzz factor, a number from 0 to 1 (:func:`fuzz_factor`) drawn from a seed that is a
pure function of the card and the answer (:func:`fuzz_seed`: the card and the study day of its scheduling
answer, since a card has one such answer a day, as Anki seeds it with the card and its count of reviews),
so undoing an answer and giving it again, or replaying the log when the scheduler is switched, gives the
same day. A passing review is never fuzzed below the interval it had unless the scheduler itself shortened
it (:func:`minimum_review_fuzz_interval`).

**Load balancing** (Anki's ``load_balancer.rs``). Instead of the fuzz factor's day, a day of the same range
is drawn with a weight for each: 1 for a day with nothing due, else ``(1 / due) ** 2.15 * (1 / days) ** 3``
(fewer cards due and sooner both weigh more; the second term keeps the balancer from pushing cards late),
with the same seed (:func:`balanced_interval`). Only intervals up to 90 days are balanced, as in Anki, and
only when answering: the counts are the store's forecast when the session began, kept up to date by the
session (:class:`Load`); a replay (switching scheduler) knows no past forecast, so it fuzzes only.

Anki's siblings and easy days play no part: bertdrill has neither in its scheduler.

Bertdrill's intervals are whole days (SM-2's by its pinned integer rule, FSRS's rounded), so the fuzz is
applied to the whole-day interval the scheduler gave, where Anki fuzzes FSRS's fractional one. Anki computes
in 32-bit floats; on whole-day intervals every bound is at least 0.025 from a rounding tie, so 64-bit floats
give the same days (the tests hold these functions to Anki's own test vectors).

:class:`Spread` wraps a scheduler: :meth:`Spread.for_card` gives the scheduler for one card, which fuzzes
(and balances, given a :class:`Load`) what the wrapped scheduler decides. An exam plan's last day is kept:
a card the plan brings back before the exam is never fuzzed past it.

Pure: standard library only; days are arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache, partial
from typing import Any, Protocol, assert_never, cast

from bertdrill.core.scheduling.registry import DEFAULT_SPREADING, Spreading
from bertdrill.core.scheduling.replay import DayLog, scheduling_days
from bertdrill.core.scheduling.state import PASSING, NextStates, Schedule
from bertdrill.core.scheduling.state import Adjust as Adjust  # re-exported: what a fast replay takes

__all__ = ["DEFAULT_SPREADING", "Spreading"]  # the setting's names live in the registry (`--help` reads them)


MAX_INTERVAL = 36500
"""The longest interval, in days (a hundred years, as Anki and FSRS cap it)."""

FUZZ_RANGES = ((2.5, 7.0, 0.15), (7.0, 20.0, 0.1), (20.0, math.inf, 0.05))
"""(start, end, factor): each day of an interval in the range adds ``factor`` days of fuzz either way."""

MAX_LOAD_BALANCE_INTERVAL = 90
"""Intervals longer than this are fuzzed but not balanced: that far out, the need to balance is low."""

LOAD_BALANCE_DAYS = 99
"""The days of the forecast the balancer reads (90 and a tenth more, as Anki keeps them)."""

_MASK = (1 << 64) - 1


def spreading_named(text: str) -> Spreading:
    """The setting read back from a store; ValueError naming the known ones for any other text."""
    try:
        return Spreading(text)
    except ValueError:
        raise ValueError(f"no spreading named {text!r}; the names are {', '.join(Spreading)}") from None


def fuzzes(spreading: Spreading) -> bool:
    match spreading:
        case Spreading.OFF:
            return False
        case Spreading.FUZZ | Spreading.BALANCE:
            return True
        case unreachable:
            assert_never(unreachable)


def balances(spreading: Spreading) -> bool:
    match spreading:
        case Spreading.OFF | Spreading.FUZZ:
            return False
        case Spreading.BALANCE:
            return True
        case unreachable:
            assert_never(unreachable)


# --------------------------------------------------------------------------- Anki's rules

def _round(value: float) -> int:
    """Rust's ``f32::round`` of a value at least 0: the nearest whole number, a half away from zero."""
    return math.floor(value + 0.5)


def fuzz_delta(interval: float) -> float:
    """Days of fuzz either way: none under 2.5 days, else 1 plus each range's factor times its days."""
    if interval < 2.5:
        return 0.0
    delta = 1.0
    for start, end, factor in FUZZ_RANGES:
        delta += factor * max(min(interval, end) - start, 0.0)
    return delta


def fuzz_bounds(interval: float) -> tuple[int, int]:
    """The fuzz range of ``interval``, before any minimum or maximum."""
    delta = fuzz_delta(interval)
    return _round(interval - delta), _round(interval + delta)


def constrained_fuzz_bounds(interval: float, minimum: int, maximum: int) -> tuple[int, int]:
    """The fuzz range kept within ``minimum``..``maximum``; at least two days wide where that allows it."""
    minimum = min(minimum, maximum)
    interval = min(max(interval, minimum), maximum)
    lower, upper = fuzz_bounds(interval)
    lower = min(max(lower, minimum), maximum)
    upper = min(max(upper, minimum), maximum)
    if upper == lower and 2 < upper < maximum:
        upper = lower + 1
    return lower, upper


def with_review_fuzz(factor: float | None, interval: float, minimum: int, maximum: int) -> int:
    """The interval the fuzz ``factor`` (0 to 1; None: no fuzz) picks in the constrained range."""
    if factor is None:
        return min(max(_round(interval), minimum), maximum)
    lower, upper = constrained_fuzz_bounds(interval, minimum, maximum)
    return math.floor(lower + factor * (1 + upper - lower))


def minimum_review_fuzz_interval(interval: float, previous: int, maximum: int) -> int:
    """The least a passing review's fuzzed interval may be: one more than the last interval if this one grew;
    the last one if it did not grow beyond the fuzz range (fuzz never shortens it); else 0 (it shrank: new
    parameters or a lower retention)."""
    rounded = _round(interval)
    _lower, upper = constrained_fuzz_bounds(interval, 1, maximum)
    if rounded > previous:
        return previous + 1
    if previous <= upper:
        return previous
    return 0


def load_weight(due: int, days: int) -> float:
    """The balancer's weight of a day ``days`` ahead with ``due`` cards due: Anki's ``select_weighted_interval``."""
    if due == 0:
        return 1.0
    return float((1.0 / due) ** 2.15) * (1.0 / days) ** 3


def balanced_interval(interval: float, minimum: int, maximum: int, due_on: Callable[[int], int],
                      draw: float) -> int | None:
    """The day of the fuzz range the balancer picks with the random number ``draw`` (0 to 1): the range's days
    weighted by :func:`load_weight` of ``due_on(days)``, the cards due that many days ahead. None for an
    interval past :data:`MAX_LOAD_BALANCE_INTERVAL` (the caller fuzzes it instead)."""
    if interval > MAX_LOAD_BALANCE_INTERVAL or minimum > MAX_LOAD_BALANCE_INTERVAL:
        return None
    lower, upper = constrained_fuzz_bounds(interval, minimum, maximum)
    days = range(lower, upper + 1)
    weights = [load_weight(due_on(each), each) if each > 0 else 0.0 for each in days]
    total = sum(weights)
    if total <= 0:
        return None
    point = draw * total
    for each, weight in zip(days, weights):
        if point < weight:
            return each
        point -= weight
    return upper  # only a rounding of the last subtraction gets here


# --------------------------------------------------------------------------- the seed

def _splitmix64(value: int) -> int:
    """One step of SplitMix64 (Steele, Lea and Flood, 2014): a well-mixed 64-bit number from any 64-bit one."""
    z = (value + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def card_number(card_id: str) -> int:
    """A card's id as a 64-bit number (the first 8 bytes of its SHA-256), the same on every machine."""
    import hashlib  # here: `bertdrill --help` loads this module for the setting's names alone

    return int.from_bytes(hashlib.sha256(card_id.encode()).digest()[:8], "big")


def fuzz_seed(card_id: str, day: date) -> int:
    """The seed of a card's answer on study day ``day``: the card's number plus the day's, as Anki adds the
    card's id and its count of reviews (a card has one scheduling answer a study day)."""
    return (card_number(card_id) + day.toordinal()) & _MASK


def fuzz_factor(seed: int) -> float:
    """The number from 0 to 1 (1 excluded) a seed gives: the top 53 bits of one SplitMix64 step (written out
    here, as in :func:`_splitmix64`: a switch draws one per answer)."""
    z = (seed + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return ((z ^ (z >> 31)) >> 11) / 9007199254740992  # 2 ** 53


# --------------------------------------------------------------------------- the forecast

@dataclass
class Load:
    """Cards due on each day, as the balancer reads them: the store's forecast when a session began, moved
    by the session as it answers and undoes (a day before ``today`` counts as today: it is overdue)."""

    today: date
    due: dict[date, int] = field(default_factory=dict)
    moves: int = 0  # how many times a card moved: what a preview balanced over is still the forecast if unchanged

    @classmethod
    def of(cls, today: date, forecast: Iterable[tuple[date, int]]) -> Load:
        return cls(today, {day: count for day, count in forecast if count})

    def on(self, days: int) -> int:
        """Cards due ``days`` after :attr:`today`."""
        return self.due.get(self.today + timedelta(days=days), 0)

    def moved(self, before: date | None, after: date | None) -> None:
        """A card once due on ``before`` is now due on ``after`` (None: not due, a new card)."""
        if before == after:
            return
        self.moves += 1
        if before is not None:
            day = max(before, self.today)
            left = self.due.get(day, 0) - 1
            if left > 0:
                self.due[day] = left
            else:
                self.due.pop(day, None)
        if after is not None:
            day = max(after, self.today)
            self.due[day] = self.due.get(day, 0) + 1


# --------------------------------------------------------------------------- around a scheduler

class Reviewing(Protocol):
    """What a wrapped scheduler must have (:class:`bertdrill.ports.Scheduler`)."""

    @property
    def initial(self) -> Schedule: ...

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule: ...

    def next_states(self, state: Schedule, *, today: date) -> NextStates: ...


def card_scheduler(scheduler: Reviewing, card_id: str, load: Load | None = None) -> Reviewing:
    """The scheduler for one card: ``scheduler.for_card(card_id, load)`` where it has one (a :class:`Spread`,
    an exam per lesson), else ``scheduler`` itself."""
    for_card = getattr(scheduler, "for_card", None)
    return scheduler if for_card is None else cast(Reviewing, for_card(card_id, load))


@dataclass(frozen=True)
class Spread:
    """``inner`` with its intervals spread as ``spreading`` says. Only :meth:`for_card` spreads (the seed is the
    card's); the Scheduler methods of this object itself are the inner scheduler's, unspread."""

    inner: Any  # a Scheduler, possibly with a for_card of its own (an exam per lesson)
    spreading: Spreading = DEFAULT_SPREADING

    @property
    def initial(self) -> Schedule:
        initial: Schedule = self.inner.initial
        return initial

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule:
        reviewed: Schedule = self.inner.review(state, grade, today=today)
        return reviewed

    def next_states(self, state: Schedule, *, today: date) -> NextStates:
        states: NextStates = self.inner.next_states(state, today=today)
        return states

    @property
    def balancing(self) -> bool:
        return balances(self.spreading)

    def for_card(self, card_id: str, load: Load | None = None) -> Any:
        """The scheduler of ``card_id``: fuzzed unless spreading is off, and balanced when it is ``balance``
        and ``load`` is given (a session's answers; a replay has none)."""
        inner = card_scheduler(self.inner, card_id, load)
        if not fuzzes(self.spreading):
            return inner
        return SpreadCard(inner, card_number(card_id), load if balances(self.spreading) else None)

    def replayer(self) -> Callable[[str, DayLog], Schedule] | None:
        """What ``replay_days(self, log, card_id)`` gives, as a function of (card_id, log) that does once what
        needs doing once (a switch replays 100,000 cards: making each its :class:`SpreadCard` was a third of
        SM-2's replay): the inner scheduler's own replay, fuzzed by :func:`fuzz_adjust` with the card's number.
        None where the inner scheduler decides per card (an exam per lesson) or has no replay of its own."""
        own = getattr(self.inner, "replay", None)
        if own is None or getattr(self.inner, "for_card", None) is not None:
            return None
        if not fuzzes(self.spreading):
            return lambda _card_id, log: cast(Schedule, own(log))
        return lambda card_id, log: cast(Schedule, own(log, adjust=partial(fuzz_adjust, card_number(card_id))))


@dataclass(frozen=True)
class SpreadCard:
    """One card's scheduler: ``inner``'s decisions, fuzzed with the card's seed (``number``) and balanced over
    ``load`` if given."""

    inner: Any
    number: int  # card_number of the card
    load: Load | None = None

    @property
    def initial(self) -> Schedule:
        initial: Schedule = self.inner.initial
        return initial

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule:
        after: Schedule = self.inner.review(state, grade, today=today)
        return self.spread(state, after, grade, today)

    def next_states(self, state: Schedule, *, today: date) -> NextStates:
        states: NextStates = self.inner.next_states(state, today=today)
        return NextStates.of({grade: self.spread(state, after, grade, today) for grade, after in states.items()})

    def replay(self, log: DayLog) -> Schedule:
        """The state after the logged answers (:data:`DayLog`), each fuzzed (never balanced: no past forecast is
        known). A scheduler with a fast replay of its own is given the fuzz to apply at each answer."""
        own = getattr(self.inner, "replay", None)
        if own is not None and self.load is None:
            replayed: Schedule = own(log, adjust=self.adjust)
            return replayed
        state = self.initial
        for day, grade in scheduling_days(log):
            state = self.review(state, grade, today=date.fromordinal(day))
        return state

    def __post_init__(self) -> None:  # looked up once: a switch spreads a million answers
        object.__setattr__(self, "_latest", getattr(self.inner, "latest_due", None))

    def spread(self, before: Schedule, after: Schedule, grade: int, today: date) -> Schedule:
        """``after`` (what the inner scheduler made of ``before``) with its interval fuzzed or balanced."""
        if after.due is None:
            return after
        latest = self._latest  # type: ignore[attr-defined]  # set in __post_init__
        cap = latest(today, after) if latest is not None else None
        maximum = MAX_INTERVAL if cap is None else max(1, min(MAX_INTERVAL, (cap - today).days))
        interval = self.interval(after.interval, before.interval, grade, today.toordinal(), maximum)
        if interval == after.interval:
            return after
        return Schedule(after.repetitions, after.ef100, interval, today + timedelta(days=interval), after.lapses,
                        after.stability, after.difficulty)  # replace() costs twice as much, a million times

    def adjust(self, interval: int, previous: int, grade: int, day: int) -> int:
        """:data:`Adjust` for a replay: :func:`fuzz_adjust` with this card's number."""
        return fuzz_adjust(self.number, interval, previous, grade, day)

    def interval(self, interval: int, previous: int, grade: int, day: int, maximum: int) -> int:
        """The spread interval of an answer on study day ``day`` (its ``toordinal()``): a passing review of a card
        with an interval keeps Anki's minimum; every other answer at least a day."""
        if interval <= 2:
            return interval  # under 2.5 days nothing is fuzzed, and no minimum exceeds it (most first answers)
        minimum, lower, upper = _fuzz_range(interval, previous if grade >= PASSING else 0, maximum)
        draw = fuzz_factor((self.number + day) & _MASK)
        if self.load is not None:
            balanced = balanced_interval(interval, minimum, maximum, self.load.on, draw)
            if balanced is not None:
                return balanced
        return int(lower + draw * (1 + upper - lower))  # with_review_fuzz: lower + floor(draw * days in range)


def fuzz_adjust(number: int, interval: int, previous: int, grade: int, day: int) -> int:
    """:data:`Adjust` for a replay of the card numbered ``number`` (:func:`card_number`): what
    :meth:`SpreadCard.interval` gives without a load or a cap, from the fuzz range of the interval and the previous
    one (each range computed once, :func:`_replay_range`): a replay adjusts a million answers."""
    if interval <= 2:
        return interval  # as SpreadCard.interval has it: under 2.5 days nothing is fuzzed
    lower, days = _replay_range(interval, previous if grade >= _PASSING else 0)
    return int(lower + fuzz_factor((number + day) & _MASK) * days)  # with_review_fuzz, as SpreadCard.interval


_PASSING = int(PASSING)  # a plain int: compared a million times


@lru_cache(maxsize=1 << 16)
def _replay_range(interval: int, previous: int) -> tuple[int, int]:
    """(lower bound, days in range) of the fuzz range :meth:`SpreadCard.interval` draws from, with no cap."""
    _minimum, lower, upper = _fuzz_range(interval, previous, MAX_INTERVAL)
    return lower, 1 + upper - lower


def _fuzz_range(interval: int, previous: int, maximum: int) -> tuple[int, int, int]:
    """(minimum, lower, upper) of a whole-day interval whose card had ``previous`` days before a passing review
    (0: a failed review or a new card, whose minimum is a day): :func:`minimum_review_fuzz_interval` and
    :func:`constrained_fuzz_bounds`, from bounds computed once per interval."""
    lower, upper = _bounds(interval, 1, maximum)
    if previous <= 0:
        return 1, lower, upper
    minimum = previous + 1 if interval > previous else previous if previous <= upper else 1  # rounded == interval
    if minimum <= lower:
        return minimum, lower, upper  # the minimum clamps nothing
    return (minimum, *_bounds(interval, minimum, maximum))


_bounds = lru_cache(maxsize=1 << 16)(constrained_fuzz_bounds)
"""constrained_fuzz_bounds, remembered: the same few intervals come back across a million answers."""


def spread_chosen(scheduler: object, spreading: Spreading | None) -> Spread:
    """``scheduler`` with its intervals spread as the learner chose (None: the default, as Anki)."""
    return Spread(scheduler, DEFAULT_SPREADING if spreading is None else spreading)


def due_counts(load: Mapping[date, int], today: date, days: int) -> list[int]:
    """The counts of ``load`` for ``today`` and the ``days - 1`` days after it (for tests and the docs)."""
    return [load.get(today + timedelta(days=offset), 0) for offset in range(days)]
