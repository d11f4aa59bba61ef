"""`bertdrill review` and `bertdrill status`, end to end: scripted sessions, bad input, crashes."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import date, timedelta
from pathlib import Path

import pytest

from bertdrill import sm2
from bertdrill.cli.review import command_in
from bertdrill.store import Store

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
    path = tmp_path / "mini.toml"
    path.write_text(MINI, encoding="utf-8")
    return path


def store() -> Store:
    return Store.open()


def saved(result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("Saved:")]


# --------------------------------------------------------------------------- a scripted session


def test_scripted_session_transcript(cli):
    result = cli("review", "--new", "2", input="4\n1\n:undo\n5\n")
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
Grade 0-5: 4
Saved: grade 4 · next review tomorrow (2025-03-04).

Card 2 of 2 · 0 review · 1 new · 0 re-drill
bert-basics/bert-acronym · fact · new
What does the name BERT stand for, and when was it introduced?
Answer: Bidirectional Encoder Representations from Transformers, 2018.
Grade 0-5: 1
Saved: grade 1 · next review tomorrow (2025-03-04); back later in this session.

Card 3 of 3 · 0 review · 0 new · 1 re-drill
bert-basics/bert-acronym · fact · re-drill
What does the name BERT stand for, and when was it introduced?
Answer: Bidirectional Encoder Representations from Transformers, 2018.
Grade 0-5: :undo
Undone: bert-basics/bert-acronym is back as it was.

Card 2 of 2 · 0 review · 1 new · 0 re-drill
bert-basics/bert-acronym · fact · new
What does the name BERT stand for, and when was it introduced?
Answer: Bidirectional Encoder Representations from Transformers, 2018.
Grade 0-5: 5
Saved: grade 5 · next review tomorrow (2025-03-04).

Session over: 2 answered, 2 correct, 0 s. Due tomorrow: 2.
"""
    assert result.stderr == ""
    answers = store().answers()
    assert [(a.card_id.split("/")[1], a.kind, a.grade) for a in answers] == [
        ("bert-definition", "new", 4), ("bert-acronym", "new", 5)]


def test_every_kind_asked_its_own_way(cli, mini):
    result = cli("review", "--file", str(mini), input="5\nb\n\n16\n\n4*d*d + 4*d\n\n2\n3\n8\n\n")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "What does [bold]x[/bold] print?" in out and "The text [bold]x[/bold], as is." in out  # escaped
    assert "  1  a)  a\n  2  b)  b\n  3  c)  c\n" in out
    assert "Your answer: b\n✓ Correct\nAnswer: b\nWhy: a, then b.\nGrade 0-5, Enter = 4: \nSaved: grade 4" in out
    assert "attention = ____ * (d * d + d)\nYour answer: 4*d*d + 4*d\n✓ Correct" in out
    assert "layers → ?\nYour answer: 2\n✓ Correct" in out
    assert "Grade 0-5, Enter = 4: 3\nSaved: grade 3" in out
    assert "model width → ?\nYour answer: 8\n✓ Correct" in out
    assert [a.grade for a in store().answers()] == [5, 4, 4, 4, 3, 4]


def test_turkish_session_with_turkish_numbers(cli):
    facts = "4\n" * 8
    result = cli("review", "--lang", "tr", "--new", "9", input=facts + "109.482.240\n\n")
    assert result.exit_code == 0, result.stderr
    assert "BERT nedir?" in result.stdout
    assert "BERT-base toplam kaç parametreye sahiptir (gömme + 12 katman + pooler), sapmalar ve LayerNorm'lar dahil?\nYour answer: 109.482.240\n✓ Correct" \
        in result.stdout
    assert store().answers()[-1].typed == "109.482.240"


def test_a_wrong_answer_suggests_a_low_grade_and_enter_accepts_it(cli, mini):
    result = cli("review", "--file", str(mini), input="5\nc\n\n:quit\n")
    assert "✗ Incorrect\nAnswer: b\nWhy: a, then b.\nGrade 0-5, Enter = 1: \nSaved: grade 1 · next review tomorrow" \
        in result.stdout
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
    cli("review", "--new", "3", input="5\n4\n2\n5\n")
    result = cli("status")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:7] == [
        "Study day 2025-03-03",
        "  Due now         0",
        "  New today       7 (of 28 not seen yet)",
        "  Learned         3 of 31 cards",
        "  Next due        tomorrow (2025-03-04)",
        "  Streak          1 day",
        "  Answered today  4",
    ]
    data = json.loads(cli("status", "--json").stdout)
    assert data == {"study_day": "2025-03-03", "due_now": 0, "new_today": 7, "new_unseen": 28, "learned": 3,
                    "cards": 31, "next_due": "2025-03-04", "streak": 1, "answered_today": 4,
                    "database": os.environ["BERTDRILL_DB"]}


def test_status_on_a_fresh_install_creates_nothing_surprising(cli, tmp_path):
    data = json.loads(cli("status", "--json").stdout)
    assert (data["due_now"], data["new_today"], data["learned"], data["next_due"], data["streak"]) == (0, 10, 0, None, 0)
    assert Path(os.environ["BERTDRILL_DB"]).is_file()


def test_nothing_to_review(cli):
    result = cli("review", "--new", "0")
    assert result.exit_code == 0
    assert result.stdout == "Nothing to review now.\n\nSession over: 0 answered, 0 correct, 0 s. Due tomorrow: 0.\n"


@pytest.mark.parametrize("grades, intervals, ef100s", [
    ([5, 5, 5, 2, 4, 4, 5], [1, 6, 17, 1, 1, 6, 15], [260, 270, 280, 248, 248, 248, 258]),
    ([3, 3, 3, 3, 3, 3, 3, 3], [1, 6, 14, 30, 59, 107, 178, 271], [236, 222, 208, 194, 180, 166, 152, 138]),
    ([5, 4, 3, 2, 1, 0, 5, 5], [1, 6, 16, 1, 1, 1, 1, 6], [260, 260, 246, 214, 160, 130, 140, 150]),
])
def test_sm2_vectors_over_days_through_the_command(cli, monkeypatch, grades, intervals, ef100s):
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
    began = time.monotonic()
    result = cli("review", "--file", str(mini), input="5\n" + "7" * 1_000_000 + "\n\n:quit\n")
    assert time.monotonic() - began < 10
    assert result.exit_code == 0
    assert "…  (line cut to 4,096 bytes)\n✗" in result.stdout
    assert len(result.stdout) < 20_000
    typed = store().answers()[1].typed
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
    result = cli("review", "--new", "3", input="4\n5")  # the last line has no newline: still read
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


def test_bad_options(cli):
    assert cli("review", "--new", "-1").exit_code == 2
    assert cli("review", "--rollover-hour", "24").exit_code == 2
    assert cli("review", "--lang", "de").exit_code == 2
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
    cli("status")
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
    cli("status")
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
    result = cli("review", "--new", "3", input="4\n5\n")
    holders[0].execute("ROLLBACK")
    assert result.exit_code == 1 and "is locked by another program" in result.stderr
    assert saved(result) == ["Saved: grade 4 · next review tomorrow (2025-03-04)."]
    monkeypatch.setattr(Store, "answer", original)
    assert [a.grade for a in store().answers()] == [4]


def test_a_newer_database_is_refused(cli, tmp_path):
    path = tmp_path / "future.db"
    shutil.copy(FIXTURES / "store-v1.db", path)
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA user_version = 7")
    result = cli("status", "--db", str(path))
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {path} was written by a newer bertdrill (schema version 7; this one knows up "
                             "to 1); upgrade bertdrill to open it\n")


def test_an_older_database_is_migrated_on_open(cli, tmp_path, monkeypatch):
    from bertdrill.store import migrations as store_module

    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(store_module.MIGRATIONS, 2, lambda c: c.exec_driver_sql("CREATE TABLE note (id TEXT)"))
    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "store-v1.db", path)
    monkeypatch.setenv("BERTDRILL_NOW", "2025-01-13T10:00:00+00:00")
    result = cli("status", "--json", "--db", str(path))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["learned"], data["due_now"], data["next_due"]) == (4, 3, "2025-01-30")  # ffn-share is back
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (2,)


# --------------------------------------------------------------------------- real processes


def start_review(*args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "bertdrill", "review", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


class Output:
    """A running process's standard output, read as it comes."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self.seen = bytearray()
        self.position = 0  # everything before this has been expected already

    def expect(self, marker: bytes, timeout: float = 30) -> None:
        """Wait until ``marker`` appears after the previous one."""
        deadline = time.monotonic() + timeout
        while (found := self.seen.find(marker, self.position)) < 0:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise AssertionError(f"timed out waiting for {marker!r}; output so far:\n{self.seen.decode()}")
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError(f"ended before {marker!r}:\n{self.seen.decode()}{self.process.stderr.read().decode()}")
            self.seen += chunk
        self.position = found + len(marker)

    def send(self, line: str) -> None:
        self.process.stdin.write(f"{line}\n".encode())
        self.process.stdin.flush()


def test_killed_mid_session_keeps_exactly_the_acknowledged_answers():
    process = start_review("--new", "6")
    output = Output(process)
    for grade in (5, 2, 4, 3):
        output.expect(b"Grade 0-5: ")
        output.send(str(grade))
        output.expect(b"Saved:")
    output.expect(b"Grade 0-5: ")  # the next card is on screen, waiting
    process.kill()
    process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL

    db = store()
    answers = db.answers()
    keys = ["bert-definition", "bert-acronym", "bidirectional", "pre-training"]
    assert [(a.card_id, a.kind, a.grade) for a in answers] == [
        (f"bert-basics/{key}", "new", grade) for key, grade in zip(keys, (5, 2, 4, 3))]
    expected = {"bert-definition": (1, 260, 1, 0), "bert-acronym": (0, 218, 1, 0),
                "bidirectional": (1, 250, 1, 0), "pre-training": (1, 236, 1, 0)}
    for key, (repetitions, ef100, interval, lapses) in expected.items():
        assert db.state(f"bert-basics/{key}").schedule == sm2.Schedule(
            repetitions, ef100, interval, DAY + timedelta(days=interval), lapses)

    # Restarted the same day: the cards graded 2 and 3 are re-drilled, then the two new cards left
    restarted = start_review("--new", "6")
    out, err = restarted.communicate(b"4\n5\n4\n4\n", timeout=60)
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
    output.expect(b"Grade 0-5: ")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, err.decode()
    text = (output.seen + out).decode()
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
    ("b", True, "abcd", None), ("q", True, "abcd", "quit"), (":nope", True, "", None), ("", True, "", None),
])
def test_command_in(line, terminal, answers, command):
    assert command_in(line, terminal=terminal, answers=answers) == command


def test_help_stays_light():
    """`bertdrill --help` must not pay for SQLModel: the commands import it when they run."""
    code = "import sys; from bertdrill.cli import app; print('sqlmodel' in sys.modules, 'bertdrill.store' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


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
    from bertdrill.errors import StoreError

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
