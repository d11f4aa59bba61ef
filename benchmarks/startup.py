"""Starting on big lessons: the first card of ``review``, ``status``, ``stats`` and ``check`` with 100,000
items in lesson files, and the whole ``export anki`` command, each beside its anchor in the same run.

    python benchmarks/startup.py [--items 100000] [--per-file 10000] [--runs 5]

``--items`` items are written as lesson files of ``--per-file`` items each (benchmarks/lessons.py's
generator: every kind, both languages; 10,000 items make 2.7 MB, under the 5 MB a file may hold), into
a fresh folder with a fresh database and lesson cache. One ``status`` runs first: it verifies the
lessons, keeps them in the cache and syncs the store, as a learner's first run does. Then, in turns
(so each command and its anchor meet the same load on a shared machine), medians of ``--runs``:

1. ``status``, ``stats`` and ``review`` until "Card 1 of" is on its output, each against
   ``python -c "import sqlmodel"`` (target <= 2): the lessons have not changed, so they are read from
   the cache, not parsed and verified again;
2. ``check`` of the same files against ``tomllib`` parsing them (target <= 5), with the cache; and
   ``check`` with no cache at all (every file parsed and verified, what an edited lesson costs), for
   reference.

Each command's own CPU time and peak memory (from ``wait4``) is printed beside its wall time: on a
machine shared with other work, CPU time moves less with the load than wall time does.
benchmarks/run.py prints these rows in its table too.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lessons import generated_lesson  # noqa: E402

PYTHON = sys.executable
NOW = "2025-03-01T09:00:00+00:00"


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    cpu: float  # seconds, user + system, of the process and the children it waited for
    peak_mb: float  # the largest resident set, in MB

    @staticmethod
    def median(runs: list[Run]) -> Run:
        return Run(statistics.median(run.wall for run in runs), statistics.median(run.cpu for run in runs),
                   max(run.peak_mb for run in runs))


def bertdrill() -> list[str]:
    script = Path(PYTHON).with_name("bertdrill")
    return [str(script)] if script.exists() else [PYTHON, "-m", "bertdrill"]


def environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ, NO_COLOR="1", BERTDRILL_NOW=NOW, PYTHONUNBUFFERED="1", **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode is written, as an installed copy has it
    return env


# Linux counts a child's peak memory from the moment it was forked, when it held its parent's pages: every command
# this process (a store of a million answers built in it: 300 MB) starts would show 300 MB. So a small process
# starts the command and sends back the command's own CPU time and peak memory (the wall time is ours: the same
# few milliseconds more for a command and its anchor).
LAUNCHER = """import os, sys
child = os.fork()
if child == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_pid, status, usage = os.wait4(child, 0)
os.write(int(sys.argv[1]), f"{usage.ru_utime + usage.ru_stime} {usage.ru_maxrss}".encode())
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measure(command: list[str], env: dict[str, str], *, until: bytes | None = None, stdin: bytes = b"") -> Run:
    """Run ``command`` to its end; its wall time (to the first ``until`` on its output, if given), CPU and memory."""
    report, reported = os.pipe()
    began = time.perf_counter()
    try:
        process = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, str(reported), *command], env=env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   pass_fds=(reported,))
    finally:
        os.close(reported)
    assert process.stdin is not None and process.stdout is not None
    if stdin:
        process.stdin.write(stdin)
    process.stdin.close()
    seen, wall = bytearray(), None
    while chunk := os.read(process.stdout.fileno(), 1 << 16):
        seen += chunk
        if until is not None and wall is None and until in seen:
            wall = time.perf_counter() - began
    process.wait()
    ended = time.perf_counter() - began
    with os.fdopen(report, "rb") as reading:
        cpu, peak = reading.read().split()
    if until is not None and wall is None:
        raise SystemExit(f"{' '.join(command)}: {until.decode()!r} never shown:\n{seen.decode()[-2000:]}")
    if process.returncode not in (0, 1) or (until is None and process.returncode):
        raise SystemExit(f"{' '.join(command)} exited {process.returncode}:\n{seen.decode()[-2000:]}")
    return Run(wall if wall is not None else ended, float(cpu), int(peak) / 1024)


def in_turns(runs: int, *jobs) -> list[Run]:
    """Each job (a function returning a :class:`Run`) once to warm up, then ``runs`` times in turns."""
    for job in jobs:
        job()
    found: list[list[Run]] = [[] for _ in jobs]
    for _ in range(runs):
        for index, job in enumerate(jobs):
            found[index].append(job())
    return [Run.median(each) for each in found]


def write_lessons(folder: Path, items: int, per_file: int) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for number, start in enumerate(range(0, items, per_file)):
        path = folder / f"generated-{number:03d}.toml"
        path.write_text(generated_lesson(min(per_file, items - start), f"generated-{number:03d}"), encoding="utf-8")
        paths.append(path)
    return paths


def shown(name: str, run: Run, anchor_name: str, anchor: Run, target: float) -> str:
    """A row, judged by CPU time (user + system): on a machine shared with other work it moves far less with
    the load than wall time does."""
    ratio = run.cpu / anchor.cpu
    return (f"  {name}: CPU {run.cpu * 1000:,.0f} ms (wall {run.wall * 1000:,.0f} ms, peak {run.peak_mb:.0f} MB) "
            f"against {anchor_name} CPU {anchor.cpu * 1000:,.0f} ms (wall {anchor.wall * 1000:,.0f} ms): CPU ratio "
            f"{ratio:.2f}, wall ratio {run.wall / anchor.wall:.2f}; target <= {target:g}: "
            f"{'PASS' if ratio <= target else 'MISS'}")


def lesson_rows(folder: Path, items: int, per_file: int, runs: int) -> list[tuple[str, Run, str, Run, float]]:
    """The rows of this benchmark: (name, figure, anchor name, anchor, target) each."""
    lessons = folder / "lessons"
    paths = write_lessons(lessons, items, per_file)
    size = sum(path.stat().st_size for path in paths)
    blocked = folder / "no-cache"
    blocked.write_text("a file, so no cache folder can be made under it\n")
    env = environment(BERTDRILL_HOME=str(folder / "home"), BERTDRILL_CACHE=str(folder / "cache"))
    uncached = dict(env, BERTDRILL_CACHE=str(blocked / "cache"))
    files = ["--file", str(lessons)]
    began = time.perf_counter()
    # the first review (a writer: readers never write) verifies the lessons, keeps them and syncs the store
    first = measure(bertdrill() + ["review", *files], env, until=b"Card 1 of", stdin=b":quit\n")
    print(f"  ({items:,} items in {len(paths)} files, {size / 1e6:.1f} MB; the first review verified, cached and "
          f"synced them in {time.perf_counter() - began:.1f} s, CPU {first.cpu:.1f} s, peak {first.peak_mb:.0f} MB)",
          flush=True)
    sqlmodel = lambda: measure([PYTHON, "-c", "import sqlmodel"], env)  # noqa: E731
    status = lambda: measure(bertdrill() + ["status", *files], env)  # noqa: E731
    stats = lambda: measure(bertdrill() + ["stats", *files], env)  # noqa: E731
    review = lambda: measure(bertdrill() + ["review", *files], env, until=b"Card 1 of", stdin=b":quit\n")  # noqa: E731
    anchor, *figures = in_turns(runs, sqlmodel, status, stats, review)
    parse = "import sys, tomllib\nfor name in sys.argv[1:]: tomllib.load(open(name, 'rb'))"
    toml = lambda: measure([PYTHON, "-c", parse, *map(str, paths)], env)  # noqa: E731
    check = lambda: measure(bertdrill() + ["check", str(lessons)], env)  # noqa: E731
    tomllib_run, check_run = in_turns(max(1, runs // 2), toml, check)
    (cold,) = in_turns(1, lambda: measure(bertdrill() + ["check", str(lessons)], uncached))
    thousand = f"{items // 1000:,}k items in lesson files"
    return [
        (f"status, {thousand}", figures[0], "import sqlmodel", anchor, 2),
        (f"stats, {thousand}", figures[1], "import sqlmodel", anchor, 2),
        (f"review to its first card, {thousand}", figures[2], "import sqlmodel", anchor, 2),
        (f"check, {thousand}", check_run, "tomllib parsing them", tomllib_run, 5),
        (f"check, {thousand}, no cache", cold, "tomllib parsing them", tomllib_run, 5),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--per-file", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bertdrill-startup-"))
    try:
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
        for row in lesson_rows(folder, args.items, args.per_file, args.runs):
            print(shown(*row), flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
