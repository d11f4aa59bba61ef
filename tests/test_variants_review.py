"""Fresh numbers in review: the card to show, grading and diagnosis on the variant's numbers, the log, undo."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import Store
from bertdrill.adapters.store.memory import MemoryStore
from bertdrill.app.session import Limits, Session
from bertdrill.app.variants import FreshNumbers
from bertdrill.core import formula
from bertdrill.core.cards import MatchCard, NumericCard
from bertdrill.core.diagnosis import Diagnoser
from bertdrill.core.grading import grade
from bertdrill.core.lesson import MatchItem, VariantMode
from bertdrill.core.numbers import format_number
from bertdrill.core.scheduling.state import Schedule
from bertdrill.core.variants import find, read_logged, variant_card, wants_variant

ISTANBUL = timezone(timedelta(hours=3))
NOW = datetime(2026, 3, 2, 9, tzinfo=ISTANBUL)


@pytest.fixture(scope="module")
def lessons():
    return load_lessons()


@pytest.fixture(scope="module")
def cards(lessons):
    return all_cards(lessons)


def numeric_session(store, cards, lessons, mode, salt=1):
    shown = [card for card in cards if card.kind == "numeric"]
    return Session(store, shown, clock=lambda: NOW, limits=Limits(new=50), numbers=FreshNumbers(
        lessons, mode=mode, salt=salt))


def test_the_prompt_states_the_variants_values_and_grading_uses_its_numbers(lessons, cards):
    lesson = lessons[0]
    card = next(c for c in cards if c.id == "bert-basics/layer-params@bert-base")
    variant = find(lesson, "d=512,f=2048,n=6,h=8")
    assert variant is not None
    asked = variant_card(lesson, card, variant, seed=5)
    assert asked.id == card.id and asked.variant == "d=512,f=2048,n=6,h=8" and asked.seed == 5
    assert "BERT (d = 512, f = 2,048, n = 6, h = 8)" in asked.prompt["en"]
    assert "BERT (d = 512, f = 2.048, n = 6, h = 8)" in asked.prompt["tr"]
    d, f = 512, 2048
    layer = 4 * (d * d + d) + 2 * d + (d * f + f + f * d + d) + 2 * d
    assert asked.value == layer and asked.env["d"] == 512
    varied = FreshNumbers(lessons).lesson_of(asked)
    assert varied is not None
    diagnoser = Diagnoser.for_lesson(varied)
    assert grade(asked, f"{layer:,}", "en", diagnoser=diagnoser).correct
    assert grade(asked, "4*(d*d + d) + 2*d + 2*d*f + f + d + 2*d", "en").correct  # over the variant's parameters
    assert not grade(asked, "7,087,872", "en").correct  # BERT-base's own number is wrong here
    wrong = grade(asked, f"{layer - 4 * d:,}", "en", diagnoser=diagnoser)
    # named from the variant's own numbers: the layer of this variant without its two LayerNorms (2 * d each)
    assert wrong.note is not None
    assert wrong.note.startswith(f"{layer - 4 * d:,} is ") and "2 * d" in wrong.note
    assert "BERT (d = 512, f = 2,048, n = 6, h = 8)" in wrong.note and "BERT-base" not in wrong.note
    embeddings = variant_card(lesson, next(c for c in cards if c.id == "bert-basics/embedding-params@bert-large"),
                              variant)
    assert embeddings.prompt["en"].endswith("(V = 30,522, L = 512, T = 2)")  # fixed values the title does not show
    assert embeddings.value == (30522 + 512 + 2) * 512 + 2 * 512


def test_mature_mode_asks_fresh_numbers_once_the_interval_reaches_21_days():
    assert [wants_variant(VariantMode.MATURE, days) for days in (0, 20, 21)] == [False, False, True]
    assert not wants_variant(VariantMode.FIXED, 400) and wants_variant(VariantMode.FRESH, 0)


def test_a_session_logs_the_seed_and_variant_and_undo_shows_the_same_numbers(lessons, cards):
    store = MemoryStore()
    store.sync(cards)
    session = numeric_session(store, cards, lessons, VariantMode.FRESH)
    first = session.show()
    assert isinstance(first.card, NumericCard) and first.card.variant
    value = first.card.value
    outcome = session.answer(5, typed=str(value))
    (logged,) = store.answers(first.card.id)
    assert logged.variant is not None
    seed, key = read_logged(logged.variant)
    assert key == first.card.variant and seed == first.card.seed
    assert outcome.entry.card.id == first.card.id  # one card for scheduling, whatever its numbers
    assert store.state(first.card.id).schedule.repetitions == 1
    session.undo()
    again = session.show()
    assert again.card == first.card  # the same variant is asked again
    assert store.answers(first.card.id) == []


def test_fixed_mode_and_young_cards_in_mature_mode_keep_their_own_sets(lessons, cards):
    for mode in (VariantMode.FIXED, VariantMode.MATURE):
        store = MemoryStore()
        store.sync(cards)
        session = numeric_session(store, cards, lessons, mode)
        entry = session.show()
        assert entry.card.variant == ""
        session.answer(4)
        assert store.answers(entry.card.id)[0].variant is None


def test_a_seed_reproduces_the_question_and_salts_differ(lessons, cards):
    card = next(c for c in cards if c.id == "bert-basics/total-params@bert-base")
    one = FreshNumbers(lessons, mode=VariantMode.FRESH, salt=3)
    assert one.ask(card, interval=0, attempt=0) == one.ask(card, interval=0, attempt=0)
    asked = [FreshNumbers(lessons, mode=VariantMode.FRESH, salt=salt).ask(card, interval=0, attempt=0)
             for salt in range(40)]
    assert all(isinstance(each, NumericCard) for each in asked)
    drawn = {each.variant for each in asked if isinstance(each, NumericCard)}
    assert len(drawn) > 30
    fact = next(c for c in cards if c.kind == "fact")
    assert one.ask(fact, interval=0, attempt=0) is fact


def test_the_variant_is_stored_in_sqlite_and_survives_reopening(tmp_path, lessons, cards):
    path = tmp_path / "r.db"
    store = Store.open(str(path))
    store.sync(cards)
    with store:
        session = numeric_session(store, cards, lessons, VariantMode.FRESH)
        entry = session.show()
        session.answer(3, typed="1")
    reopened = Store.open(str(path))
    with reopened:
        (answer,) = reopened.answers(entry.card.id)
    assert answer.variant is not None
    assert read_logged(answer.variant) == (entry.card.seed, entry.card.variant)
    assert answer.before == Schedule()


def test_review_cli_asks_fresh_numbers_and_grades_them(cli, tmp_path):
    db = str(tmp_path / "cli.db")
    shown = cli("review", "--db", db, "--numbers", "fresh", "--new", "40", input="1\n1\n\n:quit\n")
    assert "bert-basics/total-params@bert-base · numeric · new · fresh numbers" in shown.output
    assert "How many parameters does BERT (d = " in shown.output and "(V = 30,522, L = 512, T = 2)" in shown.output
    assert "✗ Incorrect" in shown.output
    with Store.open(db) as store:
        (answer,) = store.answers("bert-basics/total-params@bert-base")
    assert answer.variant is not None
    seed, key = read_logged(answer.variant)
    values = dict(part.split("=") for part in key.split(","))
    assert seed is not None and f"BERT (d = {int(values['d']):,}, " in shown.output  # the logged variant was asked


def test_a_matching_row_offers_decoys_so_the_sizes_of_the_options_do_not_answer_it(lessons, cards):
    """12, 768, 3,072, 30,522 for "BERT-base: how many layers?": the smallest was the answer, whatever one knew."""
    (lesson,) = lessons
    rows = [card for card in cards if isinstance(card, MatchCard)]
    store = MemoryStore()
    store.sync(rows)
    session = Session(store, rows, clock=lambda: NOW, limits=Limits(new=50), bury_siblings=False,
                      numbers=FreshNumbers(lessons, mode=VariantMode.FIXED, salt=3))  # decoys in every mode
    named = {value for params in lesson.params.values() for value in params.values.values()}
    allowed = lesson.allowed_variants()
    checked = 0
    while (entry := session.show()) is not None:
        assert isinstance(entry.card, MatchCard)
        card = entry.card
        checked += 1
        own = next(c for c in rows if c.id == card.id)
        shown = [int(option.replace(",", "")) for option in card.options["en"]]
        table = [int(option.replace(",", "")) for option in own.options["en"]]
        decoys = [value for value in shown if value not in table]
        assert shown == sorted(shown) and set(table) <= set(shown)
        assert decoys and not set(decoys) & named  # never a named set's number
        pair = lesson.item(card.item_id)
        assert isinstance(pair, MatchItem)
        expressions = [p.value for p in pair.pairs if p.value]
        # every decoy is one row's value in an allowed variant: as plausible as the answer
        assert all(any(formula.evaluate(e, formula.resolve(v.values, lesson.formulas)) == decoy
                       for v in allowed for e in expressions) for decoy in decoys)
        assert card.value is not None
        if card.value != 30522:  # the vocabulary is the same in every set: no decoy can stand beside it
            smaller = [value for value in shown if value < card.value]
            larger = [value for value in shown if value > card.value]
            # by size alone the row's answer is no longer its own rank among the table's values
            assert (len(smaller), len(larger)) != (sum(v < card.value for v in table), sum(v > card.value for v in table))
        answer = format_number(card.value, "en")
        assert grade(card, answer, "en").correct
        assert not grade(card, format_number(decoys[0], "en"), "en").correct
        letter = "abcdefghij"[card.options["en"].index(answer)]
        assert grade(card, letter, "en").correct
        session.answer(4, typed=answer)
    assert checked == len(rows) == 4


def test_every_row_of_a_table_offers_the_same_decoys_at_every_showing(lessons, cards):
    """Decoys that changed from row to row would leave the table's values as the ones every row shows."""
    rows = [card for card in cards if isinstance(card, MatchCard)]
    asked = [FreshNumbers(lessons, salt=salt).ask(card, interval=0, attempt=attempt)
             for salt, attempt in ((1, 0), (2, 5)) for card in rows]
    assert all(isinstance(card, MatchCard) for card in asked)
    assert len({card.options["en"] for card in asked if isinstance(card, MatchCard)}) == 1
    assert isinstance(asked[0], MatchCard) and len(asked[0].options["en"]) > len(rows[0].options["en"])
