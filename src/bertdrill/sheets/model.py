"""What goes on a quiz sheet: the seeded choice and shuffling of questions, no I/O.

A :class:`Sheet` holds one or more versions (A, B, ...) of the same questions
in one language. Everything random comes from :class:`random.Random` seeded
with a string built from the seed and the version letter, so the same seed
and lessons give the same sheet on every machine and every run (string seeds
are hashed with SHA-512, not with Python's per-process hash).

Per version the question order, the option order and the matching column are
shuffled, and a numeric question asks about the next parameter set of its
item (version A about BERT-base, B about BERT-large, ...). Every answer comes
from the compiled cards, whose numbers were computed by the lesson's formulas.
The renderers (html, markdown, gift, pdf) only lay this model out.
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import groupby
from typing import Any, TypeVar, assert_never

from .. import formula
from ..cards import BlankCard, Card, ChoiceCard, FactCard, MatchCard, NumericCard, PracticeCard, compile_lesson
from ..errors import BertdrillError
from ..formula import Number
from ..kinds import Kind
from ..languages import LANGUAGES, SheetLabels
from ..lesson import BlankItem, ChoiceItem, FactItem, Item, Lesson, MatchItem, NumericItem, PracticeItem
from ..numbers import format_number

KINDS: tuple[Kind, ...] = tuple(Kind)
# Practice items are programming exercises: long, not markable at a glance,
# and a page each on paper. Teachers ask for them by name (--kinds practice).
DEFAULT_KINDS: tuple[Kind, ...] = tuple(kind for kind in Kind if kind is not Kind.PRACTICE)
_C = TypeVar("_C", FactCard, ChoiceCard, BlankCard, NumericCard, MatchCard, PracticeCard)


def points(kind: Kind) -> int:
    """What a question of ``kind`` is worth; a match table is worth one point per row instead."""
    match kind:
        case Kind.CHOICE | Kind.BLANK | Kind.MATCH:
            return 1
        case Kind.FACT | Kind.NUMERIC:
            return 2
        case Kind.PRACTICE:
            return 4
        case _:
            assert_never(kind)
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_VERSIONS = len(LETTERS)


Labels = SheetLabels
LABELS: dict[str, SheetLabels] = {code: entry.sheet for code, entry in LANGUAGES.items() if entry.sheet is not None}
"""The languages a sheet's own words are written in; any other sheet language gets the English ones."""


@dataclass(frozen=True)
class Question:
    """One question as printed, with its answer. Fields a kind does not use stay empty."""

    number: int  # 1-based position on the sheet
    id: str  # the card id; a match table's item id (bert-basics/bert-base-match)
    kind: Kind
    prompt: str
    points: int
    answer: str  # the answer as the key shows it
    explanation: str = ""
    code: str = ""  # blank: the text with ____; practice: the starter code
    set_title: str = ""  # numeric: the parameter set asked about
    given: tuple[tuple[str, str], ...] = ()  # numeric: the parameters the student needs, formatted
    choices: tuple[str, ...] = ()  # choice: the options in sheet order; match: the right column
    correct: tuple[int, ...] = ()  # choice: the right option's index; match: one index per row
    rows: tuple[str, ...] = ()  # match: the terms, in lesson order
    accept: tuple[str, ...] = ()  # fact, blank: other answers to accept
    value: Number | None = None  # numeric: the exact value
    tolerance: Fraction = Fraction(0)  # numeric: relative
    solution: str = ""  # practice: the lesson's sample solution


@dataclass(frozen=True)
class Version:
    letter: str
    questions: tuple[Question, ...]

    @property
    def points(self) -> int:
        return sum(question.points for question in self.questions)


@dataclass(frozen=True)
class Sheet:
    title: str
    language: str
    seed: int
    labels: Labels
    versions: tuple[Version, ...]
    bank: tuple[Question, ...] = ()  # every chosen question once, unshuffled (for an LMS)


@dataclass(frozen=True)
class _Entry:
    """One item of a lesson with its compiled cards: the unit a sheet chooses."""

    lesson: Lesson
    item: Item
    cards: tuple[Card, ...]


def parse_kinds(text: str | None) -> tuple[Kind, ...]:
    """``"choice, blank"`` -> ("choice", "blank"); None -> the default kinds."""
    if text is None:
        return DEFAULT_KINDS
    kinds = [word for word in re.split(r"[\s,]+", text.strip().lower()) if word]
    if not kinds:
        raise BertdrillError(f"--kinds: name at least one kind ({', '.join(KINDS)})")
    for kind in kinds:
        if kind not in KINDS:
            close = difflib.get_close_matches(kind, [str(known) for known in KINDS], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise BertdrillError(f"--kinds: unknown kind {kind!r}{hint} (kinds: {', '.join(KINDS)})")
    return tuple(dict.fromkeys(Kind(kind) for kind in kinds))


def build_sheet(
    lessons: Sequence[Lesson],
    *,
    language: str,
    seed: int,
    versions: int = 1,
    count: int | None = None,
    kinds: Iterable[Kind] = DEFAULT_KINDS,
    items: Collection[tuple[str, str]] | None = None,
    title: str | None = None,
    given: bool = False,
) -> Sheet:
    """Choose the questions once, then shuffle them into ``versions`` versions.

    ``given`` prints the parameter values a numeric question needs. It is off
    by default because it would hand out the settings that the lesson's fact
    and matching questions ask for.
    """
    if not 1 <= versions <= MAX_VERSIONS:
        raise BertdrillError(f"--versions must be from 1 to {MAX_VERSIONS}, not {versions}")
    for lesson in lessons:
        if language not in lesson.languages:
            raise BertdrillError(f"lesson {lesson.id!r} has no {language!r} texts "
                                 f"(its languages: {', '.join(lesson.languages)})")
    kinds = tuple(kinds)
    pool = [entry for lesson in lessons for entry in _entries(lesson) if entry.item.kind in kinds
            and (items is None or (lesson.id, entry.item.id) in items)]  # items: (lesson id, item id), e.g. --from-class
    if not pool:
        raise BertdrillError(f"no questions of the kinds {', '.join(kinds)} in the chosen lessons")
    if count is not None and not 1 <= count <= len(pool):
        raise BertdrillError(f"--count {count}: the lessons have {len(pool)} questions "
                             f"of the kinds {', '.join(kinds)}; ask for 1 to {len(pool)}")
    chosen = pool
    if count is not None:
        picked = random.Random(f"bertdrill-sheet:{seed}:choice").sample(range(len(pool)), count)
        chosen = [pool[index] for index in sorted(picked)]
    shuffled = tuple(_version(index, chosen, language, seed, given) for index in range(versions))
    bank = tuple(_bank(chosen, language, given))
    return Sheet(
        title=title if title is not None else " · ".join(lesson.title[language] for lesson in lessons),
        language=language,
        seed=seed,
        labels=LABELS.get(language, LABELS["en"]),
        versions=shuffled,
        bank=bank,
    )


def _entries(lesson: Lesson) -> list[_Entry]:
    cards = compile_lesson(lesson)  # in lesson order, an item's cards side by side
    by_item = {item_id: tuple(group) for item_id, group in groupby(cards, key=lambda card: card.item_id)}
    return [_Entry(lesson, item, by_item[item.id]) for item in lesson.items]


def _version(index: int, chosen: list[_Entry], language: str, seed: int, given: bool) -> Version:
    name = letter(index)
    rng = random.Random(f"bertdrill-sheet:{seed}:{name}")
    order = list(chosen)
    rng.shuffle(order)
    return Version(name, tuple(_question(entry, _Context(number, language, rng, index, given))
                               for number, entry in enumerate(order, start=1)))


def _bank(chosen: list[_Entry], language: str, given: bool) -> list[Question]:
    """Every chosen question in lesson order, options unshuffled, each numeric set its own question."""
    questions: list[Question] = []
    for entry in chosen:
        sets = range(len(entry.cards)) if isinstance(entry.item, NumericItem) else range(1)
        for set_index in sets:
            questions.append(_question(entry, _Context(len(questions) + 1, language, None, set_index, given)))
    return questions


@dataclass(frozen=True)
class _Context:
    number: int
    language: str
    rng: random.Random | None  # None keeps the lesson's own order of options and columns
    set_index: int  # numeric: which of the item's parameter sets to ask about
    given: bool


def _question(entry: _Entry, ctx: _Context) -> Question:
    item = entry.item
    match item:
        case FactItem():
            return _fact(_cards(entry, FactCard)[0], ctx)
        case ChoiceItem():
            return _choice(_cards(entry, ChoiceCard)[0], ctx)
        case BlankItem():
            return _blank(_cards(entry, BlankCard)[0], ctx)
        case NumericItem():
            return _numeric(entry, item, _cards(entry, NumericCard), ctx)
        case MatchItem():
            return _match(entry, _cards(entry, MatchCard), ctx)
        case PracticeItem():
            return _practice(_cards(entry, PracticeCard)[0], ctx)
        case _:
            assert_never(item)


def _cards(entry: _Entry, kind: type[_C]) -> list[_C]:
    """The entry's cards, as the card type its item's kind compiles to."""
    return [card for card in entry.cards if isinstance(card, kind)]


def _common(card: Card, ctx: _Context) -> dict[str, Any]:
    return dict(number=ctx.number, id=card.id, kind=card.kind, prompt=card.prompt[ctx.language],
                points=points(card.kind), explanation=card.explanation.get(ctx.language, ""))


def _fact(card: FactCard, ctx: _Context) -> Question:
    return Question(**_common(card, ctx), answer=card.answer[ctx.language],
                    accept=tuple(card.accept.get(ctx.language, ())))


def _choice(card: ChoiceCard, ctx: _Context) -> Question:
    options = card.options[ctx.language]
    order = list(range(len(options)))
    if ctx.rng is not None:
        ctx.rng.shuffle(order)
    return Question(**_common(card, ctx), answer=card.answer[ctx.language],
                    choices=tuple(options[i] for i in order), correct=(order.index(card.correct),))


def _blank(card: BlankCard, ctx: _Context) -> Question:
    return Question(**_common(card, ctx), answer=card.fill, code=card.code[ctx.language],
                    accept=tuple(card.accept.get(ctx.language, ())))


def _numeric(entry: _Entry, item: NumericItem, cards: list[NumericCard], ctx: _Context) -> Question:
    card = cards[ctx.set_index % len(cards)]
    return Question(**_common(card, ctx), answer=card.answer[ctx.language], set_title=card.set_title,
                    given=_given(entry.lesson, item, card, ctx.language) if ctx.given else (),
                    value=card.value, tolerance=card.tolerance)


def _match(entry: _Entry, cards: list[MatchCard], ctx: _Context) -> Question:
    rows = tuple(card.term[ctx.language] for card in cards)
    answers = [card.answer[ctx.language] for card in cards]
    column = list(dict.fromkeys(answers))  # one entry per distinct answer: two rows may share one
    if ctx.rng is not None and len(column) > 1:
        natural = list(column)
        while column == natural:  # never hand out the answers in row order
            ctx.rng.shuffle(column)
    common = _common(cards[0], ctx) | {"id": f"{entry.lesson.id}/{entry.item.id}", "points": len(rows)}
    return Question(**common, rows=rows, choices=tuple(column),
                    correct=tuple(column.index(answer) for answer in answers),
                    answer="; ".join(f"{term} → {answer}" for term, answer in zip(rows, answers)))


def _practice(card: PracticeCard, ctx: _Context) -> Question:
    return Question(**_common(card, ctx), answer=card.answer[ctx.language], code=card.code[ctx.language],
                    solution=card.solution[ctx.language])


def _given(lesson: Lesson, item: NumericItem, card: NumericCard, language: str) -> tuple[tuple[str, str], ...]:
    """The parameters the item's formula depends on, through other formulas, with their values."""
    used: set[str] = set()
    todo = list(formula.parse(item.formula).names)
    while todo:
        name = todo.pop()
        if name not in used:
            used.add(name)
            if name in lesson.formulas:
                todo.extend(lesson.formulas[name].names)
    values = lesson.params[card.set_name].values
    return tuple((name, format_number(value, language))
                 for name, value in values.items() if name in used)


def letter(index: int) -> str:
    """0 -> "A", 25 -> "Z", 26 -> "AA": how options, columns and versions are labelled."""
    if index < len(LETTERS):
        return LETTERS[index]
    return letter(index // len(LETTERS) - 1) + LETTERS[index % len(LETTERS)]
