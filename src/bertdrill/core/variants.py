"""Drawing fresh parameter variants: pure and seeded, so the same seed always asks the same numbers.

The core draws no random numbers of its own (it has no clock and no entropy): a caller passes a
seed, and :class:`Stream` turns it into a stream of numbers (SplitMix64, a small, well-mixed
64-bit generator). A seed is all a log needs to record what was asked; with the variant's key
beside it, a replay is exact even after the lesson's ``[variants]`` table changes.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Collection, Iterator
from dataclasses import replace
from typing import assert_never

from bertdrill.core import formula
from bertdrill.core.cards import MatchCard, NumericCard, numeric_card
from bertdrill.core.formula import Number
from bertdrill.core.lesson import Item, Lesson, MatchItem, NumericItem, Variant, VariantMode
from bertdrill.core.lesson.model import PLACEHOLDER
from bertdrill.core.numbers import format_number
from bertdrill.core.scheduling.state import MATURE_DAYS

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
    """``count`` variants, all different while the lesson allows enough, and as unlike each other as they can be.

    What a sheet per student needs: each variant is the one, in a seeded random order, whose values
    were used least so far (summed over its varying parameters), so thirty students spread over every
    ``d`` the lesson allows before any ``d`` comes twice as often as another. Past the allowed
    variants they repeat, in a new order.
    """
    allowed = lesson.allowed_variants()
    if not allowed or count < 1:
        return []
    stream = Stream(seed)
    used: dict[tuple[str, Number], int] = {}
    drawn: list[Variant] = []
    pool: list[Variant] = []
    while len(drawn) < count:
        if not pool:
            pool = [allowed[index] for index in stream.shuffled(len(allowed))]
        best = min(range(len(pool)), key=lambda i: sum(used.get((name, pool[i].values[name]), 0)
                                                       for name in pool[i].varying))
        chosen = pool.pop(best)
        drawn.append(chosen)
        for name in chosen.varying:
            used[(name, chosen.values[name])] = used.get((name, chosen.values[name]), 0) + 1
    return drawn


def derive_seed(salt: int, card_id: str, attempt: int) -> int:
    """A 63-bit seed for one showing of one card: the same inputs always give the same seed."""
    digest = hashlib.blake2b(f"{salt}\x1f{card_id}\x1f{attempt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def logged(card: NumericCard) -> str | None:
    """What the review log records of a card asked with fresh numbers: ``"seed:key"``; None for its own set."""
    if not card.variant:
        return None
    return f"{card.seed if card.seed is not None else ''}:{card.variant}"


def read_logged(text: str) -> tuple[int | None, str]:
    """``"seed:key"`` as :func:`logged` wrote it: the seed (None if none was recorded) and the variant's key."""
    seed, _sep, key = text.partition(":")
    return (int(seed) if seed else None), key


def find(lesson: Lesson, key: str) -> Variant | None:
    """The allowed variant with this key (``d=512,f=2048,n=6,h=8``), as a log records it; None if not allowed."""
    return next((variant for variant in lesson.allowed_variants() if variant.key == key), None)


# --- asking a card with a variant ----------------------------------------------------------------

def wants_variant(mode: VariantMode, interval: int) -> bool:
    """Whether a numeric card whose interval is ``interval`` days is asked with fresh numbers under ``mode``."""
    match mode:
        case VariantMode.FIXED:
            return False
        case VariantMode.FRESH:
            return True
        case VariantMode.MATURE:
            return interval >= MATURE_DAYS
        case _:
            assert_never(mode)


def variant_card(lesson: Lesson, card: NumericCard, variant: Variant, seed: int | None = None, *,
                 item: Item | None = None) -> NumericCard:
    """``card`` asked with ``variant``'s numbers: the same id (one card for scheduling), its own value,
    parameters, prompt and explanation; the prompt states every value the formula uses. ``item``: the card's
    item, given where ``lesson`` is read without its items (a drawn sheet's)."""
    item = item if item is not None else lesson.item(card.item_id)
    assert isinstance(item, NumericItem), f"{card.id} is not a numeric item's card"
    varied, name = lesson.with_variant(variant)
    fresh = numeric_card(varied, item, name, card.id)
    prompt = {language: _stating(text, varied, item, variant, language) for language, text in fresh.prompt.items()}
    return replace(fresh, prompt=prompt, variant=variant.key, seed=seed)


def varied_lesson(lesson: Lesson, card: NumericCard) -> Lesson:
    """The lesson a card asked with a variant is graded and diagnosed in: the variant is one of its sets."""
    if not card.variant:
        return lesson
    variant = find(lesson, card.variant) or from_key(lesson, card.variant)
    return lesson.with_variant(variant)[0]


def from_key(lesson: Lesson, key: str) -> Variant:
    """The variant a log's key names, rebuilt even when the lesson no longer allows it (to replay what was asked)."""
    space = lesson.variant_space
    assert space is not None, "a variant key for a lesson without [variants]"
    values: dict[str, Number] = dict(space.fixed)
    names = []
    for part in key.split(","):
        name, _sep, shown = part.partition("=")
        values[name] = formula.evaluate(shown, {})
        names.append(name)
    return Variant({name: values[name] for name in space.order if name in values}, tuple(names))


def _stating(prompt: str, lesson: Lesson, item: NumericItem, variant: Variant, language: str) -> str:
    """The prompt, with the values the formula needs that the set's title does not show: ``(V = 30,522, T = 2)``."""
    space = lesson.variant_space
    assert space is not None
    shown = {match.group(1) for match in PLACEHOLDER.finditer(space.title_template(language)) if match.group(1)}
    needed = _parameters_used(lesson, item.formula)
    missing = tuple(name for name in space.order if name in needed and name not in shown)
    return f"{prompt} ({variant.shown(missing, language)})" if missing else prompt


def _parameters_used(lesson: Lesson, expression: str) -> frozenset[str]:
    """The parameters an expression depends on, through the formulas it names."""
    seen: set[str] = set()
    todo = list(formula.parse(expression).names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in lesson.formulas:
            todo.extend(lesson.formulas[name].names)
    return frozenset(seen - set(lesson.formulas))


# --- decoys for a matching column ----------------------------------------------------------------

DECOY_CANDIDATES = 64
"""Variants looked at for a matching column's decoys: the best of these is taken (nearly every one is)."""


def decoys(lesson: Lesson, item: MatchItem, seed: int, avoid: Collection[Number] = ()) -> tuple[Number, ...]:
    """Values to print beside a matching table's own, so the sizes of its numbers do not pair it.

    Layers are fewer than ``d_model``, which is narrower than the FFN: a column of 12, 768, 3,072 and
    30,522 can be matched by size alone. Beside each row's value the column then shows the same row's
    value in one of the lesson's variants (6 beside 12, 512 beside 768, 2,048 beside 3,072), all from
    one variant, so no decoy breaks the lesson's own relations (``f = 4 * d`` holds for the decoys
    too): a learner must know which of two numbers of the same size is the table's. The variant is
    drawn by ``seed``. A decoy never equals a value of a named set's (1,024 would be read as
    BERT-large's ``d_model``, and answer its settings) nor one in ``avoid``, the numbers printed elsewhere
    on the sheet (a version's own variant): a learner could tell such a decoy from the answer. A row
    whose value is the same in every variant gets none; a lesson without ``[variants]`` has none to
    give (its other named sets' values would answer their own settings questions).
    """
    rows = [pair.value for pair in item.pairs if pair.value]
    allowed = lesson.allowed_variants()
    if not rows or not allowed:
        return ()
    own = [lesson.evaluate(row, item.set_name) for row in rows]
    avoid = {*avoid, *(value for params in lesson.params.values() for value in params.values.values())}
    space = lesson.variant_space
    assert space is not None
    used = [_parameters_used(lesson, row) for row in rows]
    most = sum(1 for names in used if names & set(space.varying))  # a row of fixed parameters never varies
    plain = not any(formula.parse(row).names & set(lesson.formulas) for row in rows)
    best: tuple[Number, ...] = ()
    for index in itertools.islice(Stream(seed).shuffled(len(allowed)), DECOY_CANDIDATES):
        values_of = allowed[index].values
        env = values_of if plain else formula.resolve(values_of, lesson.formulas)  # resolving all costs 0.1 ms
        values = [formula.evaluate(row, env) for row in rows]
        fresh = tuple(dict.fromkeys(value for value, mine in zip(values, own)
                                    if value != mine and value not in own and value not in avoid))
        if len(fresh) > len(best):
            best = fresh
        if len(best) >= most:
            break
    return best


def with_decoys(lesson: Lesson, card: MatchCard, seed: int) -> MatchCard:
    """A matching table's row asked in review with :func:`decoys` among the values to choose from.

    The table's values alone (12, 768, 3,072, 30,522 for "BERT-base: how many layers?") are answered by
    picking the smallest; with one variant's values beside them the learner must know which is BERT-base's.
    Numbers stay in increasing order, texts after them, as the card's own options are.
    """
    item = lesson.item(card.item_id)
    assert isinstance(item, MatchItem), f"{card.id} is not a matching table's card"
    extra = decoys(lesson, item, seed)
    if not extra:
        return card
    values = [lesson.evaluate(pair.value, item.set_name) for pair in item.pairs if pair.value]
    numbers = sorted({*values, *extra})
    options = {}
    for language, shown in card.options.items():
        own = {format_number(value, language) for value in values}
        texts = [text for text in shown if text not in own]
        options[language] = tuple(dict.fromkeys([format_number(value, language) for value in numbers] + texts))
    return replace(card, options=options)
