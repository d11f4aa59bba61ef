"""Switching scheduler on a big store, beside fsrs-rs computing the same memory states in one batch.

    python benchmarks/replay.py [--cards 100000] [--reviews 1000000] [--runs 3]

On review.py's store (100,000 cards, 1,000,000 logged answers over 1,000 days):

1. ``bertdrill scheduler fsrs`` (every card's state rebuilt from its log through py-fsrs, in one
   transaction), then ``bertdrill scheduler sm2`` (back, through SM-2), each against the anchor: a
   script that reads the same log from the same file (sqlite3, in card order), keeps the first answer
   of each study day as the switch does, and has fsrs-rs-python (Anki's Rust engine) compute every
   card's memory state in one ``memory_state_batch`` call (target: the switch <= 2x the anchor);
2. each command's CPU time and peak memory, from ``wait4`` (target: under 200 MB).

The anchor computes 32-bit floats in Rust and writes nothing; the switch computes py-fsrs's 64-bit
floats, exactly as a review does, and writes every card's state, all or nothing.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from review import build_store  # noqa: E402
from startup import PYTHON, Run, bertdrill, environment, measure  # noqa: E402

from bertdrill.adapters.store import Store  # noqa: E402

ANCHOR = '''
import sqlite3, sys, time
from datetime import date
from itertools import groupby
import fsrs_rs_python as fsrs
began = time.perf_counter()
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT card_id, study_day, grade FROM review WHERE kind != 'practice' ORDER BY card_id, id")
rating = {0: 1, 1: 1, 2: 1, 3: 2, 4: 3, 5: 4}
items = []
for _card, answers in groupby(rows, key=lambda row: row[0]):
    reviews, seen, last = [], set(), None
    for _card_id, text, grade in answers:
        if text in seen:
            continue
        seen.add(text)
        day = date.fromisoformat(text).toordinal()
        reviews.append(fsrs.FSRSReview(rating[grade], 0 if last is None else day - last))
        last = day
    items.append(fsrs.FSRSItem(reviews))
read = time.perf_counter()
states = fsrs.FSRS(list(fsrs.DEFAULT_PARAMETERS)).memory_state_batch(items)
print(f"{len(states)} memory states; reading {read - began:.2f} s, computing {time.perf_counter() - read:.2f} s")
'''


def rows(db: Path, runs: int) -> list[tuple[str, Run, str, Run, float]]:
    env = environment(BERTDRILL_DB=str(db))
    anchor = lambda: measure([PYTHON, "-c", ANCHOR, str(db)], env)  # noqa: E731
    to_fsrs, to_sm2, baseline = [], [], []
    anchor()  # warm the file cache
    for _ in range(runs):
        baseline.append(anchor())
        to_fsrs.append(measure(bertdrill() + ["scheduler", "fsrs"], env))
        to_sm2.append(measure(bertdrill() + ["scheduler", "sm2"], env))
    fsrs_rs = Run.median(baseline)
    return [("scheduler fsrs, 100k cards, 1M reviews", Run.median(to_fsrs), "fsrs-rs memory_state_batch", fsrs_rs, 2),
            ("scheduler sm2, 100k cards, 1M reviews", Run.median(to_sm2), "fsrs-rs memory_state_batch", fsrs_rs, 2)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--store", type=Path, help="a store review.py built before (copied, never changed)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bertdrill-replay-"))
    try:
        db = folder / "big.db"
        if args.store:
            shutil.copyfile(args.store, db)
            Store.open(str(db)).close()  # a store from an older bertdrill is migrated now, not in the first switch
        else:
            build_store(db, args.cards, args.reviews)
        for name, run, anchor_name, anchor, target in rows(db, args.runs):
            ratio = run.cpu / anchor.cpu  # CPU time: a shared machine's load moves it far less than wall time
            print(f"  {name}: CPU {run.cpu:.1f} s (wall {run.wall:.1f} s, peak {run.peak_mb:.0f} MB) against {anchor_name} "
                  f"CPU {anchor.cpu:.1f} s (wall {anchor.wall:.1f} s, peak {anchor.peak_mb:.0f} MB): CPU ratio {ratio:.2f}, "
                  f"wall ratio {run.wall / anchor.wall:.2f}; target <= {target:g}: {'PASS' if ratio <= target else 'MISS'}; "
                  f"memory {'PASS' if run.peak_mb <= 200 else 'MISS'} (<= 200 MB)", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
