"""Formulas are data, never code.

A formula is a small arithmetic expression over named numbers, such as
``(V + L + T) * d + 2 * d``. It is parsed with :func:`ast.parse` and walked
against a whitelist: numbers, names, ``+ - * / // % **``, unary minus and
calls to ``round``, ``min``, ``max`` and ``abs``. Anything else is refused by
name. Integers stay exact and ``/`` gives a :class:`~fractions.Fraction`, so
``ffn / layer`` is exact until it is displayed.

Every evaluation costs little, whatever the input: the text is at most
:data:`MAX_LENGTH` characters (so at most that many steps: a formula's names
are values already computed, never formulas evaluated again), nesting is
bounded, and every value, the intermediate ones included, is at most
:data:`MAX_MAGNITUDE` with a denominator of at most :data:`MAX_DENOMINATOR`,
so no number has more than about 120 digits. ``9**9**9**9`` and
``((0.999999999**256)**256)**256`` fail in microseconds instead of hanging:
a power is refused from the sizes of its base and exponent, before it is computed.
"""

from __future__ import annotations

import ast
import difflib
import functools
import operator
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from bertdrill.core.errors import FormulaError
from bertdrill.core.i18n import N_, _

Number = int | Fraction

MAX_LENGTH = 2_000
MAX_DEPTH = 100
MAX_EXPONENT = 256
MAX_MAGNITUDE = 10**60
MAX_DENOMINATOR = 10**60
"""Exact fractions finer than 1/10^60 are refused as too precise, as numbers over 10^60 are as too large."""

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_CALLS: dict[str, Callable[..., Any]] = {"min": min, "max": max, "abs": abs}  # round() is handled on its own
_FUNCTIONS = {"round": 2, "min": None, "max": None, "abs": 1}

# Names of constructs a lesson author might try, for messages that say what was refused.
_CONSTRUCT_NAMES = {
    ast.Attribute: N_("attribute access"),
    ast.Subscript: N_("subscripts"),
    ast.Lambda: N_("lambda"),
    ast.ListComp: N_("comprehensions"),
    ast.SetComp: N_("comprehensions"),
    ast.DictComp: N_("comprehensions"),
    ast.GeneratorExp: N_("comprehensions"),
    ast.Compare: N_("comparisons"),
    ast.BoolOp: N_("'and'/'or'"),
    ast.IfExp: N_("conditional expressions"),
    ast.List: N_("lists"),
    ast.Tuple: N_("tuples"),
    ast.Dict: N_("dicts"),
    ast.Set: N_("sets"),
    ast.JoinedStr: N_("f-strings"),
    ast.NamedExpr: N_("assignment expressions"),
    ast.Starred: N_("starred arguments"),
    ast.Await: N_("await"),
    ast.Yield: N_("yield"),
}


def _normalise(value: Number) -> Number:
    """Fractions with denominator 1 become ints, so results compare and print simply."""
    if type(value) is not int and isinstance(value, Fraction) and value.denominator == 1:
        return value.numerator
    return value


def _too_large() -> FormulaError:
    return FormulaError(_("result too large (over 10^{power})").format(power=len(str(MAX_MAGNITUDE)) - 1))


def _too_precise() -> FormulaError:
    return FormulaError(_("result too precise (an exact fraction finer than 1/10^{power})").format(
        power=len(str(MAX_DENOMINATOR)) - 1))


def _bounded(value: Number) -> Number:
    """``value`` if it is within the bounds that keep every later step cheap; else a FormulaError."""
    if not -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE:
        raise _too_large()
    if type(value) is int:  # most values: Fraction's isinstance goes through its ABC (a third of evaluating)
        return value
    if isinstance(value, Fraction) and value.denominator > MAX_DENOMINATOR:
        raise _too_precise()
    return _normalise(value)


@dataclass(frozen=True)
class Formula:
    """A parsed, whitelisted expression; evaluate it with :meth:`evaluate`."""

    source: str
    tree: ast.expr
    names: frozenset[str]

    def evaluate(self, env: Mapping[str, Number]) -> Number:
        return self._compiled(env)

    @functools.cached_property
    def _compiled(self) -> Step:
        """The tree as nested closures, made on the first evaluation: a lesson's formulas are evaluated over
        every variant it allows (1,504 for the shipped lesson), and walking the tree again each time, matching
        each node's kind, was most of that."""
        return _compile(self.tree)


def parse(source: str) -> Formula:
    """Parse ``source`` into a :class:`Formula`, refusing anything but arithmetic."""
    if not isinstance(source, str):
        raise FormulaError(_('a formula must be text, not {kind}').format(kind=type(source).__name__))
    return _parse(source)


@functools.lru_cache(maxsize=4096)
def _parse(source: str) -> Formula:
    """Parsing is pure and a Formula is immutable, so lessons that repeat a formula parse it once."""
    if len(source) > MAX_LENGTH:
        raise FormulaError(_('formula too long ({count:,} characters; at most {MAX_LENGTH:,})').format(count=len(source), MAX_LENGTH=MAX_LENGTH))
    if not source.strip():
        raise FormulaError(_('empty formula'))
    try:
        tree = ast.parse(source.strip(), mode="eval").body
    except SyntaxError as exc:
        raise FormulaError(_('not a valid formula: {msg}').format(msg=exc.msg)) from None
    except (ValueError, MemoryError, RecursionError):
        raise FormulaError(_('not a valid formula')) from None
    names: set[str] = set()
    _check(tree, 0, names)
    return Formula(source.strip(), tree, frozenset(names))


def _check(node: ast.AST, depth: int, names: set[str]) -> None:
    """Walk the tree once, refusing every construct outside the whitelist."""
    if depth > MAX_DEPTH:
        raise FormulaError(_('formula nested too deeply (more than {MAX_DEPTH} levels)').format(MAX_DEPTH=MAX_DEPTH))
    match node:
        case ast.Constant(value=value):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                if isinstance(value, (str, bytes)):
                    raise FormulaError(_("string literals are not allowed in formulas"))
                raise FormulaError(_('{value!r} are not allowed in formulas').format(value=value))
        case ast.Name(id=name):
            names.add(name)
        case ast.BinOp(left=left, op=op, right=right):
            if type(op) not in _BINARY:
                raise FormulaError(_('operator {kind} is not allowed in formulas').format(kind=type(op).__name__))
            _check(left, depth + 1, names)
            _check(right, depth + 1, names)
        case ast.UnaryOp(op=op, operand=operand):
            if type(op) not in _UNARY:
                raise FormulaError(_('operator {kind} is not allowed in formulas').format(kind=type(op).__name__))
            _check(operand, depth + 1, names)
        case ast.Call(func=ast.Name(id=fname), args=args, keywords=[]) if fname in _FUNCTIONS:
            most = _FUNCTIONS[fname]
            if not args or (most is not None and len(args) > most):
                raise FormulaError(_('{fname}() takes 1 to {value} arguments').format(fname=fname, value=most or 'many'))
            if most is None and len(args) < 2:  # min(0): Python's min of one number is a TypeError
                raise FormulaError(_('{fname}() takes 2 or more arguments').format(fname=fname))
            for arg in args:
                _check(arg, depth + 1, names)
        case ast.Call(func=ast.Name(id=fname)):
            allowed = ", ".join(sorted(_FUNCTIONS))
            raise FormulaError(_('call to {fname}() is not allowed in formulas (only {allowed})').format(fname=fname, allowed=allowed))
        case ast.Call(func=func):
            _check(func, depth + 1, names)  # names the real culprit: a lambda, an attribute...
            raise FormulaError(_('calls are not allowed in formulas, except round, min, max and abs'))
        case _:
            what = _(_CONSTRUCT_NAMES[type(node)]) if type(node) in _CONSTRUCT_NAMES else type(node).__name__
            raise FormulaError(_('{what} not allowed in formulas').format(what=what))


Step = Callable[[Mapping[str, Number]], Number]
"""A compiled (sub)expression: its value over an environment, with every bound checked as it is computed."""


def _compile(node: ast.expr) -> Step:
    """``node`` as a :data:`Step`: the same values, the same errors, raised at evaluation in the same order
    (left before right, arguments in order) as walking the tree would."""
    match node:
        case ast.Constant(value=int() | float() as value):
            return _constant(value)
        case ast.Name(id=name):
            return _lookup(name)
        case ast.BinOp(left=left, op=op, right=right):
            return _binary(op, _compile(left), _compile(right))
        case ast.UnaryOp(op=op, operand=operand):
            unary, inner = _UNARY[type(op)], _compile(operand)
            return lambda env: _bounded(unary(inner(env)))
        case ast.Call(func=ast.Name(id=fname), args=args):
            return _call(fname, [_compile(arg) for arg in args])
    raise FormulaError("formula was not checked before evaluation")  # parse() prevents this


def _constant(value: int | float) -> Step:
    """A literal; one out of range fails when evaluated, as any other value does."""
    def fail(_env: Mapping[str, Number]) -> Number:
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            raise FormulaError(_('number literal out of range'))
        return _bounded(Fraction(repr(value)) if isinstance(value, float) else value)
    try:
        known = fail({})
    except FormulaError:
        return fail
    return lambda _env: known


def _lookup(name: str) -> Step:
    def value(env: Mapping[str, Number]) -> Number:
        try:
            return env[name]
        except KeyError:
            raise FormulaError(unknown_name_message(name, env)) from None
    return value


def _binary(op: ast.operator, left: Step, right: Step) -> Step:
    match op:
        case ast.Div():
            def divide(env: Mapping[str, Number]) -> Number:
                top, bottom = left(env), right(env)
                if bottom == 0:
                    raise FormulaError(_('division by zero'))
                return _bounded(Fraction(top) / Fraction(bottom))
            return divide
        case ast.FloorDiv() | ast.Mod():
            apply = _BINARY[type(op)]

            def whole(env: Mapping[str, Number]) -> Number:
                top, bottom = left(env), right(env)
                if bottom == 0:
                    raise FormulaError(_('division by zero'))
                return _bounded(apply(top, bottom))
            return whole
        case ast.Pow():
            return lambda env: _bounded(_power(left(env), right(env)))
    apply = _BINARY[type(op)]
    return lambda env: _bounded(apply(left(env), right(env)))


def _call(fname: str, args: list[Step]) -> Step:
    if fname == "round":
        def rounded(env: Mapping[str, Number]) -> Number:
            values = [arg(env) for arg in args]
            if len(values) == 2:
                digits = values[1]
                if not isinstance(digits, int) or not -30 <= digits <= 30:
                    raise FormulaError(_("round()'s digits must be a whole number from -30 to 30"))
                return _bounded(round(Fraction(values[0]), digits))
            return _bounded(round(Fraction(values[0])))
        return rounded
    function = _CALLS[fname]
    return lambda env: _bounded(function(*[arg(env) for arg in args]))


def _power(base: Number, exponent: Number) -> Number:
    if not isinstance(exponent, int):
        raise FormulaError(_('exponents must be whole numbers'))
    if abs(exponent) > MAX_EXPONENT:
        raise FormulaError(_('exponent too large ({exponent}; at most {MAX_EXPONENT})').format(exponent=exponent, MAX_EXPONENT=MAX_EXPONENT))
    if base == 0 and exponent < 0:
        raise FormulaError(_('division by zero'))
    # Refuse from the sizes before computing: a reduced fraction's power is reduced, so the result's
    # denominator is the (flipped) base's denominator to the power, and its size is known in advance.
    base = Fraction(base)
    top, bottom = abs(base.numerator), base.denominator
    if exponent < 0:
        top, bottom = bottom, top
    times = abs(exponent)
    if times * (top.bit_length() - bottom.bit_length() - 1) >= MAX_MAGNITUDE.bit_length():
        raise _too_large()  # |result| >= 2^that > MAX_MAGNITUDE
    if times * (bottom.bit_length() - 1) >= MAX_DENOMINATOR.bit_length():
        raise _too_precise()  # denominator >= 2^that > MAX_DENOMINATOR
    return base**exponent


def unknown_name_message(name: str, known: Collection[str]) -> str:
    """``unknown name 'dd'; did you mean 'd'?`` with the nearest known names."""
    close = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.5)
    if not close:
        return _("unknown name {name!r}").format(name=name)
    # Translators: the names are quoted and joined by " or ": 'd' or 'h'.
    return _("unknown name {name!r}; did you mean {names}?").format(
        name=name, names=_(" or ").join(repr(c) for c in close))


def evaluate(source: str, env: Mapping[str, Number]) -> Number:
    """Parse and evaluate ``source`` over ``env`` in one step."""
    return parse(source).evaluate(env)


def resolve(params: Mapping[str, Number], formulas: Mapping[str, Formula]) -> dict[str, Number]:
    """Evaluate every formula over one parameter set, in dependency order.

    Returns the parameters and every formula's value in one mapping. Unknown
    names get a suggestion; a cycle is reported with its members in order.
    """
    values: dict[str, Number] = dict(params)
    known = set(params) | set(formulas)
    for name in order(formulas, known):
        try:
            values[name] = formulas[name].evaluate(values)
        except FormulaError as exc:
            raise FormulaError(_('formula {name!r}: {exc}').format(name=name, exc=exc), formula=name) from None
    return values


def order(formulas: Mapping[str, Formula], known: set[str]) -> list[str]:
    """Formula names sorted so each comes after the formulas it uses.

    A depth-first walk with its own stack, not Python's: a chain of thousands of formulas written
    last first is as deep as it is long.
    """
    done: list[str] = []
    state: dict[str, str] = {}
    path: list[str] = []  # the formulas being visited, outermost first
    stack: list[tuple[str, Iterator[str]]] = []  # each with the names it uses still to visit

    def enter(name: str) -> None:
        state[name] = "visiting"
        path.append(name)
        stack.append((name, iter(sorted(formulas[name].names))))

    for root in formulas:
        if state.get(root) == "done":
            continue
        enter(root)
        while stack:
            name, uses = stack[-1]
            used = next(uses, None)
            if used is None:
                stack.pop()
                path.pop()
                state[name] = "done"
                done.append(name)
            elif used not in known:
                raise FormulaError(_("formula {name!r}: {problem}").format(
                    name=name, problem=unknown_name_message(used, known)), formula=name)
            elif used in formulas and state.get(used) == "visiting":
                cycle = path[path.index(used):] + [used]
                raise FormulaError(_("formula cycle: {cycle}").format(cycle=" -> ".join(cycle)), formula=cycle[0])
            elif used in formulas and state.get(used) != "done":
                enter(used)
    return done


def decimal_exponent(value: Number) -> int:
    """The power of ten of ``value``'s first significant digit (``floor(log10(|value|))``), exactly.

    ``0.05`` gives -2 and ``23837184`` gives 7. Estimated from the bit lengths, then corrected
    by a comparison or two: quick for any size (multiplying by ten until the value reaches 1
    was cubic, and ``str()`` of an int over 4,300 digits raises).
    """
    value = abs(Fraction(value))
    if value == 0:
        raise ValueError("zero has no first significant digit")
    exponent = (value.numerator.bit_length() - value.denominator.bit_length()) * 30103 // 100000  # log10(2)
    while Fraction(10) ** exponent > value:
        exponent -= 1
    while Fraction(10) ** (exponent + 1) <= value:
        exponent += 1
    return exponent


def format_number(value: Number, *, grouping: str = "", decimal: str = ".") -> str:
    """Show a value as Python would print it: ints plainly, fractions as decimals.

    ``grouping`` is a thousands separator ("," in English, "." in Turkish), ``decimal`` the
    decimal mark ("," in Turkish: 3.072.000,5, never 3.072.000.5).
    Fractions that are exact decimals (``333/500``) print exactly (``0.666``);
    others fall back to the shortest float representation.
    """
    value = _normalise(value)
    if isinstance(value, int):
        # One rule for every number from 1,000 up, so 3,072 stands beside 30,522 in the same column.
        return f"{value:,}".replace(",", grouping) if grouping else str(value)
    denominator, digits = value.denominator, 0
    for factor in (2, 5):
        count = 0
        while denominator % factor == 0:
            denominator //= factor
            count += 1
        digits = max(digits, count)  # 2^a 5^b needs max(a, b) decimal places
    if denominator == 1:
        scaled = abs(value.numerator * 10**digits // value.denominator)
        whole, frac = divmod(scaled, 10**digits)
        sign = "-" if value < 0 else ""
        return f"{sign}{format_number(whole, grouping=grouping)}{decimal}{frac:0{digits}d}"
    return repr(float(value)).replace(".", decimal)
