"""Numbers written in words, in each lesson language: ``four``, ``dört``, ``one hundred and ten
million``, ``yüz on milyon``, ``110 milyon``.

A language adds itself as data: a :class:`~bertdrill.core.languages.NumberWords` entry in its
:mod:`bertdrill.core.languages` row (its words for units, tens, hundred and the scales, the little words
it allows in between). The reader is the
same for every language, and strict: ``four four`` or ``hundred twenty hundred`` are no numbers,
so a sentence is never misread as one.

A language with plain-letter spellings (Turkish) is read without its marks too (``dort``, ``alti``,
``yuz``): people type it on US keyboards, and a number is right or wrong by its value, not its spelling.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

from bertdrill.core.languages import NumberWords, base
from bertdrill.core.languages import language as language_of
from bertdrill.core.letters import fold_letters

MAX_WORDS = 30
"""Longer texts are no number words: reading stays instant whatever is typed."""


def parse_words(text: str, language: str) -> int | None:
    """The whole number ``text`` spells in ``language``, or None if it spells none.

    Words are separated by spaces or hyphens (``twenty-one``), or written together as Turkish
    often is (``yüzon``); a group may be digits (``110 million``, ``2 bin``).
    """
    code = base(language)
    words = language_of(code).number_words
    if words is None or not text or len(text) > 40 * MAX_WORDS:
        return None
    vocabulary = _vocabulary(code, words)
    tokens = _tokens(_key(text, code, words), vocabulary, _longest[code], code)
    if tokens is None or not tokens or len(tokens) > MAX_WORDS:
        return None
    return _value(tokens)


def may_spell(word: str, language: str) -> bool:
    """Whether ``word`` (one word, no space) can stand in a number ``language`` spells (``hundred``, ``and``,
    ``12``): a text holding a word that cannot is no number, so a reader of ever longer runs of words stops there.

    The same test :func:`parse_words` makes of each of its words, so the two never disagree."""
    code = base(language)
    words = language_of(code).number_words
    if words is None:
        return False
    vocabulary = _vocabulary(code, words)
    return _tokens(_key(word, code, words), vocabulary, _longest[code], code) is not None


# Token kinds, in the order a group of three digits is spoken: "two hundred forty one".
_ZERO, _ONE, _UNIT, _TEEN, _TEN, _HUNDRED, _SCALE, _DIGITS = range(8)

_vocabularies: dict[str, dict[str, tuple[int, int]]] = {}
_longest: dict[str, int] = {}  # each vocabulary's longest word, beside it: _split needs it for every word read


def _vocabulary(language: str, words: NumberWords) -> dict[str, tuple[int, int]]:
    """word -> (kind, value), with folded spellings where the language allows them (built once)."""
    if language not in _vocabularies:
        table: dict[str, tuple[int, int]] = {}
        for word in words.zero:
            table[word] = (_ZERO, 0)
        for word in words.one:
            table[word] = (_ONE, 1)
        for word, value in words.units.items():
            table[word] = (_TEEN if value >= 10 else _UNIT, value) if value < 20 else (_TEN, value)
        for word, value in words.tens.items():
            table[word] = (_TEN, value)
        for word in words.hundred:
            table[word] = (_HUNDRED, 100)
        for word, value in words.scales.items():
            table[word] = (_SCALE, value)
        table.update({fold_letters(word, language): meaning for word, meaning in list(table.items())})
        _vocabularies[language] = table
        _longest[language] = max(map(len, table))
    return _vocabularies[language]


def _key(text: str, code: str, words: NumberWords) -> list[str]:
    text = unicodedata.normalize("NFC", text).strip().replace("-", " ")
    if language_of(code).turkic_case:
        text = text.replace("İ", "i").replace("I", "ı")
    parts = text.casefold().split()
    return [part for part in parts if part not in words.fillers]


def _tokens(parts: list[str], vocabulary: Mapping[str, tuple[int, int]], longest: int,
            language: str) -> list[tuple[int, int]] | None:
    tokens: list[tuple[int, int]] = []
    for part in parts:
        if part.isdigit() and part.isascii() and len(part) <= 3:
            tokens.append((_DIGITS, int(part)))
            continue
        split = _split(part, vocabulary, longest)
        if split is None:  # MILYON in ASCII capitals folds to "mılyon" in Turkish: read it without its marks
            split = _split(fold_letters(part, language), vocabulary, longest)
        if split is None:
            return None
        tokens.extend(split)
    return tokens


def _split(part: str, vocabulary: Mapping[str, tuple[int, int]], longest: int) -> list[tuple[int, int]] | None:
    """A word, or words written together (``yüzon``): longest known word first, backtracking.

    Linear in ``part``: a word is at most as long as the vocabulary's longest, a number has at most
    MAX_WORDS words, and each place where the rest may start is tried once (``ononon…`` was retried
    at every prefix on every level: cubic, and exponential where it fails).
    """
    if part in vocabulary:
        return [vocabulary[part]]
    if len(part) > longest * MAX_WORDS:
        return None
    failed: set[int] = set()

    def rest(start: int) -> list[tuple[int, int]] | None:
        if len(part) - start <= longest and part[start:] in vocabulary:
            return [vocabulary[part[start:]]]
        if start in failed:
            return None
        for end in range(min(len(part) - 1, start + longest), start + 1, -1):
            head = part[start:end]
            if head in vocabulary:
                tail = rest(end)
                if tail is not None:
                    return [vocabulary[head], *tail]
        failed.add(start)
        return None

    return rest(0)


def _value(tokens: list[tuple[int, int]]) -> int | None:
    """Read tokens strictly, a group of hundreds at a time, each scale smaller than the one before."""
    if tokens[0][0] == _ZERO:
        return 0 if len(tokens) == 1 else None
    total, group, stage, last_scale = 0, 0, _START, None
    for kind, value in tokens:
        stage, group = _step(stage, group, kind, value)
        if stage == _BAD:
            return None
        if kind == _SCALE:
            if last_scale is not None and value >= last_scale:
                return None
            total += group * value
            group, stage, last_scale = 0, _START, value
    if stage in (_ARTICLE,):
        return None
    return total + group


# Where a group is: nothing yet; a unit that may multiply a hundred; an article; after "hundred";
# after a ten; complete (nothing but a scale may follow); an invalid sequence.
_START, _MULTIPLIER, _ARTICLE, _HUNDREDS, _TENS, _COMPLETE, _BAD = range(7)


def _step(stage: int, group: int, kind: int, value: int) -> tuple[int, int]:
    if kind == _SCALE:
        if stage == _START:
            return _COMPLETE, 1  # "bin", "thousand": one thousand
        return (_COMPLETE, group) if stage != _ARTICLE else (_COMPLETE, 1)
    if kind == _HUNDRED:
        if stage in (_START, _ARTICLE):
            return _HUNDREDS, 100
        return (_HUNDREDS, group * 100) if stage == _MULTIPLIER else (_BAD, 0)
    if kind == _ONE:
        return (_ARTICLE, 0) if stage == _START else (_BAD, 0)
    if kind == _DIGITS:
        return (_COMPLETE, value) if stage == _START else (_BAD, 0)
    if kind == _UNIT:
        if stage == _START:
            return _MULTIPLIER, value
        return (_COMPLETE, group + value) if stage in (_HUNDREDS, _TENS) else (_BAD, 0)
    if kind in (_TEEN, _TEN):
        if stage in (_START, _HUNDREDS):
            return (_TENS if kind == _TEN else _COMPLETE), group + value
        return _BAD, 0
    return _BAD, 0
