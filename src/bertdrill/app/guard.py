"""The guard between bertdrill and a practice script: it runs the script and ends everything the script starts.

Run as its own small program (``python -I guard.py PARENT MEMORY OUTPUT SCRIPT``, the standard library
only, so isolated mode finds it wherever bertdrill is installed), because what it does must outlive a
bertdrill that is killed:

- it is a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``): every process the script starts, however
  it detaches (a double fork, ``setsid``, a daemon), is adopted by the guard when its parent ends,
  never by init, so the guard can always find it;
- when the script ends, when bertdrill asks it to stop (SIGTERM, SIGINT, SIGHUP), or when bertdrill dies
  (``PR_SET_PDEATHSIG`` turns that into a SIGTERM for the guard), it kills every descendant with SIGKILL
  and reaps it, again until none is left, then exits with the script's status;
- the script runs under limits the kernel enforces: address space (``RLIMIT_AS``: an allocation beyond
  it is a ``MemoryError``, not a machine out of memory), the size of any file it writes, its output
  included (``RLIMIT_FSIZE``), and no core dumps.

What it cannot contain: a script that kills the guard itself (its parent) before ending; its children are
then adopted by init. bertdrill's own checks (time, output) still end the script.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import time

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
PR_SET_CHILD_SUBREAPER = 36
STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def main(argv: list[str]) -> int:
    parent, memory, output, script = int(argv[1]), int(argv[2]), int(argv[3]), argv[4]
    _prctl(PR_SET_CHILD_SUBREAPER, 1)  # elsewhere than Linux: the script's process group is all bertdrill ends
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        return 125  # bertdrill ended before the death signal was asked for
    for number in STOPPING:
        signal.signal(number, _stop)
    script_pid = os.fork()
    if script_pid == 0:
        _become_script(script, memory, output)
    status = _wait_for(script_pid)
    end_everything()
    return os.waitstatus_to_exitcode(status) if status >= 0 else 1


def _prctl(option: int, value: int) -> bool:
    try:
        done: int = ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)  # ctypes calls are untyped
        return done == 0
    except (OSError, AttributeError):
        return False


def _become_script(script: str, memory: int, output: int) -> None:
    """In the forked child: the limits, default signals, then the script in this Python, isolated."""
    try:
        for number in STOPPING:
            signal.signal(number, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (output, output))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.execv(sys.executable, [sys.executable, "-I", script])
    finally:
        os._exit(126)  # exec failed


def _wait_for(script_pid: int) -> int:
    """The script's wait status, reaping whatever else ends meanwhile (adopted orphans)."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return -1
        if pid == script_pid:
            return status


def end_everything() -> None:
    """Kill every descendant, and again whatever is adopted meanwhile, until the guard has no child."""
    while True:
        for pid in _children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            reaped, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not reaped:
            time.sleep(0.002)  # killed ones are still dying, or one was adopted after the list was read


def _children() -> list[int]:
    """This process's children, from /proc (the kernel's list, else every process's parent)."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as listed:
            return [int(pid) for pid in listed.read().split()]
    except OSError:
        pass
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry}/stat") as stat:
                    # "pid (name) state ppid ...": the name may hold spaces and parentheses
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == me:
                        found.append(int(entry))
    return found


def _stop(number: int, frame: object) -> None:
    end_everything()
    os._exit(128 + number)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
