"""A verified lesson as bytes and back: what the lesson cache keeps, so an unchanged file is not read again.

The format is JSON, built from the model's own type hints: every dataclass is the list of its fields
in order, a union of dataclasses is ``[class name, fields]``, a fraction ``[numerator, denominator]``,
a formula its source text (parsed again through the same whitelist). JSON can only say data: reading
it runs nothing, and :func:`decode` checks every value against the type its field declares, so bytes
that are not exactly what :func:`encode` writes are refused (:class:`Unreadable`), never half-trusted.

:data:`SCHEMA` sums up the model's fields and types: a model that gains or changes a field reads
none of the entries written before it.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import types
import typing
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from bertdrill.core import collector, formula
from bertdrill.core.errors import FormulaError
from bertdrill.core.formula import Formula
from bertdrill.core.lesson import model, variants
from bertdrill.core.lesson.model import Lesson

Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]  # (encode, decode)


class Unreadable(ValueError):
    """The bytes are not a lesson :func:`encode` wrote: the caller reads the lesson file instead."""


def encode(lesson: Lesson) -> bytes:
    """The lesson as compact JSON (its path is not kept: the file it is read for gives it).

    ValueError when the model holds a kind of value this module cannot store (a field added without
    teaching it here): the caller then keeps no entry, and the tests fail until it is taught."""
    try:
        codec = _lesson_codec()
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    return json.dumps(codec[0](dataclasses.replace(lesson, path="")), ensure_ascii=False, separators=(",", ":")).encode()


def decode(data: bytes, path: str) -> Lesson:
    """The lesson :func:`encode` wrote, as read from ``path``; :class:`Unreadable` for anything else."""
    # A lesson is many small objects, none of them garbage: collecting while building them triples the time.
    with collector.paused():
        try:
            lesson: Lesson = _lesson_codec()[1](json.loads(data))
        except (ValueError, TypeError, KeyError, IndexError, RecursionError, FormulaError, ZeroDivisionError) as exc:
            raise Unreadable(f"not a stored lesson: {exc}") from None
    return dataclasses.replace(lesson, path=path)


def encode_head(lesson: Lesson) -> bytes:
    """The lesson without its items, as :func:`encode` writes a lesson, with what depends on all of its items
    (:meth:`~bertdrill.core.lesson.Lesson.asked_expressions`): a command showing a few cards reads the head
    and only their items (:func:`encode_item`), and :meth:`~bertdrill.core.lesson.Lesson.part` keeps the rest."""
    asked = [list(pair) for pair in lesson.asked_expressions()]
    try:
        codec = _lesson_codec()
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    fields = codec[0](dataclasses.replace(lesson, path="", items=()))
    return json.dumps([fields, asked], ensure_ascii=False, separators=(",", ":")).encode()


def decode_head(data: bytes, path: str) -> Lesson:
    """The head :func:`encode_head` wrote: the lesson with no items, knowing what its items ask."""
    with collector.paused():
        try:
            fields, asked = json.loads(data)
            lesson: Lesson = _lesson_codec()[1](fields)
            if lesson.items or type(asked) is not list or any(
                    type(pair) is not list or len(pair) != 2 or {type(part) for part in pair} != {str} for pair in asked):
                raise TypeError("not a lesson's head")
        except (ValueError, TypeError, KeyError, IndexError, RecursionError, FormulaError, ZeroDivisionError) as exc:
            raise Unreadable(f"not a stored lesson: {exc}") from None
    return dataclasses.replace(lesson, path=path).known_to_ask(tuple((pair[0], pair[1]) for pair in asked))


def encode_item(item: model.Item) -> bytes:
    """One item, as it is written inside a lesson by :func:`encode`."""
    return json.dumps(_item_codec()[0](item), ensure_ascii=False, separators=(",", ":")).encode()


def decode_item(data: bytes) -> model.Item:
    """The item :func:`encode_item` wrote; :class:`Unreadable` for anything else."""
    try:
        item: model.Item = _item_codec()[1](json.loads(data))
    except (ValueError, TypeError, KeyError, IndexError, RecursionError, FormulaError, ZeroDivisionError) as exc:
        raise Unreadable(f"not a stored item: {exc}") from None
    return item


# --------------------------------------------------------------------------- codecs from type hints


def _identity(value: Any) -> Any:
    return value


def _apply(code: Callable[[Any], Any], value: Any) -> Any:
    return code(value)


def _exactly(kind: type) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if type(value) is not kind:  # bool is an int to isinstance: a stored True is not a line number
            raise TypeError(f"expected {kind.__name__}, found {type(value).__name__}")
        return value
    return check


def _fraction() -> Codec:
    def decode(value: Any) -> Fraction:
        if type(value) is not list or len(value) != 2 or not all(type(part) is int for part in value) or value[1] <= 0:
            raise TypeError("a fraction is [numerator, positive denominator]")
        return Fraction(value[0], value[1])
    return (lambda value: [value.numerator, value.denominator]), decode


def _formula() -> Codec:
    check = _exactly(str)
    return (lambda value: value.source), (lambda value: formula.parse(check(value)))


def _member(kind: type[enum.Enum]) -> Codec:
    """An enum member as its value (a text or a number), read back as the member."""
    return (lambda value: value.value), (lambda value: kind(_exactly(type(next(iter(kind)).value))(value)))


def _mapping(values: Codec) -> Codec:
    encode_value, decode_value = values

    def decode(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise TypeError("expected a table")
        return {key: decode_value(item) for key, item in value.items()}
    if decode_value is _STR:
        return dict, _text  # the common case, kept short: a table of texts is checked in one pass
    return (lambda value: {key: encode_value(item) for key, item in value.items()}), decode


def _text(value: Any) -> dict[str, str]:
    if type(value) is not dict or not all(type(item) is str for item in value.values()):
        raise TypeError("expected a table of texts")
    return value


def _tuple(items: Codec) -> Codec:
    encode_item, decode_item = items

    def decode(value: Any) -> tuple[Any, ...]:
        if type(value) is not list:
            raise TypeError("expected a list")
        return tuple(map(decode_item, value))
    return (lambda value: [encode_item(item) for item in value]), decode


def _optional(inner: Codec) -> Codec:
    encode_inner, decode_inner = inner
    return ((lambda value: None if value is None else encode_inner(value)),
            (lambda value: None if value is None else decode_inner(value)))


def _number() -> Codec:
    """``int | Fraction``: an int stays a JSON number, a fraction is a pair."""
    encode_fraction, decode_fraction = _fraction()
    return ((lambda value: value if type(value) is int else encode_fraction(value)),
            (lambda value: value if type(value) is int else decode_fraction(value)))


def _classes(members: tuple[type, ...]) -> Codec:
    """A union of dataclasses: ``[class name, fields]``."""
    codecs = {member.__name__: _dataclass(member) for member in members}

    def encode(value: Any) -> list[Any]:
        return [type(value).__name__, codecs[type(value).__name__][0](value)]

    def decode(value: Any) -> Any:
        if type(value) is not list or len(value) != 2 or type(value[0]) is not str:
            raise TypeError("expected [kind, fields]")
        return codecs[value[0]][1](value[1])
    return encode, decode


_MADE: dict[type, Codec] = {}


@functools.cache  # asked of each class by SCHEMA at import, then by its codec when a lesson is first read or kept
def _hints(cls: type) -> dict[str, Any]:
    """A stored class's field types, its module's names resolved first, then the lesson modules' (for the
    names a module imports only for type checking)."""
    return typing.get_type_hints(cls, localns=vars(model) | vars(formula) | vars(variants))


def _dataclass(cls: type) -> Codec:
    """A dataclass as the list of its fields (those ``__init__`` takes), in declaration order."""
    if cls in _MADE:
        return _MADE[cls]
    hints = _hints(cls)
    names = [field.name for field in dataclasses.fields(cls) if field.init and not field.name.startswith("_")]
    codecs = [_codec(hints[name]) for name in names]
    encoders = [codec[0] for codec in codecs]
    decoders = [codec[1] for codec in codecs]
    count = len(names)
    unstored = [(field.name, field.default_factory) for field in dataclasses.fields(cls)
                if field.name not in names and field.default_factory is not dataclasses.MISSING]
    new = object.__new__

    def encode(value: Any) -> list[Any]:
        return [code(getattr(value, name)) for code, name in zip(encoders, names)]

    def decode(value: Any) -> Any:
        if type(value) is not list or len(value) != count:
            raise TypeError(f"expected the {count} fields of {cls.__name__}")
        # As pickle does: the fields are set, not passed to __init__ (a frozen dataclass's __init__
        # sets each field through object.__setattr__, which makes it the most of the time here).
        made: Any = new(cls)
        made.__dict__.update(zip(names, map(_apply, decoders, value)))
        made.__dict__.update((name, factory()) for name, factory in unstored)
        return made
    _MADE[cls] = encode, decode
    return _MADE[cls]


_STR = _exactly(str)


def _codec(hint: Any) -> Codec:
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if hint is str:
        return _identity, _STR
    if hint is int:
        return _identity, _exactly(int)
    if hint is bool:
        return _identity, _exactly(bool)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _member(hint)
    if hint is Fraction:
        return _fraction()
    if hint is Formula:
        return _formula()
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _dataclass(hint)
    if origin in (Mapping, dict) and arguments[0] is str:
        return _mapping(_codec(arguments[1]))
    if origin is tuple and len(arguments) == 2 and arguments[1] is Ellipsis:
        return _tuple(_codec(arguments[0]))
    if origin in (typing.Union, types.UnionType):
        present = tuple(argument for argument in arguments if argument is not type(None))
        inner = _union(present)
        return _optional(inner) if len(present) < len(arguments) else inner
    raise TypeError(f"the lesson cache cannot store a {hint!r}")  # a new kind of field: teach this module


def _union(members: tuple[Any, ...]) -> Codec:
    if len(members) == 1:
        return _codec(members[0])
    if set(members) == {int, Fraction}:
        return _number()
    if all(dataclasses.is_dataclass(member) for member in members):
        return _classes(members)
    raise TypeError(f"the lesson cache cannot store a union of {members!r}")


@functools.cache
def _lesson_codec() -> Codec:
    return _dataclass(Lesson)


@functools.cache
def _item_codec() -> Codec:
    return _union(typing.get_args(model.Item))


def _schema(cls: type, seen: set[type]) -> list[Any]:
    """Every stored class with its fields and their declared types, for :data:`SCHEMA`."""
    if cls in seen:
        return []
    seen.add(cls)
    hints = _hints(cls)
    found: list[Any] = [cls.__name__]
    for field in dataclasses.fields(cls):
        if field.init and not field.name.startswith("_"):
            found.append([field.name, repr(hints[field.name])])
            for inner in _classes_in(hints[field.name]):
                found.extend(_schema(inner, seen))
    return found


def _classes_in(hint: Any) -> list[type]:
    if dataclasses.is_dataclass(hint) and isinstance(hint, type) and hint is not Formula:
        return [hint]
    return [found for argument in typing.get_args(hint) for found in _classes_in(argument)]


SCHEMA = hashlib.sha256(repr(_schema(Lesson, set())).encode()).hexdigest()[:16]
"""Changes whenever a stored class gains, loses, renames or retypes a field."""
