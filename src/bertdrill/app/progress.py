"""A learner's progress as ``bertdrill stats`` and the stats web page show it: gathered once from the store's
reports, so the terminal, ``--json`` and the page cannot disagree.

- :func:`gather`: the heatmap, streaks, forecast, retention, card states, leeches and hardest cards;
- :func:`workload`: what each desired retention would cost (a year simulated by fsrs-rs with the learner's
  parameters and answer times: :mod:`bertdrill.core.scheduling.workload`);
- :func:`calibration`: how well each scheduler predicts the learner's recall, out of sample.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from bertdrill.core import stats
from bertdrill.core.stats import Heatmap

if TYPE_CHECKING:
    from bertdrill.core.scheduling.calibration import Report
    from bertdrill.core.scheduling.state import CardStage
    from bertdrill.core.scheduling.workload import Habits
    from bertdrill.core.scheduling.workload import Workload as Year
    from bertdrill.ports import CardLog, CardState, Retention, ReviewReports, ReviewStore, SchedulerSettings

LEECHES_SHOWN = 10
HARDEST_SHOWN = 5


@dataclass(frozen=True)
class Figures:
    """Everything the screen shows, gathered once."""

    today: date
    lesson: str | None
    answers: int  # in the whole log (of the lesson)
    heatmap: Heatmap
    streak: tuple[int, int]  # current, longest
    forecast: list[tuple[date, int]]
    retention: Retention
    states: dict[CardStage, int]
    average_ef: float | None
    leeches: list[CardState]
    hardest: list[CardState]  # EF below the start, leeches left out
    prompts: dict[str, str]  # card id -> one-line question
    database: str


def gather(store: ReviewReports, today: date, days: int, lessons: list[str] | None,
           prompts: Callable[[list[str]], dict[str, str]]) -> Figures:
    """The figures of study day ``today``, a forecast of ``days`` days; ``prompts`` gives the one-line question
    of the cards named (leeches and hardest), as the caller has the lessons."""
    from bertdrill.core.scheduling.state import EF_START

    first = stats.heatmap_start(today)
    cards = store.card_figures(today, lessons=lessons)
    leeches = cards.leeches
    # Leeches are listed already: the hardest of the rest say more, and only below the starting EF.
    forecast, lowest = store.forecast_and_hardest(today, days, HARDEST_SHOWN + len(leeches), lessons=lessons)
    hardest = [state for state in lowest if state.schedule.ef100 < EF_START and not state.leech][:HARDEST_SHOWN]
    return Figures(
        today=today,
        lesson=lessons[0] if lessons else None,
        answers=store.answer_count(lessons=lessons),
        heatmap=stats.heatmap(store.reviews_per_day(first, today, lessons=lessons), today),
        streak=store.streaks(today, lessons=lessons),
        forecast=forecast,
        retention=store.retention(lessons=lessons),
        states=cards.states,
        average_ef=cards.average_ef,
        leeches=leeches,
        hardest=hardest,
        prompts=prompts([state.card_id for state in (*leeches, *hardest)]),
        database=store.where,
    )


@dataclass(frozen=True)
class Costs:
    """A year at each desired retention for this learner, the best of them, and what the simulation was told."""

    rows: list[Year]
    best: Year
    current: float | None  # the learner's own desired retention (FSRS), None under SM-2
    habits: Habits
    fitted: bool  # simulated with the learner's fitted parameters (else FSRS's defaults)


def workload(store: ReviewStore, lessons: Collection[str] | None, today: date) -> Costs:
    """What each desired retention costs this learner (fsrs-rs's simulator, their parameters and answer times)."""
    from bertdrill.core.limits import DEFAULT_NEW
    from bertdrill.core.scheduling import workload as costs
    from bertdrill.core.scheduling.fitted import default_parameters

    choice = store.scheduler_choice()
    parameters = choice.fitted.parameters if choice.fitted else default_parameters()
    times = store.answer_times(lessons=lessons)
    cards = sum(count for state, count in store.card_states(today, lessons=lessons).items() if state.active)
    new_per_day = round(times.new_per_day) if times.days else DEFAULT_NEW
    habits = costs.habits(times.durations, max(1, cards), new_per_day)
    rows = costs.table(parameters, habits)
    return Costs(rows, costs.best(rows), choice.retention if choice.name == "fsrs" else None, habits,
                 fitted=choice.fitted is not None)


def calibration(store: SchedulerSettings, lessons: Collection[str] | None, *,
                track: Callable[[list[str]], Iterable[str]] | None = None) -> Report:
    """Score the schedulers out of sample on the learner's log (see :mod:`bertdrill.core.scheduling.calibration`);
    ``track``: the CLI's progress over the cards read. The log is read twice, once for the fits and once to score,
    card by card: held whole, a million answers were 85 MB beside what fsrs-rs needs to fit. (An answer given in
    another window between the two reads is scored and never fitted: still out of sample.)"""
    from bertdrill.core.scheduling.calibration import OutOfSample
    from bertdrill.core.scheduling.evaluation import fitted_splits
    from bertdrill.core.scheduling.fitted import Training

    def read(visit: Callable[[CardLog], None]) -> None:
        if track is None:
            store.card_logs(visit, lessons=lessons)
        else:
            store.card_logs(visit, lessons=lessons, track=track)

    training = Training()
    read(training.add)
    scoring = OutOfSample(fitted_splits(training.collected()))
    _return_freed_heap()  # fsrs-rs's freed heap, else kept by the allocator beside the scoring's own
    read(scoring.add)
    return scoring.report()


def _return_freed_heap() -> None:
    """Give the heap fsrs-rs freed back to the system (glibc's ``malloc_trim``; nothing elsewhere): its fits' heap
    stayed with the allocator (RSS 161 MB after the calibration's fits, 64 MB trimmed), and what Python allocates
    next comes from its own arenas, not from it."""
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)  # the process's own symbols: glibc's where it is the C library
    except (OSError, AttributeError):  # not glibc (macOS, musl): no such call, nothing to give back this way
        pass
