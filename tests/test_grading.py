"""Tests for bertdrill.core.grading: DESIGN §5 row by row, on the shipped lesson's cards."""

from __future__ import annotations

import ast
import sys
from dataclasses import replace
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from timing import cpu_seconds

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.core import formula
from bertdrill.core.cards import Card, ChoiceCard, MatchCard, compile_lesson
from bertdrill.core.grading import (
    MAX_ANSWER,
    Verdict,
    grade,
    normalise_text,
    parse_number,
)
from bertdrill.core.languages import thousands_separator as grouping
from bertdrill.core.lesson import parse
from bertdrill.core.text import clean_text
from bertdrill.core.textmatch import same_word

LANGUAGES = ("en", "tr")


@cache
def shipped() -> dict[str, Card]:
    return {card.key: card for card in all_cards(load_lessons())}


def card(key: str):
    return shipped()[key]


def verdict(key: str, typed: str, language: str = "en") -> Verdict:
    return grade(card(key), typed, language)


def assert_right(key: str, typed: str, language: str = "en") -> None:
    result = verdict(key, typed, language)
    assert (result.correct, result.suggested, result.diff) == (True, 4, None), result


def assert_wrong(key: str, typed: str, language: str = "en") -> Verdict:
    result = verdict(key, typed, language)
    assert (result.correct, result.suggested, result.diff) == (False, 1, None), result
    return result


def has_controls(text: str) -> bool:
    return any(ord(ch) < 0x20 and ch != "\n" or 0x7F <= ord(ch) <= 0x9F for ch in text)


# --- normalise_text: NFC, trim, whitespace, case by language --------------------------------

@pytest.mark.parametrize("a, b, language", [
    ("e\u0301te\u0301", "été", "en"),  # NFD and NFC are the same text
    ("  masked \t language\n  model ", "masked language model", "en"),
    ("MASKED Language", "masked language", "en"),
    ("İSTANBUL", "istanbul", "tr"),
    ("ISPARTA", "ısparta", "tr"),
    ("I", "ı", "tr"),
    ("İ", "i", "tr"),
    ("KATMAN SAYISI", "katman sayısı", "tr"),
    ("ÇİFT YÖNLÜ", "çift yönlü", "tr"),
    ("I\u0307", "i", "tr"),  # I + combining dot above is İ
    ("en\u200bco\u200dder", "encoder", "en"),  # zero-width characters
    ("\u200fencoder\u202e", "encoder", "en"),  # right-to-left marks and overrides
    ("\ufeffencoder", "encoder", "en"),
    ("Straße", "STRASSE", "en"),
])
def test_normalise_text_makes_equal(a, b, language):
    assert normalise_text(a, language) == normalise_text(b, language)


@pytest.mark.parametrize("a, b, language", [
    ("I", "i", "tr"),  # only Turkish folds I to dotless ı
    ("İSTANBUL", "ıstanbul", "tr"),
    ("ılık", "ilik", "tr"),
    ("mask", "masks", "en"),
])
def test_normalise_text_keeps_apart(a, b, language):
    assert normalise_text(a, language) != normalise_text(b, language)


def test_normalise_text_exact_forms():
    assert normalise_text("  Bİr   İKİ\tÜÇ ", "tr") == "bir iki üç"
    # Outside Turkish, İ and ı typed on a Turkish keyboard are the plain i (issue 21: BİDİRECTİONAL)
    assert normalise_text("  Bİr   İKİ\tÜÇ ", "en") == "bir iki üç"
    assert normalise_text("bıdırectıonal", "en") == "bidirectional"
    assert normalise_text("DİKKAT", "tr-TR") == "dikkat"


@given(st.text(), st.sampled_from(LANGUAGES))
def test_normalise_text_is_idempotent(text, language):
    once = normalise_text(text, language)
    assert normalise_text(once, language) == once
    assert once == once.strip() and "  " not in once


# --- clean_text: what a terminal sends that a person did not mean ---------------------------

@pytest.mark.parametrize("raw, clean", [
    ("\x1b[31mred\x1b[0m", "red"),
    ("\x1b[1;32;40mbold\x1b[m", "bold"),
    ("\x1b]0;window title\x07text", "text"),
    ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("\x1b[200~pasted\x1b[201~", "pasted"),
    ("a\x00b\x07c\x08d\x7fe", "abcde"),
    ("\x9b31mc1", "c1"),
    ("tab\there", "tab here"),
    ("one\r\ntwo\rthree", "one\ntwo\nthree"),
    ("\ud800bad", "\ufffdbad"),  # an undecodable byte kept by surrogateescape
    ("lone ESC\x1b", "lone ESC"),
])
def test_clean_text(raw, clean):
    assert clean_text(raw) == clean


# --- parse_number: DESIGN §5 number forms -----------------------------------------------------

@pytest.mark.parametrize("text, language, value", [
    ("23837184", "en", 23837184),
    ("23,837,184", "en", 23837184),
    ("23.837.184", "tr", 23837184),
    ("23.837.184", "en", 23837184),  # groups of three: unambiguous in English too
    ("23,837,184", "tr", 23837184),
    ("23 837 184", "en", 23837184),
    ("23\u00a0837\u202f184", "tr", 23837184),  # no-break and narrow no-break spaces
    ("23_837_184", "en", 23837184),
    ("110M", "en", 110_000_000),
    ("110 M", "tr", 110_000_000),
    ("110 million", "en", 110_000_000),
    ("110 milyon", "tr", 110_000_000),
    ("110 MİLYON", "tr", 110_000_000),
    ("110 MILYON", "tr", 110_000_000),
    ("1.5k", "en", 1500),
    ("1,5k", "tr", 1500),
    ("2 bin", "tr", 2000),
    ("1.2 milyar", "en", 1_200_000_000),
    ("0.666", "en", Fraction(333, 500)),
    ("0,666", "tr", Fraction(333, 500)),
    ("1.5", "en", Fraction(3, 2)),
    ("1,5", "tr", Fraction(3, 2)),
    ("1.500", "en", Fraction(3, 2)),  # a decimal in English ...
    ("1.500", "tr", 1500),  # ... a thousand and a half in Turkish
    ("1,500", "en", 1500),
    ("1,500", "tr", Fraction(3, 2)),
    ("1,234.5", "en", Fraction(2469, 2)),
    ("1.234,5", "tr", Fraction(2469, 2)),
    ("-64", "en", -64),
    ("\u221264", "en", -64),
    ("+64", "tr", 64),
    ("1.1e8", "en", 110_000_000),
    ("١٢٣", "en", 123),  # Arabic-Indic digits
    ("６４", "tr", 64),  # full-width digits
    (".5", "en", Fraction(1, 2)),
])
def test_parse_number(text, language, value):
    assert parse_number(text, language) == value
    assert isinstance(parse_number(text, language), Fraction)


@pytest.mark.parametrize("text, language", [
    ("1,5", "en"),  # not a grouping, and ',' is no English decimal mark
    ("1.5", "tr"),  # the same the other way round
    ("0,666", "en"),
    ("0.666", "tr"),
    ("12,34", "en"),
    ("1,2345", "en"),
    ("23,837 184", "en"),  # two kinds of grouping
    ("1.234,5", "en"),
    ("1,234.5", "tr"),
    ("0,123,456", "en"),  # a leading zero group
    ("110 apples", "en"),
    ("110Mx", "en"),
    ("1.2.3", "en"),
    ("5.", "en"),
    ("", "en"),
    ("   ", "tr"),
    ("abc", "en"),
    ("V * d", "en"),
    ("2/3", "en"),
    ("1" * 200, "en"),  # too long to be a number anyone types
])
def test_parse_number_refuses(text, language):
    assert parse_number(text, language) is None


@given(st.integers(min_value=-10**15, max_value=10**15), st.sampled_from(LANGUAGES))
def test_parse_number_reads_what_the_lesson_prints(number, language):
    assert parse_number(formula.format_number(number, grouping=grouping(language)), language) == number
    assert parse_number(str(number), language) == number
    assert parse_number(f"{number:_}", language) == number


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=0, max_value=999))
def test_parse_number_decimals_in_both_conventions(whole, thousandths):
    value = whole + Fraction(thousandths, 1000)
    assert parse_number(f"{whole:,}.{thousandths:03d}", "en") == value
    assert parse_number(f"{whole:,}".replace(",", ".") + f",{thousandths:03d}", "tr") == value


@given(st.text(max_size=40), st.sampled_from(LANGUAGES))
def test_parse_number_returns_a_fraction_or_none(text, language):
    assert parse_number(text, language) is None or isinstance(parse_number(text, language), Fraction)


# --- numeric cards ----------------------------------------------------------------------------

@pytest.mark.parametrize("typed, language", [
    ("23837184", "en"),
    ("23,837,184", "en"),
    ("23.837.184", "tr"),
    ("23.837.184", "en"),
    ("23 837 184", "tr"),
    ("23_837_184", "en"),
    ("  23837184 ", "tr"),
    ("(V + L + T) * d + 2 * d", "en"),  # an expression over the card's parameters
    ("(V+L+T)*d+2*d", "tr"),
    ("(V + L + T)·d + 2d", "en"),  # as the lesson's explanation writes it
    ("(V + L + T) × d + 2 × d", "tr"),
    ("V*d + L*d + T*d + 2*d", "en"),
    ("30522*768 + 512*768 + 2*768 + 2*768", "en"),
])
def test_numeric_accepts(typed, language):
    assert_right("embedding-params@bert-base", typed, language)


def test_numeric_expressions_use_the_cards_parameter_set():
    assert_right("embedding-params@bert-large", "(V + L + T) * d + 2 * d")
    assert_right("attention-params@bert-large", "4(d² + d)")
    assert_wrong("embedding-params@bert-large", "23837184")  # bert-base's value


@pytest.mark.parametrize("typed, language, feedback", [
    ("23837185", "en", "Incorrect"),
    ("2383718", "en", "Incorrect"),
    ("(V + L + T) * d", "en", "Incorrect"),  # 0.006 % off, but not a rounding of the answer
    ("V * d", "tr", "Incorrect"),
    ("25M", "en", "Incorrect"),
    ("20M", "en", "Incorrect"),  # a rounding to one figure is no answer
    ("twenty-three million", "en", "Incorrect"),  # read, and wrong: 24 million would be close
    ("23,837,185 parameters", "en", "Incorrect"),  # a unit changes nothing: wrong is wrong
])
def test_numeric_rejects(typed, language, feedback):
    assert assert_wrong("embedding-params@bert-base", typed, language).feedback == feedback


def assert_unread(key: str, typed: str, language: str = "en") -> Verdict:
    """What cannot be read is asked again, never graded."""
    result = verdict(key, typed, language)
    assert (result.retry, result.correct) == (True, False), result
    assert result.feedback.startswith("Type it again: "), result
    return result


@pytest.mark.parametrize("typed, language, why", [
    ("1,5", "en", "not a number here; write decimals with '.', as in 1.5"),
    ("1.5", "tr", "not a number here; write decimals with ',', as in 1,5"),
    ("embeddings", "en", "not a number or an expression"),  # a name is no working
    ("d", "en", "not a number or an expression"),
    ("dd * 2", "en", "unknown name 'dd'; did you mean 'd'?"),
    ("__import__('os')", "en", "not a number or an expression"),
    ("9**9**9**9", "en", "exponent too large (387420489; at most 256)"),
    ("1/0 + d", "en", "division by zero"),
    # issue 21: a broken grouping is asked again, with the grouping it needs
    ("23,837,18", "en", "23,837,18 is not grouped in threes (as in 109,482,240)"),
    ("23.837.18", "tr", "23.837.18 is not grouped in threes (as in 109.482.240)"),
    ("2383,718,4", "en", "2383,718,4 is not grouped in threes (as in 109,482,240)"),
    ("23837184 bananas", "en", "not a number or an expression"),  # not a unit of the language
    ("23837184 parametre", "en", "not a number or an expression"),  # a Turkish unit in an English review
])
def test_what_cannot_be_read_is_asked_again(typed, language, why):
    assert assert_unread("embedding-params@bert-base", typed, language).feedback == f"Type it again: {why}"


@pytest.mark.parametrize("key, typed, language, suggested", [
    # issue 21: a right number with a unit or a hedge of the lesson's language is right
    ("total-params@bert-base", "109482240 parameters", "en", 4),
    ("total-params@bert-base", "109,482,240 params", "en", 4),
    ("total-params@bert-base", "109,482,240 PARAMETERS", "en", 4),
    ("total-params@bert-base", "about 110 million", "en", 3),
    ("total-params@bert-base", "roughly 110M parameters", "en", 3),
    ("total-params@bert-base", "approximately one hundred and ten million", "en", 3),
    ("bert-base-match#layers", "12 layers", "en", 4),
    ("bert-base-match#layers", "twelve layers", "en", 4),
    ("total-params@bert-base", "109.482.240 parametre", "tr", 4),
    ("total-params@bert-base", "yaklaşık 110 milyon", "tr", 3),
    ("total-params@bert-base", "yaklasik 110 milyon parametre", "tr", 3),  # typed without Turkish letters
    ("total-params@bert-base", "110 milyon civarında", "tr", 3),
    ("bert-base-match#layers", "12 katman", "tr", 4),
    ("head-size@bert-base", "64 dimensions", "en", 4),
])
def test_a_unit_or_a_hedge_around_a_right_number(key, typed, language, suggested):
    result = verdict(key, typed, language)
    assert (result.correct, result.suggested, result.retry) == (True, suggested, False), result


@pytest.mark.parametrize("key, typed, language, feedback", [
    ("total-params@bert-base", "110M", "en", "Close: rounded right to 2 significant figures (0.47 % off)"),
    ("total-params@bert-base", "110 milyon", "tr", "Close: rounded right to 2 significant figures (0,47 % off)"),
    ("total-params@bert-base", "yüz on milyon", "tr", "Close: rounded right to 2 significant figures (0,47 % off)"),
    ("total-params@bert-base", "~110M", "en", "Close: rounded right to 2 significant figures (0.47 % off)"),
    ("total-params@bert-base", "~100M", "en", "Close: rounded right to 1 significant figure (8.66 % off)"),
    ("total-params@bert-base", "109.5M", "en", "Close: rounded right to 4 significant figures (0.02 % off)"),
    ("total-params@bert-base", "109,482,000", "en", "Close: rounded right to 6 significant figures (0 % off)"),
    ("embedding-params@bert-base", "24M", "en", "Close: rounded right to 2 significant figures (0.68 % off)"),
    ("embedding-params@bert-base", "~24 million", "en", "Close: rounded right to 2 significant figures (0.68 % off)"),
    ("embedding-params@bert-base", "23.8M", "en", "Close: rounded right to 3 significant figures (0.16 % off)"),
    ("embedding-params@bert-base", "23,84 milyon", "tr", "Close: rounded right to 4 significant figures (0,01 % off)"),
    ("total-params@bert-large", "340 million", "en", "Close: rounded right to 2 significant figures (1.45 % off)"),
])
def test_numeric_approximations_are_close(key, typed, language, feedback):
    """An answer that rounds the exact value right, to the figures it gives, is close: grade 3, and how close.

    The feedback never repeats the answer: the screen shows it once, on its own line."""
    result = verdict(key, typed, language)
    assert (result.correct, result.suggested, result.feedback) == (True, 3, feedback)
    assert result.expected not in result.feedback


@pytest.mark.parametrize("key, typed", [
    ("total-params@bert-base", "100M"),  # one figure, not said to be approximate
    ("total-params@bert-base", "120M"),
    ("embedding-params@bert-base", "23M"),  # 23.8 rounds to 24
    ("embedding-params@bert-base", "~23M"),
])
def test_numeric_wrong_roundings_stay_wrong(key, typed):
    assert_wrong(key, typed)


def test_numeric_tolerance_is_relative():
    lenient = replace(card("total-params@bert-base"), tolerance=Fraction(1, 100))
    near = grade(lenient, "110M", "en")
    assert (near.correct, near.suggested) == (True, 4)
    assert near.feedback == "Correct: within the item's tolerance"
    assert grade(lenient, "109482240", "en").feedback == "Correct"
    assert not grade(lenient, "111M", "en").correct  # 1.4 % off


def test_matching_pairs_with_a_value_are_numbers():
    assert_right("bert-base-match#layers", "12")
    assert_right("bert-base-match#vocabulary", "30.522", "tr")
    assert_right("bert-base-match#vocabulary", "30,522")
    assert_wrong("bert-base-match#layers", "24")
    assert_wrong("bert-base-match#layers", "n")  # naming the parameter is not answering


# --- blanks: expressions that agree on every parameter set ------------------------------------

BLANK = "attention-projections"


def test_blank_card_is_the_lesson_question():
    assert card(BLANK).code["tr"] == "dikkat = ____ * (d * d + d)"
    assert card(BLANK).fill == "4"


@pytest.mark.parametrize("typed", [
    "4",
    " 4 ",
    "4*d*d + 4*d",  # a whole right-hand side (the example)
    "4 * (d * d + d)",
    "4*d**2 + 4*d",
    "4d² + 4d",
    "4(d² + d)",
    "dikkat = 4*d*d + 4*d",
    "(d*d + d) * 4",
    "2 + 2",
    "8 / 2",
])
def test_blank_accepts(typed):
    assert_right(BLANK, typed)
    assert_right(BLANK, typed, "tr")


@pytest.mark.parametrize("typed", [
    "3",
    "4*d*d",
    "4*d*d + 4",
    "4*d*d + d",
    "5",
    "attention",  # the formula's name is not an answer
    "d",
    "three",
    "4 * (d * d + d) + (d - 768) * (d - 1024)",  # equal on both BERT sets, not on the prime sets
    "(4 * (d * d + d)) if d else 0",
])
def test_blank_rejects(typed):
    assert_wrong(BLANK, typed)


def test_blank_compares_on_synthetic_sets_as_well():
    # The sneaky answer above agrees on every real set: only the synthetic ones catch it.
    real_only = replace(card(BLANK), check_envs=card(BLANK).check_envs[:2])
    sneaky = "4 * (d * d + d) + (d - 768) * (d - 1024)"
    assert grade(real_only, sneaky, "en").correct
    assert not grade(card(BLANK), sneaky, "en").correct


def test_blank_of_words_is_compared_as_text():
    words = replace(card(BLANK), code={"en": "BERT is ____.", "tr": "BERT is ____."}, fill="bidirectional",
                    answer={"en": "BERT is bidirectional.", "tr": "BERT is bidirectional."})
    assert grade(words, "Bidirectional", "en").correct
    typo = grade(words, "bidirectonal", "en")
    assert (typo.correct, typo.suggested, typo.feedback, typo.diff) == (True, 3, "Almost: one typo", "bidirect[+i]onal")
    assert not grade(words, "unidirectional", "en").correct


# --- choices: number, letter or text ---------------------------------------------------------

CHOICE = "bert-vs-gpt"


@pytest.mark.parametrize("typed, language", [
    ("4", "en"), ("d", "en"), ("D", "en"), ("d)", "en"), ("(4)", "tr"), ("D", "tr"), ("d", "tr"),
    ("A bidirectional encoder; no causal mask", "en"),
    ("a  bidirectional ENCODER; no causal mask.", "en"),
    ("Çift yönlü encoder; nedensel maske yok", "tr"),
    ("ÇİFT YÖNLÜ ENCODER; NEDENSEL MASKE YOK", "tr"),
])
def test_choice_accepts(typed, language):
    assert_right(CHOICE, typed, language)


@pytest.mark.parametrize("typed, language", [
    ("1", "en"), ("a", "en"), ("B", "tr"), ("More layers", "en"), ("RNN kullanması", "tr"),
    ("causal mask", "en"),  # an option's later words alone may drop its "no": not the option
])
def test_choice_rejects(typed, language):
    assert_wrong(CHOICE, typed, language)


def test_choice_out_of_range_is_asked_again():
    """An option that does not exist is not an answer: nothing is graded, the learner is asked again."""
    for typed in ("7", "0", "5", "e", "z", "(e)", "1234", "-1", "2.5", "110M", "110 million", "1,000", "five"):
        result = verdict(CHOICE, typed)
        assert (result.retry, result.feedback) == (True, "No such option: choose 1 to 4 or a to d"), typed
    for typed in ("110 milyon", "beş", "1.000"):
        result = verdict(CHOICE, typed, "tr")
        assert result.retry, typed


def test_a_number_on_a_choice_card_of_numbers_is_the_option_of_that_value():
    """Options that are numbers: their value typed another way names them ("one hundred", "1e2" for "100");
    a number that is none of them is asked again, never graded."""
    choice = ChoiceCard(id="l/c", lesson_id="l", item_id="c", prompt={"en": "How many?"}, answer={"en": "100"},
                        options={"en": ("12", "100", "3,072")}, correct=1)
    for typed in ("100", "1e2", "one hundred", "b", "2"):
        assert grade(choice, typed, "en").correct, typed
    for typed in ("12", "3072", "a", "twelve"):
        result = grade(choice, typed, "en")
        assert (result.correct, result.retry) == (False, False), typed
    assert grade(choice, "101", "en").retry


def test_choice_text_tolerates_one_typo():
    result = verdict(CHOICE, "A bidirectional encoder; no casual mask")
    assert (result.correct, result.suggested, result.feedback) == (True, 3, "Almost: one typo")
    assert result.diff == "…irectional encoder no ca[su→us]al mask"  # punctuation is no typo
    assert verdict(CHOICE, "Çift yönlü encodr; nedensel maske yok", "tr").suggested == 3
    assert not verdict(CHOICE, "More layer", "en").correct  # one typo from a wrong option is wrong


# --- facts: text and alternatives ------------------------------------------------------------

@pytest.mark.parametrize("key, typed, language", [
    ("pre-training", "As a masked language model on unlabelled text.", "en"),
    ("pre-training", "as a masked language model on unlabelled text", "en"),
    ("pre-training", "masked language model", "en"),  # an accepted alternative
    ("pre-training", "MLM", "en"),
    ("pre-training", "MASKELİ DİL MODELİ", "tr"),
    ("pre-training", "MASKELI DIL MODELI", "tr"),  # English keyboards: plain I, still accepted
    ("bert-acronym", "BIDIRECTIONAL ENCODER REPRESENTATIONS FROM TRANSFORMERS, 2018", "tr"),
    ("bert-definition", "önceden eğitilmiş bir Encoder", "tr"),  # both parts: "Encoder" alone is judged
    ("understands-not-generates", "anlamak", "tr"),
    ("word-embedding-table", "23M", "en"),
    ("word-embedding-table", "~23 milyon", "tr"),
])
def test_fact_accepts(key, typed, language):
    assert_right(key, typed, language)


@pytest.mark.parametrize("key, typed, language", [
    ("pre-training", "mlp", "en"),  # short words get no typo tolerance
    ("pre-training", "next sentence prediction", "en"),
    ("word-embedding-table", "24 million", "en"),  # a changed digit is not a typo
    ("word-embedding-table", "24M", "tr"),
    ("understands-not-generates", "generate", "en"),
    ("understands-not-generates", "anlamak", "en"),  # Turkish alternatives belong to Turkish
])
def test_fact_not_clearly_right_is_judged_by_the_learner(key, typed, language):
    result = verdict(key, typed, language)
    assert (result.correct, result.judge, result.retry) == (False, True, False), result
    assert result.feedback == "Compare it with the answer, and grade it yourself"


# --- issue 21: free text judged fairly -----------------------------------------------------------

@pytest.mark.parametrize("key, typed, language", [
    ("bidirectional", "each word sees context on both its left and right", "en"),
    ("bidirectional", "her kelime sağındaki ve solundaki bağlamı görür", "tr"),
    ("bert-acronym", "Bidirectional Encoder Representations from Transformers (2018)", "en"),
    ("bert-acronym", "BERT stands for Bidirectional Encoder Representations from Transformers, from 2018", "en"),
    ("pre-training", "masked LM", "en"),  # as the card's own source line says it
    ("pre-training", "by masking words and predicting them", "en"),
    ("fine-tuning", "classification, QA, NER; little labelled data", "en"),
    ("fine-tuning", "sınıflandırma, QA, NER; az veri", "tr"),
    ("ffn-share", "FFN, 0,666", "tr"),  # the explanation's ≈ 0,666 for two thirds
    ("ffn-share", "the feed-forward network, 2/3", "en"),
    ("bert-definition", "a pre-trained transformer encoder", "en"),
    ("next-sentence-prediction", "NSP; every token is from sentence A or B", "en"),
])
def test_a_right_answer_in_other_words_is_right(key, typed, language):
    result = verdict(key, typed, language)
    assert (result.correct, result.suggested) == (True, 4), result


@pytest.mark.parametrize("key, typed, language", [
    # Turkish adds suffixes to a word: "kodlayıcılarından" (of its encoders) says "kodlayıcı"
    ("bert-definition", "büyük metinle önceden eğitilmiş transformer kodlayıcılarından oluşur", "tr"),
    ("bert-definition", "önceden eğitilmiştir, kodlayıcıdır", "tr"),
    ("bert-definition", "onceden egitilmis kodlayicilardan olusur", "tr"),  # typed without Turkish letters
])
def test_a_turkish_word_with_suffixes_says_its_stem(key, typed, language):
    result = verdict(key, typed, language)
    assert (result.correct, result.suggested) == (True, 4), result


@pytest.mark.parametrize("typed, wanted, language, same", [
    ("kodlayicilarindan", "kodlayici", "tr", True),
    ("kitabi", "kitap", "tr", True),  # the stem's last consonant softens before a suffix
    ("egitilmemis", "egitilmis", "tr", False),  # a negation inside the word is not the word
    ("kodlayicilarindan", "kodlayici", "en", False),  # only a language that adds suffixes
    ("encoderless", "encoder", "en", False),
    ("onu", "on", "tr", False),  # a short stem begins too many other words
])
def test_a_suffixed_word(typed, wanted, language, same):
    assert same_word(typed, wanted, language) is same


@pytest.mark.parametrize("key, typed, language, matched, missing", [
    ("bert-definition", "encoder", "en", ("encoder",), ("pre-trained",)),  # a single keyword is not the whole
    ("next-sentence-prediction", "NSP", "en", ("next sentence prediction",), ("sentence a",)),  # half of two
    ("bert-acronym", "Bidirectional Encoder Representations from Transformers, 2017", "en",
     ("Bidirectional Encoder Representations from Transformers",), ("2018",)),  # a year is exact
    ("bidirectional", "it looks both ways", "en", (), ("left", "right")),
    ("understands-not-generates", "to produce text", "en", ("text", "produce"),
     ("understand", "representations", "not", "generate")),  # no parts: the answer's own words
])
def test_an_answer_not_clearly_right_shows_what_matched_and_what_is_missing(key, typed, language, matched, missing):
    result = verdict(key, typed, language)
    assert (result.correct, result.judge) == (False, True)
    assert (result.matched, result.missing) == (matched, missing)


@pytest.mark.parametrize("typed, language", [("bidirectional", "en"), ("A bidirectional encoder", "en"),
                                              ("çift yönlü", "tr"), ("CIFT YONLU", "tr"),
                                              ("çift yönlülüğüyle", "tr")])  # "by being bidirectional"
def test_a_choice_named_by_its_distinctive_first_words(typed, language):
    result = verdict(CHOICE, typed, language)
    assert result.correct and result.suggested == (3 if typed == "CIFT YONLU" else 4)  # without its letters: 3
    assert_wrong(CHOICE, "more")  # the first word of a wrong option
    assert_wrong(CHOICE, "encoder")  # not how the option begins


@pytest.mark.parametrize("typed, diff", [
    ("maskd language model", "mask[+e]d language model"),  # a letter left out
    ("maskked language model", "mask[-k]ed language model"),  # a letter too many
    ("masked lenguage model", "masked l[e→a]nguage model"),  # a wrong letter
    ("masekd language model", "mas[ek→ke]d language model"),  # neighbours swapped
    ("maskedlanguage model", "masked[+␣]language model"),  # a missing space, shown
])
def test_fact_near_miss_shows_a_diff(typed, diff):
    result = verdict("pre-training", typed)
    assert result == Verdict(True, 3, "Almost: one typo", "As a masked language model on unlabelled text.", diff)


def test_near_miss_in_turkish_folds_case_first():
    result = verdict("pre-training", "MASKELİ DİL MODLİ", "tr")
    assert (result.suggested, result.diff) == (3, "maskeli dil mod[+e]li")


def test_self_graded_facts_still_grade_their_answer():
    for key, c in shipped().items():
        if c.kind == "fact":
            for language in LANGUAGES:
                assert grade(c, c.answer[language], language).correct, key


# --- matching pairs with a text meaning -------------------------------------------------------

def test_matching_pair_with_a_text_meaning(lesson_text):
    vocabulary = next(line for line in lesson_text.splitlines() if '{ id = "vocabulary"' in line)
    text = lesson_text.replace(
        vocabulary,
        vocabulary + '\n    { id = "heads", term = { en = "h", tr = "h" },'
        ' meaning = { en = "attention heads", tr = "DİKKAT BAŞLARI" } },',
    )
    pair = next(c for c in compile_lesson(parse(text)) if c.key == "bert-base-match#heads")
    assert isinstance(pair, MatchCard)
    assert pair.value is None
    assert grade(pair, "Attention heads", "en").correct
    assert grade(pair, "dikkat başları", "tr").correct
    assert grade(pair, "attention head", "en").suggested == 3
    assert not grade(pair, "layers", "en").correct


# --- practice: output lines -------------------------------------------------------------------

PRACTICE = "count-bert-base"


@pytest.mark.parametrize("typed", [
    "23837184 7087872 590592\n109482240\n0.666",
    "  23837184   7087872 590592 \r\n\n109482240\n0.666\n\n",
    "23837184 7087872 590592 109482240 0.666",  # one line, as the line protocol sends it
])
def test_practice_accepts_the_output(typed):
    assert_right(PRACTICE, typed)


@pytest.mark.parametrize("typed, feedback", [
    ("23837184 7087872 590592\n109482241\n0.666", "Incorrect: line 2 differs"),
    ("23837184 7087872 590592\n109482240\n0.667", "Incorrect: line 3 differs"),
    ("23837184 7087872 590592\n109482240", "Incorrect: 3 lines expected, 2 given"),
    ("23837184 7087872\n590592 109482240\n0.666", "Incorrect: line 1 differs"),
    ("23,837,184 7,087,872 590,592 109,482,240 0.666", "Incorrect: 3 lines expected, 1 given"),
])
def test_practice_rejects(typed, feedback):
    assert assert_wrong(PRACTICE, typed).feedback == feedback


# --- every card, both languages ---------------------------------------------------------------

@pytest.mark.parametrize("key", sorted(shipped()))
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_shown_answer_is_always_right(key, language):
    c = card(key)
    result = grade(c, c.answer[language], language)
    assert (result.correct, result.suggested, result.feedback) == (True, 4, "Correct")
    assert result.expected == c.answer[language]


# --- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("typed", ["", " ", "\t\n  \r\n", "\x1b[0m", "\u200b\u200f", "\x00\x07"])
@pytest.mark.parametrize("key", ["pre-training", CHOICE, BLANK, "total-params@bert-base", PRACTICE])
def test_empty_answers(key, typed):
    assert verdict(key, typed) == Verdict(False, 0, "No answer", card(key).answer["en"])


def test_a_one_megabyte_line_is_refused_quickly():
    line = "4" * 1_000_000
    graded = [(card(key), language) for key in shipped() for language in LANGUAGES]
    results: list[Verdict] = []
    # 50 ms per card and language at most, measured over all of them at once
    assert cpu_seconds(lambda: results.extend(grade(c, line, language) for c, language in graded)) < 0.05 * len(graded)
    for result in results:
        assert (result.correct, result.suggested, result.feedback) == (False, 1, "Answer too long")


@pytest.mark.parametrize("filler", ["a", "4", "(", "\x1b[31m", "İ", "1,"])
def test_answers_at_the_length_limit_are_graded_quickly(filler):
    typed = (filler * MAX_ANSWER)[:MAX_ANSWER]
    def every_card() -> None:
        for c in shipped().values():
            for language in LANGUAGES:
                result = grade(c, typed, language)
                assert not result.correct and result.feedback != "Answer too long"
    assert cpu_seconds(every_card) < 2  # every card, both languages


def test_control_characters_and_escapes_are_ignored():
    assert_right("pre-training", "\x1b[31mmasked\x1b[0m lan\x00guage mo\u200bdel\x07")
    assert_right(CHOICE, "\x1b]0;pwned\x07\x1b[2J4")
    assert_right("embedding-params@bert-base", "23\u200b837\u200f184\x1b[K", "tr")
    assert_right(BLANK, "4\x1b[D*d*d + 4*d")


def test_diffs_never_carry_control_characters():
    result = verdict("pre-training", "mas\x1b[1mkd\x1b[0m lang\x9b2Juage\x08 model\r")
    assert result.suggested == 3
    assert result.diff == "mask[+e]d language model"
    assert not has_controls(result.diff + result.feedback)


def test_lone_surrogates_from_undecodable_input_are_harmless():
    result = verdict("pre-training", "masked language mode\udcff")
    assert result.suggested == 3 and result.diff is not None
    result.diff.encode("utf-8")  # printable and encodable


def test_unknown_review_language_falls_back_to_the_lessons_first():
    assert grade(card(CHOICE), "A bidirectional encoder; no causal mask", "de").correct


# --- properties --------------------------------------------------------------------------------

# Arbitrary text, including controls, escapes, surrogates and unassigned code points.
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=60)
ESCAPES = st.sampled_from(["\x1b[31m", "\x1b]0;x\x07", "\x1b", "\x9b", "\x00", "\u200f", "\r", "\n", "\t"])
# Text that looks like what people type here: numbers, expressions, option letters, words.
TOKENS = st.sampled_from([
    "V", "L", "T", "d", "f", "n", "h", "layer", "total", "+", "-", "*", "/", "//", "%", "**", "^", "(", ")",
    "·", "×", "²", "0", "1", "4", "768", "1,5", "1.5", "23.837.184", "23,837,184", "110M", " milyon", "e9",
    "9**9**9", "1/0", "round(", "min(", ",", "=", "dikkat", "a", "D", "İ", "ı", " ", "~", "____", "maske",
])
EXPRESSIONS = st.lists(st.one_of(TOKENS, ESCAPES), max_size=25).map("".join)
TYPED = st.one_of(ANY_TEXT, EXPRESSIONS, st.sampled_from([a for c in shipped().values() for a in c.answer.values()]))


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(sorted(shipped())), st.sampled_from(LANGUAGES), TYPED)
@example("bert-vs-gpt", "tr", "\x1b[31mI")
@example("attention-projections", "en", "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((")
@example("embedding-params@bert-base", "tr", "9" * 5000)
@example("total-params@bert-base", "en", "110M")
def test_grade_never_raises_and_always_answers_plainly(key, language, typed):
    result = grade(card(key), typed, language)
    assert isinstance(result, Verdict)
    assert result.suggested in (0, 1, 3, 4)
    assert result.judge or result.correct == (result.suggested >= 3)  # a judged answer is the learner's to grade
    # A near miss (a diff) suggests 3; so do a correct rounding ("Close: ...") and Turkish typed without its
    # letters (a spelling note): a 3 always says why it is not a 4.
    assert result.diff is None or result.suggested == 3
    assert result.suggested != 3 or result.diff is not None or result.note is not None or "Close" in result.feedback \
        or result.judge
    assert result.feedback and result.feedback[0].isupper()
    assert result.expected == card(key).answer[language]
    for shown in (result.feedback, result.diff or ""):
        assert not has_controls(shown)
        shown.encode("utf-8")


@given(st.sampled_from(LANGUAGES), st.data())
def test_one_typo_in_an_alternative_is_a_near_miss(language, data):
    c = card("pre-training")
    words = [a for a in c.accept[language] if len(a) >= 4]
    target = normalise_text(data.draw(st.sampled_from(words)), language)
    at = data.draw(st.integers(0, len(target) - 1))
    letter = data.draw(st.sampled_from("qxzw"))
    typed = target[:at] + letter + target[at + 1:]  # one substitution by a letter the words lack
    result = grade(c, typed, language)
    assert (result.correct, result.suggested) == (True, 3)
    assert result.diff is not None
    assert f"→{letter}]" not in result.diff and f"[{letter}→" in result.diff


# --- purity ------------------------------------------------------------------------------------

def test_grading_imports_only_the_standard_library_and_the_core():
    path = sys.modules["bertdrill.core.grading"].__file__
    assert path is not None
    source = Path(path).read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            assert all(alias.name.split(".")[0] in sys.stdlib_module_names for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            assert node.level == 0 and (module == "bertdrill.core" or module.startswith("bertdrill.core.") or
                                        module.split(".")[0] in sys.stdlib_module_names | {"__future__"}), module


# --- issue 12: fair grading ---------------------------------------------------------------------

@pytest.mark.parametrize("typed, language", [
    ("bidirectional encoder; no causal mask", "en"),  # without its article: the example
    ("a bidirectional encoder, no causal mask", "en"),  # a comma for the semicolon: no typo
    ("A Bidirectional Encoder No Causal Mask", "en"),
    ("the bidirectional encoder - no causal mask.", "en"),
    ("çift yönlü encoder, nedensel maske yok", "tr"),
])
def test_choice_text_is_matched_by_meaning(typed, language):
    assert_right(CHOICE, typed, language)


def test_a_typo_inside_a_word_stays_a_typo():
    result = verdict(CHOICE, "bidirectional encoder, no causl mask")
    assert (result.correct, result.suggested, result.diff) == (True, 3, "…ectional encoder no caus[+a]l mask")
    assert_wrong(CHOICE, "more layers")  # another option, by meaning
    assert_wrong(CHOICE, "an RNN")


@pytest.mark.parametrize("key, typed, language", [
    (BLANK, "four", "en"), (BLANK, "Four", "en"), (BLANK, "dört", "tr"), (BLANK, "dort", "tr"),
    ("total-params@bert-base", "one hundred nine million four hundred eighty-two thousand two hundred forty", "en"),
    ("bert-base-match#layers", "twelve", "en"), ("bert-base-match#layers", "on iki", "tr"),
    ("head-size@bert-base", "sixty-four", "en"), ("head-size@bert-base", "altmış dört", "tr"),
])
def test_number_words_are_read_in_the_lesson_language(key, typed, language):
    assert_right(key, typed, language)


def test_number_words_are_verified_like_digits():
    assert_wrong(BLANK, "five")
    assert_wrong("bert-base-match#layers", "eleven")
    assert_wrong(BLANK, "four", "tr")  # an English word in a Turkish review is no Turkish number
    close = verdict("total-params@bert-base", "one hundred and ten million")
    assert (close.correct, close.suggested) == (True, 3)


@pytest.mark.parametrize("key, typed, language, spelling", [
    ("bert-vs-gpt", "cift yonlu encoder; nedensel maske yok", "tr", "Çift yönlü encoder; nedensel maske yok"),
    ("bidirectional", "her kelime hem solundaki hem sagindaki baglami gorur", "tr",
     "Her kelime hem solundaki hem sağındaki bağlamı görür."),
    ("understands-not-generates", "anlamak", "tr", None),  # nothing to fold: simply right
])
def test_turkish_without_turkish_letters_is_right_with_a_spelling_note(key, typed, language, spelling):
    result = verdict(key, typed, language)
    if spelling is None:
        assert (result.correct, result.suggested, result.note) == (True, 4, None)
        return
    assert (result.correct, result.suggested) == (True, 3)  # one grade below perfect, never wrong
    assert result.feedback == "Right, typed without Turkish letters"
    assert result.note == f"Spelling: {spelling}"


def test_fact_cards_grade_a_typed_answer_against_the_answer_and_accept_list():
    assert_right("pre-training", "mlm")
    assert_right("pre-training", "Masked language model")
    near = verdict("pre-training", "masked langauge model")
    assert (near.correct, near.suggested) == (True, 3)
    guess = verdict("pre-training", "next token prediction")
    assert (guess.correct, guess.judge, guess.matched) == (False, True, ())


def test_match_cards_offer_the_tables_values_and_accept_value_letter_or_number():
    layers = card("bert-base-match#layers")
    assert layers.options["en"] == ("12", "768", "3,072", "30,522")  # sorted: the order gives nothing away; one separator rule
    assert layers.options["tr"] == ("12", "768", "3.072", "30.522")
    assert layers.phrased["en"] == "BERT-base: how many layers?"
    for typed in ("12", "1", "a", "A)", "twelve"):
        assert_right("bert-base-match#layers", typed)
    assert_right("bert-base-match#vocabulary", "d")
    assert_right("bert-base-match#vocabulary", "30522")
    assert_wrong("bert-base-match#layers", "2")  # option 2 is 768
    assert_wrong("bert-base-match#layers", "768")
    again = verdict("bert-base-match#layers", "e")
    assert (again.retry, again.feedback) == (True, "No such option: choose 1 to 4 or a to d")


@pytest.mark.parametrize("typed", ["d/h", "d / h", "768/12", "d ÷ h"])
def test_a_question_that_names_its_formula_wants_the_number(typed):
    result = verdict("head-size@bert-base", typed)
    assert result.retry and not result.correct
    assert result.feedback == "The question gives the formula: type the number it comes to"
    assert_right("head-size@bert-base", "64")
    assert_right("embedding-params@bert-base", "(V + L + T) * d + 2 * d")  # this question names no formula


def diagnosed(key: str, typed: str, language: str = "en") -> Verdict:
    from bertdrill.core.diagnosis import Diagnoser

    return grade(card(key), typed, language, diagnoser=Diagnoser.for_lesson(load_lessons()[0]))


@pytest.mark.parametrize("key, typed, language, note", [
    ("embedding-params@bert-base", "4*(768*768+768)", "en",
     "2,362,368 is one attention block of BERT-base, not the embeddings."),
    ("embedding-params@bert-base", "2.362.368", "tr", "2.362.368 is dikkat bloğu of BERT-base, not gömme katmanı."),
    ("embedding-params@bert-base", "2383718", "en", "Off by a power of ten: about 10 times too small."),
    ("embedding-params@bert-base", "23837148", "en", "Two digits are swapped."),
    ("embedding-params@bert-base", "23,837,185", "en", "One digit is off."),
    ("embedding-params@bert-base", "31,782,912", "en",
     "31,782,912 is the embeddings of BERT-large: the value for the other parameter set."),
    ("attention-params@bert-base", "4*d*d", "en",
     "2,359,296 is one attention block of BERT-base with its biases left out (d), not one attention block."),
    # f = 4d in BERT: leaving out both LayerNorms, attention's biases or the FFN's f gives one number
    ("layer-params@bert-base", "4*(d*d + d) + d*f + f + f*d + d", "en",
     "7,084,800 is either one encoder layer of BERT-base without all 2 copies of 2 * d (a LayerNorm), one encoder "
     "layer of BERT-base with the biases of one attention block left out (d) or one encoder layer of "
     "BERT-base with the biases of one FFN left out (f), not one encoder layer."),
    ("bert-base-match#layers", "24", "en", "24 is n of BERT-large: the value for the other parameter set."),
    (BLANK, "4*d*d", "en",
     "4*d*d is one attention block of BERT-base with its biases left out (d), not one attention block."),
    # issue 21: three projections for four, on the blank and carried into every layer of the total
    (BLANK, "3", "en", "3 is one attention block of BERT-base with 3 * (d * d + d) for 4 * (d * d + d), "
                       "not one attention block."),
    ("total-params@bert-base", "102395136", "en", "102,395,136 is the total of BERT-base with 3 * (d * d + d) for "
                                                  "4 * (d * d + d) in one attention block, not the total."),
    ("total-params@bert-base", "109,398,528", "en",
     "109,398,528 is the total of BERT-base with every bias left out, in every formula (d, f), not the total."),
    ("total-params@bert-base", "109443840 parameters", "en", "109,443,840 is the total of BERT-base with 2 * d "
                                                             "(a LayerNorm) left out everywhere it is added, not the total."),
])
def test_wrong_numbers_are_diagnosed(key, typed, language, note):
    result = diagnosed(key, typed, language)
    assert (result.correct, result.suggested) == (False, 1)
    assert result.note == note
    assert result.expected not in result.feedback + note  # the answer is shown once, on its own line


def test_right_answers_and_unreadable_ones_get_no_diagnosis():
    assert diagnosed("embedding-params@bert-base", "23837184").note is None
    assert diagnosed("embedding-params@bert-base", "24M").note is None  # close
    assert diagnosed("embedding-params@bert-base", "banana").note is None
    assert diagnosed("embedding-params@bert-base", "123").note is None  # nothing the lesson knows


# --- issue 11, item 1: typed arithmetic costs little, whatever it is --------------------------

FORMULA_CORPUS = Path(__file__).parent / "corpus" / "formulas"


@pytest.mark.parametrize("name", sorted(path.name for path in FORMULA_CORPUS.iterdir()))
def test_hostile_arithmetic_typed_as_an_answer_is_graded_within_100_ms(name):
    typed = (FORMULA_CORPUS / name).read_text(encoding="utf-8").strip()
    for key in ("embedding-params@bert-base", "attention-projections", "bert-base-match#layers"):
        card(key)  # the lesson is read before the clock starts
        assert cpu_seconds(lambda: verdict(key, typed)) < 0.1, key  # noqa: B023 - called at once
        assert not verdict(key, typed).correct


def test_a_too_precise_answer_says_so():
    result = assert_unread("embedding-params@bert-base", "((0.999999999**256)**256)**256")
    assert result.feedback == "Type it again: result too precise (an exact fraction finer than 1/10^60)"


# --- issue 11, item 7: a typed expression uses the card's parameters and numbers only ---------

def formula_name_answers() -> list[tuple[str, str]]:
    lines = (Path(__file__).parent / "corpus" / "typed" / "formula-names.tsv").read_text(encoding="utf-8")
    return [(key, typed) for key, typed in (line.split("\t") for line in lines.splitlines() if not line.startswith("#"))]


@pytest.mark.parametrize("key, typed", formula_name_answers())
def test_a_formula_name_is_no_part_of_an_answer(key, typed):
    result = assert_unread(key, typed)
    assert result.feedback.startswith("Type it again: unknown name '")


@pytest.mark.parametrize("key, typed", [
    ("total-params@bert-base", "(V + L + T) * d + 2 * d + n * (4 * (d * d + d) + 2 * d + d * f + f + f * d + d "
                               "+ 2 * d) + d * d + d"),
    ("attention-projections", "2 + 2"),
    ("attention-projections", "dikkat = 4*d*d + 4*d"),
    ("bert-base-match#layers", "n * 1"),
])
def test_the_same_answers_from_parameters_are_right(key, typed):
    assert_right(key, typed)


@pytest.mark.parametrize("key, typed, language", [
    # issue 21: dotted and dotless I typed on the other keyboard fold both ways
    ("total-params@bert-base", "YUZ ON MILYON", "tr"),  # ASCII capitals in a Turkish review
    ("bert-base-match#layers", "ON IKI", "tr"),
    ("bert-vs-gpt", "A BİDİRECTİONAL ENCODER; NO CAUSAL MASK", "en"),  # a Turkish keyboard, an English review
    ("pre-training", "MASKED LANGUAGE MODELİNG", "en"),
    ("pre-training", "masked language modelıng", "en"),
])
def test_turkish_i_typed_on_either_keyboard(key, typed, language):
    assert verdict(key, typed, language).correct
