"""Questions that give each other away: found from the lesson's texts alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from bertdrill.adapters.lessons import read_lesson
from bertdrill.core import leaks
from bertdrill.core.cards import compile_lesson
from bertdrill.core.leaks import Exposure, Leak, Where

SHIPPED = Path(__file__).resolve().parent.parent / "decks" / "bert-basics.toml"


def shipped_leaks(language: str, thousands: str) -> set[tuple[str, str, Where]]:
    cards = compile_lesson(read_lesson(SHIPPED))
    return {(leak.source, leak.target, leak.where)
            for leak in leaks.find_leaks(leaks.exposures(cards, language), thousands=thousands)}


# The leaks the shipped lesson is known to have (issue 16), in both its languages.
KNOWN = {
    # The matching column prints 768, 3,072 and 30,522: BERT-base's settings.
    ("bert-base-match", "bert-base-settings", Where.QUESTION),
    # ... and the settings' answer pairs d_model with 768: the matching question's answer.
    ("bert-base-settings", "bert-base-match", Where.ANSWER),
    # "(word + position + segment + LayerNorm)" answers "Which tables and layers make up the embeddings?"
    ("embedding-params", "embedding-parts", Where.QUESTION),
    # "What is BERT?"'s answer holds the acronym and the year, the next question's answer, and back.
    ("bert-definition", "bert-acronym", Where.ANSWER),
    ("bert-acronym", "bert-definition", Where.ANSWER),
    # The practice exercise's starter code sets V, d, f = 30522, 768, 3072.
    ("count-bert-base", "bert-base-settings", Where.QUESTION),
    ("count-bert-base", "bert-base-match", Where.QUESTION),
}


@pytest.mark.parametrize(("language", "thousands"), [("en", ","), ("tr", ".")])
def test_the_shipped_lessons_known_leaks_and_no_others(language, thousands):
    assert shipped_leaks(language, thousands) == KNOWN


def test_the_clue_is_quoted_as_the_answer_writes_it():
    cards = compile_lesson(read_lesson(SHIPPED))
    found = {(leak.source, leak.target): leak.clue for leak in leaks.find_leaks(leaks.exposures(cards, "en"))}
    assert found["embedding-params", "embedding-parts"] == "Word + position + segment"
    assert found["bert-base-match", "bert-base-settings"] == "768"
    assert found["bert-definition", "bert-acronym"] == "2018"


def item(item_id: str, question: str = "", answer: str = "", after: str = "") -> Exposure:
    return Exposure(item_id, (question,), (answer,) if answer else (), (after,) if after else ())


@pytest.mark.parametrize(("shown", "answer", "thousands", "leaks_it"), [
    ("FFN 3072", "3,072", ",", True),  # grouped or not, the same number
    ("FFN 3,072", "3072", ",", True),
    ("FFN 3.072", "3072", ".", True),  # Turkish groups with dots
    ("FFN 3 072", "3072", ",", True),  # and anyone may group with spaces
    ("share 0.666", "666", ",", False),  # a decimal part is not a number of its own
    ("share 0,666", "666", ".", False),
    ("12 layers", "12", ",", False),  # two digits prove nothing
    ("x = 30522", "305", ",", False),  # part of a number is not the number
    ("Word + position + segment", "word, position and segment", ",", False),  # "and" breaks the phrase
    ("WORD + POSITION + SEGMENT + LayerNorm", "word + position + segment", ",", True),
    ("İKİ YÖNLÜ DİKKAT", "iki yönlü dikkat", ".", False),  # "iki" is short: no phrase of three long words
    ("bidirectional encoder representations", "Bidirectional Encoder Representations", ",", True),
    ("layers, d_model = 768, 16 heads", "layers, d_model = 1024, 12 heads", ",", False),  # same shape, no phrase
])
def test_numbers_and_phrases(shown, answer, thousands, leaks_it):
    found = leaks.find_leaks([item("a", question=shown), item("b", answer=answer)], thousands=thousands)
    assert bool(found) is leaks_it, found


def test_turkish_capital_dotted_i_folds_to_i():
    found = leaks.find_leaks([item("a", question="İNCE AYAR VERİSİ"), item("b", answer="ince ayar verisi")])
    assert [leak.clue for leak in found] == ["ince ayar verisi"]


def test_an_item_never_leaks_into_itself_and_answers_count_after_answering():
    assert leaks.find_leaks([item("a", question="Type 2018 (the year)", answer="2018")]) == []
    found = leaks.find_leaks([item("a", answer="2018"), item("b", after="since 2018")])
    assert found == [Leak("b", "a", Where.ANSWER, "2018")]


def test_clashes_keep_items_apart_both_ways_in_every_place():
    shown = [item("m", question="d_model 768"), item("s", answer="768"), item("d", after="in 2018"),
             item("a", answer="2018"), item("x", question="nothing here", answer="999")]
    clashes = leaks.Clashes.of(shown)
    assert leaks.without_conflicts(["m", "s", "d", "a", "x"], clashes) == ["m", "d", "x"]
    assert leaks.without_conflicts(["s", "m", "a", "d", "x"], clashes) == ["s", "a", "x"]


def test_without_conflicts_keeps_the_first_come_up_to_a_limit():
    graph = leaks.Clashes.pairs({"a": {"b"}, "b": {"a", "c"}, "c": {"b"}})
    assert leaks.without_conflicts(["b", "a", "c", "d"], graph) == ["b", "d"]
    assert leaks.without_conflicts(["a", "b", "c", "d"], graph) == ["a", "c", "d"]
    assert leaks.without_conflicts(["a", "b", "c", "d"], graph, limit=2) == ["a", "c"]


def test_first_apart_keeps_what_without_conflicts_keeps_judging_only_the_items_it_reaches():
    """A sheet of a few questions from a large lesson judges the items drawn until it is full, on every paper:
    the same items as the clashes of all on all papers give, and each item's clues read once."""
    import random

    numbers, words = ["768", "2018", "3,072", "30522"], ["cls token", "masked words", "next sentence"]
    draw = random.Random(7)

    def text() -> str:
        return " ".join(draw.sample(numbers + words, 2)) if draw.random() < 0.5 else "nothing"

    papers = [{f"i{index}": item(f"i{index}", question=text(), answer=draw.choice(numbers + words + [""]),
                                 after=text()) for index in range(40)} for _paper in range(3)]
    order = [f"i{index}" for index in draw.sample(range(40), 40)]
    groups = dict.fromkeys(group for paper in papers for group in leaks.Clashes.of(list(paper.values())).groups)
    judged: list[str] = []

    def printed(item_id: str) -> list[Exposure]:
        judged.append(item_id)
        return [paper[item_id] for paper in papers]
    for limit in (1, 5, 40):
        judged.clear()
        kept = leaks.first_apart(order, printed, limit)
        assert kept == leaks.without_conflicts(order, leaks.Clashes(tuple(groups)), limit=limit)
        assert judged == order[:order.index(kept[-1]) + 1] if len(kept) == limit else judged == order
    assert len(leaks.first_apart(order, printed, 40)) < 40  # some clash: the test judges something


def test_fewest_dropped_drops_the_item_that_leaks_most_then_the_later_of_a_pair():
    graph = leaks.Clashes.pairs({"a": {"b"}, "b": {"a", "c"}, "c": {"b"}, "x": {"y"}, "y": {"x"}})
    assert leaks.fewest_dropped(["a", "b", "c", "x", "y", "z"], graph) == ["a", "c", "x", "z"]
