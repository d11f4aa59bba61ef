"""The bad-input corpus (tests/corpus/): hostile answers, hostile lesson text, broken databases.

Each case asserts what a person sees (a clear message, or the text shown as it is), the exit
code, and that nothing was lost (the database's answers, or the file's bytes).

- ``corpus/answers/``: one answer line each (escape sequences, control characters, NUL, bytes
  that are not UTF-8, right-to-left and zero-width characters, a carriage return, markup), fed
  to a scripted review; plus generated ones: 1 MB lines and a stream of random bytes.
- ``corpus/lessons/hostile-markup.toml``: a valid lesson whose text looks like rich markup,
  HTML, GIFT and Markdown, with bidirectional and zero-width characters and trailing
  backslashes, through ``check``, ``cards``, ``params``, ``review`` and every exporter
  (sheets as HTML, Markdown and GIFT, read back with a parser; ``export anki``, imported and
  rendered by Anki's own engine). The PDF sheet is left to test_sheets.py (WeasyPrint is slow).
- ``corpus/lessons/control-characters.toml``: control characters in lesson text, refused
  by the parser with their lines.
- ``corpus/databases/``: not a database, a truncated one, zero bytes, another program's
  SQLite file; with made-on-the-spot cases: read-only, a folder, an exclusive lock held by
  another process, a folder that cannot be created.

The broken lessons of the lesson issue are in tests/lessons/broken/ (test_lesson.py) and
hypothesis fuzzes the parser in test_lesson_fuzz.py.
"""

from __future__ import annotations

import hashlib
import html
import json
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import date
from html.parser import HTMLParser
from pathlib import Path

import gift_parser
import pytest
from files import make_read_only
from review_log import audit, start_review
from timing import cpu_seconds

from bertdrill.adapters.export.anki import NUMBER_SCRIPT
from bertdrill.adapters.store import Store
from bertdrill.adapters.store.migrations import SCHEMA_VERSION
from bertdrill.core.cards import compile_lesson
from bertdrill.core.lesson import parse

CORPUS = Path(__file__).parent / "corpus"
HOSTILE = CORPUS / "lessons" / "hostile-markup.toml"
CONTROLS = CORPUS / "lessons" / "control-characters.toml"
NOW = "2025-03-03T09:00:00+03:00"
# What must never reach a terminal: C0 controls but newline, DEL, C1 controls.
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")

PICK = """\
[lesson]
id = "pick"
languages = ["en", "tr"]
title = { en = "Pick", tr = "Seç" }

[[item]]
id = "second"
kind = "choice"
prompt = { en = "Which letter comes second?", tr = "İkinci harf hangisi?" }
options = ["a", "b", "c"]
answer = 2

[[item]]
id = "word"
kind = "fact"
question = { en = "Say a word.", tr = "Bir kelime söyle." }
answer = { en = "Word.", tr = "Kelime." }
"""


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)


@pytest.fixture
def pick(tmp_path) -> Path:
    path: Path = tmp_path / "pick.toml"
    path.write_text(PICK, encoding="utf-8")
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def saved(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("Saved:")]


# --------------------------------------------------------------------------- hostile answers

# file -> (what is stored and echoed, whether it is the right answer "b")
ANSWERS = {
    "ansi-escapes.txt": ("b", True),  # sequences go whole: no "[31m" left behind
    "carriage-return.txt": ("wrong b", False),  # a line break inside a line is a space
    "control-characters.txt": ("b", True),
    "markup.txt": ("[bold]b[/bold] :smile: <script>x</script>", False),  # shown and stored as typed
    "nul.bin": ("b", True),
    "right-to-left.txt": ("b", True),  # invisible marks would make "b" not "b"
    "undecodable.bin": ("\ufffd\ufffd\ufffd(b\ufffd\ufffd\ufffd\ufffd", False),  # each bad byte a U+FFFD
    "zero-width.txt": ("b", True),
}


def test_every_answer_in_the_corpus_has_an_expectation():
    assert sorted(path.name for path in (CORPUS / "answers").iterdir()) == sorted(ANSWERS)


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_hostile_answer(cli, pick, name):
    typed, correct = ANSWERS[name]
    line = (CORPUS / "answers" / name).read_bytes()
    result = cli("review", "--file", str(pick), input=line + b"\n:quit\n")  # Enter accepts the suggested grade
    assert result.exit_code == 0 and result.stderr == ""
    assert not RAW_CONTROL.search(result.stdout), "a control character reached the terminal"
    verdict = "✓ Correct" if correct else "✗"
    assert f"Your answer: {typed}\n{verdict}" in result.stdout
    assert len(saved(result.stdout)) == 1
    answers = Store.open().answers()
    assert [(a.typed, a.grade) for a in answers] == [(typed, 4 if correct else 1)]


@pytest.mark.parametrize("line, shown", [
    (b"b" + b"x" * 1_000_000 + b"\n", "b" + "x" * 199 + "…"),
    ("€".encode() * 400_000 + b"\n", "€" * 200 + "…"),  # 1.2 MB, cut in the middle of a character
], ids=["ascii", "multibyte"])
def test_a_one_megabyte_answer_is_cut_quickly_and_stored_capped(cli, pick, line, shown):
    results = []
    assert cpu_seconds(lambda: results.append(cli("review", "--file", str(pick), input=line + b"\n:quit\n"))) < 10
    [result] = results
    assert result.exit_code == 0 and result.stderr == ""
    assert f"Your answer: {shown}  (line cut to 4,096 bytes)\n✗" in result.stdout
    assert len(result.stdout) < 10_000
    typed = Store.open().answers()[0].typed
    assert typed is not None
    assert len(typed) == 1000 and typed.startswith(shown[:-1]) and typed.encode("utf-8")


def test_a_one_megabyte_line_then_the_end_of_input(cli, pick):
    result = cli("review", "--file", str(pick), input=b"y" * 1_000_000)
    assert result.exit_code == 0 and result.stderr == ""
    assert "  (line cut to 4,096 bytes)\n✗" in result.stdout and len(result.stdout) < 10_000
    assert result.stdout.endswith("Session over: 0 answered, 0 correct, 0 s. Due tomorrow: 0. Left for later: 2.\n")
    assert Store.open().answers() == []  # no grade came: nothing was acknowledged, nothing stored


def random_stream(seed: int, size: int) -> bytes:
    """Random bytes with a newline now and then, so there are lines to read."""
    rng = random.Random(seed)
    chunks: list[bytes] = []
    while sum(map(len, chunks)) < size:
        chunks.append(rng.randbytes(rng.randint(0, 40)) + b"\n")
        if rng.random() < 0.5:
            chunks.append(rng.choice([b"4\n", b"5\n", b"\n", b"2\n", b":undo\n", b":bury\n"]))
    return b"".join(chunks)


def test_a_stream_of_random_bytes_through_a_real_pipe(tmp_path):
    """A real process: whatever arrives, every line is an answer, a grade or a command, and
    every acknowledged answer is in the database once, its schedule as SM-2 says."""
    db = tmp_path / "random.db"
    corpus = b"".join((CORPUS / "answers" / name).read_bytes() + b"\n" for name in sorted(ANSWERS))
    process = start_review(db, NOW, "--new", "30")
    out, err = process.communicate(random_stream(11, 64_000) + corpus, timeout=120)
    assert process.returncode == 0 and err == b"", err.decode(errors="replace")
    text = out.decode("utf-8")  # valid UTF-8 whatever came in
    assert not RAW_CONTROL.search(text)
    assert audit(db) == answers_standing(text) > 10


def answers_standing(transcript: str) -> int:
    """Answers a transcript acknowledged and did not take back: each "Undone:" takes back the
    latest answer, bury or suspend still standing."""
    steps: list[str] = []
    for line in transcript.splitlines():
        if line.startswith("Saved:"):
            steps.append("answer")
        elif line.startswith(("Buried ", "Suspended ")):
            steps.append("flag")
        elif line.startswith("Undone: "):
            steps.pop()
    return steps.count("answer")


# --------------------------------------------------------------------------- hostile lesson text


@pytest.fixture(scope="module")
def hostile_cards():
    return compile_lesson(parse(HOSTILE.read_text(encoding="utf-8"), str(HOSTILE)))


FRAGMENTS = ["[bold]x[/bold]", "[/]", "[link=https://example.com]click[/link]", ":thumbs_up:",
             "<script>alert(1)</script>", "{ } = ~ #", "\u202eabc\u202c", "zero\u200bwidth\u200d joins\ufeff",
             "[italic]this[/italic]", "[red]red[/red]", "<b>bold</b>", "#hash {brace}", "[blink]Small[/blink]"]


def test_check_passes_the_hostile_lesson(cli):
    result = cli("check", str(HOSTILE))
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.endswith("6 items, 7 cards, 3 numbers verified; languages en, tr\n")


def test_cards_json_carries_every_text_exactly(cli, hostile_cards):
    for language in ("en", "tr"):
        result = cli("cards", "--file", str(HOSTILE), "--lang", language, "--json")
        assert result.exit_code == 0
        shown = json.loads(result.stdout)
        assert [(c["id"], c["question"], c["answer"], c["explanation"]) for c in shown] == [
            (card.id, card.question(language), card.answer[language], card.explanation.get(language, ""))
            for card in hostile_cards]
        choice = next(c for c in shown if c["kind"] == "choice")
        assert choice["options"] == list(next(card for card in hostile_cards if card.kind == "choice").options[language])


def test_cards_table_shows_markup_as_text(cli, monkeypatch):
    from bertdrill.cli import base

    console = base.out
    assert isinstance(console, base.LazyConsole)  # typed as the Console it stands for
    monkeypatch.setattr(console.get(), "width", 1000)  # no folding inside a cell
    result = cli("cards", "--file", str(HOSTILE))
    assert result.exit_code == 0
    for fragment in ["[bold]x[/bold] [/] [link=https://example.com]click[/link] :thumbs_up: print?",
                     "Exactly [bold]x[/bold], { } = ~ # <script>alert(1)</script> \\\u2060",
                     "[bold][blink]Small[/blink] {set} #1[/bold]: a + b {=~#}?",
                     "[bold]a[/bold] -> {=} → ?", "\u202eabc\u202c"]:
        assert fragment in result.stdout
    assert "👍" not in result.stdout and "\\\\" not in result.stdout  # no emoji, the backslash shown once


def test_params_title_shows_markup_as_text(cli):
    result = cli("params", "--file", str(HOSTILE), "--lang", "tr")
    assert result.exit_code == 0
    assert result.stdout.startswith("[blink]Small[/blink] {set} #1: [red]Kırmızı[/red] başlık \u202eters\u202c İı\n")


def test_review_shows_every_hostile_text_as_it_is(cli):
    result = cli("review", "--file", str(HOSTILE), "--new", "20", input="5\n5\nb\n\n" + "4\n" * 12)
    assert result.exit_code == 0 and result.stderr == ""
    for fragment in FRAGMENTS:
        assert fragment in result.stdout, fragment
    assert "  2  b)  =equals ~tilde\n" in result.stdout
    assert "Answer: Exactly [bold]x[/bold], { } = ~ # <script>alert(1)</script> \\\u2060\n" in result.stdout
    assert "Why: Markup in a lesson is text: [italic]this[/italic] too.\n" in result.stdout
    assert len(saved(result.stdout)) == len(Store.open().answers())


class TextOf(HTMLParser):
    """The text a browser shows, and the elements it builds."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.tags: set[str] = set()
        self.skip = 0
        self.feed(html)
        self.text = "".join(self.parts)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.skip += tag == "style"

    def handle_endtag(self, tag):
        self.skip -= tag == "style"

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def sheet(cli, tmp_path, suffix: str) -> str:
    path: Path = tmp_path / f"quiz.{suffix}"
    key = ["--key", "pages"] if suffix in ("html", "md") else []  # the key's texts too, in the one file read back
    result = cli("sheet", str(HOSTILE), "-o", str(path), "--seed", "3", "--kinds", "fact,choice,blank,numeric,match",
                 *key)
    assert result.exit_code == 0, result.stderr
    return path.read_text(encoding="utf-8")


def test_html_sheet_shows_the_text_and_builds_no_element_from_it(cli, tmp_path):
    page = TextOf(sheet(cli, tmp_path, "html"))
    assert not page.tags & {"script", "i", "u", "a", "img"}  # the sheet's own <b> labels aside
    for fragment in FRAGMENTS:
        assert fragment in page.text, fragment


def test_markdown_sheet_renders_back_to_the_text(cli, tmp_path):
    from markdown_it import MarkdownIt

    rendered = TextOf(MarkdownIt("commonmark").enable("table").render(sheet(cli, tmp_path, "md")))
    assert not rendered.tags & {"script", "b", "i", "u", "a", "img"}
    for fragment in FRAGMENTS:
        assert fragment in rendered.text, fragment


def test_gift_reads_back_to_the_text(cli, tmp_path, hostile_cards):
    questions = gift_parser.read(sheet(cli, tmp_path, "gift"))
    texts = "\n".join(q.text.text for q in questions) + "\n".join(
        answer for q in questions for answer in q.answers + [t.text for t in q.subquestions] + q.subanswers)
    assert "<script" not in texts.replace("&lt;script", "")  # html-format texts carry it escaped
    by_name = {q.name: q for q in questions}
    choice = by_name["hostile-markup/markup-choice"]
    assert choice.qtype == "multichoice"
    assert [html.unescape(a) for a in choice.answers] == [  # HTML-format answers, as Moodle shows them
        "[red]red[/red]", "=equals ~tilde", "#hash {brace}", "<b>bold</b>", "\u202ertl\u202c"]
    assert choice.fractions[1] == 1.0 and choice.fractions.count(1.0) == 1


def test_anki_export_shows_the_text_in_anki(cli, tmp_path, hostile_cards):
    """Exported, imported by Anki's own engine, rendered: every card shows the lesson's text."""
    Collection = pytest.importorskip("anki.collection").Collection
    from anki.import_export_pb2 import (
        ImportAnkiPackageOptions,
        ImportAnkiPackageRequest,
    )

    package = tmp_path / "hostile.apkg"
    result = cli("export", "anki", str(HOSTILE), "-o", str(package), "--lang", "all")
    assert result.exit_code == 0, result.stderr
    assert "  bertdrill::[bold]Loud[/bold] title :smile: <script>alert('t')</script>::English\n" in result.stdout
    collection = Collection(str(tmp_path / "collection.anki2"))
    try:
        request = ImportAnkiPackageRequest(package_path=str(package), options=ImportAnkiPackageOptions())
        collection.import_anki_package(request)
        shown = []
        for card_id in collection.find_cards(""):
            card = collection.get_card(card_id)
            for side in (card.question(), card.answer()):
                # The numeric cards' own script is the only one (bertdrill's, in the template).
                page = TextOf(side.replace(f"<script>\n{NUMBER_SCRIPT}</script>", ""))
                assert not page.tags & {"script", "img", "a", "u"}
                shown.append(" ".join(page.text.split()))
    finally:
        collection.close()
    text = "\n".join(shown)
    assert len(shown) == 2 * 2 * len(hostile_cards)  # both sides, both languages
    for fragment in FRAGMENTS:
        assert " ".join(fragment.split()) in text, fragment


def test_control_characters_in_a_lesson_are_refused_with_their_lines(cli, tmp_path):
    expected = [
        (9, "title of parameter set 'small' holds the control character U+001B"),
        (18, "question (en) holds the control character U+001B"),
        (24, "question (tr) holds the control character U+0007"),
        (31, "an option (en) holds the control character U+0000"),
        (39, "an accepted answer holds the control character U+009B"),
    ]
    out = tmp_path / "quiz.html"
    for command in (["check", str(CONTROLS)], ["cards", "--file", str(CONTROLS)],
                    ["review", "--file", str(CONTROLS)], ["sheet", str(CONTROLS), "-o", str(out)]):
        result = cli(*command)
        assert result.exit_code == 1, command
        lines = result.stderr.splitlines()
        assert [(int(line.split(":")[1]), line.split(": ", 1)[1].split(",")[0]) for line in lines] == expected
        assert all(line.endswith("which would act instead of being shown in a terminal or a document; remove it")
                   for line in lines)
        assert not RAW_CONTROL.search(result.stderr) and "Card 1" not in result.stdout
    assert not out.exists()


# --------------------------------------------------------------------------- broken databases


def run_both(cli, db: str):
    """`review` (answering one card) and `status` on a database; both results."""
    return cli("review", "--db", db, "--new", "1", input="5\n"), cli("status", "--db", db)


@pytest.mark.parametrize("name, message", [
    ("not-a-database.db", "is not a bertdrill database (SQLite says: file is not a database)"),
    ("truncated.db", "is damaged (SQLite says: database disk image is malformed); restore it from a backup"),
    ("other-program.db", "is an SQLite database but not a bertdrill one; use another file"),
    # issue 11, item 2: a version number or a meta(key, value) table is no proof; created_by = 'bertdrill ...' is
    ("foreign-version-1.db", "is an SQLite database but not a bertdrill one; use another file"),
    ("foreign-version-1-meta.db", "is an SQLite database but not a bertdrill one; use another file"),
    ("foreign-version-1-meta-wal.db", "is an SQLite database but not a bertdrill one; use another file"),
    ("foreign-version-minus-1.db", "is an SQLite database but not a bertdrill one; use another file"),
    ("foreign-version-2-created-by.db", "is an SQLite database but not a bertdrill one; use another file"),
])
def test_a_broken_database_is_refused_and_left_as_it_was(cli, tmp_path, name, message):
    path = tmp_path / name
    shutil.copy(CORPUS / "databases" / name, path)
    before = digest(path)
    for result in run_both(cli, str(path)):
        assert result.exit_code == 1
        assert result.stderr == f"Error: {path} {message}\n"
        assert result.stdout == ""
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no -wal or -shm left behind


def test_a_zero_byte_file_is_an_empty_database_and_becomes_a_review_database(cli, tmp_path):
    path = tmp_path / "empty.db"
    shutil.copy(CORPUS / "databases" / "zero-bytes.db", path)
    review, status = run_both(cli, str(path))
    assert review.exit_code == 0 and len(saved(review.stdout)) == 1
    assert status.exit_code == 0 and "Answered today  1" in status.stdout
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_a_folder_as_database(cli, tmp_path):
    for result in run_both(cli, str(tmp_path)):
        assert result.exit_code == 1 and result.stderr == f"Error: {tmp_path} is a folder, not a database file\n"


def test_a_database_whose_folder_cannot_be_created(cli, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for result in run_both(cli, str(blocker / "bertdrill.db")):
        assert result.exit_code == 1
        assert result.stderr.startswith(f"Error: cannot create the folder for the database {blocker / 'bertdrill.db'}:")


def test_a_read_only_database_keeps_its_answers(cli, tmp_path):
    path = tmp_path / "ro.db"
    cli("review", "--db", str(path), "--new", "2", input="5\n109482240\n4\n")  # a fact, then the total
    Store.open(str(path)).close()  # the WAL folded in: the file alone is the database
    before = digest(path)
    undo = make_read_only(path)
    targets = [str(path)] if undo else []
    targets.append(f"sqlite:///file:{path}?mode=ro&uri=true")  # read-only however the file is
    try:
        for target in targets:
            review, status = run_both(cli, target)
            assert review.exit_code == 1
            assert review.stderr.startswith(f"Error: {path} is read-only; bertdrill writes every answer to it.")
            assert "Card 1" not in review.stdout
            assert status.exit_code == 0, status.stderr  # a reader never writes: a read-only copy (a backup) is fine
            assert "Learned         2 of" in status.stdout
    finally:
        if undo:
            undo()
    assert digest(path) == before
    assert [a.grade for a in Store.open(str(path)).answers()] == [5, 4]


HOLD_EXCLUSIVE = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
connection.execute("ROLLBACK")
"""


def test_a_database_locked_by_another_process_loses_nothing(cli, tmp_path, monkeypatch):
    path = tmp_path / "busy.db"
    cli("review", "--db", str(path), "--new", "2", input="5\n109482240\n4\n")  # a fact, then the total
    monkeypatch.setenv("BERTDRILL_LOCK_TIMEOUT", "0.5")
    holder = subprocess.Popen([sys.executable, "-c", HOLD_EXCLUSIVE, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    try:
        assert holder.stdout.readline() == "locked\n"
        began = time.monotonic()
        review, status = run_both(cli, str(path))
        assert review.exit_code == 1
        assert review.stderr == (f"Error: {path} is locked by another program (waited 0.5 s); "
                                 "close it (another bertdrill?) and try again\n")
        assert "Card 1" not in review.stdout
        assert status.exit_code == 0, status.stderr  # a reader never writes: a writer's lock does not stop it
        assert "Learned         2 of" in status.stdout
        assert time.monotonic() - began < 10
    finally:
        holder.communicate("\n", timeout=10)
    assert [a.grade for a in Store.open(str(path)).answers()] == [5, 4]
    review = cli("review", "--db", str(path), "--new", "3", input="5\n")  # the lock gone, it goes on
    assert review.exit_code == 0 and "Card 1 of 1 · 0 review · 1 new" in review.stdout


# --------------------------------------------------------------------------- refused lessons (issue 11)

REFUSED = CORPUS / "lessons" / "refused"
# file -> (the line named, the start of the message). Each was a hang, a crash or a silent wrong ✓.
REFUSED_LESSONS = {
    "blank-answer-fraction-tower": (42, "item 'gap': result too precise (an exact fraction finer than 1/10^60) in "),
    "claim-divides-by-zero": (68, "item 'claim': '1/0' divides by zero"),
    "claim-tiny-power": (68, "item 'claim': result too precise (an exact fraction finer than 1/10^60) in "),
    "claim-too-many-digits": (68, "item 'claim': a stated number has at most 30 digits, not 4,002"),
    "formula-fraction-tower": (23, "formula 'share': result too precise (an exact fraction finer than 1/10^60)"),
    # issue 11, item 5: a name is defined once (a formula `d` silently replaced the parameter `d` before)
    "name-twice-formula-as-parameter": (23, "formula 'd' has the name of a parameter (line 8): a name is defined once"),
    "name-twice-set-as-formula": (23, "'set' is bertdrill's own name ({set} in a text is the set's title)"),
    "name-twice-set-as-parameter": (11, "'set' is bertdrill's own name ({set} in a text is the set's title)"),
    "name-twice-pair-id": (58, "item 'table': duplicate pair id 'width'"),
    "name-twice-language": (3, "a language is listed twice"),
    # issue 11, item 6: ids, names and language codes are matched whole: a trailing newline is refused
    "newline-formula-name": (22, "formula name 'total\\n' is not a valid name"),
    "newline-item-id": (38, "item id 'gap\\n' must be lower-case letters, digits, '-' or '_' (at most 64)"),
    "newline-language": (3, "language 'tr\\n' is not a language code such as \"en\""),
    "newline-lesson-id": (2, "lesson id 'mini\\n' must be lower-case letters, digits, '-' or '_' (at most 64)"),
    "newline-pair-id": (58, "item 'table': pair id 'width\\n' must be lower-case letters, digits, '-' or '_'"),
    "newline-parameter": (14, "parameter name 'd\\n' is not a valid name"),
    "newline-set-name": (12, "parameter set name 'big\\n' must be lower-case letters, digits, '-' or '_'"),
    "toml-nested-arrays": (5, "TOML nested too deeply: arrays or inline tables inside one another"),  # RecursionError
    "toml-nested-tables": (5, "TOML nested too deeply: arrays or inline tables inside one another"),
    "toml-number-too-long": (8, "a number too long to read (thousands of digits)"),  # ValueError from int()
}


def test_every_refused_lesson_has_an_expectation():
    assert sorted(path.stem for path in REFUSED.glob("*.toml")) == sorted(REFUSED_LESSONS)


@pytest.mark.parametrize("name", sorted(REFUSED_LESSONS))
def test_a_refused_lesson_is_named_with_its_line_at_once(cli, name):
    path = REFUSED / f"{name}.toml"
    line, message = REFUSED_LESSONS[name]
    results = []
    assert cpu_seconds(lambda: results.append(cli("check", str(path)))) < 1
    [result] = results
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith(f"{path}:{line}: {message}"), result.stderr
    assert len(result.stderr.splitlines()) == 1


# --------------------------------------------------------------------------- numbers with decimals (issue 11)

DECIMALS = CORPUS / "lessons" / "decimals.toml"


def test_decimals_are_shown_with_the_languages_mark(cli):
    cards = {card.key: card for card in compile_lesson(parse(DECIMALS.read_text(encoding="utf-8"), str(DECIMALS)))}
    assert cards["half@big"].answer == {"en": "3,072,000.5", "tr": "3.072.000,5"}  # not 3.072.000.5
    assert cards["share@big"].answer == {"en": "0.3998438110113237", "tr": "0,3998438110113237"}
    assert cards["half@big"].prompt["tr"] == "Yarım? 3.072.000,5"
    shown = json.loads(cli("cards", "--file", str(DECIMALS), "--lang", "tr", "--json").stdout)
    assert [card["answer"] for card in shown] == ["3.072.000,5", "0,3998438110113237", "0,3998438110113237",
                                                  "3.072.000,5"]


@pytest.mark.parametrize("path", [DECIMALS, HOSTILE, Path(__file__).parent.parent / "decks" / "bert-basics.toml"],
                         ids=lambda path: path.stem)
def test_every_number_card_takes_its_answer_as_shown(path):
    """A value with no end of decimals is shown rounded; typing exactly that is right, in every language."""
    from bertdrill.core.grading import grade

    lesson = parse(path.read_text(encoding="utf-8"), str(path))
    numbers = [card for card in compile_lesson(lesson) if getattr(card, "value", None) is not None]
    assert numbers or path == HOSTILE
    for card in numbers:
        for language in lesson.languages:
            verdict = grade(card, card.answer[language], language)
            assert (verdict.correct, verdict.suggested, verdict.feedback) == (True, 4, "Correct"), (card.key, language)


# --------------------------------------------------------------------------- clocks and database URLs (issue 11)

@pytest.mark.parametrize("now", ["0001-01-01T00:00", "0001-01-01T09:00+03:00", "9999-12-31T23:00",
                                 "9999-12-31T09:00-05:00", "1969-12-31T23:59", "9001-01-01T00:00"])
@pytest.mark.parametrize("command", ["review", "status", "stats"])
def test_a_clock_at_the_ends_of_the_calendar_is_refused(cli, monkeypatch, now, command):
    monkeypatch.setenv("BERTDRILL_NOW", now)
    result = cli(command, input="4\n")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Error: BERTDRILL_NOW={now!r} is outside the years 1970 to 9000\n"


def test_a_due_date_past_the_calendar_is_an_error_not_a_crash():
    from bertdrill.core.errors import BertdrillError
    from bertdrill.core.scheduling import sm2
    from bertdrill.core.scheduling.state import Schedule

    late = Schedule(repetitions=9, ef100=300, interval=400_000, due=date(9000, 1, 1), lapses=0)
    with pytest.raises(BertdrillError, match=r"due date 9000-01-01 \+ 1200000 days is past 9999-12-31"):
        sm2.review(late, 5, today=date(9000, 1, 1))


URLS = [line.split("\t") for line in (CORPUS / "databases" / "urls.tsv").read_text(encoding="utf-8").splitlines()
        if not line.startswith("#")]


@pytest.mark.parametrize("url, message", URLS, ids=[url for url, _ in URLS])
@pytest.mark.parametrize("command", ["review", "status"])
def test_a_database_url_that_cannot_keep_answers_is_refused(cli, tmp_path, monkeypatch, url, message, command):
    monkeypatch.chdir(tmp_path)
    result = cli(command, "--db", url, input="4\n")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Error: {url}{message}\n"
    assert list(tmp_path.iterdir()) == []  # nothing was created


def test_mode_ro_is_honoured_for_readers_and_refused_for_a_review(cli, tmp_path):
    path = tmp_path / "kept.db"
    assert cli("review", "--db", str(path), "--new", "1", input="5\n").exit_code == 0
    Store.open(str(path)).close()
    before = digest(path)
    url = f"sqlite:///{path}?mode=ro"
    status = cli("status", "--db", url, "--json")
    assert status.exit_code == 0 and status.stderr == ""  # no SAWarning: the option is SQLite's own, not ignored
    assert json.loads(status.stdout)["database"] == str(path)
    review = cli("review", "--db", url, input="4\n")
    assert review.exit_code == 1 and "Card 1" not in review.stdout
    assert review.stderr.startswith(f"Error: {path} is read-only; bertdrill writes every answer to it.")
    assert digest(path) == before
