"""What each desired retention costs: a year of reviews simulated by fsrs-rs with this learner's parameters
and habits, and the retention that buys the most knowledge per minute.

fsrs-rs's simulator (``simulate``, the one behind Anki's "compute minimum recommended retention") plays a
deck the size of the learner's, new cards coming in at the learner's pace, every review scheduled by FSRS
at the desired retention and recalled with FSRS's own predicted probability. What it is told of the
learner (:class:`Habits`, read from their log):

- how often a first answer is Again, Hard, Good or Easy, and a recalled review Hard, Good or Easy;
- how long each takes, in seconds, from the durations bertdrill logs: a first answer and a review by
  rating, the time of the same-day re-drills that a grade below 4 brings added to the answers that
  brought them (bertdrill has no minute-long learning steps: its re-drills are where that time goes);
- the number of cards and of new cards per day.

Limits, said where the figures are shown: the simulation starts every card as new (the Python binding of
fsrs-rs takes no existing cards), so for a learner far into a deck it overstates the learning of the
first weeks; and it is one seeded run per retention, so figures move a little with the seed.

Knowledge is fsrs-rs's ``memorized_cnt_per_day`` at the end of the year (the sum of every card's predicted
recall: how many cards you would recall if asked that day); knowledge per minute is that over the year's
minutes.

Pure: fsrs-rs is computation only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from bertdrill.core.scheduling.fitted import engine
from bertdrill.core.scheduling.fsrs import RATING_OF_GRADE
from bertdrill.core.scheduling.state import REDRILL_BELOW

RETENTIONS = (0.70, 0.75, 0.80, 0.85, 0.90, 0.95, 0.97)
"""The desired retentions compared: the range a learner may choose (0.70-0.97), every 0.05 and its top."""

DAYS = 365
"""The simulated future: a year."""

SEED = 2026
"""One seed for every retention, so they differ by the retention alone (and the figures are reproducible)."""

DEFAULT_SECONDS = 10.0
"""An answer's time when the log has none of that kind (before any answer, or durations of 0)."""


@dataclass(frozen=True)
class Habits:
    """How the learner studies, as their log says; what the simulator is told."""

    cards: int
    new_per_day: int
    first_ratings: tuple[float, float, float, float]  # Again, Hard, Good, Easy at a first answer (sum 1)
    review_ratings: tuple[float, float, float]  # Hard, Good, Easy when a review is recalled (sum 1)
    first_seconds: tuple[float, float, float, float]  # a first answer's time by rating, re-drills included
    review_seconds: tuple[float, float, float, float]  # a review's time by rating, re-drills included


@dataclass(frozen=True)
class Workload:
    """A year at one desired retention."""

    retention: float
    reviews_per_day: float
    minutes_per_day: float
    remembered: float  # cards recalled if asked on the year's last day (the sum of predicted recall)

    @property
    def per_minute(self) -> float:
        """Knowledge per minute: cards remembered at the end for each minute spent over the year."""
        minutes = self.minutes_per_day * DAYS
        return self.remembered / minutes if minutes else 0.0


def habits(durations: Mapping[tuple[str, int], tuple[int, int]], cards: int, new_per_day: int) -> Habits:
    """The learner's habits from ``durations``: (answer kind, grade) -> (answers, total milliseconds), the
    kinds being the log's (``new``, ``review``, ``redrill``; ``practice`` is left out)."""
    def counted(kind: str, rating: int) -> tuple[int, int]:
        found = [durations.get((kind, grade), (0, 0)) for grade, each in RATING_OF_GRADE.items() if each == rating]
        return sum(count for count, _ms in found), sum(ms for _count, ms in found)

    redrills = sum(ms for (kind, _grade), (_count, ms) in durations.items() if kind == "redrill")
    redrilled = sum(count for (kind, grade), (count, _ms) in durations.items()
                    if kind in ("new", "review") and grade < REDRILL_BELOW)
    extra = redrills / redrilled / 1000 if redrilled else 0.0  # seconds of re-drill after a grade below 4

    def seconds(kind: str) -> tuple[float, float, float, float]:
        times = []
        for rating in (1, 2, 3, 4):
            count, ms = counted(kind, rating)
            mean = ms / count / 1000 if count and ms else DEFAULT_SECONDS
            times.append(mean + (extra if rating <= 2 else 0.0))  # Again and Hard (grades 0-3) are re-drilled
        return times[0], times[1], times[2], times[3]

    firsts = [counted("new", rating)[0] for rating in (1, 2, 3, 4)]
    recalled = [counted("review", rating)[0] for rating in (2, 3, 4)]
    return Habits(cards=cards, new_per_day=max(1, new_per_day),
                  first_ratings=_shares(firsts, (0.24, 0.094, 0.495, 0.171)),  # fsrs-rs's defaults, without data
                  review_ratings=_shares(recalled, (0.224, 0.631, 0.145)),
                  first_seconds=seconds("new"), review_seconds=seconds("review"))


_Shares = TypeVar("_Shares", tuple[float, float, float], tuple[float, float, float, float])


def _shares(counts: Sequence[int], default: _Shares) -> _Shares:
    """Each count's share of their sum, in a tuple as long as ``default`` (which stands in when all are 0)."""
    assert len(counts) == len(default)
    total = sum(counts)
    return cast(_Shares, tuple(count / total for count in counts)) if total else default



def simulate(parameters: Sequence[float], retention: float, learner: Habits, *, days: int = DAYS,
             seed: int = SEED) -> Workload:
    """A year at ``retention`` for ``learner``, played by fsrs-rs's simulator."""
    library = engine()
    defaults = library.default_simulator_config()
    config = library.SimulatorConfig(
        deck_size=learner.cards, learn_span=days, max_cost_perday=1e12, max_ivl=36500.0,
        first_rating_prob=list(learner.first_ratings), review_rating_prob=list(learner.review_ratings),
        learn_limit=learner.new_per_day, review_limit=learner.cards * 10 + 1, new_cards_ignore_review_limit=True,
        learning_step_transitions=defaults.learning_step_transitions,  # unused: no steps
        relearning_step_transitions=defaults.relearning_step_transitions,
        state_rating_costs=[list(learner.first_seconds), list(learner.review_seconds), [0.0] * 4],
        learning_step_count=0, relearning_step_count=0)
    result = library.simulate(list(parameters), retention, config, seed)
    return Workload(retention=retention,
                    reviews_per_day=sum(result.review_cnt_per_day) / days,
                    minutes_per_day=sum(result.cost_per_day) / days / 60,
                    remembered=float(result.memorized_cnt_per_day[-1]))


def table(parameters: Sequence[float], learner: Habits, retentions: Sequence[float] = RETENTIONS) -> list[Workload]:
    """A year at each of ``retentions``."""
    return [simulate(parameters, retention, learner) for retention in retentions]


def best(rows: Sequence[Workload]) -> Workload:
    """The retention with the most knowledge per minute."""
    return max(rows, key=lambda row: row.per_minute)
