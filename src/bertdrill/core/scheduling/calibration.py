"""How well each scheduler predicts the learner's own recall, scored on their review log.

For every scheduling answer (the first of a study day) that has an earlier one on an earlier
study day, each scheduler's state is replayed from the log up to that moment and asked for
the probability ``p`` that the card is recalled; the outcome ``y`` is 1 for a grade of 3 or
more. Predictions:

- FSRS: its retrievability (:meth:`bertdrill.core.scheduling.fsrs.FSRS.retrievability`);
- SM-2, which was not built to predict probabilities: the srs-benchmark convention
  ``p = 0.9 ** (Δt / I)``, Δt the study days since the last review and I the SM-2 interval
  then (recall is taken to be 90 % on the due day);
- the constant baseline: the learner's average recall ``ȳ`` for every review.

Scores, as the srs-benchmark computes them:

- log loss: the mean of ``-(y ln p + (1 - y) ln(1 - p))`` (p clipped to machine epsilon, as
  scikit-learn does): lower is better; a prediction that is confident and wrong costs most.
- RMSE (bins): reviews grouped by Δt, by the review's number in the card's history and by its
  earlier lapses (each on a logarithmic scale: bases 3.62, 1.89 and 1.73), then the root of the
  count-weighted mean of (mean y - mean p)² over the groups.
- a calibration table: reviews in ten bins of predicted p, with the mean prediction, the
  observed recall and the count of each.

Pure: the caller passes each card's log; figures accumulate card by card, so a million reviews
need no more memory than a few thousand.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Any, Protocol

from bertdrill.core.i18n import _
from bertdrill.core.scheduling.evaluation import Splits, auc, time_series_splits
from bertdrill.core.scheduling.fsrs import RATING_OF_GRADE, FSRSForecast
from bertdrill.core.scheduling.registry import SchedulerName, registered
from bertdrill.core.scheduling.replay import scheduling_answers
from bertdrill.core.scheduling.sm2 import review as sm2_review
from bertdrill.core.scheduling.state import EF_DELTA, EF_FLOOR, EF_START, NEW, PASSING, Schedule

FITTED = "fsrs-fitted"
"""The forecaster of FSRS with parameters fitted to the learner's own log."""

TITLES = {**{name.value: registered(name).title for name in SchedulerName}, FITTED: "FSRS*"}
"""How the screen names each forecaster: the registry's scheduler titles, and FSRS* for the fitted FSRS."""

MIN_REVIEWS = 100
"""Fewer scored reviews than this say nothing reliable about a scheduler: "not enough history yet"."""

SM2_RECALL_AT_INTERVAL = 0.9
"""srs-benchmark's reading of SM-2: recall is 90 % when the interval has passed."""

EPSILON = math.ulp(1.0)
"""Predictions are clipped to [ε, 1 - ε] for the log loss, as scikit-learn's ``log_loss`` does."""

TABLE_BINS = 10
"""Bins of predicted probability in the calibration table: 0-10 %, 10-20 %, ... 90-100 %."""

ELAPSED_BASE, INDEX_BASE, LAPSES_BASE = 3.62, 1.89, 1.73
"""srs-benchmark's logarithmic scales for the RMSE (bins) groups: Δt, review number, lapses."""


def sm2_recall(state: Schedule, today: date) -> float:
    """SM-2's probability of recall on ``today``, by the srs-benchmark convention ``0.9 ** (Δt / I)``."""
    if state.due is None or state.interval < 1:
        raise ValueError("SM-2 predicts recall only for a card it has scheduled")
    elapsed = state.interval - (state.due - today).days  # today - day of the last review
    recall: float = SM2_RECALL_AT_INTERVAL ** (elapsed / state.interval)  # float ** float is typed Any
    return recall


class Forecaster(Protocol):
    """A scheduler as the calibration replays it: a memory per card, its prediction, and its next memory."""

    @property
    def name(self) -> str: ...

    def start(self) -> Any:
        """The memory of a card never reviewed."""
        ...

    def recall(self, memory: Any, day: date) -> float:
        """The predicted probability of recalling the card on ``day``."""
        ...

    def review(self, memory: Any, grade: int, day: date) -> Any:
        """The memory after the first answer of study day ``day``."""
        ...


class SM2Forecast:
    """SM-2 (:func:`bertdrill.core.scheduling.sm2.review`), predicting by the srs-benchmark convention (:func:`sm2_recall`)."""

    name = SchedulerName.SM2.value

    def start(self) -> Schedule:
        return NEW

    def recall(self, memory: Schedule, day: date) -> float:
        return sm2_recall(memory, day)

    def review(self, memory: Schedule, grade: int, day: date) -> Schedule:
        return sm2_review(memory, grade, today=day)


def both_schedulers() -> list[Forecaster]:
    """SM-2 and FSRS, to score side by side (FSRS's predictions do not depend on its desired retention)."""
    return [SM2Forecast(), FSRSForecast()]


CHUNK = 2048
"""Cards whose memory states fsrs-rs computes in one batch: a million answers, a few megabytes at a time."""


def out_of_sample(logs: Sequence[Iterable[tuple[date, int]]]) -> Report:
    """SM-2, FSRS with its default parameters and FSRS fitted by fsrs-rs, scored on the same reviews, none of
    them seen by the parameters that predict it (:mod:`bertdrill.core.scheduling.evaluation`): :class:`OutOfSample`
    of these logs, read twice (once to fit, once to score)."""
    scoring = OutOfSample(time_series_splits(logs))
    for log in logs:
        scoring.add(log)
    return scoring.report()


class OutOfSample:
    """Scores the three models with the parameters of ``splits`` on the logs given to :meth:`add`, one card at a
    time, so that a caller reading the log card by card never holds all of it.

    Each FSRS model's memory states come from fsrs-rs in batches (``historical_memory_state_batch``: every card's
    states after each of its reviews, one Rust call per model for :data:`CHUNK` cards), and SM-2's interval is
    stepped in integers here: a review costs a few arithmetic operations in Python, not a model call each. The
    default parameters are fsrs-rs's (32-bit floats, as Anki's), the states those of ``next_states`` review
    after review (tests/test_calibration.py holds them to it).
    """

    def __init__(self, splits: Splits):
        from bertdrill.core.scheduling.fitted import default_parameters, engine

        self._starts = splits.starts
        self._cards: list[list[tuple[date, int]]] = []  # the cards added since the last batch
        if not splits.starts:  # too short to cut: nothing can be scored out of sample
            self._calibration = Calibration([SM2Forecast(), FSRSForecast()], since=date.max)
            return
        library = engine()
        sets = [default_parameters(), *splits.parameters]
        self._models = [library.FSRS(list(each)) for each in sets]
        self._curves = [(0.9 ** (-1 / float(each[20])) - 1, float(each[20])) for each in sets]  # (factor, decay)
        self._item, self._review = library.FSRSItem, library.FSRSReview
        # The three models' predictions are computed here, in batches, so the scorer is given their names only
        self._calibration = Calibration((), since=splits.starts[0],
                                        names=(SM2Forecast().name, SchedulerName.FSRS.value, FITTED))

    def add(self, log: Iterable[tuple[date, int]]) -> None:
        """One card's answers (study day, grade), oldest first."""
        if not self._starts:
            return
        card = list(scheduling_answers(log))
        if card:
            self._cards.append(card)
            if len(self._cards) == CHUNK:
                self._score()

    def report(self) -> Report:
        """The scores of every card added."""
        if self._cards:
            self._score()
        return self._calibration.report()

    def _score(self) -> None:
        """Score the cards added since the last batch."""
        chunk, self._cards = self._cards, []
        since, starts, score, curves = self._starts[0], self._starts, self._calibration.score, self._curves
        review, rating_of = self._review, RATING_OF_GRADE
        deltas = {int(grade): delta for grade, delta in EF_DELTA.items()}
        items = [self._item([review(rating_of[grade], 0 if number == 0 else max(0, (day - card[number - 1][0]).days))
                             for number, (day, grade) in enumerate(card)]) for card in chunk]
        states = [model.historical_memory_state_batch(items) for model in self._models]
        for position, card in enumerate(chunk):
            defaults = states[0][position]
            repetitions, ef100, interval, lapses, last = 0, EF_START, 0, 0, card[0][0]
            for index, (day, grade) in enumerate(card, start=1):
                if index > 1 and day > last and day >= since:
                    elapsed = (day - last).days
                    part = bisect_right(starts, day)  # the scored part: its model is states[part]
                    factor, decay = curves[0]
                    default = (1 + factor * elapsed / defaults[index - 2].stability) ** -decay
                    factor, decay = curves[part]
                    fitted = (1 + factor * elapsed / states[part][position][index - 2].stability) ** -decay
                    score(elapsed, index, lapses, int(grade >= PASSING),
                          [SM2_RECALL_AT_INTERVAL ** (elapsed / interval), default, fitted])
                if index > 1 and grade < PASSING:
                    lapses += 1  # srs-benchmark counts an Again after the first review
                # SM-2's interval, as sm2.review computes it (tests/test_calibration.py compares the two)
                previous_ef, ef100 = ef100, max(EF_FLOOR, ef100 + deltas[grade])
                repetitions = repetitions + 1 if grade >= PASSING else 0
                interval = (1 if repetitions <= 1 else 6 if repetitions == 2
                            else (interval * previous_ef + 99) // 100)
                last = day


def log_loss_term(p: float, y: int) -> float:
    """One review's log loss."""
    p = min(max(p, EPSILON), 1 - EPSILON)
    return -math.log(p) if y else -math.log(1 - p)


@cache
def group(elapsed: int, index: int, lapses: int) -> tuple[int, int, int]:
    """The RMSE (bins) group of a review: each count's power of its base, as srs-benchmark bins them.

    srs-benchmark labels a group by ``round(a * b ** floor(log(x) / log(b)))``; the exponent
    ``floor(log(x) / log(b))`` names the same group. No lapses is a group of its own (-1).
    """
    return (math.floor(math.log(elapsed) / math.log(ELAPSED_BASE)),
            math.floor(math.log(index) / math.log(INDEX_BASE)),
            math.floor(math.log(lapses) / math.log(LAPSES_BASE)) if lapses else -1)


def table_bin(p: float) -> int:
    return min(int(p * TABLE_BINS), TABLE_BINS - 1)


@dataclass(frozen=True)
class Bin:
    """One row of a calibration table: reviews predicted from ``low`` to ``high``."""

    low: float
    high: float
    count: int
    predicted: float  # mean prediction in the bin
    observed: float  # share recalled


@dataclass(frozen=True)
class Score:
    """One model's figures on the learner's log."""

    name: str
    log_loss: float
    rmse_bins: float
    table: tuple[Bin, ...]  # bins with at least one review
    auc: float = math.nan  # area under the ROC curve: higher is better, 0.5 is a coin


@dataclass(frozen=True)
class Report:
    """Every model's score beside the constant baseline, on the same ``reviews``."""

    reviews: int
    recalled: int
    scores: tuple[Score, ...]
    baseline: Score

    @property
    def enough(self) -> bool:
        return self.reviews >= MIN_REVIEWS

    @property
    def recall(self) -> float | None:
        """The learner's average recall: the baseline's prediction."""
        return self.recalled / self.reviews if self.reviews else None

    @property
    def best(self) -> Score | None:
        """The model with the lowest log loss, once there is enough history."""
        return min(self.scores, key=lambda score: score.log_loss) if self.enough and self.scores else None


class Calibration:
    """Scores the ``models`` on the logs given to :meth:`add`, one card at a time; only the reviews from study day
    ``since`` on are scored (the earlier ones still move each model's memory)."""

    def __init__(self, models: Sequence[Forecaster], since: date | None = None, *, names: Sequence[str] = ()):
        """``names``: the models scored, when their predictions come from elsewhere (given to :meth:`score`,
        not through :meth:`add`, which needs the ``models``)."""
        self.models = tuple(models)
        self.names = tuple(names) or tuple(model.name for model in self.models)
        self.since = since
        self.predictions = [array("d") for _name in self.names]  # for the AUC, which needs every (p, y)
        self.outcomes = bytearray()
        self.reviews = 0
        self.recalled = 0
        self.log_loss = [0.0] * len(self.names)
        # RMSE (bins) group -> [reviews, recalled, sum of p per model...]
        self.groups: dict[tuple[int, int, int], list[float]] = {}
        # per model, per bin of p: [reviews, recalled, sum of p]
        self.tables = [[[0, 0, 0.0] for _bin in range(TABLE_BINS)] for _name in self.names]

    def add(self, answers: Iterable[tuple[date, int]]) -> None:
        """Score one card's log: (study day, grade) of each answer, oldest first, practice left out."""
        models = self.models
        memories = [model.start() for model in models]
        last_day: date | None = None
        lapses = 0
        for index, (day, grade) in enumerate(scheduling_answers(answers), start=1):
            if last_day is not None and day > last_day and (self.since is None or day >= self.since):
                probabilities = [model.recall(memory, day) for model, memory in zip(models, memories)]
                self.score((day - last_day).days, index, lapses, int(grade >= PASSING), probabilities)
            if index > 1 and grade < PASSING:
                lapses += 1  # srs-benchmark counts an Again after the first review
            memories = [model.review(memory, grade, day) for model, memory in zip(models, memories)]
            last_day = day

    def score(self, elapsed: int, index: int, lapses: int, y: int, probabilities: list[float]) -> None:
        """Score one review: each model's predicted recall (in the order of the names) against ``y``."""
        self.reviews += 1
        self.recalled += y
        self.outcomes.append(y)
        counts = self.groups.setdefault(group(elapsed, index, lapses), [0, 0] + [0.0] * len(probabilities))
        counts[0] += 1
        counts[1] += y
        for number, p in enumerate(probabilities):
            self.log_loss[number] += log_loss_term(p, y)
            self.predictions[number].append(p)
            counts[2 + number] += p
            cell = self.tables[number][table_bin(p)]
            cell[0] += 1
            cell[1] += y
            cell[2] += p

    def report(self) -> Report:
        scores = tuple(self._model_score(number) for number in range(len(self.names)))
        return Report(self.reviews, self.recalled, scores, self._baseline())

    def _model_score(self, number: int) -> Score:
        name = self.names[number]
        if not self.reviews:
            return Score(name, math.nan, math.nan, ())
        table = tuple(Bin(low=index / TABLE_BINS, high=(index + 1) / TABLE_BINS, count=int(count),
                          predicted=sum_p / count, observed=recalled / count)
                      for index, (count, recalled, sum_p) in enumerate(self.tables[number]) if count)
        return Score(name, self.log_loss[number] / self.reviews, self._rmse(lambda counts: counts[2 + number]),
                     table, auc(self.predictions[number], self.outcomes))

    def _rmse(self, sum_p: Callable[[list[float]], float]) -> float:
        """srs-benchmark's RMSE (bins): sqrt(Σ n (mean y - mean p)² / Σ n) over the groups."""
        total = sum(counts[0] * ((counts[1] - sum_p(counts)) / counts[0]) ** 2 for counts in self.groups.values())
        return math.sqrt(total / self.reviews)

    def _baseline(self) -> Score:
        if not self.reviews:
            return Score("baseline", math.nan, math.nan, ())
        mean = self.recalled / self.reviews
        log_loss = (self.recalled * log_loss_term(mean, 1) + (self.reviews - self.recalled) * log_loss_term(mean, 0))
        index = table_bin(mean)  # every review is predicted the same: one row
        table = (Bin(index / TABLE_BINS, (index + 1) / TABLE_BINS, self.reviews, mean, mean),)
        return Score("baseline", log_loss / self.reviews, self._rmse(lambda counts: counts[0] * mean), table, 0.5)


def verdict(report: Report, number: Callable[[float], str] = lambda value: f"{value:.3f}") -> str:
    """The report in plain words; ``number`` formats a figure in the learner's language."""
    if not report.enough:
        return _("Not enough history yet: {count} of the {needed} reviews a fair comparison needs "
                 "(a review counts when the card was also reviewed on an earlier day).").format(
            count=report.reviews, needed=MIN_REVIEWS)
    best = report.best
    assert best is not None
    others = [score for score in report.scores if score is not best]
    baseline = report.baseline
    if best.log_loss >= baseline.log_loss:
        return _("No scheduler predicts your recall better than your average recall does: log loss {best} "
                 "({name}) vs {baseline}.").format(best=number(best.log_loss), name=TITLES[best.name],
                                                    baseline=number(baseline.log_loss))
    if not others:
        return _("{name} predicts your recall better than your average recall does: log loss {best} vs "
                 "{baseline}.").format(name=TITLES[best.name], best=number(best.log_loss),
                                      baseline=number(baseline.log_loss))
    runner_up = min(others, key=lambda score: score.log_loss)
    return _("{name} predicts your recall better: log loss {best} vs {other} ({other_name}); "
             "your average recall alone scores {baseline}.").format(
        name=TITLES[best.name], best=number(best.log_loss), other=number(runner_up.log_loss),
        other_name=TITLES[runner_up.name], baseline=number(baseline.log_loss))
