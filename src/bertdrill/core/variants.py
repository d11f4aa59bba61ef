"""Drawing fresh parameter variants: pure and seeded, so the same seed always asks the same numbers.

The core draws no random numbers of its own (it has no clock and no entropy): a caller passes a
seed, and :class:`Stream` turns it into a stream of numbers (SplitMix64, a small, well-mixed
64-bit generator). A seed is all a log needs to record what was asked; with the variant's key
beside it, a replay is exact even after the lesson's ``[variants]`` table changes.
"""

from __future__ import annotations

from collections.abc import Iterator

from bertdrill.core.lesson import Lesson, Variant

_MASK = (1 << 64) - 1


class Stream:
    """SplitMix64 (Steele, Lea and Flood, 2014): 64-bit numbers from a seed, the same on every machine."""

    def __init__(self, seed: int):
        self.state = seed & _MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        """A number from 0 to ``bound - 1``, each equally likely (draws above the last whole block are redrawn)."""
        if bound < 1:
            raise ValueError("bound must be at least 1")
        limit = (1 << 64) - (1 << 64) % bound
        while (value := self.next()) >= limit:
            pass
        return value % bound

    def shuffled(self, count: int) -> Iterator[int]:
        """0 to ``count - 1`` in a random order, lazily (Fisher-Yates, one swap per number taken)."""
        order = list(range(count))
        for index in range(count):
            pick = index + self.below(count - index)
            order[index], order[pick] = order[pick], order[index]
            yield order[index]


def draw(lesson: Lesson, seed: int) -> Variant | None:
    """The variant ``seed`` picks among those the lesson allows; None when it allows none."""
    allowed = lesson.allowed_variants()
    return allowed[Stream(seed).below(len(allowed))] if allowed else None


def draw_distinct(lesson: Lesson, seed: int, count: int) -> list[Variant]:
    """``count`` variants, all different while the lesson allows enough (then they repeat, in a new order).

    What a sheet needs: no two students, and no two versions, share numbers they could compare.
    """
    allowed = lesson.allowed_variants()
    if not allowed or count < 1:
        return []
    stream = Stream(seed)
    drawn: list[Variant] = []
    while len(drawn) < count:
        drawn.extend(allowed[index] for index in _take(stream.shuffled(len(allowed)), count - len(drawn)))
    return drawn


def _take(indices: Iterator[int], count: int) -> Iterator[int]:
    for _ in range(count):
        try:
            yield next(indices)
        except StopIteration:
            return


def find(lesson: Lesson, key: str) -> Variant | None:
    """The allowed variant with this key (``d=512,f=2048,n=6,h=8``), as a log records it; None if not allowed."""
    return next((variant for variant in lesson.allowed_variants() if variant.key == key), None)
