"""Answering cards, per answer, beside Anki's own engine doing the same work in the same run.

    python benchmarks/answering.py [--answers 1000] [--decks 1000,100000] [--runs 3]

For each deck size: a deck of that many new fact cards, and ``--answers`` of them answered in
order (after ten untimed ones on each side), each graded "right at once":

- bertdrill: a review session over the whole deck (its daily limits opened to the deck's size)
  on an SQLite store with the durability it always has (WAL, ``synchronous=FULL``, every answer
  committed before the next card), built as ``bertdrill review`` builds it (the stored choice's
  scheduler, following the store's choice: the preview and the answer read it; settled, frozen out of the cycle
  collector once built: ``bertdrill.cli.base.settled``): per card, what the
  review screen does: show the card and its position, preview the intervals of each grade, record
  the answer. Under SM-2, and under FSRS (the stored scheduler switched first).
- Anki (the ``anki`` package, the real engine): the same notes added to a new collection (WAL,
  ``synchronous=FULL`` as well), the deck's limits opened likewise (to at most 9,999, the most
  Anki takes: its queue is never longer, where bertdrill's holds the whole deck); per card,
  ``col.sched.get_queued_cards`` (the next card with its scheduling states: the preview),
  ``build_answer`` and ``col.sched.answer_card`` with Easy.

Each side runs in processes of its own: each store is built once by a child process and closed; each run copies
it and answers the copy in a fresh child process, which times its answering loop alone (``time.perf_counter``
and ``time.process_time`` around it, after the warm-up, alike on both sides). So no side pays for another's
heap, or for the objects its own deck's building left behind (in one process, the cycle collector's full
passes walked them all); every side at every size runs in turns within a run.

A deck answers at most its size less the warm-up (``--answers 1000`` of a 1,000-card deck: 990).
Prints the per-answer medians (the median of ``--runs`` runs, each the mean over its answers),
the ratio to Anki of the wall time and of the CPU time, each judged (target <= 3: the wall time is
mostly the fsync both pay, the CPU time what bertdrill's own code adds), and, per side, the cost at
the largest deck against the smallest, wall and CPU, each judged (target: within 20 %). Always exits
0: a benchmark reports, the tests judge. ``benchmarks/run.py``'s answering rows are these.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from bertdrill.core.cards import FactCard
from bertdrill.core.scheduling.registry import SchedulerName

MOMENT = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
WARM_UP = 10  # answers before the clock starts, on both sides: first statements compiled, caches filled
ANKI_MOST_PER_DAY = 9999  # Anki refuses a larger daily limit (its queue is at most this long; bertdrill's is the deck)


def deck(count: int) -> list[FactCard]:
    return [FactCard(id=f"bench/item-{i:06d}", lesson_id="bench", item_id=f"item-{i:06d}",
                     prompt={"en": f"Question {i}?"}, answer={"en": f"Answer {i}."}) for i in range(count)]


SIDES = ("anki", "sm2", "fsrs")


def build_bertdrill(path: Path, cards: list[FactCard], scheduler_name: SchedulerName) -> None:
    """An SQLite store of ``cards``, all new, under ``scheduler_name`` (switched when not SM-2), closed."""
    from bertdrill.adapters.store import Store
    from bertdrill.core.scheduling.registry import scheduler_named
    from bertdrill.ports import SchedulerChoice

    with Store.open(str(path)) as store:
        store.sync(cards, now=MOMENT)
        if scheduler_name != SchedulerName.SM2:
            store.switch_scheduler(SchedulerChoice(scheduler_name), scheduler_named(scheduler_name))


def bertdrill_per_answer(path: Path, cards: list[FactCard], answers: int) -> PerAnswer:
    """Seconds per answer of a review session over ``cards`` (show, position, preview, answer) on
    the store :func:`build_bertdrill` made."""
    from bertdrill.adapters.store import Store
    from bertdrill.app.session import Limits, Session
    from bertdrill.cli.base import chosen_scheduler, scheduler_of, settled

    with Store.open(str(path)) as store:
        session = settled(Session(store, cards, clock=lambda: MOMENT, limits=Limits(new=len(cards), reviews=len(cards)),
                                  scheduler=chosen_scheduler(store), follow=scheduler_of))  # as cli/review.py builds it

        def answer() -> None:
            session.show()
            session.position  # noqa: B018 - the review screen's header reads it for every card
            session.preview()
            session.answer(5, "typed answer")

        return timed(answer, answers)


def build_anki(path: Path, cards: list[FactCard]) -> None:
    """An Anki collection of the same notes, new, in a deck whose daily limits are opened (to at most 9,999), closed."""
    import anki.collection  # noqa: F401 - before anki.cards, which imports it back (a cycle in the package)
    from anki.collection import AddNoteRequest, Collection

    col = Collection(str(path))
    try:
        model = col.models.by_name("Basic")
        deck_id = col.decks.id("bench")
        assert model is not None and deck_id is not None
        requests = []
        for card in cards:
            note = col.new_note(model)
            note["Front"], note["Back"] = card.prompt["en"], card.answer["en"]
            requests.append(AddNoteRequest(note=note, deck_id=deck_id))
        col.add_notes(requests)
        col.decks.select(deck_id)
        config = col.decks.config_dict_for_deck_id(deck_id)
        config["new"]["perDay"] = config["rev"]["perDay"] = min(len(cards), ANKI_MOST_PER_DAY)
        col.decks.update_config(config)
    finally:
        col.close()


def anki_per_answer(path: Path, answers: int) -> PerAnswer:
    """Seconds per answer (its engine runs in this process) of Anki's scheduler over the collection
    :func:`build_anki` made (queued card and states, answer)."""
    import anki.collection  # noqa: F401 - before anki.cards, which imports it back (a cycle in the package)
    from anki.cards import Card
    from anki.collection import Collection
    from anki.scheduler.v3 import CardAnswer
    from anki.scheduler.v3 import Scheduler as V3Scheduler

    col = Collection(str(path))
    try:
        assert col.db is not None and isinstance(col.sched, V3Scheduler)
        assert col.db.scalar("pragma journal_mode") == "wal" and col.db.scalar("pragma synchronous") == 2
        sched = col.sched

        def answer() -> None:
            queued = sched.get_queued_cards(fetch_limit=1).cards[0]
            card = Card(col, backend_card=queued.card)
            card.start_timer()
            sched.answer_card(sched.build_answer(card=card, states=queued.states, rating=CardAnswer.EASY))

        return timed(answer, answers)
    finally:
        col.close()


class PerAnswer(NamedTuple):
    """Seconds per answer: wall, CPU (user + system: the process's every thread, Anki's engine's too), user alone."""

    wall: float
    cpu: float
    user: float  # the system time is mostly the kernel's share of the writes and the fsync, which both sides pay

    @staticmethod
    def median(runs: list[PerAnswer]) -> PerAnswer:
        return PerAnswer(*(statistics.median(values) for values in zip(*runs, strict=True)))


def timed(answer: Callable[[], None], answers: int) -> PerAnswer:
    """Seconds per answer of ``answers`` answers after the warm-up, the clocks read around the loop alone."""
    for _ in range(WARM_UP):
        answer()
    began, usage = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(answers):
        answer()
    wall, ended = time.perf_counter() - began, resource.getrusage(resource.RUSAGE_SELF)
    user = ended.ru_utime - usage.ru_utime
    return PerAnswer(wall / answers, (user + ended.ru_stime - usage.ru_stime) / answers, user / answers)


def store_path(folder: Path, side: str, size: int, name: str) -> Path:
    """Where a side's store (bertdrill's file, Anki's collection in a folder of its own) of a deck size lives."""
    return folder / f"{side}-{size}-{name}" / ("collection.anki2" if side == "anki" else "bertdrill.db")


def child(action: str, side: str, size: int, path: Path, answers: int) -> None:
    """What one child process does (``--child``): build a side's store of a deck, or answer in a copy of it, and
    print the seconds per answer (wall, CPU) as JSON. A process of its own for each, so no side pays for another's
    heap (100,000 cards' objects, the cycle collector's walks of them) or for having built its deck."""
    from bertdrill.cli import base

    base.out.file = io.StringIO()  # nothing is printed; keep the console off the terminal
    if action == "build":
        build_anki(path, deck(size)) if side == "anki" else build_bertdrill(path, deck(size), SchedulerName(side))
        return
    took = anki_per_answer(path, answers) if side == "anki" else bertdrill_per_answer(path, deck(size), answers)
    print(json.dumps(took))  # a list: the fields in order


def in_child(action: str, side: str, size: int, path: Path, answers: int = 0) -> PerAnswer | None:
    """:func:`child` in a fresh interpreter (the same Python, the same environment)."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", action, side, str(size),
                           str(path), str(answers)], check=True, stdout=subprocess.PIPE, text=True)
    if action == "build":
        return None
    return PerAnswer(*json.loads(done.stdout.splitlines()[-1]))


def fresh_copy(template: Path, path: Path) -> None:
    """A copy of a store made once (a run answers a day's new cards: each run starts from the same new deck)."""
    shutil.rmtree(path.parent, ignore_errors=True)
    shutil.copytree(template.parent, path.parent)


def rows(answers: int, sizes: list[int], runs: int, folder: Path) -> dict[tuple[str, int], PerAnswer]:
    """The median per-answer seconds of each side at each deck size. Each store is built once, each in a
    child process; each run answers a fresh copy of it in a child process of its own, every side at every size in
    turns within the run, so all six meet the same moment of a shared disk and machine."""
    folder.mkdir(parents=True, exist_ok=True)
    for size in sizes:
        for side in SIDES:
            template = store_path(folder, side, size, "built")
            shutil.rmtree(template.parent, ignore_errors=True)
            template.parent.mkdir(parents=True)
            in_child("build", side, size, template)
    found: dict[tuple[str, int], list[PerAnswer]] = {}
    for _ in range(runs):
        for size in sizes:
            for side in SIDES:
                path = store_path(folder, side, size, "run")
                fresh_copy(store_path(folder, side, size, "built"), path)
                took = in_child("answer", side, size, path, answered(answers, size))
                assert took is not None
                found.setdefault((side, size), []).append(took)
    return {key: PerAnswer.median(times) for key, times in found.items()}


def answered(answers: int, size: int) -> int:
    """How many of a deck's cards are answered on the clock: the warm-up's come out of the deck first."""
    return max(1, min(answers, size - WARM_UP))


def verdict(value: float, target: float) -> str:
    return f"{value:.2f} ({'PASS' if value <= target else 'MISS'}: target <= {target:g})"


def report(figures: dict[tuple[str, int], PerAnswer], answers: int, sizes: list[int]) -> list[str]:
    lines = []
    for size in sizes:
        anki = figures[("anki", size)]
        for side, name in (("sm2", "SM-2"), ("fsrs", "FSRS")):
            ours = figures[(side, size)]
            lines.append(f"answer {answered(answers, size):,} of {size:,} cards, {name}: wall {ours.wall * 1000:.2f} ms "
                         f"against Anki's engine {anki.wall * 1000:.2f} ms, ratio {verdict(ours.wall / anki.wall, 3)}; "
                         f"CPU {ours.cpu * 1000:.2f} ms against {anki.cpu * 1000:.2f} ms, ratio "
                         f"{verdict(ours.cpu / anki.cpu, 3)}; user CPU {ours.user * 1000:.2f} ms against "
                         f"{anki.user * 1000:.2f} ms ({ours.user / anki.user:.2f})")
    small, large = sizes[0], sizes[-1]
    for side, name in (("sm2", "SM-2"), ("fsrs", "FSRS"), ("anki", "Anki")):
        growth = figures[(side, large)].wall / figures[(side, small)].wall
        cpu_growth = figures[(side, large)].cpu / figures[(side, small)].cpu
        judged = (lambda value: f"{value:.2f}") if side == "anki" else (lambda value: verdict(value, 1.2))
        lines.append(f"flat, {name}: per answer at {large:,} cards / at {small:,}: wall {judged(growth)}, "
                     f"CPU {judged(cpu_growth)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--decks", default="1000,100000", help="deck sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs=5, metavar=("ACTION", "SIDE", "SIZE", "PATH", "ANSWERS"),
                        help=argparse.SUPPRESS)  # one child process's work: see child()
    args = parser.parse_args()
    if args.child:
        action, side, size, path, count = args.child
        child(action, side, int(size), Path(path), int(count))
        return 0
    print(f"load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    sizes = sorted(int(size) for size in args.decks.split(","))
    with tempfile.TemporaryDirectory(prefix="bertdrill-answering-") as name:
        os.environ.setdefault("BERTDRILL_HOME", name)
        figures = rows(args.answers, sizes, args.runs, Path(name))
    for line in report(figures, args.answers, sizes):
        print(line)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
