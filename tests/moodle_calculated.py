"""How Moodle computes and grades a calculated question, for the tests: a port of Moodle's rules.

From ``question/type/calculated/questiontype.php`` and ``question.php`` and
``question/type/numerical/question.php`` / ``questiontype.php``:

- :func:`find_formula_errors` is ``qtype_calculated_find_formula_errors``: the wildcards ``{name}``
  become ``1``, spaces go, the text is lower-cased, and function calls and parentheses are reduced
  innermost first by Moodle's regular expression (each function with its number of arguments); what
  is left may hold only ``-+/*%>:^~<?=&|!.0-9eE``. Moodle refuses to save a question whose answer
  formula or text formula fails it (``validate_question_data``, on import too).
- :func:`calculate` is ``qtype_calculated_variable_substituter::calculate``: each ``{name}`` becomes
  ``(value)``, and the result is PHP's ``eval`` of that text. :func:`php_eval` evaluates the PHP
  arithmetic such a formula can hold, with PHP 8's semantics: integers stay integers (64-bit) until
  they overflow to floats; ``/`` gives an integer when it divides exactly, else a float; ``pow`` of
  integers is an integer when it fits; ``round`` rounds halves away from zero.
- :func:`replace_expressions_in_text` is the substituter's: ``{=formula}`` becomes its value and
  ``{name}`` the value as written in the dataset.
- :func:`apply_units` and :func:`within_tolerance` are how a numerical (and a calculated) question
  grades what a student types: spaces dropped; with a ``.`` or more than one ``,`` the commas are
  thousands separators, else a ``,`` is a decimal point; the leading number is read; the answer's
  tolerance interval (relative, nominal or geometric) with Moodle's ``1e-14`` slack.

Written from those rules, not from bertdrill, so the tests catch an exporter that only agrees with itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

PHP_INT_MAX = 2**63 - 1
PRECISION = 14  # PHP's ini precision, which Moodle's tolerance slack uses

_WILDCARD = re.compile(r"\{[A-Za-z][^>} <{\"']*\}")
_SAFE = "-+/*%>:^\\~<?=&|!"
_SAFE_CLASS = "".join("\\" + char for char in _SAFE)
_OPERATOR_OR_NUMBER = f"[{_SAFE_CLASS}.0-9eE]"
_CALL = re.compile(f"(^|[{_SAFE_CLASS},(])([a-z0-9_]*)\\(({_OPERATOR_OR_NUMBER}+(,{_OPERATOR_OR_NUMBER}+"
                   f"((,{_OPERATOR_OR_NUMBER}+)+)?)?)?\\)")
_LEFT_OVER = re.compile(f"[^{_SAFE_CLASS}.0-9eE]+")
_ONE_ARGUMENT = {"abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bindec", "ceil", "cos", "cosh",
                 "decbin", "decoct", "deg2rad", "exp", "expm1", "floor", "is_finite", "is_infinite", "is_nan",
                 "log10", "log1p", "octdec", "rad2deg", "sin", "sinh", "sqrt", "tan", "tanh"}


class MoodleFormulaError(Exception):
    """Moodle refuses this formula, or PHP cannot evaluate it."""


def _isset(match: re.Match[str], index: int) -> bool:
    """PHP's preg_match leaves out trailing groups that took no part: isset($regs[index])."""
    highest = max((group for group in range(1, (match.re.groups or 0) + 1) if match.start(group) != -1), default=0)
    return index <= highest


def _empty(match: re.Match[str], index: int) -> bool:
    """PHP's empty($regs[index]): missing, "" or "0"."""
    return not _isset(match, index) or (match.group(index) or "") in ("", "0")


def find_formula_errors(formula: str) -> str | None:
    """None when Moodle accepts ``formula``; else the error Moodle reports."""
    while (found := _WILDCARD.search(formula)) is not None:
        formula = formula.replace(found.group(0), "1")
    formula = formula.replace(" ", "").lower()
    while (regs := _CALL.search(formula)) is not None:
        name = regs.group(2)
        if name == "":
            if (_isset(regs, 4) and regs.group(4)) or len(regs.group(3) or "") == 0:
                return f"illegalformulasyntax: {regs.group(0)}"
        elif name == "pi":
            if _isset(regs, 3):
                return f"functiontakesnoargs: {name}"
        elif name in _ONE_ARGUMENT:
            if not _empty(regs, 4) or _empty(regs, 3):
                return f"functiontakesonearg: {name}"
        elif name in ("log", "round"):
            if not _empty(regs, 5) or _empty(regs, 3):
                return f"functiontakesoneortwoargs: {name}"
        elif name in ("atan2", "fmod", "pow"):
            if not _empty(regs, 5) or _empty(regs, 4):
                return f"functiontakestwoargs: {name}"
        elif name in ("min", "max"):
            if _empty(regs, 4):
                return f"functiontakesatleasttwo: {name}"
        else:
            return f"unsupportedformulafunction: {name}"
        if regs.group(1):
            formula = formula.replace(regs.group(0), regs.group(1) + "1")
        else:
            formula = re.sub(f"^{re.escape(name)}\\([^)]*\\)", "1", formula, count=1)
    left = _LEFT_OVER.search(formula)
    return f"illegalformulasyntax: {left.group(0)}" if left else None


FORMULAS_IN_TEXT = re.compile(r"\{=([^{}]*(?:\{[^{}]+}[^{}]*)*)\}")


def find_formula_errors_in_text(text: str) -> str | None:
    errors = [error for found in FORMULAS_IN_TEXT.findall(text) if (error := find_formula_errors(found))]
    return " ".join(errors) if errors else None


# --- PHP arithmetic ------------------------------------------------------------------------------

PhpNumber = int | float
_TOKEN = re.compile(r"\s*(?:(\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)|(\d+)|([a-z_][a-z0-9_]*)"
                    r"|(\*\*|[-+*/%(),]))", re.I)


def _int_or_float(value: int) -> PhpNumber:
    return value if -PHP_INT_MAX - 1 <= value <= PHP_INT_MAX else float(value)


def _add(a: PhpNumber, b: PhpNumber) -> PhpNumber:
    return _int_or_float(a + b) if isinstance(a, int) and isinstance(b, int) else float(a) + float(b)


def _sub(a: PhpNumber, b: PhpNumber) -> PhpNumber:
    return _int_or_float(a - b) if isinstance(a, int) and isinstance(b, int) else float(a) - float(b)


def _mul(a: PhpNumber, b: PhpNumber) -> PhpNumber:
    return _int_or_float(a * b) if isinstance(a, int) and isinstance(b, int) else float(a) * float(b)


def _div(a: PhpNumber, b: PhpNumber) -> PhpNumber:
    if b == 0:
        raise MoodleFormulaError("DivisionByZeroError")
    if isinstance(a, int) and isinstance(b, int) and a % b == 0:
        return _int_or_float(a // b)
    return float(a) / float(b)


def _mod(a: PhpNumber, b: PhpNumber) -> PhpNumber:
    a, b = int(a), int(b)  # PHP's % casts both to int
    if b == 0:
        raise MoodleFormulaError("DivisionByZeroError")
    return int(math.fmod(a, b))


def _pow(a: PhpNumber, b: PhpNumber) -> PhpNumber:
    if isinstance(a, int) and isinstance(b, int) and b >= 0:
        return _int_or_float(a**b) if abs(a) < 2**63 and b < 64 or a in (0, 1, -1) else float(a) ** b
    result: float | complex = float(a) ** float(b)
    if isinstance(result, complex):  # a negative base to a fractional power: PHP's pow() is NAN, Python's complex
        return math.nan
    return result


def _round(value: PhpNumber, digits: PhpNumber = 0) -> float:
    scale = 10.0 ** int(digits)
    scaled = abs(float(value)) * scale
    rounded = math.floor(scaled + 0.5)
    return math.copysign(rounded / scale, float(value))


_PHP_FUNCTIONS: dict[str, Callable[..., PhpNumber]] = {
    "abs": lambda x: abs(x), "min": lambda *a: min(a), "max": lambda *a: max(a), "pow": _pow,
    "sqrt": lambda x: math.sqrt(x), "floor": lambda x: float(math.floor(x)), "ceil": lambda x: float(math.ceil(x)),
    "round": _round, "exp": lambda x: math.exp(x), "log": lambda x, b=math.e: math.log(x) / math.log(b),
    "log10": lambda x: math.log10(x), "pi": lambda: math.pi, "fmod": lambda a, b: math.fmod(a, b),
}


class _Parser:
    """PHP's precedence for what a formula holds: unary +/- over * / %, over + -; all left-associative."""

    def __init__(self, text: str):
        self.tokens: list[tuple[str, str]] = []
        position = 0
        text = text.strip()
        while position < len(text):
            found = _TOKEN.match(text, position)
            if found is None or found.end() == position:
                raise MoodleFormulaError(f"PHP ParseError at {text[position:]!r}")
            position = found.end()
            kind = "float" if found.group(1) else "int" if found.group(2) else "name" if found.group(3) else "op"
            self.tokens.append((kind, found.group(found.lastindex or 0)))
        self.position = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (value is not None and token[1] != value):
            raise MoodleFormulaError(f"PHP ParseError: expected {value!r}, found {token!r}")
        self.position += 1
        return token

    def expression(self) -> PhpNumber:
        value = self.term()
        while (token := self.peek()) is not None and token[1] in "+-" and token[0] == "op":
            self.take()
            value = _add(value, self.term()) if token[1] == "+" else _sub(value, self.term())
        return value

    def term(self) -> PhpNumber:
        value = self.unary()
        while (token := self.peek()) is not None and token[0] == "op" and token[1] in ("*", "/", "%"):
            self.take()
            right = self.unary()
            value = {"*": _mul, "/": _div, "%": _mod}[token[1]](value, right)
        return value

    def unary(self) -> PhpNumber:
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in "+-":
            self.take()
            operand = self.unary()
            return _mul(-1, operand) if token[1] == "-" and isinstance(operand, int) else (
                -operand if token[1] == "-" else operand)
        return self.power()

    def power(self) -> PhpNumber:
        base = self.atom()
        token = self.peek()
        if token is not None and token == ("op", "**"):
            self.take()
            return _pow(base, self.unary())  # right-associative, binds tighter than unary minus on its left
        return base

    def atom(self) -> PhpNumber:
        kind, text = self.take()
        if kind == "int":
            return _int_or_float(int(text))
        if kind == "float":
            return float(text)
        if kind == "op" and text == "(":
            value = self.expression()
            self.take(")")
            return value
        if kind == "name":
            name = text.lower()
            if name not in _PHP_FUNCTIONS:
                raise MoodleFormulaError(f"PHP Error: call to undefined function {name}()")
            self.take("(")
            arguments: list[PhpNumber] = []
            if self.peek() != ("op", ")"):
                arguments.append(self.expression())
                while self.peek() == ("op", ","):
                    self.take()
                    arguments.append(self.expression())
            self.take(")")
            result: PhpNumber = _PHP_FUNCTIONS[name](*arguments)
            return result
        raise MoodleFormulaError(f"PHP ParseError: unexpected {text!r}")


def php_eval(expression: str) -> PhpNumber:
    """``eval('return ' . $expression . ';')`` for the arithmetic a Moodle formula holds."""
    parser = _Parser(expression)
    value = parser.expression()
    if parser.peek() is not None:
        raise MoodleFormulaError(f"PHP ParseError: unexpected {parser.peek()!r}")
    return value


def substitute_for_eval(expression: str, values: Mapping[str, str]) -> str:
    for name, value in values.items():
        expression = expression.replace("{" + name + "}", f"({value})")
    return expression


def calculate(expression: str, values: Mapping[str, str]) -> PhpNumber:
    """What Moodle computes for an answer formula with one dataset item's values (as stored: text)."""
    for value in values.values():
        if not re.fullmatch(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*", value):
            raise MoodleFormulaError(f"notvalidnumber: {value!r}")
    return php_eval(substitute_for_eval(expression, values))


def replace_expressions_in_text(text: str, values: Mapping[str, str]) -> str:
    text = FORMULAS_IN_TEXT.sub(lambda found: _php_string(calculate(found.group(1), values)), text)
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def _php_string(value: PhpNumber) -> str:
    """How PHP prints a number (precision 14 for floats, as ``echo`` does with serialize_precision -1)."""
    if isinstance(value, int):
        return str(value)
    return repr(value) if value != int(value) else str(int(value))


# --- grading what a student types ------------------------------------------------------------------

def apply_units(response: str) -> tuple[float | None, str]:
    """``qtype_numerical_answer_processor::apply_units`` with no units: the number read, and what follows it."""
    response = response.strip().replace(" ", "")
    response = re.sub(r"(?:e|E|(?:x|\*|×)10(?:\^|\*\*))([+-]?\d+)", r"e\1", response)
    if "." in response or response.count(",") > 1:
        response = response.replace(",", "")
    else:
        response = response.replace(",", ".")
    found = re.match(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?", response)
    if not found:
        return None, ""
    return float(found.group(0)), response[found.end():]


def tolerance_interval(answer: PhpNumber, tolerance: float, tolerance_type: int) -> tuple[float, float]:
    """``qtype_numerical_answer::get_tolerance_interval``."""
    slack = 10.0 ** -PRECISION
    if tolerance_type == 1:  # relative
        spread = abs(answer) * (abs(tolerance) + slack)
        return answer - spread, answer + spread
    if tolerance_type == 2:  # nominal
        spread = abs(tolerance) + slack * max(1, abs(answer))
        return answer - spread, answer + spread
    if tolerance_type == 3:  # geometric
        quotient = 1 + abs(tolerance) + slack
        return answer / quotient, answer * quotient
    raise ValueError(f"Unknown tolerance type {tolerance_type}")


def within_tolerance(value: float, answer: PhpNumber, tolerance: float, tolerance_type: int) -> bool:
    low, high = tolerance_interval(answer, tolerance, tolerance_type)
    return low <= value <= high


def grade(response: str, answer: PhpNumber, tolerance: float, tolerance_type: int = 2) -> float:
    """``grade_response`` of a question with no units (``showunits`` 3, ``unitgradingtype`` 0): the number
    read from the response within the answer's tolerance gets full marks, anything else 0."""
    value, _unit = apply_units(response)
    if value is None:
        return 0.0
    return 1.0 if within_tolerance(value, answer, tolerance, tolerance_type) else 0.0


def complete(response: str) -> bool:
    """``is_complete_response`` with no units: a number and nothing after it (else ``invalidnumbernounit``)."""
    value, unit = apply_units(response)
    return value is not None and not unit
