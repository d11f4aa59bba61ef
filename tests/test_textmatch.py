"""Tests for bertdrill.textmatch: choice texts by meaning, Turkish without its letters."""

from __future__ import annotations

import pytest

from bertdrill.textmatch import choice_key, fold_letters, folds_letters


@pytest.mark.parametrize("typed", [
    "a bidirectional encoder; no causal mask", "bidirectional encoder; no causal mask",
    "a bidirectional encoder, no causal mask", "bidirectional encoder no causal mask",
    "  a   bidirectional encoder  ;  no causal mask.  ", "the bidirectional encoder - no causal mask!",
])
def test_choice_key_ignores_articles_punctuation_and_spacing(typed):
    assert choice_key(typed, "en") == choice_key("a bidirectional encoder; no causal mask", "en") == \
        "bidirectional encoder no causal mask"


def test_choice_key_keeps_letters_inside_words():
    assert choice_key("bidirectinal encoder", "en") != choice_key("bidirectional encoder", "en")
    assert choice_key("an rnn", "en") == "rnn"
    assert choice_key("anthe", "en") == "anthe"  # articles are words, not prefixes


def test_turkish_has_no_articles_to_drop():
    assert choice_key("bir rnn kullanması", "tr") == "bir rnn kullanması"
    assert choice_key("çift yönlü encoder; nedensel maske yok", "tr") == "çift yönlü encoder nedensel maske yok"


@pytest.mark.parametrize(("text", "folded"), [
    ("çift yönlü", "cift yonlu"), ("Çift Yönlü", "Cift Yonlu"), ("dağ", "dag"), ("ışık", "isik"),
    ("İSTANBUL", "ISTANBUL"), ("şöyle", "soyle"), ("kâğıt", "kagit"), ("plain ascii", "plain ascii"),
])
def test_fold_letters(text, folded):
    assert fold_letters(text) == folded


def test_which_languages_fold():
    assert folds_letters("tr") and folds_letters("tr-TR") and folds_letters("tr_TR")
    assert not folds_letters("en")
