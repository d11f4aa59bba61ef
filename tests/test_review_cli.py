"""`bertdrill review` and `bertdrill status`, end to end: scripted sessions, bad input, crashes."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from datetime import date, timedelta
from pathlib import Path

import pytest
from timing import cpu_seconds

from bertdrill.adapters.store import Store
from bertdrill.adapters.store.migrations import SCHEMA_VERSION
from bertdrill.cli.review import command_in
from bertdrill.core.scheduling.state import AnswerKind, Schedule

FIXTURES = Path(__file__).parent / "fixtures"
MONDAY = "2025-03-03T09:00:00+03:00"
DAY = date(2025, 3, 3)

MINI = """\
[lesson]
id = "mini"
languages = ["en", "tr"]
title = { en = "Mini", tr = "Mini" }

[params.small]
title = "Small"
d = 8
n = 2

[formulas]
width = "d * n"
attention = "4 * (d * d + d)"

[[item]]
id = "markup"
kind = "fact"
question = { en = "What does [bold]x[/bold] print?", tr = "[bold]x[/bold] ne yazar?" }
answer = { en = "The text [bold]x[/bold], as is.", tr = "Metni olduğu gibi: [bold]x[/bold]." }

[[item]]
id = "pick"
kind = "choice"
prompt = { en = "Which letter comes second?", tr = "İkinci harf hangisi?" }
options = { en = ["a", "b", "c"], tr = ["a", "b", "c"] }
answer = 2
explanation = { en = "a, then b.", tr = "Önce a, sonra b." }

[[item]]
id = "width"
kind = "numeric"
prompt = { en = "How wide is {set}?", tr = "{set} ne kadar geniş?" }
formula = "width"
params = ["small"]

[[item]]
id = "projections"
kind = "blank"
prompt = { en = "Count the projections.", tr = "Projeksiyonları say." }
text = "attention = ____ * (d * d + d)"
answer = "4"
checks = "attention"

[[item]]
id = "table"
kind = "match"
prompt = { en = "Match the settings.", tr = "Ayarları eşleştir." }
params = "small"
pairs = [
    { id = "layers", term = { en = "layers", tr = "katmanlar" }, value = "n" },
    { id = "width", term = { en = "model width", tr = "model genişliği" }, value = "d" },
]
"""


@pytest.fixture(autouse=True)
def monday(monkeypatch):
    monkeypatch.setenv("BERTDRILL_NOW", MONDAY)


@pytest.fixture
def mini(tmp_path) -> Path:
    path: Path = tmp_path / "mini.toml"
    path.write_text(MINI, encoding="utf-8")
    return path


def store() -> Store:
    return Store.open()


def saved(result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("Saved:")]


# --------------------------------------------------------------------------- a scripted session


def test_scripted_session_transcript(cli):
    """Two new cards (a fact, then a total: new cards alternate kinds), a wrong total diagnosed from the
    lesson's formulas, the interval preview before each grade, an undo, and the right total."""
    result = cli("review", "--new", "2", input="4\n4*(768*768+768)\n1\n:undo\n109,482,240\n\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == """\
Review: 2 cards (0 due, 0 to re-drill, 2 new).
Commands (whole lines): :undo :suspend :bury :quit
Grades: 0 blackout · 1 wrong · 2 wrong, but it felt familiar · 3 right, with effort · 4 right, after a pause · 5 right at once

Card 1 of 2 · 0 review · 2 new · 0 re-drill
bert-basics/bert-definition · fact · new
What is BERT?
Answer: A model made only of transformer encoder blocks, pre-trained on large amounts of text (Bidirectional Encoder Representations from Transformers, 2018).
Why: BERT is a bidirectional language understanding model based on transformers.
Comes back: 0–5 tomorrow
Grade 0-5: 4
Saved: grade 4 · next review tomorrow (2025-03-04).

Card 2 of 2 · 0 review · 1 new · 0 re-drill
bert-basics/total-params@bert-base · numeric · new
How many parameters does BERT-base have in total (embeddings + 12 layers + pooler), biases and LayerNorms included?
Your answer: 4*(768*768+768)
✗ Incorrect
  2,362,368 is one attention block of BERT-base, not the total.
Answer: 109,482,240
Why: embeddings + n × layer + pooler = (V + L + T)·d + 2d + n·(4(d² + d) + 2d + (2df + f + d) + 2d) + d² + d.
Comes back: 0–5 tomorrow
Grade 0-5, Enter = 1: 1
Saved: grade 1 · next review tomorrow (2025-03-04); back later in this session.

Card 3 of 3 · 0 review · 0 new · 1 re-drill
bert-basics/total-params@bert-base · numeric · re-drill
How many parameters does BERT-base have in total (embeddings + 12 layers + pooler), biases and LayerNorms included?
Your answer: :undo
Undone: bert-basics/total-params@bert-base is back as it was.

Card 2 of 2 · 0 review · 1 new · 0 re-drill
bert-basics/total-params@bert-base · numeric · new
How many parameters does BERT-base have in total (embeddings + 12 layers + pooler), biases and LayerNorms included?
Your answer: 109,482,240
✓ Correct
Answer: 109,482,240
Why: embeddings + n × layer + pooler = (V + L + T)·d + 2d + n·(4(d² + d) + 2d + (2df + f + d) + 2d) + d² + d.
Comes back: 0–5 tomorrow
Grade 0-5, Enter = 4:\x20
Saved: grade 4 · next review tomorrow (2025-03-04).

Session over: 2 answered, 2 correct, 0 s. Due tomorrow: 2.
"""
    assert result.stderr == ""
    answers = store().answers()
    assert [(a.card_id.split("/")[1], a.kind, a.grade) for a in answers] == [
        ("bert-definition", "new", 4), ("total-params@bert-base", "new", 4)]


def test_every_kind_asked_its_own_way(cli, mini):
    result = cli("review", "--file", str(mini), "--no-bury-siblings", input="5\nb\n\n16\n\n4*d*d + 4*d\n\n2\n3\n8\n\n")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "What does [bold]x[/bold] print?" in out and "The text [bold]x[/bold], as is." in out  # escaped
    assert "  1  a)  a\n  2  b)  b\n  3  c)  c\n" in out
    assert ("Your answer: b\n✓ Correct\nAnswer: b\nWhy: a, then b.\nComes back: 0–5 tomorrow\n"
            "Grade 0-5, Enter = 4: \nSaved: grade 4") in out
    assert "attention = ____ * (d * d + d)\nYour answer: 4*d*d + 4*d\n✓ Correct" in out
    # a match card offers its table's values, sorted: the term, and the values to choose from
    assert "Match the settings.\nlayers → ?\n  1  a)  2\n  2  b)  8\nYour answer: 2\n✓ Correct" in out
    assert "Grade 0-5, Enter = 4: 3\nSaved: grade 3" in out
    assert "model width → ?\n  1  a)  2\n  2  b)  8\nYour answer: 8\n✓ Correct" in out
    assert [a.grade for a in store().answers()] == [5, 4, 4, 4, 3, 4]


def test_turkish_session_with_turkish_numbers(cli):
    result = cli("review", "--lang", "tr", "--new", "2", input="4\n109.482.240\n\n")  # a fact, then the total
    assert result.exit_code == 0, result.stderr
    assert "BERT nedir?" in result.stdout
    assert "BERT-base toplam kaç parametreye sahiptir (gömme + 12 katman + pooler), sapmalar ve LayerNorm'lar dahil?\nCevabın: 109.482.240\n✓ " \
        in result.stdout
    assert store().answers()[-1].typed == "109.482.240"


def test_a_wrong_answer_suggests_a_low_grade_and_enter_accepts_it(cli, mini):
    result = cli("review", "--file", str(mini), input="5\nc\n\n:quit\n")
    assert ("✗ Incorrect\nAnswer: b\nWhy: a, then b.\nComes back: 0–5 tomorrow\nGrade 0-5, Enter = 1: \n"
            "Saved: grade 1 · next review tomorrow") in result.stdout
    assert [a.grade for a in store().answers()] == [5, 1]


def test_the_learner_overrides_the_suggested_grade(cli, mini):
    result = cli("review", "--file", str(mini), input="5\nc\n3\n:quit\n")
    assert "Grade 0-5, Enter = 1: 3\nSaved: grade 3" in result.stdout
    assert [a.grade for a in store().answers()] == [5, 3]


def test_commands_are_whole_lines_so_answers_are_never_commands(cli, mini):
    result = cli("review", "--file", str(mini), input="5\nb\n\n:bury\n:suspend\n:q\n")
    assert result.exit_code == 0
    assert "Your answer: b\n✓ Correct" in result.stdout  # "b" answered the choice card, it did not bury it
    assert "Buried mini/width@small until tomorrow." in result.stdout
    assert "Suspended mini/projections: it will not be shown again" in result.stdout
    db = store()
    assert db.state("mini/width@small").buried_until == DAY + timedelta(days=1)
    assert db.state("mini/projections").suspended


def test_status_after_a_session(cli):
    # a fact graded 5, the total right (4), the choice wrong (2) and right in its re-drill (5)
    cli("review", "--new", "3", input="5\n109482240\n4\nc\n2\nd\n5\n")
    result = cli("status")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:7] == [
        "Study day 2025-03-03",
        "  Due now         0",
        "  New today       7 (of 29 not seen yet)",
        "  Learned         3 of 32 cards",
        "  Next due        tomorrow (2025-03-04)",
        "  Streak          1 day",
        "  Answered today  4",
    ]
    data = json.loads(cli("status", "--json").stdout)
    assert data == {"study_day": "2025-03-03", "due_now": 0, "new_today": 7, "new_unseen": 29, "learned": 3,
                    "cards": 32, "next_due": "2025-03-04", "streak": 1, "answered_today": 4,
                    "database": os.environ["BERTDRILL_DB"]}


def test_status_on_a_fresh_install_creates_nothing_surprising(cli, tmp_path):
    data = json.loads(cli("status", "--json").stdout)
    assert (data["due_now"], data["new_today"], data["learned"], data["next_due"], data["streak"]) == (0, 10, 0, None, 0)
    # a reader writes nothing (issue 23): neither the database nor its folder; the first review makes them
    assert not Path(os.environ["BERTDRILL_DB"]).exists() and not Path(os.environ["BERTDRILL_DB"]).parent.exists()


def test_nothing_to_review(cli):
    result = cli("review", "--new", "0")
    assert result.exit_code == 0
    assert result.stdout == "Nothing to review now.\n\nSession over: 0 answered, 0 correct, 0 s. Due tomorrow: 0.\n"
    # issue 21: with nothing due, review says when the next card is
    cli("review", "--new", "1", input="5\n")
    again = cli("review", "--new", "0")
    assert again.stdout.startswith("Nothing to review now. Next card due tomorrow (2025-03-04).\n")
    turkish = cli("review", "--new", "0", "--lang", "tr")
    assert turkish.stdout.startswith("Şu an tekrar edilecek kart yok. Sıradaki kartın zamanı: yarın (2025-03-04).")


@pytest.mark.parametrize("grades, intervals, ef100s", [
    ([5, 5, 5, 2, 4, 4, 5], [1, 6, 17, 1, 1, 6, 15], [260, 270, 280, 248, 248, 248, 258]),
    ([3, 3, 3, 3, 3, 3, 3, 3], [1, 6, 14, 30, 59, 107, 178, 271], [236, 222, 208, 194, 180, 166, 152, 138]),
    ([5, 4, 3, 2, 1, 0, 5, 5], [1, 6, 16, 1, 1, 1, 1, 6], [260, 260, 246, 214, 160, 130, 140, 150]),
])
def test_sm2_vectors_over_days_through_the_command(cli, monkeypatch, grades, intervals, ef100s):
    assert cli("scheduler", "--spread", "off").exit_code == 0  # SM-2's own intervals: no fuzz (test_spread_cli)
    day = DAY
    for number, (grade, interval, ef100) in enumerate(zip(grades, intervals, ef100s)):
        monkeypatch.setenv("BERTDRILL_NOW", f"{day.isoformat()}T08:30:00+03:00")
        redrill = "5\n" if grade < 4 else ""
        result = cli("review", "--new", "1" if number == 0 else "0", input=f"{grade}\n{redrill}")
        assert result.exit_code == 0 and len(saved(result)) == 1 + bool(redrill), result.stdout
        schedule = store().state("bert-basics/bert-definition").schedule
        assert (schedule.interval, schedule.ef100) == (interval, ef100)
        assert schedule.due == day + timedelta(days=interval)
        day = schedule.due
    assert len(store().answers()) == len(grades) + sum(grade < 4 for grade in grades)


# --------------------------------------------------------------------------- bad input


def test_empty_and_blank_answers(cli, mini):
    result = cli("review", "--file", str(mini), input="5\n\n\n   \t \n0\n:quit\n")
    assert result.stdout.count("✗ No answer") == 2
    assert "Grade 0-5, Enter = 0: \nSaved: grade 0" in result.stdout
    assert [a.grade for a in store().answers()] == [5, 0, 0]


def test_grades_outside_0_to_5_are_asked_again_and_each_line_is_consumed(cli):
    result = cli("review", "--new", "1", input="7\n-1\n4.5\nfive\n\n 3 \n:quit\n")
    assert result.exit_code == 0
    messages = [line for line in result.stdout.splitlines() if line.startswith("A grade is")]
    assert messages == [
        "A grade is a whole number from 0 to 5 (got '7').",
        "A grade is a whole number from 0 to 5 (got '-1').",
        "A grade is a whole number from 0 to 5 (got '4.5').",
        "A grade is a whole number from 0 to 5 (got 'five').",
        "A grade is a whole number from 0 to 5 (got an empty line).",
    ]
    assert [a.grade for a in store().answers()] == [3]


def test_a_one_megabyte_line_is_cut_and_does_not_hang(cli, mini):
    results = []
    assert cpu_seconds(lambda: results.append(
        cli("review", "--file", str(mini), input="5\n" + "7" * 1_000_000 + "\n\n:quit\n"))) < 10
    [result] = results
    assert result.exit_code == 0
    assert "…  (line cut to 4,096 bytes)\n✗" in result.stdout
    assert len(result.stdout) < 20_000
    typed = store().answers()[1].typed
    assert typed is not None
    assert typed == "7" * len(typed) and len(typed) <= 4096


def test_control_characters_and_escape_sequences_are_stripped(cli, mini):
    nasty = "\x1b[31m\x1b]0;pwned\x07b\x1b[0m\x08\x00\r"
    result = cli("review", "--file", str(mini), input=f"5\n{nasty}\n\n:quit\n")
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\x00" not in result.stdout
    assert "Your answer: b\n✓ Correct" in result.stdout
    assert store().answers()[1].typed == "b"


def test_undecodable_bytes_on_standard_input(cli, mini):
    result = cli("review", "--file", str(mini), input=b"\xff\xfe5\n5\n\xc3\x28b\n\n:quit\n")
    assert result.exit_code == 0, result.stderr
    assert "A grade is a whole number from 0 to 5 (got '\ufffd\ufffd5')." in result.stdout
    assert "Your answer: \ufffd(b\n✗" in result.stdout
    assert [a.grade for a in store().answers()] == [5, 1]


def test_end_of_input_quits_cleanly_with_the_summary(cli):
    result = cli("review", "--new", "3", input="4\n109482240\n5")  # the last line has no newline: still read
    assert result.exit_code == 0
    assert result.stdout.rstrip().endswith("Session over: 2 answered, 2 correct, 0 s. Due tomorrow: 2. Left for later: 1.")
    assert len(store().answers()) == 2


def test_ctrl_c_while_an_answer_is_written_saves_it_then_quits(cli, monkeypatch):
    original = Store.answer

    def interrupted_while_writing(self, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # lands in the middle of the write
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Store, "answer", interrupted_while_writing)
    result = cli("review", "--new", "3", input="4\n5\n5\n")
    assert result.exit_code == 130
    assert saved(result) == ["Saved: grade 4 · next review tomorrow (2025-03-04)."]
    assert result.stdout.endswith("Interrupted.\n\nSession over: 1 answered, 1 correct, 0 s. Due tomorrow: 1. "
                                  "Left for later: 2.\n")
    monkeypatch.setattr(Store, "answer", original)
    assert len(store().answers()) == 1


def test_the_session_is_settled_out_of_the_collectors_walks(cli, monkeypatch):
    """The session review builds is frozen out of the cycle collector (cli.base.settled) before its first answer:
    at 100,000 cards each full pass walked its queue, 0.2 s while a card waited (benchmarks/answering.py)."""
    import gc

    from bertdrill.app.session import Session

    original, walked = Session.answer, []

    def answering(self, *args, **kwargs):
        walked.append(any(each is self for each in gc.get_objects()))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Session, "answer", answering)
    result = cli("review", "--new", "1", input="4\n")
    assert result.exit_code == 0, result.stderr
    assert walked == [False]
    assert saved(result) == ["Saved: grade 4 · next review tomorrow (2025-03-04)."]  # answered as ever


def test_bad_options(cli):
    assert cli("review", "--new", "-1").exit_code == 2
    assert cli("review", "--rollover-hour", "24").exit_code == 2
    assert cli("review", "--lang", "d!").exit_code == 2  # not a language code
    result = cli("review", "--lang", "de")  # a language the lesson does not have
    assert result.exit_code == 1 and "lesson bert-basics has no 'de' texts (it has en, tr)" in result.stderr
    result = cli("review", "--lesson", "nope")
    assert result.exit_code == 1 and "no lesson with this id (known: bert-basics)" in result.stderr


def test_bad_environment(cli, monkeypatch):
    monkeypatch.setenv("BERTDRILL_NOW", "yesterday")
    result = cli("review")
    assert result.exit_code == 1
    assert result.stderr == "Error: BERTDRILL_NOW='yesterday' is not a date and time such as 2024-05-01T09:00\n"
    monkeypatch.setenv("BERTDRILL_NOW", MONDAY)
    monkeypatch.setenv("BERTDRILL_LOCK_TIMEOUT", "soon")
    result = cli("status")
    assert result.exit_code == 1
    assert result.stderr == "Error: BERTDRILL_LOCK_TIMEOUT='soon' is not a number of seconds from 0 to 3600\n"


# --------------------------------------------------------------------------- bad databases


def test_a_file_that_is_not_a_database(cli, tmp_path):
    path = tmp_path / "photo.db"
    path.write_bytes(b"\x89PNG\r\n" + bytes(range(256)) * 50)
    result = cli("review", "--db", str(path))
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {path} is not a bertdrill database (SQLite says: file is not a database)\n")
    assert result.stdout == ""


def test_a_read_only_database(cli, tmp_path):
    path = tmp_path / "ro.db"
    cli("review", "--db", str(path), "--new", "1", input="5\n")
    result = cli("review", "--db", f"sqlite:///file:{path}?mode=ro&uri=true", input="4\n")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {path} is read-only; bertdrill writes every answer to it.")
    assert "Traceback" not in result.stderr and "Card 1" not in result.stdout
    assert len(Store.open(str(path)).answers()) == 1


def test_a_database_locked_by_another_process(cli, monkeypatch):
    cli("review", "--new", "0")  # the file (a reader would not make it)
    monkeypatch.setenv("BERTDRILL_LOCK_TIMEOUT", "0.3")
    holder = sqlite3.connect(os.environ["BERTDRILL_DB"], isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = cli("review", input="4\n")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {os.environ['BERTDRILL_DB']} is locked by another program (waited 0.3 s); "
                             "close it (another bertdrill?) and try again\n")


def test_a_lock_that_passes_is_never_seen(cli):
    cli("review", "--new", "0")
    holder = sqlite3.connect(os.environ["BERTDRILL_DB"], isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    threading.Timer(0.5, lambda: holder.execute("ROLLBACK")).start()
    result = cli("review", "--new", "1", input="4\n")
    time.sleep(0.1)
    holder.close()
    assert result.exit_code == 0 and result.stderr == ""
    assert len(saved(result)) == 1


def test_locked_in_the_middle_loses_nothing_recorded(cli, monkeypatch):
    monkeypatch.setenv("BERTDRILL_LOCK_TIMEOUT", "0.2")
    original = Store.answer
    holders = []

    def second_answer_meets_a_lock(self, *args, **kwargs):
        if self.answers():
            holders.append(sqlite3.connect(os.environ["BERTDRILL_DB"], isolation_level=None))
            holders[-1].execute("BEGIN EXCLUSIVE")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Store, "answer", second_answer_meets_a_lock)
    result = cli("review", "--new", "3", input="4\n109482240\n5\n")
    holders[0].execute("ROLLBACK")
    assert result.exit_code == 1 and "is locked by another program" in result.stderr
    assert saved(result) == ["Saved: grade 4 · next review tomorrow (2025-03-04)."]
    monkeypatch.setattr(Store, "answer", original)
    assert [a.grade for a in store().answers()] == [4]


def test_a_newer_database_is_refused(cli, tmp_path):
    path = tmp_path / "future.db"
    shutil.copy(FIXTURES / "store-v1.db", path)
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    result = cli("status", "--db", str(path))
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {path} was written by a newer bertdrill (schema version {SCHEMA_VERSION + 1}; "
                             "this one knows up "
                             f"to {SCHEMA_VERSION}); upgrade bertdrill to open it\n")


def test_an_older_database_is_migrated_on_open(cli, tmp_path, monkeypatch):
    from bertdrill.adapters.store import migrations as store_module

    following = store_module.SCHEMA_VERSION + 1
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", following)
    monkeypatch.setitem(store_module.MIGRATIONS, following, lambda c: c.exec_driver_sql("CREATE TABLE note (id TEXT)"))
    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "store-v1.db", path)
    monkeypatch.setenv("BERTDRILL_NOW", "2025-01-13T10:00:00+00:00")
    result = cli("status", "--json", "--db", str(path))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["learned"], data["due_now"], data["next_due"]) == (4, 3, "2025-01-30")  # ffn-share is back
    with closing(sqlite3.connect(path)) as connection:  # status read an upgraded copy: a reader writes nothing
        assert connection.execute("PRAGMA user_version").fetchone() == (1,)
    assert cli("review", "--new", "0", "--db", str(path)).exit_code == 0  # a writer migrates the file
    assert json.loads(cli("status", "--json", "--db", str(path)).stdout) == data
    with closing(sqlite3.connect(path)) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (following,)


# --------------------------------------------------------------------------- real processes


def start_review(*args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "bertdrill", "review", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


class Output:
    """A running process's standard output, read as it comes."""

    def __init__(self, process: subprocess.Popen[bytes]):
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        self.process = process
        self.stdin, self.stdout, self.stderr = process.stdin, process.stdout, process.stderr
        self.seen = bytearray()
        self.position = 0  # everything before this has been expected already

    def expect(self, marker: bytes, timeout: float = 30) -> None:
        """Wait until ``marker`` appears after the previous one."""
        deadline = time.monotonic() + timeout
        while (found := self.seen.find(marker, self.position)) < 0:
            ready, _, _ = select.select([self.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise AssertionError(f"timed out waiting for {marker!r}; output so far:\n{self.seen.decode()}")
            chunk = os.read(self.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError(f"ended before {marker!r}:\n{self.seen.decode()}{self.stderr.read().decode()}")
            self.seen += chunk
        self.position = found + len(marker)

    def send(self, line: str) -> None:
        self.stdin.write(f"{line}\n".encode())
        self.stdin.flush()


def test_killed_mid_session_keeps_exactly_the_acknowledged_answers():
    process = start_review("--new", "6")
    output = Output(process)
    # new cards alternate kinds: a fact, the total, the choice, the blank (then a match, a fact)
    for typed, grade in ((None, 5), ("109482240", 2), ("d", 4), ("4", 3)):
        if typed is not None:
            output.expect(b"Your answer: ")
            output.send(typed)
        output.expect(b"Grade 0-5")
        output.send(str(grade))
        output.expect(b"Saved:")
    output.expect(b"Your answer: ")  # the next card is on screen, waiting
    process.kill()
    process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL

    db = store()
    answers = db.answers()
    keys = ["bert-definition", "total-params@bert-base", "bert-vs-gpt", "attention-projections"]
    assert [(a.card_id, a.kind, a.grade) for a in answers] == [
        (f"bert-basics/{key}", "new", grade) for key, grade in zip(keys, (5, 2, 4, 3))]
    expected = {"bert-definition": (1, 260, 1, 0), "total-params@bert-base": (0, 218, 1, 0),
                "bert-vs-gpt": (1, 250, 1, 0), "attention-projections": (1, 236, 1, 0)}
    for key, (repetitions, ef100, interval, lapses) in expected.items():
        assert db.state(f"bert-basics/{key}").schedule == Schedule(
            repetitions, ef100, interval, DAY + timedelta(days=interval), lapses)

    # Restarted the same day: the cards graded 2 and 3 are re-drilled, then the two new cards left
    restarted = start_review("--new", "6")
    # the re-drills (the total, the blank), then the match and the next fact
    out, err = restarted.communicate(b"109482240\n4\n4\n5\n12\n4\n4\n", timeout=60)
    assert restarted.returncode == 0, err.decode()
    text = out.decode()
    assert "Review: 4 cards (0 due, 2 to re-drill, 2 new)." in text
    assert text.count("Saved:") == 4 and "re-drill, schedule unchanged" in text
    after = store()
    for key, (_repetitions, ef100, _interval, _lapses) in expected.items():  # re-drills changed no schedule
        assert after.state(f"bert-basics/{key}").schedule.ef100 == ef100
    assert [(a.kind, a.grade) for a in after.answers()[4:]] == [("redrill", 4), ("redrill", 5), ("new", 4), ("new", 4)]


def test_ctrl_c_at_the_prompt(tmp_path):
    process = start_review("--new", "3")
    output = Output(process)
    output.expect(b"Grade 0-5: ")
    output.send("4")
    output.expect(b"Your answer: ")  # the second new card is the total
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, err.decode()
    text = re.sub(r"correct, \d+ s\.", "correct, 0 s.", (output.seen + out).decode())  # wall time: 1 s under load
    assert text.endswith("Interrupted.\n\nSession over: 1 answered, 1 correct, 0 s. Due tomorrow: 1. "
                         "Left for later: 2.\n")
    assert err == b""
    assert len(store().answers()) == 1


# --------------------------------------------------------------------------- pieces


@pytest.mark.parametrize("line, terminal, answers, command", [
    (":undo", False, "", "undo"), (":u", False, "", "undo"), (" :QUIT ", False, "", "quit"),
    (":suspend", True, "", "suspend"), (":b", True, "abc", "bury"),
    ("u", False, "", None), ("q", False, "", None), ("undo", False, "", None),
    ("u", True, "", "undo"), ("s", True, "", "suspend"), ("b", True, "", "bury"), ("Q", True, "", "quit"),
    ("b", True, "abcd", None), ("q", True, "abcd", "quit"), (":nope", True, "", "unknown"), (":x", False, "", "unknown"),
    ("", True, "", None),
])
def test_command_in(line, terminal, answers, command):
    assert command_in(line, terminal=terminal, answers=answers) == command


def test_help_stays_light():
    """`bertdrill --help` must not pay for SQLModel: the commands import it when they run."""
    code = "import sys; from bertdrill.cli import app; print('sqlmodel' in sys.modules, 'bertdrill.adapters.store' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


def test_status_loads_no_class_code(tmp_path, monkeypatch):
    """A learner's `status` reads the saved login (adapters.remote.login) but loads neither the class client (its
    HTTP and store), nor the class's tables (store.members), nor SQLAlchemy's PostgreSQL dialect (which an
    index's postgresql_where in the models loaded): each cost every learner's start-up 10-30 ms."""
    monkeypatch.setenv("BERTDRILL_DB", str(tmp_path / "light.db"))  # no --db: status looks for a login first
    code = ("import sys; from bertdrill.cli import run; sys.argv = ['bertdrill', 'status']\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "print(*(name in sys.modules for name in ('bertdrill.adapters.remote.login', 'bertdrill.adapters.remote.client',"
            " 'bertdrill.adapters.store.members', 'sqlalchemy.dialects.postgresql')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1].split() == ["True", "False", "False", "False"], result.stdout + result.stderr


def test_review_help(cli):
    result = cli("review", "--help")
    assert result.exit_code == 0
    for option in ("--lesson", "--lang", "--new", "--limit", "--db", "--file", "--rollover-hour"):
        assert option in result.stdout


def test_status_and_stats_never_write(cli, tmp_path):
    """Readers open the store read-only: no opened_at, no byte of the file changed, a read-only copy works."""
    path = tmp_path / "reader.db"
    cli("review", "--db", str(path), "--new", "1", input="5\n")
    Store.open(str(path)).close()  # the WAL folded in: the file alone is the database
    with sqlite3.connect(path) as connection:
        opened_at = connection.execute("SELECT value FROM meta WHERE key = 'opened_at'").fetchone()
    before = path.read_bytes()
    for db in (str(path), f"sqlite:///file:{path}?mode=ro&uri=true"):
        for command in ("status", "stats"):
            result = cli(command, "--db", db, "--json")
            assert result.exit_code == 0, result.stderr
            assert json.loads(result.stdout)["database"] == str(path)
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT value FROM meta WHERE key = 'opened_at'").fetchone() == opened_at
    assert path.read_bytes() == before


@pytest.mark.parametrize("command, method", [("status", "status"), ("stats", "answer_count"), ("review", "due_ids")])
def test_the_store_is_closed_when_a_command_fails(cli, tmp_path, monkeypatch, command, method):
    from bertdrill.core.errors import StoreError

    closed = []
    close = Store.close

    def closing(self):
        closed.append(self.where)
        close(self)

    def fails(self, *args, **kwargs):
        raise StoreError("the disk went away")

    monkeypatch.setattr(Store, "close", closing)
    monkeypatch.setattr(Store, method, fails)
    result = cli(command, "--db", str(tmp_path / "closed.db"), input="")
    assert result.exit_code == 1 and result.stderr == "Error: the disk went away\n"
    assert closed == [str(tmp_path / "closed.db")]


# --------------------------------------------------------------------------- issue 12: a review that teaches


def after(text: str, marker: str, lines: int) -> str:
    """``lines`` lines of the transcript from the line that starts with ``marker``."""
    rows = text.splitlines()
    start = next(i for i, row in enumerate(rows) if row.startswith(marker))
    return "\n".join(rows[start:start + lines])


def test_a_choice_that_does_not_exist_is_asked_again_and_text_is_matched_by_meaning(cli):
    # the third new card is the choice; "5" and "e" name no option, then its text without the article
    result = cli("review", "--new", "3", input="4\n109482240\n\n5\ne\nbidirectional encoder, no causal mask\n\n")
    assert result.exit_code == 0, result.stderr
    assert after(result.stdout, "Your answer: 5", 6) == "\n".join([
        "Your answer: 5",
        "No such option: choose 1 to 4 or a to d",
        "Your answer: e",
        "No such option: choose 1 to 4 or a to d",
        "Your answer: bidirectional encoder, no causal mask",
        "✓ Correct",
    ])
    assert [(a.grade, a.typed) for a in store().answers()][-1] == (4, "bidirectional encoder, no causal mask")
    assert len(store().answers()) == 3  # the refused options were never graded


def test_unknown_commands_are_refused_with_the_list_not_taken_as_answers(cli):
    result = cli("review", "--new", "2", input=":x\n4\n:skip\n109482240\n\n")
    assert result.exit_code == 0, result.stderr
    assert ("Grade 0-5: :x\nUnknown command :x: the commands are :undo :suspend :bury :quit.\nGrade 0-5: 4"
            in result.stdout)
    assert ("Your answer: :skip\nUnknown command :skip: the commands are :undo :suspend :bury :quit.\n"
            "Your answer: 109482240\n✓ Correct") in result.stdout
    assert [a.typed for a in store().answers()] == [None, "109482240"]


def test_number_words_through_the_review(cli):
    english = cli("review", "--new", "4", input="4\n109482240\n\nd\n\nfour\n\n")
    assert "dikkat" not in english.stdout  # the English lesson shows English code
    assert "attention = ____ * (d * d + d)\nYour answer: four\n✓ Correct" in english.stdout


def test_turkish_typed_without_turkish_letters_is_right_with_a_spelling_note(cli):
    result = cli("review", "--lang", "tr", "--new", "3",
                 input="4\n109482240\n\ncift yonlu encoder; nedensel maske yok\n\n")
    assert after(result.stdout, "Cevabın: cift yonlu", 6) == "\n".join([
        "Cevabın: cift yonlu encoder; nedensel maske yok",
        "✓ Doğru, Türkçe harfler olmadan yazılmış",
        "  Yazım: Çift yönlü encoder; nedensel maske yok",
        "Cevap: Çift yönlü encoder; nedensel maske yok",
        "Neden: BERT her konumda tüm cümleyi görür; GPT yalnızca solu görür.",
        "Yeniden gelir: 0–5 yarın",
    ])
    assert "Not 0-5, Enter = 3: \nKaydedildi: not 3" in result.stdout  # one grade below perfect


def test_a_match_card_is_a_real_matching_exercise(cli):
    # new cards: fact, total, choice, blank, then the table's "layers" pair
    result = cli("review", "--new", "5", input="4\n109482240\n\nd\n\n4\n\nz\n12\n\n")
    lines = result.stdout[result.stdout.index("BERT-base: how many layers?"):].splitlines()
    shown = [line for line in lines[1:] if re.match(r"  \d+  [a-j]\)  ", line)]
    values = [int(line.split(")  ")[1].replace(",", "")) for line in shown]
    # the table's values, and decoys beside them (another BERT's layers, width and FFN), in increasing order
    assert {12, 768, 3072, 30522} < set(values) and values == sorted(values) and len(values) <= 7
    letters = "abcdefghij"
    assert shown == [f"  {n}  {letters[n - 1]})  {value:,}" for n, value in enumerate(values, start=1)]
    assert lines[len(shown) + 1:len(shown) + 5] == [
        "Your answer: z",
        f"No such option: choose 1 to {len(values)} or a to {letters[len(values) - 1]}",
        "Your answer: 12",
        "✓ Correct",
    ]


def test_an_approximation_is_close_and_says_how_close(cli):
    result = cli("review", "--new", "2", input="4\n~110M\n\n")
    assert after(result.stdout, "Your answer: ~110M", 3) == "\n".join([
        "Your answer: ~110M",
        "✓ Close: rounded right to 2 significant figures (0.47 % off)",
        "Answer: 109,482,240",
    ])
    assert "Grade 0-5, Enter = 3: \nSaved: grade 3" in result.stdout


def test_a_question_that_names_its_formula_wants_the_number_through_the_review(cli, monkeypatch):
    from bertdrill.adapters.lessons import all_cards, load_lessons
    from bertdrill.app.session import interleave_by_kind

    order = [card.key for card in interleave_by_kind(c for c in all_cards(load_lessons()) if c.kind != "practice")]
    position = order.index("head-size@bert-base")
    # every earlier card graded 4 whatever its answer, so none comes back to re-drill in between
    facts_and_more = {"fact": "4\n", "numeric": "1\n4\n", "choice": "a\n4\n", "blank": "1\n4\n", "match": "1\n4\n"}
    kinds = {card.key: card.kind for card in all_cards(load_lessons())}
    before = "".join(facts_and_more[kinds[key]] for key in order[:position])
    result = cli("review", "--new", str(position + 1), "--limit", "100", "--no-bury-siblings",
                 input=before + "d/h\n64\n\n")
    assert after(result.stdout, "Your answer: d/h", 3) == "\n".join([
        "Your answer: d/h",
        "The question gives the formula: type the number it comes to",
        "Your answer: 64",
    ])


def test_the_interval_preview_shows_what_each_grade_gives_before_grading(cli, monkeypatch):
    """A card at repetitions 2, interval 6, EF 2.50: grades 0-2 bring it back tomorrow, 3-5 in 15 days."""
    from datetime import datetime

    from bertdrill.adapters.lessons import all_cards, load_lessons
    from bertdrill.app.session import record_attempt

    db = store()
    db.sync(all_cards(load_lessons()))
    for offset, kind in ((-7, AnswerKind.NEW), (-6, AnswerKind.REVIEW)):  # 4 then 4: n = 2, I = 6, EF 2.50, due today
        record_attempt(db, "bert-basics/bert-definition", 4, kind=kind,
                       moment=datetime.fromisoformat(MONDAY) + timedelta(days=offset))
    assert db.state("bert-basics/bert-definition").schedule == Schedule(2, 250, 6, DAY, 0)
    db.close()
    assert cli("scheduler", "--spread", "off").exit_code == 0  # SM-2's own 15 days (fuzzed: test_spread_cli)
    result = cli("review", "--new", "0", input="4\n")
    assert "Why: BERT is a bidirectional language understanding model based on transformers.\n" \
           "Comes back: 0–2 tomorrow · 3–5 in 15 days\nGrade 0-5: 4\n" \
           "Saved: grade 4 · next review in 15 days (2025-03-18)." in result.stdout


def test_a_re_drill_has_no_preview_its_answer_changes_no_schedule(cli):
    result = cli("review", "--new", "1", input="1\n5\n")
    assert result.stdout.count("Comes back:") == 1


def test_fact_cards_in_a_terminal_grade_what_is_typed_and_enter_still_reveals(cli, monkeypatch):
    """In a terminal a typed answer to a fact is graded against its answer and accept list, with a suggested
    grade; Enter alone reveals the answer for self-grading, and then Enter without a grade keeps asking."""
    from bertdrill.cli import review as review_module

    monkeypatch.setattr(review_module.LineInput, "terminal", True)  # the terminal's prompts, read as lines
    result = cli("review", "--new", "1", input="\n\n4\n")
    assert after(result.stdout, "What is BERT?", 4) == "\n".join([
        "What is BERT?",
        "Your answer, or Enter to see it (u s b q): ",
        "Answer: A model made only of transformer encoder blocks, pre-trained on large amounts of text "
        "(Bidirectional Encoder Representations from Transformers, 2018).",
        "Why: BERT is a bidirectional language understanding model based on transformers.",
    ])
    assert "Grade 0-5: \nA grade is a whole number from 0 to 5 (got an empty line).\nGrade 0-5: 4" in result.stdout
    typed = cli("review", "--new", "1", "--db", str(Path(os.environ["BERTDRILL_DB"]).with_name("typed.db")),
                input="a pretrained transformer encodr\n\n")
    assert after(typed.stdout, "Your answer, or Enter", 4) == "\n".join([
        "Your answer, or Enter to see it (u s b q): a pretrained transformer encodr",
        "✓ Correct: every part of the answer is there",  # issue 21: the lesson's parts, each in its own words
        "Answer: A model made only of transformer encoder blocks, pre-trained on large amounts of text "
        "(Bidirectional Encoder Representations from Transformers, 2018).",
        "Why: BERT is a bidirectional language understanding model based on transformers.",
    ])
    assert "Grade 0-5, Enter = 4: \nSaved: grade 4" in typed.stdout


# --- issue 21: numbers with units and hedges, broken groupings, slips repeated in every layer ----

def test_a_unit_or_hedge_is_right_and_a_broken_grouping_is_asked_again(cli):
    result = cli("review", "--new", "2", input="4\n109,482,24\n109,482,240 params\n\n")
    assert result.exit_code == 0, result.stderr
    assert after(result.stdout, "Your answer: 109,482,24", 4) == "\n".join([
        "Your answer: 109,482,24",
        "Type it again: 109,482,24 is not grouped in threes (as in 109,482,240)",
        "Your answer: 109,482,240 params",
        "✓ Correct",
    ])
    assert [(a.grade, a.typed) for a in store().answers()] == [(4, None), (4, "109,482,240 params")]


def test_a_hedged_turkish_number_and_a_turkish_diagnosis(cli):
    result = cli("review", "--lang", "tr", "--new", "2", input="4\nyaklaşık 110 milyon parametre\n\n")
    assert "✓ Yakın" in result.stdout and "Not 0-5, Enter = 3" in result.stdout
    wrong = cli("review", "--lang", "tr", "--new", "2", "--db", str(Path(os.environ["BERTDRILL_HOME"]) / "b.db"),
                input="4\n102.395.136\n\n")
    assert after(wrong.stdout, "Cevabın: 102.395.136", 3) == "\n".join([
        "Cevabın: 102.395.136",
        "✗ Yanlış",
        "  102.395.136, dikkat bloğu içinde 4 * (d * d + d) yerine 3 * (d * d + d) ile BERT-base için toplam "
        "parametre sayısı değeridir; toplam parametre sayısı değil.",
    ])


# --- issue 21: free text the learner judges ---------------------------------------------------

def test_free_text_not_clearly_right_is_the_learners_to_judge(cli, monkeypatch):
    """Anki's flip: "encoder" alone is half of "What is BERT?", so the answer is shown with what was found
    and what is missing, and no grade is suggested; a right answer in other words is right."""
    from bertdrill.cli import review as review_module

    monkeypatch.setattr(review_module.LineInput, "terminal", True)
    result = cli("review", "--new", "1", input="encoder\n\n5\n")
    assert after(result.stdout, "Your answer, or Enter", 6) == "\n".join([
        "Your answer, or Enter to see it (u s b q): encoder",
        "? Compare it with the answer, and grade it yourself",
        "  Found in yours: encoder",
        "  Not found: pre-trained",
        "Answer: A model made only of transformer encoder blocks, pre-trained on large amounts of text "
        "(Bidirectional Encoder Representations from Transformers, 2018).",
        "Why: BERT is a bidirectional language understanding model based on transformers.",
    ])
    judge = "You judge: grade 0-5 (4 or 5 if you had it, 0-2 if not): "
    assert f"{judge}\nA grade is a whole number from 0 to 5 (got an empty line).\n{judge}5\nSaved: grade 5" \
        in result.stdout  # Enter alone records nothing: there is no suggestion to accept
    other = cli("review", "--new", "1", "--lang", "tr", "--db",
                str(Path(os.environ["BERTDRILL_DB"]).with_name("tr.db")), input="önceden eğitilmiş bir encoder\n\n")
    assert "✓ Doğru: cevabın bütün parçaları var" in other.stdout
    assert "Not 0-5, Enter = 4: \nKaydedildi: not 4" in other.stdout


# --- issue 21: the queue as Anki does it -------------------------------------------------------

def test_a_card_failed_every_day_becomes_a_leech(cli, mini, monkeypatch):
    """Every failed review of a learned card is a lapse: eight failed days make a leech (it took none before)."""
    assert cli("review", "--file", str(mini), "--new", "1", input="5\n").exit_code == 0  # learned on day 0
    for offset in range(1, 9):
        monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=offset)}T09:00:00+03:00")
        result = cli("review", "--file", str(mini), "--new", "0", input="1\n4\n")  # failed, then its re-drill
        assert result.exit_code == 0, result.stderr
    assert "Leech: mini/markup has lapsed 8 times and is suspended: rewrite it." in result.stdout
    state = store().state("mini/markup")
    assert (state.schedule.lapses, state.leech, state.suspended) == (8, True, True)


def test_small_ones_status_counts_what_stats_counts_and_refuses_a_language_review_refuses(cli):
    """issue 21: "Learned 10 of 32" where stats counts 33; status --lang fr ran in English."""
    cli("review", "--new", "2", input="4\n109482240\n\n")
    status = json.loads(cli("status", "--json").stdout)
    stats = json.loads(cli("stats", "--json").stdout)
    assert status["cards"] == sum(stats["cards"][state] for state in stats["cards"]) == 32
    assert status["learned"] == 2
    refused = cli("status", "--lang", "fr")
    assert refused.exit_code == 1 and "has no 'fr' texts" in refused.stderr
    assert cli("review", "--lang", "fr").exit_code == 1


@pytest.mark.parametrize("args, message", [
    (("scheduler", "xyz"), "Error: Invalid value for 'name': 'xyz' is not one of 'sm2', 'fsrs'."),
    (("review", "--new", "xyz"), "not a whole number"),
])
def test_usage_errors_speak_plainly(cli, args, message):
    result = cli(*args)
    assert result.exit_code == 2
    assert message in result.stderr and "Value error" not in result.stderr and "Input should be" not in result.stderr


def test_in_a_terminal_one_card_is_on_screen_at_a_time(cli, monkeypatch):
    """issue 21: the previous answer is cleared before the next card appears (the line protocol keeps its transcript)."""
    from rich.console import Console

    from bertdrill.cli import review as review_module

    cleared = []
    monkeypatch.setattr(Console, "clear", lambda self, home=True: cleared.append(self.file.tell()))
    cli("review", "--new", "3", input="4\n109482240\n\n")
    assert cleared == []  # a pipe: the whole transcript stays
    monkeypatch.setattr(review_module.LineInput, "terminal", True)
    result = cli("review", "--new", "3", "--db", str(Path(os.environ["BERTDRILL_DB"]).with_name("t.db")),
                 input="\n4\n109482240\n\n")
    assert result.exit_code == 0, result.stderr
    assert len(cleared) == 2  # before the second card and before the third, never before the first


def test_siblings_are_buried_until_the_next_day(cli, mini, monkeypatch):
    """issue 21: a table's pairs (one item) come one a day, as Anki buries a note's other cards: the answer says
    which card waits, and the next day it comes."""
    result = cli("review", "--file", str(mini), input="5\nb\n\n16\n\n4*d*d + 4*d\n\n2\n\n")
    assert result.exit_code == 0, result.stderr
    assert "Review: 5 cards (0 due, 0 to re-drill, 5 new)." in result.stdout  # 6 cards, one held back
    assert "Saved: grade 4 · next review tomorrow (2025-03-04).\nUntil tomorrow: mini/table#width, whose answer " \
           "this one showed.\n" in result.stdout
    assert "model width → ?" not in result.stdout
    assert store().state("mini/table#width").buried_until == DAY + timedelta(days=1)
    assert "Nothing to review now." in cli("review", "--file", str(mini)).stdout  # a second session today
    monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=1)}T09:00:00+03:00")
    assert "model width → ?" not in cli("review", "--file", str(mini), input=":quit\n").stdout  # its pair is due
    assert "Review: 6 cards (5 due, 0 to re-drill, 1 new)." in cli(  # its bury is over: only its pair holds it back
        "review", "--file", str(mini), "--no-bury-siblings", input=":quit\n").stdout


def test_a_day_with_nothing_due_keeps_the_streak(cli, monkeypatch):
    """issue 21: the streak broke on a day with nothing due; with nothing due, review says when the next card is."""
    for offset, grades in ((0, "5\n"), (1, "5\n")):  # a fact learned, then due again the next day: then in 6 days
        monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=offset)}T09:00:00+03:00")
        assert cli("review", "--new", "1" if offset == 0 else "0", input=grades).exit_code == 0
    monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=4)}T09:00:00+03:00")
    status = json.loads(cli("status", "--json").stdout)
    ahead = (date.fromisoformat(status["next_due"]) - (DAY + timedelta(days=4))).days  # SM-2's 6 days, fuzzed
    assert ahead >= 2
    assert (f"Nothing to review now. Next card due in {ahead} days ({status['next_due']})."
            in cli("review", "--new", "0").stdout)
    assert status["streak"] == 2  # days 2 to 4 had nothing due
    assert json.loads(cli("stats", "--json").stdout)["streak"] == {"current": 2, "longest": 2}


# --- issue 21: cards you can manage ------------------------------------------------------------------

def test_a_card_is_found_and_its_history_shown(cli, monkeypatch):
    found = cli("cards", "--search", "d_model heads")
    assert found.exit_code == 0 and "head-size@bert-base" in found.stdout and "bert-definition" not in found.stdout
    assert [card["id"] for card in json.loads(cli("cards", "-s", "BİDİRECTİONAL", "--json").stdout)][:1] == [
        "bert-basics/bert-definition"]  # a Turkish keyboard's capitals, in an English search
    assert "No card has all of 'no such words'." in cli("cards", "-s", "no such words").stdout
    assert json.loads(cli("cards", "bert-basics", "--json").stdout)[0]["id"] == "bert-basics/bert-definition"
    cli("review", "--new", "2", input="4\n109482240\n\n")
    history = cli("cards", "history", "total-params@bert-base")
    assert history.exit_code == 0, history.stderr
    assert "Now: due tomorrow (2025-03-04) · interval 1 day · ease 2.50 · 0 lapses" in history.stdout
    assert "  2025-03-03  new        grade 4 → 2025-03-04  '109482240'" in history.stdout
    unknown = cli("cards", "history", "total-params@bert-bass")
    assert unknown.exit_code == 1 and "did you mean total-params@bert-base" in unknown.stderr
    several = cli("cards", "history", "total-params")
    assert several.exit_code == 1 and "has several cards" in several.stderr


def test_a_suspended_leech_comes_back_and_every_action_is_logged_and_undone(cli, mini, monkeypatch):
    """issue 21: a suspended card could never come back. Suspend, unsuspend, forget, reset and reschedule, each
    logged in the store with the state before and after; `cards undo` takes back the latest."""
    def on(offset):
        monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=offset)}T09:00:00+03:00")

    cli("review", "--file", str(mini), "--new", "1", input="5\n")
    for offset in range(1, 9):  # failed every day: a leech, suspended by the review
        on(offset)
        cli("review", "--file", str(mini), "--new", "0", input="1\n4\n")
    assert store().state("mini/markup").suspended
    on(9)
    assert "mini/markup" not in cli("review", "--file", str(mini), "--new", "0", input=":quit\n").stdout
    # Each command a minute after the last: BERTDRILL_NOW starts every process at the same instant, so
    # commands run at one fixed time would be ordered by their microseconds of start-up, not by when they ran.
    def at(minute):
        monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=9)}T09:{minute:02d}:00+03:00")

    at(1)
    back = cli("cards", "unsuspend", "markup", "--file", str(mini))
    assert back.exit_code == 0, back.stderr
    assert "Unsuspended mini/markup: it comes back today (2025-03-12)." in back.stdout
    assert "mini/markup · fact · due" in cli("review", "--file", str(mini), "--new", "0", input=":quit\n").stdout
    at(2)
    reset = cli("cards", "reset", "markup", "--file", str(mini))
    assert "Reset mini/markup: new again, no lapses, not suspended." in reset.stdout
    state = store().state("mini/markup")
    assert (state.schedule.is_new, state.schedule.lapses, state.leech, state.suspended) == (True, 0, False, False)
    at(3)
    assert "Undone: reset of mini/markup; it is back as it was." in cli("cards", "undo", "--file", str(mini)).stdout
    assert store().state("mini/markup").leech
    at(4)
    moved = cli("cards", "reschedule", "markup", "--due", "+3", "--file", str(mini))
    assert "Rescheduled mini/markup: due in 3 days (2025-03-15)." in moved.stdout
    bad = cli("cards", "reschedule", "markup", "--due", "2025-03-01", "--file", str(mini))
    assert bad.exit_code == 1 and "cannot be due before today" in bad.stderr
    at(5)
    cli("cards", "suspend", "markup", "pick", "--file", str(mini))
    assert store().state("mini/pick").suspended
    at(6)
    cli("cards", "forget", "pick", "--file", str(mini))
    assert store().state("mini/pick").schedule.is_new and store().state("mini/pick").suspended
    actions = [(done.card_id, done.action) for done in store().actions()]
    assert actions == [("mini/markup", "suspend"),  # the review's, when it became a leech
                       ("mini/markup", "unsuspend"), ("mini/markup", "reschedule"), ("mini/markup", "suspend"),
                       ("mini/pick", "suspend"), ("mini/pick", "forget")]
    history = cli("cards", "history", "markup", "--file", str(mini), "--json")
    assert [event.get("action") for event in json.loads(history.stdout)["history"]][-4:] == [
        "suspend", "unsuspend", "reschedule", "suspend"]
    monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=9)}T09:30:00+03:00")
    for _ in range(5):
        cli("cards", "undo", "--file", str(mini))
    assert len(store().actions()) == 1 and store().state("mini/markup").suspended  # as the review left it
    assert "Undone: suspend of mini/markup" in cli("cards", "undo", "--file", str(mini)).stdout
    nothing = cli("cards", "undo", "--file", str(mini))
    assert nothing.exit_code == 1 and "no card action to undo" in nothing.stderr


def test_cram_leaves_the_schedule_alone(cli, mini, monkeypatch):
    """issue 21: study ahead without spoiling the schedule. A cram goes through every card, due or not, logs each
    answer as cram and changes no schedule; the day's due review still schedules, and no limit is used."""
    cli("review", "--file", str(mini), "--new", "1", input="5\n")
    before = store().state("mini/markup").schedule
    result = cli("review", "--file", str(mini), "--cram", input="5\nb\n\n" + ":quit\n")
    assert result.exit_code == 0, result.stderr
    assert "Cram: 6 cards, due or not." in result.stdout
    assert "Saved: grade 5 · cram, schedule unchanged." in result.stdout and "Comes back:" not in result.stdout
    assert store().state("mini/markup").schedule == before
    assert store().state("mini/pick").schedule.is_new  # a new card crammed is still new
    assert [(a.card_id, a.kind) for a in store().answers()][1:] == [("mini/markup", "cram"), ("mini/pick", "cram")]
    status = json.loads(cli("status", "--file", str(mini), "--json").stdout)
    assert status["new_today"] == 5  # a cram takes no new card from the day's limit
    monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=1)}T09:00:00+03:00")
    cli("review", "--file", str(mini), "--cram", input="1\n" + ":quit\n")  # crammed wrong before its review
    due = cli("review", "--file", str(mini), "--new", "0", input="5\n")
    assert "Saved: grade 5 · next review in 6 days" in due.stdout  # the day's review schedules all the same


def test_a_cram_builds_its_cards_as_it_shows_them(tmp_path):
    """issue 25: no command above 200 MB on the 1M-answer store. `review --cram` built every card of the lessons
    before showing the first (409 MB on that store's 100,002 cards; 98 MB now, a review's 73 plus its queue of
    ids). Here, on a lesson of 7,000 cards, it peaked 21 MB above a review's first card; now 2 MB below it."""
    if (benchmarks := str(Path(__file__).resolve().parent.parent / "benchmarks")) not in sys.path:
        sys.path.insert(0, benchmarks)
    from lessons import generated_lesson

    lesson = tmp_path / "big.toml"
    lesson.write_text(generated_lesson(5_000, "big"), encoding="utf-8")

    def peak(shown: str, *options: str) -> int:
        # the peak from here on: a child's counts from its fork, so it would start at pytest's own (clear_refs: 5)
        script = ("import pathlib, sys; pathlib.Path('/proc/self/clear_refs').write_text('5')\n"
                  "from bertdrill.cli import run; sys.argv = ['bertdrill', 'review', *sys.argv[1:]]\ntry:\n"
                  "    run()\nfinally:\n    print(next(line for line in pathlib.Path('/proc/self/status')"
                  ".read_text().splitlines() if line.startswith('VmHWM')), file=sys.stderr)")
        ended = subprocess.run([sys.executable, "-c", script, *options, "--file", str(lesson)], input=":quit\n",
                               capture_output=True, text=True, timeout=300)
        assert shown in ended.stdout, ended.stderr
        return int(ended.stderr.split()[-2]) * 1024

    peak("Card 1 of 10 ")  # the lesson verified into the cache and synced: that peak is neither command's
    review, cram = peak("Card 1 of 10 "), peak("Card 1 of 7,000 · cram", "--cram")
    assert cram - review < 10_000_000, (cram, review)


def test_a_carried_over_redrill_shows_no_preview_and_a_leech_offers_only_an_undo_it_can_give(cli, mini, monkeypatch):
    """issue 21: a re-drill carried over from an earlier session today showed a 'Comes back' preview its answer
    would not honour; the leech line offered an undo at the end of a session, where none can be typed."""
    cli("review", "--file", str(mini), "--new", "1", input="5\n")  # learned on day 0
    monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=1)}T09:00:00+03:00")
    cli("review", "--file", str(mini), "--new", "0", input="1\n:quit\n")  # failed (a lapse), left to re-drill
    later = cli("review", "--file", str(mini), "--new", "0", input="5\n")
    assert "mini/markup · fact · re-drill" in later.stdout and "Comes back:" not in later.stdout
    assert "Saved: grade 5 · re-drill, schedule unchanged." in later.stdout
    for offset in range(2, 8):  # six more failed days: seven lapses
        monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=offset)}T09:00:00+03:00")
        cli("review", "--file", str(mini), "--new", "0", input="1\n4\n")
    monkeypatch.setenv("BERTDRILL_NOW", f"{DAY + timedelta(days=8)}T09:00:00+03:00")
    alone = cli("review", "--file", str(mini), "--new", "0", input="1\n")  # the eighth, the session's last card
    assert "is suspended: rewrite it.\n" in alone.stdout and "undoes this" not in alone.stdout
    undone = store()
    undone.set_flags("mini/markup", suspended=False)
    undone.undo(undone.answers("mini/markup")[-1].id)  # as if the eighth failure had not happened
    followed = cli("review", "--file", str(mini), "--new", "1", input="1\n:undo\n")  # a new card follows it
    assert "is suspended: rewrite it. (:undo undoes this)" in followed.stdout
    assert "Undone: mini/markup is back as it was." in followed.stdout and not store().state("mini/markup").suspended


def test_a_suspension_in_a_review_is_a_logged_action_and_undo_takes_it_back(cli, mini):
    """issue 21: every action recorded durably: `s` in a review is logged as a card action (history shows it,
    `cards unsuspend` takes it back), and `u` in the session deletes it again."""
    result = cli("review", "--file", str(mini), "--new", "2", input=":suspend\n:undo\n:suspend\n:quit\n")
    assert result.exit_code == 0, result.stderr
    assert [(done.card_id, done.action) for done in store().actions()] == [("mini/markup", "suspend")]
    assert "suspend    → new" in cli("cards", "history", "markup", "--file", str(mini)).stdout
    assert "Unsuspended mini/markup: it comes back with the new cards." in cli(
        "cards", "unsuspend", "markup", "--file", str(mini)).stdout
