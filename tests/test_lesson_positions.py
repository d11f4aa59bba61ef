"""The position finder reads TOML's strings as a TOML reader does, so error lines stay right whatever the text."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from bertdrill.core.lesson.positions import Lines

VALID = sorted((Path(__file__).parent / "toml_test" / "valid").rglob("*.toml"))


def _headers(data: object, prefix: str = "") -> list[str]:
    """Every table name tomllib built, dotted: the names a header may have declared."""
    names: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            name = f"{prefix}{key}"
            tables = [value] if isinstance(value, dict) else [v for v in value if isinstance(v, dict)] \
                if isinstance(value, list) else []
            if tables:
                names.append(name)
            for table in tables:
                names += _headers(table, f"{name}.")
    return names


@pytest.mark.parametrize("path", VALID, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_every_found_header_and_key_is_on_a_line_that_holds_it(path):
    """On every valid file of the toml-test suite (those tomllib reads), what the finder reports is real: each
    table it found is one tomllib built, on a line that opens with a header, and each key sits on its line."""
    text = path.read_bytes().decode("utf-8")
    lines = text.split("\n")
    found = Lines(text)
    tables = set(_headers(tomllib.loads(text)))
    for table, number in found.tables.items():
        assert table in tables, (table, number)
        assert lines[number - 1].lstrip().startswith("["), (table, number)
    for (_, key), number in found.keys.items():
        assert key.split(".")[0].strip("\"'") in lines[number - 1] or "\\" in lines[number - 1], (key, number)


def test_the_suite_is_there():
    assert len(VALID) > 200


def test_quotes_of_another_kind_inside_a_string_do_not_shift_later_lines():
    """The issue's example: a ''' inside an ordinary string put every later error on line 1."""
    text = '''[lesson]
title = { en = "What is BERT? (\'\'\' quotes)" }
note = 'a """ in a literal string'
[params.base]
d = 768
[[item]]
id = "x"
'''
    found = Lines(text)
    assert found.tables["params.base"] == 4
    assert found.key("params.base", "d") == 5
    assert found.item(0) == 6
    assert found.key("item#0", "id") == 7


def test_lines_inside_a_multiline_string_are_text():
    text = '''[lesson]
text = """
[not.a.table]
d = 1
"""
[real]
k = \'\'\'
x = 2\'\'\'
after = 3
'''
    found = Lines(text)
    assert "not.a.table" not in found.tables
    assert found.tables["real"] == 6
    assert found.key("real", "x") == 6  # not a key: falls back to its table's line
    assert found.key("real", "after") == 9


def test_a_line_separator_inside_a_string_is_not_a_new_line():
    """tomllib counts lines at "\\n" only; U+2028 inside a string must not shift the numbers after it."""
    text = '[lesson]\ntitle = "a\u2028b"\n[params.base]\nd = 1\n'
    assert Lines(text).tables["params.base"] == 3


def test_a_multiline_string_ending_in_quotes_ends_where_toml_says():
    text = '[a]\ns = """x""""\n[b]\nk = 1\n'
    tomllib.loads(text)
    assert Lines(text).tables["b"] == 3


def test_an_error_after_a_title_with_triple_quotes_names_its_own_line():
    """Through the whole reader: the broken blank of tests/lessons/broken/blank-fill-wrong.toml is on line 43,
    and stays there when the title holds ''' (it was reported on line 1)."""
    from bertdrill.core.errors import LessonErrors
    from bertdrill.core.lesson import parse

    broken = Path(__file__).parent / "lessons" / "broken" / "blank-fill-wrong.toml"
    text = broken.read_text(encoding="utf-8").replace('title = { en = "Mini"', 'title = { en = "Mini (\'\'\' quotes)"')
    with pytest.raises(LessonErrors) as raised:
        parse(text, str(broken))
    assert [error.line for error in raised.value.errors] == [43]


@pytest.mark.parametrize("header", ["[items]", "[[items]]", "[items.extra]", "[extra.part]"])
def test_an_unknown_table_is_reported_on_its_own_header_line(header):
    """An unknown top-level table is named on the line of its header, not line 1 (a typo such as [[items]] for
    [[item]] was reported on the file's first line)."""
    from bertdrill.core.errors import LessonErrors
    from bertdrill.core.lesson import parse

    text = f'[lesson]\nid = "x"\nlanguages = ["en"]\ntitle = {{ en = "X" }}\n\n{header}\nkind = "numeric"\n'
    with pytest.raises(LessonErrors) as raised:
        parse(text, "typo.toml")
    unknown = [error for error in raised.value.errors if "unknown table" in error.message]
    assert [error.line for error in unknown] == [6], raised.value.errors
    assert Lines(text).key("", header.strip("[]").split(".")[0]) == 6
