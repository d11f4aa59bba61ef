"""Proving a parsed lesson: every stated number against its formula, every placeholder resolvable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import assert_never

from bertdrill.core import formula
from bertdrill.core.errors import FormulaError, LessonError
from bertdrill.core.formula import Number
from bertdrill.core.i18n import _
from bertdrill.core.lesson.claims import claim_error
from bertdrill.core.lesson.model import (
    PLACEHOLDER,
    BlankItem,
    ChoiceItem,
    Claim,
    FactItem,
    Item,
    Lesson,
    MatchItem,
    NumericItem,
    PracticeItem,
    filled_expression,
    item_texts,
    own_set,
)
from bertdrill.core.lesson.positions import Lines
from bertdrill.core.lesson.variants import Refusal


def _named_set(text: str) -> tuple[str, str] | None:
    """The first placeholder naming a set explicitly (``{d@bert-base}``), and its name, if any."""
    for match in PLACEHOLDER.finditer(text):
        if match.group(1) and match.group(2):
            return match.group(0), match.group(1)
    return None


def variant_errors(lesson: Lesson) -> list[LessonError]:
    """What ``check`` finds wrong with ``[variants]``: a constraint nothing satisfies, a variant whose numbers
    leave the engine's bounds (every allowed variant is evaluated), a title that does not render."""
    space = lesson.variant_space
    if space is None:
        return []
    try:
        candidates = lesson.candidate_variants()
    except Refusal as exc:
        return [LessonError(lesson.path, exc.line, exc.message)]
    for variant in candidates:
        if (problem := lesson.variant_refusal(variant)) is not None:
            return [LessonError(lesson.path, problem.line, problem.message)]
    try:
        lesson.with_variant(candidates[0])
    except FormulaError as exc:
        return [LessonError(lesson.path, space.line, _("[variants]: title: {error}").format(error=exc))]
    return []


def verify(lesson: Lesson, lines: Lines, errors: list[LessonError]) -> int:
    """Check every stated number against its formula; return how many claims were verified."""
    verifier = _Verifier(lesson, lines, errors)
    verifier.run()
    return verifier.count


class _Stop(Exception):
    """Stop checking the current item; its error is recorded."""


class _Verifier:
    def __init__(self, lesson: Lesson, lines: Lines, errors: list[LessonError]):
        self.lesson = lesson
        self.lines = lines
        self.errors = errors
        self.count = 0
        self.values: dict[str, Mapping[str, Number]] = {}

    def fail(self, line: int | None, message: str) -> None:
        self.errors.append(LessonError(self.lesson.path, line, message))

    def run(self) -> None:
        names = set(self.lesson.formulas) | {n for s in self.lesson.params.values() for n in s.values}
        try:
            formula.order(self.lesson.formulas, names)
            for name in self.lesson.params:
                try:
                    self.values[name] = self.lesson.values(name)
                except FormulaError as exc:
                    raise FormulaError(_('{exc} (with parameter set {name!r})').format(exc=exc, name=name), formula=exc.formula) from None
        except FormulaError as exc:
            line = self.lesson.formula_lines.get(exc.formula or "", self.lines.tables.get("formulas"))
            self.fail(line, str(exc))
            return
        tables = {line: f"item#{index}" for index, line in enumerate(self.lines.items)}
        for item in self.lesson.items:
            table = tables.get(item.line, "")
            try:
                self.placeholders(item, table)
                for claim in item.claims:
                    self.claim(item, claim)
                self.kind(item, table)
            except _Stop:
                continue
        self.variants(tables)

    def variants(self, tables: Mapping[int, str]) -> None:
        """The items asked with a variant show its numbers, not a named set's (the rest: :func:`variant_errors`)."""
        for item in self.lesson.varying_items():
            for field_name, language, text in item_texts(item):
                if field_name in ("prompt", "explanation") and (named := _named_set(text)):
                    self.fail(self.at(tables.get(item.line, ""), field_name, item), _(
                        "item {item!r}: {field} ({language}) shows {placeholder}, which a fresh variant would not "
                        "change; write {{{name}}} for the card's own set, or variants = false").format(
                            item=item.id, field=field_name, language=language, placeholder=named[0], name=named[1]))

    def kind(self, item: Item, table: str) -> None:
        match item:
            case FactItem() | ChoiceItem():
                pass
            case BlankItem():
                self.blank(item, table)
            case NumericItem():
                self.numeric(item, table)
            case MatchItem():
                self.match(item)
            case PracticeItem():
                self.practice(item, table)
            case _:
                assert_never(item)

    def placeholders(self, item: Item, table: str) -> None:
        set_name = own_set(item)
        for field_name, language, text in item_texts(item):
            try:
                self.lesson.render(text, language, set_name)
            except FormulaError as exc:
                self.fail(self.at(table, field_name, item), _('item {id!r}: {field_name} ({language}): {exc}').format(id=item.id, field_name=field_name, language=language, exc=exc))
                raise _Stop from None

    def at(self, table: str, key: str, item: Item) -> int:
        return self.lines.key(table, key, item.line) or item.line

    def evaluate(self, expr: str, set_name: str, line: int, item: Item) -> Number:
        if set_name not in self.values:
            known = formula.unknown_name_message(set_name, self.values).replace("name", "parameter set", 1)
            self.fail(line, _('item {id!r}: {known}').format(id=item.id, known=known))
            raise _Stop
        try:
            return self.lesson.evaluate(expr, set_name)
        except FormulaError as exc:
            self.fail(line, _('item {id!r}: {exc} in {expr!r}').format(id=item.id, exc=exc, expr=expr))
            raise _Stop from None

    def claim(self, item: Item, claim: Claim) -> None:
        actual = self.evaluate(claim.value, claim.set, claim.line, item)
        try:
            problem = claim_error(claim, actual)
        except ValueError as exc:
            self.fail(claim.line, _('item {id!r}: {exc}').format(id=item.id, exc=exc))
            raise _Stop from None
        if problem is not None:
            self.fail(claim.line, _('item {id!r}: {problem}').format(id=item.id, problem=problem))
            raise _Stop
        self.count += 1

    def blank(self, item: BlankItem, table: str) -> None:
        for filled in dict.fromkeys(filled_expression(text, item.fill) for text in item.text.values()):
            self.blank_filled(item, table, filled)

    def blank_filled(self, item: BlankItem, table: str, filled: str) -> None:
        """One language's filled text (they usually agree right of '=') against the formula in every set."""
        for set_name in self.lesson.params:
            want = self.evaluate(item.checks, set_name, self.at(table, "checks", item), item)
            got = self.evaluate(filled, set_name, self.at(table, "answer", item), item)
            if got != want:
                self.fail(self.at(table, "answer", item),
                          _("item {item!r}: the filled text {filled!r} gives {got} for {set}, but {checks!r} gives "
                            "{want}").format(item=item.id, filled=filled, got=formula.format_number(got), set=set_name,
                                             checks=item.checks, want=formula.format_number(want)))
                raise _Stop
            self.count += 1

    def numeric(self, item: NumericItem, table: str) -> None:
        for set_name in item.sets:
            self.evaluate(item.formula, set_name, self.at(table, "params", item), item)
        for set_name, stated in item.stated.items():
            if set_name not in item.sets:
                self.fail(self.at(table, "stated", item),
                          _("item {item!r}: stated names {set!r}, which is not in its params").format(
                              item=item.id, set=set_name))
                raise _Stop
            actual = self.evaluate(item.formula, set_name, self.at(table, "formula", item), item)
            if actual != stated:
                self.fail(self.at(table, "stated", item),
                          _("item {item!r}: stated {stated} for {set}, but {formula!r} gives {actual}").format(
                              item=item.id, stated=formula.format_number(stated), set=set_name, formula=item.formula,
                              actual=formula.format_number(actual)))
                raise _Stop
            self.count += 1

    def match(self, item: MatchItem) -> None:
        for pair in item.pairs:
            if pair.value is not None:
                self.evaluate(pair.value, item.set_name, pair.line, item)
                self.count += 1

    def practice(self, item: PracticeItem, table: str) -> None:
        for line in item.expected:
            for expr in line:
                self.evaluate(expr, item.set_name, self.at(table, "expected", item), item)
                self.count += 1
