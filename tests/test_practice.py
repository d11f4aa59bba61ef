"""`bertdrill practice`: the lesson's exercise, run and judged against the formulas."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.app import practice


@pytest.fixture(scope="module")
def card():
    [card] = [c for c in all_cards(load_lessons()) if c.kind == "practice"]
    return card


def write(tmp_path, text, name="model.py"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_correct_script_passes(card, tmp_path):
    outcome = practice.check(card, write(tmp_path, card.solution["en"]))
    assert outcome.status == "passed"
    assert outcome.actual == ("23837184 7087872 590592", "109482240", "0.666")
    assert outcome.grade == 5


def test_numbers_compare_by_value(card, tmp_path):
    script = 'print("23837184  7087872 590592")\nprint(109482240)\nprint("0.6660")\n'
    assert practice.check(card, write(tmp_path, script)).status == "passed"


def test_wrong_script_shows_a_diff(card, tmp_path):
    outcome = practice.check(card, write(tmp_path, card.solution["tr"].replace("12 * katman", "11 * katman")))
    assert outcome.status == "wrong"
    assert "-109482240" in outcome.diff()
    assert "+102394368" in outcome.diff()
    assert outcome.grade == 2


def test_hanging_script_is_stopped(card, tmp_path):
    outcome = practice.check(card, write(tmp_path, "import time\nprint(1)\ntime.sleep(60)\n"), timeout=1.0)
    assert outcome.status == "timeout"
    assert outcome.run.seconds < 5


def test_crashing_script_reports_its_error(card, tmp_path):
    outcome = practice.check(card, write(tmp_path, "print(1)\n1 / 0\n"))
    assert outcome.status == "crashed"
    assert "ZeroDivisionError" in outcome.run.stderr


def test_flooding_script_is_stopped_and_capped(card, tmp_path):
    outcome = practice.check(card, write(tmp_path, "while True:\n    print('x' * 10000)\n"), timeout=5.0)
    assert outcome.status == "flooded"
    assert len(outcome.run.stdout) <= practice.MAX_OUTPUT


def test_silent_script(card, tmp_path):
    assert practice.check(card, write(tmp_path, "x = 1\n")).status == "silent"


def test_script_cannot_read_stdin(card, tmp_path):
    outcome = practice.check(card, write(tmp_path, "print(input())\n"), timeout=5.0)
    assert outcome.status == "crashed"
    assert "EOFError" in outcome.run.stderr


def test_cli_start_then_check(cli, tmp_path, card):
    target = tmp_path / "model.py"
    result = cli("practice", "start", "-o", str(target), "--lang", "tr")
    assert result.exit_code == 0, result.stderr
    starter = target.read_text(encoding="utf-8")
    assert "# Verilen ayarlarla gömme" in starter
    assert starter.endswith(card.code["tr"]) and "# buraya yaz" in starter
    assert cli("practice", "start", "-o", str(target), "--lang", "tr").exit_code == 0  # as written: replaced
    assert target.read_text(encoding="utf-8") == starter
    unedited = cli("practice", "check", str(target))  # issue 21: the starter as written records nothing
    assert unedited.exit_code == 1
    assert "is the starter code as written" in unedited.stdout and "Nothing was recorded." in unedited.stdout
    from bertdrill.adapters.store import Store
    assert Store.open().answers() == []
    target.write_text(starter + "\n# thinking...\n", encoding="utf-8")  # a comment added is still the starter
    assert "Nothing was recorded." in cli("practice", "check", str(target)).stdout
    target.write_text(starter + "x = 1\n", encoding="utf-8")
    refused = cli("practice", "start", "-o", str(target))  # the learner wrote in it: theirs, never replaced
    assert refused.exit_code == 1 and "is not a file bertdrill wrote; use --force" in refused.stderr
    assert target.read_text(encoding="utf-8") == starter + "x = 1\n"
    failed = cli("practice", "check", str(target))
    assert failed.exit_code == 1
    assert "✗ Your script printed nothing." in failed.stdout
    target.write_text(card.solution["tr"], encoding="utf-8")
    passed = cli("practice", "check", "count-bert-base", str(target))
    assert passed.exit_code == 0
    assert passed.stdout.startswith("✓ Correct")


def test_cli_check_missing_script(cli, tmp_path):
    result = cli("practice", "check", str(tmp_path / "nope.py"))
    assert (result.exit_code, result.stderr.strip()) == (1, f"Error: {tmp_path / 'nope.py'}: no such script")


def test_cli_output_is_sanitised(cli, tmp_path):
    script = write(tmp_path, 'print("\\x1b[2J\\x1b[31m[bold]red[/bold]")\n')
    result = cli("practice", "check", str(script))
    assert "\x1b" not in result.stdout
    assert "[bold]red[/bold]" in result.stdout


def test_what_the_script_started_does_not_outlive_it(card, tmp_path):
    pid_file = tmp_path / "child.pid"
    script = ("import subprocess, sys\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n" + card.solution["en"])
    assert practice.check(card, write(tmp_path, script)).status == "passed"
    assert _gone(int(pid_file.read_text()))


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie has ended: only its exit status is left). The process can be
    reaped between opening its status and reading it (ESRCH): that is ended too."""
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def _gone(pid: int, seconds: float = 5.0) -> bool:
    """Whether process ``pid`` has ended, or ends within ``seconds``."""
    deadline = time.monotonic() + seconds
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _running(pid)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "sigterm", "sigkill"])
def test_stopping_bertdrill_ends_the_learners_script(tmp_path, how):
    """Ctrl-C (or a kill) during `practice check` must not leave a `while True: pass` spinning with parent 1."""
    pid_file = tmp_path / "script.pid"
    script = write(tmp_path, f"import os\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\nwhile True:\n    pass\n")
    # its temporary folder in ours: a killed bertdrill cannot remove it, and a test leaves nothing in /tmp
    checker = subprocess.Popen([sys.executable, "-m", "bertdrill", "practice", "check", str(script)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        script_pid = int(pid_file.read_text())
        checker.send_signal(how)  # to bertdrill only: the script runs in a session of its own
        checker.wait(timeout=10)
        assert _gone(script_pid), f"the script (pid {script_pid}) outlived bertdrill stopped by {how.name}"
    finally:
        checker.kill()
        if pid_file.exists() and pid_file.read_text() and not _gone(int(pid_file.read_text()), 0):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


# --- issue 21: practice check gets the review's help ------------------------------------------

def test_the_right_numbers_formatted_otherwise(card, tmp_path):
    script = ('print("embeddings: 23,837,184  layer: 7,087,872  pooler: 590,592")\n'
              'print("total: 109,482,240")\nprint("share: 0.666")\n')
    outcome = practice.check(card, write(tmp_path, script))
    assert (outcome.status, outcome.passed, outcome.grade) == ("formatting", True, 4)
    turkish = 'print("23.837.184 7.087.872 590.592")\nprint("109.482.240")\nprint("0,666")\n'
    assert practice.check(card, write(tmp_path, turkish), language="tr").status == "formatting"
    assert practice.check(card, write(tmp_path, script.replace("590,592", "590,593"))).status == "wrong"


def test_a_wrong_number_is_diagnosed_from_the_formulas(card, tmp_path, cli):
    from bertdrill.core.diagnosis import Diagnoser

    script = write(tmp_path, card.solution["en"].replace("layer = 4 * (d * d + d)", "layer = 3 * (d * d + d)"))
    outcome = practice.check(card, script, diagnoser=Diagnoser.for_lesson(load_lessons()[0]))
    assert outcome.status == "wrong"
    assert outcome.notes[:2] == (
        "6,497,280 is one encoder layer of BERT-base with 3 * (d * d + d) for 4 * (d * d + d) in one attention "
        "block, not one encoder layer.",
        "102,395,136 is the total of BERT-base with 3 * (d * d + d) for 4 * (d * d + d) in one attention block, "
        "not the total.")
    result = cli("practice", "check", "--lang", "tr", str(script))
    assert "6.497.280, dikkat bloğu içinde 4 * (d * d + d) yerine 3 * (d * d + d) ile" in result.stdout
    formatted = cli("practice", "check", str(write(tmp_path, 'print("23,837,184 7,087,872 590,592")\n'
                                                                'print(109482240)\nprint(0.666)\n', "f.py")))
    assert formatted.exit_code == 0
    assert formatted.stdout.startswith("✓ The numbers are right; only the formatting differs.")
