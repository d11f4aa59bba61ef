"""Tests for bertdrill.core.number_words: numbers in words, in every lesson language."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from timing import cpu_seconds

from bertdrill.core.languages import LANGUAGES
from bertdrill.core.number_words import parse_words


@pytest.mark.parametrize(("text", "language", "value"), [
    ("four", "en", 4), ("Four", "en", 4), ("FOUR", "en", 4), ("zero", "en", 0), ("twelve", "en", 12),
    ("nineteen", "en", 19), ("twenty", "en", 20), ("twenty-one", "en", 21), ("twenty four", "en", 24),
    ("a hundred", "en", 100), ("seven hundred sixty-eight", "en", 768),
    ("three thousand and seventy-two", "en", 3072), ("a million", "en", 10**6),
    ("one hundred and ten million", "en", 110_000_000), ("110 million", "en", 110_000_000),
    ("thirty billion", "en", 30 * 10**9), ("one million two hundred thousand", "en", 1_200_000),
    ("dört", "tr", 4), ("DÖRT", "tr", 4), ("sıfır", "tr", 0), ("on iki", "tr", 12), ("bin", "tr", 1000),
    ("yedi yüz altmış sekiz", "tr", 768), ("üç bin yetmiş iki", "tr", 3072), ("iki milyon", "tr", 2 * 10**6),
    ("yüz on milyon", "tr", 110_000_000), ("110 milyon", "tr", 110_000_000), ("otuz milyar", "tr", 30 * 10**9),
    ("ALTI", "tr", 6), ("altı", "tr", 6),
    # Turkish typed without its letters, and written together
    ("dort", "tr", 4), ("alti", "tr", 6), ("yedi yuz altmis sekiz", "tr", 768), ("yüzon milyon", "tr", 110_000_000),
    ("onbir", "tr", 11),
])
def test_number_words_are_read(text, language, value):
    assert parse_words(text, language) == value


@pytest.mark.parametrize(("text", "language"), [
    ("four four", "en"), ("hundred twenty hundred", "en"), ("a", "en"), ("four thousand million", "en"),
    ("twenty twenty", "en"), ("mlm", "en"), ("on", "en"), ("a bidirectional encoder", "en"), ("", "en"),
    ("dört", "en"), ("four", "tr"), ("iki iki", "tr"), ("bin milyon", "tr"), ("zero one", "en"),
    ("four", "xx"), ("1234 million", "en"),
])
def test_other_texts_are_not_numbers(text, language):
    assert parse_words(text, language) is None


def test_every_language_reads_its_own_words_for_zero_to_a_billion():
    spoken = {code: row.number_words for code, row in LANGUAGES.items() if row.number_words}
    assert set(spoken) >= {"en", "tr"}
    for language, words in spoken.items():
        for word, value in {**words.units, **words.tens}.items():
            assert parse_words(word, language) == value, (language, word)
        for word, value in words.scales.items():
            assert parse_words(f"{next(iter(words.units))} {word}", language) == value, (language, word)


@given(st.text(max_size=300), st.sampled_from(["en", "tr"]))
def test_never_raises(text, language):
    value = parse_words(text, language)
    assert value is None or value >= 0


def test_long_texts_cost_nothing():
    def both() -> None:
        assert parse_words("bir" * 10_000, "tr") is None
        assert parse_words("four " * 10_000, "en") is None
    assert cpu_seconds(both) < 0.05


_SOME_WORDS = ["four", "hundred", "and", "a", "twenty", "million", "what", "dört", "yüz", "bin", "ve", "12", "1000",
               "on", "onon", "kaç", "thousand", "bir", "layers", "x2", "İKİ"]


@given(st.lists(st.sampled_from(_SOME_WORDS), min_size=1, max_size=6), st.sampled_from(["en", "tr", "de"]))
def test_a_word_that_may_not_spell_a_number_stops_every_run_holding_it(words, language):
    """check reads runs of a prompt's words and stops a run at a word may_spell refuses: that is sound only if
    parse_words reads no number in any text holding that word."""
    from bertdrill.core.number_words import may_spell

    if not all(may_spell(word, language) for word in words):
        assert parse_words(" ".join(words), language) is None
    assert may_spell(words[0], language) or parse_words(words[0], language) is None
