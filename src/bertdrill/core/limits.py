"""The daily limits of review, and their defaults: the one place 10, 200 and 4 (the hour a study day starts)
are written. Every command's options take their defaults from here, so it imports nothing heavy: ``--help``
must not load the schedulers to show that 4 is the default."""

from __future__ import annotations

from dataclasses import dataclass

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
