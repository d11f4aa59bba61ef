"""Tests for bertdrill.core.textmatch: choice texts by meaning, Turkish without its letters."""

from __future__ import annotations

import pytest

from bertdrill.core.letters import fold_letters, folds_letters
from bertdrill.core.textmatch import choice_key, gives_away


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
    assert fold_letters(text, "tr") == folded
    assert fold_letters(text, "en") == text  # English has no plain-letter spellings


def test_which_languages_fold():
    assert folds_letters("tr") and folds_letters("tr-TR") and folds_letters("tr_TR")
    assert not folds_letters("en")


@pytest.mark.parametrize(("prompt", "answers", "language", "found"), [
    ("Count attention's four projections (Q, K, V, output).", ["4"], "en", "four"),
    ("Dikkatin dört projeksiyonunu (Q, K, V, çıkış) say.", ["4"], "tr", "dört"),
    ("How many heads? There are 12 of them.", ["12"], "en", "12"),
    ("Is it one hundred and ten million?", ["110000000"], "en", "one hundred and ten million"),
    ("Unlike GPT, what is BERT designed to do: generate text or understand it?", ["To understand text", "understand"],
     "en", "understand"),
    ("Which is bidirectional: BERT or GPT?", ["BERT"], "en", "bert"),
])
def test_gives_away_finds_the_answer_in_the_prompt(prompt, answers, language, found):
    assert gives_away(prompt, answers, language) == found


@pytest.mark.parametrize(("prompt", "answers", "language"), [
    ("How many projections does attention have?", ["4"], "en"),
    ("Count the projections in 4 * (d * d + d) minus one.", ["3"], "en"),
    ("In BERT-base, how wide is each attention head (d_model / heads)?", ["64"], "en"),
    ("What is BERT?", ["A model made only of transformer encoder blocks", "encoder"], "en"),
    ("Which letter comes second?", ["b"], "en"),  # too short to look for
    ("Someone said fourteen.", ["4"], "en"),
])
def test_gives_away_stays_quiet_otherwise(prompt, answers, language):
    assert gives_away(prompt, answers, language) is None
