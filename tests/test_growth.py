"""Hostile input of the third round (issue 23): work that grew faster than its input, and numbers
too long for ``int()``. Each case is one member of its class; benchmarks/growth.py times every
command on the same shapes at three sizes.

CPU-time bounds (tests/timing.py) are orders of magnitude above what the code takes now and below
what it took before: a regression fails them, a loaded machine does not.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from timing import cpu_seconds

from bertdrill.core import formula, leaks
from bertdrill.core.diagnosis import Diagnoser
from bertdrill.core.errors import FormulaError
from bertdrill.core.leaks import Clashes, Exposure
from bertdrill.core.number_words import parse_words
from bertdrill.core.textmatch import gives_away

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from growth import chained, long_numbers, number_words  # noqa: E402
from lessons import generated_lesson  # noqa: E402

CORPUS = Path(__file__).parent / "corpus" / "lessons"


# --- number words -----------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["on" * 600, "on" * 599 + "x", "yüz" * 400, "onbir" * 240 + "dokuz"])
def test_number_words_written_together_are_read_in_linear_time(text):
    # Before: every prefix sliced on every level, 0.2 s a call at 1,200 letters (cubic).
    assert cpu_seconds(lambda: [parse_words(text, "tr") for _ in range(20)]) < 0.2
    assert parse_words(text, "tr") is None  # "on on on ..." is no number: read strictly


def test_number_words_written_together_still_read_as_before():
    assert parse_words("yüzon", "tr") == 110
    assert parse_words("ikiyüzkırkbir", "tr") == 241
    assert parse_words("onbinbeşyüz", "tr") == 10_500
    assert parse_words("twenty-one", "en") == 21


def test_a_prompt_of_number_words_is_searched_for_its_answer_in_linear_time():
    prompt = " ".join(["on" * 300] * 20 + ["yüz on"] * 50)
    assert cpu_seconds(lambda: gives_away(prompt, ["dört"], "tr")) < 0.5
    assert gives_away(prompt + " dört", ["dört"], "tr") == "dört"


def test_check_on_a_lesson_of_number_words(cli, tmp_path):
    path = tmp_path / "words.toml"
    path.write_text(number_words(1200), encoding="utf-8")  # 40 prompts of four 1,200-letter runs
    assert cpu_seconds(lambda: cli("check", str(path))) < 3  # before: 9 s


# --- chained formulas ------------------------------------------------------------------------

def chain(count: int, *, last_first: bool = True) -> dict[str, formula.Formula]:
    sources = {f"g{k}": f"g{k - 1} - g{k - 2}" for k in range(2, count)}
    sources.update(g0="a", g1="b")
    names = sorted(sources, key=lambda name: int(name[1:]), reverse=last_first)
    return {name: formula.parse(sources[name]) for name in names}


def test_a_wrong_answer_on_chained_formulas_is_diagnosed_at_once():
    # g_k = g_{k-1} - g_{k-2}: before, every path through the chain was walked (32 formulas: 56 s).
    diagnoser = Diagnoser({"s": ("S", {"a": 3, "b": 5})}, chain(40))
    assert cpu_seconds(lambda: diagnoser.diagnose(123_456, expected=2, name="g39", set_name="s")) < 2
    found = diagnoser.diagnose(-3, expected=2, name="g39", set_name="s")  # g3 = b - a - b = -a
    assert found is not None and found.quantity is not None


def test_slips_carry_into_every_formula_built_on_them():
    formulas = {name: formula.parse(source) for name, source in
                {"x": "a + b", "y": "x * 2", "z": "y + x", "w": "a"}.items()}
    diagnoser = Diagnoser({"s": ("S", {"a": 3, "b": 5})}, formulas)
    # x without b is 3: y is 6 and z is 9; w does not use x.
    carried = {entry.quantity.name for entries in diagnoser.index().values() for entry in entries
               if entry.quantity.change is not None and entry.quantity.change.formula == "x"
               and entry.quantity.change.dropped == ("b",)}
    assert carried == {"x", "y", "z"}


def test_thousands_of_formulas_written_last_first_resolve_without_recursion():
    formulas = chain(3000)
    values = formula.resolve({"a": 3, "b": 5}, formulas)
    # 3, 5, 2, -3, -5, -2, then again: g2999 is the sixth of its round
    assert [values[f"g{k}"] for k in range(7)] == [3, 5, 2, -3, -5, -2, 3] and values["g2999"] == -2
    with pytest.raises(FormulaError, match="cycle: g1 -> g2 -> g1"):
        formula.order({"g1": formula.parse("g2 + 1"), "g2": formula.parse("g1")}, {"g1", "g2"})


def test_check_and_review_on_a_lesson_of_chained_formulas(cli, tmp_path):
    path = tmp_path / "chained.toml"
    path.write_text(chained(300), encoding="utf-8")
    assert cli("check", str(path)).exit_code == 0
    result = cli("review", "--file", str(path), "--new", "1", "--limit", "1", input="5\n\n\n")
    assert result.exit_code == 0 and "g295 of S" in result.stdout and "not g299." in result.stdout  # named


# --- items that leak into each other ---------------------------------------------------------

def reference_fewest_dropped(order, graph, preference=None):
    """The greedy as it was (degrees recomputed after every drop): the result to keep, not its cost."""
    rank = {item: index for index, item in enumerate(preference or order)}
    kept = list(order)
    while True:
        degree = {item: len(graph.get(item, set()) & set(kept)) for item in kept}
        worst = max(degree.values(), default=0)
        if worst == 0:
            return kept
        kept.remove(max((item for item in kept if degree[item] == worst), key=rank.__getitem__))


@pytest.mark.parametrize("seed", range(30))
def test_fewest_dropped_is_the_greedy_it_was_on_small_graphs(seed):
    chance = random.Random(seed)
    order = [f"i{n}" for n in range(chance.randint(2, 40))]
    graph: dict[str, set[str]] = {}
    for _ in range(chance.randint(0, 80)):
        a, b = chance.sample(order, 2)
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set()).add(a)
    preference = chance.sample(order, len(order))
    assert leaks.fewest_dropped(order, Clashes.pairs(graph), preference) == \
        reference_fewest_dropped(order, graph, preference)


def exposure(item_id: str, question: str, answer: str) -> Exposure:
    return Exposure(item_id, (question,), (answer,), (answer,))


def clashing(kept: list[str], items: list[Exposure]) -> list[tuple[str, str]]:
    chosen = [item for item in items if item.item_id in kept]
    return [(leak.source, leak.target) for leak in leaks.find_leaks(chosen)]


def test_a_phrase_every_answer_repeats_leaves_one_item_in_linear_time():
    items = [exposure(f"i{n}", f"Question {n}?", f"the whole sentence, left and right ({n})") for n in range(3000)]
    clashes = Clashes.of(items)
    order = [item.item_id for item in items]
    seconds = cpu_seconds(lambda: leaks.fewest_dropped(order, clashes))
    assert seconds < 2  # before: cubic, hours at this size
    kept = leaks.fewest_dropped(order, clashes)
    assert kept == ["i0"] and not clashing(kept, items)


def test_a_number_shown_everywhere_drops_the_one_item_it_answers():
    items = [exposure("answer", "What is d?", "768")] + \
            [exposure(f"shows-{n}", f"With d = 768, what is {n}?", f"answer {n}") for n in range(200)]
    kept = leaks.fewest_dropped([item.item_id for item in items], Clashes.of(items))
    assert kept == [f"shows-{n}" for n in range(200)]


def test_a_generated_lesson_gives_a_sheet_without_leaks_in_linear_time(tmp_path):
    from bertdrill.adapters.export.sheets import model
    from bertdrill.core.lesson import parse

    lesson = parse(generated_lesson(2000), "generated.toml")
    seconds = cpu_seconds(lambda: model.build_sheet([lesson], language="en", seed=1))
    assert seconds < 20  # before: 95 s
    sheet = model.build_sheet([lesson], language="en", seed=1)
    assert 0 < len(sheet.versions[0].questions) < 2000 and sheet.left_out


def test_first_come_choice_among_clashes_is_linear():
    items = [exposure(f"i{n}", f"Question {n}?", f"the whole sentence, left and right ({n})") for n in range(3000)]
    clashes = Clashes.of(items)
    order = [item.item_id for item in items]
    assert cpu_seconds(lambda: leaks.without_conflicts(order, clashes, limit=5)) < 1
    assert leaks.without_conflicts(order[::-1], clashes) == ["i2999"]


# --- numbers too long for int() --------------------------------------------------------------

def test_a_five_thousand_digit_number_in_prose_is_compared_as_digits(cli, tmp_path):
    path = tmp_path / "long.toml"
    path.write_text(long_numbers(3), encoding="utf-8")
    result = cli("check", str(path))
    assert result.exit_code == 0, result.output
    assert "ValueError" not in result.output
    sheet = cli("sheet", str(path), "-o", str(tmp_path / "sheet.html"))
    assert sheet.exit_code == 0, sheet.output


def test_long_digit_runs_leak_and_give_away_like_short_ones():
    digits = "9" * 5000
    found = leaks.find_leaks([exposure("a", f"is it {digits}?", "no"), exposure("b", "what?", f"0{digits}")])
    assert [(leak.source, leak.target) for leak in found] == [("a", "b")]
    assert gives_away(f"Is {digits} right?", [digits], "en") == digits
    assert gives_away(f"Is {digits}1 right?", [digits], "en") is None
