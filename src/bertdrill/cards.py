"""Compile a verified :class:`~bertdrill.lesson.Lesson` into cards.

A card is one thing a learner answers. Its id is built from the lesson id,
the item id and, where one item gives several cards, the parameter set or the
pair: ``bert-basics/embedding-params@bert-large``, ``bert-basics/bert-base-match#layers``.
Text and language are never part of it, so fixing a typo or reviewing in
Turkish keeps the learner's progress and the Anki note.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from . import formula
from .errors import FormulaError
from .formula import Number
from .lesson import Item, Lesson, Text, grouping

# Synthetic parameter values for comparing expressions beyond the lesson's own sets:
# distinct primes, so `4*d*d + 4*d` and `4 * (d * d + d)` agree only when they truly are equal.
_PRIMES = (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73)

# One encoder for every fingerprint: json.dumps builds a new one per call when given options.
# Same output as json.dumps(shown, sort_keys=True, ensure_ascii=False), so stored fingerprints stay valid.
_FINGERPRINT_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, check_circular=False)


@dataclass(frozen=True)
class Card:
    id: str  # "bert-basics/embedding-params@bert-large": stable, language-free
    lesson_id: str
    item_id: str
    kind: str  # fact | choice | blank | numeric | match | practice
    prompt: Text  # per language, placeholders filled
    answer: Text  # per language, the answer as shown
    explanation: Text = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    accept: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # more accepted answers
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # choice
    correct: int | None = None  # choice: 0-based index into options
    code: str = ""  # blank: the text with ____; practice: the starter code
    fill: str = ""  # blank: what goes in the blank
    term: Text = field(default_factory=dict)  # match: the pair's term
    value: Number | None = None  # numeric, computed match meaning: the verified value
    tolerance: Fraction = Fraction(0)  # numeric: relative tolerance
    set_name: str | None = None  # numeric, match, practice: the parameter set
    set_title: str | None = None
    env: Mapping[str, Number] = field(default_factory=dict)  # every name's value in the card's set
    check_envs: tuple[Mapping[str, Number], ...] = ()  # blank: sets to compare expressions over
    expected_output: tuple[str, ...] = ()  # practice: the lines a correct script prints
    solution: str = ""  # practice: the lesson's sample solution
    source: Text = field(default_factory=dict)
    line: int = 0  # where the item starts in the lesson file

    @property
    def key(self) -> str:
        """The id without the lesson: ``embedding-params@bert-large``."""
        return self.id.split("/", 1)[1]

    def question(self, language: str) -> str:
        """The full question as plain text: the prompt plus the code or the term it asks about."""
        prompt = self.prompt[language]
        if self.kind == "blank":
            return f"{prompt}\n{self.code}"
        if self.kind == "match":
            return f"{prompt}\n{self.term[language]} → ?"
        return prompt

    @property
    def fingerprint(self) -> str:
        """A hash of everything shown, so stores and exports can tell when a card's text changed."""
        shown = [self.kind, self.prompt, self.answer, self.explanation, self.options, self.code,
                 self.term, self.accept, list(self.expected_output), self.tags]
        return hashlib.sha256(_FINGERPRINT_JSON.encode(shown).encode()).hexdigest()[:16]


def compile_lesson(lesson: Lesson) -> list[Card]:
    """Every card of a lesson, in lesson order."""
    blank_envs = tuple([lesson.values(name) for name in lesson.params] + _synthetic_envs(lesson))
    cards: list[Card] = []
    for item in lesson.items:
        if item.kind == "blank":
            cards.extend(_blank(lesson, item, blank_envs))
        else:
            cards.extend(_COMPILERS[item.kind](lesson, item))
    return cards


def _texts(lesson: Lesson, texts: Text, set_name: str | None = None) -> dict[str, str]:
    return {lang: lesson.render(text, lang, set_name) for lang, text in texts.items()}


def _base(lesson: Lesson, item: Item, key: str, set_name: str | None = None) -> dict:
    return dict(
        id=f"{lesson.id}/{key}",
        lesson_id=lesson.id,
        item_id=item.id,
        kind=item.kind,
        prompt=_texts(lesson, item.prompt, set_name),
        explanation=_texts(lesson, item.explanation, set_name),
        tags=item.tags,
        accept=item.accept,
        source=lesson.source,
        line=item.line,
        set_name=set_name,
        set_title=lesson.params[set_name].title if set_name else None,
        env=lesson.values(set_name) if set_name else {},
    )


def _number_texts(lesson: Lesson, value: Number) -> dict[str, str]:
    return {lang: formula.format_number(value, grouping=grouping(lang)) for lang in lesson.languages}


def _fact(lesson: Lesson, item: Item) -> list[Card]:
    return [Card(**_base(lesson, item, item.id), answer=_texts(lesson, item.answer))]


def _choice(lesson: Lesson, item: Item) -> list[Card]:
    options = {lang: tuple(_texts(lesson, {lang: o})[lang] for o in opts) for lang, opts in item.options.items()}
    answer = {lang: opts[item.correct] for lang, opts in options.items()}
    return [Card(**_base(lesson, item, item.id), answer=answer, options=options, correct=item.correct)]


def _blank(lesson: Lesson, item: Item, envs: tuple[Mapping[str, Number], ...]) -> list[Card]:
    answer = {lang: item.text.replace("____", item.fill) for lang in lesson.languages}
    return [Card(**_base(lesson, item, item.id), answer=answer, code=item.text, fill=item.fill,
                 check_envs=envs)]


def _numeric(lesson: Lesson, item: Item) -> list[Card]:
    cards = []
    for set_name in item.sets:
        value = lesson.evaluate(item.formula, set_name)
        cards.append(Card(**_base(lesson, item, f"{item.id}@{set_name}", set_name),
                          answer=_number_texts(lesson, value), value=value, tolerance=item.tolerance))
    return cards


def _match(lesson: Lesson, item: Item) -> list[Card]:
    set_name = item.sets[0]
    cards = []
    for pair in item.pairs:
        value = lesson.evaluate(pair.value, set_name) if pair.value else None
        answer = _number_texts(lesson, value) if value is not None else _texts(lesson, pair.meaning, set_name)
        base = _base(lesson, item, f"{item.id}#{pair.id}", set_name)
        base["tags"] += (f"table:{item.id}",)
        cards.append(Card(**base, answer=answer, term=_texts(lesson, pair.term, set_name), value=value))
    return cards


def _practice(lesson: Lesson, item: Item) -> list[Card]:
    set_name = item.sets[0]
    output = tuple(" ".join(formula.format_number(lesson.evaluate(e, set_name)) for e in line) for line in item.expected)
    answer = {lang: "\n".join(output) for lang in lesson.languages}
    return [Card(**_base(lesson, item, item.id, set_name), answer=answer, code=item.text.strip("\n") + "\n",
                 expected_output=output, solution=item.solution.strip("\n") + "\n")]


_COMPILERS = {"fact": _fact, "choice": _choice, "numeric": _numeric, "match": _match, "practice": _practice}


def _synthetic_envs(lesson: Lesson, count: int = 3) -> list[Mapping[str, Number]]:
    """Parameter sets of distinct primes, resolved through the lesson's formulas.

    A set where some formula cannot be evaluated (a division by zero, say) is skipped.
    """
    names = sorted({name for s in lesson.params.values() for name in s.values})
    envs = []
    for shift in range(count):
        params = {name: _PRIMES[(i + 7 * shift) % len(_PRIMES)] for i, name in enumerate(names)}
        try:
            envs.append(formula.resolve(params, lesson.formulas))
        except FormulaError:
            continue
    return envs
