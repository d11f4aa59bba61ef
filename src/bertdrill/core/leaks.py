"""Questions that give each other away, found from the lesson's own texts.

An item *leaks* into another when something a learner reads on it contains the other item's
answer: one of the answer's numbers of three or more digits (``3,072`` in a matching column
answers "What are BERT-base's settings?"), or one of its key phrases, three long words in a row
(``word + position + segment`` in a prompt answers "Which tables and layers make up the
embeddings?"). Short numbers (12 layers, 64 wide) and short words (a, the, of, ve, bir) are
everywhere and prove nothing, so they never count.

What a learner reads comes in two parts: the question (prompt, code, options, a matching
table's both columns, given values), read before answering and printed on a sheet, and the
answer, read after answering in a review or in Anki. Callers say which is which; this module
does not know about kinds.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import groupby, islice
from typing import assert_never

from bertdrill.core.cards import BlankCard, Card, ChoiceCard, FactCard, MatchCard, NumericCard, PracticeCard
from bertdrill.core.languages import thousands_separator

MIN_DIGITS = 3  # a number with fewer digits is too common to give anything away
MIN_LETTERS = 4  # shorter words (articles, conjunctions, "BERT"'s neighbours "the", "ve") are not key
PHRASE_WORDS = 3  # this many long words in a row, as in the answer, make a key phrase

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
    clues = [_clues(item.answers, thousands) for item in items]
    # Each clue (a number or a phrase) -> the items whose answers hold it, in lesson order: each source text
    # is read once and looked up, instead of being compared with every other item.
    holders: dict[int | tuple[str, ...], list[int]] = {}
    for position, found in enumerate(clues):
        for clue in found:
            holders.setdefault(clue.key, []).append(position)
    leaks: list[Leak] = []
    for index, source in enumerate(items):
        for where, texts in ((Where.QUESTION, source.question), (Where.ANSWER, source.shown_after)):
            numbers, phrases = _read(texts, thousands)
            targets: set[int] = set()
            keys: list[int | tuple[str, ...]] = [*numbers, *phrases]
            for key in keys:
                others = (position for position in holders.get(key, []) if position != index)
                targets.update(others if per_source is None else islice(others, per_source))
            chosen = sorted(targets) if per_source is None else heapq.nsmallest(per_source, targets)
            leaks.extend(Leak(source.item_id, items[position].item_id, where,
                              _first_found(clues[position], numbers, phrases)) for position in chosen)
    return leaks


def conflicts(leaks: Iterable[Leak], where: Iterable[Where] = tuple(Where)) -> dict[str, set[str]]:
    """Which items must not share a sheet: each leak, in either direction, as a graph."""
    places = set(where)
    graph: dict[str, set[str]] = {}
    for leak in leaks:
        if leak.where in places:
            graph.setdefault(leak.source, set()).add(leak.target)
            graph.setdefault(leak.target, set()).add(leak.source)
    return graph


def without_conflicts(order: Sequence[str], graph: dict[str, set[str]], limit: int | None = None) -> list[str]:
    """Items from ``order``, first come first kept, skipping any that conflicts with one kept already."""
    kept: list[str] = []
    for item_id in order:
        if limit is not None and len(kept) == limit:
            break
        if not graph.get(item_id, set()) & set(kept):
            kept.append(item_id)
    return kept


def fewest_dropped(order: Sequence[str], graph: dict[str, set[str]],
                   preference: Sequence[str] | None = None) -> list[str]:
    """``order`` without the items that conflict most, until none conflict.

    Ties go by ``preference`` (most wanted first; default: ``order``): the least wanted goes. For a
    sheet of every question it drops one item of each leaking pair, and one item instead of two
    where that item leaks into both. What is kept stays in ``order``.
    """
    rank = {item_id: index for index, item_id in enumerate(preference if preference is not None else order)}
    kept = list(order)
    while True:
        degree = {item_id: len(graph.get(item_id, set()) & set(kept)) for item_id in kept}
        worst = max(degree.values(), default=0)
        if worst == 0:
            return kept
        drop = max((item_id for item_id in kept if degree[item_id] == worst), key=lambda item_id: rank[item_id])
        kept.remove(drop)


# --- clues --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Clue:
    text: str  # as the answer writes it, for the message
    number: int | None = None
    phrase: tuple[str, ...] = ()

    @property
    def key(self) -> int | tuple[str, ...]:
        return self.number if self.number is not None else self.phrase


def _clues(answers: Iterable[str], thousands: str) -> list[_Clue]:
    found: dict[object, _Clue] = {}
    for answer in answers:
        for text, value in _numbers(answer, thousands):
            if len(str(value)) >= MIN_DIGITS:
                found.setdefault(value, _Clue(text, number=value))
        words = _words(answer)
        for start, phrase in _phrases(words):
            shown = answer[words[start][1][0]:words[start + PHRASE_WORDS - 1][1][1]]
            found.setdefault(phrase, _Clue(shown, phrase=phrase))
    return list(found.values())


def _read(texts: Iterable[str], thousands: str) -> tuple[set[int], set[tuple[str, ...]]]:
    numbers: set[int] = set()
    phrases: set[tuple[str, ...]] = set()
    for text in texts:
        numbers.update(value for _, value in _numbers(text, thousands))
        phrases.update(phrase for _, phrase in _phrases(_words(text)))
    return numbers, phrases


def _first_found(clues: list[_Clue], numbers: set[int], phrases: set[tuple[str, ...]]) -> str:
    """The first of a target's clues that the source shows (the caller knows one is there)."""
    return next(clue.text for clue in clues if clue.key in numbers or clue.key in phrases)


def _number_pattern(thousands: str) -> re.Pattern[str]:
    """Whole numbers, grouped by the language's separator or a space, or not grouped at all.

    A decimal part is read and ignored: 0.666 is not the number 666.
    """
    separators = re.escape(thousands + _SPACES + "_")
    decimal = r"[.,]" if thousands not in ".," else ("," if thousands == "." else r"\.")
    return re.compile(rf"(?<![\w.,])(\d{{1,3}}(?:[{separators}]\d{{3}})+|\d+)(?:{decimal}\d+)?(?!\w)")


def _numbers(text: str, thousands: str) -> list[tuple[str, int]]:
    pattern = _number_pattern(thousands)
    return [(match.group(1), int(re.sub(r"\D", "", match.group(1)))) for match in pattern.finditer(text)]


def _words(text: str) -> list[tuple[str, tuple[int, int]]]:
    """Every word and number in order, words case-folded (a capital dotted İ folds to i, as in
    Turkish), with their spans; a short word or a number stands as "" so no phrase runs across it."""
    words = []
    for match in re.finditer(r"[^\W_]+", text):
        word = match.group().replace("İ", "i").casefold()
        long_word = len(word) >= MIN_LETTERS and not any(character.isdigit() for character in word)
        words.append((word if long_word else "", match.span()))
    return words


def _phrases(words: list[tuple[str, tuple[int, int]]]) -> list[tuple[int, tuple[str, ...]]]:
    """Each run of PHRASE_WORDS long words in a row, with the index of its first word."""
    runs = []
    for start in range(len(words) - PHRASE_WORDS + 1):
        phrase = tuple(word for word, _ in words[start:start + PHRASE_WORDS])
        if all(phrase):
            runs.append((start, phrase))
    return runs


# --- from cards ---------------------------------------------------------------------------------

def lesson_leaks(cards: Sequence[Card], languages: Sequence[str], *, per_source: int | None = None) -> list[Leak]:
    """The leaks of a lesson's cards in any of its languages, each pair and place once (its first
    language's clue): a leak in one language is a leak in all, but wording may hide one in another."""
    found: dict[tuple[str, str, Where], Leak] = {}
    for language in languages:
        for leak in find_leaks(exposures(cards, language), thousands=thousands_separator(language),
                               per_source=per_source):
            found.setdefault((leak.source, leak.target, leak.where), leak)
    return list(found.values())


def exposures(cards: Sequence[Card], language: str) -> list[Exposure]:
    """One exposure per item, from its compiled cards (in lesson order, an item's cards together)."""
    found = []
    for _, group in groupby(cards, key=lambda card: card.item_id):
        found.append(exposure(list(group), language))
    return found


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
