"""Sheets that give nothing away: what the formulas know counts as a clue, --given never answers a question
quietly, versions are equally hard, keys stay out of the students' file, Markdown keeps its ruled lines.

The leak cases are those the issue found on the shipped lesson, and others of the same kinds on a lesson
of boxes written here: a prompt stating a parameter value another item asks for (whatever its number of
digits), a text printing a formula another item asks for, and a list counting what another item asks.
"""

from __future__ import annotations

import itertools
import re

import pytest
from markdown_it import MarkdownIt

from bertdrill.adapters import catalogs
from bertdrill.adapters.export.sheets import markdown, model
from bertdrill.adapters.lessons import load_lessons, read_lesson
from bertdrill.core import formula, leaks
from bertdrill.core.cards import compile_lesson
from bertdrill.core.errors import BertdrillError
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson import NumericItem

BOXES = '''
[lesson]
id = "boxes"
languages = ["en", "tr"]
title = { en = "Boxes", tr = "Kutular" }

[params.small]
title = "Small"
a = 3
b = 4
c = 5

[params.big]
title = "Big"
a = 30
b = 40
c = 50

[formulas]
volume = "a * b * c"
stack = "3 * (a + b)"
rim = "2 * a + 2 * b"

[[item]]
id = "volume"
kind = "numeric"
prompt = { en = "{set} is {a} wide, {b} deep and {c} high. What is its volume?", tr = "{set} {a} geniş, {b} derin ve {c} yüksek. Hacmi nedir?" }
formula = "volume"
params = ["small", "big"]

[[item]]
id = "sides"
kind = "match"
prompt = { en = "Match the small box's sides.", tr = "Küçük kutunun kenarlarını eşleştir." }
params = "small"
pairs = [
    { id = "width", term = { en = "width", tr = "genişlik" }, value = "a" },
    { id = "height", term = { en = "height", tr = "yükseklik" }, value = "c" },
]

[[item]]
id = "big-height"
kind = "fact"
question = { en = "How high is the big box?", tr = "Büyük kutu ne kadar yüksek?" }
answer = { en = "{c@big} units.", tr = "{c@big} birim." }

[[item]]
id = "which-volume"
kind = "choice"
prompt = { en = "Which is a box's volume?", tr = "Bir kutunun hacmi hangisidir?" }
options = { en = ["a + b + c", "a · b · c"], tr = ["a + b + c", "a · b · c"] }
answer = 2

[[item]]
id = "stack-height"
kind = "numeric"
prompt = { en = "How high is the stack of {set}'s red, green and blue layers?", tr = "{set} için kırmızı, yeşil ve mavi katmanların yığını ne kadar yüksek?" }
formula = "stack"
params = ["small", "big"]

[[item]]
id = "stack-count"
kind = "blank"
prompt = { en = "How many layers are stacked? Fill in the blank.", tr = "Kaç katman üst üste? Boşluğu doldur." }
text = "stack = ____ * (a + b)"
answer = "3"
checks = "stack"

[[item]]
id = "rim"
kind = "numeric"
prompt = { en = "How long is the rim of {set}?", tr = "{set} kenarının uzunluğu nedir?" }
formula = "rim"
params = ["small", "big"]
'''


@pytest.fixture(scope="module")
def boxes(tmp_path_factory):
    path = tmp_path_factory.mktemp("boxes") / "boxes.toml"
    path.write_text(BOXES, encoding="utf-8")
    return read_lesson(path)


@pytest.fixture(scope="module")
def shipped():
    (lesson,) = load_lessons()
    return lesson


def pairs_of(lesson, language):
    found = leaks.find_leaks(leaks.exposures(compile_lesson(lesson), language, lesson=lesson))
    return {(leak.source, leak.target) for leak in found}


@pytest.mark.parametrize("language", ["en", "tr"])
def test_what_the_formulas_know_gives_items_away(boxes, language):
    found = pairs_of(boxes, language)
    # a prompt stating parameter values (one digit: 3, 4, 5) answers the rows that ask them
    assert ("volume", "sides") in found
    # ... and in the other set, the fact asking the big box's height (50)
    assert ("volume", "big-height") in found
    # an option printing a · b · c answers the question that asks for the volume formula
    assert ("which-volume", "volume") in found
    # the blank prints the stack's formula; the stack question lists its three layers, the blank's fill
    assert ("stack-count", "stack-height") in found and ("stack-height", "stack-count") in found
    assert not any("rim" in pair for pair in found)  # nothing states the rim's formula or values
    # texts alone see none of these (each number has fewer than three digits, no phrase repeats)
    texts_only = {(leak.source, leak.target) for leak in leaks.find_leaks(leaks.exposures(compile_lesson(boxes),
                                                                                            language))}
    assert not texts_only & {("volume", "sides"), ("which-volume", "volume"), ("stack-height", "stack-count")}


@pytest.mark.parametrize("language", ["en", "tr"])
def test_a_sheet_never_holds_such_a_pair(boxes, language):
    catalogs.use(language)
    for versions in (1, 3):
        sheet = model.build_sheet([boxes], language=language, seed=2, versions=versions)
        for version in sheet.versions:
            on = {q.id.split("/")[1].split("@")[0] for q in version.questions}
            for source, target in pairs_of(boxes, language):
                assert not {source, target} <= on, (source, target)
    assert "boxes/rim" in {q.id.split("@")[0] for q in sheet.versions[0].questions}


def test_the_issues_cases_on_the_shipped_lesson(shipped):
    found = pairs_of(shipped, "en")
    assert ("attention-params", "attention-projections") in found  # "Q, K, V and output projections": 4
    assert ("attention-projections", "attention-params") in found  # the blank prints the formula
    assert ("total-params", "bert-base-match") in found  # "embeddings + 12 layers + pooler": layer -> 12
    assert ("total-params", "bert-large-settings") in found  # "+ 24 layers +"


def test_given_leaves_out_what_its_legend_answers_and_says_so(boxes, shipped, cli, tmp_path):
    catalogs.use("en")
    sheet = model.build_sheet([shipped], language="en", seed=7, versions=2, given=True)
    assert set(sheet.given_out) == {"bert-basics/bert-base-match", "bert-basics/bert-base-settings",
                                    "bert-basics/bert-large-settings"}
    shown = {(row.name, title) for row in sheet.legend for title, _value in row.values}
    asked = {q.id.split("@")[0] for version in sheet.versions for q in version.questions}
    assert not asked & set(sheet.given_out) and ("n", "BERT-base") in shown
    boxed = model.build_sheet([boxes], language="en", seed=7, given=True)
    assert set(boxed.given_out) == {"boxes/sides", "boxes/big-height"}
    result = cli("sheet", "-o", str(tmp_path / "q.md"), "--seed", "7", "--given")
    assert result.exit_code == 0, result.stderr
    assert ("Left out 3 questions that the --given legend answers: bert-basics/bert-base-settings, "
            "bert-basics/bert-large-settings, bert-basics/bert-base-match.") in result.stdout
    with pytest.raises(BertdrillError, match=r"--given: its legend answers 3 of these questions"):
        model.build_sheet([shipped], language="en", seed=7, given=True, count=20)


def _values(key: str) -> dict[str, int]:
    return {name: int(value) for name, value in (part.split("=") for part in key.split(","))}


def test_versions_ask_their_own_variant_so_no_parameter_stays_constant(shipped):
    """The head size was 64 in every version (BERT-base and BERT-large agree): versions now ask variants."""
    catalogs.use("en")
    versions = model.MAX_VERSIONS
    sheet = model.build_sheet([shipped], language="en", seed=7, versions=versions)
    numeric = [[q for q in version.questions if q.kind is Kind.NUMERIC] for version in sheet.versions]
    keys = [{q.variant for q in questions} for questions in numeric]
    assert all(len(k) == 1 and "" not in k for k in keys)  # one variant per version, for all its numeric items
    asked = [_values(next(iter(k))) for k in keys]
    assert len({tuple(v.items()) for v in asked}) == versions  # no two versions share one
    space = shipped.variant_space
    assert space is not None
    allowed = shipped.allowed_variants()
    for name in space.varying:  # every parameter the ranges let vary takes as many values as there are versions
        possible = {variant.values[name] for variant in allowed}
        assert len({values[name] for values in asked}) == min(versions, len(possible)), name
    heads = {q.value for questions in numeric for q in questions if "/head-size@" in q.id}
    assert len(heads) > 1 and heads != {64}
    for questions, values in zip(numeric, asked):  # each answer is its formula over the version's variant
        for question in questions:
            item = shipped.item(question.id.split("/")[1].split("@")[0])
            assert isinstance(item, NumericItem)
            assert question.value == formula.evaluate(item.formula, formula.resolve(
                {**shipped.variant_space.fixed, **values}, shipped.formulas))


def test_with_given_versions_take_turns_over_the_named_sets_equally_and_three_do_not_repeat(shipped):
    catalogs.use("en")
    for versions in (2, 3, 4):
        sheet = model.build_sheet([shipped], language="en", seed=7, versions=versions, given=True)
        sets = [tuple(sorted(q.id for q in version.questions if q.kind is Kind.NUMERIC)) for version in sheet.versions]
        assert not any(q.variant for version in sheet.versions for q in version.questions)
        bases = {sum(1 for q in version if q.endswith("@bert-base")) for version in sets}
        assert len(bases) == 1, sets  # the same number of BERT-base questions in every version
        assert len(set(sets)) == versions  # and no version asks another's sets


def _assignments(rows: int, column: list[int], row: int) -> set[int]:
    """The values row ``row`` can take in some pairing that keeps the rows in increasing order of size."""
    found = set()
    for chosen in itertools.combinations(sorted(column), rows):
        found.add(chosen[row])
    return found


def test_the_sizes_of_a_matching_columns_numbers_no_longer_pair_it(shipped):
    """12, 768, 3,072, 30,522: layers < d_model < FFN < vocabulary in every BERT, so sizes matched it."""
    (order,) = leaks.size_orders(shipped, "en")
    assert order.item_id == "bert-base-match" and order.terms == ("layer", "d_model", "FFN size", "vocabulary")
    assert order.constant == ("vocabulary",)  # 30,522 in every set: no decoy can stand beside it
    catalogs.use("en")
    for seed in range(6):
        sheet = model.build_sheet([shipped], language="en", seed=seed, versions=3, kinds=[Kind.MATCH, Kind.FACT])
        for version in sheet.versions:
            (table,) = [q for q in version.questions if q.kind is Kind.MATCH]
            column = [int(choice.replace(",", "")) for choice in table.choices]
            answers = [column[index] for index in table.correct]
            by_size = sorted(range(len(answers)), key=answers.__getitem__)
            assert len(column) > len(answers)  # decoys stand among the answers
            for rank, row in enumerate(by_size):  # every row but the vocabulary could take two values by size
                possible = _assignments(len(answers), column, rank)
                assert answers[row] in possible
                assert len(possible) >= (1 if table.rows[row] == "vocabulary" else 2), (table.rows[row], column)


def test_a_table_whose_order_changes_between_sets_is_not_flagged(boxes, tmp_path):
    path = tmp_path / "swapped.toml"  # in the big box the width is larger than the height
    path.write_text(BOXES.replace("a = 30\nb = 40\nc = 50", "a = 60\nb = 40\nc = 50"), encoding="utf-8")
    swapped = read_lesson(path)
    assert [order.item_id for order in leaks.size_orders(boxes, "en")] == ["sides"]
    assert leaks.size_orders(swapped, "en") == []


def test_markdown_working_lines_stay_lines(shipped):
    """A line of underscores alone is a thematic break in CommonMark, leaving the break before it a stray "\\"."""
    catalogs.use("en")
    sheet = model.build_sheet([shipped], language="en", seed=7, versions=2, kinds=model.KINDS)
    page = MarkdownIt("commonmark").render(markdown.render(sheet))
    separators = markdown.render(sheet).count("\n---\n")
    assert page.count("<hr") == separators  # only the sheet's own separators
    assert "\\" not in re.sub(r"<pre>.*?</pre>", "", page, flags=re.S)
    for working in re.findall(r"<p>Working:(.*?)</p>", page, re.S):
        assert working.count("<br />") == markdown.WORK_LINES  # three ruled lines, each on its own line


def test_check_warns_of_a_table_paired_by_sizes_and_says_what_a_sheet_does(cli, shipped, tmp_path):
    result = cli("check", shipped.path)
    line = next(item.line for item in shipped.items if item.id == "bert-base-match")
    assert (f":{line}: warning: the matching table bert-base-match can be paired by the sizes of its numbers "
            "(layer < d_model < FFN size < vocabulary in every set the lesson allows); a sheet prints decoys from "
            "[variants] among them, but none beside vocabulary: its value is the same in every set") in result.stderr
    assert result.exit_code == 0
    fixed = tmp_path / "fixed.toml"  # without [variants], only the author can mend it
    text = open(shipped.path, encoding="utf-8").read()
    fixed.write_text(re.sub(r"\n\[variants\].*?\n\n", "\n\n", text, flags=re.S), encoding="utf-8")
    result = cli("check", str(fixed))
    assert "(layer < d_model < FFN size < vocabulary in every parameter set); declare [variants] so a sheet " \
           "prints decoys among them" in result.stderr
