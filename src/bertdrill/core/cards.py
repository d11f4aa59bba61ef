"""Compile a verified :class:`~bertdrill.core.lesson.Lesson` into cards.

A card is one thing a learner answers. Its id is built from the lesson id,
the item id and, where one item gives several cards, the parameter set or the
pair: ``bert-basics/embedding-params@bert-large``, ``bert-basics/bert-base-match#layers``.
Text and language are never part of it, so fixing a typo or reviewing in
Turkish keeps the learner's progress and the Anki note.
"""

from __future__ import annotations

import functools
import hashlib
import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal, TypedDict, assert_never, cast

from bertdrill.core import formula
from bertdrill.core.errors import FormulaError
from bertdrill.core.formula import Number
from bertdrill.core.kinds import Kind
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
    Text,
)
from bertdrill.core.numbers import format_number

# Synthetic parameter values for comparing expressions beyond the lesson's own sets:
# distinct primes, so `4*d*d + 4*d` and `4 * (d * d + d)` agree only when they truly are equal.
_PRIMES = (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73)

# One encoder for every fingerprint: json.dumps builds a new one per call when given options.
# Same output as json.dumps(shown, sort_keys=True, ensure_ascii=False), so stored fingerprints stay valid.
_FINGERPRINT_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, check_circular=False)


@dataclass(frozen=True, kw_only=True)
class CardBase:
    """What every card has; each kind adds its own fields below."""

    id: str  # "bert-basics/embedding-params@bert-large": stable, language-free
    lesson_id: str
    item_id: str
    prompt: Text  # per language, placeholders filled
    answer: Text  # per language, the answer as shown
    explanation: Text = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    accept: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # more accepted answers
    source: Text = field(default_factory=dict)
    cited: Text = field(default_factory=dict)  # the item's own source (a paper), shown with its answer
    line: int = 0  # where the item starts in the lesson file

    @property
    def key(self) -> str:
        """The id without the lesson: ``embedding-params@bert-large``."""
        return self.id.split("/", 1)[1]

    def question(self, language: str) -> str:
        """The full question as plain text: the prompt plus the code or the term it asks about."""
        return question_text(cast("Card", self), language)

    @property
    def fingerprint(self) -> str:
        """A hash of everything shown, so stores and exports can tell when a card's text changed."""
        return fingerprint(cast("Card", self))


@dataclass(frozen=True, kw_only=True)
class SetCard(CardBase):
    """A card asked about one parameter set."""

    set_name: str
    set_title: str
    env: Mapping[str, Number]  # the set's parameters: all a typed expression may use (never a formula's name)


@dataclass(frozen=True, kw_only=True)
class FactCard(CardBase):
    parts: Mapping[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)  # see FactItem.parts

    @property
    def kind(self) -> Literal[Kind.FACT]:
        return Kind.FACT


@dataclass(frozen=True, kw_only=True)
class ChoiceCard(CardBase):
    options: Mapping[str, tuple[str, ...]]
    correct: int  # 0-based index into options

    @property
    def kind(self) -> Literal[Kind.CHOICE]:
        return Kind.CHOICE


@dataclass(frozen=True, kw_only=True)
class BlankCard(CardBase):
    code: Text  # the text with ____, per language
    fill: str  # what goes in the blank
    check_envs: tuple[Mapping[str, Number], ...] = ()  # sets to compare expressions over
    allowed: frozenset[str] = frozenset()  # names a typed fill may use: the parameters, and the fill's own
    checks: str = ""  # the formula the filled text equals: what a wrong fill is diagnosed against

    @property
    def kind(self) -> Literal[Kind.BLANK]:
        return Kind.BLANK


@dataclass(frozen=True, kw_only=True)
class NumericCard(SetCard):
    value: Number  # the verified value
    tolerance: Fraction = Fraction(0)  # relative
    formula: str = ""  # the expression it is the value of: what a wrong number is diagnosed against
    definition: str = ""  # that expression with a formula's name replaced by its definition: "d / h"
    variant: str = ""  # asked with a fresh variant's numbers: its key ("d=512,f=2048,n=6,h=8"); "": its own set
    seed: int | None = None  # the seed that drew the variant (core.variants.draw)

    @property
    def kind(self) -> Literal[Kind.NUMERIC]:
        return Kind.NUMERIC


@dataclass(frozen=True, kw_only=True)
class MatchCard(SetCard):
    term: Text  # the pair's term
    value: Number | None = None  # the verified value, when the meaning is computed
    formula: str | None = None  # the expression of a computed value ("n")
    phrased: Text = field(default_factory=dict)  # the pair as a question: "BERT-base: how many layers?"
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # every value of the table, sorted

    @property
    def kind(self) -> Literal[Kind.MATCH]:
        return Kind.MATCH


@dataclass(frozen=True, kw_only=True)
class PracticeCard(SetCard):
    code: Text  # the starter code, per language
    expected_output: tuple[str, ...]  # the lines a correct script prints
    solution: Text  # the lesson's sample solution, per language
    expected_expressions: tuple[tuple[str, ...], ...] = ()  # what each expected number is: `embeddings`, `total`

    @property
    def kind(self) -> Literal[Kind.PRACTICE]:
        return Kind.PRACTICE


Card = FactCard | ChoiceCard | BlankCard | NumericCard | MatchCard | PracticeCard


def question_text(card: Card, language: str) -> str:
    """The full question as plain text: the prompt plus the code or the term it asks about."""
    prompt = card.prompt[language]
    match card:
        case BlankCard():
            return f"{prompt}\n{card.code[language]}"
        case MatchCard():
            return f"{prompt}\n{card.term[language]} → ?"
        case FactCard() | ChoiceCard() | NumericCard() | PracticeCard():
            return prompt
        case _:
            assert_never(card)


def giveaways(card: Card) -> list[tuple[str, str]]:
    """Where a card's prompt contains its own answer: (language, the words that give it away).

    ``Count attention's four projections`` asks for 4 and says it. ``bertdrill check`` reports each as a
    warning (``--strict``: an error). Number answers are found as digits or number words, text
    answers (and accepted alternatives) as whole words.
    """
    from bertdrill.core.textmatch import gives_away

    found = []
    for language, prompt in card.prompt.items():
        answers: list[str] = []
        asked = prompt
        match card:
            case FactCard():
                answers = [card.answer.get(language, ""), *card.accept.get(language, ())]
            case ChoiceCard():
                answers = [card.answer.get(language, "")]
            case BlankCard():
                answers = [card.fill]
            case NumericCard():
                answers = [card.answer.get(language, ""), str(card.value)]
            case MatchCard():
                answers = [card.answer.get(language, "")]
                asked = f"{prompt} {card.phrased.get(language, '')}"
            case PracticeCard():
                continue  # the exercise's output is computed by the learner's program, not named in prose
            case _:
                assert_never(card)
        words = gives_away(asked, [answer for answer in answers if answer], language)
        if words is not None:
            found.append((language, words))
    return found


def fingerprint(card: Card) -> str:
    """A hash of everything shown. Fields a kind lacks hash as empty, so stored fingerprints stay valid."""
    options: Mapping[str, tuple[str, ...]] = {}
    code: str | Text = ""
    term: Text = {}
    expected: list[str] = []
    match card:
        case FactCard() | NumericCard():
            pass
        case ChoiceCard():
            options = card.options
        case BlankCard():
            code = _one_or_all(card.code)
        case MatchCard():
            term = card.term
        case PracticeCard():
            code, expected = _one_or_all(card.code), list(card.expected_output)
        case _:
            assert_never(card)
    shown = [card.kind, card.prompt, card.answer, card.explanation, options, code, term, card.accept, expected,
             card.tags]
    if isinstance(card, MatchCard) and card.phrased:
        shown.append(card.phrased)  # only when there is one: fingerprints stored before stay valid
    return hashlib.sha256(_FINGERPRINT_JSON.encode(shown).encode()).hexdigest()[:16]


def _one_or_all(texts: Text) -> str | Text:
    """Code the same in every language hashes as that one text: fingerprints stored before stay valid."""
    distinct = set(texts.values())
    return distinct.pop() if len(distinct) == 1 else texts


def item_id_of(card_id: str) -> str:
    """The item a card id belongs to: ``bert-basics/embedding-params@bert-large`` -> ``embedding-params``.
    Lesson and item ids hold none of ``/``, ``@`` and ``#`` (``ID_PATTERN``), so the id says it exactly."""
    key = card_id.partition("/")[2]
    return key.partition("@")[0].partition("#")[0]


def compile_lesson(lesson: Lesson) -> list[Card]:
    """Every card of a lesson, in lesson order."""
    blank_envs = tuple([lesson.values(name) for name in lesson.params] + _synthetic_envs(lesson))
    parameters = _parameter_names(lesson)
    cards: list[Card] = []
    for item in lesson.items:
        match item:
            case FactItem():
                cards.append(FactCard(**_base(lesson, item, item.id), answer=_texts(lesson, item.answer),
                                      parts=item.parts))
            case ChoiceItem():
                cards.append(_choice(lesson, item))
            case BlankItem():
                cards.append(_blank(lesson, item, blank_envs, parameters))
            case NumericItem():
                cards.extend(_numeric(lesson, item))
            case MatchItem():
                cards.extend(_match(lesson, item))
            case PracticeItem():
                cards.append(_practice(lesson, item))
            case _:
                assert_never(item)
    return cards


def _texts(lesson: Lesson, texts: Text, set_name: str | None = None) -> dict[str, str]:
    if not texts:
        return {}  # most items have no explanation: skip building the comprehension
    render = lesson.render
    return {lang: render(text, lang, set_name) for lang, text in texts.items()}


class BaseFields(TypedDict):
    """The fields of :class:`CardBase` a card of any kind is made with (typed: mypy checks them against each
    card's dataclass where they are passed on)."""

    id: str
    lesson_id: str
    item_id: str
    prompt: Text
    explanation: Text
    tags: tuple[str, ...]
    accept: Mapping[str, tuple[str, ...]]
    source: Text
    cited: Text
    line: int


class SetFields(BaseFields):
    """And those of :class:`SetCard`, for a card asked about one parameter set."""

    set_name: str
    set_title: str
    env: Mapping[str, Number]


def _base(lesson: Lesson, item: Item, key: str, set_name: str | None = None) -> BaseFields:
    return BaseFields(
        id=f"{lesson.id}/{key}",
        lesson_id=lesson.id,
        item_id=item.id,
        prompt=_texts(lesson, item.prompt, set_name),
        explanation=_texts(lesson, item.explanation, set_name),
        tags=item.tags,
        accept=item.accept,
        source=lesson.source,
        cited=item.source,
        line=item.line,
    )


def _in_set(lesson: Lesson, item: Item, key: str, set_name: str) -> SetFields:
    return SetFields(
        **_base(lesson, item, key, set_name),
        set_name=set_name,
        set_title=lesson.params[set_name].title,
        env=lesson.params[set_name].values,
    )


def _number_texts(lesson: Lesson, value: Number) -> dict[str, str]:
    return {lang: _shown_number(value, lang) for lang in lesson.languages}


@functools.lru_cache(maxsize=4096)  # a lesson shows the same few values on many cards (every set's total)
def _shown_number(value: Number, language: str) -> str:
    return format_number(value, language)


def _choice(lesson: Lesson, item: ChoiceItem) -> ChoiceCard:
    options = {lang: tuple(lesson.render(option, lang) for option in opts) for lang, opts in item.options.items()}
    answer = {lang: opts[item.correct] for lang, opts in options.items()}
    return ChoiceCard(**_base(lesson, item, item.id), answer=answer, options=options, correct=item.correct)


def _blank(lesson: Lesson, item: BlankItem, envs: tuple[Mapping[str, Number], ...],
           parameters: frozenset[str]) -> BlankCard:
    answer = {lang: item.text[lang].replace(BLANK, item.fill) for lang in lesson.languages}
    return BlankCard(**_base(lesson, item, item.id), answer=answer, code=item.text, fill=item.fill, check_envs=envs,
                     checks=item.checks, allowed=parameters | _names(item.fill))


def _numeric(lesson: Lesson, item: NumericItem) -> list[NumericCard]:
    return [numeric_card(lesson, item, set_name, f"{lesson.id}/{item.id}@{set_name}") for set_name in item.sets]


def numeric_card(lesson: Lesson, item: NumericItem, set_name: str, card_id: str) -> NumericCard:
    """The card asking ``item`` over one parameter set (a named one, or a variant added by ``with_variant``)."""
    value = lesson.evaluate(item.formula, set_name)
    return NumericCard(**_in_set(lesson, item, card_id.split("/", 1)[1], set_name),
                       answer=_number_texts(lesson, value), value=value, tolerance=item.tolerance,
                       formula=item.formula, definition=_definition(lesson, item.formula))


def _match(lesson: Lesson, item: MatchItem) -> list[MatchCard]:
    set_name = item.set_name
    values = [lesson.evaluate(pair.value, set_name) if pair.value else None for pair in item.pairs]
    answers = [_number_texts(lesson, value) if value is not None else _texts(lesson, pair.meaning or {}, set_name)
               for pair, value in zip(item.pairs, values)]
    options = {lang: _table_values([(answer.get(lang, ""), value) for answer, value in zip(answers, values)])
               for lang in lesson.languages}
    cards = []
    shared = _in_set(lesson, item, item.id, set_name)  # the table's prompt and tags: the same on every pair
    shared["tags"] += (f"table:{item.id}",)
    for pair, value, answer in zip(item.pairs, values, answers):
        base = shared.copy()
        base["id"] = f"{lesson.id}/{item.id}#{pair.id}"
        cards.append(MatchCard(**base, answer=answer, term=_texts(lesson, pair.term, set_name), value=value,
                               formula=pair.value, phrased=_texts(lesson, pair.question, set_name),
                               options=options))
    return cards


def _definition(lesson: Lesson, expression: str) -> str:
    """``head_size`` -> ``d / h``: what a formula's name stands for; any other expression as it is."""
    named = lesson.formulas.get(expression.strip())
    return named.source if named is not None else expression


def _table_values(shown: list[tuple[str, Number | None]]) -> tuple[str, ...]:
    """A table's values to choose from: numbers in increasing order, then texts alphabetically.

    Sorted, never in the table's order, so an option's position says nothing about its term.
    """
    numbers = sorted((value, text) for text, value in shown if value is not None)
    texts = sorted(text for text, value in shown if value is None)
    return tuple(dict.fromkeys([text for _value, text in numbers] + texts))


def _practice(lesson: Lesson, item: PracticeItem) -> PracticeCard:
    set_name = item.set_name
    output = tuple(" ".join(formula.format_number(lesson.evaluate(e, set_name)) for e in line) for line in item.expected)
    answer = {lang: "\n".join(output) for lang in lesson.languages}
    return PracticeCard(**_in_set(lesson, item, item.id, set_name), answer=answer,
                        code={lang: code.strip("\n") + "\n" for lang, code in item.starter.items()},
                        expected_output=output, expected_expressions=tuple(tuple(line) for line in item.expected),
                        solution={lang: code.strip("\n") + "\n" for lang, code in item.solution.items()})


def _parameter_names(lesson: Lesson) -> frozenset[str]:
    return frozenset(name for params in lesson.params.values() for name in params.values)


def _names(source: str) -> frozenset[str]:
    """The names an expression uses; none if it is not one (a blank of words)."""
    try:
        return formula.parse(source).names
    except FormulaError:
        return frozenset()


def _synthetic_envs(lesson: Lesson, count: int = 3) -> list[Mapping[str, Number]]:
    """Parameter sets of distinct primes, resolved through the lesson's formulas.

    A set where some formula cannot be evaluated (a division by zero, say) is skipped.
    """
    names = sorted({name for s in lesson.params.values() for name in s.values})
    envs: list[Mapping[str, Number]] = []
    for shift in range(count):
        params = {name: _PRIMES[(i + 7 * shift) % len(_PRIMES)] for i, name in enumerate(names)}
        try:
            envs.append(formula.resolve(params, lesson.formulas))
        except FormulaError:
            continue
    return envs


def search(cards: Sequence[Card], query: str) -> list[Card]:
    """The cards every word of ``query`` is found in: in the card's id, or in its question, answer or explanation
    in any of its languages (``bertdrill cards --search``). Case, accents of the dotted and dotless i
    (``İ``, ``ı``: a Turkish keyboard), and punctuation around words do not matter; a word may be part of one
    (``d_model`` finds ``d_model``, ``embed`` finds ``embeddings``)."""
    words = [word for word in (_folded(part).strip(".,;:!?()\"'") for part in query.split()) if word]
    found = []
    for card in cards:
        texts = [card.id, *(card.question(language) for language in card.prompt),
                 *card.answer.values(), *card.explanation.values()]
        haystack = _folded("\n".join(texts))
        if all(word in haystack for word in words):
            found.append(card)
    return found


def _folded(text: str) -> str:
    return unicodedata.normalize("NFC", text.replace("İ", "i").replace("ı", "i")).casefold()
