"""Months of simulated reviews in a real store, to look at `bertdrill stats`; times stats against status.

A generated lesson (benchmarks/lessons.py) is written next to the database, and a simulated
learner works through it day by day with the real Session and Store (the same code as
`bertdrill review`, with a clock that plays the days): due cards first, new cards within the
daily limit, re-drills until graded 4 or 5. Each card has a difficulty; a few are very hard,
so leeches appear. Some days are skipped, so streaks break.

Then `bertdrill stats` and, as the baseline, `bertdrill status` run in subprocesses on that
store (both load the lesson, open and sync the store; stats then runs its queries and draws).

With ``--big REVIEWS`` it also builds a synthetic store of 100,000 cards and that many reviews
(benchmarks/review.py's generator) and times the stats queries in-process against the queries
of `bertdrill status`, median of 3.

Run:  python benchmarks/simulate.py --days 180 --db /tmp/sim.db [--big 1000000]
Then: bertdrill stats --db /tmp/sim.db --file /tmp/sim-lessons
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lessons import generated_lesson  # noqa: E402

from bertdrill.adapters.lessons import all_cards, load_lessons  # noqa: E402
from bertdrill.adapters.store import Store  # noqa: E402
from bertdrill.app.session import Limits, Session  # noqa: E402

TODAY = date(2025, 3, 3)
ZONE = timezone(timedelta(hours=3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=180, help="days of history before today")
    parser.add_argument("--items", type=int, default=250, help="items in the generated lesson")
    parser.add_argument("--new", type=int, default=12, help="new cards per day")
    parser.add_argument("--skip", type=float, default=0.12, help="chance of skipping a day")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--db", type=Path, default=Path("/tmp/sim.db"))
    parser.add_argument("--today", type=date.fromisoformat, default=TODAY, help="the last simulated day is the one before")
    parser.add_argument("--big", type=int, default=0, metavar="REVIEWS", help="also time stats on a synthetic store")
    args = parser.parse_args()

    lessons = args.db.parent / (args.db.stem + "-lessons")
    lessons.mkdir(parents=True, exist_ok=True)
    (lessons / "generated.toml").write_text(generated_lesson(args.items), encoding="utf-8")
    for leftover in (args.db, args.db.with_name(args.db.name + "-wal"), args.db.with_name(args.db.name + "-shm")):
        leftover.unlink(missing_ok=True)

    started = time.perf_counter()
    answers, studied = simulate(args, lessons)
    seconds = time.perf_counter() - started
    print(f"simulated {args.days} days: {answers:,} answers on {studied} study days in {seconds:.1f} s "
          f"({answers / seconds:,.0f} answers/s through Session and Store)")

    now = f"{args.today.isoformat()}T09:00:00+03:00"
    command = ["--db", str(args.db), "--file", str(lessons)]
    status = timed([sys.executable, "-m", "bertdrill", "status", *command], now)
    stats = timed([sys.executable, "-m", "bertdrill", "stats", *command], now)
    print(f"bertdrill status (baseline): {status * 1000:6.0f} ms  median of 5")
    print(f"bertdrill stats:             {stats * 1000:6.0f} ms  median of 5  ({stats / status:.2f} × status)")
    print(f"look at it: BERTDRILL_NOW={now} bertdrill stats {' '.join(command)}")
    if args.big:
        big(args.db.with_name(args.db.stem + "-big.db"), args.big)


def big(path: Path, reviews: int) -> None:
    from review import TODAY as BIG_TODAY
    from review import fill, synthetic_cards

    from bertdrill.cli.stats import gather

    for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        leftover.unlink(missing_ok=True)
    with Store.open(str(path)) as empty:
        learner = empty.learner
    fill(path, synthetic_cards(100_000), reviews, learner)
    store = Store.open(str(path))
    status = median(lambda: store.status(BIG_TODAY))
    stats = median(lambda: gather(store, BIG_TODAY, 14, None, [], "en"))
    store.close()
    print(f"100,000 cards, {reviews:,} reviews: status queries {status * 1000:.0f} ms (baseline), "
          f"stats queries {stats * 1000:.0f} ms ({stats / status:.1f} × status)")


def median(action, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def simulate(args, lessons: Path) -> tuple[int, int]:
    rng = random.Random(args.seed)
    cards = all_cards(load_lessons([lessons]))
    # Most cards are easy, some are hard; a handful are hopeless, and become leeches.
    difficulty = {card.id: rng.choice([0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.25]) for card in cards}
    for card in rng.sample(cards, 4):
        difficulty[card.id] = 0.7
    store = Store.open(str(args.db))
    store.sync(cards, now=datetime.combine(args.today - timedelta(days=args.days), datetime.min.time(), ZONE))
    answers = studied = 0
    # Busy weeks and quiet weeks: the daily budget wanders.
    for offset in range(args.days, 0, -1):
        day = args.today - timedelta(days=offset)
        if rng.random() < args.skip:
            continue
        moment = [datetime.combine(day, datetime.min.time(), ZONE) + timedelta(hours=rng.choice([7, 12, 19, 22]))]

        def clock(moment=moment):
            moment[0] += timedelta(seconds=rng.randint(4, 20))
            return moment[0]

        session = Session(store, cards, clock=clock, limits=Limits(new=rng.randint(0, args.new)))
        budget = rng.randint(20, 200)
        while not session.done and budget:
            entry = session.show()
            assert entry is not None, "a session that is not done shows a card"
            session.answer(grade(rng, difficulty[entry.card.id], entry.kind))
            answers += 1
            budget -= 1
        studied += 1
    store.close()
    return answers, studied


def grade(rng: random.Random, difficulty: float, kind: str) -> int:
    """A grade from a learner who recalls a card with probability 1 - difficulty (better when re-drilled)."""
    recall = 1 - difficulty * (0.5 if kind == "redrill" else 1.0)
    if rng.random() < recall:
        return rng.choices([5, 4, 3], weights=[5, 4, 2])[0]
    return rng.choices([2, 1, 0], weights=[4, 3, 1])[0]


def timed(command: list[str], now: str, runs: int = 5) -> float:
    env = {**os.environ, "BERTDRILL_NOW": now, "NO_COLOR": "1"}
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


if __name__ == "__main__":
    main()
