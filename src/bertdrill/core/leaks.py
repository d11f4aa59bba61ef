"""Questions that give each other away, found from the lesson's own texts.

An item *leaks* into another when something a learner reads on it contains the other item's
answer: one of the answer's numbers of three or more digits (``3,072`` in a matching column
answers "What are BERT-base's settings?"), or one of its key phrases, three long words in a row
(``word + position + segment`` in a prompt answers "Which tables and layers make up the
embeddings?"). Short numbers (12 layers, 64 wide) and short words (a, the, of, ve, bir) are
everywhere and prove nothing, so they never count.

Texts alone miss what the formulas know, so an item can also carry *facts* (:func:`lesson_facts`):
the values its texts state through placeholders (``{n}`` in "embeddings + {n} layers + pooler" states
BERT-base's ``n``, whatever its number of digits), the formulas they print (the blank's
``attention = ____ * (d * d + d)`` prints the formula the numeric attention question asks for, and
``(d * d + d)``, the pooler's), and the counts they enumerate about a formula ("Q, K, V and output
projections" on the attention question counts the four projections the attention blank asks for);
and the facts its answer is (a matching row's ``n``, a settings answer's ``{n@bert-large}``, a blank's
coefficient, a numeric question's formula). A fact stated on one item and asked by another is a leak
like a number or a phrase.

What a learner reads comes in two parts: the question (prompt, code, options, a matching
table's both columns, given values), read before answering and printed on a sheet, and the
answer, read after answering in a review or in Anki. Callers say which is which; this module
does not know about kinds.
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from itertools import groupby, islice
from typing import assert_never

from bertdrill.core import formula
from bertdrill.core.cards import BlankCard, Card, ChoiceCard, FactCard, MatchCard, NumericCard, PracticeCard
from bertdrill.core.errors import FormulaError
from bertdrill.core.formula import Number
from bertdrill.core.languages import conjunctions, thousands_separator
from bertdrill.core.lesson import (
    BLANK,
    BlankItem,
    ChoiceItem,
    FactItem,
    Item,
    Lesson,
    MatchItem,
    NumericItem,
    PracticeItem,
)
from bertdrill.core.lesson.model import PLACEHOLDER
from bertdrill.core.numbers import format_number

MIN_DIGITS = 3  # a number with fewer digits is too common to give anything away
MIN_LETTERS = 4  # shorter words (articles, conjunctions, "BERT"'s neighbours "the", "ve") are not key
PHRASE_WORDS = 3  # this many long words in a row, as in the answer, make a key phrase

_Key = str | tuple[str, ...]  # a clue: a number's digits, or a phrase's words, or a fact
Fact = tuple[str, ...]
"""What the formulas know a text states or an answer is: ``(VALUE, "n", "bert-base")``, ``(FORMULA,
"attention")``, ``(COUNT, "attention", "4")``. The first element is no word, so a fact never equals a phrase."""
VALUE, FORMULA, COUNT = "\x00value", "\x00formula", "\x00count"

_SPACES = "\u0020\u00a0\u202f\u2009"  # space, no-break space, narrow no-break space, thin space


class Where(StrEnum):
    """Where the clue stands on the item that gives it away."""

    QUESTION = "question"  # read before answering: a sheet prints it
    ANSWER = "answer"  # read after answering: the back of a card, a review's feedback


@dataclass(frozen=True)
class Exposure:
    """What one item shows, and what it asks for, in one language."""

    item_id: str
    question: tuple[str, ...]  # every text read before answering
    answers: tuple[str, ...]  # every answer as the key shows it (one per card)
    shown_after: tuple[str, ...] = ()  # texts read after answering (the answers, usually)
    states: frozenset[Fact] = frozenset()  # facts its question states (see :func:`lesson_facts`)
    states_after: frozenset[Fact] = frozenset()  # facts its answer states, read after answering
    asks: Mapping[Fact, str] = field(default_factory=dict)  # facts its answer is, each as the answer writes it


@dataclass(frozen=True)
class Leak:
    source: str  # the item whose text gives the answer away
    target: str  # the item whose answer it gives away
    where: Where
    clue: str  # the number or phrase found, as the target's answer writes it


def find_leaks(items: Sequence[Exposure], *, thousands: str = ",", per_source: int | None = None) -> list[Leak]:
    """Every (source, target) pair where the source's text holds one of the target's clues.

    ``thousands`` is the language's thousands separator (``,`` in English, ``.`` in Turkish), so
    ``0.666`` stays a decimal in English and ``23.837.184`` is one number in Turkish. One leak is
    reported per pair and place, with the first clue found, questions before answers. With
    ``per_source``, only the first that many targets (in lesson order) of each source and place:
    a report stays linear in the lesson even when every item repeats the same phrase.
    """
    clues = _every_clue(items, thousands)
    return [Leak(items[index].item_id, items[position].item_id, where, _first_found(clues[position], shown))
            for index, where, shown, targets in _leaking(items, clues, thousands, per_source) for position in targets]


def leaking_pairs(items: Sequence[Exposure], *, thousands: str = ",") -> set[tuple[str, str]]:
    """The (source, target) item pairs of :func:`find_leaks`' leaks, without the clue each shows: what a review
    buries needs no message (finding every leak's clue was a third of a first card's siblings)."""
    clues = _every_clue(items, thousands)
    return {(items[index].item_id, items[position].item_id)
            for index, _where, _shown, targets in _leaking(items, clues, thousands, None) for position in targets}


def _every_clue(items: Sequence[Exposure], thousands: str) -> list[list[_Clue]]:
    """Each item's clues: its answers' numbers and phrases, and the facts its answer is."""
    return [_clues(item.answers, thousands) + _fact_clues(item) for item in items]


def _leaking(items: Sequence[Exposure], clues: Sequence[list[_Clue]], thousands: str,
             per_source: int | None) -> Iterator[tuple[int, Where, frozenset[_Key], list[int]]]:
    """Each source's index, the place, what it shows there and the positions of the items it gives away there."""
    # Each clue (a number or a phrase) -> the items whose answers hold it, in lesson order: each source text
    # is read once and looked up, instead of being compared with every other item.
    holders: dict[_Key, list[int]] = {}
    for position, found in enumerate(clues):
        for clue in found:
            holders.setdefault(clue.key, []).append(position)
    held_keys = holders.keys()
    for index, source in enumerate(items):
        for where, texts, facts in ((Where.QUESTION, source.question, source.states),
                                    (Where.ANSWER, source.shown_after, source.states_after)):
            shown = _read(texts, thousands) | facts  # a fact is looked up like a phrase
            targets: set[int] = set()
            for key in held_keys & shown:  # most of what a text shows is no one's answer
                others = (position for position in holders[key] if position != index)
                targets.update(others if per_source is None else islice(others, per_source))
            yield index, where, shown, sorted(targets) if per_source is None else heapq.nsmallest(per_source, targets)


CROWD = 50
"""A clue shared by more items than this is settled as a whole (see :func:`fewest_dropped`): pairing them
one by one would cost the square of their number."""


@dataclass(frozen=True)
class Clashes:
    """Which items must not share a sheet, as groups: each item of a group's ``shown`` clashes with
    each item of its ``held`` but itself (they show a clue those hold in their answers), both ways.

    Groups, not pairs: a phrase every item's answer repeats is one group of the lesson's size, where
    its pairs would be the square of it.
    """

    groups: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]

    @classmethod
    def of(cls, items: Sequence[Exposure], *, thousands: str = ",") -> Clashes:
        """The clashes of ``items``: every place counts (a sheet's key and an answered card show the answers)."""
        shown: dict[_Key, list[str]] = {}
        held: dict[_Key, list[str]] = {}
        for item in items:
            shows, holds = _sides(item, thousands)
            for key in holds:
                held.setdefault(key, []).append(item.item_id)
            for key in shows:
                shown.setdefault(key, []).append(item.item_id)
        return cls(tuple((tuple(shown[key]), tuple(holders)) for key, holders in held.items() if key in shown))

    @classmethod
    def pairs(cls, graph: Mapping[str, Iterable[str]]) -> Clashes:
        """From a graph of single clashes: each item with its neighbours."""
        return cls(tuple(((item_id,), tuple(others)) for item_id, others in graph.items()))

    def places(self) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
        """For each item, the groups that show its clue, and the groups whose clue it holds."""
        shows: dict[str, list[int]] = {}
        holds: dict[str, list[int]] = {}
        for index, (shown, held) in enumerate(self.groups):
            for item_id in shown:
                shows.setdefault(item_id, []).append(index)
            for item_id in held:
                holds.setdefault(item_id, []).append(index)
        return shows, holds


def without_conflicts(order: Sequence[str], clashes: Clashes, limit: int | None = None) -> list[str]:
    """Items from ``order``, first come first kept, skipping any that clashes with one kept already.

    Each group counts the items it has kept on either side, so each item is judged by its own groups.
    """
    shows, holds = clashes.places()
    kept_showing = [0] * len(clashes.groups)
    kept_holding = [0] * len(clashes.groups)
    kept: list[str] = []
    for item_id in order:
        if limit is not None and len(kept) == limit:
            break
        if any(kept_holding[group] for group in shows.get(item_id, ())) or \
                any(kept_showing[group] for group in holds.get(item_id, ())):
            continue
        kept.append(item_id)
        for group in shows.get(item_id, ()):
            kept_showing[group] += 1
        for group in holds.get(item_id, ()):
            kept_holding[group] += 1
    return kept


def first_apart(order: Iterable[str], printed: Callable[[str], Sequence[Exposure]], limit: int, *,
                thousands: str = ",") -> list[str]:
    """What :func:`without_conflicts` keeps of ``order`` given the clashes of every item, judging only the
    items it reaches: ``printed(item_id)`` is what the item shows and asks on each paper (in paper order),
    and two items clash when they clash on one paper. For a sheet of 20 questions drawn from 100,000,
    which needs the clues of a few dozen items, not of all of them on every paper.
    """
    kept: list[str] = []
    shown: list[set[_Key]] = []  # per paper, the keys the kept items show, and those they hold
    held: list[set[_Key]] = []
    for item_id in order:
        if len(kept) == limit:
            break
        sides = [_sides(item, thousands) for item in printed(item_id)]
        while len(shown) < len(sides):
            shown.append(set())
            held.append(set())
        if any(not held[paper].isdisjoint(shows) or not shown[paper].isdisjoint(holds)
               for paper, (shows, holds) in enumerate(sides)):
            continue
        kept.append(item_id)
        for paper, (shows, holds) in enumerate(sides):
            shown[paper].update(shows)
            held[paper].update(holds)
    return kept


def _sides(item: Exposure, thousands: str) -> tuple[list[_Key], list[_Key]]:
    """The keys of the clues ``item`` shows (in its question, after answering, as facts), and of those its
    answers hold: an item clashes with another that holds a clue it shows, or shows one it holds."""
    shows: list[_Key] = [*_read((*item.question, *item.shown_after), thousands), *item.states, *item.states_after]
    return shows, [clue.key for clue in _clues(item.answers, thousands) + _fact_clues(item)]


def fewest_dropped(order: Sequence[str], clashes: Clashes, preference: Sequence[str] | None = None) -> list[str]:
    """``order`` without the items that clash most, until none clash.

    Ties go by ``preference`` (most wanted first; default: ``order``): the least wanted goes. For a
    sheet of every question it drops one item of each clashing pair, and one item instead of two
    where that item clashes with both. What is kept stays in ``order``.

    A group of more than :data:`CROWD` items is settled first, as a whole: either all its holders go,
    or all but its most wanted holder and every item showing the clue, whichever drops fewer. The
    rest is paired and dropped one by one, the item with the most clashes left first (a heap of
    degrees, each updated when a neighbour goes): the whole costs what the lesson's texts hold.
    """
    rank = {item_id: index for index, item_id in enumerate(preference if preference is not None else order)}
    live = set(order)
    small = []
    for shown, held in sorted(clashes.groups, key=lambda group: -len(group[0]) - len(group[1])):
        if len(set(shown) | set(held)) <= CROWD:
            small.append((shown, held))
            continue
        live -= _settled([item for item in shown if item in live], [item for item in held if item in live], rank)
    neighbours: dict[str, set[str]] = {item_id: set() for item_id in live}
    for shown, held in small:
        for source in (item for item in shown if item in live):
            for target in (item for item in held if item in live and item != source):
                neighbours[source].add(target)
                neighbours[target].add(source)
    degree = {item_id: len(others) for item_id, others in neighbours.items()}
    heap = [(-count, -rank[item_id], item_id) for item_id, count in degree.items() if count]
    heapq.heapify(heap)
    while heap:
        count, _rank, drop = heapq.heappop(heap)
        if drop not in live or -count != degree[drop]:
            continue  # gone already, or an old degree: its current one is in the heap too
        live.discard(drop)
        for other in neighbours[drop] & live:
            degree[other] -= 1
            if degree[other]:
                heapq.heappush(heap, (-degree[other], -rank[other], other))
    return [item_id for item_id in order if item_id in live]


def _settled(shown: list[str], held: list[str], rank: Mapping[str, int]) -> set[str]:
    """What a crowded group drops so that none of its items clash: the fewer of all its holders, or
    all but its most wanted holder together with every other item that shows the clue."""
    alone = len(set(held)) == 1 and set(shown) <= set(held)  # its one holder shows its own clue
    if not shown or not held or alone:
        return set()
    keeper = min(held, key=rank.__getitem__)
    others = (set(held) | set(shown)) - {keeper}
    return others if len(others) <= len(set(held)) else set(held)


# --- clues --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Clue:
    text: str  # as the answer writes it, for the message
    number: str | None = None  # its digits, without leading zeros: a run of 5,000 is no int() to make
    phrase: tuple[str, ...] = ()

    @property
    def key(self) -> _Key:
        return self.number if self.number is not None else self.phrase


def _clues(answers: Iterable[str], thousands: str) -> list[_Clue]:
    found: dict[object, _Clue] = {}
    for answer in answers:
        for text, value in _text_numbers(answer, thousands):
            if len(value) >= MIN_DIGITS:
                found.setdefault(value, _Clue(text, number=value))
        for shown, phrase in _text_phrases(answer):
            found.setdefault(phrase, _Clue(shown, phrase=phrase))
    return list(found.values())


# An answer is read twice, as a clue and as what shows after answering, in find_leaks and in siblings: each text's
# numbers and phrases are found once.
@functools.lru_cache(maxsize=1 << 15)
def _text_numbers(text: str, thousands: str) -> tuple[tuple[str, str], ...]:
    return tuple(_numbers(text, thousands))


@functools.lru_cache(maxsize=1 << 15)
def _text_phrases(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each key phrase of a text: as the text writes it, and its words."""
    words = _words(text)
    return tuple((text[words[start][1][0]:words[start + PHRASE_WORDS - 1][1][1]], phrase)
                 for start, phrase in _phrases(words))


def _fact_clues(item: Exposure) -> list[_Clue]:
    return [_Clue(text, phrase=fact) for fact, text in item.asks.items()]


def _read(texts: Iterable[str], thousands: str) -> frozenset[_Key]:
    """The numbers and phrases the texts show, as clue keys (a number is a str, a phrase a tuple: never equal)."""
    shown: frozenset[_Key] = frozenset()
    for text in texts:
        shown |= _text_keys(text, thousands)
    return shown


@functools.lru_cache(maxsize=1 << 15)
def _text_keys(text: str, thousands: str) -> frozenset[_Key]:
    keys: list[_Key] = [value for _, value in _text_numbers(text, thousands)]
    keys += [phrase for _, phrase in _text_phrases(text)]
    return frozenset(keys)


def _first_found(clues: list[_Clue], shown: frozenset[_Key]) -> str:
    """The first of a target's clues that the source shows (the caller knows one is there)."""
    return next(clue.text for clue in clues if clue.key in shown)


@functools.lru_cache(maxsize=16)
def _number_pattern(thousands: str) -> re.Pattern[str]:
    """Whole numbers, grouped by the language's separator or a space, or not grouped at all.

    A decimal part is read and ignored: 0.666 is not the number 666.
    """
    separators = re.escape(thousands + _SPACES + "_")
    decimal = r"[.,]" if thousands not in ".," else ("," if thousands == "." else r"\.")
    return re.compile(rf"(?<![\w.,])(\d{{1,3}}(?:[{separators}]\d{{3}})+|\d+)(?:{decimal}\d+)?(?!\w)")


def _numbers(text: str, thousands: str) -> list[tuple[str, str]]:
    """Each number as written, with its digits: ``3,072`` and ``3072`` are both ``"3072"``."""
    found = []
    for match in _number_pattern(thousands).finditer(text):
        written = match.group(1)
        digits = written if written.isdigit() else _NOT_DIGIT.sub("", written)  # most are not grouped
        found.append((written, digits.lstrip("0") or "0"))
    return found


_NOT_DIGIT = re.compile(r"\D")
_WORD = re.compile(r"[^\W_]+")
# An ASCII word (_WORD's match there) is long when it has MIN_LETTERS letters and no digit; the second branch
# takes every other word whole.
_ASCII_WORD = re.compile(rf"([a-z]{{{MIN_LETTERS},}})(?![a-z0-9])|[a-z0-9]+")


def _words(text: str) -> list[tuple[str, tuple[int, int]]]:
    """Every word and number in order, words case-folded (a capital dotted İ folds to i, as in
    Turkish), with their spans; a short word or a number stands as "" so no phrase runs across it."""
    words = []
    if text.isascii():  # casefold is lower there, and keeps every offset: fold the whole text at once
        # the pattern tells the long words (group 1) from the rest, with no Python per character
        return [(match.group(1) or "", match.span()) for match in _ASCII_WORD.finditer(text.lower())]
    folded = text.replace("İ", "i").casefold()
    # Folding never shortens a character: the same length means each one folded to one, and the words keep
    # their offsets (ß folds to ss: such a text folds word by word). The words are still found in the text.
    whole = len(folded) == len(text)
    for match in _WORD.finditer(text):
        word = folded[match.start():match.end()] if whole else match.group().replace("İ", "i").casefold()
        # a letter is never a digit: isalpha() settles most words without a look at each character
        long_word = len(word) >= MIN_LETTERS and (word.isalpha() or not any(character.isdigit() for character in word))
        words.append((word if long_word else "", match.span()))
    return words


def _phrases(words: list[tuple[str, tuple[int, int]]]) -> list[tuple[int, tuple[str, ...]]]:
    """Each run of PHRASE_WORDS long words in a row, with the index of its first word."""
    runs = []
    names = [word for word, _ in words]
    for start in range(len(words) - PHRASE_WORDS + 1):
        phrase = tuple(names[start:start + PHRASE_WORDS])
        if all(phrase):
            runs.append((start, phrase))
    return runs


# --- from cards ---------------------------------------------------------------------------------

def lesson_leaks(cards: Sequence[Card], languages: Sequence[str], *, per_source: int | None = None,
                 lesson: Lesson | None = None) -> list[Leak]:
    """The leaks of a lesson's cards in any of its languages, each pair and place once (its first
    language's clue): a leak in one language is a leak in all, but wording may hide one in another.
    With ``lesson``, what its formulas know counts too (:func:`lesson_facts`)."""
    found: dict[tuple[str, str, Where], Leak] = {}
    for language in languages:
        for leak in find_leaks(exposures(cards, language, lesson=lesson), thousands=thousands_separator(language),
                               per_source=per_source):
            found.setdefault((leak.source, leak.target, leak.where), leak)
    return list(found.values())


def exposures(cards: Sequence[Card], language: str, *, lesson: Lesson | None = None) -> list[Exposure]:
    """One exposure per item, from its compiled cards (in lesson order, an item's cards together); with
    ``lesson``, each carries the facts its lesson's formulas know (:func:`lesson_facts`)."""
    facts = lesson_facts(lesson, language) if lesson is not None else {}
    found = []
    for _, group in groupby(cards, key=lambda card: card.item_id):
        found.append(with_facts(exposure(list(group), language), facts))
    return found


def with_facts(item: Exposure, facts: Mapping[str, ItemFacts], key: str | None = None) -> Exposure:
    """``item`` with the facts ``facts`` holds for its item (looked up by ``key``, default its id)."""
    known = facts.get(key if key is not None else item.item_id)
    if known is None:
        return item
    return Exposure(item.item_id, item.question, item.answers, item.shown_after, item.states | known.states,
                    item.states_after | known.states_after, {**item.asks, **known.asks})


def exposure(cards: Sequence[Card], language: str) -> Exposure:
    """What one item (its cards, in order) shows and asks for, in ``language``."""
    first = cards[0]
    item_id, prompt = first.item_id, first.prompt[language]
    answers = tuple(card.answer[language] for card in cards)
    match first:
        case FactCard():
            return Exposure(item_id, (prompt,), answers, answers)
        case ChoiceCard():
            return Exposure(item_id, (prompt, *first.options[language]), answers, answers)
        case BlankCard():
            return Exposure(item_id, (prompt, first.code[language]), (first.fill,), answers)
        case NumericCard():
            return Exposure(item_id, tuple(card.prompt[language] for card in cards), answers, answers)
        case MatchCard():
            # Both columns are printed: the answers are the pairing, and the meanings count as clues.
            terms = tuple(card.term[language] for card in cards if isinstance(card, MatchCard))
            return Exposure(item_id, (prompt, *terms, *answers), answers)
        case PracticeCard():
            # Its answer is a program, not the numbers it prints: those are the numeric questions'
            # answers by design, and a learner who wrote it computed them (so nothing shows after).
            return Exposure(item_id, (prompt, first.code[language]), ())
        case _:
            assert_never(first)


# --- siblings: what a review buries ---------------------------------------------------------------

def siblings(cards: Sequence[Card]) -> dict[str, frozenset[str]]:
    """For each card, the other cards whose answer a learner has seen once it is answered: Anki's siblings.

    Two kinds, as a review buries them until the next study day (as Anki buries a note's other cards):

    - the other cards of its item (an item's parameter sets, a table's pairs): they ask the same thing;
    - the cards of every item whose answer its question, answer, explanation or source shows (card 5's
      explanation lists d_model, FFN size and vocabulary: card 8 asks d_model), by :func:`find_leaks`,
      in each of the card's languages.

    Not symmetric: a card that gives another's answer away need not be given away by it. Cards of different
    lessons are never siblings. Cards that reveal nothing are left out of the result. Linear in the texts, so
    a caller passes the cards it may show (a day's queue), not every card it knows.
    """
    lessons: dict[str, dict[str, list[Card]]] = {}
    for card in cards:
        lessons.setdefault(card.lesson_id, {}).setdefault(card.item_id, []).append(card)
    found: dict[str, frozenset[str]] = {}
    for items in lessons.values():
        groups = list(items.values())
        languages = sorted({language for group in groups for card in group for language in card.answer})
        given_away: dict[str, set[str]] = {item_id: set() for item_id in items}
        for language in languages:
            shown = [_after_answering(group, language) for group in groups if language in group[0].answer]
            for source, target in leaking_pairs(shown, thousands=thousands_separator(language)):
                given_away[source].add(target)
        for item_id, group in items.items():
            others = {other.id for target in given_away[item_id] for other in items[target]}
            for card in group:
                revealed = frozenset(others | {other.id for other in group if other.id != card.id})
                if revealed:
                    found[card.id] = revealed
    return found


def _after_answering(cards: Sequence[Card], language: str) -> Exposure:
    """An item's exposure in a review: what the question shows, and after the answer also its
    explanation and source (a review prints both with the answer)."""
    seen = exposure(cards, language)
    extra = tuple(text for card in cards for text in (card.explanation.get(language), card.cited.get(language))
                  if text)
    return replace(seen, shown_after=(*seen.shown_after, *dict.fromkeys(extra)))


# --- what the formulas know -----------------------------------------------------------------------

@dataclass(frozen=True)
class ItemFacts:
    """The facts one item's texts state, before and after answering, and the facts its answer is."""

    states: frozenset[Fact] = frozenset()
    states_after: frozenset[Fact] = frozenset()
    asks: Mapping[Fact, str] = field(default_factory=dict)


def lesson_facts(lesson: Lesson, language: str, items: Iterable[Item] | None = None) -> dict[str, ItemFacts]:
    """Every item's facts in ``language``, by item id (``items``: only these, the lesson's by default: a
    numeric item asked with a variant is one whose ``sets`` name the variant in a lesson that has it).

    - A placeholder states its value: ``{n}`` in a numeric prompt states ``n`` of each set it asks
      about, ``{T@bert-base}`` states BERT-base's ``T``, and a matching column states its values.
    - A text that prints a formula's expression states the formula (``d · d + d`` is the pooler's;
      ``·``, ``×`` and spaces do not matter), and a blank states the formula it checks.
    - A list in the question of an item about a formula ("Q, K, V and output projections" on the
      numeric attention question) states how many things it lists about that formula.
    - Asked: a numeric question's formula and its value in each set; a matching row's value; each value
      a fact's answer fills in or claims; a blank's formula and its fill, as the count it stands for.
    """
    finder = _FormulaFinder(lesson)
    lister = _lists(language)
    found: dict[str, ItemFacts] = {}
    for item in lesson.items if items is None else items:
        states: set[Fact] = set()
        after: set[Fact] = set()
        asks: dict[Fact, str] = {}

        def stated(text: str, set_name: str | None, into: set[Fact]) -> None:
            into.update(_placeholders(text, set_name))
            into.update(finder.formulas(text))

        match item:
            case FactItem():
                stated(item.prompt.get(language, ""), None, states)
                answer = item.answer.get(language, "")
                stated(answer, None, after)
                for fact in _placeholders(answer, None):
                    asks[fact] = _shown(lesson, fact, language)
                for claim in item.claims:
                    asks[(VALUE, _expression(lesson, claim.value), claim.set)] = claim.stated
            case ChoiceItem():
                for text in (item.prompt.get(language, ""), *item.options.get(language, ())):
                    stated(text, None, states)
                stated(item.answer.get(language, ""), None, after)
            case BlankItem():
                formula_key = _expression(lesson, item.checks)
                for text in (item.prompt.get(language, ""), item.text.get(language, "")):
                    stated(text, None, states)
                states.add((FORMULA, formula_key))
                after.add((FORMULA, formula_key))
                filled = item.text.get(language, "").replace(BLANK, item.fill)
                asks[(FORMULA, formula_key)] = " ".join(filled.split())
                asks[(COUNT, formula_key, _flat(item.fill))] = item.fill
            case NumericItem():
                formula_key = _expression(lesson, item.formula)
                prompt = item.prompt.get(language, "")
                for set_name in item.sets:
                    stated(prompt, set_name, states)
                    fact = (VALUE, formula_key, set_name)
                    asks[fact] = _shown(lesson, (VALUE, item.formula, set_name), language)
                    after.add(fact)
                states.update((COUNT, formula_key, str(count)) for count in lister(prompt))
                asks[(FORMULA, formula_key)] = lesson.formulas[item.formula].source \
                    if item.formula in lesson.formulas else item.formula
            case MatchItem():
                stated(item.prompt.get(language, ""), item.set_name, states)
                for pair in item.pairs:
                    stated(pair.term.get(language, ""), item.set_name, states)
                    if pair.value:
                        fact = (VALUE, _expression(lesson, pair.value), item.set_name)
                        states.add(fact)  # the column prints every value, unpaired
                        asks[fact] = _shown(lesson, (VALUE, pair.value, item.set_name), language)
            case PracticeItem():
                for text in (item.prompt.get(language, ""), item.starter.get(language, "")):
                    stated(text, item.set_name, states)
            case _:
                assert_never(item)
        if not isinstance(item, MatchItem):  # what its own question states is given, not asked
            # (a matching column prints its values unpaired: the pairing is still asked)
            asks = {fact: text for fact, text in asks.items() if fact not in states}
        found[item.id] = ItemFacts(frozenset(states), frozenset(after), asks)
    return found


def _expression(lesson: Lesson, expression: str) -> str:
    """How a fact names a value: a formula's or parameter's name as it is, any other expression flattened."""
    name = expression.strip()
    return name if name in lesson.formulas or _is_parameter(lesson, name) else _flat(name)


def _is_parameter(lesson: Lesson, name: str) -> bool:
    return any(name in params.values for params in lesson.params.values())


def _placeholders(text: str, set_name: str | None) -> set[Fact]:
    """The values a template's placeholders state: ``{n}`` in ``set_name``, ``{total@bert-large}``."""
    found: set[Fact] = set()
    if "{" not in text:
        return found
    for match in PLACEHOLDER.finditer(text):
        name, where = match.group(1), match.group(2) or set_name
        if name and name != "set" and where:
            found.add((VALUE, name, where))
    return found


def _shown(lesson: Lesson, fact: Fact, language: str) -> str:
    """A value fact as a learner reads it: ``12`` (a name's value in its set)."""
    _kind, name, set_name = fact
    try:
        return format_number(lesson.evaluate(name, set_name), language)
    except (FormulaError, KeyError):
        return name


_FLAT = str.maketrans({"·": "*", "⋅": "*", "×": "*", "∙": "*", "−": "-"})


def _flat(text: str) -> str:
    """An expression as a fact compares it: multiplication signs as ``*``, no spaces."""
    return "".join(text.translate(_FLAT).split())


_OPERATOR = re.compile("[-+*/·×⋅∙−]")


class _FormulaFinder:
    """Finds the lesson's formulas printed in a text, all in one pass of one regular expression."""

    def __init__(self, lesson: Lesson):
        sources: dict[str, str] = {}
        for name, parsed in lesson.formulas.items():
            flat = _flat(parsed.source)
            # A bare name or number prints no formula ("d", "768"); a formula needs an operator.
            if re.search(r"[-+*/]", flat) and len(parsed.names) >= 1:
                sources.setdefault(flat, name)
        self.names = sources
        alternatives = "|".join(re.escape(source) for source in sorted(sources, key=len, reverse=True))
        # A lookahead at every position finds overlapping ones too: (d*d+d) inside 4*(d*d+d).
        self.pattern = re.compile(rf"(?<![\w.])(?=({alternatives})(?![\w.(]))") if sources else None

    def formulas(self, text: str) -> set[Fact]:
        if self.pattern is None or _OPERATOR.search(text) is None:
            return set()
        return {(FORMULA, self.names[match.group(1)]) for match in self.pattern.finditer(_flat(text))}


def _lists(language: str) -> Callable[[str], list[int]]:
    """How many things each list in a text names: "Q, K, V and output projections" names 4;
    "word + position + segment + LayerNorm" names 4 too."""
    words = "|".join(re.escape(word) for word in sorted(conjunctions(language), key=len, reverse=True))
    item = r"[^\W\d_][\w'-]*"
    joined = rf"{item}(?:\s*,\s*{item})+,?\s+(?:{words})\s+{item}" if words else None
    plus = rf"{item}(?:\s*\+\s*{item}){{2,}}"
    pattern = re.compile(rf"(?<![\w+,])(?:{joined}|{plus})" if joined else rf"(?<![\w+,])(?:{plus})", re.IGNORECASE)

    def count(text: str) -> list[int]:
        found = []
        for match in pattern.finditer(text):
            listed = re.split(rf"\s*,\s*|\s*\+\s*|,?\s+(?:{words})\s+" if words else r"\s*,\s*|\s*\+\s*",
                              match.group(0), flags=re.IGNORECASE)
            found.append(len([part for part in listed if part.strip()]))
        return found

    return count


# --- a matching column solved by the sizes of its numbers -----------------------------------------

@dataclass(frozen=True)
class SizeOrder:
    """A matching table whose numbers keep one order of size in every parameter set the lesson has.

    Layers are fewer than ``d_model`` in every BERT, and ``d_model`` is narrower than the FFN: a
    learner who knows that order, not one value, matches 12, 768 and 3,072 by their sizes. A sheet
    prints decoys beside such a column (:func:`bertdrill.core.variants.decoys`); a row whose value is
    the same in every set (``constant``) gets none, and stays the one number of its size.
    """

    item_id: str
    terms: tuple[str, ...]  # the rows with numbers, in the order of their values, smallest first
    constant: tuple[str, ...]  # the rows (their terms) whose value is the same in every set


def size_orders(lesson: Lesson, language: str, items: Iterable[Item] | None = None) -> list[SizeOrder]:
    """The lesson's matching tables that the sizes of their numbers pair, with the order that pairs them.

    Every named set and every variant ``[variants]`` allows is looked at: a table whose rows are in the
    same order of size in all of them (two at least) is one a learner can match without knowing its numbers.
    Tables of the same rows' expressions are judged once (a lesson of 2,000 tables of ``n`` and ``d`` took
    6 million evaluations over 1,504 variants: 9 s of ``check``). ``items``: only these (the lesson's by default).
    """
    found = []
    judged: dict[tuple[str, ...], tuple[tuple[int, ...], frozenset[int]] | None] = {}
    for item in lesson.items if items is None else items:
        if not isinstance(item, MatchItem):
            continue
        rows = [pair for pair in item.pairs if pair.value]
        if len(rows) < 2:
            continue
        expressions = tuple(pair.value or "" for pair in rows)
        if expressions not in judged:
            judged[expressions] = _size_order(lesson, expressions)
        if (verdict := judged[expressions]) is None:
            continue
        order, constant = verdict
        terms = tuple(rows[index].term.get(language, rows[index].id) for index in order)
        fixed = tuple(rows[index].term.get(language, rows[index].id) for index in order if index in constant)
        found.append(SizeOrder(item.id, terms, fixed))
    return found


def _size_order(lesson: Lesson, expressions: tuple[str, ...]) -> tuple[tuple[int, ...], frozenset[int]] | None:
    """The order of size that every set keeps among the rows' values, and the rows whose value never changes;
    None when the order changes between sets, two rows share a value, or there is only one set."""
    envs = _every_set(lesson, list(expressions))
    if len(envs) < 2:
        return None  # one set says nothing of an order every set keeps
    table = [[formula.evaluate(expression, env) for expression in expressions] for env in envs]
    orders = {tuple(sorted(range(len(expressions)), key=values.__getitem__)) for values in table}
    if len(orders) > 1 or any(len(set(values)) < len(expressions) for values in table):
        return None  # the order changes between sets, or two rows share a value: sizes do not pair it
    (order,) = orders
    return order, frozenset(index for index in order if len({values[index] for values in table}) == 1)


def _every_set(lesson: Lesson, expressions: Sequence[str]) -> list[Mapping[str, Number]]:
    """The values of every named set and every allowed variant, as far as ``expressions`` need them
    (a variant's own values when they name only parameters: resolving every formula of 1,504 variants
    costs a fifth of a second)."""
    envs: list[Mapping[str, Number]] = [lesson.values(name) for name in lesson.params]
    needs_formulas = any(formula.parse(expression).names & set(lesson.formulas) for expression in expressions)
    for variant in lesson.allowed_variants():
        envs.append(formula.resolve(variant.values, lesson.formulas) if needs_formulas else variant.values)
    return envs
