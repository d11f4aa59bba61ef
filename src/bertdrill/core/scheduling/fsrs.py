"""FSRS-6 as a bertdrill scheduler, computed by py-fsrs (the ``fsrs`` package), not re-implemented.

Settings, as pinned (``docs/scheduling.md``):

- py-fsrs's default parameters (FSRS-6), desired retention 0.90, settable from 0.70 to 0.97;
- no fuzz, so the same history always gives the same schedule;
- no learning or relearning steps (minutes apart): the session's same-day re-drill plays
  that role, and only the first answer of a study day reaches :meth:`FSRS.review`.

Whole study days. A review on study day ``d`` is given to py-fsrs at 00:00 UTC of ``d``, so
the time since the last review is always a whole number of study days, and py-fsrs's own
interval (the stability scaled to the desired retention, rounded by py-fsrs with Python's
``round``: to the nearest whole day, a half to the even day; at least 1 day, at most 36,500)
is added to the study day: ``due = d + interval``.

State. FSRS's memory state (stability, difficulty) lives in :class:`bertdrill.core.scheduling.state.Schedule`
beside SM-2's fields. Without steps, py-fsrs's card state is Learning before the first review
(a new card: ``due is None``) and Review after it, so it is not stored. The day of the last
review is ``due - interval``. ``repetitions``, ``lapses`` and EF are kept by SM-2's rules (they
depend on the grades alone, not on the intervals), so they are exactly what SM-2 would hold, and what
``stats`` says about them (leeches, hardest cards by EF) means the same under both schedulers.

Pure: py-fsrs is pure computation (no I/O, no clock when every time is passed in), and it is
imported on first use so that ``bertdrill --help`` does not pay for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache, cached_property
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple, cast

from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _
from bertdrill.core.scheduling.replay import DayLog, scheduling_days
from bertdrill.core.scheduling.state import (
    EF_DELTA,
    EF_FLOOR,
    EF_START,
    GRADES,
    NEW,
    PASSING,
    Bookkeeping,
    Grade,
    NextStates,
    Schedule,
    bookkeeping,
    check_day,
    check_grade,
)

if TYPE_CHECKING:  # py-fsrs is imported on first use, see _library
    import fsrs

    from bertdrill.core.scheduling.state import Adjust

DEFAULT_RETENTION = 0.90
"""Desired retention: FSRS chooses each interval so that recall is predicted to fall to this."""

MIN_RETENTION = 0.70
MAX_RETENTION = 0.97
"""The retentions a learner may choose: below 0.70 forgets too much, above 0.97 reviews far too often."""

RATING_OF_GRADE: dict[int, int] = {int(grade): rating for grade, rating in (
    (Grade.BLACKOUT, 1), (Grade.WRONG, 1), (Grade.ALMOST, 1), (Grade.HARD, 2), (Grade.GOOD, 3), (Grade.PERFECT, 4))}
"""bertdrill's grade 0-5 -> FSRS's rating: 0-2 Again (1), 3 Hard (2), 4 Good (3), 5 Easy (4) (plain int keys, as
:data:`~bertdrill.core.scheduling.state.EF_DELTA`'s)."""


class RetentionError(BertdrillError):
    """A desired retention outside 0.70-0.97."""


def check_retention(retention: float) -> float:
    """The retention as a float, or :class:`RetentionError` for one outside 0.70-0.97 (or not a number)."""
    if isinstance(retention, bool) or not isinstance(retention, int | float) or math.isnan(retention) \
            or not MIN_RETENTION <= retention <= MAX_RETENTION:
        raise RetentionError(_("desired retention must be from {low} to {high}, got {value}").format(
            low=f"{MIN_RETENTION:.2f}", high=f"{MAX_RETENTION:.2f}", value=retention))
    return float(retention)


@cache
def _library() -> ModuleType:
    """py-fsrs, imported on first use."""
    import fsrs

    return fsrs


@cache
def _scheduler(retention: float, parameters: tuple[float, ...] | None = None) -> fsrs.Scheduler:
    """py-fsrs's scheduler with bertdrill's settings: default parameters (or fitted ones), no fuzz, no steps."""
    library = _library()
    return cast("fsrs.Scheduler", library.Scheduler(parameters=parameters or library.scheduler.DEFAULT_PARAMETERS,
                             desired_retention=retention, learning_steps=(), relearning_steps=(),
                             enable_fuzzing=False))


@cache
def _ratings() -> dict[int, fsrs.Rating]:
    """py-fsrs's Rating of each bertdrill grade."""
    return {grade: _library().Rating(rating) for grade, rating in RATING_OF_GRADE.items()}


@cache
def _moment(day: date) -> datetime:
    """The time py-fsrs sees for a review on study day ``day``: its midnight, in UTC (cached: a replay of a
    long log meets the same days again and again)."""
    return datetime.combine(day, time(), tzinfo=UTC)


def last_review(state: Schedule) -> date | None:
    """The study day of the card's latest scheduled review (None for a new card)."""
    return None if state.due is None else state.due - timedelta(days=state.interval)


def _card(state: Schedule) -> fsrs.Card:
    """The py-fsrs card for a state: new (Learning) until FSRS has a memory state for it.

    A card reviewed only by SM-2 has none; switching scheduler replays its log first, so this
    only happens to a card handed over without a replay, which FSRS then starts afresh.
    """
    library = _library()
    reviewed = last_review(state)
    if state.due is None or reviewed is None or state.stability is None or state.difficulty is None:
        return cast("fsrs.Card", library.Card(card_id=0, due=_moment(date.min)))  # card_id, due given: no clock read
    return cast("fsrs.Card", library.Card(card_id=0, state=library.State.Review, step=None, stability=state.stability,
                                          difficulty=state.difficulty, due=_moment(state.due),
                                          last_review=_moment(reviewed)))


@dataclass(frozen=True)
class FSRS:
    """FSRS-6 as a :class:`bertdrill.ports.Scheduler`, at a desired ``retention`` (0.70-0.97)."""

    retention: float = DEFAULT_RETENTION

    def __post_init__(self) -> None:
        check_retention(self.retention)

    @property
    def initial(self) -> Schedule:
        return NEW

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule:
        """The state after grading the card ``grade`` (0-5) on study day ``today`` (its first answer that day)."""
        return self._review(state, check_grade(grade), check_day(today))

    def next_states(self, state: Schedule, *, today: date) -> NextStates:
        """What :meth:`review` gives for each grade 0-5 (0, 1 and 2 are all FSRS's Again)."""
        check_day(today)
        memories: dict[int, _Memory] = {}  # one memory step per rating: grades 0-2 share Again's
        for grade in GRADES:
            rating = RATING_OF_GRADE[grade]
            if rating not in memories:
                memories[rating] = self._memory(state, rating, today)
        return NextStates.of({grade: _after(state, grade, memories[RATING_OF_GRADE[grade]], today) for grade in GRADES})

    def replay(self, log: DayLog, *, adjust: Adjust | None = None) -> Schedule:
        """The state after the logged answers (:data:`DayLog`: days as ordinals, re-drills included): what
        :meth:`review` gives for the first answer of each study day, answer after answer (a switch replays a
        million answers).

        Only the memory's arithmetic is done, in the order py-fsrs's ``review_card`` does it for a card
        without learning steps reviewed on whole days (:class:`MemorySteps`), so every float is the one
        ``review_card`` computes; the rest of ``review_card``'s work (copying the card, times and dates, a
        review log per answer) was three quarters of a replay. tests/test_replay.py holds it to
        :meth:`review` on random logs, same-day and backwards days included.

        ``adjust`` (:data:`bertdrill.core.scheduling.spread.Adjust`) changes each answer's interval (the fuzz):
        FSRS's memory depends on the days between answers, never on the intervals, so only they change.
        """
        return memory_steps(self.retention).replayed(log, adjust)

    def retrievability(self, state: Schedule, *, today: date) -> float:
        """FSRS's predicted probability of recalling the card on ``today`` (0 for a card never reviewed)."""
        return _scheduler(self.retention).get_card_retrievability(_card(state), _moment(today))

    def _review(self, state: Schedule, grade: Grade, today: date) -> Schedule:
        return _after(state, grade, self._memory(state, RATING_OF_GRADE[grade], today), today)

    def _memory(self, state: Schedule, rating: int, today: date) -> _Memory:
        """The memory and interval after this review, by the steps py-fsrs's ``review_card`` takes for a card
        without learning steps reviewed on whole days (:func:`memory_steps`: py-fsrs's own formulas, float for
        float, as a switch's replay takes them), without making a py-fsrs card, copying it and its times for each
        rating: four ``review_card`` calls were a fifth of an answer under FSRS (its preview). tests/test_fsrs.py
        holds every state to ``review_card``'s."""
        steps = memory_steps(self.retention)
        reviewed = last_review(state)
        if reviewed is None or state.stability is None or state.difficulty is None:  # new to FSRS: review_card's
            stability, difficulty = steps.initial(rating)  # Learning card, its first memory
        else:  # State.Review: the stability from the difficulty before, then the difficulty
            stability = steps.stability(state.difficulty, state.stability, (today - reviewed).days, rating)
            difficulty = steps.difficulty(state.difficulty, rating)
        return _Memory(stability, difficulty, steps.interval(stability))


class _Memory(NamedTuple):
    """FSRS's memory after a review, and the interval it gives (what :func:`_after` reads of py-fsrs's card)."""

    stability: float
    difficulty: float
    interval: int


def _after(state: Schedule, grade: Grade, memory: _Memory, today: date) -> Schedule:
    """The state after a review graded ``grade`` on ``today`` that left FSRS's ``memory``: its memory and
    interval, and the shared bookkeeping (repetitions, EF, lapses: they depend on the grades alone)."""
    interval = memory.interval
    counts = bookkeeping(state, grade)
    return Schedule(
        repetitions=counts.repetitions,
        ef100=counts.ef100,
        interval=interval,
        due=today + timedelta(days=interval),
        lapses=counts.lapses,
        stability=memory.stability,
        difficulty=memory.difficulty,
    )


class LibrarySteps:
    """The memory steps of a replay, each one py-fsrs's own method: what :class:`MemorySteps` must agree with."""

    factor: float  # py-fsrs's forgetting-curve constants, typed here (py-fsrs's are private attributes)
    decay: float

    def __init__(self, scheduler: fsrs.Scheduler):
        self.scheduler = scheduler
        self.ratings = _ratings()
        self.factor, self.decay = scheduler._FACTOR, scheduler._DECAY

    def initial(self, rating: int) -> tuple[float, float]:
        """A new card's stability and difficulty after its first review."""
        by = _library().Rating(rating)
        return (self.scheduler._initial_stability(rating=by),
                self.scheduler._initial_difficulty(rating=by, clamp=True))

    def stability(self, difficulty: float, stability: float, elapsed: int, rating: int) -> float:
        """The stability after a review ``elapsed`` whole days after the last (less than one: the short-term step)."""
        by = _library().Rating(rating)
        if elapsed < 1:
            return self.scheduler._short_term_stability(stability=stability, rating=by)
        retrievability = (1 + self.factor * elapsed / stability) ** self.decay  # get_card_retrievability's
        return self.scheduler._next_stability(difficulty=difficulty, stability=stability,
                                              retrievability=retrievability, rating=by)

    def difficulty(self, difficulty: float, rating: int) -> float:
        return self.scheduler._next_difficulty(difficulty=difficulty, rating=_library().Rating(rating))

    def interval(self, stability: float) -> int:
        return self.scheduler._next_interval(stability=stability)

    def replayed(self, log: DayLog, adjust: Adjust | None, *, distinct: bool = False) -> Schedule:
        """:meth:`FSRS.replay` through these steps, one call each; ``distinct``: the days of ``log`` are all
        different (:func:`scheduling_days`), so none is a re-drill even where the days go back."""
        initial, next_stability, next_difficulty, next_interval = self.initial, self.stability, self.difficulty, \
            self.interval
        stability: float | None = None
        difficulty, counts, interval, last = 0.0, Bookkeeping(), 0, 0  # day 0: none yet (ordinals start at 1)
        for day, grade in log:
            if day <= last and not distinct:  # the last answer's day (a re-drill), or an earlier one (a clock set back)
                if day == last:
                    continue
                return self.replayed(scheduling_days(log), adjust, distinct=True)
            rating = RATING_OF_GRADE[grade]  # KeyError for anything but a grade 0-5 (the store reads them checked)
            if stability is None:  # a new card (py-fsrs's Learning state): its first memory
                stability, difficulty = initial(rating)
            else:  # State.Review, as review_card has it
                stability = next_stability(difficulty, stability, day - last, rating)
                difficulty = next_difficulty(difficulty, rating)
            given = next_interval(stability)
            interval = given if adjust is None else adjust(given, interval, grade, day)
            counts = bookkeeping(counts, check_grade(grade))
            last = day
        return _replayed(counts.repetitions, counts.ef100, counts.lapses, interval, last, stability, difficulty)


class MemorySteps(LibrarySteps):
    """py-fsrs 6's memory steps written out as its ``scheduler.py`` writes them, expression for expression
    (the same operations on the same floats in the same order, so the same results), without its keyword
    calls, enum conversions and type checks per step: a replay of a million answers is mostly these steps.

    Used only where it agrees with the installed py-fsrs on every probe of :meth:`agrees` (a py-fsrs that
    changed its formulas gets :class:`LibrarySteps`); tests/test_replay.py compares whole replays.
    """

    p: tuple[float, ...]
    bounds: tuple[float, float, float]
    longest: int
    retention_term: float
    easy_difficulty: float
    short_forget: float

    def __init__(self, scheduler: fsrs.Scheduler):
        super().__init__(scheduler)
        from fsrs.scheduler import MAX_DIFFICULTY, MIN_DIFFICULTY, STABILITY_MIN

        self.p = p = tuple(scheduler.parameters)
        self.bounds = MIN_DIFFICULTY, MAX_DIFFICULTY, STABILITY_MIN
        self.longest = scheduler.maximum_interval
        self.retention_term = (scheduler.desired_retention ** (1 / self.decay)) - 1
        self.easy_difficulty = p[4] - (math.e ** (p[5] * (4 - 1))) + 1  # _initial_difficulty(Easy, clamp=False)
        self.short_forget = math.e ** (p[17] * p[18])

    def initial(self, rating: int) -> tuple[float, float]:
        p, (low, high, least) = self.p, self.bounds
        return max(p[rating - 1], least), min(max(p[4] - (math.e ** (p[5] * (rating - 1))) + 1, low), high)

    def stability(self, difficulty: float, stability: float, elapsed: int, rating: int) -> float:
        p, least = self.p, self.bounds[2]
        if elapsed < 1:  # _short_term_stability
            increase: float = (math.e ** (p[17] * (rating - 3 + p[18]))) * (stability ** -p[19])  # ** is Any
            if rating >= 2:
                increase = max(increase, 1.0)
            return max(stability * increase, least)
        retrievability = (1 + self.factor * elapsed / stability) ** self.decay
        if rating == 1:  # _next_forget_stability
            long_term: float = (p[11] * (difficulty ** -p[12]) * (((stability + 1) ** (p[13])) - 1)
                         * (math.e ** ((1 - retrievability) * p[14])))
            return max(min(long_term, stability / self.short_forget), least)
        hard_penalty = p[15] if rating == 2 else 1  # _next_recall_stability
        easy_bonus = p[16] if rating == 4 else 1
        recalled: float = stability * (1 + (math.e ** (p[8])) * (11 - difficulty) * (stability ** -p[9])
                                       * ((math.e ** ((1 - retrievability) * p[10])) - 1) * hard_penalty * easy_bonus)
        return max(recalled, least)

    def difficulty(self, difficulty: float, rating: int) -> float:
        p, (low, high, _least) = self.p, self.bounds
        delta = -(p[6] * (rating - 3))
        reverted = p[7] * self.easy_difficulty + (1 - p[7]) * (difficulty + (10.0 - difficulty) * delta / 9.0)
        return min(max(reverted, low), high)

    def interval(self, stability: float) -> int:
        return min(max(round((stability / self.factor) * self.retention_term), 1), self.longest)

    @cached_property
    def terms(self) -> _Terms:
        """The parts of the steps that depend on the parameters and the rating alone, each computed once by
        the step's own expression: a replay's arithmetic reuses them (the same floats)."""
        p, (low, high, least) = self.p, self.bounds
        ratings = (1, 2, 3, 4)
        return _Terms(
            first={rating: self.initial(rating) for rating in ratings},
            short_gain={rating: math.e ** (p[17] * (rating - 3 + p[18])) for rating in ratings},
            recall_gain=math.e ** (p[8]),
            bonus={2: p[15], 3: 1, 4: p[16]},  # hard_penalty * easy_bonus: one of them is 1, an exact product
            change={rating: -(p[6] * (rating - 3)) for rating in ratings},
            reverted=p[7] * self.easy_difficulty,
            kept=1 - p[7],
            low=low, high=high, least=least)

    def replayed(self, log: DayLog, adjust: Adjust | None, *, distinct: bool = False) -> Schedule:
        """:meth:`LibrarySteps.replayed` with the steps of this class written into one loop (a call per step was
        half of a replay): :meth:`initial`, :meth:`stability`, :meth:`difficulty` and :meth:`interval`, expression
        for expression, with their parts that depend on the rating alone from :attr:`terms`. ``adjust`` (the fuzz)
        runs only for the answers the last interval depends on (:data:`~bertdrill.core.scheduling.state.Adjust`'s
        rule: an interval of 2 days or less, or a failed answer, is adjusted alike whatever came before), since
        nothing else reads an interval: a fuzz draw is a microsecond, once per answer for most logs.
        tests/test_replay.py holds this loop to the steps' and to py-fsrs's ``review_card``."""
        p, terms, factor, decay = self.p, self.terms, self.factor, self.decay
        first, short_gain, recall_gain, bonus, change = (terms.first, terms.short_gain, terms.recall_gain, terms.bonus,
                                                         terms.change)
        reverted, kept, low, high, least = terms.reverted, terms.kept, terms.low, terms.high, terms.least
        short_power, forget_power, recall_power = -p[19], -p[12], -p[9]
        p10, p11, p13, p14, short_forget = p[10], p[11], p[13], p[14], self.short_forget
        term, longest, e = self.retention_term, self.longest, math.e
        passing, floor, deltas, rating_of = int(PASSING), EF_FLOOR, EF_DELTA, RATING_OF_GRADE
        stability: float | None = None
        difficulty = 0.0
        repetitions, ef100, lapses, interval, last = 0, EF_START, 0, 0, 0  # day 0: none yet (ordinals start at 1)
        # (stability, grade, day) since the last answer whose adjusting reads no interval before it: only they make
        # the last interval
        chain: list[tuple[float, int, int]] = []
        # interval() is 2 days or less when round(x) <= 2, that is x <= 2.5 (round-half-even), for the same float x
        short = 2.5 if longest > 2 else math.inf
        for day, grade in log:
            if day <= last and not distinct:  # the last answer's day (a re-drill), or an earlier one (a clock set back)
                if day == last:
                    continue
                return self.replayed(scheduling_days(log), adjust, distinct=True)
            rating = rating_of[grade]  # KeyError for anything but a grade 0-5 (the store reads them checked)
            # max(a, b) and min(a, b) written as Python's builtins decide them ("b if b > a else a": the first
            # of equals), without a call each
            if stability is None:  # a new card (py-fsrs's Learning state): initial()
                stability, difficulty = first[rating]
            else:  # State.Review, as review_card has it: stability() from the difficulty before, then difficulty()
                elapsed = day - last
                if elapsed < 1:  # _short_term_stability
                    increase: float = short_gain[rating] * (stability ** short_power)
                    if rating >= 2 and 1.0 > increase:  # max(increase, 1.0)
                        increase = 1.0
                    stability = stability * increase
                elif rating == 1:  # _next_forget_stability
                    retrievability = (1 + factor * elapsed / stability) ** decay
                    long_term: float = (p11 * (difficulty ** forget_power) * (((stability + 1) ** (p13)) - 1)
                                        * (e ** ((1 - retrievability) * p14)))
                    shortest = stability / short_forget
                    stability = shortest if shortest < long_term else long_term  # min(long_term, shortest)
                else:  # _next_recall_stability
                    retrievability = (1 + factor * elapsed / stability) ** decay
                    stability = stability * (1 + recall_gain * (11 - difficulty) * (stability ** recall_power)
                                             * ((e ** ((1 - retrievability) * p10)) - 1) * bonus[rating])
                if least > stability:  # max(stability, least), each step's last
                    stability = least
                difficulty = reverted + kept * (difficulty + (10.0 - difficulty) * change[rating] / 9.0)
                if low > difficulty:  # min(max(difficulty, low), high)
                    difficulty = low
                if high < difficulty:
                    difficulty = high
            # interval() is rounded after the loop, only for the answers the last interval reads (a million rounds
            # were a tenth of the loop)
            if adjust is None:
                pass
            elif grade < passing or (stability / factor) * term <= short:  # adjusted alike whatever came before
                chain = [(stability, grade, day)]
            else:
                chain.append((stability, grade, day))
            # repetitions, EF and lapses: the grades' alone, bookkeeping()'s rule written out as SM-2's replay has it
            if grade >= passing:
                repetitions += 1
            else:
                if repetitions or lapses:  # is_lapse (both count up from 0)
                    lapses += 1
                repetitions = 0
            ef100 += deltas[grade]
            if ef100 < floor:  # max(floor, ef100)
                ef100 = floor
            last = day
        if stability is None:
            return NEW
        if adjust is None:
            interval = _interval(stability, factor, term, longest)
        else:  # FSRS's memory never reads an interval: only the last one is kept, and it reads the ones before it
            for kept_stability, grade, day in chain:  # back to an answer whose adjusting reads none
                given = _interval(kept_stability, factor, term, longest)
                interval = given if given <= 2 else adjust(given, interval, grade, day)  # Adjust keeps <= 2
        return _replayed(repetitions, ef100, lapses, interval, last, stability, difficulty)

    def agrees(self) -> bool:
        """Every step equal to py-fsrs's own on probes across the ranges a log reaches."""
        library = LibrarySteps(self.scheduler)
        memories = [(difficulty, stability) for difficulty in (1.0, 2.5, 5.3, 7.9, 10.0)
                    for stability in (0.001, 0.3, 2.7, 41.0, 900.0, 36_000.0)]
        for rating in (1, 2, 3, 4):
            if self.initial(rating) != library.initial(rating):
                return False
            for difficulty, stability in memories:
                if self.difficulty(difficulty, rating) != library.difficulty(difficulty, rating) or any(
                        self.stability(difficulty, stability, elapsed, rating)
                        != library.stability(difficulty, stability, elapsed, rating) for elapsed in (-3, 0, 1, 9, 400)):
                    return False
        return all(self.interval(stability) == library.interval(stability)
                   for _difficulty, stability in memories)


class _Terms(NamedTuple):
    """:attr:`MemorySteps.terms`."""

    first: dict[int, tuple[float, float]]  # rating -> initial(rating)
    short_gain: dict[int, float]  # rating -> e ** (w17 * (rating - 3 + w18)), of _short_term_stability
    recall_gain: float  # e ** w8, of _next_recall_stability
    bonus: dict[int, float]  # rating -> its hard penalty times its easy bonus (Again never recalls)
    change: dict[int, float]  # rating -> _next_difficulty's delta
    reverted: float  # w7 * the easy difficulty: _next_difficulty's mean reversion, the target's part
    kept: float  # 1 - w7
    low: float
    high: float
    least: float


def _interval(stability: float, factor: float, term: float, longest: int) -> int:
    """:meth:`MemorySteps.interval`, expression for expression, with its terms given (the replay's loop has them)."""
    given = round((stability / factor) * term)
    return 1 if given < 1 else longest if given > longest else given


def _replayed(repetitions: int, ef100: int, lapses: int, interval: int, last: int, stability: float | None,
              difficulty: float) -> Schedule:
    """The state a replay ends in (NEW if no answer scheduled)."""
    if stability is None:
        return NEW
    return Schedule(repetitions=repetitions, ef100=ef100, interval=interval, due=date.fromordinal(last + interval),
                    lapses=lapses, stability=stability, difficulty=difficulty)


@cache
def memory_steps(retention: float) -> LibrarySteps:
    """The fastest steps that agree with py-fsrs at this retention (default parameters)."""
    written = MemorySteps(_scheduler(retention))
    return written if written.agrees() else LibrarySteps(_scheduler(retention))


class FSRSForecast:
    """FSRS replayed on py-fsrs's own cards, for the calibration: each review goes straight from one
    py-fsrs card to the next (no :class:`Schedule` in between), and the prediction is py-fsrs's
    retrievability. The same computation as :meth:`FSRS.review`, in a quarter less time."""

    def __init__(self, retention: float = DEFAULT_RETENTION, parameters: Sequence[float] | None = None, *,
                 name: str = "fsrs"):
        self.name = name
        self._scheduler = _scheduler(check_retention(retention), tuple(parameters) if parameters else None)
        self._ratings = _ratings()

    def start(self) -> fsrs.Card:
        return _card(NEW)

    def recall(self, memory: fsrs.Card, day: date) -> float:
        return self._scheduler.get_card_retrievability(memory, _moment(day))

    def review(self, memory: fsrs.Card, grade: int, day: date) -> fsrs.Card:
        return self._scheduler.review_card(memory, self._ratings[grade], _moment(day))[0]
