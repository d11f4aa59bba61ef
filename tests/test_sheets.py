"""Tests for quiz sheets: the seeded model, HTML, Markdown, GIFT (read back by Moodle's rules), PDF and the CLI.

Golden files are made from a frozen copy of the lesson (tests/golden/bert-basics.toml) with seed 7;
after an intended change, rewrite them with ``BERTDRILL_UPDATE_GOLDEN=1 pytest tests/test_sheets.py``
and read the diff.
"""

from __future__ import annotations

import functools
import gc
import html as html_lib
import io
import os
import re
import subprocess
import sys
import time
import weakref
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import gift_parser
import pytest

from bertdrill.adapters import catalogs
from bertdrill.adapters.export.files import Replace, as_bytes, write_atomic
from bertdrill.adapters.export.sheets import gift, html, markdown, model, moodle, output
from bertdrill.adapters.export.sheets.formats import KeyMode, SheetFormat
from bertdrill.adapters.export.sheets.output import documents
from bertdrill.adapters.lessons import LessonCache, read_index, read_lesson, shipped_paths
from bertdrill.core import formula
from bertdrill.core.errors import BertdrillError
from bertdrill.core.kinds import Kind
from bertdrill.core.languages import sheet_labels
from bertdrill.core.lesson import BLANK, Item

TESTS = Path(__file__).resolve().parent
GOLDEN = TESTS / "golden"
FROZEN = GOLDEN / "bert-basics.toml"
HOSTILE = TESTS / "lessons" / "hostile.toml"
TURKISH_LETTERS = "ıİşŞğçÇöÖüÜ"  # the lesson has no İ or Ş: TURKISH_TITLE brings them
TURKISH_TITLE = "Ödev ve Çalışma: İleri Düzey BERT — Ünite 17, Şubat"


@pytest.fixture(scope="module")
def lesson():
    return read_lesson(FROZEN)


@pytest.fixture(scope="module")
def hostile():
    return read_lesson(HOSTILE)


def build(lesson, **options):
    """A sheet as the CLI builds it: in the language the interface speaks (``sheet --lang`` sets both)."""
    options = {"language": "en", "seed": 7, "versions": 2, **options}
    if "students" in options:
        options.pop("versions")
    catalogs.use(options["language"])
    return model.build_sheet([lesson], **options)


def text_of(fragment: str) -> str:
    """What a browser shows for an HTML fragment: tags out, entities decoded, spaces collapsed."""
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def squeeze(text: str) -> str:
    return " ".join(text.split())


# --- the model: choice, shuffling, answers ---------------------------------------------------

def test_same_seed_same_sheet_and_different_seed_different_order(lesson):
    assert build(lesson, seed=7) == build(lesson, seed=7)
    orders = {tuple(q.id for q in build(lesson, seed=seed).versions[0].questions) for seed in range(5)}
    assert len(orders) == 5


def test_versions_hold_the_same_items_in_their_own_order(lesson):
    sheet = build(lesson, versions=3)
    items = [sorted(q.id.split("@")[0] for q in version.questions) for version in sheet.versions]
    assert items[0] == items[1] == items[2]
    assert len({tuple(q.id for q in version.questions) for version in sheet.versions}) == 3
    assert [version.letter for version in sheet.versions] == ["A", "B", "C"]


def test_numeric_questions_take_turns_over_the_sets_so_versions_are_equal(lesson):
    sheet = build(lesson, versions=3)
    asked = [{q.id.split("@")[0]: q.id.split("@")[1] for q in version.questions if q.kind == "numeric"}
             for version in sheet.versions]
    bases = [list(version.values()).count("bert-base") for version in asked]
    numeric = len(asked[0])
    assert bases == [(numeric + 1) // 2] * 3  # every version as many BERT-base questions: none easier
    assert len({tuple(sorted(version.items())) for version in asked}) == 3  # C does not repeat A's sets
    for count in range(1, 12):  # any number of numeric items, up to that many versions
        turns = [tuple(model.set_turns(count, version)) for version in range(count)]
        assert {turn.count(0) for turn in turns} == {(count + 1) // 2}
        assert len(set(turns)) == count


def test_every_version_has_the_same_kinds_and_points(lesson):
    sheet = build(lesson, versions=4)
    profiles = {tuple(sorted((q.kind, q.points) for q in version.questions)) for version in sheet.versions}
    assert len(profiles) == 1


def test_no_two_questions_on_a_sheet_give_each_other_away(lesson):
    from bertdrill.core import leaks
    from bertdrill.core.cards import compile_lesson

    found = leaks.lesson_leaks(compile_lesson(lesson), lesson.languages, lesson=lesson)
    pairs = {frozenset((leak.source, leak.target)) for leak in found}
    assert frozenset(("bert-base-match", "bert-base-settings")) in pairs  # the lesson has leaks to avoid
    # ... and those only its formulas know: "embeddings + 12 layers + pooler" states n = 12, the blank
    # prints the attention formula, the attention question lists its four projections
    assert {frozenset(("total-params", "bert-base-match")), frozenset(("total-params", "bert-large-settings")),
            frozenset(("attention-params", "attention-projections"))} <= pairs
    sheet = build(lesson)
    assert sheet.left_out == ("bert-basics/bert-acronym", "bert-basics/bert-base-settings",
                              "bert-basics/total-params", "bert-basics/embedding-parts",
                              "bert-basics/attention-projections")  # the fewest that keep every pair apart
    for count in (5, 10, 15):
        for seed in range(8):
            for version in build(lesson, count=count, seed=seed).versions:
                on_sheet = {q.id.split("/")[1].split("@")[0] for q in version.questions}
                assert not any(pair <= on_sheet for pair in pairs), (count, seed)
    with pytest.raises(BertdrillError, match=r"--count 20: only 1[0-9] of these questions can share a sheet"):
        build(lesson, count=20)


def test_a_drawn_sheet_compiles_the_cards_of_the_items_it_reaches(lesson, monkeypatch):
    """A sheet of a few questions from a large lesson compiles the items it draws until it is full, each with
    the cards the whole lesson compiles for it: the same sheet as one built from every item's cards."""
    from bertdrill.core.cards import compile_lesson
    whole = {card.id: card for card in compile_lesson(lesson)}
    compiled: list[str] = []

    def compile_part(part):
        compiled.extend(item.id for item in part.items)
        cards = list(compile_lesson(part))
        assert all(card == whole[card.id] for card in cards)
        return cards
    monkeypatch.setattr(model, "compile_lesson", compile_part)
    sheet = build(lesson, count=5, versions=2)
    assert 5 <= len(compiled) < len(lesson.items)
    assert {q.id.split("/")[1].split("@")[0] for q in sheet.versions[0].questions} <= set(compiled)


@pytest.mark.parametrize("options", [
    {"count": 6, "versions": 3},
    {"count": 8, "students": ["", "Ayşe Yılmaz", ""], "language": "tr"},
    {"count": 3, "kinds": (Kind.MATCH, Kind.NUMERIC), "students": ["", ""]},  # the table, with its decoys if sized
    {"count": 5, "calculated": True},
], ids=["versions", "students", "match", "calculated"])
def test_a_drawn_sheet_of_a_lessons_index_reads_only_the_items_it_reaches(tmp_path, monkeypatch, options):
    """`sheet --count` reads each lesson's index from the lesson cache, and of its items only those the draw
    reaches (30 papers of 20 questions from 100,000 items held them all: 237 MB): the same sheet as one built
    from the whole lesson."""
    path = tmp_path / "lesson.toml"
    path.write_bytes(FROZEN.read_bytes())
    cache = LessonCache(tmp_path / "cache", functools.partial(write_atomic, replace=Replace.ANY))
    cache.clock = lambda: time.time_ns() + 10_000_000_000  # the lesson was last changed well before
    whole = read_lesson(path, cache)
    index = read_index(path, LessonCache(cache.folder, cache.write))
    assert index.head().items == ()  # the index's head: the items are in the cache, each read alone
    read: list[str] = []
    item = index.item

    def reading(item_id: str) -> Item:
        read.append(item_id)
        return item(item_id)
    monkeypatch.setattr(index, "item", reading)
    assert build(index, **options) == build(whole, **options)
    assert 0 < len(set(read)) < len(whole.items)


@pytest.mark.parametrize("language", ["en", "tr"])
@pytest.mark.parametrize("source", ["lesson", "hostile"])
def test_a_bank_of_every_item_judges_and_lays_out_no_paper(request, monkeypatch, source, language):
    """A question bank (GIFT, Moodle XML) holds every question and Moodle shuffles per attempt: of every item and
    for no students, nothing is judged for what it gives away and no version is laid out (on 100,000 items that
    held 240 MB a bank never printed). Its questions are the ones a sheet's model holds in its bank."""
    options = {"language": language, "seed": 3, "versions": 3, "kinds": model.KINDS, "calculated": True}
    lesson = request.getfixturevalue(source)
    sheet = build(lesson, **options)
    monkeypatch.setattr(model, "_choose", lambda *args: pytest.fail("judged what leaks"))
    monkeypatch.setattr(model, "_version", lambda *args: pytest.fail("laid out a paper"))
    bank = build(lesson, **options, bank=True)
    assert bank.bank == sheet.bank and bank.calculated == sheet.calculated and len(bank.bank) >= len(lesson.items)
    assert [version.letter for version in bank.versions] == ["A", "B", "C"]
    assert all(not version.questions for version in bank.versions) and bank.left_out == ()
    for fmt, name in ((SheetFormat.gift, "bank.gift"), (SheetFormat.moodle_xml, "bank.xml")):
        assert as_bytes(documents(bank, fmt, Path(name), KeyMode.none)[0][1]) == \
            as_bytes(documents(sheet, fmt, Path(name), KeyMode.none)[0][1])


@pytest.mark.parametrize("fmt", [SheetFormat.gift, SheetFormat.moodle_xml])
@pytest.mark.parametrize("language", ["en", "tr"])
def test_a_bank_of_every_item_is_written_a_lesson_at_a_time_from_the_indexes(tmp_path, monkeypatch, fmt, language):
    """`sheet -o bank.gift` (or .xml) of every item reads the lessons' indexes, and each lesson whole only when
    its questions' turn comes, let go before the next is read (the 1M store's eight lessons held whole, with every
    item's cards and every question made before the first byte was written: 400 MB). Its file is the bank a
    sheet's model holds of the whole lessons, and its count and calculated questions are that bank's."""
    cache = LessonCache(tmp_path / "cache", functools.partial(write_atomic, replace=Replace.ANY))
    cache.clock = lambda: time.time_ns() + 10_000_000_000  # the lessons were last changed well before
    wholes, indexes = [], []
    for source in (*shipped_paths(), HOSTILE):  # the shipped lesson asks calculated questions, the hostile none
        path = tmp_path / source.name
        path.write_bytes(source.read_bytes())
        wholes.append(read_lesson(path, cache))
        indexes.append(read_index(path, LessonCache(cache.folder, cache.write)))
    written = io.BytesIO()
    alive: list[weakref.ref[object]] = []
    read_at: list[bytes] = []  # what was written when each lesson was read whole

    def reading(index):
        whole = index.lesson

        def lesson():
            gc.collect()
            assert [ref() for ref in alive if ref() is not None] == [], "a lesson read before is still held"
            read_at.append(written.getvalue())
            found = whole()
            alive.append(weakref.ref(found))
            return found
        return lesson
    for index in indexes:
        assert index.head().items == ()  # read from the cache: its items only when asked for
        monkeypatch.setattr(index, "lesson", reading(index))
    options = {"language": language, "seed": 3, "versions": 3, "kinds": model.KINDS,
               "calculated": fmt is SheetFormat.moodle_xml}
    catalogs.use(language)
    streamed = model.build_bank(indexes, **options)
    ((_path, content),) = output.bank_documents(streamed, fmt, Path("bank"))
    assert callable(content)  # what writes the bank as it is made
    content(written)
    sheet = model.build_sheet(wholes, **options, bank=True)
    assert written.getvalue() == as_bytes(documents(sheet, fmt, Path("bank"), KeyMode.none)[0][1])
    questions = moodle.count(sheet) if fmt is SheetFormat.moodle_xml else len(gift.entries_of(sheet))
    assert (streamed.count, streamed.calculated) == (questions, len(sheet.calculated))
    assert streamed.sheet == replace(sheet, bank=(), calculated=())
    # each lesson's questions are written before the next lesson is read; a Moodle bank's lesson with variants is
    # read once before, to know which of its numeric items are calculated questions, asked once
    *first_pass, shipped, hostile = read_at
    assert first_pass == ([b""] if fmt is SheetFormat.moodle_xml else [])
    assert b"bert-basics/" not in shipped and b"bert-basics/" in hostile and b"hostile/" not in hostile


@pytest.mark.parametrize("name", ["bank.gift", "bank.xml"])
def test_the_cli_writes_a_bank_of_every_item_a_lesson_at_a_time(cli, tmp_path, monkeypatch, name):
    """With no --count, --students or --given, `sheet` makes no bank in memory: it writes it as it is made."""
    monkeypatch.setattr(model, "build_sheet", lambda *args, **options: pytest.fail("made the bank in memory"))
    result = cli("sheet", "-o", str(tmp_path / name), "--seed", "1", "-n", "3")
    assert result.exit_code == 0 and "questions for Moodle's question bank (Moodle shuffles per attempt" in result.output
    assert (tmp_path / name).read_bytes().count(b"bert-basics/") > 20


def test_every_numeric_answer_is_the_formula_over_its_set(lesson):
    sheet = build(lesson, versions=2, language="tr")
    for question in [q for v in sheet.versions for q in v.questions] + list(sheet.bank):
        if question.kind != "numeric":
            continue
        item_id, set_name = question.id.split("/")[1].split("@")
        expected = formula.evaluate(lesson.item(item_id).formula, lesson.values(set_name))
        assert question.value == expected
        assert question.answer == formula.format_number(expected, grouping=".")
    answers = {q.id: q.answer for q in sheet.bank}
    assert answers["bert-basics/embedding-params@bert-base"] == "23.837.184"
    assert answers["bert-basics/total-params@bert-large"] == "335.141.888"


def test_shuffled_options_keep_the_right_answer(lesson):
    item = lesson.item("bert-vs-gpt")
    positions = set()
    for seed in range(12):
        question = next(q for q in build(lesson, seed=seed).versions[0].questions if q.kind == "choice")
        assert sorted(question.choices) == sorted(item.options["en"])
        assert question.choices[question.correct[0]] == item.options["en"][item.correct]
        positions.add(question.correct[0])
    assert len(positions) > 1


def test_matching_is_one_question_with_a_shuffled_lettered_column(lesson):
    for seed in range(6):
        sheet = build(lesson, seed=seed)
        matches = [q for q in sheet.versions[0].questions if q.kind == "match"]
        assert len(matches) == 1
        question = matches[0]
        assert question.rows == ("layer", "d_model", "FFN size", "vocabulary")
        assert [question.choices[i] for i in question.correct] == ["12", "768", "3,072", "30,522"]  # one rule
        assert list(question.correct) != [0, 1, 2, 3]  # never in row order
        assert question.points == 4


def test_letters_differ_between_versions(lesson):
    """Options and the matching column turn by one place per version: no letter is right twice."""
    sheet = build(lesson, versions=3)
    for kind in ("choice", "match"):
        letters = [next(q for q in version.questions if q.kind == kind).correct for version in sheet.versions]
        for row in range(len(letters[0])):
            assert len({version[row] for version in letters}) == 3, (kind, letters)


def test_count_draws_the_same_questions_for_every_version(lesson):
    sheet = build(lesson, count=5, versions=2)
    ids = [sorted(q.id.split("@")[0] for q in version.questions) for version in sheet.versions]
    assert len(ids[0]) == 5 and ids[0] == ids[1]
    assert build(lesson, count=5, seed=8).versions[0].questions != sheet.versions[0].questions


def test_kinds_filter_and_practice_only_when_asked(lesson):
    # the lesson's one blank prints the attention formula its numeric question asks: left out of a full sheet
    assert {q.kind for q in build(lesson).versions[0].questions} == {"fact", "choice", "numeric", "match"}
    assert {q.kind for q in build(lesson, kinds=("blank", "fact")).versions[0].questions} == {"fact", "blank"}
    only = build(lesson, kinds=("choice", "practice"))
    assert [q.kind for q in only.bank] == ["choice", "practice"]
    practice = next(q for q in only.bank if q.kind == "practice")
    assert practice.answer.splitlines() == ["23837184 7087872 590592", "109482240", "0.666"]


def test_given_prints_one_legend_the_same_on_every_version(lesson):
    assert build(lesson).legend == ()
    sheet = build(lesson, given=True, language="tr")
    legend = {row.name: row for row in sheet.legend}
    assert list(legend) == ["V", "L", "T", "d", "f", "n", "h"]  # every parameter a numeric question uses
    assert legend["d"].values == (("BERT-base", "768"), ("BERT-large", "1.024"))
    assert legend["V"].values == (("BERT-base", "30.522"), ("BERT-large", "30.522"))
    page = html.render(sheet)
    assert page.count('<div class="legend">') == 2  # one per version, the same
    shipped = model.build_sheet([read_lesson(TESTS.parent / "decks" / "bert-basics.toml")], language="en", seed=1,
                                given=True)
    assert {row.name: row.meaning for row in shipped.legend}["V"] == "vocabulary size"  # from [sheet.legend]


def test_given_sets_apart_the_questions_its_legend_answers_in_one_pass(monkeypatch):
    """--given leaves out the questions its legend answers, no entry compared with another: each was looked up in
    the list of those answered (14,286 of the 1M store's 71,430 items: 506 s of CPU for a bank of them)."""
    lesson = read_lesson(TESTS.parent / "decks" / "bert-basics.toml")
    def bank():
        return model.build_sheet([lesson], language="en", seed=1, given=True, bank=True, kinds=model.KINDS)
    before = bank()
    assert len(before.given_out) >= 2 and before.bank
    compared: list[object] = []

    def equal(self, other):
        compared.append(other)
        return self is other
    monkeypatch.setattr(model._Entry, "__eq__", equal)
    assert bank() == before
    assert compared == []


@pytest.mark.parametrize("text, message", [
    ("choise", "--kinds: unknown kind 'choise'; did you mean 'choice'? (kinds: fact, choice, blank, numeric, match, practice)"),
    (" , ", "--kinds: name at least one kind (fact, choice, blank, numeric, match, practice)"),
])
def test_bad_kinds_are_explained(text, message):
    with pytest.raises(BertdrillError) as caught:
        model.parse_kinds(text)
    assert str(caught.value) == message


def test_parse_kinds_accepts_commas_and_spaces():
    assert model.parse_kinds("Choice, blank numeric,,choice") == ("choice", "blank", "numeric")
    assert model.parse_kinds(None) == model.DEFAULT_KINDS


def test_too_many_questions_is_an_error(lesson):
    with pytest.raises(BertdrillError, match=r"--count 99: the lessons have 21 questions .* ask for 1 to 21"):
        build(lesson, count=99)


# --- HTML ------------------------------------------------------------------------------------

def test_html_is_self_contained_and_labels_follow_the_language(lesson):
    page = html.render(build(lesson, language="tr", title=TURKISH_TITLE))
    assert '<html lang="tr">' in page
    assert "<style>" in page and "@page" in page
    for needle in ("http://", "https://", "<link", "<script", "@import", "url(", " src="):
        assert needle not in page.lower()
    assert "default-src 'none'" in page  # and a browser would refuse anything remote anyway
    for label in ("Ad Soyad:", "Öğrenci no:", "Sınıf:", "Tarih:", "Grup A", "Grup B", "Cevap anahtarı · Grup A",
                  "33 puan"):
        assert label in page
    for letter in TURKISH_LETTERS:
        assert letter in page


def test_html_sheet_has_numbers_points_boxes_and_keys_on_their_own_pages(lesson):
    sheet = build(lesson)
    page = html.render(sheet)
    assert page.count('<section class="sheet"') == 2 and page.count('<section class="key"') == 2
    # Keys come after every sheet, so the teacher prints the first pages for the class.
    assert page.index('id="key-A"') > page.index('id="version-B"')
    css = html.stylesheet()
    assert ".sheet, .key { break-before: page; }" in css
    assert "#version-B { page: version-B; } @page version-B { @bottom-left" in page
    assert "string(" not in page  # Chromium leaves string() empty in margin boxes
    first = sheet.versions[0].questions[0]
    assert f'<span class="q-num">1.</span><span class="q-text">{html_lib.escape(first.prompt)}</span>' in page
    assert page.count('<span class="box"></span>') >= 2 * (4 + 4)  # four options, four match rows per version


def test_blank_width_never_hints_the_answer(lesson, hostile):
    def blank_markup(question):
        sheet = model.Sheet("t", "en", 1, sheet_labels(), (model.Version("A", (question,)),))
        part = html.render(sheet, keys=False)
        code = re.search(r'<pre class="code">.*?</pre>', part, re.S)
        assert code is not None, part
        return code.group(0), part, markdown.render(sheet, keys=False)

    short = next(q for q in build(lesson).bank if q.kind == "blank")
    long = replace(short, answer="a much, much longer answer")
    (short_pre, _, short_md), (long_pre, long_page, long_md) = blank_markup(short), blank_markup(long)
    assert short_pre == long_pre
    assert '<span class="blank"></span>' in short_pre and BLANK not in short_pre
    assert "a much, much longer answer" not in long_page
    assert short_md == long_md and f" {markdown.BLANK_LINE} " in short_md


def test_key_separate_and_none(lesson, tmp_path):
    sheet = build(lesson)
    out = tmp_path / "quiz.html"
    files = documents(sheet, SheetFormat.html, out, KeyMode.separate)
    assert [path.name for path, _ in files] == ["quiz.html", "quiz-key.html"]
    student, key = (as_bytes(data).decode() for _, data in files)
    assert 'class="key"' not in student and 'class="sheet"' not in key
    assert "<title>What is BERT? · Answer key</title>" in key
    (_, only), = documents(sheet, SheetFormat.html, out, KeyMode.none)
    assert 'class="key"' not in as_bytes(only).decode()


def test_hostile_text_is_escaped_in_html(hostile):
    sheet = model.build_sheet([hostile], language="en", seed=3, versions=2, kinds=model.KINDS)
    page = html.render(sheet)
    assert "<script" not in page.lower() and "<img" not in page.lower() and "<b>set" not in page
    assert "&lt;script&gt;alert(&#x27;q&#x27;)&lt;/script&gt;" in page and "&lt;b&gt;set&lt;/b&gt;" in page
    shown = text_of(page)
    for question in sheet.versions[0].questions:
        assert squeeze(question.prompt) in shown
    assert sheet.left_out == ("hostile/blank",)  # it prints a + b, the formula the numeric question asks
    assert "<script>alert('title')</script> {=~#} a: b \\ c" in shown


def test_hostile_text_is_escaped_in_markdown(hostile):
    sheet = model.build_sheet([hostile], language="en", seed=3, kinds=model.KINDS)
    text = markdown.render(sheet)
    outside_code = re.sub(r"```.*?```", "", text, flags=re.S)
    assert not re.search(r"(?<!\\)<(script|img|b|i|u)\b", outside_code)
    assert "\\<script\\>alert('q')\\</script\\>" in text
    assert "\\<i\\>a\\</i\\> -\\> \\{=\\}" in text  # a match term, inside a table cell
    assert markdown.escape("| x |") == "\\| x \\|"
    assert markdown.escape("_a_ d_model\n# title\n1. one") == "\\_a\\_ d_model\\\n\\# title\\\n1\\. one"


def test_markdown_fences_are_longer_than_backticks_in_code():
    assert markdown.fenced("a ```` b") == "`````text\na ```` b\n`````"


# --- Golden files ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, fmt, language", [
    ("sheet-seed7.html", "html", "en"),
    ("sheet-seed7-tr.md", "md", "tr"),
    ("sheet-seed7-tr.gift", "gift", "tr"),
])
def test_golden_files(lesson, tmp_path, name, fmt, language):
    sheet = build(lesson, language=language, versions=2, seed=7)
    (_, content), = documents(sheet, SheetFormat(fmt), tmp_path / name)
    data = as_bytes(content)
    golden = GOLDEN / name
    if os.environ.get("BERTDRILL_UPDATE_GOLDEN"):
        golden.write_bytes(data)
    assert data == golden.read_bytes(), f"{name} changed; if intended, rerun with BERTDRILL_UPDATE_GOLDEN=1"


# --- GIFT, read back by Moodle's rules -------------------------------------------------------

def _read_gift(sheet) -> list[gift_parser.GiftQuestion]:
    """The questions Moodle reads, after the one category line of each lesson."""
    read = gift_parser.read(gift.render(sheet))
    assert read[0].qtype == "category" and read[0].category.startswith("$course$/top/bertdrill/")
    questions = [q for q in read if q.qtype != "category"]
    assert len(questions) == len(sheet.bank) == len(read) - 1
    return questions


def _html_text(text: gift_parser.Text) -> str:
    assert text.format == "html"
    return text_of(text.text)


def check_gift_question(question, read: gift_parser.GiftQuestion) -> None:
    """The question Moodle reads has the right type, text and answer."""
    assert read.name == question.id
    assert read.idnumber == question.id  # Moodle reads [id:...] in the comment
    assert read.tags == [*question.tags, f"points-{question.points}"]  # GIFT has no marks: a tag says them
    if question.kind == "blank":
        before, _, after = question.code.partition(BLANK)
        assert _html_text(read.text) == squeeze(f"{question.prompt} {before}_____{after}")
        if question.answer.isdigit() and not question.accept:  # a number: 4 and 4.0 are both right
            assert (read.qtype, read.answers, read.tolerances) == ("numerical", [question.answer], ["0"])
            return
        assert read.qtype == ("shortanswer" if "->" not in question.answer else "essay")
        assert read.answers == [question.answer, *question.accept] and set(read.fractions) == {1.0}
        return
    assert _html_text(read.text).startswith(squeeze(question.prompt))
    if question.kind == "choice":
        assert read.qtype == "multichoice" and read.single
        assert [html_lib.unescape(a) for a in read.answers] == list(question.choices)
        assert read.fractions == [1.0 if i == question.correct[0] else 0.0 for i in range(len(question.choices))]
    elif question.kind == "match":
        assert read.qtype == "match"
        assert [_html_text(s) for s in read.subquestions] == [squeeze(r) for r in question.rows]
        assert [html_lib.unescape(a) for a in read.subanswers] == [question.choices[i] for i in question.correct]
    elif question.kind == "numeric":
        assert read.qtype == "numerical"
        assert Fraction(read.answers[0]) == question.value and read.tolerances == ["0"]
    elif question.kind == "fact" and question.claim is not None:  # one number: graded as a number
        assert read.qtype == "numerical"
        assert (Fraction(read.answers[0]), Fraction(read.tolerances[0])) == question.claim
    elif question.kind == "fact" and question.accept and len(question.answer.split()) <= gift.SHORT_TERM \
            and not any("->" in a for a in (question.answer, *question.accept)):
        assert read.qtype == "shortanswer"
        # Short answers are plain text; Moodle reads "\*" as a literal star.
        assert [a.replace("\\*", "*") for a in read.answers] == list(dict.fromkeys([question.answer, *question.accept]))
    else:  # a fact no list of strings can judge, practice: an essay with the model answer as general feedback
        assert read.qtype == "essay"
        assert squeeze(question.answer) in text_of(read.general_feedback.text)


@pytest.mark.parametrize("language", ["en", "tr"])
def test_gift_every_question_reads_back_with_its_type_and_answer(lesson, language):
    sheet = build(lesson, language=language, kinds=model.KINDS)
    read = _read_gift(sheet)
    for question, parsed in zip(sheet.bank, read):
        check_gift_question(question, parsed)
    assert all(q.name is not None for q in read)  # bertdrill names every question it writes
    types = {(q.name or "").split("/")[1].split("@")[0]: q.qtype for q in read}
    assert types == {
        "bert-definition": "essay", "bert-acronym": "essay", "bidirectional": "essay",
        "pre-training": "essay", "fine-tuning": "essay", "understands-not-generates": "essay",
        "bert-base-settings": "essay", "bert-large-settings": "essay", "total-params": "numerical",
        "head-size": "numerical", "embedding-parts": "essay", "embedding-params": "numerical",
        "attention-params": "numerical", "ffn-params": "numerical", "layer-params": "numerical",
        "pooler-params": "numerical", "word-embedding-table": "numerical", "ffn-share": "essay",
        "bert-vs-gpt": "multichoice", "attention-projections": "numerical", "bert-base-match": "match",
        "count-bert-base": "essay",
    }
    assert len(read) == 29  # 22 items, the 7 numeric ones twice (BERT-base and BERT-large)


def test_gift_keeps_turkish_text(lesson):
    text = gift.render(build(lesson, language="tr"))
    for word in ("BERT-large'ın ayarları nelerdir?", "sözlük", "ileri beslemeli ağında", "Dikkatin dört"):
        assert word in text
    read = gift_parser.read(text)
    choice = next(q for q in read if q.qtype == "multichoice")
    assert "Çift yönlü encoder; nedensel maske yok" in choice.answers


def test_gift_numeric_tolerance_is_absolute():
    question = model.Question(number=1, id="x/y@z", kind=Kind.NUMERIC, prompt="How many?", points=2,
                              answer="2,000", value=2000, tolerance=Fraction(1, 100))
    sheet = model.Sheet("t", "en", 1, sheet_labels(), (), bank=(question,))
    category, read = gift_parser.read(gift.render(replace(sheet, categories=(("x", "Units / sizes"),))))
    assert category.category == "$course$/top/bertdrill/Units // sizes"
    assert (read.qtype, read.answers, read.tolerances) == ("numerical", ["2000"], ["20"])


def test_hostile_text_is_escaped_in_gift(hostile):
    for language in ("en", "tr"):
        sheet = model.build_sheet([hostile], language=language, seed=3, kinds=model.KINDS, given=True)
        text = gift.render(sheet)
        assert "<script" not in text.lower() and "<img" not in text.lower()
        read = _read_gift(sheet)
        for question, parsed in zip(sheet.bank, read):
            check_gift_question(question, parsed)
        kinds = {q.name: q.qtype for q in read}
        assert kinds["hostile/short-fact"] == "essay"  # a sentence: Moodle would compare the whole string
        assert kinds["hostile/arrow-fact"] == "essay"  # "->" in a short answer would read as matching
    # A short term is a short answer, each accepted form escaped as Moodle's importer reads it back.
    question = model.Question(number=1, id="x/short", kind=Kind.FACT, prompt="Which?", points=2,
                              answer="x=1~#2{}:\\tamam", accept=("a*b", "%50%yarım", "[plain]biçim"))
    sheet = model.Sheet("t", "en", 1, sheet_labels(), (), bank=(question,), categories=(("x", "X"),))
    _category, short = gift_parser.read(gift.render(sheet))
    assert short.qtype == "shortanswer"
    assert short.answers[:2] == ["x=1~#2{}:\\tamam", "a\\*b"]
    assert short.answers[2:] == ["%50%yarım", "[plain]biçim"]  # not a weight, not a format


def test_gift_escaping_matches_moodles_exporter():
    assert gift.escape("a\\b~c=d#e{f}g:h\ni") == "a\\\\b\\~c\\=d\\#e\\{f\\}g\\:h\\ni"
    assert gift.html("[plain] <b>&") == "&\\#91;plain] &lt;b&gt;&amp;"


# --- PDF -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def turkish_pdf(lesson, tmp_path_factory):
    pytest.importorskip("weasyprint")
    from bertdrill.adapters.export.sheets import pdf

    sheet = build(lesson, language="tr", versions=2, seed=7, title=TURKISH_TITLE)
    return sheet, pdf.render([html.render(replace(sheet, versions=(version,)), keys=False)
                              for version in sheet.versions] + [html.render(sheet, sheets=False)])


def test_pdf_text_holds_every_question_and_the_key_in_turkish(turkish_pdf):
    from io import BytesIO

    from pypdf import PdfReader

    sheet, data = turkish_pdf
    reader = PdfReader(BytesIO(data))
    pages = [squeeze(page.extract_text()) for page in reader.pages]
    text = " ".join(pages)
    for version in sheet.versions:
        for question in version.questions:
            assert squeeze(question.prompt) in text
        assert f"Cevap anahtarı · Grup {version.letter}" in text
    key_pages = " ".join(page for page in pages if "Cevap anahtarı" in page)
    for question in sheet.versions[0].questions:
        for line in question.answer.split("; "):
            assert squeeze(line.split(" → ")[-1]) in key_pages
    for letter in TURKISH_LETTERS:
        assert letter in text, letter
    assert TURKISH_TITLE in text
    assert "Grup A · Sayfa 1 / " in text and "Grup B · Sayfa 1 / " in text  # each version counts from 1


def test_pdf_is_reproducible(turkish_pdf, lesson):
    from bertdrill.adapters.export.sheets import pdf

    sheet, data = turkish_pdf
    assert data.startswith(b"%PDF-")
    again = pdf.render([html.render(replace(sheet, versions=(version,)), keys=False) for version in sheet.versions]
                       + [html.render(sheet, sheets=False)])
    assert again == data
    other = build(lesson, language="tr", versions=2, seed=8, title=TURKISH_TITLE)
    assert pdf.render(html.render(other)) != data


def test_missing_weasyprint_names_the_install_command(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "weasyprint", None)  # what an install without the extra looks like
    out = tmp_path / "quiz.pdf"
    out.write_bytes(b"the teacher's old sheet")
    result = cli("sheet", "-o", str(out), "--seed", "1", "--force")  # --force: the old sheet may be replaced
    assert result.exit_code == 1
    assert result.stderr == "Error: PDF output needs WeasyPrint: pip install 'bertdrill[pdf]'\n"
    assert out.read_bytes() == b"the teacher's old sheet"  # nothing written over it
    assert not list(tmp_path.glob("*.tmp"))


# --- the command -----------------------------------------------------------------------------

def test_cli_writes_html_and_reports_the_seed(cli, tmp_path):
    out = tmp_path / "quiz.html"
    result = cli("sheet", str(FROZEN), "-o", str(out), "--versions", "2", "--seed", "7", "--key", "pages")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (f"Wrote {out}: 2 versions (A, B), 16 questions and 33 points each; answer keys on "
                             "the last pages. Seed 7 (--seed 7 writes the same again).\n"
                             "Left out 5 questions that would give others away: bert-basics/bert-acronym, "
                             "bert-basics/bert-base-settings, bert-basics/total-params, bert-basics/embedding-parts, "
                             "bert-basics/attention-projections (bertdrill check says how).\n")
    assert out.read_bytes() == (GOLDEN / "sheet-seed7.html").read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_cli_keeps_the_keys_out_of_the_students_file_and_names_every_file(cli, tmp_path):
    out = tmp_path / "quiz.html"
    result = cli("sheet", str(FROZEN), "-o", str(out), "--versions", "2", "--seed", "7")
    assert result.exit_code == 0, result.stderr
    key = tmp_path / "quiz-key.html"
    assert result.stdout.startswith(f"Wrote {out}: 2 versions (A, B), 16 questions and 33 points each; the answer "
                                    f"key in {key}. Seed 7")
    assert 'class="key"' not in out.read_text(encoding="utf-8") and 'class="key"' in key.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quiz-key.html", "quiz.html"]

def test_cli_same_seed_same_bytes_different_seed_different(cli, tmp_path):
    paths = [tmp_path / name for name in ("a.md", "b.md", "c.md")]
    for path, seed in zip(paths, ("11", "11", "12")):
        assert cli("sheet", "-o", str(path), "--seed", seed, "-n", "3", "--lang", "tr").exit_code == 0
    a, b, c = (path.read_bytes() for path in paths)
    assert a == b and a != c


def test_cli_without_seed_picks_one_and_prints_it(cli, tmp_path):
    out = tmp_path / "quiz.gift"
    result = cli("sheet", "-o", str(out))
    said = re.search(r"Seed (\d+) \(--seed \1 writes the same again\)", result.stdout)
    assert said is not None, result.stdout
    seed = said.group(1)
    again = tmp_path / "again.gift"
    cli("sheet", "-o", str(again), "--seed", seed)
    assert out.read_bytes() == again.read_bytes()


def test_cli_format_option_beats_the_extension(cli, tmp_path):
    out = tmp_path / "moodle.txt"
    result = cli("sheet", "-o", str(out), "--format", "gift", "--seed", "1", "--kinds", "choice,match")
    assert result.exit_code == 0, result.stderr
    assert [q.qtype for q in gift_parser.read(out.read_text(encoding="utf-8"))] == ["category", "multichoice", "match"]
    assert "2 questions for Moodle's question bank;" in result.stdout
    assert "GIFT has no marks, so Moodle gives every question 1" in result.stdout


def test_cli_key_separate_writes_a_second_file(cli, tmp_path):
    out = tmp_path / "quiz.md"
    result = cli("sheet", "-o", str(out), "--key", "separate", "--seed", "3", "--title", "Sınav <1>")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "quiz-key.md").read_text(encoding="utf-8").partition("\n")[2].startswith("## Answer key — Version A\n\nSınav \\<1\\>")
    assert "Answer key" not in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("args, message", [
    (["-o", "{tmp}/quiz.docx"], "Error: cannot tell the format from the name '{tmp}/quiz.docx'; end it in .html, "
                                ".pdf, .md, .gift or .xml, or pass --format html|pdf|md|gift|moodle-xml"),
    (["-o", "{tmp}/missing/quiz.html"], "Error: cannot write {tmp}/missing/quiz.html: the folder "
                                        "{tmp}/missing does not exist"),
    (["-o", "{tmp}"], "Error: cannot tell the format from the name '{tmp}'; end it in .html, .pdf, .md, .gift or "
                      ".xml, or pass --format html|pdf|md|gift|moodle-xml"),
    (["-o", "{tmp}", "--format", "html"], "Error: cannot write {tmp}: it is a folder; give a file name such as "
                                          "{tmp}/quiz.html"),
    (["-o", "{tmp}/file.txt/quiz.html"], "Error: cannot write {tmp}/file.txt/quiz.html: {tmp}/file.txt is not a "
                                         "folder"),
    (["-o", "{tmp}/q.gift", "--key", "separate"], "Error: --key does not apply to GIFT: a GIFT file carries its "
                                                  "answers in each question"),
    (["-o", "{tmp}/q.html", "--kinds", "choise"], "Error: --kinds: unknown kind 'choise'; did you mean 'choice'? "
                                                  "(kinds: fact, choice, blank, numeric, match, practice)"),
    (["-o", "{tmp}/q.html", "--count", "40"], "Error: --count 40: the lessons have 22 questions of the kinds fact, "
                                              "choice, blank, numeric, match; ask for 1 to 22"),
])
def test_cli_errors_are_one_clear_line(cli, tmp_path, args, message):
    (tmp_path / "file.txt").write_text("not a folder")
    result = cli("sheet", *[arg.format(tmp=tmp_path) for arg in args])
    assert result.exit_code == 1
    assert result.stderr == message.format(tmp=tmp_path) + "\n"
    assert not list(tmp_path.glob("q.*"))


@pytest.mark.parametrize(("args", "message"), [
    (["--kinds", "choise"], "Hata: --kinds: bilinmeyen tür 'choise'; 'choice' mı demek istediniz? (türler: fact, choice, "
                            "blank, numeric, match, practice)"),
    (["--count", "3", "--kinds", "match"], "Hata: --count 3: derslerde match türlerinden 1 soru var; 1 ile 1 arasında "
                                           "isteyin"),
    (["--count", "22"], "Hata: --count 22: bu sorulardan yalnızca"),
    (["--students", "2", "--given"], "Hata: --given, --students ile kullanılamaz"),
])
def test_cli_errors_of_the_sheet_model_speak_the_interface_language(cli, tmp_path, args, message):
    """The sheet model's refusals went through no catalog: a Turkish interface said `Hata: --count 3: the lessons
    have 1 questions ...`."""
    result = cli("sheet", "-o", str(tmp_path / "q.md"), "--lang", "tr", *args)
    assert result.exit_code == 1
    assert result.stderr.startswith(message), result.stderr
    assert not list(tmp_path.glob("q*"))


@pytest.mark.parametrize("args", [["--versions", "27"], ["--versions", "0"], ["--count", "0"], ["--format", "docx"]])
def test_cli_usage_errors_exit_2(cli, tmp_path, args):
    assert cli("sheet", "-o", str(tmp_path / "q.html"), *args).exit_code == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_cli_read_only_folder(cli, tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        result = cli("sheet", "-o", str(folder / "q.html"))
        assert result.exit_code == 1
        assert "permission denied" in result.stderr
    finally:
        folder.chmod(0o700)


def test_help_does_not_import_weasyprint():
    # The formats module (two enums, for the CLI's options) is the one part of the sheets the CLI loads at once.
    code = ("import sys, bertdrill.cli; print(sorted(m for m in sys.modules if m.startswith(('weasyprint', "
            "'bertdrill.adapters.export.sheets.')) and m != 'bertdrill.adapters.export.sheets.formats') != [])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_sheet_help_has_a_summary(cli):
    result = cli("sheet", "--help")
    assert result.exit_code == 0
    assert "Write quiz sheets in versions, with answer keys" in result.stdout


