"""Answering cards, per answer, beside Anki's own engine doing the same work in the same run.

    python benchmarks/answering.py [--answers 1000] [--decks 1000,100000] [--runs 3]

For each deck size: a deck of that many new fact cards, and ``--answers`` of them answered in
order (after ten untimed ones on each side), each graded "right at once":

- bertdrill: a review session over the whole deck (its daily limits opened to the deck's size)
  on an SQLite store with the durability it always has (WAL, ``synchronous=FULL``, every answer
  committed before the next card), built as ``bertdrill review`` builds it (the stored choice's
  scheduler, following the store's choice: the preview and the answer read it): per card, what the
  review screen does: show the card and its position, preview the intervals of each grade, record
  the answer. Under SM-2, and under FSRS (the stored scheduler switched first).
- Anki (the ``anki`` package, the real engine): the same notes added to a new collection (WAL,
  ``synchronous=FULL`` as well), the deck's limits opened likewise (to at most 9,999, the most
  Anki takes: its queue is never longer, where bertdrill's holds the whole deck); per card,
  ``col.sched.get_queued_cards`` (the next card with its scheduling states: the preview),
  ``build_answer`` and ``col.sched.answer_card`` with Easy.

A deck answers at most its size less the warm-up (``--answers 1000`` of a 1,000-card deck: 990).
Prints the per-answer medians (the median of ``--runs`` runs, each the mean over its answers),
the ratio to Anki of the wall time and of the CPU time, each judged (target <= 3: the wall time is
mostly the fsync both pay, the CPU time what bertdrill's own code adds), and, per side, the cost at
the largest deck against the smallest, wall and CPU, each judged (target: within 20 %). Always exits
0: a benchmark reports, the tests judge.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bertdrill.core.cards import FactCard
from bertdrill.core.scheduling.registry import SchedulerName

MOMENT = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
WARM_UP = 10  # answers before the clock starts, on both sides: first statements compiled, caches filled
ANKI_MOST_PER_DAY = 9999  # Anki refuses a larger daily limit (its queue is at most this long; bertdrill's is the deck)


def deck(count: int) -> list[FactCard]:
    return [FactCard(id=f"bench/item-{i:06d}", lesson_id="bench", item_id=f"item-{i:06d}",
                     prompt={"en": f"Question {i}?"}, answer={"en": f"Answer {i}."}) for i in range(count)]


def bertdrill_per_answer(folder: Path, cards: list[FactCard], answers: int,
                         scheduler_name: SchedulerName) -> tuple[float, float]:
    """Seconds per answer, wall and CPU, of a review session over ``cards`` (show, position, preview, answer)."""
    from bertdrill.adapters.store import Store
    from bertdrill.app.session import Limits, Session
    from bertdrill.cli.base import chosen_scheduler, scheduler_of
    from bertdrill.core.scheduling.registry import scheduler_named
    from bertdrill.ports import SchedulerChoice

    path = folder / f"bertdrill-{scheduler_name}-{len(cards)}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    scheduler = scheduler_named(scheduler_name)
    with Store.open(str(path)) as store:
        store.sync(cards, now=MOMENT)
        if scheduler_name != SchedulerName.SM2:
            store.switch_scheduler(SchedulerChoice(scheduler_name), scheduler)
        session = Session(store, cards, clock=lambda: MOMENT, limits=Limits(new=len(cards), reviews=len(cards)),
                          scheduler=chosen_scheduler(store), follow=scheduler_of)  # as cli/review.py builds it
        def answer() -> None:
            session.show()
            session.position  # noqa: B018 - the review screen's header reads it for every card
            session.preview()
            session.answer(5, "typed answer")

        for _ in range(WARM_UP):
            answer()
        began, cpu = time.perf_counter(), time.process_time()
        for _ in range(answers):
            answer()
        return (time.perf_counter() - began) / answers, (time.process_time() - cpu) / answers


def anki_per_answer(folder: Path, cards: list[FactCard], answers: int) -> tuple[float, float]:
    """Seconds per answer, wall and CPU (its engine runs in this process), of Anki's scheduler over the same notes (queued card and states, answer)."""
    import anki.collection  # noqa: F401 - before anki.cards, which imports it back (a cycle in the package)
    from anki.cards import Card
    from anki.collection import AddNoteRequest, Collection
    from anki.scheduler.v3 import CardAnswer
    from anki.scheduler.v3 import Scheduler as V3Scheduler

    path = folder / f"anki-{len(cards)}" / "collection.anki2"
    shutil.rmtree(path.parent, ignore_errors=True)  # a new collection each run: a run answers a day's new cards
    path.parent.mkdir(parents=True)
    col = Collection(str(path))
    try:
        assert col.db is not None and isinstance(col.sched, V3Scheduler)
        assert col.db.scalar("pragma journal_mode") == "wal" and col.db.scalar("pragma synchronous") == 2
        model = col.models.by_name("Basic")
        deck_id = col.decks.id("bench")
        assert model is not None and deck_id is not None
        sched = col.sched
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
        def answer() -> None:
            queued = sched.get_queued_cards(fetch_limit=1).cards[0]
            card = Card(col, backend_card=queued.card)
            card.start_timer()
            sched.answer_card(sched.build_answer(card=card, states=queued.states, rating=CardAnswer.EASY))

        for _ in range(WARM_UP):
            answer()
        began, cpu = time.perf_counter(), time.process_time()
        for _ in range(answers):
            answer()
        return (time.perf_counter() - began) / answers, (time.process_time() - cpu) / answers
    finally:
        col.close()


def rows(answers: int, sizes: list[int], runs: int, folder: Path) -> dict[tuple[str, int], tuple[float, float]]:
    """The median per-answer seconds (wall, CPU) of each side at each deck size, the sides interleaved run by run."""
    from bertdrill.cli import base

    folder.mkdir(parents=True, exist_ok=True)
    screen, base.out.file = base.out.file, io.StringIO()  # nothing is printed; keep the console off the terminal
    found: dict[tuple[str, int], list[tuple[float, float]]] = {}
    try:
        for size in sizes:
            cards, count = deck(size), answered(answers, size)
            for _ in range(runs):
                for side in ("anki", "sm2", "fsrs"):
                    took = (anki_per_answer(folder, cards, count) if side == "anki"
                            else bertdrill_per_answer(folder, cards, count, SchedulerName(side)))
                    found.setdefault((side, size), []).append(took)
    finally:
        base.out.file = screen
    return {key: (statistics.median(wall for wall, _cpu in times), statistics.median(cpu for _wall, cpu in times))
            for key, times in found.items()}


def answered(answers: int, size: int) -> int:
    """How many of a deck's cards are answered on the clock: the warm-up's come out of the deck first."""
    return max(1, min(answers, size - WARM_UP))


def verdict(value: float, target: float) -> str:
    return f"{value:.2f} ({'PASS' if value <= target else 'MISS'}: target <= {target:g})"


def report(figures: dict[tuple[str, int], tuple[float, float]], answers: int, sizes: list[int]) -> list[str]:
    lines = []
    for size in sizes:
        anki, anki_cpu = figures[("anki", size)]
        for side, name in (("sm2", "SM-2"), ("fsrs", "FSRS")):
            ours, cpu = figures[(side, size)]
            lines.append(f"answer {answered(answers, size):,} of {size:,} cards, {name}: wall {ours * 1000:.2f} ms "
                         f"against Anki's engine {anki * 1000:.2f} ms, ratio {verdict(ours / anki, 3)}; CPU "
                         f"{cpu * 1000:.2f} ms against {anki_cpu * 1000:.2f} ms, ratio {verdict(cpu / anki_cpu, 3)}")
    small, large = sizes[0], sizes[-1]
    for side, name in (("sm2", "SM-2"), ("fsrs", "FSRS"), ("anki", "Anki")):
        growth = figures[(side, large)][0] / figures[(side, small)][0]
        cpu_growth = figures[(side, large)][1] / figures[(side, small)][1]
        judged = (lambda value: f"{value:.2f}") if side == "anki" else (lambda value: verdict(value, 1.2))
        lines.append(f"flat, {name}: per answer at {large:,} cards / at {small:,}: wall {judged(growth)}, "
                     f"CPU {judged(cpu_growth)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--decks", default="1000,100000", help="deck sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.decks.split(","))
    with tempfile.TemporaryDirectory(prefix="bertdrill-answering-") as name:
        os.environ.setdefault("BERTDRILL_HOME", name)
        figures = rows(args.answers, sizes, args.runs, Path(name))
    for line in report(figures, args.answers, sizes):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
