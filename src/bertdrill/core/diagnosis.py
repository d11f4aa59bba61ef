"""Explain a wrong number from the lesson's own formulas.

The lesson knows every quantity it teaches, so a wrong number can often be
named: ``2,362,368`` typed for BERT-base's embeddings is one attention block
of BERT-base; ``1,769,472`` is that block with its biases left out. A
:class:`Diagnoser` indexes, once per lesson, every value the lesson can
compute:

1. each formula at each parameter set (the other model's value is one of them);
2. each parameter at each set (``768`` is ``d``);
3. each part of a formula (``n * layer`` inside ``total``);
4. each formula with one slip: a term left out of a sum (a layer without one of
   its ``2 * d`` LayerNorms, or without all copies of it), a factor left out of
   a product (``total`` without its ``n``), or every bias term left out (the
   lone parameters added to products: ``4 * (d * d)`` for ``4 * (d * d + d)``).
   A slip in one formula carries into the formulas built on it, so ``total``
   with attention's biases left out is found too.

Looking a value up is a dictionary access. When no quantity matches, the
number is compared with the expected one digit by digit: one digit off, two
digits swapped, a digit missing or extra, a power of ten.

The work is bounded: at most :data:`MAX_QUANTITIES` values are indexed (plain
formulas and parameters first, so a huge lesson loses only slips), and the
index is built on the first wrong answer, not before.
"""

from __future__ import annotations

import ast
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import TYPE_CHECKING

from bertdrill.core import formula
from bertdrill.core.errors import FormulaError
from bertdrill.core.formula import Formula, Number
from bertdrill.core.i18n import _

if TYPE_CHECKING:
    from bertdrill.core.lesson.model import Lesson

MAX_QUANTITIES = 20_000
"""Values indexed per lesson at most: about 20 ms to build on the machine measured (docs/grading.md)."""

MAX_NODES = 400
"""Formulas larger than this (in syntax nodes) get no slip variants: their count grows with the size."""

MAX_REWRITES = 50
"""Terms tried as left out of every formula at once at most: each costs one pass over every formula."""

MIN_DIGITS = 3
"""Shorter numbers are never "one digit off": 5 for 7 is simply another number."""

MAX_POWER = 9
"""Powers of ten tried: 10 to 10^9 times too large or too small."""


class Slip(StrEnum):
    """What a wrong number is, from the most to the least specific."""

    OTHER_SET = "other-set"  # the same quantity for another parameter set (the other model)
    OTHER_QUANTITY = "other-quantity"  # another formula or a parameter of the lesson
    PART = "part"  # a part of a formula: `n * layer` inside `total`
    LEFT_OUT = "left-out"  # a formula with a term or a factor left out
    ONE_DIGIT = "one-digit"  # one digit differs
    SWAPPED = "swapped"  # two digits swapped
    DIGIT_MISSING = "digit-missing"
    DIGIT_EXTRA = "digit-extra"
    POWER_OF_TEN = "power-of-ten"  # 10^k times the answer, or the answer with digits cut off


@dataclass(frozen=True)
class Change:
    """How a quantity differs from its formula: ``dropped`` left out of ``within``, in formula ``formula``."""

    formula: str  # the formula where the slip is
    dropped: tuple[str, ...]  # the terms or the factor left out, as source text
    factor: bool = False  # a factor left out of a product, not terms of a sum
    biases: bool = False  # the terms left out are biases: lone parameters added to products (`d` in `d * d + d`)
    replaced: str | None = None  # a count off by one: `dropped` (`4 * (d * d + d)`) became this (`3 * (...)`)
    everywhere: bool = False  # the slip is made in every formula (every bias, every `2 * d`), not in one


@dataclass(frozen=True)
class Quantity:
    """A value the lesson can compute: a formula or parameter at a set, maybe a part or with a change."""

    name: str  # the formula or parameter, as the lesson names it
    set_name: str
    set_title: str
    part: str | None = None  # a part of the formula, as source text
    change: Change | None = None
    parameter: bool = False


@dataclass(frozen=True)
class Diagnosis:
    slip: Slip
    value: Number  # what the learner's answer came to
    quantity: Quantity | None = None  # for the slips that name a quantity
    others: tuple[Quantity, ...] = ()  # other slips as likely that give the same number: all are said
    factor: int = 1  # POWER_OF_TEN: the answer is about `factor` times too large (or 1/factor too small)
    smaller: bool = False  # POWER_OF_TEN: too small rather than too large


# How likely a learner meant a quantity, most likely first: a formula or a parameter as it is; a
# formula with a slip of its own (embeddings without its LayerNorm's 2 * d); a part of a formula;
# a formula built on one with a slip (a layer whose attention has no biases).
_FORMULA, _PARAMETER, _LEFT_OUT, _PART, _CARRIED = range(5)
_SLIPS = {_FORMULA: Slip.OTHER_QUANTITY, _PARAMETER: Slip.OTHER_QUANTITY, _LEFT_OUT: Slip.LEFT_OUT,
          _PART: Slip.PART, _CARRIED: Slip.LEFT_OUT}


@dataclass(frozen=True)
class _Entry:
    quantity: Quantity
    rank: int  # _FORMULA ... _CARRIED
    order: int  # insertion order, for a stable choice


class Diagnoser:
    """Every value one lesson can compute, indexed once; :meth:`diagnose` names a wrong number."""

    def __init__(self, params: Mapping[str, tuple[str, Mapping[str, Number]]], formulas: Mapping[str, Formula],
                 *, limit: int = MAX_QUANTITIES, names: Mapping[str, Mapping[str, str]] | None = None):
        self.params = params  # set name -> (title, parameter values)
        self.formulas = formulas
        self.names = names or {}  # formula, parameter or term -> its name per language (the lesson's [names])
        self.limit = limit
        self._index: dict[Number, list[_Entry]] | None = None
        self.size = 0

    @classmethod
    def for_lesson(cls, lesson: Lesson) -> Diagnoser:
        """From a :class:`~bertdrill.core.lesson.Lesson` (its parameter sets and formulas)."""
        return cls({name: (params.title, params.values) for name, params in lesson.params.items()},
                   lesson.formulas, names=lesson.names)

    def value(self, name: str, set_name: str) -> Number | None:
        """Formula ``name``'s value at ``set_name``, or None where it cannot be computed."""
        return self._resolved().get(set_name, {}).get(name)

    def named(self, language: str) -> dict[str, str]:
        """What the lesson calls its formulas, parameters and terms in ``language``."""
        return {key: texts[language] for key, texts in self.names.items() if texts.get(language)}

    # ----------------------------------------------------------------- looking up

    def diagnose(self, value: Number, *, expected: Number | None = None, name: str | None = None,
                 set_name: str | None = None) -> Diagnosis | None:
        """What ``value``, given instead of ``expected`` (formula ``name`` at ``set_name``), most likely is."""
        if expected is not None and value == expected:
            return None
        entries = self.index().get(value, [])
        if entries:
            ranked = sorted(entries, key=lambda e: _preference(e, name, set_name))
            best = ranked[0]
            quantity = best.quantity
            if quantity.name == name and quantity.part is None and quantity.change is None:
                return Diagnosis(Slip.OTHER_SET, value, quantity)
            return Diagnosis(_SLIPS[best.rank], value, quantity, _as_likely(ranked, name, set_name))
        if expected is not None:
            return digit_slip(value, expected)
        return None

    def diagnose_everywhere(self, values: Mapping[str, Number], *, name: str | None = None) -> Diagnosis | None:
        """A quantity equal to ``values`` (set name -> value) at every set given: for typed expressions.

        ``4*d*d`` on the attention blank equals attention without its biases in BERT-base and in
        BERT-large alike, so it is that, and not a coincidence of one set.
        """
        found: dict[tuple[object, ...], _Entry] | None = None
        for set_name, value in values.items():
            here = {_family(e.quantity): e for e in self.index().get(value, []) if e.quantity.set_name == set_name}
            found = here if found is None else {k: e for k, e in found.items() if k in here}
            if not found:
                return None
        if not found:
            return None
        ranked = sorted(found.values(), key=lambda e: _preference(e, name, None))
        best = ranked[0]
        return Diagnosis(_SLIPS[best.rank], next(iter(values.values())), best.quantity,
                         _as_likely(ranked, name, None))

    # ----------------------------------------------------------------- building the index

    def index(self) -> dict[Number, list[_Entry]]:
        if self._index is None:
            self._index = {}
            for rank, quantity, value in self._quantities():
                if self.size >= self.limit:
                    break
                self._index.setdefault(value, []).append(_Entry(quantity, rank, self.size))
                self.size += 1
        return self._index

    def _resolved(self) -> dict[str, dict[str, Number]]:
        resolved = {}
        for set_name, (_title, values) in self.params.items():
            try:
                resolved[set_name] = formula.resolve(values, self.formulas)
            except FormulaError:
                continue  # a set where a formula fails: the lesson check reports it
        return resolved

    def _quantities(self) -> Iterator[tuple[int, Quantity, Number]]:
        resolved = self._resolved()
        titles = {set_name: title for set_name, (title, _values) in self.params.items()}
        for set_name, values in resolved.items():
            for name in self.formulas:
                yield _FORMULA, Quantity(name, set_name, titles[set_name]), values[name]
        for set_name, values in resolved.items():
            for name in self.params[set_name][1]:
                yield _PARAMETER, Quantity(name, set_name, titles[set_name], parameter=True), values[name]
        for name, parsed in self.formulas.items():
            for node in _parts(parsed.tree):
                part = ast.unparse(node)
                for set_name, values in resolved.items():
                    value = _evaluate(node, values)
                    if value is not None:
                        yield _PART, Quantity(name, set_name, titles[set_name], part=part), value
        order = formula.order(self.formulas, set(self.formulas) | {p for _t, v in self.params.values() for p in v})
        dependents = _Dependents(self.formulas, order)
        names = set(self.formulas)
        for name in order:
            for change, tree in _variants(name, self.formulas[name].tree, names):
                for set_name, values in resolved.items():
                    value = _evaluate(tree, values)
                    if value is None:
                        continue
                    slipped = {name: value}  # the values the slip changes, over the set's own
                    changed = ChainMap(slipped, values)
                    yield _LEFT_OUT, Quantity(name, set_name, titles[set_name], change=change), value
                    for later in dependents[name]:
                        value = _evaluate(self.formulas[later].tree, changed)
                        if value is None:
                            break
                        slipped[later] = value
                        yield _CARRIED, Quantity(later, set_name, titles[set_name], change=change), value
        yield from self._everywhere(order, resolved, titles)

    def _everywhere(self, order: list[str], resolved: Mapping[str, Mapping[str, Number]],
                    titles: Mapping[str, str]) -> Iterator[tuple[int, Quantity, Number]]:
        """Slips made in every formula at once, as a learner repeats one in every layer.

        Every bias left out, or one term (``2 * d``, a LayerNorm) left out wherever it is added.
        A formula is named only where the slip reaches it through two formulas or more: with one,
        it is that formula's own slip, found above.
        """
        uses = _closures(self.formulas, order)
        for change, trees in _rewrites(self.formulas):
            touched = {name for name, tree in trees.items() if tree is not self.formulas[name].tree}
            for set_name, values in resolved.items():
                changed = dict(values)
                for name in order:
                    value = _evaluate(trees[name], changed)
                    if value is None:
                        break
                    changed[name] = value
                    if len(uses[name] & touched) >= 2:
                        yield _CARRIED, Quantity(name, set_name, titles[set_name], change=change), value


def _preference(entry: _Entry, name: str | None, set_name: str | None) -> tuple[bool, bool, int, bool, int, int]:
    quantity = entry.quantity
    same_formula = quantity.name == name and quantity.part is None and quantity.change is None
    # The asked formula first (the other model's value, or it with a slip), then the rest.
    return (not same_formula, quantity.name != name, _LIKELIHOOD[entry.rank], quantity.set_name != set_name,
            entry.rank, entry.order)


# A slip in the asked formula and one carried from a formula it uses are as likely as each other:
# 109,445,376 is the total with attention's biases left out and with both LayerNorms left out of
# every layer, and the learner is told both.
_LIKELIHOOD = {_FORMULA: 0, _PARAMETER: 1, _LEFT_OUT: 2, _CARRIED: 2, _PART: 3}
MAX_ALTERNATIVES = 3
"""At most this many explanations of one number are given."""


def _as_likely(ranked: list[_Entry], name: str | None, set_name: str | None) -> tuple[Quantity, ...]:
    """The other quantities as likely as the first of ``ranked``, each explanation once."""
    first = _preference(ranked[0], name, set_name)[:4]
    said = {_said(ranked[0].quantity)}
    others: list[Quantity] = []
    for entry in ranked[1:]:
        if _preference(entry, name, set_name)[:4] != first or len(others) + 1 >= MAX_ALTERNATIVES:
            break
        if _said(entry.quantity) not in said:
            said.add(_said(entry.quantity))
            others.append(entry.quantity)
    return tuple(others)


def _said(quantity: Quantity) -> tuple[object, ...]:
    return quantity.name, quantity.set_name, quantity.part, quantity.change, quantity.parameter


def _closures(formulas: Mapping[str, Formula], order: list[str]) -> dict[str, frozenset[str]]:
    """Each formula with every formula it uses, directly or not (one pass in dependency order)."""
    closures: dict[str, frozenset[str]] = {}
    for name in order:
        closures[name] = frozenset({name}).union(*(closures[used] for used in formulas[name].names
                                                   if used in closures))
    return closures


def _family(quantity: Quantity) -> tuple[object, ...]:
    """A quantity without its set: what must match at every set for an expression."""
    return quantity.name, quantity.part, quantity.change, quantity.parameter


def _evaluate(node: ast.expr, values: Mapping[str, Number]) -> Number | None:
    try:
        return Formula("", node, frozenset()).evaluate(values)
    except FormulaError:
        return None


class _Dependents:
    """The formulas built on each formula, directly or through others, in dependency order.

    Found when first asked for, by a walk over the formulas that use it: walking every path instead
    grows like Fibonacci's numbers on a chain (``g3 = g2 - g1``, ``g4 = g3 - g2``, ...), and a table of
    every pair grows with the square of the lesson. Each walk costs what its answer holds.
    """

    def __init__(self, formulas: Mapping[str, Formula], order: list[str]):
        self.position = {name: index for index, name in enumerate(order)}
        self.users: dict[str, list[str]] = {}
        for name in order:
            for used in formulas[name].names:
                if used in self.position and used != name:
                    self.users.setdefault(used, []).append(name)

        self.found: dict[str, list[str]] = {}

    def __getitem__(self, name: str) -> list[str]:
        if name not in self.found:
            self.found[name] = self._walk(name)
        return self.found[name]

    def _walk(self, name: str) -> list[str]:
        found: set[str] = set()
        waiting = [name]
        while waiting:
            for user in self.users.get(waiting.pop(), []):
                if user not in found:
                    found.add(user)
                    waiting.append(user)
        return sorted(found, key=self.position.__getitem__)


# --- the shapes of a formula ---------------------------------------------------------------------

def _terms(node: ast.expr, sign: int = 1) -> list[tuple[int, ast.expr]]:
    """A sum flattened: ``a - b + c`` -> [(+1, a), (-1, b), (+1, c)]."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        right_sign = sign if isinstance(node.op, ast.Add) else -sign
        return _terms(node.left, sign) + _terms(node.right, right_sign)
    return [(sign, node)]


def _factors(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _sum(terms: list[tuple[int, ast.expr]]) -> ast.expr:
    (sign, first), *rest = terms
    tree: ast.expr = first if sign > 0 else ast.UnaryOp(ast.USub(), first)
    for sign, term in rest:
        tree = ast.BinOp(tree, ast.Add() if sign > 0 else ast.Sub(), term)
    return tree


def _product(factors: list[ast.expr]) -> ast.expr:
    tree = factors[0]
    for factor in factors[1:]:
        tree = ast.BinOp(tree, ast.Mult(), factor)
    return tree


def _children(node: ast.expr) -> list[ast.expr]:
    """The operands of a node, a whole sum or product counting as one node."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return [term for _sign, term in _terms(node)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node)
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Call):
        return list(node.args)
    return []


def _parts(tree: ast.expr) -> Iterator[ast.expr]:
    """Every operation inside a formula, not the formula itself: ``n * layer`` in ``total``."""
    for child in _children(tree):
        if _children(child):
            yield child
            yield from _parts(child)


def _replace(node: ast.expr, target: ast.expr, replacement: ast.expr) -> ast.expr:
    """A copy of ``node`` with ``target`` (a sum or product as a whole) replaced."""
    if node is target:
        return replacement
    if isinstance(node, ast.BinOp):
        return ast.BinOp(_replace(node.left, target, replacement), node.op, _replace(node.right, target, replacement))
    if isinstance(node, ast.UnaryOp):
        return ast.UnaryOp(node.op, _replace(node.operand, target, replacement))
    if isinstance(node, ast.Call):
        return ast.Call(node.func, [_replace(arg, target, replacement) for arg in node.args], [])
    return node


def _operations(tree: ast.expr) -> Iterator[ast.expr]:
    """The formula and every operation in it, a whole sum or product counting once."""
    yield tree
    yield from _parts(tree)


def _variants(name: str, tree: ast.expr, formulas: set[str]) -> Iterator[tuple[Change, ast.expr]]:
    """The formula with one slip: a term left out (one copy, or all copies), a factor, or every bias.

    ``formulas`` are the lesson's formula names: a formula added to a product (``embeddings`` in
    ``total``) is a part of the model, never a bias.
    """
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        return
    seen: set[str] = {ast.unparse(tree)}

    def new(change: Change, changed: ast.expr) -> Iterator[tuple[Change, ast.expr]]:
        source = ast.unparse(changed)
        # A slip that leaves a bare number (``4`` of ``4 * (d * d + d)``) explains nothing: skipped.
        if source not in seen and any(isinstance(node, ast.Name) for node in ast.walk(changed)):
            seen.add(source)
            yield change, changed

    for node in _operations(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            yield from _miscounts(name, tree, node, new)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            terms = _terms(node)
            texts = [ast.unparse(term) for _sign, term in terms]
            for index, text in enumerate(texts):
                rest = terms[:index] + terms[index + 1:]
                bias = _is_bias(terms[index][1], terms, formulas)
                yield from new(Change(name, (text,), biases=bias), _replace(tree, node, _sum(rest)))
                copies = [term for term, other in zip(terms, texts) if other != text]
                if texts.count(text) > 1 and copies:
                    yield from new(Change(name, (text,) * texts.count(text)), _replace(tree, node, _sum(copies)))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            factors = _factors(node)
            for index, factor in enumerate(factors):
                others = factors[:index] + factors[index + 1:]
                yield from new(Change(name, (ast.unparse(factor),), factor=True),
                               _replace(tree, node, _product(others)))
    biases: list[str] = []
    unbiased = _without_biases(tree, biases, formulas)
    if biases:
        yield from new(Change(name, tuple(biases), biases=True), unbiased)


def _miscounts(name: str, tree: ast.expr, product: ast.expr,
               new: Callable[[Change, ast.expr], Iterator[tuple[Change, ast.expr]]]) -> Iterator[tuple[Change, ast.expr]]:
    """A count in a product off by one: three projections for four, ``3 * (d * d + d)``."""
    factors = _factors(product)
    for index, factor in enumerate(factors):
        if not (isinstance(factor, ast.Constant) and type(factor.value) is int and factor.value >= 2):
            continue
        for count in (factor.value - 1, factor.value + 1):
            changed = _product([*factors[:index], ast.Constant(count), *factors[index + 1:]])
            yield from new(Change(name, (ast.unparse(product),), replaced=ast.unparse(changed)),
                           _replace(tree, product, changed))


def _rewrites(formulas: Mapping[str, Formula]) -> Iterator[tuple[Change, dict[str, ast.expr]]]:
    """Every formula with the same slip: every bias left out; one repeated term left out everywhere."""
    names = set(formulas)
    biases: list[str] = []
    trees = {name: _unbiased_or_same(parsed.tree, biases, names) for name, parsed in formulas.items()}
    if sum(tree is not formulas[name].tree for name, tree in trees.items()) >= 2:
        yield Change("", tuple(dict.fromkeys(biases)), biases=True, everywhere=True), trees
    where: dict[str, set[str]] = {}
    for name, parsed in formulas.items():
        for node in _operations(parsed.tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
                for _sign, term in _terms(node):
                    # `2 * d` or a formula; a lone parameter is a bias, left out by the rewrite above
                    if _children(term) or (isinstance(term, ast.Name) and term.id in names):
                        where.setdefault(ast.unparse(term), set()).add(name)
    repeated = [(term, users) for term, users in where.items() if len(users) >= 2]
    for text, users in repeated[:MAX_REWRITES]:
        without = {name: _without_term(parsed.tree, text) if name in users else parsed.tree
                   for name, parsed in formulas.items()}
        kept = {name: tree for name, tree in without.items() if tree is not None}
        if len(kept) == len(without):
            yield Change("", (text,), everywhere=True), kept


def _unbiased_or_same(tree: ast.expr, dropped: list[str], formulas: set[str]) -> ast.expr:
    """``tree`` without its biases, or ``tree`` itself (the same object) when it has none."""
    before = len(dropped)
    unbiased = _without_biases(tree, dropped, formulas)
    return unbiased if len(dropped) > before else tree


def _without_term(node: ast.expr, term: str) -> ast.expr | None:
    """``node`` with every term ``term`` left out of its sums; None if a sum would be left empty."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        kept = []
        for sign, child in _terms(node):
            if ast.unparse(child) == term:
                continue
            changed = _without_term(child, term)
            if changed is None:
                return None
            kept.append((sign, changed))
        return _sum(kept) if kept else None
    if isinstance(node, ast.BinOp):
        left, right = _without_term(node.left, term), _without_term(node.right, term)
        return None if left is None or right is None else ast.BinOp(left, node.op, right)
    if isinstance(node, ast.UnaryOp):
        operand = _without_term(node.operand, term)
        return None if operand is None else ast.UnaryOp(node.op, operand)
    if isinstance(node, ast.Call):
        args = [changed for arg in node.args if (changed := _without_term(arg, term)) is not None]
        return ast.Call(node.func, args, []) if len(args) == len(node.args) else None
    return node


def _is_bias(term: ast.expr, terms: list[tuple[int, ast.expr]], formulas: set[str]) -> bool:
    """A lone parameter added to a product of parameters: ``d`` in ``d * d + d``, ``f`` in ``d * f + f``."""
    return isinstance(term, ast.Name) and term.id not in formulas and any(_is_product(t) for _s, t in terms)


def _without_biases(node: ast.expr, dropped: list[str], formulas: set[str]) -> ast.expr:
    """``node`` with every bias left out (see :func:`_is_bias`)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        terms = _terms(node)
        kept = [(sign, term) for sign, term in terms if not _is_bias(term, terms, formulas)]
        dropped.extend(ast.unparse(term) for _sign, term in terms if _is_bias(term, terms, formulas))
        return _sum([(sign, _without_biases(term, dropped, formulas)) for sign, term in kept])
    if isinstance(node, ast.BinOp):
        return ast.BinOp(_without_biases(node.left, dropped, formulas), node.op,
                         _without_biases(node.right, dropped, formulas))
    return node


def _is_product(node: ast.expr) -> bool:
    """A product of two or more parameters or formulas: ``d * d``, ``d * f``, ``n * layer``."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and \
        sum(isinstance(f, ast.Name) for f in _factors(node)) >= 2


# --- slips of the fingers ------------------------------------------------------------------------

def digit_slip(value: Number, expected: Number) -> Diagnosis | None:
    """One digit off, two swapped, one missing or extra, or a power of ten: for whole numbers."""
    if not isinstance(value, int) or not isinstance(expected, int) or value <= 0 or expected <= 0:
        return _power_of_ten(value, expected)
    typed, want = str(value), str(expected)
    if len(typed) == len(want):
        differ = [i for i, (a, b) in enumerate(zip(typed, want)) if a != b]
        if len(differ) == 1 and len(want) >= MIN_DIGITS:
            return Diagnosis(Slip.ONE_DIGIT, value)
        if len(differ) == 2 and typed[differ[0]] == want[differ[1]] and typed[differ[1]] == want[differ[0]]:
            return Diagnosis(Slip.SWAPPED, value)
        return None
    power = _power_of_ten(value, expected)
    if power is not None:
        return power
    if len(typed) == len(want) - 1 and _one_deleted(typed, want):
        return Diagnosis(Slip.DIGIT_MISSING, value)
    if len(typed) == len(want) + 1 and _one_deleted(want, typed):
        return Diagnosis(Slip.DIGIT_EXTRA, value)
    return None


def _one_deleted(short: str, long: str) -> bool:
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def _power_of_ten(value: Number, expected: Number) -> Diagnosis | None:
    """``value`` is ``expected`` times 10^k, exactly or with the digits beyond it cut off (``2,383,718``)."""
    if value == 0 or expected == 0 or (value < 0) != (expected < 0):
        return None
    for power in range(1, MAX_POWER + 1):
        factor = 10**power
        if value == expected * factor:
            return Diagnosis(Slip.POWER_OF_TEN, value, factor=factor)
        shrunk = Fraction(expected) / factor
        if value == shrunk or (len(str(abs(int(value)))) >= MIN_DIGITS and value in (int(shrunk), round(shrunk))):
            return Diagnosis(Slip.POWER_OF_TEN, value, factor=factor, smaller=True)
    return None


# --- in words ------------------------------------------------------------------------------------

def describe(diagnosis: Diagnosis, *, shown: str, expected_name: str | None = None,
             names: Mapping[str, str] | None = None) -> str:
    """The diagnosis as one sentence; ``shown`` is the learner's value as the screen prints it.

    ``names`` are what the lesson calls its formulas, parameters and terms in the learner's
    language (:meth:`Diagnoser.named`); what it does not name is shown as the lesson writes it.
    Set titles are the lesson's own (``BERT-base``); the sentence around them is translated.
    """
    names = names or {}
    quantity = diagnosis.quantity
    expected = names.get(expected_name, expected_name) if expected_name else None
    match diagnosis.slip:
        case Slip.OTHER_SET:
            assert quantity is not None
            return _("{value} is {name} of {set}: the value for the other parameter set.").format(
                value=shown, name=names.get(quantity.name, quantity.name), set=quantity.set_title)
        case Slip.OTHER_QUANTITY | Slip.PART | Slip.LEFT_OUT:
            assert quantity is not None
            if diagnosis.others:
                every = [quantity_words(q, names) for q in (quantity, *diagnosis.others)]
                what = _("{some} or {last}").format(some=", ".join(every[:-1]), last=every[-1])
                if expected:
                    return _("{value} is either {what}, not {expected}.").format(value=shown, what=what,
                                                                                expected=expected)
                return _("{value} is either {what}.").format(value=shown, what=what)
            what = quantity_words(quantity, names)
            if expected and not quantity.parameter:
                return _("{value} is {what}, not {expected}.").format(value=shown, what=what, expected=expected)
            return _("{value} is {what}.").format(value=shown, what=what)
        case Slip.ONE_DIGIT:
            return _("One digit is off.")
        case Slip.SWAPPED:
            return _("Two digits are swapped.")
        case Slip.DIGIT_MISSING:
            return _("A digit is missing.")
        case Slip.DIGIT_EXTRA:
            return _("There is one digit too many.")
        case Slip.POWER_OF_TEN:
            power = f"{diagnosis.factor:,}"
            if diagnosis.smaller:
                return _("Off by a power of ten: about {factor} times too small.").format(factor=power)
            return _("Off by a power of ten: {factor} times too large.").format(factor=power)
    raise AssertionError(diagnosis.slip)  # pragma: no cover - every Slip is handled above


def quantity_words(quantity: Quantity, names: Mapping[str, str] | None = None) -> str:
    """``attention of BERT-base``, ``the part n * layer of total of BERT-base``, ``d of BERT-base`` ..."""
    names = names or {}
    base = _("{name} of {set}").format(name=names.get(quantity.name, quantity.name), set=quantity.set_title)
    if quantity.part is not None:
        return _("the part {part} of {quantity}").format(part=_term(quantity.part, names), quantity=base)
    change = quantity.change
    if change is None:
        return base
    dropped = (", " if change.biases else " + ").join(_term(term, names) for term in dict.fromkeys(change.dropped))
    fields = {"quantity": base, "terms": dropped, "formula": names.get(change.formula, change.formula)}
    return _change_words(change, elsewhere=bool(change.formula) and change.formula != quantity.name).format(
        **fields, factor=dropped, term=dropped, old=dropped, count=len(change.dropped), new=change.replaced)


def _change_words(change: Change, *, elsewhere: bool) -> str:
    """The sentence for a change; ``elsewhere``: made in a formula the quantity is built on."""
    if change.replaced is not None:
        return _("{quantity} with {new} for {old} in {formula}") if elsewhere else \
            _("{quantity} with {new} for {old}")
    if change.everywhere and change.biases:
        return _("{quantity} with every bias left out, in every formula ({terms})")
    if change.everywhere:
        return _("{quantity} with {term} left out everywhere it is added")
    if change.factor:
        return _("{quantity} without the factor {factor} in {formula}") if elsewhere else \
            _("{quantity} without the factor {factor}")
    if change.biases:
        return _("{quantity} with the biases of {formula} left out ({terms})") if elsewhere else \
            _("{quantity} with its biases left out ({terms})")
    if len(change.dropped) > 1 and len(set(change.dropped)) == 1:
        return _("{quantity} without all {count} copies of {term} in {formula}") if elsewhere else \
            _("{quantity} without all {count} copies of {term}")
    return _("{quantity} without {terms} in {formula}") if elsewhere else _("{quantity} without {terms}")


def _term(source: str, names: Mapping[str, str]) -> str:
    """A term as the lesson writes it, with its name when the lesson gives one: ``2 * d (LayerNorm)``."""
    return f"{source} ({names[source]})" if source in names else source
