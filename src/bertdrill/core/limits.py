"""The daily limits of review, and their defaults: the one place 10, 200 and 4 (the hour a study day starts)
are written. Every command's options take their defaults from here, so it imports nothing heavy: ``--help``
must not load the schedulers to show that 4 is the default."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

DEFAULT_ROLLOVER = 4
"""The hour a study day starts by default: a review at 00:30 counts for the day before."""

DEFAULT_NEW = 10
"""New cards per study day."""

DEFAULT_REVIEWS = 200
"""Cards per study day, due and new together."""


@dataclass(frozen=True)
class Limits:
    new: int = DEFAULT_NEW  # new cards per study day
    reviews: int = DEFAULT_REVIEWS  # cards per study day, due and new together
    rollover_hour: int = DEFAULT_ROLLOVER  # a study day runs from this hour to this hour


class Counted(Protocol):
    """A study day's logged answers as the limits count them (:class:`bertdrill.ports.DayCounts` is one)."""

    @property
    def first_answers(self) -> int: ...
    @property
    def new(self) -> int: ...


def room_today(counts: Counted, limits: Limits, due: int) -> tuple[int, int]:
    """(due cards, new cards) still allowed today, given the day's logged answers (store DayCounts)
    and ``due`` cards waiting: due cards come first, new cards fill what the total limit leaves.
    Here, beside the limits, so ``status`` counts today's room without loading the review session."""
    room = max(0, limits.reviews - counts.first_answers)
    return room, max(0, min(limits.new - counts.new, room - min(due, room)))
