"""Check a learner's practice script: run it, compare its output with what the formulas predict.

The script runs with the current Python in a subprocess of its own: isolated
mode, no standard input, a temporary working folder, a time limit, and a cap on
how much output is kept. A script that hangs, crashes, floods the terminal or
prints nothing gets a clear report; bertdrill itself never fails with it.

Between bertdrill and the script stands a guard (:mod:`bertdrill.app.guard`): it adopts everything the
script starts, however detached, and ends it all when the script ends, when bertdrill stops it, or when
bertdrill is killed; the kernel caps the script's memory and the size of what it writes.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import IO, assert_never

from bertdrill.core import formula
from bertdrill.core.cards import PracticeCard
from bertdrill.core.diagnosis import Diagnoser, describe
from bertdrill.core.errors import BertdrillError
from bertdrill.core.grading import parse_number
from bertdrill.core.i18n import _
from bertdrill.core.numbers import format_number

TIMEOUT = 10.0
MAX_OUTPUT = 64 * 1024  # bytes of standard output kept; more than this is a flood
MAX_STDERR = 8 * 1024
MAX_MEMORY = 1024**3  # bytes of address space: a larger allocation is the script's MemoryError
MAX_FILE = 1024**2  # bytes any file the script writes may reach, its output included (the kernel stops it there)
POLL = 0.02
GRACE = 2.0  # seconds the guard has to end the script's processes before it is killed itself
GUARD = Path(__file__).with_name("guard.py")


@dataclass(frozen=True)
class Run:
    """What a script did: its output (decoded, capped) and how it ended."""

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool
    flooded: bool
    seconds: float


class Status(StrEnum):
    """What became of one attempt."""

    PASSED = "passed"  # printed the expected output
    FORMATTING = "formatting"  # printed the right numbers, formatted otherwise
    WRONG = "wrong"  # ran, and printed something else
    TIMEOUT = "timeout"  # did not finish within the time limit
    CRASHED = "crashed"  # stopped with an error
    FLOODED = "flooded"  # printed far too much
    SILENT = "silent"  # printed nothing

    @property
    def grade(self) -> int:
        """The SM-2 grade the attempt records: 5 passed, 4 right numbers formatted otherwise, 2 ran but
        wrong, 1 did not run properly."""
        match self:
            case Status.PASSED:
                return 5
            case Status.FORMATTING:
                return 4
            case Status.WRONG:
                return 2
            case Status.TIMEOUT | Status.CRASHED | Status.FLOODED | Status.SILENT:
                return 1
            case unreachable:
                assert_never(unreachable)


@dataclass(frozen=True)
class Outcome:
    """The verdict on one attempt."""

    status: Status
    expected: tuple[str, ...]
    actual: tuple[str, ...]
    run: Run
    notes: tuple[str, ...] = ()  # what each wrong number is, from the lesson's formulas

    @property
    def passed(self) -> bool:
        """The right numbers: printed as expected, or only formatted otherwise."""
        return self.status in (Status.PASSED, Status.FORMATTING)

    def diff(self) -> list[str]:
        """A unified diff of the expected output against the script's."""
        return list(difflib.unified_diff(list(self.expected), list(self.actual), _("expected"), _("your output"),
                                         lineterm=""))

    @property
    def grade(self) -> int:
        """The SM-2 grade this attempt records (:attr:`Status.grade`)."""
        return self.status.grade


def run_script(script: Path, *, timeout: float = TIMEOUT, max_output: int = MAX_OUTPUT) -> Run:
    """Run ``script`` with this Python, killing it (and anything it started) at the limits."""
    if not script.is_file():
        raise BertdrillError((_("{script}: no such script") if not script.exists() else _("{script}: not a file"))
                             .format(script=script))
    with tempfile.TemporaryDirectory(prefix="bertdrill-practice-") as folder, \
            tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-I", str(GUARD), str(os.getpid()), str(MAX_MEMORY), str(max(MAX_FILE, max_output + 1)),
             str(script.resolve())],
            stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=folder,
            start_new_session=True,  # its own process group: a Ctrl-C meant for bertdrill is bertdrill's to pass on
            env={**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1"},
        )
        timed_out = flooded = False
        try:
            with _terminate_as_interrupt():
                while process.poll() is None:
                    if time.monotonic() - started > timeout:
                        timed_out = True
                    elif os.fstat(out.fileno()).st_size > max_output:
                        flooded = True
                    if timed_out or flooded:
                        break
                    time.sleep(POLL)
        finally:
            # Every path ends the script's whole group: its limits, its end, Ctrl-C, SIGTERM, an error here.
            _end_group(process)
        seconds = time.monotonic() - started
        flooded = flooded or os.fstat(out.fileno()).st_size > max_output
        return Run(_read(out, max_output), _read(err, MAX_STDERR), process.returncode, timed_out, flooded, seconds)


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """While a script runs, SIGTERM unwinds like Ctrl-C, so the ``finally`` above still ends the script."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """Have the guard end the script and everything it started; kill its group if it does not, and reap it."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(GRACE)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()  # the group is gone already; the guard itself may still need reaping
    process.wait()


def _read(stream: IO[bytes], limit: int) -> str:
    stream.seek(0)
    return stream.read(limit).decode("utf-8", errors="replace")


def check(card: PracticeCard, script: Path, *, language: str = "en", diagnoser: Diagnoser | None = None,
          timeout: float = TIMEOUT, max_output: int = MAX_OUTPUT) -> Outcome:
    """Run a learner's script for a practice card and judge its output line by line.

    The right numbers printed another way (``23,837,184``, a label before them) are "formatting";
    with the lesson's ``diagnoser`` each wrong number is explained, as in a review.
    """
    run = run_script(script, timeout=timeout, max_output=max_output)
    expected = card.expected_output
    actual = tuple(line.rstrip() for line in run.stdout.rstrip("\n").splitlines()) if run.stdout.strip() else ()
    notes: tuple[str, ...] = ()
    if run.timed_out:
        status = Status.TIMEOUT
    elif run.flooded:
        status = Status.FLOODED
    elif run.returncode != 0:
        status = Status.CRASHED
    elif not actual:
        status = Status.SILENT
    elif same_output(expected, actual):
        status = Status.PASSED
    elif _numbers(expected, "en") == _numbers(actual, language) or _numbers(expected, "en") == _numbers(actual, "en"):
        status = Status.FORMATTING
    else:
        status = Status.WRONG
        notes = _diagnosed(card, actual, language, diagnoser)
    return Outcome(status, expected, actual, run, notes)


def is_starter(card: PracticeCard, script: Path) -> bool:
    """Whether ``script`` is the exercise's starter code as written, in any language: nothing to judge yet."""
    try:
        text = script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return any(_code_lines(text) == _code_lines(code) for code in card.code.values())


def _code_lines(text: str) -> list[str]:
    """Code without comments, blank lines or trailing spaces: what a learner would have edited."""
    return [line.rstrip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


_NUMBER_TOKEN = re.compile(r"[-+]?[0-9](?:[0-9,._]*[0-9])?")


def _numbers(lines: tuple[str, ...], language: str) -> list[Fraction | None]:
    """Every number printed, in order, read in ``language``'s convention (``23,837,184``, ``0,666``)."""
    return [parse_number(token, language) for line in lines for token in _NUMBER_TOKEN.findall(line)]


def _diagnosed(card: PracticeCard, actual: tuple[str, ...], language: str,
               diagnoser: Diagnoser | None) -> tuple[str, ...]:
    """A sentence for each wrong number, when the script printed as many numbers as expected."""
    names = [name for line in card.expected_expressions for name in line]
    want = _numbers(card.expected_output, "en")
    got = _numbers(actual, language)
    if diagnoser is None or len(got) != len(want) or len(names) != len(want):
        return ()
    notes = []
    shown = diagnoser.named(language)
    for name, expected, value in zip(names, want, got):
        if value is None or value == expected:
            continue
        named = name if name in diagnoser.formulas else None
        exact = diagnoser.value(name, card.set_name) if named else expected
        found = diagnoser.diagnose(formula._normalise(value), expected=exact, name=named, set_name=card.set_name)
        if found is not None:
            notes.append(describe(found, shown=format_number(formula._normalise(value), language),
                                  expected_name=named, names=shown))
    return tuple(notes)


def check_solutions(card: PracticeCard, *, timeout: float = TIMEOUT,
                    max_output: int = MAX_OUTPUT) -> list[tuple[str, Outcome]]:
    """Run the lesson's own sample solution in each language, as a learner's script is run (same limits,
    same judge); the (language, outcome) pairs that do not print what the formulas predict."""
    failed = []
    with tempfile.TemporaryDirectory(prefix="bertdrill-solution-") as folder:
        for language, solution in card.solution.items():
            script = Path(folder) / f"solution_{language}.py"
            script.write_text(solution, encoding="utf-8")
            outcome = check(card, script, timeout=timeout, max_output=max_output)
            if not outcome.passed:
                failed.append((language, outcome))
    return failed


def same_output(expected: tuple[str, ...], actual: tuple[str, ...]) -> bool:
    """Line by line, word by word; numbers compare by value, so ``0.6660`` matches ``0.666``."""
    if len(expected) != len(actual):
        return False
    for want_line, got_line in zip(expected, actual):
        want, got = want_line.split(), got_line.split()
        if len(want) != len(got) or not all(_same_token(w, g) for w, g in zip(want, got)):
            return False
    return True


def _same_token(want: str, got: str) -> bool:
    if want == got:
        return True
    try:
        return Fraction(want) == Fraction(got)
    except (ValueError, ZeroDivisionError):
        return False
