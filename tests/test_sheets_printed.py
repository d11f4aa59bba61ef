"""Sheets as they leave the printer: Chromium's Print, WeasyPrint's PDF with duplex padding and
--split, Moodle XML read back by Moodle's rules, and the lesson's own say over points and
instructions."""

from __future__ import annotations

import html as html_lib
import re
from fractions import Fraction
from io import BytesIO
from pathlib import Path

import moodle_xml
import pytest
from chromium import pdf_pages, print_pdf, requires_chromium

from bertdrill.adapters import catalogs
from bertdrill.adapters.export.files import as_bytes
from bertdrill.adapters.export.sheets import html, markdown, model, moodle
from bertdrill.adapters.export.sheets.formats import KeyMode, SheetFormat
from bertdrill.adapters.export.sheets.output import documents
from bertdrill.adapters.lessons import read_lesson
from bertdrill.core.errors import LessonErrors
from bertdrill.core.kinds import Kind
from bertdrill.core.languages import sheet_labels
from bertdrill.core.lesson import parse

TESTS = Path(__file__).resolve().parent
FROZEN = TESTS / "golden" / "bert-basics.toml"
SHIPPED = TESTS.parent / "decks" / "bert-basics.toml"


@pytest.fixture(scope="module")
def lesson():
    return read_lesson(FROZEN)


def build(lesson, **options):
    """A sheet as the CLI builds it: in the language the interface speaks (``sheet --lang`` sets both)."""
    options = {"language": "en", "seed": 7, "versions": 2, **options}
    catalogs.use(options["language"])
    return model.build_sheet([lesson], **options)


def visible(fragment: str) -> str:
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


# --- printed from a browser -------------------------------------------------------------------

@requires_chromium
def test_chromium_prints_the_footer_on_every_page(lesson, tmp_path):
    """Chromium has no string() in margin boxes: the footer must not depend on it (issue 16)."""
    sheet = build(lesson, versions=2)
    pages = pdf_pages(print_pdf(html.render(sheet), tmp_path / "printed.pdf"))
    assert len(pages) >= 6  # two versions of several pages, and their keys
    total = len(pages)
    for number, text in enumerate(pages, start=1):
        flat = " ".join(text.split())
        assert "What is BERT?" in flat, number  # the title, bottom left
        footer = re.search(r"(Version [AB]|Answer key · Version [AB]) · Page (\d+) of (\d+)", flat)
        assert footer, (number, flat[-200:])
        assert (int(footer.group(2)), int(footer.group(3))) == (number, total)
    # each version's pages say which version they belong to, and the keys come last
    found = [re.search(r"(Answer key · )?Version ([AB])", " ".join(text.split())) for text in pages]
    labels = [label.group(0) for label in found if label is not None]
    assert len(labels) == len(pages)  # every page says its version
    assert labels == sorted(labels, key=lambda label: (label.startswith("Answer"), label))


# --- PDF: even pages for duplex printing, one file per version ---------------------------------

def _pages(data: bytes) -> list[str]:
    pytest.importorskip("weasyprint")
    from pypdf import PdfReader

    return [" ".join((page.extract_text() or "").split()) for page in PdfReader(BytesIO(data)).pages]


@pytest.fixture(scope="module")
def duplex_pdf(lesson, tmp_path_factory):
    pytest.importorskip("weasyprint")
    sheet = build(lesson, versions=2)
    folder = tmp_path_factory.mktemp("pdf")
    (_, padded), = documents(sheet, SheetFormat.pdf, folder / "quiz.pdf")
    (_, plain), = documents(sheet, SheetFormat.pdf, folder / "quiz.pdf", duplex=False)
    return sheet, _pages(as_bytes(padded)), _pages(as_bytes(plain))


def _sections(pages: list[str]) -> list[tuple[str, int, int] | None]:
    """(section, page number, of) for each page that has a footer; None for a blank page."""
    found: list[tuple[str, int, int] | None] = []
    for text in pages:
        footer = re.search(r"((?:Answer key · )?Version [AB]) · Page (\d+) of (\d+)", text)
        found.append((footer.group(1), int(footer.group(2)), int(footer.group(3))) if footer else None)
    return found


def test_every_version_and_key_starts_on_a_new_sheet_of_paper(duplex_pdf):
    sheet, padded, plain = duplex_pdf
    sections = _sections(padded)
    starts = [index for index, found in enumerate(sections) if found and found[1] == 1]
    assert len(starts) == 4  # version A, version B, key A, key B, each from its own page 1
    assert all(start % 2 == 0 for start in starts)  # always the front of a sheet
    for found in sections:
        assert found is None or found[2] >= found[1]  # "Page 2 of 3": counted within its section
    blanks = [text for text, found in zip(padded, sections) if found is None]
    assert all(text == "" for text in blanks)
    # Without duplex nothing is added: the blank pages are exactly the padding.
    assert len(plain) == len(padded) - len(blanks) and None not in _sections(plain)


def test_split_writes_one_file_per_version(lesson, tmp_path):
    sheet = build(lesson, versions=3)
    files = documents(sheet, SheetFormat.html, tmp_path / "quiz.html", split=True)
    assert [path.name for path, _ in files] == ["quiz-A.html", "quiz-B.html", "quiz-C.html"]
    for (_, data), version in zip(files, sheet.versions):
        page = as_bytes(data).decode()
        assert f'id="version-{version.letter}"' in page and f'id="key-{version.letter}"' in page
        assert page.count('<section class="sheet"') == 1
    separate = documents(sheet, SheetFormat.md, tmp_path / "quiz.md", KeyMode.separate, split=True)
    assert [path.name for path, _ in separate] == ["quiz-A.md", "quiz-A-key.md", "quiz-B.md", "quiz-B-key.md",
                                                   "quiz-C.md", "quiz-C-key.md"]


def test_cli_split_and_no_duplex(cli, tmp_path):
    result = cli("sheet", str(FROZEN), "-o", str(tmp_path / "quiz.md"), "-n", "2", "--split", "--seed", "3")
    assert result.exit_code == 0, result.stderr
    # the keys in files of their own by default: each version's file can be printed for the class as it is
    assert sorted(path.name for path in tmp_path.iterdir()) == ["quiz-A-key.md", "quiz-A.md", "quiz-B-key.md",
                                                                "quiz-B.md"]
    assert "Answer key" not in (tmp_path / "quiz-A.md").read_text(encoding="utf-8")
    assert "the answer keys in" in result.stdout and str(tmp_path / "quiz-B-key.md") in result.stdout
    result = cli("sheet", str(FROZEN), "-o", str(tmp_path / "q.gift"), "--split")
    assert result.exit_code == 1
    assert result.stderr == "Error: --split does not apply to a question bank: Moodle shuffles per attempt\n"
    assert cli("sheet", "--help").stdout.count("--no-duplex") == 1


# --- the header, the key, the layout ------------------------------------------------------------

def test_header_has_student_fields_instructions_and_a_score_table(lesson):
    sheet = build(lesson, versions=1, instructions="Calculators allowed. <No phones>")
    page = html.render(sheet, keys=False)
    head = visible(page[page.index('<header class="sheet-head">'):page.index("</header>")])
    assert "Name: Student ID: Class: Date:" in head
    assert "Calculators allowed. <No phones>" in head and "&lt;No phones&gt;" in page
    version = sheet.versions[0]
    numbers = " ".join(str(q.number) for q in version.questions)
    worth = " ".join(str(q.points) for q in version.questions)
    assert f"Question {numbers} Total Points {worth} {version.points} Score" in head


def test_instructions_come_from_the_lesson_then_the_default(lesson):
    shipped = read_lesson(SHIPPED)
    assert build(shipped).instructions.startswith("Answer every question. For each number, show your working; "
                                                  "biases and LayerNorms count")
    assert build(lesson).instructions == sheet_labels().instructions  # the frozen copy has no [sheet]
    assert build(lesson, language="tr").instructions == "Bütün soruları cevapla. Her sayı için işlemini göster."


def test_key_repeats_the_question_and_lists_accepted_answers_and_tolerance(lesson):
    sheet = build(lesson, versions=1, kinds=("fact", "numeric"), count=4, seed=2)
    text = visible(html.render(sheet, sheets=False))
    for question in sheet.versions[0].questions:
        assert model.short_text(question.prompt) in text
        if question.accept:
            assert "Also accepted: " + "; ".join(question.accept) in text
    assert model.short_text("word " * 40).endswith("…") and len(model.short_text("word " * 40)) <= 91
    question = sheet.versions[0].questions[0]
    tolerant = model.Sheet("t", "en", 1, sheet_labels(), (model.Version("A", (
        model.Question(number=1, id="x/y", kind=Kind.NUMERIC, prompt="How many?", points=2, answer="2,000",
                       value=2000, tolerance=Fraction(1, 100)),)),))
    assert "within ±1%" in visible(html.render(tolerant, sheets=False))
    assert question.points == 2


def test_points_come_from_the_lesson(lesson_text):
    text = lesson_text.replace('id = "bert-vs-gpt"\nkind = "choice"', 'id = "bert-vs-gpt"\nkind = "choice"\npoints = 5')
    sheet = model.build_sheet([parse(text)], language="en", seed=1, kinds=(Kind.CHOICE,))
    assert [q.points for q in sheet.versions[0].questions] == [5]
    with pytest.raises(LessonErrors, match="points must be a whole number from 1 to 100, not 0"):
        parse(text.replace("points = 5", "points = 0"))


def test_sheet_table_errors_name_their_line(lesson_text):
    with pytest.raises(LessonErrors, match=r":\d+: \[sheet.legend\]: unknown name 'q'"):
        parse(lesson_text.replace('V = { en = "vocabulary size"', 'q = { en = "vocabulary size"'))
    with pytest.raises(LessonErrors, match=r"\[sheet\]: unknown key 'colour'"):
        parse(lesson_text.replace('instructions = { en = "Answer every', 'colour = "red"\ninstructions = { en = "Answer every'))


def test_markdown_needs_no_github(lesson):
    text = markdown.render(build(lesson, versions=1))
    assert "[ ]" not in text  # GitHub task boxes show as brackets elsewhere
    assert "☐" in text
    assert not re.search(r"^\|(\s*\|)+\s*$", text, re.M)  # no table row without a word (an empty header)


# --- Moodle XML, read back by Moodle's importer rules ----------------------------------------

@pytest.mark.parametrize("language", ["en", "tr"])
def test_moodle_xml_reads_back_with_types_answers_grades_and_feedback(lesson, language):
    sheet = build(lesson, language=language, kinds=model.KINDS)
    read = moodle_xml.read(moodle.render(sheet))
    assert len(read) == len(sheet.bank) == 29
    assert {q.category for q in read} == {f"$course$/top/bertdrill/{lesson.title[language]}"}
    types = {}
    for question, parsed in zip(sheet.bank, read):
        assert parsed.name == question.id
        if parsed.qtype != "multianswer":  # a cloze's mark is its parts' (at least one each)
            assert parsed.default_mark == question.points
            assert parsed.idnumber == question.id and parsed.tags == list(question.tags)
        assert visible(parsed.general_feedback.text) == " ".join(question.explanation.split())
        assert visible(parsed.text.text).startswith(" ".join(question.prompt.split()))
        types[question.id.split("/")[1].split("@")[0]] = parsed.qtype
        match parsed.qtype:
            case "multichoice":
                assert parsed.single and parsed.shuffle
                assert [html_lib.unescape(a.text) for a in parsed.answers] == list(question.choices)
                assert [a.fraction for a in parsed.answers] == [1.0 if i == question.correct[0] else 0.0
                                                                for i in range(len(question.choices))]
            case "numerical" if question.kind == "fact":  # one number: the claim's, within its figures
                (answer,) = parsed.answers
                assert (int(answer.text), int(answer.tolerance)) == question.claim and answer.fraction == 1
            case "numerical":
                (answer,) = parsed.answers
                assert int(answer.text) == question.value and answer.fraction == 1 and answer.tolerance == "0"
                assert parsed.show_units == 3
            case "matching":
                assert parsed.shuffle
                assert [(visible(sub.text), answer) for sub, answer in parsed.pairs] == [
                    (row, question.choices[index]) for row, index in zip(question.rows, question.correct)]
            case "shortanswer":
                assert [a.text.replace("\\*", "*") for a in parsed.answers] == list(
                    dict.fromkeys([question.answer, *question.accept]))
                assert {a.fraction for a in parsed.answers} == {1.0}
            case "multianswer" if question.kind == "fact":  # several numbers: a numerical part each
                values = [value for _text, value in question.numbers if value is not None]
                assert [(part.qtype, float(part.answers[0].text)) for part in parsed.parts] == [
                    ("numerical", value) for value in values]
                assert parsed.default_mark == max(question.points, len(values))
            case "multianswer" if question.answer.isdigit():  # a number in the blank: 4 and 4.0 are right
                (part,) = parsed.parts
                assert (part.qtype, part.mark, part.answers[0].text) == ("numerical", question.points, question.answer)
                assert "{#1}" in parsed.text.text
            case "multianswer":
                (part,) = parsed.parts
                assert part.qtype == "shortanswer" and part.mark == question.points
                assert [a.text for a in part.answers] == list(dict.fromkeys([question.answer, *question.accept]))
                assert "{#1}" in parsed.text.text
            case "essay":
                pass
            case other:
                raise AssertionError(other)
    assert types["bert-vs-gpt"] == "multichoice" and types["bert-base-match"] == "matching"
    assert types["attention-projections"] == "multianswer" and types["total-params"] == "numerical"
    assert types["bert-acronym"] == "essay" and types["bidirectional"] == "essay"
    assert types["word-embedding-table"] == "numerical" and types["bert-base-settings"] == "multianswer"
    assert types["count-bert-base"] == "essay"


def test_moodle_xml_escapes_hostile_text():
    hostile = read_lesson(TESTS / "lessons" / "hostile.toml")
    sheet = model.build_sheet([hostile], language="en", seed=3, kinds=model.KINDS)
    text = moodle.render(sheet)
    read = moodle_xml.read(text)
    assert len(read) == len(sheet.bank)
    for parsed in read:
        assert "<script" not in parsed.text.text and "<img" not in parsed.text.text
    shown = " ".join(visible(parsed.text.text) for parsed in read)
    assert "<script>alert('q')</script>" in shown  # as text, for the student to read


def test_cli_writes_moodle_xml(cli, tmp_path):
    out = tmp_path / "bank.xml"
    result = cli("sheet", str(FROZEN), "-o", str(out), "--seed", "1", "--lang", "tr")
    assert result.exit_code == 0, result.stderr
    assert "28" in result.stdout  # all but practice (the message is in Turkish with --lang tr)
    assert "Left out" not in result.stdout  # a bank holds every question; a quiz draws from it
    assert len(moodle_xml.read(out.read_text(encoding="utf-8"))) == 28
    result = cli("sheet", str(FROZEN), "-o", str(tmp_path / "b.txt"), "--format", "moodle-xml", "--key", "none")
    assert result.exit_code == 1
    assert "--key does not apply to Moodle XML" in result.stderr


@requires_chromium
def test_points_and_question_text_line_up_from_9_to_10(lesson):
    """The points column was ragged between questions 9 and 10; fixed widths line it up (drawn in Chromium)."""
    from chromium import measure

    page = html.render(build(lesson, versions=1), keys=False)
    script = """
    var edges = function (selector, side) {
      return Array.prototype.map.call(document.querySelectorAll(selector),
                                      function (e) { return Math.round(e.getBoundingClientRect()[side]); });
    };
    return {points: edges(".q-points", "right"), text: edges(".q-text", "left"),
            work: Array.prototype.map.call(document.querySelectorAll(".q-numeric .lines"),
                                           function (e) { return e.children.length; })};
    """
    found = measure(page, script, width=800)
    assert len(found["points"]) >= 10
    assert len(set(found["points"])) == 1 and len(set(found["text"])) == 1, found
    assert found["work"] and set(found["work"]) == {3}  # room to work: three lines, not one


def test_points_line_up_in_the_weasyprint_pdf(lesson, tmp_path):
    """The same in WeasyPrint's PDF, read with poppler's word boxes (pdftotext -bbox, from .ci/run)."""
    import shutil
    import subprocess

    pytest.importorskip("weasyprint")
    if shutil.which("pdftotext") is None:
        pytest.skip("poppler-utils is not installed (see .ci/run)")
    sheet = build(lesson, versions=1)
    (_, data), = documents(sheet, SheetFormat.pdf, tmp_path / "quiz.pdf", key=KeyMode.none)
    (tmp_path / "quiz.pdf").write_bytes(data)
    boxes = subprocess.run(["pdftotext", "-bbox", str(tmp_path / "quiz.pdf"), "-"], capture_output=True, text=True,
                           check=True, timeout=60).stdout
    words = re.findall(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)</word>', boxes)
    right_edges = {round(float(x_max), 1) for _, x_max, word in words if word in ("point", "points")}
    right_edges.discard(min(right_edges))  # the summary under the header ("19 questions · 38 points"), on the left
    assert len(right_edges) == 1, right_edges
