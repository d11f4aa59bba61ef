"""Compiling lessons into cards: stable, language-free ids; one card per set and per pair."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.core.cards import BlankCard, MatchCard, NumericCard, compile_lesson
from bertdrill.core.lesson import parse

MINIMAL = Path(__file__).parent / "lessons" / "minimal.toml"


def test_shipped_lesson_cards_by_kind():
    cards = all_cards(load_lessons())
    assert Counter(card.kind for card in cards) == {"fact": 12, "numeric": 14, "match": 4, "choice": 1,
                                                     "blank": 1, "practice": 1}
    assert len({card.id for card in cards}) == len(cards)


def test_ids_name_lesson_item_and_set_or_pair():
    ids = {card.id for card in all_cards(load_lessons())}
    assert "bert-basics/embedding-params@bert-large" in ids
    assert "bert-basics/bert-base-match#layers" in ids
    assert "bert-basics/attention-projections" in ids


def test_numeric_cards_carry_verified_values_per_set():
    cards = {card.id: card for card in all_cards(load_lessons())}
    base, large = cards["bert-basics/total-params@bert-base"], cards["bert-basics/total-params@bert-large"]
    pair = cards["bert-basics/bert-base-match#layers"]
    assert isinstance(base, NumericCard) and isinstance(large, NumericCard) and isinstance(pair, MatchCard)
    assert base.value == 109482240
    assert large.value == 335141888
    assert large.answer == {"en": "335,141,888", "tr": "335.141.888"}
    assert large.prompt["en"].startswith("How many parameters does BERT-large")
    assert pair.answer["en"] == "12"
    assert pair.term == {"en": "layer", "tr": "katman"}


def test_ids_survive_text_edits_and_fingerprints_change():
    text = MINIMAL.read_text()
    before = {card.id: card.fingerprint for card in compile_lesson(parse(text, "a.toml"))}
    edited = text.replace('"What is it?"', '"What is this, really?"')
    after = {card.id: card.fingerprint for card in compile_lesson(parse(edited, "a.toml"))}
    assert before.keys() == after.keys()
    changed = {card_id for card_id in before if before[card_id] != after[card_id]}
    assert changed == {"mini/what"}


def test_blank_cards_compare_over_every_set_and_synthetic_ones():
    [blank] = [card for card in all_cards(load_lessons()) if card.kind == "blank"]
    assert isinstance(blank, BlankCard)
    assert blank.code == {"en": "attention = ____ * (d * d + d)", "tr": "dikkat = ____ * (d * d + d)"}
    assert blank.answer["en"] == "attention = 4 * (d * d + d)"
    assert len(blank.check_envs) == 5  # bert-base, bert-large and three prime sets
    assert len({env["d"] for env in blank.check_envs}) == 5


def test_fingerprints_keep_the_values_stores_hold():
    """Stores compare fingerprints on every sync: a new formula would mark every card as edited.
    These are the values bertdrill 0.1 wrote (a JSON dump of the shown texts, SHA-256, 16 hex digits)."""
    import hashlib
    import json

    cards = {card.id: card for card in compile_lesson(parse(MINIMAL.read_text(), "a.toml"))}
    assert (cards["mini/what"].fingerprint, cards["mini/table#width"].fingerprint) == (
        "24d91af3f9b693fe", "7c4e639dcc032ce0")
    def one_or_all(code):  # code the same in every language was shown, and is hashed, as one text
        return code if isinstance(code, str) or len(set(code.values())) > 1 else next(iter(code.values()))

    for card in cards.values():
        # A kind's card has only its own fields; those of other kinds were shown as empty.
        # (a match card's options are its table's other answers, already in those cards' fingerprints)
        shown = [card.kind, card.prompt, card.answer, card.explanation,
                 getattr(card, "options", {}) if card.kind == "choice" else {},
                 one_or_all(getattr(card, "code", "")), getattr(card, "term", {}), card.accept,
                 list(getattr(card, "expected_output", ())), card.tags]
        dumped = json.dumps(shown, sort_keys=True, ensure_ascii=False).encode()
        assert card.fingerprint == hashlib.sha256(dumped).hexdigest()[:16]
