"""A numeric item as a Moodle calculated question: its formula in Moodle's syntax and a dataset of variants.

Moodle's calculated questions (``qtype_calculated``, and ``calculatedsimple``, which imports the same
way) hold one formula per answer over *wildcards* written ``{d}``, and a dataset per wildcard: item 1
of every dataset together is one variant, item 2 the next, and so on. Moodle picks an item number per
attempt, puts ``(value)`` for each ``{name}`` and evaluates the formula as PHP, so every student gets
fresh numbers and Moodle grades them.

The translation follows what Moodle accepts (``qtype_calculated_find_formula_errors``): numbers, the
wildcards, ``+ - * /``, parentheses and its functions (``pow``, ``abs``, ``min``, ``max``). The lesson's
formulas are written out inline (``layer`` becomes the attention, LayerNorm and FFN terms over
``{d}`` and ``{f}``); parameters every variant shares (``V = 30522``) are written as numbers. A formula
needing what Moodle computes differently is not translated, and its item stays a numerical question
per parameter set: ``round`` (PHP rounds halves away from zero, the lesson to even), ``//`` and ``%``
(PHP's ``%`` truncates to integers first).

Texts keep their placeholders as Moodle's: a varying parameter as ``{d}``, a formula's value as
``{=...}``; every other brace is an HTML entity, so no lesson text can become a wildcard or a formula.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from bertdrill.core import formula
from bertdrill.core.formula import Number
from bertdrill.core.lesson import Lesson, NumericItem
from bertdrill.core.lesson.model import PLACEHOLDER
from bertdrill.core.lesson.variants import Variant
from bertdrill.core.numbers import format_number

MAX_ITEMS = 100
"""Dataset items per question: Moodle's own limit (``qtype_calculated::MAX_DATASET_ITEMS``)."""

Segment = tuple[bool, str]
"""A piece of a text: (False, plain text) or (True, Moodle markup: ``{d}`` or ``{=...}``)."""


@dataclass(frozen=True)
class Calculated:
    """One numeric item as a calculated question, with the numbers bertdrill proves for each dataset item."""

    item_key: str  # "bert-basics/attention-params"
    formula: str  # Moodle's syntax: "4 * ({d} * {d} + {d})"
    wildcards: tuple[str, ...]  # the datasets, in the lesson's order of parameters
    chosen: tuple[Variant, ...]  # dataset item k is variant k (one tuple for all of a lesson's questions)
    answers: tuple[Number, ...]  # the lesson's value of the item's formula for dataset item k
    text: tuple[Segment, ...]  # the prompt, with wildcards where the variant's values go
    feedback: tuple[Segment, ...]  # the explanation, likewise
    tolerance: Fraction  # relative, as the item says

    def dataset(self, wildcard: str) -> list[Number]:
        """One wildcard's values, item by item: a bank of 14,000 such questions kept their own copies (270 MB)."""
        return [variant.values[wildcard] for variant in self.chosen]

    @property
    def variants(self) -> tuple[str, ...]:
        """Each dataset item's variant key (``d=512,f=2048,n=6,h=8``)."""
        return tuple(variant.key for variant in self.chosen)


def calculated(lesson: Lesson, item: NumericItem, variants: Sequence[Variant],
               resolved: Sequence[Mapping[str, Number]], language: str) -> Calculated | None:
    """``item`` as a calculated question over ``variants`` (at most :data:`MAX_ITEMS`; ``resolved`` holds
    each one's parameter and formula values); None when Moodle cannot compute it the lesson's way, or
    the lesson gives it no variants."""
    space = lesson.variant_space
    if space is None or not item.varies or not variants:
        return None
    varying = frozenset(space.varying)
    fixed = {name: value for name, value in variants[0].values.items() if name not in varying}
    moodle = moodle_formula(lesson, item.formula, varying, fixed)
    if moodle is None:
        return None
    text = _segments(lesson, _stated_prompt(lesson, item, language), language, varying, fixed)
    feedback = _segments(lesson, item.explanation.get(language, ""), language, varying, fixed)
    if text is None or feedback is None:
        return None
    used = set(_wildcards(moodle)) | {value for markup, value in (*text, *feedback) if markup
                                      for value in _wildcards(value)}
    wildcards = tuple(name for name in space.order if name in used)
    if not wildcards or any(not _plain_number(variant.values[name]) for variant in variants for name in wildcards):
        return None
    chosen = tuple(variants[:MAX_ITEMS])  # a tuple of at most MAX_ITEMS is itself: shared, not copied
    answers = tuple(formula.evaluate(item.formula, values) for values in resolved[:MAX_ITEMS])
    return Calculated(item_key=f"{lesson.id}/{item.id}", formula=moodle, wildcards=wildcards, chosen=chosen,
                      answers=answers, text=text, feedback=feedback, tolerance=item.tolerance)


def moodle_number(value: Number) -> str | None:
    """A number as Moodle's formulas and datasets write it: ``768``, ``0.5``; None if no decimal shows it exactly."""
    if isinstance(value, int):
        return str(value)
    if not _plain_number(value):
        return None
    return formula.format_number(value)


def _plain_number(value: Number) -> bool:
    if isinstance(value, int):  # most values: a Fraction made of each was two thirds of a bank's calculated questions
        return True
    denominator = Fraction(value).denominator
    for factor in (2, 5):
        while denominator % factor == 0:
            denominator //= factor
    return denominator == 1


def _wildcards(markup: str) -> list[str]:
    return [match.group(1) for match in PLACEHOLDER.finditer(markup) if match.group(1)]


# --- formulas -------------------------------------------------------------------------------------

_SUM, _PRODUCT, _UNARY, _ATOM = 1, 2, 3, 4
_OPERATORS: dict[type[ast.operator], tuple[str, int]] = {
    ast.Add: ("+", _SUM), ast.Sub: ("-", _SUM), ast.Mult: ("*", _PRODUCT), ast.Div: ("/", _PRODUCT)}
_FUNCTIONS = {"abs", "min", "max"}


def moodle_formula(lesson: Lesson, expression: str, varying: Collection[str],
                   fixed: dict[str, Number]) -> str | None:
    """``expression`` in Moodle's syntax, the lesson's formulas written out; None where Moodle differs."""
    try:
        found = _emit(formula.parse(expression).tree, lesson, varying, fixed, ())
    except _Untranslatable:
        return None
    return found[0]


class _Untranslatable(Exception):
    pass


def _emit(node: ast.expr, lesson: Lesson, varying: Collection[str], fixed: dict[str, Number],
          inside: tuple[str, ...]) -> tuple[str, int]:
    """The Moodle text of ``node`` and how tightly it binds (to parenthesise only where needed)."""
    match node:
        case ast.Constant(value=bool()):
            raise _Untranslatable
        case ast.Constant(value=int() | float() as value):
            number = value if isinstance(value, int) else Fraction(repr(value))
            return _literal(number)
        case ast.Name(id=name) if name in lesson.formulas:
            if name in inside:
                raise _Untranslatable  # a cycle: check refuses such a lesson
            return _emit(lesson.formulas[name].tree, lesson, varying, fixed, (*inside, name))
        case ast.Name(id=name) if name in varying:
            if not name[:1].isalpha():
                raise _Untranslatable  # Moodle's wildcards start with a letter
            return f"{{{name}}}", _ATOM
        case ast.Name(id=name) if name in fixed:
            return _literal(fixed[name])
        case ast.BinOp(left=left, op=ast.Pow(), right=right):
            base = _emit(left, lesson, varying, fixed, inside)[0]
            exponent = _emit(right, lesson, varying, fixed, inside)[0]
            return f"pow({base}, {exponent})", _ATOM
        case ast.BinOp(left=left, op=op, right=right) if type(op) in _OPERATORS:
            symbol, level = _OPERATORS[type(op)]
            left_text, left_level = _emit(left, lesson, varying, fixed, inside)
            right_text, right_level = _emit(right, lesson, varying, fixed, inside)
            if left_level < level:
                left_text = f"({left_text})"
            if right_level < level or (right_level == level and symbol in "-/"):
                right_text = f"({right_text})"
            return f"{left_text} {symbol} {right_text}", level
        case ast.UnaryOp(op=ast.USub(), operand=operand):
            text, level = _emit(operand, lesson, varying, fixed, inside)
            return f"-({text})" if level < _ATOM else f"-{text}", _UNARY
        case ast.UnaryOp(op=ast.UAdd(), operand=operand):
            return _emit(operand, lesson, varying, fixed, inside)
        case ast.Call(func=ast.Name(id=name), args=args) if name in _FUNCTIONS:
            inner = ", ".join(_emit(arg, lesson, varying, fixed, inside)[0] for arg in args)
            return f"{name}({inner})", _ATOM
    raise _Untranslatable


def _literal(value: Number) -> tuple[str, int]:
    text = moodle_number(value)
    if text is None:
        raise _Untranslatable
    return (f"({text})", _ATOM) if value < 0 else (text, _ATOM)


# --- texts ----------------------------------------------------------------------------------------

def _stated_prompt(lesson: Lesson, item: NumericItem, language: str) -> str:
    """The prompt with ``{set}`` as the variant's title, and the values the formula needs that the title
    does not show stated after it, as a review's fresh numbers are (``(V = {V}, L = {L}, T = {T})``)."""
    space = lesson.variant_space
    assert space is not None
    title = space.title_template(language)
    prompt = item.prompt[language].replace("{set}", title)
    shown = {match.group(1) for match in PLACEHOLDER.finditer(prompt) if match.group(1)}
    needed = _parameters(lesson, item.formula)
    missing = [name for name in space.order if name in needed and name not in shown]
    if not missing:
        return prompt
    return f"{prompt} ({', '.join(f'{name} = {{{name}}}' for name in missing)})"


def _parameters(lesson: Lesson, expression: str) -> set[str]:
    seen: set[str] = set()
    todo = list(formula.parse(expression).names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            if name in lesson.formulas:
                todo.extend(lesson.formulas[name].names)
    return seen - set(lesson.formulas)


def _segments(lesson: Lesson, text: str, language: str, varying: Collection[str],
              fixed: dict[str, Number]) -> tuple[Segment, ...] | None:
    """A lesson text's pieces: its words, and each placeholder as Moodle markup or as the number it stands
    for (a parameter every variant shares, or a value of a named set: ``{T@bert-base}``)."""
    segments: list[Segment] = []
    end = 0
    for match in PLACEHOLDER.finditer(text):
        segments.append((False, text[end:match.start()]))
        end = match.end()
        name, explicit = match.group(1), match.group(2)
        if name is None:  # {{ or }}: a literal brace
            segments.append((False, match.group(0)[0]))
        elif explicit is not None:
            segments.append((False, lesson.render(match.group(0), language)))
        elif name in varying:
            segments.append((True, f"{{{name}}}"))
        elif name in fixed:
            segments.append((False, format_number(fixed[name], language)))
        elif name in lesson.formulas:
            moodle = moodle_formula(lesson, name, varying, fixed)
            if moodle is None:
                return None
            segments.append((True, f"{{={moodle}}}"))
        else:
            return None
    segments.append((False, text[end:]))
    return tuple(segment for segment in segments if segment[1])
