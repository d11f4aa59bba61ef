"""Listing every card: ``bertdrill cards`` and ``cards --json`` on the 100,000 cards of the 1M-review store's
lessons, each beside ``tomllib`` parsing the same lesson files, in turns.

    python benchmarks/listing.py --store DB [--runs 3]

``DB`` is a store ``review.build_store`` made (its lessons in the folder ``review.lessons_of`` names); without
``--store`` one is built in a fresh folder (about 100 s). The lessons are verified and cached by a first
``cards`` (the warm-up turn), so each run reads them from the cache, as a learner's second run does. The targets
(issue 25): CPU time at most 5x the parse (``check``'s target; printing the cards should cost about what reading
them does) and peak memory under 200 MB, with output to a pipe (read as it comes, as a terminal or ``less`` does).
A list of 100,000 cards was one rich table: 61 s and 723 MB, with nothing shown until the end; it is now
written as it is built, a lesson's cards at a time. benchmarks/run.py prints these rows in its table too.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from review import build_store, lessons_of  # noqa: E402
from startup import PYTHON, Run, bertdrill, environment, in_turns, measure  # noqa: E402


def listing_rows(db: Path, runs: int) -> list[tuple[str, Run, str, Run, float]]:
    """``cards`` and ``cards --json`` of every card of the store's lessons against tomllib parsing those files."""
    env = environment(BERTDRILL_DB=str(db), BERTDRILL_CACHE=str(db.parent / "store-cache"))
    lessons = lessons_of(db)
    files = sorted(map(str, lessons.glob("*.toml")))
    parse = "import sys, tomllib\nfor name in sys.argv[1:]: tomllib.load(open(name, 'rb'))"
    anchor, table, as_json = in_turns(
        runs, lambda: measure([PYTHON, "-c", parse, *files], env),
        lambda: measure(bertdrill() + ["cards", "--file", str(lessons)], env),
        lambda: measure(bertdrill() + ["cards", "--json", "--file", str(lessons)], env))
    return [("cards, every card of the lessons", table, "tomllib parsing them", anchor, 5),
            ("cards --json, the same", as_json, "tomllib parsing them", anchor, 5)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, metavar="DB", help="a store review.build_store made (else one is built)")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is shown)")
    args = parser.parse_args()
    db = args.store
    if db is None:
        db = Path(tempfile.mkdtemp(prefix="bertdrill-listing-")) / "big.db"
        build_store(db)
    print(f"cards on {db}: load average {os.getloadavg()[0]:.1f}; medians of {args.runs} runs", flush=True)
    for name, run, anchor_name, anchor, target in listing_rows(db, args.runs):
        ratio = run.cpu / anchor.cpu
        print(f"  {name}: CPU {run.cpu:.2f} s (wall {run.wall:.2f} s, peak {run.peak_mb:.0f} MB) against "
              f"{anchor_name} CPU {anchor.cpu:.2f} s: ratio {ratio:.2f} (target <= {target}: "
              f"{'PASS' if ratio <= target else 'MISS'}); peak {run.peak_mb:.0f} MB (target < 200 MB: "
              f"{'PASS' if run.peak_mb < 200 else 'MISS'})", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
