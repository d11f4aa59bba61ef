"""Fitted FSRS scored out of sample: time-series splits, as srs-benchmark and fsrs-rs evaluate it.

The learner's reviews (the first answer of a study day to a card seen on an earlier day), in the
order of their study days, are cut into ``SPLITS + 1`` parts of about the same size at day
boundaries. For each part after the first, FSRS's parameters are fitted by fsrs-rs on every review
*before* that part's first day and predict the reviews of that part: no review is ever predicted by
parameters fitted on it. The first part is only ever training data, so it is scored by no model, and
SM-2 and FSRS with its default parameters are scored on exactly the reviews fitted FSRS is.

A fitted model predicts with fsrs-rs's memory states (``next_states``, review after review) and FSRS-6's
forgetting curve ``R = (1 + f t / S) ** -w20`` with ``f = 0.9 ** (-1 / w20) - 1`` (the curve has
recall 0.90 at ``t = S``), which fsrs-rs's Python binding computes but does not expose: it is written
out here, and the tests check it against py-fsrs's retrievability for the same parameters.

Pure: the caller passes each card's log.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from bertdrill.core.scheduling.fitted import (
    RATING_NAMES,
    TrainingSet,
    compute_parameters,
    default_parameters,
    engine,
    fsrs_items,
)
from bertdrill.core.scheduling.fsrs import RATING_OF_GRADE

SPLITS = 5
"""Parts scored (sklearn's TimeSeriesSplit default, as srs-benchmark uses it): the log is cut into six."""


def recall(stability: float, elapsed: int, decay: float) -> float:
    """FSRS-6's predicted recall ``elapsed`` days after a review that left ``stability``."""
    factor = 0.9 ** (-1 / decay) - 1
    return float((1 + factor * elapsed / stability) ** -decay)


class FittedForecast:
    """FSRS with one parameter set, as the calibration replays it: memory = (fsrs-rs memory, day of last review)."""

    def __init__(self, parameters: Sequence[float], name: str = "fsrs-fitted"):
        self.name = name
        self._model = engine().FSRS(list(parameters))
        self._decay = float(parameters[20])

    def start(self) -> tuple[Any, date | None]:
        return None, None

    def recall(self, memory: tuple[Any, date | None], day: date) -> float:
        state, last = memory
        assert state is not None and last is not None, "recall is predicted only for a card reviewed before"
        return recall(state.stability, (day - last).days, self._decay)

    def review(self, memory: tuple[Any, date | None], grade: int, day: date) -> tuple[Any, date]:
        state, last = memory
        states = self._model.next_states(state, 0.9, 0 if last is None else (day - last).days)
        return getattr(states, RATING_NAMES[RATING_OF_GRADE[grade]]).memory, day


class SplitForecast:
    """Fitted FSRS out of sample: a review on a day of part ``k`` is predicted by the parameters fitted on the
    reviews before part ``k`` (``starts[k - 1]`` is part ``k``'s first day, ``models[k - 1]`` its forecast)."""

    name = "fsrs-fitted"

    def __init__(self, starts: Sequence[date], models: Sequence[FittedForecast]):
        self.starts = tuple(starts)
        self.models = tuple(models)

    def start(self) -> tuple[Any, ...]:
        return tuple(model.start() for model in self.models)

    def recall(self, memory: tuple[Any, ...], day: date) -> float:
        part = bisect_right(self.starts, day) - 1
        if part < 0:
            raise ValueError(f"{day} is in the first part of the log, which only trains")
        return self.models[part].recall(memory[part], day)

    def review(self, memory: tuple[Any, ...], grade: int, day: date) -> tuple[Any, ...]:
        return tuple(model.review(each, grade, day) for model, each in zip(self.models, memory))


@dataclass(frozen=True)
class Splits:
    """The parts of a log: each scored part's first day and the parameters fitted on the reviews before it."""

    starts: tuple[date, ...]
    parameters: tuple[tuple[float, ...], ...]
    reviews: int  # reviews in the whole log (each the first of a day to a card seen on an earlier day)

    def forecast(self) -> SplitForecast:
        return SplitForecast(self.starts, [FittedForecast(each) for each in self.parameters])


def time_series_splits(logs: Iterable[Iterable[tuple[date, int]]], splits: int = SPLITS) -> Splits:
    """Cut the logs' reviews into ``splits + 1`` parts at day boundaries and fit fsrs-rs on what precedes each
    scored part. fsrs-rs decides what it can fit from little history (defaults below 8 reviews, the initial
    stabilities only below 64), as it does for Anki; fewer reviews than parts: no scored part at all."""
    return fitted_splits(fsrs_items(logs), splits)


def fitted_splits(training: TrainingSet, splits: int = SPLITS) -> Splits:
    """:func:`time_series_splits` of a training set already collected (:class:`bertdrill.core.scheduling.fitted.Training`)."""
    count = len(training)
    starts: list[date] = []
    for part in range(1, splits + 1):
        day = date.fromordinal(training.day(count * part // (splits + 1))) if count > splits else None
        if day is not None and (not starts or day > starts[-1]) and day.toordinal() > training.day(0):
            starts.append(day)
    # largest fit first: each is seeded on its own (the same parameters in any order), and the smaller ones then fit
    # in the heap the largest left to the allocator, where ascending order grew it fit after fit
    fitted = {start: tuple(compute_parameters(default_parameters(), training.before(start)))
              for start in reversed(starts)}
    parameters = [fitted[start] for start in starts]
    return Splits(tuple(starts), tuple(parameters), len(training))


def auc(predictions: Sequence[float], outcomes: Sequence[int]) -> float:
    """The area under the ROC curve: the chance that a recalled review got a higher prediction than a forgotten
    one (ties count half), by ranks (Mann-Whitney). NaN when one of the two outcomes never happened."""
    positives = sum(outcomes)
    negatives = len(outcomes) - positives
    if not positives or not negatives:
        return float("nan")
    order = sorted(range(len(predictions)), key=predictions.__getitem__)
    rank_sum, index = 0.0, 0
    while index < len(order):
        end = index
        while end + 1 < len(order) and predictions[order[end + 1]] == predictions[order[index]]:
            end += 1
        average_rank = (index + end) / 2 + 1  # ties share the mean of their ranks
        rank_sum += average_rank * sum(outcomes[order[each]] for each in range(index, end + 1))
        index = end + 1
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)
