"""The lesson parser and verifier: good lessons load, broken ones say file:line: what is wrong."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from timing import cpu_seconds

from bertdrill.adapters.lessons import load_lessons, read_lesson
from bertdrill.core.cards import PracticeCard
from bertdrill.core.errors import LessonErrors
from bertdrill.core.lesson import FactItem, parse
from bertdrill.core.numbers import parse_approx, round_significant

HERE = Path(__file__).parent
MINIMAL = HERE / "lessons" / "minimal.toml"
BROKEN = HERE / "lessons" / "broken"

# Each broken lesson: the line the error must name, and the start of its message.
EXPECTED = {
    "approx-claim-unreadable": (69, "item 'claim': cannot read 'about a lot' as a number such as "),
    "approx-claim-wrong": (69, "item 'claim': claim '12k' does not round to total = 13,120 f"),
    "attribute-access": (23, "formula 'share': attribute access not allowed in formulas"),
    "bad-item-id": (39, "item id 'Gap Item!' must be lower-case letters, digits, '-' "),
    "blank-fill-wrong": (43, "item 'gap': the filled text '(3) * (d * d + d)' gives 216 fo"),
    "blank-without-blank": (42, "item 'gap': a blank's text must contain '____' exactly once"),
    "choice-answer-out-of-range": (36, "item 'pick': answer must be the number of the correct option"),
    "choice-option-count-differs": (35, "item 'pick': every language must list the same number of opt"),
    "claim-missing-fields": (69, "item 'claim': each claim needs value, params and stated, e.g"),
    "deep-nesting": (23, "formula 'share': not a valid formula: too many nested parent"),
    "deep-unary": (23, "formula 'share': formula too long (5,001 characters; at most"),
    "division-by-zero": (23, "formula 'share': division by zero (with parameter set 'small"),
    "duplicate-item-id": (39, "duplicate item id 'pick' (first used on line 31)"),
    "extra-language-text": (41, "item 'gap': 'prompt' has text for 'de', which is not a lesso"),
    "formula-cycle": (19, 'formula cycle: attention -> total -> layer -> attention'),
    "huge-expression": (23, "formula 'share': formula too long (99,999 characters; at mos"),
    "import-call": (23, "formula 'share': call to __import__() is not allowed in form"),
    "lambda": (23, "formula 'share': lambda not allowed in formulas"),
    "lesson-extra-table": (6, "[lesson]: unknown key 'extra' (expected one of: id, languages, title, summary, "),
    "lesson-unknown-key": (5, "[lesson]: unknown key 'sumary' (expected one of: id, languages, title, summary"),
    "languages-not-a-list": (3, 'lesson languages must be a non-empty list such as ["en", "tr'),
    "match-unknown-value": (59, "item 'table': unknown name 'layers'; did you mean 'layer'? i"),
    "missing-item-id": (31, 'item has no id'),
    "missing-language-text": (34, "item 'pick': 'prompt' has no 'tr' text"),
    "missing-lesson-table": (1, 'missing [lesson] table with id, languages and title'),
    "numeric-unknown-set": (51, "item 'count': unknown parameter set 'huge'"),
    "param-not-a-number": (9, "parameter 'f' of 'small' must be a number, not str"),
    "param-sets-differ": (12, "parameter set 'big' and 'small' differ in: f"),
    "placeholder-unknown": (49, "item 'count': prompt (en): placeholder: unknown name 'width'"),
    "power-tower": (23, "formula 'share': exponent too large (387420489; at most 256)"),
    "stated-number-wrong": (52, "item 'count': stated 1745 for small, but 'total' gives 1744"),
    "stated-unknown-set": (52, "item 'count': stated names 'tiny', which is not in its param"),
    "string-literal": (23, "formula 'share': string literals are not allowed in formulas"),
    "toml-syntax": (8, 'TOML syntax error: Invalid value'),
    "toml-unclosed-string": (29, 'TOML syntax error: Unclosed inline table'),
    "unknown-field": (37, "item 'pick': unknown field 'hint' for a choice item"),
    "unknown-formula-name": (22, "formula 'total': unknown name 'layr'; did you mean 'layer'?"),
    "unknown-kind": (33, "item 'pick': unknown kind 'essay' (expected one of: fact, ch"),}


def test_every_broken_lesson_has_an_expectation():
    assert {path.stem for path in BROKEN.glob("*.toml")} == set(EXPECTED)
    assert len(EXPECTED) >= 25


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_lesson_gives_one_located_error(name):
    path = BROKEN / f"{name}.toml"
    def read() -> None:
        with pytest.raises(LessonErrors) as caught:
            read_lesson(path)
        raised.append(caught)
    raised: list[pytest.ExceptionInfo[LessonErrors]] = []
    assert cpu_seconds(read) < 1.0
    [caught] = raised
    [error] = caught.value.errors
    line, message = EXPECTED[name]
    assert (error.line, error.message[: len(message)]) == (line, message)
    assert str(error).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("name", ["formula-cycle", "import-call", "power-tower", "stated-number-wrong"])
def test_check_command_reports_broken_lesson_without_traceback(cli, name):
    path = BROKEN / f"{name}.toml"
    result = cli("check", str(path))
    assert result.exit_code == 1
    assert result.stdout == ""
    line, message = EXPECTED[name]
    assert result.stderr.startswith(f"{path}:{line}: {message}")
    assert "Traceback" not in result.stderr


def test_check_reports_every_broken_file_in_a_folder(cli, tmp_path):
    for name in ("lambda", "unknown-kind"):
        (tmp_path / f"{name}.toml").write_bytes((BROKEN / f"{name}.toml").read_bytes())
    result = cli("check", str(tmp_path))
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 2


def test_non_utf8_file(tmp_path, cli):
    """A lesson saved in the Turkish Windows code page, as an editor might."""
    path = tmp_path / "cp1254.toml"
    text = MINIMAL.read_text()
    path.write_bytes(text.encode("cp1254"))
    first = next(number for number, line in enumerate(text.splitlines(), 1) if not line.isascii())
    result = cli("check", str(path))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{path}:{first}: not UTF-8 text (byte 0x")


def test_empty_file(tmp_path, cli):
    path = tmp_path / "empty.toml"
    path.write_text("")
    result = cli("check", str(path))
    assert (result.exit_code, result.stderr.strip()) == (1, f"{path}:1: empty file: a lesson needs a [lesson] table")


def test_directory_passed_as_a_file(tmp_path):
    with pytest.raises(LessonErrors) as caught:
        read_lesson(tmp_path)
    assert str(caught.value) == f"{tmp_path}: is a directory, not a lesson file"


def test_missing_file(cli, tmp_path):
    result = cli("check", str(tmp_path / "nope.toml"))
    assert (result.exit_code, result.stderr.strip()) == (1, f"{tmp_path / 'nope.toml'}: no such file")


def test_empty_folder(cli, tmp_path):
    result = cli("check", str(tmp_path))
    assert result.exit_code == 1
    assert "no .toml lesson files" in result.stderr


def test_two_lessons_with_one_id(cli, tmp_path):
    for name in ("a", "b"):
        (tmp_path / f"{name}.toml").write_text(MINIMAL.read_text())
    result = cli("check", str(tmp_path))
    assert result.exit_code == 1
    assert "lesson id 'mini' is also used by" in result.stderr


def test_minimal_lesson_verifies_every_stated_number():
    lesson = read_lesson(MINIMAL)
    # stated count for one set, the blank for both sets, two match values, one approximate claim
    assert lesson.verified == 6
    assert lesson.values("small")["total"] == 1744
    assert lesson.values("big")["share"] == Fraction(2128, 3280)


def test_shipped_lesson_numbers_match_the_lesson_pages():
    [lesson] = load_lessons()
    base, large = lesson.values("bert-base"), lesson.values("bert-large")
    assert (base["embeddings"], base["layer"], base["pooler"]) == (23837184, 7087872, 590592)
    assert base["total"] == 109482240
    assert large["total"] == 335141888
    assert round(base["ffn_share"], 3) == Fraction("0.666")
    assert set(lesson.languages) == {"en", "tr"}


def test_shipped_lesson_carries_every_text_in_both_languages():
    [lesson] = load_lessons()
    for item in lesson.items:
        for field in ("prompt", "answer", "explanation"):
            texts = getattr(item, field, {})  # numeric, match and practice items have no answer text
            if texts:
                assert set(texts) == {"en", "tr"}, (item.id, field)
                assert all(text.strip() for text in texts.values()), (item.id, field)


def test_placeholders_render_numbers_per_language():
    [lesson] = load_lessons()
    item = lesson.item("word-embedding-table")
    assert isinstance(item, FactItem)
    assert lesson.render(item.answer["en"], "en") == "~23 million (V · d = 23,440,896)."
    assert lesson.render(item.answer["tr"], "tr") == "~23 milyon (V · d = 23.440.896)."
    assert lesson.render("{{literal}} {set}", "en", "bert-large") == "{literal} BERT-large"


def test_practice_sample_solution_prints_the_generated_expected_output():
    """The lesson's own sample solution, run as a learner would, prints what the formulas predict."""
    from bertdrill.adapters.lessons import all_cards

    [card] = [c for c in all_cards(load_lessons()) if c.kind == "practice"]
    assert isinstance(card, PracticeCard)
    assert card.expected_output == ("23837184 7087872 590592", "109482240", "0.666")
    assert set(card.solution) == {"en", "tr"} and "embeddings =" in card.solution["en"] and "gomme =" in card.solution["tr"]
    for solution in card.solution.values():  # English identifiers in English, the seed's in Turkish: same output
        run = subprocess.run([sys.executable, "-c", solution], capture_output=True, text=True, timeout=30)
        assert run.stdout.splitlines() == list(card.expected_output)


@pytest.mark.parametrize(
    "stated, value, digits",
    [("110M", 110_000_000, 2), ("~340M", 340_000_000, 2), ("23 million", 23_000_000, 2),
     ("2/3", Fraction(2, 3), 2), ("0.666", Fraction("0.666"), 3), ("1.5k", 1500, 2), ("110 milyon", 110_000_000, 2)],
)
def test_parse_approx(stated, value, digits):
    assert parse_approx(stated) == (value, digits)


def test_round_significant():
    assert round_significant(109_482_240, 2) == 110_000_000
    assert round_significant(335_141_888, 2) == 340_000_000
    assert round_significant(Fraction(4722432, 7087872), 3) == Fraction("0.666")
    assert round_significant(Fraction(1, 300), 1) == Fraction(3, 1000)


def test_toml_cannot_run_code(tmp_path):
    """A formula that tries to touch the file system is refused before anything runs."""
    marker = tmp_path / "pwned"
    text = MINIMAL.read_text().replace('share = "ffn / layer"', f"share = '__import__(\"os\").mkdir(\"{marker}\")'")
    with pytest.raises(LessonErrors):
        parse(text, "evil.toml")
    assert not marker.exists()


def test_names_say_what_formulas_and_terms_are_called(lesson_text, tmp_path):
    """issue 21: diagnosis speaks the learner's language with the lesson's [names]."""
    from bertdrill.core.lesson import parse

    shipped = parse(lesson_text, "bert.toml")
    assert shipped.names["2 * d"] == {"en": "a LayerNorm", "tr": "LayerNorm"}
    assert shipped.names["attention"]["tr"] == "dikkat bloğu"
    spaced = lesson_text.replace('"2 * d" = {', '"2*d" = {')  # a term is matched however it is spaced
    assert parse(spaced, "bert.toml").names["2 * d"]["en"] == "a LayerNorm"
    for broken, message in [('"2 * q" = { en = "x", tr = "y" }', "[names]: unknown name 'q'"),
                            ('atention = { en = "x", tr = "y" }', "[names]: unknown name 'atention'; did you mean"),
                            ('pooler = { en = "x" }', "[names]: 'pooler' has no 'tr' text")]:
        header = next(row for row in lesson_text.splitlines() if row.startswith("[names]"))
        text = lesson_text.replace(header, header + "\n" + broken, 1)
        text = text.replace('\npooler = { en = "the pooler", tr = "pooler" }', "") if broken.startswith("pooler") \
            else text
        with pytest.raises(LessonErrors) as caught:
            parse(text, "bad.toml")
        [error] = caught.value.errors
        line = text.splitlines().index(broken) + 1
        assert (error.line, error.message[:len(message)]) == (line, message), error
