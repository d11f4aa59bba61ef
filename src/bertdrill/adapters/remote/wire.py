"""The records of :mod:`bertdrill.ports` as JSON, both ways: what the class server's API and its terminal client
exchange (one codec, so the two never disagree on a field).

A record is a frozen dataclass; it goes out as an object of its fields (dates and times in ISO 8601, enums by
their value, tuples as arrays) and comes back through its own type hints, every value checked against the
field's type: a reply that is not what the record says is a :class:`WireError`, never a half-read record.
"""

from __future__ import annotations

import dataclasses
import types
from datetime import date, datetime
from enum import Enum
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

Record = TypeVar("Record")


class WireError(ValueError):
    """JSON that is not the record it should be."""


def encode(value: Any) -> Any:
    """``value`` (a record, or what a record holds) as plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: encode(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [encode(each) for each in value]
    if isinstance(value, dict):
        return {str(key): encode(each) for key, each in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"{type(value).__name__} has no JSON form")


def decode(kind: type[Record], data: Any) -> Record:
    """The record of type ``kind`` that :func:`encode` made ``data`` of; :class:`WireError` if it is not one."""
    found: Record = _value(kind, data, kind.__name__)
    return found


def _value(kind: Any, data: Any, where: str) -> Any:
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):
        options = get_args(kind)
        if data is None and type(None) in options:
            return None
        for option in options:
            if option is not type(None):
                try:
                    return _value(option, data, where)
                except WireError:
                    continue
        raise WireError(f"{where}: {data!r} is none of {kind}")
    if origin is tuple:
        items = get_args(kind)
        if not isinstance(data, list):
            raise WireError(f"{where}: {data!r} is not a list")
        if len(items) == 2 and items[1] is Ellipsis:
            return tuple(_value(items[0], each, where) for each in data)
        if len(items) != len(data):
            raise WireError(f"{where}: {data!r} has not {len(items)} items")
        return tuple(_value(item, each, where) for item, each in zip(items, data))
    if origin is list:
        if not isinstance(data, list):
            raise WireError(f"{where}: {data!r} is not a list")
        return [_value(get_args(kind)[0], each, where) for each in data]
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _record(kind, data, where)
    if isinstance(kind, type) and issubclass(kind, Enum):
        try:
            return kind(data)
        except ValueError:
            raise WireError(f"{where}: {data!r} is no {kind.__name__}") from None
    return _plain(kind, data, where)


def _record(kind: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise WireError(f"{where}: {data!r} is not an object")
    hints = get_type_hints(kind)
    values = {}
    for field in dataclasses.fields(kind):
        if field.name in data:
            values[field.name] = _value(hints[field.name], data[field.name], f"{where}.{field.name}")
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise WireError(f"{where}: {field.name} is missing")
    return kind(**values)


def _plain(kind: Any, data: Any, where: str) -> Any:
    if kind is datetime or kind is date:
        if not isinstance(data, str):
            raise WireError(f"{where}: {data!r} is not a {kind.__name__}")
        try:
            parsed = datetime.fromisoformat(data) if kind is datetime else date.fromisoformat(data)
        except ValueError:
            raise WireError(f"{where}: {data!r} is not a {kind.__name__}") from None
        return parsed
    if kind is float and isinstance(data, int | float) and not isinstance(data, bool):
        return float(data)
    if kind is int and isinstance(data, int) and not isinstance(data, bool):
        return data
    if kind in (str, bool) and isinstance(data, kind):
        return data
    if kind is type(None) and data is None:
        return None
    raise WireError(f"{where}: {data!r} is not a {getattr(kind, '__name__', kind)}")
