"""Check typed answers: normalise, compare, and say plainly what was wrong.

:func:`grade` takes a card, the text a learner typed and the language they
review in, and returns a :class:`Verdict`: right or wrong, a suggested SM-2
grade, feedback in words (never colour alone), the expected answer, and a
character diff for a near miss.

- Text is compared after :func:`normalise_text`: NFC, trimmed, inner
  whitespace collapsed, case folded by language (Turkish ``İ``->``i``,
  ``I``->``ı``). One typo (Damerau-Levenshtein distance 1) in a text of four
  or more characters is a near miss: accepted, with a lower grade and a diff.
  A changed digit is never a typo: ``24 million`` is not ``23 million``.
- Numbers are read by :func:`parse_number` in the learner's convention
  (``23,837,184`` in English, ``23.837.184`` in Turkish, ``110M``,
  ``110 milyon``), or as expressions over the card's parameters
  (``(V + L + T) * d + 2 * d``), evaluated by :mod:`bertdrill.core.formula`.
- A blank accepts its fill, anything that fills it to an equal expression,
  or a whole equal right-hand side (``4*d*d + 4*d``), compared on every
  parameter set and on synthetic prime-valued sets.

Typed text is untrusted: terminal escape sequences, control characters,
zero-width and bidirectional marks are removed before anything else, and an
answer over :data:`MAX_ANSWER` characters is refused before any work is done.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TypeVar, assert_never

from bertdrill.core import formula
from bertdrill.core.cards import BlankCard, Card, ChoiceCard, FactCard, MatchCard, NumericCard, PracticeCard
from bertdrill.core.diagnosis import Diagnoser, describe
from bertdrill.core.errors import FormulaError
from bertdrill.core.formula import Number
from bertdrill.core.i18n import _, ngettext
from bertdrill.core.languages import base, decimal_mark, turkic_case
from bertdrill.core.languages import language as language_of
from bertdrill.core.lesson import filled_expression
from bertdrill.core.letters import fold_letters, folds_letters
from bertdrill.core.number_words import parse_words
from bertdrill.core.numbers import SCALES as _SCALES
from bertdrill.core.numbers import format_number
from bertdrill.core.text import clean_text
from bertdrill.core.textmatch import (
    answer_words,
    choice_key,
    content_words,
    has_wording,
    same_word,
)

MAX_ANSWER = 10_000
"""Longer answers are wrong at once ("Answer too long"), so grading never slows down."""

NEAR_MISS_LENGTH = 4
"""Shorter texts get no typo tolerance: one edit in "mlm" makes a different word."""

RIGHT, NEAR_MISS, WRONG, EMPTY = 4, 3, 1, 0
"""Suggested SM-2 grades. A near miss, a spelling without Turkish letters and a close approximation
are all one grade below a perfect answer."""

CLOSE_FIGURES = 2
"""An approximation is "close" from this many significant figures on (``24M``; ``20M`` is just wrong),
or from one when it says it is one (``~20M``)."""

DIFF_CONTEXT = 24
"""Characters of context kept on each side of the edit in a diff."""

_LETTERS = "abcdefghij"  # options are lettered a) to j) (lessons allow at most ten)
_T = TypeVar("_T")


@dataclass(frozen=True)
class Verdict:
    correct: bool  # accepted as right
    suggested: int  # suggested SM-2 grade: 4 right, 3 near miss or close, 1 wrong, 0 empty
    feedback: str  # plain words: "Correct", "Almost: one typo", "Incorrect", ...; never the answer again
    expected: str  # the answer as shown to the learner, in their language
    diff: str | None = None  # near misses: where the typed text differs from the answer
    note: str | None = None  # a second line: what a wrong number is (diagnosis), or the right spelling
    retry: bool = False  # the input names nothing (option 5 of 4): ask again, grade nothing
    # Free text that is not clearly right: the learner compares it with the answer and grades it
    # (Anki's flip); no grade is suggested, so a right answer in other words is never recorded as a 1.
    judge: bool = False
    matched: tuple[str, ...] = ()  # the parts of the answer found in what was typed
    missing: tuple[str, ...] = ()  # the parts not found


@dataclass(frozen=True)
class _Number:
    """What a learner's number answer came to, and how it was written."""

    value: Number
    expression: bool  # typed as an expression over the card's parameters
    approximate: bool  # said to be approximate: "~24M", "≈ 110 million"


def grade(card: Card, typed: str, language: str, *, diagnoser: Diagnoser | None = None) -> Verdict:
    """Grade what a learner typed for ``card`` when reviewing in ``language``.

    With a ``diagnoser`` (the card's lesson's), a wrong number is explained in :attr:`Verdict.note`.
    """
    expected = _in_language(card.answer, language, "")
    if len(typed) > MAX_ANSWER:
        return Verdict(False, WRONG, _("Answer too long"), expected)
    text = clean_text(typed).strip()
    if not text:
        return Verdict(False, EMPTY, _("No answer"), expected)
    match card:
        case NumericCard():
            if _restates_formula(card, text, language):
                return Verdict(False, WRONG, _("The question gives the formula: type the number it comes to"),
                               expected, retry=True)
            verdict = _grade_number(card.value, card.tolerance, card.env, text, language, expected)
            return _diagnosed(verdict, card, text, language, diagnoser)
        case MatchCard():
            return _grade_match(card, text, language, expected, diagnoser)
        case ChoiceCard():
            return _grade_choice(card, text, language, expected)
        case BlankCard():
            return _grade_blank(card, text, language, expected, diagnoser)
        case PracticeCard():
            return _grade_output(card, text, expected)
        case FactCard():
            return _grade_fact(card, text, language, expected)
        case _:
            assert_never(card)


# --- cleaning and normalising ---------------------------------------------------------------

def normalise_text(text: str, language: str) -> str:
    """Text in the form answers are compared in.

    NFC, trimmed, inner whitespace collapsed to one space, case folded the
    language's way: in Turkish ``İSTANBUL`` is ``istanbul`` and ``I`` is ``ı``.
    """
    text = " ".join(unicodedata.normalize("NFC", clean_text(text)).split())
    if turkic_case(language):
        text = text.replace("İ", "i").replace("I", "ı")
    else:  # typed on a Turkish keyboard: BİDİRECTİONAL, bıdırectıonal are the English word
        text = text.replace("İ", "i").replace("ı", "i")
    return unicodedata.normalize("NFC", text.casefold())


def _text_key(text: str, language: str) -> str:
    """A text as compared: normalised, without a closing full stop."""
    return normalise_text(text, language).rstrip(". ")


def _foldings(language: str) -> tuple[str, ...]:
    # Turkish lessons quote English terms ("Bidirectional Encoder ..."): typed in capitals
    # they fold to dotless ı, so a Turkish review also accepts the plain Unicode folding.
    return (language, "") if turkic_case(language) else (language,)


def _in_language(texts: Mapping[str, _T], language: str, default: _T) -> _T:
    """The text in the learner's language, else the first one there is."""
    if language in texts:
        return texts[language]
    return next(iter(texts.values()), default)


# --- numbers ---------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?P<sign>[+-]?)\s*"
    r"(?P<body>[0-9][0-9.,_ ]*|[.,][0-9]+)"
    r"(?:[eE](?P<exponent>[+-]?[0-9]{1,3}))?"
    r"\s*(?P<scale>[^\W\d_]+)?"
)
_DIGITS = re.compile(r"[0-9]+")
_MAX_NUMBER = 100


def parse_number(text: str, language: str) -> Fraction | None:
    """Read a number the way a person writes it in ``language``; None if it is not one.

    Thousands may be grouped by the language's separator, a space or ``_``
    (groups of exactly three digits); the decimal mark is ``.`` in English and
    ``,`` in Turkish. The other mark is read as grouping only when that is
    unambiguous: ``23.837.184`` is 23837184 in English too, but ``1.500`` is
    1.5 in English and 1500 in Turkish, and ``1,5`` is no English number.
    Scales: ``110M``, ``1.5k``, ``110 million``, ``110 milyon``, ``2bn``; and ``1.1e8``.
    """
    text = " ".join(_ascii_digits(clean_text(text)).replace("\u2212", "-").split())
    if len(text) > _MAX_NUMBER:
        return None
    match = _NUMBER.fullmatch(text)
    if not match:
        return None
    value = _decimal(match["body"].rstrip(), language)
    if value is None:
        return None
    if match["exponent"]:
        value *= Fraction(10) ** int(match["exponent"])
    if match["scale"]:
        word = match["scale"]
        factor = _SCALES.get(normalise_text(word, language)) or _SCALES.get(word.casefold())
        if factor is None:
            return None
        value *= factor
    return -value if match["sign"] == "-" else value


def _ascii_digits(text: str) -> str:
    """Arabic-Indic, full-width and other decimal digits as 0-9."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(ch)) if ch.isdecimal() else ch for ch in text)


def _decimal(body: str, language: str) -> Fraction | None:
    mark = decimal_mark(language)
    whole, fraction = body, ""
    if body.count(mark) == 1:
        whole, fraction = body.split(mark)
        if not _DIGITS.fullmatch(fraction):
            return None
    digits = _grouped(whole) if whole else 0
    if digits is None or (not whole and not fraction):
        return None
    return Fraction(digits) + (Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0)


def _grouped(whole: str) -> int | None:
    """``23837184``, or with one kind of separator between groups of three: ``23,837,184``."""
    if _DIGITS.fullmatch(whole):
        return int(whole)
    separators = set(_DIGITS.sub("", whole))
    if len(separators) != 1:
        return None
    first, *rest = whole.split(separators.pop())
    if not _DIGITS.fullmatch(first) or len(first) > 3 or first.startswith("0"):
        return None
    if not all(len(group) == 3 and _DIGITS.fullmatch(group) for group in rest):
        return None
    return int(first + "".join(rest))


# --- expressions -----------------------------------------------------------------------------

# What people type for operators, as the evaluator spells them.
_OPERATORS = str.maketrans({"×": "*", "·": "*", "⋅": "*", "∙": "*", "−": "-", "÷": "/",
                            "^": "**", "²": "**2", "³": "**3"})
# Juxtaposition as the lesson writes it: "2d", "4(d² + d)", "(V + L + T)d". Only text that
# would not parse otherwise is touched: 1e8 and 0x1f stay numbers.
_IMPLICIT = re.compile(r"(?<![\w.])(?!0[xXoObB])([0-9]+(?:\.[0-9]+)?)(?![eE][+-]?[0-9])(?=[A-Za-z_(])|(\))(?=[\w(])")


def _as_formula(text: str) -> str:
    """Typed maths in the evaluator's spelling: ``4(d² + d)`` -> ``4*(d**2 + d)``."""
    return _IMPLICIT.sub(lambda m: (m[1] or m[2]) + "*", text.translate(_OPERATORS))


def _expression(text: str) -> formula.Formula | None:
    """The typed text as a formula with at least one operation, or None."""
    try:
        parsed = formula.parse(_as_formula(text))
    except FormulaError:
        return None
    return None if _bare(parsed.tree) else parsed


def _bare(node: ast.expr) -> bool:
    # A lone name or literal is not an expression: "embeddings" must not answer its own
    # question, and plain numbers are read by parse_number in the learner's convention.
    if isinstance(node, ast.UnaryOp):
        return _bare(node.operand)
    return isinstance(node, (ast.Name, ast.Constant))


def _evaluate(parsed: formula.Formula, env: Mapping[str, Number]) -> Number | None:
    try:
        return parsed.evaluate(env)
    except FormulaError:
        return None


# --- grading by kind -------------------------------------------------------------------------

def _wrong(expected: str, why: str = "") -> Verdict:
    return Verdict(False, WRONG, _("Incorrect: {why}").format(why=why) if why else _("Incorrect"), expected)


def _right(expected: str, note: str = "") -> Verdict:
    return Verdict(True, RIGHT, _("Correct: {note}").format(note=note) if note else _("Correct"), expected)


def _read_number(text: str, env: Mapping[str, Number], language: str) -> _Number | str:
    """The typed number, in digits, words or as an expression; else why it is none (a message).

    A unit of the language after it (``109482240 parameters``, ``12 katman``) is dropped, and a
    hedge (``about 110 million``, ``yaklaşık 110 milyon``, ``~24M``) makes it approximate.
    """
    text, approximate = _without_words(text, language)
    number: Number | None = parse_number(text, language)
    if number is None:
        number = parse_words(text, language)
    if number is not None:
        return _Number(formula._normalise(number), False, approximate)
    parsed = _expression(text)
    if parsed is None:
        return _not_a_number(text, language)
    try:
        return _Number(parsed.evaluate(env), True, approximate)
    except FormulaError as exc:
        return str(exc)


def _without_words(text: str, language: str) -> tuple[str, bool]:
    """``text`` without the words around its number: a hedge before or after, units after.

    Returns the number's text and whether a hedge said it is approximate. Words are compared folded
    the language's way and, where people type without the language's letters, without them too
    (``yaklasik``).
    """
    words = text.replace("~", " ~ ").replace("≈", " ≈ ").split()
    row = language_of(base(language))
    hedges = [_word_key(hedge, language).split() for hedge in row.hedges]
    units = {_word_key(unit, language) for unit in row.units}
    approximate = False
    keys = [_word_key(word, language) for word in words]
    for hedge in hedges:  # before the number: "about 110 million", "yaklaşık olarak 110 milyon"
        if len(keys) > len(hedge) and keys[:len(hedge)] == hedge:
            words, keys, approximate = words[len(hedge):], keys[len(hedge):], True
            break
    changed = True
    while changed and len(keys) > 1:  # after it: "parameters", "parametre civarında"
        changed = False
        if keys[-1] in units:
            words, keys, changed = words[:-1], keys[:-1], True
            continue
        for hedge in hedges:
            if len(keys) > len(hedge) and keys[-len(hedge):] == hedge:
                words, keys, approximate, changed = words[:-len(hedge)], keys[:-len(hedge)], True, True
                break
    return " ".join(words), approximate


def _word_key(text: str, language: str) -> str:
    return fold_letters(normalise_text(text, language), language).rstrip(",;:")


def _unread(expected: str, why: str) -> Verdict:
    """What cannot be read as a number is asked again, never graded."""
    return Verdict(False, WRONG, _("Type it again: {why}").format(why=why), expected, retry=True)


def _grade_number(want: Number, tolerance: Fraction, env: Mapping[str, Number], text: str, language: str,
                  expected: str) -> Verdict:
    read = _read_number(text, env, language)
    if isinstance(read, str):
        return _unread(expected, read)
    miss = abs(Fraction(read.value) - Fraction(want))
    if miss <= tolerance * abs(Fraction(want)):
        return _right(expected, "" if miss == 0 else _("within the item's tolerance"))
    if not read.expression and read.value == parse_number(expected, language):
        return _right(expected)  # the answer as shown: a value with no end of decimals, shown rounded
    figures = _figures(Fraction(read.value))
    if not read.expression and figures and _rounded(Fraction(read.value), want) and \
            (figures >= CLOSE_FIGURES or read.approximate):
        off = _percent(miss / abs(Fraction(want)), language)
        message = ngettext("Close: rounded right to {figures} significant figure ({off} % off)",
                           "Close: rounded right to {figures} significant figures ({off} % off)", figures)
        return Verdict(True, NEAR_MISS, message.format(figures=figures, off=off), expected)
    return _wrong(expected)


def _percent(share: Fraction, language: str) -> str:
    """``0.47`` (per cent, two decimals at most) with the language's decimal mark: ``0,47`` in Turkish."""
    shown = f"{float(100 * share):.2f}".rstrip("0").rstrip(".")
    return shown.replace(".", decimal_mark(language))


def _figures(value: Fraction) -> int:
    """Significant figures as written, trailing zeros of a whole number not counted: 24000000 -> 2."""
    if value == 0:
        return 0
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
        if places > 30:
            return 0
    digits = str(abs(value * 10**places).numerator).rstrip("0") if places == 0 else \
        str(abs(value * 10**places).numerator)
    return len(digits.lstrip("0"))


def _rounded(value: Fraction, want: Number) -> bool:
    """Whether ``value`` is ``want`` rounded at its own last digit: 110M or 109M for 109,482,240."""
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
        if places > 30:
            return False
    digits = str(abs(value * 10**places).numerator)
    unit = Fraction(10) ** (len(digits) - len(digits.rstrip("0")) - places)
    return value != 0 and 2 * abs(value - want) <= unit


def _diagnosed(verdict: Verdict, card: NumericCard | MatchCard, text: str, language: str,
               diagnoser: Diagnoser | None) -> Verdict:
    """A wrong number with what it is, when the lesson can tell: "2,362,368 is attention of BERT-base"."""
    if verdict.correct or verdict.retry or diagnoser is None or card.value is None:
        return verdict
    read = _read_number(text, card.env, language)
    if isinstance(read, str):
        return verdict
    name = card.formula
    found = diagnoser.diagnose(read.value, expected=card.value, name=name or None, set_name=card.set_name)
    if found is None:
        return verdict
    note = describe(found, shown=format_number(read.value, language), expected_name=name or None,
                    names=diagnoser.named(language))
    return replace(verdict, note=note)


def _restates_formula(card: NumericCard, text: str, language: str) -> bool:
    """An expression typed on a card whose question names its formula (``d / h`` for "d_model / heads").

    The question names the formula when it is one operation and the prompt shows that operation's
    sign: the answer asked for is then the number, not the formula copied back.
    """
    plain = text.lstrip("~≈ ")
    if not card.definition or parse_number(plain, language) is not None or parse_words(plain, language) is not None:
        return False
    try:
        tree = formula.parse(card.definition).tree
    except FormulaError:
        return False
    if not (isinstance(tree, ast.BinOp) and isinstance(tree.left, ast.Name) and isinstance(tree.right, ast.Name)):
        return False
    sign = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}.get(type(tree.op))
    prompt = _in_language(card.prompt, language, "")
    return sign is not None and sign in prompt.translate(_OPERATORS) and _expression(text) is not None


def _not_a_number(text: str, language: str) -> str:
    mark = decimal_mark(language)
    other = "." if mark == "," else ","
    if re.fullmatch(rf"[0-9]+\{other}[0-9]+", text):
        return _("not a number here; write decimals with {mark}, as in {example}").format(
            mark=repr(mark), example=f"1{mark}5")
    if re.fullmatch(r"[0-9]+(?:[,._ ][0-9]+)+(?:[.,][0-9]+)?", text):  # 109,482,24: a group of two
        separator = language_of(base(language)).thousands
        return _("{typed} is not grouped in threes (as in {example})").format(
            typed=text, example=f"109{separator}482{separator}240")
    return _("not a number or an expression")


def _grade_text(text: str, candidates: Iterable[str], language: str, expected: str) -> Verdict:
    candidates = [c for c in candidates if c]
    if _exact(text, candidates, language):
        return _right(expected)
    diff = _near_miss(text, candidates, language)
    if diff is not None:
        return Verdict(True, NEAR_MISS, _("Almost: one typo"), expected, diff)
    spelled = _plain_spelling(text, candidates, language)
    if spelled is not None:
        return _spelling(expected, spelled)
    return _wrong(expected)


def _grade_fact(card: FactCard, text: str, language: str, expected: str) -> Verdict:
    """A fact: an accepted wording, or every part of the answer; else the learner judges.

    The parts are the lesson's (``parts``), or else the answer's own words that carry meaning.
    """
    candidates = [expected, *_in_language(card.accept, language, ())]
    verdict = _grade_text(text, candidates, language, expected)
    if verdict.correct:
        return verdict
    typed_key = normalise_text(text, language)
    if any(answer_words(typed_key, language) == answer_words(normalise_text(c, language), language)
           for c in candidates):
        return _right(expected)  # the same words: punctuation and articles aside
    typed = answer_words(typed_key, language)[:MAX_FACT_WORDS]
    parts: tuple[tuple[str, ...], ...] = _in_language(card.parts, language, ())
    if not parts:
        parts = tuple((word,) for word in content_words(normalise_text(expected, language), language))
    found = [any(_has_wording(typed, text, wording, language) for wording in part) for part in parts]
    matched = tuple(part[0] for part, hit in zip(parts, found) if hit)
    missing = tuple(part[0] for part, hit in zip(parts, found) if not hit)
    if parts and not missing:
        return Verdict(True, RIGHT, _("Correct: every part of the answer is there"), expected, matched=matched)
    return Verdict(False, NEAR_MISS if matched else WRONG, _("Compare it with the answer, and grade it yourself"),
                   expected, judge=True, matched=matched, missing=missing)


MAX_FACT_WORDS = 100
"""Words of a free-text answer looked through for the answer's parts: a fact is a sentence or two."""

FACT_NUMBER_SHARE = Fraction(1, 100)
"""A fraction in a free-text answer counts for a part within this share of it: 0.666 or 0.67 for 2/3."""


def _has_wording(typed: list[str], text: str, wording: str, language: str) -> bool:
    """Whether the typed answer says ``wording``: its words in order, or its number (``0,666`` for ``2/3``)."""
    value = parse_number(wording, language) or _fraction(wording)
    if value is None:
        return has_wording(typed, answer_words(normalise_text(wording, language), language), language)
    share = FACT_NUMBER_SHARE if value.denominator != 1 else 0  # a year or a count is exact: 2018 is not 2017
    numbers = [parse_number(token, language) for token in _NUMBER_TOKEN.findall(text)]
    numbers += [_fraction(found) for found in _FRACTION.findall(text)]
    return any(number is not None and abs(number - value) <= share * abs(value) for number in numbers)


_NUMBER_TOKEN = re.compile(r"[0-9]+(?:[.,][0-9]+)*")
_FRACTION = re.compile(r"(?<![0-9])[0-9]++\s*+/\s*+[0-9]++")  # possessive: linear on "4444…"


def _fraction(text: str) -> Fraction | None:
    """``2/3`` as a number, for a part of a fact's answer."""
    match = re.fullmatch(r"\s*([0-9]+)\s*/\s*([1-9][0-9]*)\s*", text)
    return Fraction(int(match[1]), int(match[2])) if match else None


def _plain_spelling(text: str, candidates: list[str], language: str) -> str | None:
    """The candidate ``text`` is, typed without the language's own letters (``cift yonlu``), or None."""
    if not folds_letters(language):
        return None
    typed = fold_letters(_text_key(text, language), language)
    return next((c for c in candidates if typed == fold_letters(_text_key(c, language), language)), None)


def _spelling(expected: str, spelled: str) -> Verdict:
    """Right, typed without Turkish letters: accepted one grade below perfect, with the spelling."""
    return Verdict(True, NEAR_MISS, _("Right, typed without Turkish letters"), expected,
                   note=_("Spelling: {text}").format(text=spelled))


def _exact(text: str, candidates: list[str], language: str) -> bool:
    for fold in _foldings(language):
        typed = _text_key(text, fold)
        if typed and any(typed == _text_key(c, fold) for c in candidates):
            return True
    return False


def _near_miss(text: str, candidates: list[str], language: str) -> str | None:
    """The diff to the first candidate one typo away, or None."""
    for fold in _foldings(language):
        typed = _text_key(text, fold)
        for candidate in candidates:
            edit = _typo(typed, _text_key(candidate, fold))
            if edit is not None:
                return _diff(typed, *edit)
    return None


def _typo(typed: str, expected: str) -> tuple[int, str, str] | None:
    """The single edit turning ``typed`` into ``expected``: (where, typed part, expected part).

    One substitution, insertion, deletion or swap of neighbours (Damerau-Levenshtein
    distance 1), found in linear time. None when the texts are equal, further apart,
    shorter than NEAR_MISS_LENGTH, or when the edit touches a digit.
    """
    if typed == expected or abs(len(typed) - len(expected)) > 1:
        return None
    if min(len(typed), len(expected)) < NEAR_MISS_LENGTH:
        return None
    at = next((i for i, (a, b) in enumerate(zip(typed, expected)) if a != b), min(len(typed), len(expected)))
    edit = None
    if len(typed) == len(expected):
        if typed[at + 1:] == expected[at + 1:]:
            edit = (at, typed[at], expected[at])
        elif typed[at:at + 2] == expected[at:at + 2][::-1] and typed[at + 2:] == expected[at + 2:]:
            edit = (at, typed[at:at + 2], expected[at:at + 2])  # neighbours swapped
    elif len(typed) > len(expected):
        if typed[at + 1:] == expected[at:]:
            edit = (at, typed[at], "")
    elif typed[at:] == expected[at + 1:]:
        edit = (at, "", expected[at])
    if edit is None or any(ch.isdigit() for ch in edit[1] + edit[2]):
        return None
    return edit


def _diff(typed: str, at: int, removed: str, inserted: str) -> str:
    """``transfor[+m]er``, ``encdoer`` -> ``enc[do→od]er``: the typed text with its one edit marked."""
    before, after = typed[:at], typed[at + len(removed):]
    if len(before) > DIFF_CONTEXT:
        before = "…" + before[-DIFF_CONTEXT:]
    if len(after) > DIFF_CONTEXT:
        after = after[:DIFF_CONTEXT] + "…"
    removed, inserted = removed.replace(" ", "␣"), inserted.replace(" ", "␣")
    if removed and inserted:
        edit = f"[{removed}→{inserted}]"
    else:
        edit = f"[-{removed}]" if removed else f"[+{inserted}]"
    return before + edit + after


def _grade_choice(card: ChoiceCard, text: str, language: str, expected: str) -> Verdict:
    """By number (``4``), letter (``d``) or meaning; a number or letter wins over an option's text.

    A number or letter that names no option is asked again, never graded: a number past the options
    (``7``, ``1234``, ``110 million``, ``four`` of three) too, unless it is an option's value.
    """
    options: tuple[str, ...] = _in_language(card.options, language, ())
    picked = _option_index(text, language)
    if picked is not None and options and 0 <= picked < len(options):
        return _right(expected) if picked == card.correct else _wrong(expected)
    if picked is None or not options:
        verdict = _grade_meaning(text, options, card.correct, language, expected)
        if verdict.correct or verdict.retry or not options or _typed_number(text, language) is None:
            return verdict
    return _by_value(card, text, options, language, expected)


def _by_value(card: ChoiceCard, text: str, options: tuple[str, ...], language: str, expected: str) -> Verdict:
    """A number or letter that named no option by its place or its text: the option of that value ("12" of the
    options 12, 100 and 3,072; "one hundred" for "100"), else none, and the learner is asked again."""
    typed = _typed_number(text, language)
    values = [_typed_number(option, language) for option in options]
    if typed is not None and typed in values:
        return _right(expected) if values.index(typed) == card.correct else _wrong(expected)
    return _no_such_option(expected, len(options))


def _typed_number(text: str, language: str) -> Fraction | None:
    """``text`` read as a number, in digits or in the language's words; None if it is not one."""
    number = parse_number(text, language)
    if number is None and (spelled := parse_words(text, language)) is not None:
        number = Fraction(spelled)
    return number


def _no_such_option(expected: str, count: int) -> Verdict:
    return Verdict(False, WRONG, _("No such option: choose 1 to {last} or a to {letter}").format(
        last=count, letter=_LETTERS[count - 1]), expected, retry=True)


def _grade_meaning(text: str, options: tuple[str, ...], correct: int, language: str, expected: str) -> Verdict:
    """An option named by its text, ignoring case, articles, punctuation and spacing.

    A typo inside a word stays a typo (a near miss, unless it is as close to another option); an
    option typed without Turkish letters is right with a spelling note.
    """
    keys = [choice_key(normalise_text(option, language), language) for option in options]
    typed = choice_key(normalise_text(text, language), language)
    named = [i for i, key in enumerate(keys) if key == typed]
    if len(named) == 1:
        return _right(expected) if named[0] == correct else _wrong(expected)
    if folds_letters(language):
        plain = fold_letters(typed, language)
        named = [i for i, key in enumerate(keys) if fold_letters(key, language) == plain]
        if len(named) == 1:
            return _spelling(expected, options[correct]) if named[0] == correct else _wrong(expected)
    # An option named by its first words, its distinctive ones ("bidirectional" for "A bidirectional
    # encoder; no causal mask"); never by later words alone, which may drop a "no" ("causal mask").
    words = fold_letters(typed, language).split()
    opening = [i for i, key in enumerate(keys) if words and len(key.split()) > len(words)
               and all(same_word(t, w, language) for t, w in zip(words, fold_letters(key, language).split()))]
    if len(opening) == 1:
        if opening[0] != correct:
            return _wrong(expected)
        as_typed = all(same_word(t, w, language) for t, w in zip(typed.split(), keys[correct].split()))
        return _right(expected) if as_typed else _spelling(expected, options[correct])  # CIFT YONLU: a note
    if len(opening) > 1:
        return Verdict(False, WRONG, _("Several options begin so: type more of the one you mean"), expected,
                       retry=True)
    near = [i for i, key in enumerate(keys) if _typo(typed, key) is not None]
    if near == [correct]:
        edit = _typo(typed, keys[correct])
        assert edit is not None
        return Verdict(True, NEAR_MISS, _("Almost: one typo"), expected, _diff(typed, *edit))
    return _wrong(expected)  # no option, or one typo from a wrong option too: no telling which was meant


def _option_index(text: str, language: str) -> int | None:
    key = normalise_text(text, language).strip("()[].: ")  # "d)", "(4)", "4."
    if _DIGITS.fullmatch(key) and len(key) <= 3:
        return int(key) - 1
    key = "i" if key == "ı" else key
    if len(key) == 1 and key.isalpha() and key.isascii():
        return ord(key) - ord("a")
    return None


def _grade_blank(card: BlankCard, text: str, language: str, expected: str,
                 diagnoser: Diagnoser | None = None) -> Verdict:
    """The fill as typed or in words, anything that fills the blank equally, or an equal right-hand side."""
    spelled = parse_words(text, language)
    if spelled is not None:
        text = str(spelled)  # "four", "dört": the number they spell
    if _text_key(text, language) == _text_key(card.fill, language):
        return _right(expected)
    envs = card.check_envs or ({},)
    code = card.code[language]
    want = _values(filled_expression(code, card.fill), envs)
    if want is None:  # the blank is prose, not arithmetic: compare as text
        return _grade_text(text, [card.fill], language, expected)
    if (unknown := _unknown_name(text.rsplit("=", 1)[-1], card.allowed)) is not None:
        return _unread(expected, unknown)  # "embeddings / d": a formula's name does the work asked for
    if _agrees(filled_expression(code, text), want, envs):
        return _right(expected)
    side = _expression(text.rsplit("=", 1)[-1])  # "dikkat = 4*d*d + 4*d" or just its right side
    if side is not None and _agrees(side.source, want, envs):
        return _right(expected)
    verdict = _wrong(expected)
    if diagnoser is None:
        return verdict
    return _diagnosed_blank(verdict, card, side.source if side is not None else filled_expression(code, text),
                            text, language, diagnoser)


def _diagnosed_blank(verdict: Verdict, card: BlankCard, source: str, text: str, language: str,
                     diagnoser: Diagnoser) -> Verdict:
    """A wrong fill named by what it makes of the formula on every parameter set (``4*d*d``: no biases)."""
    sets = diagnoser.params
    try:
        parsed = formula.parse(_as_formula(source))
    except FormulaError:
        return verdict
    values: dict[str, Number] = {}
    for set_name, (_title, params) in sets.items():
        value = _evaluate(parsed, params)
        if value is None:
            return verdict
        values[set_name] = value
    found = diagnoser.diagnose_everywhere(values, name=card.checks or None)
    if found is None:
        return verdict
    return replace(verdict, note=describe(found, shown=text, expected_name=card.checks or None,
                                          names=diagnoser.named(language)))


def _grade_match(card: MatchCard, text: str, language: str, expected: str,
                 diagnoser: Diagnoser | None) -> Verdict:
    """A table's value for the term: the value itself, or its option's number or letter.

    A value of the table wins over an option number (``12`` layers is 12, not option 12); an option
    number or letter that names none is asked again.
    """
    options: tuple[str, ...] = _in_language(card.options, language, ())
    if card.value is not None:
        read = _read_number(text, card.env, language)
        values = [parse_number(option, language) for option in options]
        if isinstance(read, _Number) and read.value in values:
            shown = read.value == parse_number(expected, language)  # a value with no end, as shown
            return _right(expected) if read.value == card.value or shown else _diagnosed(_wrong(expected), card, text,
                                                                                   language, diagnoser)
    picked = _option_index(text, language)
    if picked is not None and options and (card.value is None or not text[:1].isdigit() or picked < len(options)):
        # a number past the options is a number answer, a letter past them names nothing
        if not 0 <= picked < len(options):
            return _no_such_option(expected, len(options))
        return _right(expected) if options[picked] == expected else _wrong(expected)
    if card.value is not None:
        return _diagnosed(_grade_number(card.value, Fraction(0), card.env, text, language, expected),
                          card, text, language, diagnoser)
    return _grade_text(text, [expected], language, expected)


def _unknown_name(text: str, allowed: frozenset[str]) -> str | None:
    """What is wrong with a typed expression that names something beyond ``allowed`` (a formula), or None."""
    try:
        parsed = formula.parse(_as_formula(text))
    except FormulaError:
        return None
    others = sorted(parsed.names - allowed)
    return formula.unknown_name_message(others[0], allowed) if others else None


def _values(source: str, envs: Iterable[Mapping[str, Number]]) -> list[Number | None] | None:
    """``source``'s value in each env (None where it fails), or None if it fails in all."""
    try:
        parsed = formula.parse(_as_formula(source))
    except FormulaError:
        return None
    values = [_evaluate(parsed, env) for env in envs]
    return values if any(v is not None for v in values) else None


def _agrees(source: str, want: list[Number | None], envs: Iterable[Mapping[str, Number]]) -> bool:
    got = _values(source, envs)
    if got is None:
        return False
    return all(g == w for g, w in zip(got, want) if w is not None)


def _grade_output(card: PracticeCard, text: str, expected: str) -> Verdict:
    """Printed output, line by line with spaces normalised; one line of all the numbers also counts."""
    typed = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    want = [" ".join(line.split()) for line in card.expected_output]
    if typed == want:
        return _right(expected)
    if len(typed) == 1 and typed[0].split() == " ".join(want).split():
        return _right(expected)
    if len(typed) != len(want):
        return _wrong(expected, f"{len(want)} lines expected, {len(typed)} given")
    first = next(i for i, (t, w) in enumerate(zip(typed, want)) if t != w)
    return _wrong(expected, f"line {first + 1} differs")
