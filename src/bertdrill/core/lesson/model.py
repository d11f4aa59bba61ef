"""What a lesson is once read: parameter sets, formulas and items, one frozen dataclass per item kind."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal, assert_never

from bertdrill.core import formula
from bertdrill.core.errors import FormulaError
from bertdrill.core.formula import Formula, Number
from bertdrill.core.i18n import _
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson.variants import Refusal, Variant, VariantSpace, refusal, satisfying
from bertdrill.core.numbers import format_number

BLANK = "____"
Text = Mapping[str, str]  # language code -> text
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(?:@([a-z0-9][a-z0-9_-]*))?\}")
_ASKED = ("asked",)  # the memo key of what every item of a lesson asks (Lesson.asked_expressions)
_BY_ID = ("by id",)  # the memo key of the items by id (Lesson.item)


@dataclass(frozen=True)
class ParamSet:
    name: str
    title: str
    values: Mapping[str, Number]
    line: int
    titles: Text = field(default_factory=dict)  # the title per language, when it differs (a variant's values)


@dataclass(frozen=True)
class Claim:
    """A number the lesson states in prose: exact, or approximate by significant figures."""

    value: str  # a formula expression, usually a formula's name
    set: str
    stated: str  # "110M", "~23 million", "2/3", "0.666"
    digits: int | None
    line: int


@dataclass(frozen=True)
class Pair:
    id: str
    term: Text
    meaning: Text | None  # a text meaning, or None when `value` gives it
    value: str | None  # a formula expression over the table's parameter set
    line: int
    question: Text = field(default_factory=dict)  # the pair asked as a question, per language (optional)


@dataclass(frozen=True, kw_only=True)
class ItemBase:
    """What every item has; each kind adds its own fields below."""

    id: str
    line: int
    prompt: Text
    explanation: Text = field(default_factory=dict)
    source: Text = field(default_factory=dict)  # where what the item says comes from, when not the lesson's source
    tags: tuple[str, ...] = ()
    accept: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    claims: tuple[Claim, ...] = ()
    points: int | None = None  # what the item is worth on a sheet; None: its kind's default


@dataclass(frozen=True, kw_only=True)
class FactItem(ItemBase):
    answer: Text
    # What a complete answer must contain, per language: each part is a tuple of wordings any one of
    # which counts ("encoder", "encoder blocks"). An answer with every part is right.
    parts: Mapping[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)

    @property
    def kind(self) -> Literal[Kind.FACT]:
        return Kind.FACT


@dataclass(frozen=True, kw_only=True)
class ChoiceItem(ItemBase):
    options: Mapping[str, tuple[str, ...]]
    correct: int  # 0-based index of the right option
    answer: Text  # the right option's text

    @property
    def kind(self) -> Literal[Kind.CHOICE]:
        return Kind.CHOICE


@dataclass(frozen=True, kw_only=True)
class BlankItem(ItemBase):
    text: Text  # code with ____, per language (its identifiers and comments may differ; its numbers may not)
    fill: str  # what goes in the blank
    checks: str  # the formula the filled text must equal
    answer: Text  # the fill, in every language

    @property
    def kind(self) -> Literal[Kind.BLANK]:
        return Kind.BLANK


@dataclass(frozen=True, kw_only=True)
class NumericItem(ItemBase):
    formula: str
    sets: tuple[str, ...]  # one card per set
    stated: Mapping[str, Number] = field(default_factory=dict)
    tolerance: Fraction = Fraction(0)  # relative
    varies: bool = True  # may be asked with a fresh variant, when the lesson has [variants]

    @property
    def kind(self) -> Literal[Kind.NUMERIC]:
        return Kind.NUMERIC


@dataclass(frozen=True, kw_only=True)
class MatchItem(ItemBase):
    set_name: str  # the parameter set its values come from
    pairs: tuple[Pair, ...]

    @property
    def kind(self) -> Literal[Kind.MATCH]:
        return Kind.MATCH


@dataclass(frozen=True, kw_only=True)
class PracticeItem(ItemBase):
    set_name: str
    starter: Text  # the code the learner starts from, per language
    solution: Text  # the sample solution, per language: each is run by `check --run-solutions`
    expected: tuple[tuple[str, ...], ...]  # output lines as expressions

    @property
    def kind(self) -> Literal[Kind.PRACTICE]:
        return Kind.PRACTICE


Item = FactItem | ChoiceItem | BlankItem | NumericItem | MatchItem | PracticeItem


def own_set(item: Item) -> str | None:
    """The parameter set an item's placeholders default to: its first (or only) one."""
    match item:
        case FactItem() | ChoiceItem() | BlankItem():
            return None
        case NumericItem():
            return item.sets[0] if item.sets else None
        case MatchItem() | PracticeItem():
            return item.set_name
        case _:
            assert_never(item)


def item_texts(item: Item) -> Iterator[tuple[str, str, str]]:
    """Every human text of an item as (field, language, text), for rendering checks."""
    answer: Text = {}
    options: Mapping[str, tuple[str, ...]] = {}
    pairs: tuple[Pair, ...] = ()
    match item:
        case FactItem() | BlankItem():
            answer = item.answer
        case ChoiceItem():
            answer, options = item.answer, item.options
        case MatchItem():
            pairs = item.pairs
        case NumericItem() | PracticeItem():
            pass
        case _:
            assert_never(item)
    for field_name, texts in (("prompt", item.prompt), ("answer", answer), ("explanation", item.explanation)):
        for language, text in texts.items():
            yield field_name, language, text
    for language, choices in options.items():
        for text in choices:
            yield "options", language, text
    for pair in pairs:
        for language, text in pair.term.items():
            yield "pairs", language, text
        for language, text in (pair.meaning or {}).items():
            yield "pairs", language, text
        for language, text in pair.question.items():
            yield "pairs", language, text


def filled_expression(text: str, fill: str) -> str:
    """The blank's text with the blank filled, right of its last '=' (``dikkat = 4 * ...`` -> ``4 * ...``)."""
    filled = text.replace(BLANK, f"({fill})")
    return filled.rsplit("=", 1)[-1].strip()


@dataclass(frozen=True)
class SheetSettings:
    """The lesson's ``[sheet]`` table: what a quiz sheet of it prints besides the questions."""

    instructions: Text = field(default_factory=dict)  # a line under the header, per language
    legend: Mapping[str, Text] = field(default_factory=dict)  # parameter name -> what it stands for


@dataclass(frozen=True)
class Lesson:
    id: str
    path: str
    languages: tuple[str, ...]
    title: Text
    summary: Text
    source: Text
    tags: tuple[str, ...]
    params: Mapping[str, ParamSet]
    formulas: Mapping[str, Formula]
    items: tuple[Item, ...]
    formula_lines: Mapping[str, int] = field(default_factory=dict)
    verified: int = 0  # how many stated numbers were proven against their formulas
    sheet: SheetSettings = field(default_factory=SheetSettings)
    variant_space: VariantSpace | None = None  # the [variants] table: how the parameters may vary
    names: Mapping[str, Text] = field(default_factory=dict)  # formula, parameter or term -> its name per language

    # memo for values()/evaluate(): keys are a set name or an (expression, set name) pair
    _resolved: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def evaluate(self, expr: str, set_name: str) -> Number:
        """An expression's value over one parameter set (memoised: lessons repeat ``total`` a lot)."""
        key = (expr, set_name)
        if key not in self._resolved:
            self._resolved[key] = formula.evaluate(expr, self.values(set_name))
        value: Number = self._resolved[key]
        return value

    def values(self, set_name: str) -> Mapping[str, Number]:
        """Every parameter and formula value of one parameter set (computed once)."""
        if set_name not in self._resolved:
            self._resolved[set_name] = formula.resolve(self.params[set_name].values, self.formulas)
        values: Mapping[str, Number] = self._resolved[set_name]
        return values

    def render(self, text: str, language: str, set_name: str | None = None) -> str:
        """Fill a text's placeholders: ``{set}``, ``{d}`` (the item's set) or ``{total@bert-large}``.

        Numbers in prose come from the formulas, so they can never disagree
        with them. ``{{`` and ``}}`` stand for literal braces.
        """
        if "{" not in text and "}" not in text:
            return text  # most texts have no placeholders: skip the regular expression
        def fill(match: re.Match[str]) -> str:
            name, explicit = match.group(1), match.group(2)
            if name is None:
                return match.group(0)[0]
            where = explicit or set_name
            if where is None:
                example = next(iter(self.params), "SET")
                raise FormulaError(_('placeholder {{{name}}} needs a parameter set, as in {{{name}@{example}}}').format(name=name, example=example))
            if where not in self.params:
                raise FormulaError(formula.unknown_name_message(where, self.params).replace("name", "parameter set", 1))
            if name == "set":
                params = self.params[where]
                return params.titles.get(language) or params.title
            values = self.values(where)
            if name not in values:
                raise FormulaError(_("placeholder: {problem}").format(problem=formula.unknown_name_message(name, values)))
            return format_number(values[name], language)

        return PLACEHOLDER.sub(fill, text)

    def allowed_variants(self) -> tuple[Variant, ...]:
        """Every variant ``[variants]`` allows whose numbers are all computable, in a fixed order; listed once.

        Listing them costs tens of milliseconds, so it happens on first use, never when a lesson is
        loaded; ``check`` proves them all and reports what it excludes (:func:`.verify.variant_errors`),
        so a lesson that was not checked still draws only variants that work.
        """
        space = self.variant_space
        if space is None:
            return ()
        key = ("variants",)
        if key not in self._resolved:
            try:
                candidates = self.candidate_variants()
            except Refusal:
                candidates = ()
            self._resolved[key] = tuple(v for v in candidates if self.variant_refusal(v) is None)
        variants: tuple[Variant, ...] = self._resolved[key]
        return variants

    def candidate_variants(self) -> tuple[Variant, ...]:
        """Every variant the constraints of ``[variants]`` allow, computed once (``check`` proves them, then lists
        the allowed ones); a :class:`Refusal` when they allow none."""
        assert self.variant_space is not None
        key = ("candidates",)
        if key not in self._resolved:
            self._resolved[key] = satisfying(self.variant_space, self.formulas)
        candidates: tuple[Variant, ...] = self._resolved[key]
        return candidates

    def variant_refusal(self, variant: Variant) -> Refusal | None:
        """Why ``variant``'s numbers cannot be used (:func:`.variants.refusal`), or None; computed once per variant."""
        assert self.variant_space is not None
        key = ("refusal", variant.key)
        if key not in self._resolved:
            self._resolved[key] = refusal(self.variant_space, variant, self.formulas, self.asked_expressions())
        found: Refusal | None = self._resolved[key]
        return found

    def asked_expressions(self) -> tuple[tuple[str, str], ...]:
        """What the varying items ask, as (expression, which item) pairs: each must work for every variant.

        Each expression once, with the first item that asks it: a lesson of 2,000 items asking ``total``
        evaluated it 2,000 times per variant (1.7 million evaluations in ``check``), and a failing
        expression is still reported with the first item that asks it."""
        if _ASKED not in self._resolved:  # a part of a lesson (:meth:`part`) knows already what the whole asks
            first: dict[str, str] = {}
            for item in self.varying_items():
                first.setdefault(item.formula, f"item {item.id!r}")
            self._resolved[_ASKED] = tuple(first.items())  # once: every variant's proof asks it
        known: tuple[tuple[str, str], ...] = self._resolved[_ASKED]
        return known

    def known_to_ask(self, asked: tuple[tuple[str, str], ...]) -> Lesson:
        """This lesson, told what the whole lesson's items ask (:meth:`asked_expressions`): for a lesson read
        without its items (the lesson cache's head, :mod:`.stored`), whose variants are those of the whole."""
        self._resolved[_ASKED] = asked
        return self

    def part(self, items: tuple[Item, ...]) -> Lesson:
        """This lesson holding only ``items`` (some of its own), for a command that shows a few of its cards:
        each of their cards is the card the whole lesson compiles, and the variants it allows are the whole
        lesson's (they depend on what every item asks)."""
        return replace(self, items=items, _resolved={_ASKED: self.asked_expressions()})

    def varying_items(self) -> tuple[NumericItem, ...]:
        """The numeric items that may be asked with a variant's numbers (none without [variants])."""
        if self.variant_space is None:
            return ()
        return tuple(item for item in self.items if isinstance(item, NumericItem) and item.varies)

    def with_variant(self, variant: Variant) -> tuple[Lesson, str]:
        """This lesson with the variant as one more parameter set, and that set's name (the variant's key).

        Everything that works on a parameter set (rendering ``{set}`` and ``{d}``, evaluating,
        diagnosing a wrong number) then works on the variant's own numbers.
        """
        space = self.variant_space
        assert space is not None, "a variant of a lesson without [variants]"
        name = variant.key
        memo = ("with variant", name)
        if memo not in self._resolved:  # a sheet asks every numeric item of a lesson with one paper's variant
            self._resolved[memo] = self._with_set(ParamSet(name, name, variant.values, space.line), space)
        lesson: Lesson = self._resolved[memo]
        return lesson, name

    def _with_set(self, plain: ParamSet, space: VariantSpace) -> Lesson:
        """This lesson with one more parameter set, titled by ``[variants]``'s title template."""
        # The same items: what they ask, and where each is, are kept (a part knows no more).
        kept = {key: self._resolved[key] for key in (_ASKED, _BY_ID) if key in self._resolved}
        kept[_ASKED] = self.asked_expressions()
        lesson = replace(self, params={**self.params, plain.name: plain}, _resolved=dict(kept))
        titles = {language: lesson.render(space.title_template(language), language, plain.name)
                  for language in self.languages}
        titled = replace(plain, title=titles[self.languages[0]], titles=titles)
        return replace(self, params={**self.params, plain.name: titled}, _resolved=kept)

    def item(self, item_id: str) -> Item:
        """The item with this id (a KeyError if the lesson has none); the index is built on first use."""
        if _BY_ID not in self._resolved:
            self._resolved[_BY_ID] = {item.id: item for item in self.items}
        found: Item = self._resolved[_BY_ID][item_id]
        return found
