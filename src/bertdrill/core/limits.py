"""The daily limits of review, and their defaults: the one place 10 and 200 are written (4, the rollover hour,
belongs to the study day and is written in :mod:`bertdrill.core.scheduling.sm2`)."""

from __future__ import annotations

from dataclasses import dataclass

from bertdrill.core.scheduling.sm2 import DEFAULT_ROLLOVER

DEFAULT_NEW = 10
"""New cards per study day."""

DEFAULT_REVIEWS = 200
"""Cards per study day, due and new together."""


@dataclass(frozen=True)
class Limits:
    new: int = DEFAULT_NEW  # new cards per study day
    reviews: int = DEFAULT_REVIEWS  # cards per study day, due and new together
    rollover_hour: int = DEFAULT_ROLLOVER  # a study day runs from this hour to this hour
