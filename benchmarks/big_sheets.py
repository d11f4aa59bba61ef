"""Quiz sheets from the 1M-review store's lessons (100,000 cards): a teacher's 20 questions for each of 30 students,
and every item on one sheet, each beside ``tomllib`` parsing the same lesson files, in turns.

    python benchmarks/big_sheets.py --store DB [--runs 3]

``DB`` is a store ``review.build_store`` made (its lessons in the folder ``review.lessons_of`` names); without
``--store`` one is built in a fresh folder (about 100 s). The lessons are verified and cached by a first run (the
warm-up turn), so each run reads them from the cache. Targets (issue 25): CPU time at most 5x the parse
(``check``'s target: drawing and writing a sheet should cost about what reading the lessons does) and peak memory
under 200 MB. The drawn sheet took over 8 minutes (session 7); the sheet of every item, as Moodle XML, 4.97 GB.
benchmarks/run.py prints these rows in its table too.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from review import build_store, lessons_of  # noqa: E402
from startup import PYTHON, Run, bertdrill, environment, in_turns, measure  # noqa: E402


def sheet_rows(db: Path, runs: int, *, every: bool = True) -> list[tuple[str, Run, str, Run, float]]:
    """``sheet --students 30 -c 20`` and (``every``) ``sheet`` of every item of the store's lessons as a Moodle bank
    (750 MB of XML, under a minute) and as GIFT, against tomllib parsing them."""
    env = environment(BERTDRILL_DB=str(db), BERTDRILL_CACHE=str(db.parent / "store-cache"))
    lessons = lessons_of(db)
    files = sorted(map(str, lessons.glob("*.toml")))
    parse = "import sys, tomllib\nfor name in sys.argv[1:]: tomllib.load(open(name, 'rb'))"
    out = db.parent / "sheets"
    out.mkdir(exist_ok=True)

    def sheet(name: str, *options: str) -> Run:
        return measure(bertdrill() + ["sheet", str(lessons), "-o", str(out / name), "--seed", "1", "--force",
                                      *options], env)
    jobs = [lambda: measure([PYTHON, "-c", parse, *files], env),
            lambda: sheet("class.md", "--students", "30", "--count", "20")]
    banks = [("Moodle XML", "bank.xml"), ("GIFT", "bank.gift")] if every else []
    anchor, drawn, *written = in_turns(runs, *jobs, *(functools.partial(sheet, name) for _format, name in banks))
    rows: list[tuple[str, Run, str, Run, float]] = [("sheet --students 30 --count 20 of the lessons", drawn, "tomllib parsing them", anchor, 5)]
    return rows + [(f"sheet of every item, {bank}", run, "tomllib parsing them", anchor, 5)
                   for (bank, _name), run in zip(banks, written)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, metavar="DB", help="a store review.build_store made (else one is built)")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is shown)")
    args = parser.parse_args()
    db = args.store
    if db is None:
        db = Path(tempfile.mkdtemp(prefix="bertdrill-sheets-")) / "big.db"
        build_store(db)
    print(f"sheet on {db}: load average {os.getloadavg()[0]:.1f}; medians of {args.runs} runs", flush=True)
    for name, run, anchor_name, anchor, target in sheet_rows(db, args.runs):
        ratio = run.cpu / anchor.cpu
        print(f"  {name}: CPU {run.cpu:.2f} s (wall {run.wall:.2f} s, peak {run.peak_mb:.0f} MB) against "
              f"{anchor_name} CPU {anchor.cpu:.2f} s: ratio {ratio:.2f} (target <= {target}: "
              f"{'PASS' if ratio <= target else 'MISS'}); peak {run.peak_mb:.0f} MB (target < 200 MB: "
              f"{'PASS' if run.peak_mb < 200 else 'MISS'})", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
