"""A seeded synthetic learner whose true forgetting curve is known, reviewing under SM-2.

Each card has a hardness and a true stability S (days); the chance of recalling it t days
after the last review is the power curve R = (1 + t / (9 S)) ** -1 (recall is 90 % when
t = S). A recall multiplies S by a growth that is larger when recall was harder and smaller
for a hard card; a failure shrinks S. The learner studies on most days and takes a few
holidays (what is due waits), answers every card due, meets ten new cards a day, and grades
by how sure they were: 3-5 when they recalled, 0-2 when not. Cards graded below 4 come back the same day (the session's
re-drill) and are logged again; those answers never reach a scheduler.

The log has what the store's log has for these purposes: per card, (study day, grade) of each
answer, oldest first.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import date, timedelta

from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.state import NEW, REDRILL_BELOW, Schedule

START = date(2025, 1, 6)


def true_recall(elapsed: float, stability: float) -> float:
    return 1 / (1 + elapsed / (9 * stability))


@dataclass
class TrueCard:
    hardness: float  # 0.5 (easy) .. 1.5 (hard)
    stability: float = 0.0  # set at the first meeting
    last: date | None = None


def simulate(cards: int = 500, days: int = 365, seed: int = 20261201, new_per_day: int = 10,
             study_chance: float = 0.85, break_chance: float = 0.02) -> list[list[tuple[date, int]]]:
    """Each card's log: (study day, grade) of every answer, oldest first."""
    rng = random.Random(seed)
    truth = [TrueCard(hardness=rng.uniform(0.5, 1.5)) for _ in range(cards)]
    schedules = [NEW] * cards
    logs: list[list[tuple[date, int]]] = [[] for _ in range(cards)]
    introduced = 0
    back = START  # the end of the learner's latest holiday
    for offset in range(days):
        today = START + timedelta(days=offset)
        if today < back or rng.random() > study_chance:
            continue  # a day off: what was due waits
        if rng.random() < break_chance:  # a holiday starts tomorrow
            back = today + timedelta(days=rng.randint(5, 30))
        due = [index for index in range(introduced) if _due(schedules[index]) <= today]
        fresh = list(range(introduced, min(cards, introduced + new_per_day)))
        introduced += len(fresh)
        for index in due + fresh:
            card = truth[index]
            if card.last is None:
                recall = 0.9 / card.hardness  # a first meeting: an easy card is often known already
            else:
                recall = true_recall((today - card.last).days, card.stability)
            recalled = rng.random() < recall
            if card.last is None:
                card.stability = (3 if recalled else 0.5) / card.hardness
            elif recalled:
                card.stability *= 1 + (3 / card.hardness) * card.stability ** -0.2 * (math.exp(1.5 * (1 - recall)) - 0.85)
            else:
                card.stability = max(0.3, card.stability * 0.3 / card.hardness)
            card.last = today
            grade = _grade(rng, recalled, recall)
            logs[index].append((today, grade))
            schedules[index] = sm2.review(schedules[index], grade, today=today)
            while grade < REDRILL_BELOW:  # the same-day re-drill: logged, never scheduled
                grade = rng.choice((2, 4, 4, 5))
                logs[index].append((today, grade))
    return logs


def _grade(rng: random.Random, recalled: bool, recall: float) -> int:
    """How sure the learner felt: 5 when recall was easy, 3 when it was a struggle; 0-2 when forgotten."""
    if not recalled:
        return rng.choice((0, 1, 2))
    felt = recall + rng.gauss(0, 0.05)
    return 5 if felt > 0.93 else 4 if felt > 0.8 else 3


TRUE_PARAMETERS = (1.0, 3.0, 9.0, 25.0, 6.0, 0.7, 2.5, 0.02, 1.3, 0.25, 0.9, 1.7, 0.08, 0.3, 1.9, 0.5, 2.0, 0.5, 0.1,
                   0.06, 0.5)
"""The memory of :func:`simulate_fsrs`'s learner: FSRS-6's own model with these parameters (not the defaults)."""

FIRST_RATINGS = ((1, 0.2), (2, 0.1), (3, 0.5), (4, 0.2))  # Again, Hard, Good, Easy at a first meeting
RECALLED_RATINGS = ((2, 0.15), (3, 0.7), (4, 0.15))  # Hard, Good, Easy when recalled
GRADE_OF_RATING = {2: 3, 3: 4, 4: 5}


def simulate_fsrs(parameters: tuple[float, ...] = TRUE_PARAMETERS, cards: int = 300, days: int = 365,
                  seed: int = 20261201, new_per_day: int = 10,
                  study_chance: float = 0.85) -> list[list[tuple[date, int]]]:
    """A learner whose memory *is* FSRS-6 with ``parameters``, reviewing under SM-2; each card's log as
    :func:`simulate`'s. Recall t days after the last review is FSRS-6's forgetting curve for the card's true
    stability; the rating given moves the true memory state by FSRS-6's rules (computed by fsrs-rs)."""
    import fsrs_rs_python as rs

    model = rs.FSRS(list(parameters))
    decay = parameters[20]
    factor = 0.9 ** (-1 / decay) - 1
    rng = random.Random(seed)
    memories: list[rs.MemoryState | None] = [None] * cards
    last: list[date | None] = [None] * cards
    schedules = [NEW] * cards
    logs: list[list[tuple[date, int]]] = [[] for _ in range(cards)]
    introduced = 0
    for offset in range(days):
        today = START + timedelta(days=offset)
        if rng.random() > study_chance:
            continue
        due = [index for index in range(introduced) if _due(schedules[index]) <= today]
        fresh = list(range(introduced, min(cards, introduced + new_per_day)))
        introduced += len(fresh)
        for index in due + fresh:
            previous = last[index]
            if previous is None:
                rating = _weighted(rng, FIRST_RATINGS)
                states = model.next_states(None, 0.9, 0)
            else:
                memory = memories[index]
                assert memory is not None, "a card met before has a memory state"
                elapsed = (today - previous).days
                recall = (1 + factor * elapsed / memory.stability) ** -decay
                rating = _weighted(rng, RECALLED_RATINGS) if rng.random() < recall else 1
                states = model.next_states(memory, 0.9, elapsed)
            memories[index] = getattr(states, ("again", "hard", "good", "easy")[rating - 1]).memory
            last[index] = today
            grade = rng.choice((0, 1, 2)) if rating == 1 else GRADE_OF_RATING[rating]
            logs[index].append((today, grade))
            schedules[index] = sm2.review(schedules[index], grade, today=today)
            while grade < REDRILL_BELOW:  # the same-day re-drill: logged, never scheduled
                grade = rng.choice((2, 4, 4, 5))
                logs[index].append((today, grade))
    return logs


def _due(schedule: Schedule) -> date:
    """The day a card met before is due (a card never met has none)."""
    assert schedule.due is not None, f"a reviewed card has a due day: {schedule}"
    return schedule.due


def _weighted(rng: random.Random, choices: tuple[tuple[int, float], ...]) -> int:
    return rng.choices([value for value, _weight in choices], weights=[weight for _value, weight in choices])[0]
