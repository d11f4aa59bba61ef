"""Comparing answer texts by meaning rather than by keystroke.

- :func:`choice_key`: a choice option's text as the learner means it, ignoring case, articles,
  punctuation and spacing: ``bidirectional encoder; no causal mask``, ``A bidirectional encoder,
  no causal mask`` and ``a  Bidirectional encoder no causal mask.`` all name the same option.
  Letters inside a word are untouched, so a real typo stays a typo.
- :func:`gives_away`: the part of a prompt that already says the answer, in digits or in words.

Turkish typed on a US keyboard (``cift yonlu``) is :mod:`bertdrill.core.letters`.

Per-language data (articles, plain-letter spellings) lives in :mod:`bertdrill.core.languages`.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Iterator

from bertdrill.core.languages import base, turkic_case
from bertdrill.core.languages import language as language_of
from bertdrill.core.letters import fold_letters
from bertdrill.core.number_words import may_spell, parse_words


def choice_key(normalised: str, language: str) -> str:
    """``normalised`` (already case-folded) without punctuation, articles and extra spaces.

    Punctuation becomes a space, so ``encoder;no`` is two words, as the learner meant.
    """
    spaced = normalised.translate(_PUNCTUATION_TO_SPACE)
    articles = language_of(base(language)).articles
    return " ".join(word for word in spaced.split() if word not in articles)


class _PunctuationToSpace(dict[int, int]):
    """``str.translate``'s table: a punctuation character (Unicode category P*) becomes a space, any other stays;
    each character is looked up once and kept (a lesson's check reads every prompt: a million characters)."""

    def __missing__(self, code: int) -> int:
        self[code] = 32 if unicodedata.category(chr(code))[0] == "P" else code
        return self[code]


_PUNCTUATION_TO_SPACE = _PunctuationToSpace()


def answer_words(normalised: str, language: str) -> list[str]:
    """A free-text answer's words as compared: punctuation and articles gone, without Turkish marks."""
    return fold_letters(choice_key(normalised, language), language).split()


def content_words(normalised: str, language: str) -> list[str]:
    """The words that carry an answer's meaning: :func:`answer_words` without the language's little words."""
    little = {fold_letters(word, language) for word in language_of(base(language)).stopwords}
    return list(dict.fromkeys(word for word in answer_words(normalised, language) if word not in little))


def same_word(typed: str, wanted: str, language: str = "") -> bool:
    """The same word, or one inflected (``encoders``, ``pretrained`` for ``pretraining``, and in a language
    that adds suffixes ``kodlayicilarindan`` for ``kodlayici``); digits exactly."""
    if typed == wanted:
        return True
    if any(ch.isdigit() for ch in typed + wanted):
        return False
    common = next((i for i, (a, b) in enumerate(zip(typed, wanted)) if a != b), min(len(typed), len(wanted)))
    return common >= max(4, max(len(typed), len(wanted)) - 3) or _suffixed(typed, wanted, language)


def _suffixed(typed: str, wanted: str, language: str) -> bool:
    """``typed`` is ``wanted`` with suffixes after it, its last consonant perhaps softened (``kitabi``)."""
    entry = language_of(base(language))
    if not entry.suffixing or len(wanted) < 4:  # a short stem begins too many other words
        return False
    stems = [wanted]
    if wanted[-1] in entry.softened:
        stems.append(wanted[:-1] + entry.softened[wanted[-1]])
    return any(len(typed) > len(stem) and typed.startswith(stem) for stem in stems)


def has_wording(typed: list[str], wording: list[str], language: str = "") -> bool:
    """Whether the ``wording``'s words occur in ``typed`` in order, hyphens and spaces aside.

    ``pre trained`` is found in ``pretrained`` and the other way round: runs of typed words are
    compared with the wording written together.
    """
    if not wording:
        return False
    size = len(wording)
    for start in range(len(typed)):
        window = typed[start:start + size]
        if len(window) == size and all(same_word(t, w, language) for t, w in zip(window, wording)):
            return True
    joined = "".join(wording)
    for start in range(len(typed)):
        for end in range(start + 1, min(len(typed), start + size + 2) + 1):
            if same_word("".join(typed[start:end]), joined, language):
                return True
    return False


MAX_NUMBER_WORDS = 6
"""Number words spelt over more words than this are not looked for in a prompt ("one hundred and ten million")."""


def gives_away(prompt: str, answers: Iterable[str], language: str) -> str | None:
    """The part of ``prompt`` that is one of its ``answers``, or None.

    A number answer is found as digits or in words (``four`` for ``4``, ``dört`` in Turkish); a text
    answer as whole words, ignoring case, articles and punctuation. One- and two-letter text answers
    are not looked for: they occur in any sentence.
    """
    folded = _casefold(prompt, language)
    # the prompt's numbers (in order) and its words as a key: each read once, on the first answer that needs it
    numbers: list[tuple[str, str]] | None = None
    key: str | None = None
    for answer in answers:
        text = _casefold(answer, language).strip().rstrip(".")
        value = _number(text, language)
        if value is not None:
            if numbers is None:
                words = folded.replace("-", " ").split()
                numbers = list(_numbers_in([word.strip(_PUNCTUATION) for word in words], words, language))
            found = next((shown for number, shown in numbers if number == value), None)
            if found is not None:
                return found
            continue
        wanted = choice_key(text, language)
        if key is None:
            key = f" {choice_key(folded, language)} "
        if len(wanted) >= 3 and f" {wanted} " in key:
            return wanted
    return None


_PUNCTUATION = ".,;:!?()[]{}\"'«»“”‘’"


def _numbers_in(tokens: list[str], words: list[str], language: str) -> Iterator[tuple[str, str]]:
    """Every number a run of up to MAX_NUMBER_WORDS tokens spells, with its text, by start then length.

    A run starts only at a token that is a number by itself: one that does not ("a" of "a hundred", "and")
    adds nothing the run from the next token lacks, and skipping it reads each prompt in linear time.
    """
    for start, token in enumerate(tokens):
        if _number(token, language) is None:
            continue
        for end in range(start + 1, min(len(tokens), start + MAX_NUMBER_WORDS) + 1):
            if end - 1 > start and not _may_spell(tokens[end - 1], language):
                break  # no longer run from here spells a number either
            number = _number(" ".join(tokens[start:end]), language)
            if number is not None:
                yield number, " ".join(words[start:end]).strip(_PUNCTUATION)


@functools.lru_cache(maxsize=1 << 16)
def _may_spell(word: str, language: str) -> bool:
    return may_spell(word, language)


@functools.lru_cache(maxsize=1 << 16)  # prompts repeat their words: "what", "how", "many" are read once
def _number(text: str, language: str) -> str | None:
    """The whole number ``text`` is, in digits or in words, as its digits (no leading zeros), or None.

    Digits stay text: a run of 5,000 of them in a prompt is compared, never turned into an ``int``
    (which refuses more than 4,300 digits).
    """
    if text.isdigit():
        return (text.lstrip("0") or "0") if text.isascii() else None
    value = parse_words(text, language)
    return None if value is None else str(value)


@functools.lru_cache(maxsize=1 << 16)  # a lesson's answers repeat ("4", "768"): each is folded once
def _casefold(text: str, language: str) -> str:
    if turkic_case(language):
        text = text.replace("İ", "i").replace("I", "ı")
    return unicodedata.normalize("NFC", text).casefold()
