"""The practice runner contains everything it starts (issue 23): a script's descendants, however detached,
end with it, and with a killed bertdrill; its memory and what it writes are capped by the kernel."""

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

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the guard's subreaper is Linux's")

# Forks, the child starts a new session and forks again, the middle one exits: the grandchild is a
# daemon, adopted by whoever reaps orphans. It says its pid, then writes into the script's output forever.
DAEMON = """\
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open({pids!r}, "a") as f:
            f.write(f"{{os.getpid()}}\\n")
        while True:
            print("still here", flush=True)
            time.sleep(0.05)
    os._exit(0)
time.sleep({wait})
print("done")
"""


@pytest.fixture(scope="module")
def card():
    [card] = [c for c in all_cards(load_lessons()) if c.kind == "practice"]
    return card


def daemon_script(tmp_path: Path, wait: float = 0.5) -> tuple[Path, Path]:
    pids = tmp_path / "pids.txt"
    script = tmp_path / "daemon.py"
    script.write_text(DAEMON.format(pids=str(pids), wait=wait), encoding="utf-8")
    return script, pids


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def written_pids(pids: Path, timeout: float = 10) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pids.exists() and pids.read_text().endswith("\n"):
            return [int(line) for line in pids.read_text().split()]
        time.sleep(0.02)
    raise AssertionError("the script's daemon never started")


def gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_double_forked_setsid_daemon_ends_with_the_script(card, tmp_path):
    script, pids = daemon_script(tmp_path)
    outcome = practice.check(card, script)
    (daemon,) = written_pids(pids)
    assert not alive(daemon)  # before: it kept printing into the unlinked output file, for ever
    assert outcome.status == "wrong" and "done" in outcome.actual


def test_a_daemon_ends_when_the_script_times_out(card, tmp_path):
    script, pids = daemon_script(tmp_path, wait=60)
    outcome = practice.check(card, script, timeout=1.0)
    (daemon,) = written_pids(pids)
    assert outcome.status == "timeout" and not alive(daemon)


def test_everything_ends_when_bertdrill_is_killed(tmp_path):
    script, pids = daemon_script(tmp_path, wait=60)
    env = dict(os.environ, BERTDRILL_HOME=str(tmp_path / "home"), BERTDRILL_DB=str(tmp_path / "home" / "b.db"),
               PYTHONPATH=os.pathsep.join(sys.path))
    bertdrill = subprocess.Popen([sys.executable, "-m", "bertdrill", "practice", "check", str(script)], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        (daemon,) = written_pids(pids, timeout=30)
        bertdrill.send_signal(signal.SIGKILL)
    finally:
        bertdrill.kill()
        bertdrill.wait()
    assert gone(daemon)  # before: the daemon (and the script itself) outlived a SIGKILLed bertdrill


def test_memory_is_capped_by_the_kernel(card, tmp_path):
    script = tmp_path / "greedy.py"
    script.write_text("block = bytearray(4 * 1024**3)\nprint(len(block))\n", encoding="utf-8")
    outcome = practice.check(card, script)
    assert outcome.status == "crashed" and "MemoryError" in outcome.run.stderr


def test_a_file_the_script_writes_is_capped_by_the_kernel(card, tmp_path):
    target = tmp_path / "big.bin"
    script = tmp_path / "writer.py"
    script.write_text(f"with open({str(target)!r}, 'wb') as f:\n    f.write(b'x' * (64 * 1024**2))\n",
                      encoding="utf-8")
    outcome = practice.check(card, script)
    assert outcome.status == "crashed" and target.stat().st_size <= practice.MAX_FILE
