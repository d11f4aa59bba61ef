"""How a lesson's parameters may vary: the ``[variants]`` table, and every variant it allows.

A lesson proves its numbers for its named parameter sets (BERT-base, BERT-large); ``[variants]``
says which other sets its formulas may be asked about, so a learner can be given numbers nobody
has memorised. Each varying parameter has a rule: a list of choices, a range, or a formula over
the others (``f = "4 * d"``); constraints relate them (``"h divides d"``, ``"d / h >= 32"``).
Parameters without a rule keep the value every named set gives them.

The space is finite and small (at most :data:`MAX_COMBINATIONS` combinations of choices), so
``check`` evaluates every variant it allows: every constraint is satisfiable and every variant's
numbers are within the formula engine's bounds, or the lesson is refused. Drawing a variant is
then picking one of a known list (:mod:`bertdrill.core.variants`), uniform and reproducible.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, assert_never

from bertdrill.core import formula
from bertdrill.core.errors import FormulaError
from bertdrill.core.formula import Formula, Number
from bertdrill.core.i18n import _
from bertdrill.core.lesson.reading import FieldReader
from bertdrill.core.numbers import format_number


class NamedValues(Protocol):
    """What reading ``[variants]`` needs of a parameter set (a :class:`~bertdrill.core.lesson.model.ParamSet`,
    which this module may not name: the model imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def values(self) -> Mapping[str, Number]: ...

MAX_COMBINATIONS = 10_000
"""Combinations of choices a ``[variants]`` table may span: ``check`` evaluates every one of them."""


class VariantMode(StrEnum):
    """When a numeric card is asked with fresh numbers instead of its own parameter set."""

    FIXED = "fixed"  # always its own set (BERT-base): what Anki and printed keys have
    FRESH = "fresh"  # a fresh variant at every review
    MATURE = "mature"  # its own set until the card is mature, then fresh variants


class Relation(StrEnum):
    EQUAL = "=="
    DIFFERENT = "!="
    AT_MOST = "<="
    AT_LEAST = ">="
    BELOW = "<"
    ABOVE = ">"
    DIVIDES = "divides"

    def holds(self, left: Number, right: Number) -> bool:
        match self:
            case Relation.EQUAL:
                return left == right
            case Relation.DIFFERENT:
                return left != right
            case Relation.AT_MOST:
                return left <= right
            case Relation.AT_LEAST:
                return left >= right
            case Relation.BELOW:
                return left < right
            case Relation.ABOVE:
                return left > right
            case Relation.DIVIDES:
                return left != 0 and right % left == 0
            case _:
                assert_never(self)


# The longest operators first, so "<=" is not read as "<" followed by "=".
_RELATION = re.compile(r"\s(divides)\s|(==|!=|<=|>=|<|>)")


@dataclass(frozen=True)
class Choices:
    values: tuple[Number, ...]
    line: int


@dataclass(frozen=True)
class Span:
    """Whole numbers from ``start`` to ``stop``, both included, ``step`` apart."""

    start: int
    stop: int
    step: int
    line: int

    @property
    def values(self) -> range:
        return range(self.start, self.stop + 1, self.step)


@dataclass(frozen=True)
class Derived:
    """A parameter computed from the others: ``f = "4 * d"``."""

    formula: Formula
    line: int


Rule = Choices | Span | Derived


@dataclass(frozen=True)
class Constraint:
    source: str  # as the author wrote it: "h divides d"
    left: Formula
    relation: Relation
    right: Formula
    line: int

    @property
    def names(self) -> frozenset[str]:
        return self.left.names | self.right.names

    def holds(self, values: Mapping[str, Number]) -> bool:
        return self.relation.holds(self.left.evaluate(values), self.right.evaluate(values))


def parse_constraint(source: str, line: int) -> Constraint:
    """``"h divides d"``, ``"d / h >= 32"``, ``"f == 4 * d"``: two formulas and a relation between them."""
    found = _RELATION.search(source)
    if found is None:
        raise FormulaError(_("constraint {source!r} relates nothing: write two formulas and one of "
                             "==, !=, <, <=, >, >=, divides between them").format(source=source))
    word = found.group(1) or found.group(2)
    left, right = source[:found.start()].strip(), source[found.end():].strip()
    if _RELATION.search(right):
        raise FormulaError(_("constraint {source!r} has more than one relation: write one constraint for each")
                           .format(source=source))
    return Constraint(source, formula.parse(left), Relation(word), formula.parse(right), line)


@dataclass(frozen=True)
class Variant:
    """One set of parameter values the lesson allows, beside its named sets."""

    values: Mapping[str, Number]  # every parameter of the lesson
    varying: tuple[str, ...]  # the parameters that vary, in the lesson's order

    @property
    def key(self) -> str:
        """The variant in one short language-free text, ``d=512,f=2048,h=8,n=6``: what the log records."""
        return ",".join(f"{name}={formula.format_number(self.values[name])}" for name in self.varying)

    def shown(self, names: tuple[str, ...], language: str) -> str:
        """``d = 512, f = 2,048``: some of its values as a reader of ``language`` writes them."""
        return ", ".join(f"{name} = {format_number(self.values[name], language)}" for name in names)


@dataclass(frozen=True)
class VariantSpace:
    """The ``[variants]`` table: a rule per varying parameter, the fixed ones, and the constraints."""

    rules: Mapping[str, Rule]  # in the order the lesson gives them
    fixed: Mapping[str, Number]  # parameters every named set agrees on, kept as they are
    constraints: tuple[Constraint, ...]
    title: Mapping[str, str]  # how a prompt's {set} shows a variant, per language ("" : the default)
    mode: VariantMode
    line: int
    order: tuple[str, ...] = field(default=())  # every parameter, in the lesson's order

    @property
    def varying(self) -> tuple[str, ...]:
        return tuple(name for name in self.order if name in self.rules)

    def title_template(self, language: str) -> str:
        """``{set}`` of a variant: the lesson's title, or its varying values (``d = {d}, n = {n}``)."""
        return self.title.get(language) or ", ".join(f"{name} = {{{name}}}" for name in self.varying)

    def combinations(self) -> int:
        """How many combinations of choices the rules span, before constraints (computed, never listed)."""
        return math.prod(len(rule.values) for rule in self.rules.values() if not isinstance(rule, Derived))

    def candidates(self) -> Iterator[dict[str, Number]]:
        """Every combination of the free parameters, the derived ones computed; constraints not yet applied."""
        free = [name for name in self.varying if not isinstance(self.rules[name], Derived)]
        derived = {name: rule.formula for name, rule in self.rules.items() if isinstance(rule, Derived)}
        steps = formula.order(derived, set(self.order) | set(derived))
        choices = [_values(self.rules[name]) for name in free]
        for combination in itertools.product(*choices):
            values: dict[str, Number] = dict(self.fixed)
            values.update(zip(free, combination))
            for name in steps:
                values[name] = derived[name].evaluate(values)
            yield {name: values[name] for name in self.order}


def _values(rule: Rule) -> tuple[Number, ...] | range:
    match rule:
        case Choices() | Span():
            return rule.values
        case Derived():
            raise AssertionError("a derived parameter has no choices")  # pragma: no cover - callers filter
        case _:
            assert_never(rule)


class Refusal(Exception):
    """Why a ``[variants]`` table allows no variant, or an unusable one: a message and the line at fault."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


def satisfying(space: VariantSpace, formulas: Mapping[str, Formula]) -> tuple[Variant, ...]:
    """Every variant whose constraints hold, in a fixed order; a :class:`Refusal` when a constraint rules out all.

    A constraint that rules out every candidate left by the ones before it is named; so is one that
    cannot be evaluated (an unknown name, a division by zero).
    """
    try:
        return _satisfying(space, formulas)
    except FormulaError as exc:  # a derived parameter cannot be computed for some combination
        raise Refusal(space.line, _("[variants]: {error}; narrow the ranges or add a constraint").format(
            error=exc)) from None


def _satisfying(space: VariantSpace, formulas: Mapping[str, Formula]) -> tuple[Variant, ...]:
    kept: list[Variant] = []
    survivors = [0] * len(space.constraints)  # how many candidates got past each constraint
    varying = space.varying
    for values in space.candidates():
        for index, constraint in enumerate(space.constraints):
            if not _holds(constraint, values, formulas, varying):
                break
            survivors[index] += 1
        else:
            kept.append(Variant(values, varying))
    for index, count in enumerate(survivors):
        if count == 0:
            constraint = space.constraints[index]
            raise Refusal(constraint.line, _("[variants]: no variant satisfies {source!r} (with the constraints "
                                             "before it): nothing could be drawn").format(source=constraint.source))
    return tuple(kept)


def _holds(constraint: Constraint, values: Mapping[str, Number], formulas: Mapping[str, Formula],
           varying: tuple[str, ...]) -> bool:
    try:
        if constraint.names <= values.keys():
            return constraint.holds(values)
        return constraint.holds(formula.resolve(values, formulas))
    except FormulaError as exc:
        raise Refusal(constraint.line, _("[variants]: constraint {source!r}: {error} (with {variant})").format(
            source=constraint.source, error=exc, variant=Variant(values, varying).key)) from None


def refusal(space: VariantSpace, variant: Variant, formulas: Mapping[str, Formula],
            asked: tuple[tuple[str, str], ...]) -> Refusal | None:
    """Why ``variant``'s numbers cannot be used, if they cannot: a formula, or an expression in ``asked``
    ((expression, what asks it) pairs: the numeric items' formulas), fails or leaves the engine's bounds."""
    try:
        resolved = formula.resolve(variant.values, formulas)
    except FormulaError as exc:
        return Refusal(space.line, _("[variants]: with {variant}: {error}; narrow the ranges or add a "
                                     "constraint").format(variant=variant.key, error=exc))
    for expression, what in asked:
        try:
            formula.evaluate(expression, resolved)
        except FormulaError as exc:
            return Refusal(space.line, _("[variants]: with {variant}: {what}: {error}; narrow the ranges or add a "
                                         "constraint").format(variant=variant.key, what=what, error=exc))
    return None


# --- reading the table ----------------------------------------------------------------------------

KEYWORDS = frozenset({"mode", "title", "where"})
"""Keys of ``[variants]`` that are not parameters."""


def read_variants(parser: FieldReader, table: object, params: Mapping[str, NamedValues]) -> VariantSpace:
    """The ``[variants]`` table, its shape checked (what it allows is checked by :func:`allowed`)."""
    line = parser.lines.tables.get("variants", 1)
    if not isinstance(table, dict):
        raise parser.fail(line, _("[variants] must be a table: a rule per parameter that varies"))
    if not params:
        raise parser.fail(line, _("[variants] varies the parameter sets' values, but the lesson has no [params]"))
    order = tuple(next(iter(params.values())).values)
    rules: dict[str, Rule] = {}
    for name, value in table.items():
        if name in KEYWORDS:
            continue
        at = parser.lines.key("variants", name, line) or line
        if name not in order:
            raise parser.fail(at, "[variants]: " + formula.unknown_name_message(name, order).replace(
                "unknown name", _("unknown parameter"), 1))
        rules[name] = _rule(parser, name, value, at, order)
    if not rules:
        raise parser.fail(line, _("[variants] lets no parameter vary: give one a list of choices, a range "
                                  "{ from = 2, to = 48 } or a formula"))
    fixed = {name: _fixed(parser, name, params, line) for name in order if name not in rules}
    mode = table.get("mode", VariantMode.FIXED.value)
    if mode not in [m.value for m in VariantMode]:
        raise parser.fail(parser.lines.key("variants", "mode", line), _(
            "[variants]: mode must be one of {modes}, not {mode!r}").format(
                modes=", ".join(m.value for m in VariantMode), mode=mode))
    title = parser.text(table, "title", "variants")
    if any("{set}" in text for text in title.values()):
        raise parser.fail(parser.lines.key("variants", "title", line),
                          _("[variants]: the title is what {set} shows; it cannot hold {set} itself"))
    space = VariantSpace(rules, fixed, _constraints(parser, table.get("where", []), line), title,
                         VariantMode(mode), line, order)
    if (count := space.combinations()) > MAX_COMBINATIONS:
        raise parser.fail(line, _("[variants] spans {count} combinations; check proves every one, so at most "
                                  "{most}: fewer choices, or a range with a step").format(
                                      count=f"{count:,}", most=f"{MAX_COMBINATIONS:,}"))
    return space


def _rule(parser: FieldReader, name: str, value: object, line: int, parameters: tuple[str, ...]) -> Rule:
    what = _("[variants]: {name}").format(name=name)
    match value:
        case str():
            try:
                derived = formula.parse(value)
            except FormulaError as exc:
                raise parser.fail(line, f"{what}: {exc}") from None
            if unknown := sorted(derived.names - set(parameters)):
                raise parser.fail(line, _("{what}: {error} (a parameter is computed from other parameters only)")
                                  .format(what=what, error=formula.unknown_name_message(unknown[0], parameters)))
            return Derived(derived, line)
        case list():
            choices = tuple(parser.number(v, line, what) for v in value)
            if not choices:
                raise parser.fail(line, _("{what}: an empty list of choices").format(what=what))
            if len(set(choices)) != len(choices):
                raise parser.fail(line, _("{what}: a choice is listed twice (it would be drawn twice as often)")
                                  .format(what=what))
            return Choices(choices, line)
        case dict():
            return _span(parser, what, value, line)
    raise parser.fail(line, _("{what} must be a list of choices, a range {{ from = 2, to = 48 }} or a formula "
                              "such as \"4 * d\"").format(what=what))


def _span(parser: FieldReader, what: str, value: dict[str, object], line: int) -> Span:
    for key in value:
        if key not in ("from", "to", "step"):
            raise parser.fail(line, _("{what}: unknown key {key!r} in a range (expected from, to, step)").format(
                what=what, key=key))
    bounds = [value.get("from"), value.get("to"), value.get("step", 1)]
    if not all(isinstance(b, int) and not isinstance(b, bool) and abs(b) <= formula.MAX_MAGNITUDE for b in bounds):
        raise parser.fail(line, _("{what}: a range needs whole numbers from and to (and step)").format(what=what))
    start, stop, step = (int(b) for b in bounds)  # type: ignore[call-overload]  # all ints, checked above
    if step < 1 or start > stop:
        raise parser.fail(line, _("{what}: a range goes up from 'from' to 'to' in steps of at least 1").format(
            what=what))
    return Span(start, stop, step, line)


def _fixed(parser: FieldReader, name: str, params: Mapping[str, NamedValues], line: int) -> Number:
    """A parameter without a rule keeps its value, which every named set must agree on."""
    values = {params_set.name: params_set.values[name] for params_set in params.values()}
    if len(set(values.values())) > 1:
        sets = ", ".join(f"{formula.format_number(v)} in {s}" for s, v in values.items())
        raise parser.fail(line, _("[variants]: {name} differs between the parameter sets ({sets}); say how it "
                                  "varies").format(name=name, sets=sets))
    return next(iter(values.values()))


def _constraints(parser: FieldReader, raw: object, line: int) -> tuple[Constraint, ...]:
    at = parser.lines.key("variants", "where", line) or line
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise parser.fail(at, _("[variants]: where must be a list of constraints such as \"h divides d\""))
    constraints = []
    for source in raw:
        try:
            constraints.append(parse_constraint(source, at))
        except FormulaError as exc:
            raise parser.fail(at, f"[variants]: {exc}") from None
    return tuple(constraints)
