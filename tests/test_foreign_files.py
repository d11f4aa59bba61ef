"""A file that is not bertdrill's is never replaced: every output (`sheet` in each format, its answer keys, its
`--split` and per-student files, `export anki`, `stats --workload --chart`, `practice start`) refuses an existing
file without bertdrill's mark unless `--force`, before any work, and leaves it byte for byte as it was; an earlier
output of bertdrill's (of any format) is replaced. The marks themselves: adapters/export/marks.py."""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import pytest
from chromium import requires_chromium

from bertdrill.adapters.export.marks import Mark, is_ours, seal, sealed, zip_comment

SHIPPED = Path(__file__).resolve().parent.parent / "decks" / "bert-basics.toml"
FOREIGN = b"my essay, which took a week\n"
REFUSED = "exists and is not a file bertdrill wrote; use --force to replace it, or -o to choose another file"


@pytest.fixture
def lesson(tmp_path) -> Path:
    path: Path = tmp_path / "lessons" / "bert.toml"
    path.parent.mkdir()
    shutil.copy(SHIPPED, path)
    return path


def foreign(path: Path, data: bytes = FOREIGN) -> Path:
    path.write_bytes(data)
    return path


def refused(result, path: Path, data: bytes = FOREIGN) -> None:
    """Exit 1 with the message, the file as it was, and no temporary file left beside it."""
    assert result.exit_code == 1, result.output
    assert result.stderr == f"Error: {path} {REFUSED}\n"
    assert path.read_bytes() == data
    assert not list(path.parent.glob(".*.tmp"))


# --------------------------------------------------------------------------- the marks


def _package(path: Path, comment: bytes = b"") -> bytes:
    with zipfile.ZipFile(path, "w") as archive:
        archive.comment = comment
        archive.writestr("collection.anki2", b"x")
    return path.read_bytes()


TEXTS = {Mark.HTML: b"<!DOCTYPE html>\n<html></html>\n", Mark.MARKDOWN: b"# Quiz\n", Mark.SVG: b"<svg/>\n",
         Mark.GIFT: b"// 2 questions\n\nQ{T}\n", Mark.SCRIPT: b"# task\nprint(1)\n",
         Mark.MOODLE_XML: b'<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n</quiz>\n'}


@pytest.mark.parametrize("mark", list(TEXTS))
def test_a_text_file_is_ours_as_written_and_no_longer_once_changed(tmp_path, mark):
    path = tmp_path / "out"
    marked = seal(mark, TEXTS[mark])
    path.write_bytes(marked)
    assert is_ours(path)
    path.write_bytes(marked + b"a line the teacher added\n")  # edited after: the teacher's now
    assert not is_ours(path)
    path.write_bytes(TEXTS[mark])  # never marked
    assert not is_ours(path)


@pytest.mark.parametrize("mark", list(TEXTS))
def test_a_file_written_as_it_is_made_carries_the_same_mark(tmp_path, mark):
    """sealed() writes a file too large to hold, in pieces, its digest last: the bytes seal() writes."""
    from bertdrill.adapters.export.files import Replace, write_atomic

    text = TEXTS[mark] + "çğış\n".encode() * 3
    first, _newline, rest = text.partition(b"\n")
    pieces = [first + b"\n", *(rest[at:at + 5] for at in range(0, len(rest), 5))] if mark is Mark.MOODLE_XML \
        else [text[at:at + 5] for at in range(0, len(text), 5)]
    path = tmp_path / "out"
    write_atomic(path, sealed(mark, pieces), replace=Replace.OURS)
    assert path.read_bytes() == seal(mark, text) and is_ours(path)


def test_a_pdf_is_ours_until_a_viewer_appends_to_it(tmp_path):
    path = tmp_path / "quiz.pdf"
    pdf = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\nxref\n0 1\ntrailer\n<<>>\nstartxref\n24\n%%EOF\n"
    path.write_bytes(seal(Mark.PDF, pdf))
    assert is_ours(path) and path.read_bytes().endswith(b"endobj\nxref\n0 1\ntrailer\n<<>>\n%bertdrill 0.1.0\n"
                                                         b"startxref\n24\n%%EOF\n")
    path.write_bytes(seal(Mark.PDF, pdf) + b"2 0 obj\n<<>>\nendobj\nstartxref\n90\n%%EOF\n")  # an incremental save
    assert not is_ours(path)
    path.write_bytes(pdf)
    assert not is_ours(path)


def test_a_package_is_ours_by_its_zip_comment(tmp_path):
    path = tmp_path / "deck.apkg"
    _package(path, zip_comment())
    assert is_ours(path)
    _package(path, b"bertdrill 0.1.0 and more")  # another tool's comment that merely starts so
    assert not is_ours(path)
    _package(path)
    assert not is_ours(path)


def test_an_empty_file_is_ours_and_a_mark_elsewhere_is_not(tmp_path):
    """An empty file holds nothing to lose (mktemp's); a mark quoted inside a file is not a mark."""
    path = tmp_path / "out.md"
    path.write_bytes(b"")
    assert is_ours(path)
    path.write_bytes(b"Notes\n" + seal(Mark.MARKDOWN, b"x\n"))
    assert not is_ours(path)


def test_a_mark_of_an_earlier_version_counts(tmp_path):
    path = tmp_path / "quiz.md"
    body = b"# Quiz\n"
    path.write_bytes(seal(Mark.MARKDOWN, body).replace(b"bertdrill 0.1.0", b"bertdrill 0.0.9"))
    assert is_ours(path)


# --------------------------------------------------------------------------- sheets, every format

FORMATS = ["html", "md", "gift", "xml", "pdf"]


@pytest.mark.parametrize("extension", FORMATS)
def test_sheet_refuses_a_foreign_file_replaces_its_own_and_forces(cli, tmp_path, lesson, extension):
    out = foreign(tmp_path / f"quiz.{extension}")
    refused(cli("sheet", str(lesson), "-o", str(out), "--seed", "1"), out)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["lessons", out.name]  # not even the key
    forced = cli("sheet", str(lesson), "-o", str(out), "--seed", "1", "--force")
    assert forced.exit_code == 0, forced.output
    first = out.read_bytes()
    assert first != FOREIGN and is_ours(out)
    again = cli("sheet", str(lesson), "-o", str(out), "--seed", "2")  # tomorrow's sheet over today's
    assert again.exit_code == 0, again.output
    assert out.read_bytes() != first and is_ours(out)


def test_a_foreign_answer_key_file_is_refused_before_the_sheet_is_written(cli, tmp_path, lesson):
    key = foreign(tmp_path / "quiz-key.html")
    refused(cli("sheet", str(lesson), "-o", str(tmp_path / "quiz.html"), "--seed", "1"), key)
    assert not (tmp_path / "quiz.html").exists()
    assert cli("sheet", str(lesson), "-o", str(tmp_path / "quiz.html"), "--seed", "1", "--force").exit_code == 0
    assert is_ours(key) and is_ours(tmp_path / "quiz.html")


def test_split_versions_and_student_files_are_each_checked(cli, tmp_path, lesson):
    second = foreign(tmp_path / "quiz-B.md")
    refused(cli("sheet", str(lesson), "-o", str(tmp_path / "quiz.md"), "-n", "2", "--split", "--seed", "1"), second)
    assert not (tmp_path / "quiz-A.md").exists()
    student = foreign(tmp_path / "class-2-key.md")
    refused(cli("sheet", str(lesson), "-o", str(tmp_path / "class.md"), "--students", "3", "--split"), student)
    assert [path.name for path in tmp_path.glob("class*.md")] == ["class-2-key.md"]  # nothing written
    written = cli("sheet", str(lesson), "-o", str(tmp_path / "class.md"), "--students", "3", "--split", "--force")
    assert written.exit_code == 0, written.output
    assert all(is_ours(tmp_path / f"class-{n}{key}.md") for n in (1, 2, 3) for key in ("", "-key"))
    again = cli("sheet", str(lesson), "-o", str(tmp_path / "class.md"), "--students", "3", "--split")
    assert again.exit_code == 0, again.output


def test_a_sheet_of_ours_in_another_format_is_replaced(cli, tmp_path, lesson):
    """An HTML sheet written to quiz.md (--format html) is still bertdrill's: the Markdown sheet replaces it."""
    out = tmp_path / "quiz.md"
    assert cli("sheet", str(lesson), "-o", str(out), "--format", "html", "--key", "none").exit_code == 0
    assert out.read_text(encoding="utf-8").partition("\n")[2].startswith("<!DOCTYPE html>")
    result = cli("sheet", str(lesson), "-o", str(out), "--key", "none")
    assert result.exit_code == 0, result.output
    assert "<!DOCTYPE html>" not in out.read_text(encoding="utf-8")
    package = tmp_path / "quiz.gift"
    assert cli("export", "anki", str(lesson), "-o", str(tmp_path / "deck.apkg")).exit_code == 0
    shutil.copy(tmp_path / "deck.apkg", package)  # a package of ours, renamed
    assert cli("sheet", str(lesson), "-o", str(package)).exit_code == 0


def test_an_edited_markdown_sheet_is_the_teachers(cli, tmp_path, lesson):
    """Markdown is for teachers who edit before printing: an edited sheet is refused, their edits kept."""
    out = tmp_path / "quiz.md"
    assert cli("sheet", str(lesson), "-o", str(out), "--key", "none", "--seed", "1").exit_code == 0
    edited = out.read_bytes().replace(b"Version A", b"Group A, week 3")
    out.write_bytes(edited)
    refused(cli("sheet", str(lesson), "-o", str(out), "--key", "none", "--seed", "2"), out, edited)


def test_the_refusal_is_translated(cli, tmp_path, lesson):
    out = foreign(tmp_path / "ödev.md")
    result = cli("sheet", str(lesson), "-o", str(out), "--lang", "tr")
    assert result.exit_code == 1
    assert result.stderr == (f"Hata: {out} var ve bertdrill'in yazdığı bir dosya değil; değiştirmek için --force "
                             "kullan ya da -o ile başka bir dosya seç\n")
    assert out.read_bytes() == FOREIGN


# --------------------------------------------------------------------------- marked files still read the same


def test_moodle_reads_the_marked_gift_and_xml_as_before(lesson):
    import gift_parser
    import moodle_xml

    from bertdrill.adapters.export.files import as_bytes
    from bertdrill.adapters.export.sheets import gift, moodle
    from bertdrill.adapters.export.sheets.formats import SheetFormat
    from bertdrill.adapters.export.sheets.model import build_sheet
    from bertdrill.adapters.export.sheets.output import documents
    from bertdrill.adapters.lessons import read_lesson

    sheet = build_sheet([read_lesson(lesson)], language="en", seed=7, versions=1)
    (_path, writes_gift), = documents(sheet, SheetFormat.gift, Path("bank.gift"))
    marked_gift = as_bytes(writes_gift)
    assert marked_gift.startswith(b"// bertdrill 0.1.0 #")
    assert gift_parser.read(marked_gift.decode()) == gift_parser.read(gift.render(sheet))
    (_path, writes_xml), = documents(sheet, SheetFormat.moodle_xml, Path("bank.xml"))
    marked_xml = as_bytes(writes_xml)  # a bank is written as it is made: it may be larger than memory
    assert marked_xml == seal(Mark.MOODLE_XML, moodle.render(sheet).encode())
    assert marked_xml.split(b"\n")[1].startswith(b"<!-- bertdrill 0.1.0 #")
    assert moodle_xml.read(marked_xml.decode()) == moodle_xml.read(moodle.render(sheet))


def test_the_marked_pdf_is_valid_and_names_its_creator(cli, tmp_path, lesson):
    import pypdf

    out = tmp_path / "quiz.pdf"
    assert cli("sheet", str(lesson), "-o", str(out), "--key", "none", "--seed", "1").exit_code == 0
    reader = pypdf.PdfReader(out, strict=True)  # a wrong offset would be an error in strict mode
    assert len(reader.pages) >= 1 and reader.metadata is not None
    assert reader.metadata.creator == "bertdrill 0.1.0"
    assert "1." in reader.pages[0].extract_text()


def test_anki_imports_a_marked_package(cli, tmp_path, lesson):
    from anki.collection import Collection
    from anki.import_export_pb2 import ImportAnkiPackageOptions, ImportAnkiPackageRequest

    out = tmp_path / "deck.apkg"
    assert cli("export", "anki", str(lesson), "-o", str(out)).exit_code == 0
    with zipfile.ZipFile(out) as archive:
        assert archive.comment == zip_comment()
    collection = Collection(str(tmp_path / "collection.anki2"))
    try:
        request = ImportAnkiPackageRequest(package_path=str(out), options=ImportAnkiPackageOptions())
        assert len(collection.import_anki_package(request).log.new) == 33
    finally:
        collection.close()


# --------------------------------------------------------------------------- the other writers


def test_export_anki_refuses_a_foreign_file_replaces_its_own_and_forces(cli, tmp_path, lesson):
    out = foreign(tmp_path / "notes.apkg")
    refused(cli("export", "anki", str(lesson), "-o", str(out)), out)
    zipped = tmp_path / "other.apkg"
    package = _package(zipped)  # a zip, not ours
    refused(cli("export", "anki", str(lesson), "-o", str(zipped)), zipped, package)
    assert cli("export", "anki", str(lesson), "-o", str(out), "--force").exit_code == 0
    assert is_ours(out)
    assert cli("export", "anki", str(lesson), "-o", str(out)).exit_code == 0


def test_the_workload_chart_refuses_a_foreign_file_before_the_simulation(cli, isolated_home, tmp_path, monkeypatch):
    from learner_store import learner_store

    isolated_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("BERTDRILL_NOW", "2025-07-20T10:00:00+00:00")
    learner_store(isolated_home / "bertdrill.db", count=20, days=60)
    chart = foreign(tmp_path / "workload.svg", b"<svg>my drawing</svg>\n")
    result = cli("stats", "--workload", "--chart", str(chart))
    assert result.exit_code == 1 and "Simulating" not in result.stderr  # before the year's simulation
    assert result.stderr == (f"Error: {chart} exists and is not a file bertdrill wrote; use --force to replace it, "
                             "or --chart to choose another file\n")
    assert chart.read_bytes() == b"<svg>my drawing</svg>\n"
    assert cli("stats", "--workload", "--chart", str(chart), "--force").exit_code == 0
    assert is_ours(chart) and chart.read_bytes().startswith(b"<!-- bertdrill 0.1.0 #")
    assert cli("stats", "--workload", "--chart", str(chart)).exit_code == 0


def test_practice_start_replaces_only_its_starter_as_written(cli, tmp_path, lesson):
    out = foreign(tmp_path / "solution.py", b"print('my own work')\n")
    refused(cli("practice", "start", "-f", str(lesson), "-o", str(out)), out, b"print('my own work')\n")
    assert cli("practice", "start", "-f", str(lesson), "-o", str(out), "--force").exit_code == 0
    starter = out.read_bytes()
    assert starter.startswith(b"# bertdrill 0.1.0 starter #") and is_ours(out)
    assert cli("practice", "start", "-f", str(lesson), "-o", str(out), "--lang", "tr").exit_code == 0  # untouched
    written = out.read_bytes() + b"x = 1\n"
    out.write_bytes(written)
    refused(cli("practice", "start", "-f", str(lesson), "-o", str(out)), out, written)


def test_bertdrills_own_files_in_its_folders_need_no_force(tmp_path):
    """The lesson cache and the login are bertdrill's in folders of its own: the writer replaces them as they are."""
    from bertdrill.cli.base import lesson_cache

    cache = lesson_cache()
    entry = foreign(tmp_path / "entry.json")
    cache.write(entry, b"new entry")
    assert entry.read_bytes() == b"new entry"


def test_the_roster_is_an_input_even_with_force(cli, tmp_path, lesson):
    roster = foreign(tmp_path / "roster.csv", b"name\nAy\xc5\x9fe\nBurak\n")
    result = cli("sheet", str(lesson), "-o", str(roster), "--format", "md", "--students", str(roster), "--force")
    assert result.exit_code == 1
    assert result.stderr == f"Error: cannot write {roster}: it is the roster {roster}, which this command reads; " \
                            "write somewhere else\n"
    assert roster.read_bytes() == b"name\nAy\xc5\x9fe\nBurak\n"


@requires_chromium
def test_a_browser_prints_the_marked_html_sheet_as_the_unmarked_one(tmp_path, lesson):
    """The mark's comment before <!DOCTYPE html> leaves the page in standards mode, and its print the same."""
    from chromium import dom, pdf_pages, print_pdf

    from bertdrill.adapters.export.sheets import html
    from bertdrill.adapters.export.sheets.model import build_sheet
    from bertdrill.adapters.lessons import read_lesson

    page = html.render(build_sheet([read_lesson(lesson)], language="en", seed=7, versions=1), keys=False)
    marked = seal(Mark.HTML, page.encode()).decode()
    # The sheet's policy forbids scripts: a copy without it reports the mode its document was parsed in.
    probe = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", marked).replace(
        "</body>", "<script>document.body.dataset.mode = document.compatMode;</script></body>")
    assert 'data-mode="CSS1Compat"' in dom(probe)  # standards mode: BackCompat would be quirks
    assert pdf_pages(print_pdf(marked, tmp_path / "marked.pdf")) == pdf_pages(print_pdf(page, tmp_path / "plain.pdf"))


def test_a_link_is_judged_by_the_file_it_points_to(cli, tmp_path, lesson):
    real = foreign(tmp_path / "essay.md")
    link = tmp_path / "quiz.md"
    link.symlink_to(real)
    result = cli("sheet", str(lesson), "-o", str(link), "--key", "none")
    assert result.exit_code == 1 and REFUSED in result.stderr and real.read_bytes() == FOREIGN
    real.write_bytes(b"")  # now nothing to lose: replaced through the link, which stays a link
    assert cli("sheet", str(lesson), "-o", str(link), "--key", "none").exit_code == 0
    assert link.is_symlink() and is_ours(real) and real.read_bytes().startswith(b"<!-- bertdrill ")


def test_the_writer_replaces_only_ours_unless_told(tmp_path):
    from bertdrill.adapters.export.files import Replace, WriteError, write_atomic

    path = foreign(tmp_path / "notes.md")
    with pytest.raises(WriteError, match="notes.md exists and is not a file bertdrill wrote"):
        write_atomic(path, seal(Mark.MARKDOWN, b"# Quiz\n"), replace=Replace.OURS)
    assert path.read_bytes() == FOREIGN and sorted(tmp_path.iterdir()) == [path]
    write_atomic(path, seal(Mark.MARKDOWN, b"# Quiz\n"), replace=Replace.ANY)
    write_atomic(path, seal(Mark.MARKDOWN, b"# Quiz 2\n"), replace=Replace.OURS)  # ours now
    assert path.read_bytes().endswith(b"# Quiz 2\n")
    assert Replace.forced(True) is Replace.ANY and Replace.forced(False) is Replace.OURS
