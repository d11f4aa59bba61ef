"""How fast are FSRS and its tools? Answering with FSRS, switching scheduler, and stats --calibration.

    python benchmarks/scheduling.py [--cards 100000] [--reviews 1000000] [--answers 1000]

On review.py's store of 100,000 cards and 1,000,000 logged answers (1,000 days of them):

1. ``bertdrill scheduler fsrs``: every card's state rebuilt by replaying its log through FSRS,
   in one transaction; beside ``bertdrill scheduler sm2`` on the same store, which replays the
   same log through SM-2 (the baseline; target: FSRS under 60 s);
2. ``bertdrill stats --calibration``: both schedulers replayed and scored on the whole log
   (target: under 60 s), beside the same SM-2 replay;
3. answering 1,000 fact cards through the scripted review with FSRS as the stored scheduler, per
   answer, beside the same review under SM-2 (target: 20 ms per answer);
4. FSRS fitted by fsrs-rs: ``scheduler fsrs --fit`` (reading the log, fitting, switching; target: the fit
   under 60 s), switching to the fitted set again (``--parameters 1``: the replay alone, target: at most
   twice ``scheduler fsrs``), and ``stats --workload``, a year simulated at each retention (target: 30 s);
5. answering 1,000 new cards on that store with the fitted set in use and the load balancer on (every answer
   balanced over the forecast of 100,000 cards), per answer (target: 20 ms).

benchmarks/run.py prints these rows in its table too.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lessons import _fact, generated_lesson  # noqa: E402
from review import build_store, lessons_of  # noqa: E402
from run import bertdrill, environment, scripted_review, seconds  # noqa: E402


def switch_and_calibration(db: Path) -> tuple[float, float, float]:
    """Seconds of ``scheduler fsrs``, of ``scheduler sm2`` (back) and of ``stats --calibration`` on ``db``
    (wall time; the CPU time of each, which a loaded machine inflates less, is printed as it goes)."""
    env = environment(BERTDRILL_DB=str(db))
    times = []
    for command in (["scheduler", "fsrs"], ["scheduler", "sm2"], ["stats", "--calibration", "--file", str(lessons_of(db))]):
        cpu, began = _children_cpu(), time.perf_counter()
        shown = subprocess.run(bertdrill() + command, env=env, capture_output=True, text=True, check=True).stdout
        times.append(time.perf_counter() - began)
        said = shown.splitlines()[0 if command[0] == "scheduler" else 2]  # what was replayed, or scored
        print(f"  (bertdrill {' '.join(command)}: {times[-1]:.1f} s, {_children_cpu() - cpu:.1f} s of CPU; "
              f"{said})", flush=True)
    return times[0], times[1], times[2]


def fitted(db: Path) -> tuple[float, float, float]:
    """Seconds of ``scheduler fsrs --fit``, of switching back to that fitted set from the defaults (the replay
    alone), and of ``stats --workload`` on ``db``."""
    env = environment(BERTDRILL_DB=str(db))
    times = []
    for command in (["scheduler", "fsrs", "--fit"], ["scheduler", "fsrs", "--parameters", "default"],
                    ["scheduler", "fsrs", "--parameters", "1"], ["stats", "--workload", "--file", str(lessons_of(db))]):
        cpu, began = _children_cpu(), time.perf_counter()
        shown = subprocess.run(bertdrill() + command, env=env, capture_output=True, text=True, check=True).stdout
        times.append(time.perf_counter() - began)
        print(f"  (bertdrill {' '.join(command)}: {times[-1]:.1f} s, {_children_cpu() - cpu:.1f} s of CPU; "
              f"{shown.splitlines()[0][:100]})", flush=True)
    return times[0], times[2], times[3]


def answering_fitted(folder: Path, db: Path, count: int) -> tuple[float, float]:
    """Seconds per answer of the scripted review of ``count`` new fact cards on ``db`` (the big store, with the
    fitted set in use and the load balancer on, as by default: every answer balanced over the forecast of its
    100,000 cards), wall time from the first card to the last ``Saved:``; and the whole command's CPU seconds per
    answer (start-up, sync and the forecast included)."""
    lesson = folder / "fitted-facts.toml"
    lesson.write_text(generated_lesson(0, "fitted-facts") + "".join(_fact(i) for i in range(count)), encoding="utf-8")
    cpu = _children_cpu()
    wall = scripted_review(lesson, db, count)
    return wall, (_children_cpu() - cpu) / count


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def answering(folder: Path, count: int, runs: int) -> tuple[float, float]:
    """Seconds per answer of the scripted review with FSRS stored as the scheduler, and with SM-2."""
    lesson = folder / "facts.toml"  # fact cards only: one grade line each, whatever the review asks of other kinds
    lesson.write_text(generated_lesson(0, "facts") + "".join(_fact(i) for i in range(count)), encoding="utf-8")
    with_fsrs, with_sm2 = [], []
    for run in range(runs):
        db = folder / f"fsrs-{run}.db"
        seconds(bertdrill() + ["scheduler", "fsrs"], environment(BERTDRILL_DB=str(db)))
        with_fsrs.append(scripted_review(lesson, db, count))
        with_sm2.append(scripted_review(lesson, folder / f"sm2-{run}.db", count))
    return statistics.median(with_fsrs), statistics.median(with_sm2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--answers", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bertdrill-scheduling-") as name:
        folder = Path(name)
        fsrs, sm2 = answering(folder, args.answers, args.runs)
        print(f"answer {args.answers:,} cards with FSRS: {fsrs * 1000:.2f} ms/answer "
              f"(SM-2: {sm2 * 1000:.2f} ms; target <= 20 ms)", flush=True)
        began = time.perf_counter()
        big = folder / "big.db"
        build_store(big, args.cards, args.reviews)
        print(f"(store of {args.cards:,} cards and {args.reviews:,} reviews built in "
              f"{time.perf_counter() - began:.0f} s)", flush=True)
        to_fsrs, to_sm2, calibration = switch_and_calibration(big)
        print(f"scheduler fsrs: {to_fsrs:.1f} s (replaying the same log through SM-2: {to_sm2:.1f} s; "
              f"target < 60 s)")
        print(f"stats --calibration: {calibration:.1f} s (SM-2 replay {to_sm2:.1f} s; target < 60 s)")
        fit, to_fitted, workload = fitted(big)
        print(f"scheduler fsrs --fit: {fit:.1f} s, of which the switch is about {to_fitted:.1f} s (target: the fit "
              f"< 60 s)")
        print(f"switch to the fitted set: {to_fitted:.1f} s ({to_fitted / to_fsrs:.2f}x scheduler fsrs {to_fsrs:.1f} s; "
              f"target <= 2x)")
        print(f"stats --workload: {workload:.1f} s (target <= 30 s)")
        wall, cpu = answering_fitted(folder, big, args.answers)
        print(f"answer {args.answers:,} new cards on that store with the fitted set and the load balancer: "
              f"{wall * 1000:.2f} ms/answer ({cpu * 1000:.2f} ms of CPU per answer, the whole command; "
              f"target <= 20 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
