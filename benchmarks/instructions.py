"""Instructions per answer, bertdrill beside Anki's engine, counted by valgrind (which the machine's load does not move).

    python benchmarks/instructions.py [--deck 1000] [--answers 400] [--sides anki,sm2,fsrs]

CPU time per answer moves with the load of a shared machine by more than a change is worth; the instructions a
process runs do not. Each side's store is built as ``benchmarks/answering.py`` builds it (a deck of new fact
cards; bertdrill's SQLite store under SM-2 or FSRS, Anki's collection with its limits opened), and its answering
child (show, position, preview, answer; Anki's queued card, states and answer) runs twice under
``valgrind --tool=cachegrind``, on a fresh copy each time: with ``--answers`` answers on the clock and with one, after
the same warm-up. The difference over ``answers - 1`` is what one answer costs, start-up and building left out.
Both sides count user-space instructions only: the kernel's share of the writes and the fsync, the same size on
both, is not counted (so the ratio here is above the CPU ratio of ``answering.py``).

Needs valgrind (Debian's ``valgrind``). Takes about a minute per side and count at the defaults. Always exits 0
when it ran: a benchmark reports, the tests judge.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import answering

REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(side: str, deck: int, template: Path, answers: int) -> int:
    """User-space instructions of one answering child (``answers`` on the clock) on a fresh copy of ``template``."""
    path = answering.store_path(template.parent.parent, side, deck, "counted")
    answering.fresh_copy(template, path)
    ran = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          sys.executable, str(Path(answering.__file__).resolve()), "--child", "answer", side,
                          str(deck), str(path), str(answers)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "0"})  # the same dict layouts in every run
    found = REFS.search(ran.stderr)
    assert found, ran.stderr
    return int(found.group(1).replace(",", ""))


def per_answer(side: str, deck: int, answers: int, folder: Path) -> float:
    """Instructions one answer adds, over a deck of ``deck`` cards: ``answers`` answers less one, over the difference."""
    template = answering.store_path(folder, side, deck, "built")
    template.parent.mkdir(parents=True)
    answering.in_child("build", side, deck, template)
    many, one = (instructions(side, deck, template, count) for count in (answers, 1))
    return (many - one) / (answers - 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deck", type=int, default=1000, help="cards in the deck")
    parser.add_argument("--answers", type=int, default=400, help="answers counted (at most the deck less 10)")
    parser.add_argument("--sides", default="anki,sm2,fsrs", help="of anki, sm2, fsrs, comma-separated")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 1
    sides = args.sides.split(",")
    answers = answering.answered(args.answers, args.deck)
    with tempfile.TemporaryDirectory(prefix="bertdrill-instructions-") as name:
        os.environ.setdefault("BERTDRILL_HOME", name)
        counted = {side: per_answer(side, args.deck, answers, Path(name)) for side in sides}
    for side in sides:
        against = f", {counted[side] / counted['anki']:.2f}x Anki's engine" if "anki" in counted and side != "anki" else ""
        print(f"{side}: {counted[side]:,.0f} instructions per answer ({answers:,} of {args.deck:,} cards){against}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
