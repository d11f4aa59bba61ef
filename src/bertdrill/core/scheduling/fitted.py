"""FSRS fitted to a learner's own reviews, and scheduling with the fitted parameters: fsrs-rs, Anki's engine.

fsrs-rs (the Rust FSRS inside Anki, through its Python binding ``fsrs_rs_python``) fits the 21
parameters of FSRS-6 to a review history, and :class:`FittedFSRS` schedules with them by calling
fsrs-rs's own ``next_states`` and ``next_interval``: nothing of FSRS is re-implemented here.

What fsrs-rs is given (:func:`fsrs_items`), as Anki gives it:

- one review per card and study day: the first answer of the day (later answers that day are
  the session's re-drills, which never schedule);
- each review's ``delta_t``: study days since the card's previous review (0 for the first);
- the grade as FSRS's rating: 0-2 Again, 3 Hard, 4 Good, 5 Easy
  (:data:`bertdrill.core.scheduling.fsrs.RATING_OF_GRADE`);
- one item per review that follows an earlier one: the card's history up to and including that
  review, the review being the outcome to predict; items in the order of their study day
  (fsrs-rs weights recent items more).

Intervals, as Anki makes them: ``round(next_interval)`` (a half rounds up), at least 1 day, at
most 36,500, added to the study day of the review.

Pure: fsrs-rs is computation only (no I/O, no clock); it is imported on first use.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, overload

from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _
from bertdrill.core.scheduling.fsrs import DEFAULT_RETENTION, RATING_OF_GRADE, check_retention
from bertdrill.core.scheduling.replay import DayLog, scheduling_answers, scheduling_days
from bertdrill.core.scheduling.state import (
    GRADES,
    NEW,
    Bookkeeping,
    Grade,
    NextStates,
    Schedule,
    bookkeeping,
    check_day,
    check_grade,
)

if TYPE_CHECKING:
    from bertdrill.core.scheduling.state import Adjust

PARAMETER_COUNT = 21
"""FSRS-6 has 21 parameters."""

MIN_FIT_REVIEWS = 64
"""fsrs-rs fits all 21 parameters from 64 reviews on (fewer: it fits at most the four initial stabilities,
below 8 none): the reviews counted are those that follow an earlier review of the card on an earlier day."""

MAX_INTERVAL = 36500
"""The longest interval, in days (a hundred years, as py-fsrs and Anki cap it)."""

INDEX = "I"
"""The arrays of a training set hold unsigned 32-bit numbers (positions in its reviews, card numbers, day ordinals):
4 bytes each, 12 an item, for a million reviews."""

RATING_NAMES = {1: "again", 2: "hard", 3: "good", 4: "easy"}
"""fsrs-rs's NextStates attribute for each rating."""


class NotEnoughHistory(BertdrillError):
    """Too few reviews for fsrs-rs to fit the parameters: ``kept`` is what fsrs-rs kept of ``reviews`` after
    setting outliers aside (None: the count alone is too low)."""

    def __init__(self, reviews: int, kept: int | None = None):
        self.reviews = reviews
        self.missing = MIN_FIT_REVIEWS - (reviews if kept is None else kept)
        if kept is None:
            message = _("fitting FSRS needs {needed} reviews of cards seen on an earlier day; you have {have}, "
                        "{missing} more are needed: FSRS keeps its default parameters").format(
                needed=MIN_FIT_REVIEWS, have=reviews, missing=self.missing)
        else:
            message = _("fitting FSRS needs {needed} reviews of cards seen on an earlier day, and fsrs-rs kept {kept} "
                        "of your {have} (it sets aside cards whose first interval is rare in your log): about "
                        "{missing} more are needed: FSRS keeps its default parameters").format(
                needed=MIN_FIT_REVIEWS, kept=kept, have=reviews, missing=self.missing)
        super().__init__(message)


class ParameterError(BertdrillError):
    """A stored parameter set that fsrs-rs refuses."""


@cache
def engine() -> ModuleType:
    """fsrs-rs's Python binding, imported on first use."""
    import fsrs_rs_python

    return fsrs_rs_python


def default_parameters() -> tuple[float, ...]:
    """FSRS-6's default parameters, as fsrs-rs holds them (32-bit floats)."""
    return tuple(engine().DEFAULT_PARAMETERS)


def check_parameters(parameters: Sequence[float]) -> tuple[float, ...]:
    """The parameters as a tuple of 21 finite floats, or :class:`ParameterError`."""
    values = tuple(parameters)
    if len(values) != PARAMETER_COUNT or not all(isinstance(value, int | float) and math.isfinite(value)
                                                 for value in values):
        raise ParameterError(_("FSRS parameters must be {count} finite numbers, got {values}").format(
            count=PARAMETER_COUNT, values=list(values)))
    return tuple(float(value) for value in values)


@dataclass(frozen=True)
class TrainingSet:
    """What fsrs-rs fits on, held compactly: every review that schedules once (``reviews``: card after card, each
    the position in ``kinds`` of the FSRSReview shared by all reviews of the same rating and delta: 4 bytes a review,
    where a pointer was 8), each card's first review (``firsts``: its index in ``reviews``), and each item, oldest
    first (a day's in card order), as the end of its history in ``reviews`` and its card's number among the logs;
    each study day (as an ordinal) with the end of its items. The FSRSItems are made one at a time as fsrs-rs reads
    them (:attr:`items`): a million reviews' items held as FSRSItems were 100 MB, beside fsrs-rs's own copy."""

    kinds: tuple[Any, ...]
    reviews: array[int]
    firsts: array[int]
    ends: array[int] | memoryview  # a prefix of another set's (before) is a view of its array, not a copy
    cards: array[int] | memoryview
    study_days: array[int]
    day_ends: array[int]

    def __len__(self) -> int:
        return len(self.ends)

    @property
    def items(self) -> Items:
        return Items(self)

    def day(self, index: int) -> int:
        """The study day (an ordinal) of item ``index``."""
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.study_days[bisect_right(self.day_ends, index)]

    def before(self, day: date) -> TrainingSet:
        """The items of the study days before ``day`` (a prefix: they are in day order), sharing this set's arrays."""
        days = bisect_left(self.study_days, day.toordinal())
        end = self.day_ends[days - 1] if days else 0
        return TrainingSet(self.kinds, self.reviews, self.firsts, memoryview(self.ends)[:end], memoryview(self.cards)[:end],
                           self.study_days[:days], self.day_ends[:days])


class Items(Sequence[Any]):
    """A training set's FSRSItems, each made when it is read (fsrs-rs's binding copies each item it is given, so a
    read item is freed as the next one is made): item ``i`` is its card's reviews up to ``ends[i]``."""

    def __init__(self, training: TrainingSet):
        self._training = training

    def __len__(self) -> int:
        return len(self._training)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[each] for each in range(*index.indices(len(self)))]
        training = self._training
        end = training.ends[index]  # an index out of range is the array's IndexError
        return engine().FSRSItem(list(map(training.kinds.__getitem__,
                                          training.reviews[training.firsts[training.cards[index]]:end])))

    def __iter__(self) -> Iterator[Any]:
        item, reviews, firsts = engine().FSRSItem, self._training.reviews, self._training.firsts
        kind = self._training.kinds.__getitem__
        for end, card in zip(self._training.ends, self._training.cards):
            yield item(list(map(kind, reviews[firsts[card]:end])))


class Training:
    """Collects a training set one card's log at a time (:meth:`add`), so that a caller reading the log card by
    card never holds all of it (a million answers as (date, grade) tuples are 85 MB): each card's reviews are
    appended to one list, and its items go to their study day's bucket, which gives day order without sorting."""

    def __init__(self) -> None:
        self._kinds: dict[tuple[int, int], int] = {}  # (rating, delta) -> its FSRSReview's position: a few thousand
        self._reviews: array[int] = array(INDEX)
        self._firsts: array[int] = array(INDEX)
        self._by_day: dict[int, tuple[array[int], array[int]]] = {}

    def add(self, log: Iterable[tuple[date, int]]) -> None:
        """One card's answers (study day, grade), oldest first; see the module's docstring."""
        number, reviews, kinds = len(self._firsts), self._reviews, self._kinds
        self._firsts.append(len(reviews))
        last: date | None = None
        for day, grade in scheduling_answers(log):
            kind = (RATING_OF_GRADE[check_grade(grade)], 0 if last is None else (day - last).days)
            reviews.append(kinds.setdefault(kind, len(kinds)))
            if last is not None:
                ends, cards = self._by_day.setdefault(day.toordinal(), (array(INDEX), array(INDEX)))
                ends.append(len(reviews))
                cards.append(number)
            last = day

    def collected(self) -> TrainingSet:
        """Every item added, oldest first; the collector is emptied."""
        ends, cards, study_days, day_ends = array(INDEX), array(INDEX), array(INDEX), array(INDEX)
        for ordinal in sorted(self._by_day):
            day_items, day_cards = self._by_day.pop(ordinal)
            ends += day_items
            cards += day_cards
            study_days.append(ordinal)
            day_ends.append(len(ends))
        review = engine().FSRSReview
        kinds = tuple(review(rating, delta) for rating, delta in self._kinds)  # a dict keeps its keys' order
        training = TrainingSet(kinds, self._reviews, self._firsts, ends, cards, study_days, day_ends)
        self._kinds, self._reviews, self._firsts = {}, array(INDEX), array(INDEX)
        return training


def fsrs_items(logs: Iterable[Iterable[tuple[date, int]]]) -> TrainingSet:
    """The training set of these cards' logs (each one card's answers, (study day, grade) oldest first)."""
    training = Training()
    for log in logs:
        training.add(log)
    return training.collected()


@dataclass(frozen=True)
class Fit:
    """Parameters fsrs-rs fitted, and the number of reviews they came from."""

    parameters: tuple[float, ...]
    reviews: int


def fit(logs: Iterable[Iterable[tuple[date, int]]]) -> Fit:
    """FSRS's parameters fitted by fsrs-rs to these cards' logs, or :class:`NotEnoughHistory`."""
    return fit_training(fsrs_items(logs))


def fit_training(training: TrainingSet) -> Fit:
    """fsrs-rs's fit of this training set, or :class:`NotEnoughHistory`."""
    if len(training) < MIN_FIT_REVIEWS:
        raise NotEnoughHistory(len(training))
    parameters = tuple(compute_parameters(default_parameters(), training))
    if parameters[4:] == default_parameters()[4:]:  # fsrs-rs trained nothing: too few left after its outlier filter
        raise NotEnoughHistory(len(training), min(_kept(training.items), MIN_FIT_REVIEWS - 1))
    return Fit(parameters, len(training))


def compute_parameters(start: Sequence[float], training: TrainingSet) -> list[float]:
    """fsrs-rs's ``compute_parameters`` from ``start``, as Anki calls it (each item's card named)."""
    return list(engine().FSRS(list(start)).compute_parameters(training.items, card_ids=training.cards))


def _kept(items: Sequence[Any]) -> int:
    """How many of ``items`` fsrs-rs's outlier filter keeps for training (its first-interval groups decide)."""
    firsts = [item for item in items if item.long_term_review_cnt() == 1]
    return len(engine().filter_outlier(firsts, items)[1])


def rounded_interval(value: float) -> int:
    """An interval as Anki makes it from fsrs-rs's: rounded (a half up), from 1 to :data:`MAX_INTERVAL` days."""
    return min(MAX_INTERVAL, max(1, math.floor(value + 0.5)))


@cache
def _model(parameters: tuple[float, ...]) -> Any:
    return engine().FSRS(list(parameters))


@dataclass(frozen=True)
class FittedFSRS:
    """FSRS-6 with fitted ``parameters`` as a :class:`bertdrill.ports.Scheduler`, computed by fsrs-rs.

    The same bookkeeping as :class:`bertdrill.core.scheduling.fsrs.FSRS` (repetitions, EF and lapses
    by SM-2's rules); the memory state and interval are fsrs-rs's.
    """

    parameters: tuple[float, ...]
    retention: float = DEFAULT_RETENTION

    def __post_init__(self) -> None:
        check_retention(self.retention)
        object.__setattr__(self, "parameters", check_parameters(self.parameters))

    @property
    def initial(self) -> Schedule:
        return NEW

    def review(self, state: Schedule, grade: int, *, today: date) -> Schedule:
        """The state after the first answer of study day ``today``, graded ``grade`` (0-5)."""
        checked = check_grade(grade)
        check_day(today)
        return self._after(state, checked, getattr(self._next(state, today), RATING_NAMES[RATING_OF_GRADE[checked]]),
                           today)

    def next_states(self, state: Schedule, *, today: date) -> NextStates:
        """What :meth:`review` gives for each grade 0-5 (0, 1 and 2 are all FSRS's Again)."""
        check_day(today)
        states = self._next(state, today)
        return NextStates.of({grade: self._after(state, grade, getattr(states, RATING_NAMES[RATING_OF_GRADE[grade]]),
                                                 today) for grade in GRADES})

    def replay(self, log: DayLog, *, adjust: Adjust | None = None) -> Schedule:
        """The state after the logged answers (:data:`DayLog`: days as ordinals, re-drills included): what
        :meth:`review` gives for the first answer of each study day, answer after answer, each through fsrs-rs's
        ``next_states`` on the memory it returned (no Schedule in between); ``adjust`` changes each answer's
        interval (:data:`bertdrill.core.scheduling.spread.Adjust`: the fuzz). tests/test_fitted.py holds it to
        :meth:`review`."""
        model, retention = _model(self.parameters), self.retention
        memory: Any = None
        counts, interval, last = Bookkeeping(), 0, 0
        for day, grade in scheduling_days(log):
            checked = check_grade(grade)
            if memory is None:
                states = model.next_states(None, retention, 0)
            else:
                elapsed = day - last
                if elapsed < 0:
                    raise ValueError(f"a review on {date.fromordinal(day)} comes before the card's last review")
                states = model.next_states(memory, retention, elapsed)
            item = getattr(states, RATING_NAMES[RATING_OF_GRADE[checked]])
            memory, given = item.memory, rounded_interval(item.interval)
            interval = given if adjust is None else adjust(given, interval, checked, day)
            counts = bookkeeping(counts, checked)
            last = day
        if memory is None:
            return NEW
        return Schedule(counts.repetitions, counts.ef100, interval, date.fromordinal(last + interval), counts.lapses,
                        memory.stability, memory.difficulty)

    def _next(self, state: Schedule, today: date) -> Any:
        """fsrs-rs's next states of the card on ``today``."""
        model = _model(self.parameters)
        if state.due is None or state.stability is None or state.difficulty is None:
            return model.next_states(None, self.retention, 0)
        elapsed = (today - (state.due - timedelta(days=state.interval))).days
        if elapsed < 0:
            raise ValueError(f"a review on {today} comes before the card's last review")
        memory = engine().MemoryState(state.stability, state.difficulty)
        return model.next_states(memory, self.retention, elapsed)

    def _after(self, state: Schedule, grade: Grade, item: Any, today: date) -> Schedule:
        interval = rounded_interval(item.interval)
        counts = bookkeeping(state, grade)  # repetitions, EF and lapses: the grades' alone, as every scheduler
        return Schedule(
            repetitions=counts.repetitions,
            ef100=counts.ef100,
            interval=interval,
            due=today + timedelta(days=interval),
            lapses=counts.lapses,
            stability=item.memory.stability,
            difficulty=item.memory.difficulty,
        )
