"""What goes on a quiz sheet: the seeded choice and shuffling of questions, no I/O.

A :class:`Sheet` holds one or more versions (A, B, ...) of the same questions
in one language. Everything random comes from :class:`random.Random` seeded
with a string built from the seed and the version letter, so the same seed
and lessons give the same sheet on every machine and every run (string seeds
are hashed with SHA-512, not with Python's per-process hash).

Every version holds the same questions, so every version has the same kinds
and points; no two questions on a sheet give each other away (see
:mod:`bertdrill.core.leaks`: one of each leaking pair is left out). Per version the
question order is shuffled, and the option order and the matching column are
rotated from one seeded order, so an option's letter differs between versions
wherever there are enough letters. Numeric questions take turns over their
parameter sets within each version (half about BERT-base, half about
BERT-large), shifted by one in the next version, so no version gets all the
questions the matching column helps with. Every answer comes from the compiled
cards, whose numbers were computed by the lesson's formulas. The renderers
(html, markdown, gift, moodle, pdf) only lay this model out.
"""

from __future__ import annotations

import difflib
import functools
import random
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import groupby
from typing import Any, TypeVar, assert_never

from bertdrill.adapters.export.sheets import calculated as calculated_question
from bertdrill.adapters.export.sheets.calculated import Calculated
from bertdrill.core import collector, formula, i18n, leaks
from bertdrill.core.cards import (
    BlankCard,
    Card,
    ChoiceCard,
    FactCard,
    MatchCard,
    NumericCard,
    PracticeCard,
    compile_lesson,
)
from bertdrill.core.errors import BertdrillError
from bertdrill.core.formula import Number
from bertdrill.core.i18n import _, ngettext
from bertdrill.core.kinds import Kind
from bertdrill.core.languages import SheetLabels, listed, sheet_labels, thousands_separator
from bertdrill.core.lesson import BlankItem, ChoiceItem, FactItem, Item, Lesson, MatchItem, NumericItem, PracticeItem
from bertdrill.core.lesson.model import PLACEHOLDER
from bertdrill.core.lesson.variants import Variant
from bertdrill.core.numbers import format_number, parse_approx
from bertdrill.core.variants import decoys as variant_decoys
from bertdrill.core.variants import derive_seed, draw_distinct, variant_card
from bertdrill.ports import IndexedLesson

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
    choices: tuple[str, ...] = ()  # choice: the options in sheet order; match: the right column
    correct: tuple[int, ...] = ()  # choice: the right option's index; match: one index per row
    rows: tuple[str, ...] = ()  # match: the terms, in lesson order
    accept: tuple[str, ...] = ()  # fact, blank: other answers to accept
    value: Number | None = None  # numeric: the exact value
    tolerance: Fraction = Fraction(0)  # numeric: relative
    solution: str = ""  # practice: the lesson's sample solution
    variant: str = ""  # numeric asked with fresh numbers: the variant's key ("d=512,f=2048,n=6,h=8")
    tags: tuple[str, ...] = ()  # the item's tags in the lesson (an LMS files questions by them)
    item: Item | None = None  # the lesson item asked (a bank decides a question's type from it)
    # fact: its answer as text and the numbers in it that the formulas compute ((text, None) or ("", value)),
    # when it states two or more of them ("{n} layers, d_model = {d}, ..."): a bank asks each number
    numbers: tuple[tuple[str, Number | None], ...] = ()
    # fact: its one claimed number, exact, and the absolute tolerance the claim's figures allow
    # (~23 million: 23,440,896 ± 500,000), when the claim is the whole answer
    claim: tuple[Number, Fraction] | None = None


@dataclass(frozen=True)
class Version:
    letter: str
    questions: tuple[Question, ...]
    student: str = ""  # --students roster.csv: the student's name or id, printed in the header
    student_number: int = 0  # --students N (or a roster): the student's number, from 1

    @property
    def points(self) -> int:
        return sum(question.points for question in self.questions)


@dataclass(frozen=True)
class LegendRow:
    """A parameter the numeric questions use: what it stands for, and its value in each set asked about."""

    name: str  # "V"
    meaning: str  # "vocabulary size" (from the lesson's [sheet.legend]; empty when it has none)
    values: tuple[tuple[str, str], ...]  # (set title, formatted value) per parameter set


@dataclass(frozen=True)
class Sheet:
    title: str
    language: str
    seed: int
    labels: Labels
    versions: tuple[Version, ...]
    bank: tuple[Question, ...] = ()  # every chosen question once, unshuffled (for an LMS)
    instructions: str = ""  # a line under the header
    legend: tuple[LegendRow, ...] = ()  # --given: the same on every version
    left_out: tuple[str, ...] = ()  # items left out because they would give another away
    given_out: tuple[str, ...] = ()  # items left out because the --given legend answers them
    categories: tuple[tuple[str, str], ...] = ()  # (lesson id, title) of each lesson, for an LMS
    calculated: tuple[Calculated, ...] = ()  # numeric items as Moodle calculated questions (``calculated=True``)


@dataclass(frozen=True)
class _Entry:
    """One item of a lesson: the unit a sheet chooses. A drawn sheet reads a few dozen of 100,000 items, so an
    item and its cards are read and compiled when first asked for, unless the whole lesson is at hand."""

    lesson: Lesson  # the whole lesson, or (a drawn sheet of a lesson's index) its head, without its items
    item_id: str
    kind: Kind
    read: Callable[[str], Item] = field(compare=False, repr=False)  # the item by its id
    compiled: tuple[Card, ...] | None = field(default=None, compare=False, repr=False)  # None: when first asked for

    @classmethod
    def of(cls, lesson: Lesson, item: Item, compiled: tuple[Card, ...] | None = None) -> _Entry:
        """An entry of an item at hand."""
        entry = cls(lesson, item.id, item.kind, lesson.item, compiled)
        entry.__dict__["item"] = item  # what the cached property would read
        return entry

    @functools.cached_property
    def item(self) -> Item:
        return self.read(self.item_id)

    @functools.cached_property
    def cards(self) -> tuple[Card, ...]:
        """The item's cards, as the whole lesson compiles them."""
        return self.compiled if self.compiled is not None else tuple(compile_lesson(self.lesson.part((self.item,))))


def parse_kinds(text: str | None) -> tuple[Kind, ...]:
    """``"choice, blank"`` -> ("choice", "blank"); None -> the default kinds."""
    if text is None:
        return DEFAULT_KINDS
    kinds = [word for word in re.split(r"[\s,]+", text.strip().lower()) if word]
    if not kinds:
        raise BertdrillError(_("--kinds: name at least one kind ({kinds})").format(kinds=", ".join(KINDS)))
    for kind in kinds:
        if kind not in KINDS:
            close = difflib.get_close_matches(kind, [str(known) for known in KINDS], n=1)
            hint = _("; did you mean {kind!r}?").format(kind=close[0]) if close else ""
            raise BertdrillError(_("--kinds: unknown kind {kind!r}{hint} (kinds: {kinds})").format(
                kind=kind, hint=hint, kinds=", ".join(KINDS)))
    return tuple(dict.fromkeys(Kind(kind) for kind in kinds))


def build_sheet(
    lessons: Sequence[Lesson | IndexedLesson],
    *,
    language: str,
    seed: int,
    versions: int = 1,
    count: int | None = None,
    kinds: Iterable[Kind] = DEFAULT_KINDS,
    items: Collection[tuple[str, str]] | None = None,
    title: str | None = None,
    given: bool = False,
    instructions: str | None = None,
    students: Sequence[str] | None = None,
    calculated: bool = False,
    bank: bool = False,
) -> Sheet:
    """Choose the questions once, then shuffle them into ``versions`` versions.

    ``given`` prints a legend of the parameters the numeric questions use, with
    their values in every set asked about, the same on every version. It is off
    by default because it would hand out the settings that the lesson's fact
    and matching questions ask for. ``instructions`` replaces the lessons' own
    (their ``[sheet]`` table) and the sheet's default line.

    ``students`` (names or ids; "" for a student known by number only) writes one version per
    student instead of ``versions``: the same questions in the same order with the same options
    and points for everyone, and every numeric question the lesson lets vary asked with the
    student's own variant of the parameters (no two students share one while the lesson has
    enough), so each has their own numbers and their own key, all from the one seed.

    ``calculated`` adds every numeric item that may vary as a Moodle calculated question, with a
    dataset of up to 100 of the lesson's variants (see :mod:`.calculated`), for the Moodle XML bank.

    ``bank``: the sheet is a question bank (GIFT, Moodle XML), which holds every question (:attr:`Sheet.bank`)
    and which Moodle shuffles per attempt. Of every item and for no students, it lays out no paper (its
    versions hold no questions) and leaves nothing out: on 100,000 items, judging what gives what away over
    every paper held some 240 MB that a bank never printed.

    A lesson given as its index (:class:`~bertdrill.ports.IndexedLesson`) is read whole for a sheet
    of every item or one with ``given``; a drawn sheet reads its items one by one, as the draw reaches them.
    """
    if students is not None:
        _check_students(students, given)
    else:
        _check_versions(versions)
    at_hand = [_at_hand(source, whole=count is None or given) for source in lessons]
    heads = [lesson for lesson, _source in at_hand]
    _check_languages(heads, language)
    kinds = tuple(kinds)
    pool = [entry for lesson, source in at_hand for entry in _entries(lesson, source, every=count is None)
            if entry.kind in kinds and (items is None or (lesson.id, entry.item_id) in items)]  # e.g. --from-class
    if not pool:
        raise _no_questions(kinds)
    if count is not None and not 1 <= count <= len(pool):
        raise BertdrillError(ngettext(
            "--count {count}: the lessons have {total} question of the kinds {kinds}; ask for 1 to {total}",
            "--count {count}: the lessons have {total} questions of the kinds {kinds}; ask for 1 to {total}",
            len(pool)).format(count=count, total=_counted(len(pool)), kinds=", ".join(kinds)))
    answered: list[_Entry] = []
    if given:  # the legend prints values that some questions ask for: those questions stay off the sheet
        stated = _legend_facts(pool)
        facts = {lesson.id: leaks.lesson_facts(lesson, language) for lesson in heads}
        kept: list[_Entry] = []
        for entry in pool:  # one pass: asking the list of those answered for each entry took 11 minutes of 71,430
            legend_answers = stated & set(facts[entry.lesson.id].get(entry.item.id, leaks.ItemFacts()).asks)
            (answered if legend_answers else kept).append(entry)
        pool = kept
        if not pool or (count is not None and count > len(pool)):
            raise BertdrillError(_("--given: its legend answers {count} of these questions ({items}), which "
                                   "leaves {left}; ask for fewer with --count, or leave out --given").format(
                count=len(answered), items=listed([_key(entry) for entry in answered]), left=len(pool)))
    if bank and count is None and students is None:
        left_out: list[_Entry] = []
        chosen, shuffled = pool, tuple(Version(letter(index), ()) for index in range(versions))
    else:
        chosen, left_out, shuffled = _laid_out(pool, language, seed, count, versions, students, given, heads)
    return replace(
        _cover(heads, language, seed, title, instructions),
        versions=shuffled,
        bank=tuple(_bank(pool if count is None else chosen, language)),  # a bank is no sheet: every question
        legend=_legend(chosen, language) if given else (),
        left_out=tuple(_key(entry) for entry in left_out),
        given_out=tuple(_key(entry) for entry in answered),
        calculated=_calculated(pool if count is None else chosen, language, seed) if calculated else (),
    )


def _check_versions(versions: int) -> None:
    if not 1 <= versions <= MAX_VERSIONS:
        raise BertdrillError(_("--versions must be from 1 to {most}, not {count}").format(most=MAX_VERSIONS,
                                                                                         count=versions))


def _check_languages(heads: Sequence[Lesson], language: str) -> None:
    for lesson in heads:
        if language not in lesson.languages:
            raise BertdrillError(_("lesson {lesson!r} has no {language!r} texts (its languages: {languages})").format(
                lesson=lesson.id, language=language, languages=", ".join(lesson.languages)))


def _no_questions(kinds: Sequence[Kind]) -> BertdrillError:
    return BertdrillError(_("no questions of the kinds {kinds} in the chosen lessons").format(kinds=", ".join(kinds)))


def _cover(heads: Sequence[Lesson], language: str, seed: int, title: str | None,
           instructions: str | None) -> Sheet:
    """What a sheet says of its lessons (title, instructions, each lesson's category), with no versions yet."""
    labels = sheet_labels()  # in the interface's language, which is the sheet's
    return Sheet(
        title=title if title is not None else " · ".join(lesson.title[language] for lesson in heads),
        language=language,
        seed=seed,
        labels=labels,
        versions=(),
        instructions=_instructions(heads, language, instructions, labels),
        categories=tuple((lesson.id, lesson.title[language]) for lesson in heads),
    )


@dataclass(frozen=True)
class Bank:
    """A question bank of every item for no students (GIFT, Moodle XML), made a lesson at a time as it is
    written: no lesson, its cards or its questions are held beside another's (the 1M store's eight lessons
    held whole, with every item's cards and every question made before the first byte was written: 400 MB)."""

    sheet: Sheet  # the bank's title, language, seed, versions (no questions) and categories
    parts: tuple[Callable[[], Sheet], ...]  # each lesson's: ``sheet`` with that lesson's questions, made when called
    count: int  # the questions the file holds: a calculated question once, not once per parameter set
    calculated: int  # the numeric items asked as calculated questions


def build_bank(
    lessons: Sequence[IndexedLesson],
    *,
    language: str,
    seed: int,
    versions: int = 1,
    kinds: Iterable[Kind] = DEFAULT_KINDS,
    title: str | None = None,
    instructions: str | None = None,
    calculated: bool = False,
) -> Bank:
    """The bank :func:`build_sheet` makes with ``bank=True`` of every item for no students, from the lessons'
    indexes: each part reads its lesson whole when called, and the sheet it gives holds that lesson's questions
    (numbered on from the lessons before) and calculated questions.

    A bank's first line says how many questions it holds: counted from the cards' rows, a numeric item
    once per parameter set; with ``calculated``, each lesson's numeric items are read first (a lesson at a
    time) to know which are asked once, as calculated questions.
    """
    _check_versions(versions)
    heads = [lesson.head() for lesson in lessons]
    _check_languages(heads, language)
    kinds = tuple(kinds)
    sizes = [_bank_sizes(lesson, kinds) for lesson in lessons]
    if not any(sizes):
        raise _no_questions(kinds)
    drawn: _Drawn = {}  # each lesson's variants, drawn in the first pass, asked again as its part is written
    once = {question.item_key for lesson in lessons if calculated and Kind.NUMERIC in kinds
            for question in _lesson_calculated(lesson, language, seed, drawn)}
    sheet = replace(_cover(heads, language, seed, title, instructions),
                    versions=tuple(Version(letter(index), ()) for index in range(versions)))
    parts, first = [], 1
    for lesson, questions in zip(lessons, sizes):
        parts.append(functools.partial(_lesson_bank, sheet, lesson, kinds, first, calculated, drawn))
        first += sum(questions.values())
    count = sum(1 if f"{lesson.id}/{item_id}" in once else size
                for lesson, questions in zip(lessons, sizes) for item_id, size in questions.items())
    return Bank(sheet, tuple(parts), count, len(once))


def _bank_sizes(lesson: IndexedLesson, kinds: Collection[Kind]) -> dict[str, int]:
    """How many questions a bank asks of each of the lesson's items of ``kinds``, from its cards' rows: a
    numeric item one per parameter set (a card each), any other one."""
    sizes: dict[str, int] = {}
    for row in lesson.cards:  # an item's cards side by side, in lesson order
        if row.kind in kinds:
            sizes[row.item_id] = (sizes.get(row.item_id, 0) + 1) if row.kind is Kind.NUMERIC else 1
    return sizes


def _lesson_calculated(source: IndexedLesson, language: str, seed: int, drawn: _Drawn) -> tuple[Calculated, ...]:
    """The lesson's numeric items asked as calculated questions; its items read whole, and let go."""
    if source.head().variant_space is None:
        return ()
    with collector.paused():  # no garbage made, as when a lesson's part is made (_lesson_bank)
        lesson = source.lesson()
        return _calculated([_Entry.of(lesson, item) for item in lesson.varying_items()], language, seed, drawn)


def _lesson_bank(sheet: Sheet, source: IndexedLesson, kinds: Collection[Kind], first: int, calculated: bool,
                 drawn: _Drawn) -> Sheet:
    """One lesson's part of a bank: the lesson read whole, its cards compiled, its questions made (numbered
    from ``first``)."""
    # A lesson, its cards and its questions are many small objects, none of them garbage: the cycle collector walked
    # them again and again while they were made (0.5 s of the 1M store's bank). Writing them is not paused: Moodle
    # XML's writer leaves cycles (45 MB more at the end of that bank, paused).
    with collector.paused():
        lesson = source.lesson()
        pool = [entry for entry in _entries(lesson, lesson, every=True) if entry.kind in kinds]
        return replace(sheet, bank=tuple(_bank(pool, sheet.language, first)),
                       calculated=_calculated(pool, sheet.language, sheet.seed, drawn) if calculated else ())


def _laid_out(pool: list[_Entry], language: str, seed: int, count: int | None, versions: int,
              students: Sequence[str] | None, given: bool, lessons: Sequence[Lesson],
              ) -> tuple[list[_Entry], list[_Entry], tuple[Version, ...]]:
    """The questions chosen (none giving another away), those left out for it, and the papers laid out: each
    version with its own order, options and numbers, or each student's paper (version A's order and options,
    their own numbers)."""
    papers = len(students) if students is not None else versions
    plans = _plans(lessons, seed, papers, language, fresh=not given)
    chosen, left_out = _choose(pool, language, seed, count, plans)
    if students is None:
        return chosen, left_out, tuple(_version(letter(index), index, chosen, language, seed, plans[index])
                                       for index in range(versions))
    return chosen, left_out, tuple(replace(_version(str(index + 1), 0, chosen, language, seed, plans[index]),
                                           student=student, student_number=index + 1)
                                   for index, student in enumerate(students))


_Drawn = dict[str, tuple[tuple[Variant, ...], list[Mapping[str, Number]]]]
"""Each lesson's variants for its calculated questions, and their parameters' and formulas' values, by lesson id."""


def _calculated(chosen: list[_Entry], language: str, seed: int, drawn: _Drawn | None = None) -> tuple[Calculated, ...]:
    """The chosen numeric items that may vary, as calculated questions over one draw of variants per lesson
    (kept in ``drawn``, when given)."""
    found: list[Calculated] = []
    drawn = {} if drawn is None else drawn
    for entry in chosen:
        lesson, item = entry.lesson, entry.item
        if not isinstance(item, NumericItem) or not item.varies or lesson.variant_space is None:
            continue
        if lesson.id not in drawn:
            variants = tuple(draw_distinct(lesson, derive_seed(seed, lesson.id, 1), calculated_question.MAX_ITEMS))
            drawn[lesson.id] = variants, [formula.resolve(variant.values, lesson.formulas) for variant in variants]
        variants, resolved = drawn[lesson.id]
        question = calculated_question.calculated(lesson, item, variants, resolved, language)
        if question is not None:
            found.append(question)
    return tuple(found)


MAX_STUDENTS = 1000


def _check_students(students: Sequence[str], given: bool) -> None:
    if not 1 <= len(students) <= MAX_STUDENTS:
        raise BertdrillError(_("--students: from 1 to {most} students, not {count}").format(
            most=_counted(MAX_STUDENTS), count=_counted(len(students))))
    if given:
        raise BertdrillError(_("--given does not go with --students: each student's numeric questions state "
                               "their own values, which one legend cannot; leave out --given"))


def _counted(count: int) -> str:
    """A count in a message, as the interface's language writes it (1,000; Turkish 1.000)."""
    return format_number(count, i18n.language())


@dataclass(frozen=True)
class _Plan:
    """What one version (or one student's paper) asks of the lessons' parameters.

    ``variants``: the variant each lesson's numeric items that may vary are asked with (a lesson
    without ``[variants]``, or a sheet with ``--given``, has none: its numeric items take turns over
    the named sets). ``sized``: the matching tables the sizes of their numbers would pair, whose
    column prints decoys beside its own values (:meth:`decoys`), drawn from the seed and the paper's
    ``index``.
    """

    variants: Mapping[str, Variant]  # lesson id -> variant
    sized: _Sizes | None = None  # which matching tables print decoys (None: none)
    seed: int = 0
    index: int = 0
    cards: dict[tuple[str, str, str], NumericCard] = field(default_factory=dict, compare=False)  # memo
    drawn: dict[str, tuple[Number, ...]] = field(default_factory=dict, compare=False)  # memo of decoys()

    def decoys(self, entry: _Entry) -> tuple[Number, ...] | None:
        """The decoys ``entry``'s column prints on this paper (None: it prints none), drawn when first asked:
        30 papers of 20 questions from a lesson of 14,000 tables drew 420,000 columns' decoys (43 s)."""
        key = _key(entry)
        if self.sized is None or not self.sized.pairs(entry):
            return None
        if key not in self.drawn:
            assert isinstance(entry.item, MatchItem)
            # never a value printed elsewhere on the paper: its variant's (nor a named set's, which decoys() avoids)
            mine = self.variants.get(entry.lesson.id)
            avoid = {mine.values[name] for name in mine.varying} if mine else set()
            self.drawn[key] = variant_decoys(entry.lesson, entry.item, derive_seed(self.seed, key, self.index), avoid)
        return self.drawn[key]

    def variant(self, entry: _Entry) -> Variant | None:
        """The variant ``entry`` is asked with on this paper; None: its named sets."""
        if entry.kind is not Kind.NUMERIC or not isinstance(entry.item, NumericItem) or not entry.item.varies:
            return None
        return self.variants.get(entry.lesson.id)

    def card(self, entry: _Entry, variant: Variant) -> NumericCard:
        """The entry's card asked with ``variant`` (its first card's id: every variant is that one card)."""
        key = (entry.lesson.id, entry.item_id, variant.key)
        if key not in self.cards:
            first = next(card for card in entry.cards if isinstance(card, NumericCard))
            self.cards[key] = variant_card(entry.lesson, first, variant, item=entry.item)
        return self.cards[key]


@dataclass
class _Sizes:
    """Which matching tables the sizes of their numbers pair (:func:`bertdrill.core.leaks.size_orders`): their
    column prints decoys beside its own values. Judged for a whole lesson at once when a table of it is first
    asked about (its tables share the judging of the same expressions), or table by table of a lesson's head."""

    language: str
    pairs_of: dict[str, bool] = field(default_factory=dict)  # a table's key -> whether sizes pair it

    def pairs(self, entry: _Entry) -> bool:
        if entry.kind is not Kind.MATCH:
            return False
        key = _key(entry)
        if key not in self.pairs_of:
            lesson = entry.lesson
            tables = lesson.items if lesson.items else (entry.item,)
            sized = {order.item_id for order in leaks.size_orders(lesson, self.language, items=tables)}
            self.pairs_of.update((f"{lesson.id}/{item.id}", item.id in sized) for item in tables)
        return self.pairs_of[key]


def _plans(lessons: Sequence[Lesson], seed: int, papers: int, language: str, *, fresh: bool) -> list[_Plan]:
    """Each paper's variants and decoys, from the one seed.

    Variants are drawn spread (:func:`draw_distinct`): no two papers share one while the lesson
    allows enough, and every value a parameter may take comes up before any comes twice as often as
    another, so with enough papers every parameter (and the head size ``d / h``) takes every value.
    """
    drawn = {lesson.id: draw_distinct(lesson, derive_seed(seed, lesson.id, 0), papers)
             for lesson in lessons if fresh and lesson.variant_space is not None}
    sized = _Sizes(language)
    return [_Plan({lesson_id: found[index] for lesson_id, found in drawn.items() if found}, sized, seed, index)
            for index in range(papers)]


def _key(entry: _Entry) -> str:
    return f"{entry.lesson.id}/{entry.item_id}"


def _choose(pool: list[_Entry], language: str, seed: int, count: int | None,
            plans: Sequence[_Plan]) -> tuple[list[_Entry], list[_Entry]]:
    """The questions of the sheet, in lesson order, none giving another away; and those left out for it.

    Every question when ``count`` is None, less the fewest that leak; else ``count`` drawn at random
    (seeded), each skipped when it would give away one drawn before it. What leaks is judged on every
    paper as it is printed, with its own variant and decoys: the same items go on every paper, so a pair
    that clashes on one is kept apart on all.
    """
    order = [_key(entry) for entry in pool]
    papers = plans or [_Plan({})]
    thousands = thousands_separator(language)
    if count is None:
        kept = set(_fewest_leaking(pool, language, papers))
    else:
        drawn = list(order)
        random.Random(f"bertdrill-sheet:{seed}:choice").shuffle(drawn)
        entries = dict(zip(order, pool))
        varied: dict[tuple[str, str], Mapping[str, leaks.ItemFacts]] = {}

        def printed(key: str) -> list[leaks.Exposure]:  # only the items drawn until the sheet is full are judged
            entry = entries[key]
            named = _named(entry, language, leaks.lesson_facts(entry.lesson, language, items=[entry.item]))
            return [_printed(entry, plan, named, language, varied, only=True) for plan in papers]
        kept = set(leaks.first_apart(drawn, printed, count, thousands=thousands))
        if len(kept) < count:
            raise BertdrillError(_("--count {count}: only {kept} of these questions can share a sheet without "
                                   "giving each other away (bertdrill check lists which); ask for {kept} or fewer")
                                 .format(count=count, kept=_counted(len(kept))))
    return [e for e in pool if _key(e) in kept], [e for e in pool if _key(e) not in kept and count is None]


def _fewest_leaking(pool: list[_Entry], language: str, papers: Sequence[_Plan]) -> list[str]:
    """Every question's key, less the fewest whose leaving out leaves none giving another away on any paper."""
    facts = {lesson.id: leaks.lesson_facts(lesson, language) for lesson in {entry.lesson.id: entry.lesson
                                                                            for entry in pool}.values()}
    named = {_key(entry): _named(entry, language, facts[entry.lesson.id]) for entry in pool}
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], None] = {}
    varied: dict[tuple[str, str], Mapping[str, leaks.ItemFacts]] = {}
    for plan in papers:
        exposures = [_printed(entry, plan, named[_key(entry)], language, varied) for entry in pool]
        groups.update(dict.fromkeys(leaks.Clashes.of(exposures, thousands=thousands_separator(language)).groups))
    order = [_key(entry) for entry in pool]
    kinds = {_key(entry): entry.kind for entry in pool}
    return leaks.fewest_dropped(order, leaks.Clashes(tuple(groups)),
                                sorted(order, key=lambda key: KEEP_FIRST.index(kinds[key])))


def _named(entry: _Entry, language: str, facts: Mapping[str, leaks.ItemFacts]) -> leaks.Exposure:
    """What ``entry`` shows and asks over its named sets, with what its lesson's formulas know of it."""
    return replace(leaks.with_facts(leaks.exposure(entry.cards, language), facts), item_id=_key(entry))


def _printed(entry: _Entry, plan: _Plan, named: leaks.Exposure, language: str,
             varied: dict[tuple[str, str], Mapping[str, leaks.ItemFacts]], *, only: bool = False) -> leaks.Exposure:
    """What ``entry`` shows and asks on one paper: with the paper's variant, or its column's decoys.

    ``varied`` keeps what the formulas know with each variant, for every varying item of the lesson
    (``only``: for this entry's item alone, memoised by item too: a sheet of a few questions)."""
    variant = plan.variant(entry)
    if variant is not None:
        lesson, item = entry.lesson, entry.item
        assert isinstance(item, NumericItem)
        memo = (lesson.id, f"{variant.key}/{item.id}" if only else variant.key)
        if memo not in varied:  # what the formulas know, with the variant as the set each varying item asks
            with_set, name = lesson.with_variant(variant)
            varied[memo] = leaks.lesson_facts(with_set, language, items=[
                replace(each, sets=(name,)) for each in ((item,) if only else lesson.varying_items())])
        shown = leaks.exposure([plan.card(entry, variant)], language)
        return replace(leaks.with_facts(shown, varied[memo], key=item.id), item_id=_key(entry))
    if decoys := plan.decoys(entry):  # a variant's values: they state nothing about a named set
        return replace(named, question=(*named.question, *(format_number(value, language) for value in decoys)))
    return named


# Which question of a leaking pair a full sheet keeps: the lesson's own exercises before plain recall,
# which is the easiest to ask another way and the most likely to say another question's answer.
KEEP_FIRST = (Kind.MATCH, Kind.NUMERIC, Kind.CHOICE, Kind.BLANK, Kind.PRACTICE, Kind.FACT)


def _instructions(lessons: Sequence[Lesson], language: str, given: str | None, labels: Labels) -> str:
    if given is not None:
        return given
    for lesson in lessons:
        if lesson.sheet.instructions:
            return lesson.sheet.instructions[language]
    return labels.instructions


def _legend(chosen: list[_Entry], language: str) -> tuple[LegendRow, ...]:
    """Every parameter the chosen numeric questions use, with its value in each set they ask about."""
    rows: dict[tuple[str, str], LegendRow] = {}
    for entry in chosen:
        if not isinstance(entry.item, NumericItem):
            continue
        lesson = entry.lesson
        used = _parameters(lesson, entry.item.formula)
        for name in (name for name in next(iter(lesson.params.values())).values if name in used):
            values = tuple((lesson.params[set_name].title, format_number(lesson.params[set_name].values[name], language))
                           for set_name in entry.item.sets)
            meaning = lesson.sheet.legend.get(name, {}).get(language, "")
            key = (lesson.id, name)
            if key in rows:  # another question asks about more sets: keep every set once
                values = tuple(dict.fromkeys(rows[key].values + values))
            rows[key] = LegendRow(name, meaning, values)
    return tuple(rows.values())


def _legend_facts(pool: list[_Entry]) -> set[leaks.Fact]:
    """The values a legend of these numeric questions states: each parameter they use, in each set they ask."""
    stated: set[leaks.Fact] = set()
    for entry in pool:
        if isinstance(entry.item, NumericItem):
            names = next(iter(entry.lesson.params.values())).values
            used = [name for name in _parameters(entry.lesson, entry.item.formula) if name in names]
            stated.update((leaks.VALUE, name, set_name) for name in used for set_name in entry.item.sets)
    return stated


def _parameters(lesson: Lesson, expr: str) -> set[str]:
    """The parameters an expression depends on, through the lesson's formulas."""
    used: set[str] = set()
    todo = list(formula.parse(expr).names)
    while todo:
        name = todo.pop()
        if name not in used:
            used.add(name)
            if name in lesson.formulas:
                todo.extend(lesson.formulas[name].names)
    return used


def _at_hand(source: Lesson | IndexedLesson, *, whole: bool) -> tuple[Lesson, Lesson | IndexedLesson]:
    """The lesson a sheet works with (an index's whole lesson if ``whole``, else its head) and where it came from."""
    if isinstance(source, Lesson):
        return source, source
    return (source.lesson() if whole else source.head()), source


def _entries(lesson: Lesson, source: Lesson | IndexedLesson, *, every: bool) -> list[_Entry]:
    """The lesson's items as entries, in lesson order; with their cards compiled at once for a sheet of ``every``
    item; of a lesson's head, each item read by its id from the index when first asked for."""
    if not lesson.items and not isinstance(source, Lesson):
        kinds = {row.item_id: row.kind for row in source.cards}  # an item's cards side by side, in lesson order
        return [_Entry(lesson, item_id, kind, source.item) for item_id, kind in kinds.items()]
    if not every:
        return [_Entry.of(lesson, item) for item in lesson.items]
    cards = compile_lesson(lesson)  # in lesson order, an item's cards side by side
    by_item = {item_id: tuple(group) for item_id, group in groupby(cards, key=lambda card: card.item_id)}
    return [_Entry.of(lesson, item, by_item[item.id]) for item in lesson.items]


def _version(name: str, layout: int, chosen: list[_Entry], language: str, seed: int, plan: _Plan) -> Version:
    """One paper: ``layout`` decides its question order and how far its options turn (a student's paper
    is laid out as version A), ``plan`` its numbers."""
    order = list(chosen)
    random.Random(f"bertdrill-sheet:{seed}:{letter(layout)}").shuffle(order)
    named = [entry for entry in chosen if isinstance(entry.item, NumericItem) and plan.variant(entry) is None]
    # Numeric items asked with the named sets take turns over them, the same number of each in every version;
    # each entry's turn by its place among them (found by a list's index, 50,000 items took quadratic time)
    turn = {id(entry): set_index for entry, set_index in zip(named, set_turns(len(named), layout), strict=True)}
    questions = []
    for number, entry in enumerate(order, start=1):
        set_index = turn.get(id(entry), 0)
        # Options and columns: one seeded order per question, rotated by the version's index.
        rng = random.Random(f"bertdrill-sheet:{seed}:{_key(entry)}")
        questions.append(_question(entry, _Context(number, language, rng, set_index, layout, plan)))
    return Version(name, tuple(questions))


def set_turns(count: int, version: int) -> list[int]:
    """Which set (0: the first, BERT-base; 1: the second) each of ``count`` numeric items asks in a version.

    Every version asks the first set equally often (half, rounded up), so no version is easier; and
    the versions are turns of one pattern in which no shorter pattern repeats, so up to ``count``
    versions each ask a different combination (a plain alternation 0, 1, 0, 1 turned by two is
    itself again: version C would ask exactly A's sets).
    """
    if count <= 2:
        pattern = [0, 1][:count]
    elif count % 2:
        pattern = [index % 2 for index in range(count)]  # 0, 1, 0, 1, 0: the one 0, 0 makes it primitive
    else:
        pattern = [1, 0, 0, 1] + [0, 1] * ((count - 4) // 2)  # one 0, 0 and one 1, 1 in the circle
    return [pattern[(position - version) % count] for position in range(count)] if count else []


def _bank(chosen: list[_Entry], language: str, first: int = 1) -> list[Question]:
    """Every chosen question in lesson order, options unshuffled, each numeric set its own question; numbered
    from ``first``."""
    questions: list[Question] = []
    for entry in chosen:
        sets = range(len(entry.cards)) if isinstance(entry.item, NumericItem) else range(1)
        for set_index in sets:
            questions.append(_question(entry, _Context(first + len(questions), language, None, set_index)))
    return questions


@dataclass(frozen=True)
class _Context:
    number: int
    language: str
    rng: random.Random | None  # None keeps the lesson's own order of options and columns
    set_index: int  # numeric: which of the item's parameter sets to ask about
    rotation: int = 0  # the version's index: how far its options and columns turn
    plan: _Plan | None = None  # the paper's variants and decoys; None: the named sets, no decoys (a bank)


def _question(entry: _Entry, ctx: _Context) -> Question:
    question = replace(_asked(entry, ctx), item=entry.item)
    if isinstance(entry.item, FactItem):
        return _fact_numbers(entry.lesson, entry.item, question, ctx.language)
    return question


def _fact_numbers(lesson: Lesson, item: FactItem, question: Question, language: str) -> Question:
    """A fact's numbers, for a bank that grades them as numbers.

    A fact whose one claim is its whole answer (``~23 million (V · d = 23,440,896)``, no parts) gets
    the claim's exact value, and a tolerance of half the last figure the claim states (23 million:
    ± 500,000, so 23,440,896 and 23,000,000 are both right). A fact whose answer states two or more
    of the formulas' values gets them as ``numbers``.
    """
    template = item.answer.get(language, "")
    pieces: list[tuple[str, Number | None]] = []
    end = 0
    for match in PLACEHOLDER.finditer(template):
        name, where = match.group(1), match.group(2)
        pieces.append((lesson.render(template[end:match.start()], language), None))
        end = match.end()
        if name is None or name == "set" or where is None:
            pieces.append((lesson.render(match.group(0), language) if name and where else match.group(0)[0], None))
        else:
            pieces.append(("", lesson.values(where)[name]))
    pieces.append((lesson.render(template[end:], language), None))
    if sum(1 for _text, value in pieces if value is not None) >= 2:
        return replace(question, numbers=tuple(piece for piece in pieces if piece[0] or piece[1] is not None))
    if len(item.claims) == 1 and not item.parts.get(language):
        claim = item.claims[0]
        value = lesson.evaluate(claim.value, claim.set)
        digits = claim.digits or parse_approx(claim.stated)[1]
        if not value:
            return replace(question, claim=(value, Fraction(0)))
        return replace(question, claim=(value, Fraction(10) ** (formula.decimal_exponent(value) - digits + 1) / 2))
    return question


def _asked(entry: _Entry, ctx: _Context) -> Question:
    item = entry.item
    match item:
        case FactItem():
            return _fact(_cards(entry, FactCard)[0], ctx, item.points)
        case ChoiceItem():
            return _choice(_cards(entry, ChoiceCard)[0], ctx, item.points)
        case BlankItem():
            return _blank(_cards(entry, BlankCard)[0], ctx, item.points)
        case NumericItem():
            variant = ctx.plan.variant(entry) if ctx.plan is not None else None
            if variant is not None:
                assert ctx.plan is not None
                return _fresh(entry, ctx.plan.card(entry, variant), variant, ctx, item.points)
            return _numeric(_cards(entry, NumericCard), ctx, item.points)
        case MatchItem():
            return _match(entry, _cards(entry, MatchCard), ctx, item.points)
        case PracticeItem():
            return _practice(_cards(entry, PracticeCard)[0], ctx, item.points)
        case _:
            assert_never(item)


def _cards(entry: _Entry, kind: type[_C]) -> list[_C]:
    """The entry's cards, as the card type its item's kind compiles to."""
    return [card for card in entry.cards if isinstance(card, kind)]


def _common(card: Card, ctx: _Context, worth: int | None) -> dict[str, Any]:
    return dict(number=ctx.number, id=card.id, kind=card.kind, prompt=card.prompt[ctx.language],
                points=worth if worth is not None else points(card.kind),
                explanation=card.explanation.get(ctx.language, ""),
                accept=tuple(card.accept.get(ctx.language, ())), tags=tuple(card.tags))


def _fact(card: FactCard, ctx: _Context, worth: int | None) -> Question:
    return Question(**_common(card, ctx, worth), answer=card.answer[ctx.language])


def _choice(card: ChoiceCard, ctx: _Context, worth: int | None) -> Question:
    options = card.options[ctx.language]
    order = _arrangement(list(range(len(options))), ctx)
    return Question(**_common(card, ctx, worth), answer=card.answer[ctx.language],
                    choices=tuple(options[i] for i in order), correct=(order.index(card.correct),))


def _blank(card: BlankCard, ctx: _Context, worth: int | None) -> Question:
    return Question(**_common(card, ctx, worth), answer=card.fill, code=card.code[ctx.language])


def _numeric(cards: list[NumericCard], ctx: _Context, worth: int | None) -> Question:
    card = cards[ctx.set_index % len(cards)]
    return Question(**_common(card, ctx, worth), answer=card.answer[ctx.language], set_title=card.set_title,
                    value=card.value, tolerance=card.tolerance)


def _fresh(entry: _Entry, card: NumericCard, variant: Variant, ctx: _Context, worth: int | None) -> Question:
    """A numeric question asked with the paper's variant: its own prompt, number, key and set title."""
    titles = entry.lesson.with_variant(variant)[0].params[card.set_name].titles
    return replace(_numeric([card], ctx, worth), set_title=titles.get(ctx.language, card.set_title),
                   variant=card.variant)


def _match(entry: _Entry, cards: list[MatchCard], ctx: _Context, worth: int | None) -> Question:
    rows = tuple(card.term[ctx.language] for card in cards)
    answers = [card.answer[ctx.language] for card in cards]
    decoys = ctx.plan.decoys(entry) if ctx.plan is not None else None
    shown = [format_number(value, ctx.language) for value in decoys] if decoys is not None else []
    # rows may share an answer; decoys stand among the answers, never in a place of their own
    column = _arrangement(list(dict.fromkeys(answers + shown)), ctx, hide_order=True)
    common = _common(cards[0], ctx, worth) | {"id": _key(entry), "points": worth if worth is not None else len(rows)}
    return Question(**common, rows=rows, choices=tuple(column),
                    correct=tuple(column.index(answer) for answer in answers),
                    answer="; ".join(f"{term} → {answer}" for term, answer in zip(rows, answers)))


def _practice(card: PracticeCard, ctx: _Context, worth: int | None) -> Question:
    return Question(**_common(card, ctx, worth), answer=card.answer[ctx.language], code=card.code[ctx.language],
                    solution=card.solution[ctx.language])


_T = TypeVar("_T")


def _arrangement(natural: list[_T], ctx: _Context, *, hide_order: bool = False) -> list[_T]:
    """The order a version prints options (or, with ``hide_order``, a matching column) in.

    One seeded order per question, rotated by the version's index: rotations of one order never
    put an entry in the same place twice, so an entry's letter differs between versions while
    there are more entries than versions. A matching column's seeded order is never a rotation of
    the rows' order, so no version lists the answers in row order (two entries can only be swapped).
    """
    if ctx.rng is None or len(natural) < 2:
        return natural
    if hide_order and len(natural) == 2:
        return [natural[1], natural[0]]
    order = list(natural)
    ctx.rng.shuffle(order)
    rotations = [natural[i:] + natural[:i] for i in range(len(natural))]
    while hide_order and order in rotations:
        ctx.rng.shuffle(order)
    turn = ctx.rotation % len(order)
    return order[turn:] + order[:turn]


SHORT_QUESTION = 90  # characters of a question the key repeats


def short_text(text: str, limit: int = SHORT_QUESTION) -> str:
    """The question's first words, cut at a word and marked with an ellipsis when cut."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def tolerance(question: Question, language: str) -> str:
    """``±1%`` for a numeric question with a tolerance; empty when it must be exact."""
    if not question.tolerance:
        return ""
    return f"±{format_number(question.tolerance * 100, language)}%"


def heading(version: Version, labels: Labels) -> str:
    """``Version B``; a student's version with their name: ``Version 7 · Ayşe Yılmaz``."""
    label = f"{labels.version} {version.letter}"
    return f"{label} · {version.student}" if version.student else label


def letter(index: int) -> str:
    """0 -> "A", 25 -> "Z", 26 -> "AA": how options, columns and versions are labelled."""
    if index < len(LETTERS):
        return LETTERS[index]
    return letter(index // len(LETTERS) - 1) + LETTERS[index % len(LETTERS)]
