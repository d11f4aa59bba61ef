"""Hypothesis fuzzing: no TOML document, however odd, makes the lesson parser show a traceback.

Two sources of documents: the minimal lesson with random parts replaced by random values
(close to real lessons, so the fuzzer reaches deep into verification), and arbitrary text.
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bertdrill.core.cards import compile_lesson
from bertdrill.core.errors import LessonErrors
from bertdrill.core.lesson import Lesson, parse

MINIMAL = tomllib.loads((Path(__file__).parent / "lessons" / "minimal.toml").read_text())

scalars = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["", "d", "total", "4", "____", "{set}", "{d@small}", "small", "en", "tr", "fact", "match",
                     "9**9**9", "1/0", "d / (d - d)", "x" * 300, "\x00", "{", "}"]),
    st.booleans(),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["en", "tr", "id", "value", "term", "d", "x"]), inner, max_size=4)
), max_leaves=8)


def to_toml(document: dict[str, object]) -> str:
    """Write a document as TOML, every top-level key as an inline value (valid for any nesting)."""
    return "\n".join(f"{_key(key)} = {_value(value)}" for key, value in document.items()) + "\n"


def _key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"


def paths(document, prefix=()):
    """Every place in a document a value could be swapped."""
    yield prefix
    if isinstance(document, dict):
        for key, value in document.items():
            yield from paths(value, prefix + (key,))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from paths(value, prefix + (index,))


ALL_PATHS = [p for p in paths(MINIMAL) if p]


def replaced(document, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(document, dict):
        return {**document, head: replaced(document[head], rest, value)}
    copy = list(document)
    copy[head] = replaced(copy[head], rest, value)
    return copy


def parses_cleanly(text: str) -> None:
    try:
        lesson = parse(text, "fuzz.toml")
    except LessonErrors as exc:
        assert all(error.message and error.path == "fuzz.toml" for error in exc.errors)
        return
    assert isinstance(lesson, Lesson)
    compile_lesson(lesson)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(ALL_PATHS), values), min_size=1, max_size=3))
def test_mutated_lessons_never_crash_the_parser(mutations):
    document = MINIMAL
    for path, value in mutations:
        try:
            document = replaced(document, path, value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed this path
    parses_cleanly(to_toml(document))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text_never_crashes_the_parser(text):
    parses_cleanly(text)
