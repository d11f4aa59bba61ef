"""Learners' terminals on the class server: ``bertdrill review`` through ``ClassStore``, timed per card, then audited.

    python benchmarks/class_terminal.py [--learners 10] [--answers 50]

Needs a PostgreSQL server (``$BERTDRILL_TEST_POSTGRES``, else 127.0.0.1:5432); its database and roles are named
``bertdrill_bench_*`` and dropped at the end. Only 127.0.0.1 is contacted.

``class init`` with a lesson of ``--answers`` fact cards and ``--learners`` members (benchmarks/class_server.py's
set-up), ``bertdrill serve`` on it in a process of its own; then each learner, in a thread of this process,
logs in through the API and runs the terminal's own review session (:class:`bertdrill.app.session.Session` over
:class:`bertdrill.adapters.remote.client.ClassStore`), answering every card with its right text: per card, what
the terminal does between the learner's Enter and the next card (the preview, the answer, the next card shown),
and the requests that took. Then the audit, as the teacher: every acknowledged answer stored exactly once.
Prints figures; exits 1 only when the audit finds an answer lost or doubled.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from class_server import TIMEOUT, audit, lesson_text, serve, set_up, stop  # noqa: E402
from classroom import Scratch, percentile  # noqa: E402


def learner(port: int, name: str, start: threading.Barrier, per_card: list[float], requests: list[int],
            acknowledged: dict[str, list[str]], errors: list[str], by_path: dict[str, list[float]]) -> None:
    from bertdrill.adapters.remote.client import ClassStore, log_in
    from bertdrill.app.deck import Deck
    from bertdrill.app.session import Limits, Session
    from bertdrill.cli.base import scheduler_of
    from bertdrill.cli.remote import class_lessons, server_clock
    from bertdrill.core.cards import compile_lesson

    try:
        login = log_in(f"http://127.0.0.1:{port}", name, f"{name}-password")
        store = ClassStore(login)
        sent = [0]
        call = store.connection.call

        def counted(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
            sent[0] += 1
            began = time.perf_counter()
            try:
                return call(method, path, *args, **kwargs)
            finally:
                by_path.setdefault(path.split("?")[0], []).append(time.perf_counter() - began)

        store.connection.call = counted  # type: ignore[method-assign]
        info = store.class_info()
        cards = [card for lesson in class_lessons(info) for card in compile_lesson(lesson)]
        session = Session(store, Deck.of(cards), clock=server_clock(info),
                          limits=Limits(info.new, info.reviews, info.rollover_hour),
                          scheduler=scheduler_of(store.scheduler_choice()), follow=scheduler_of, actions=store)
    except Exception as exc:  # noqa: BLE001 - reported; the others must not wait for this learner
        errors.append(f"{name}: {exc}")
        start.abort()
        return
    start.wait(timeout=TIMEOUT * 4)
    mine = acknowledged.setdefault(name, [])
    try:
        entry = session.show()
        while entry is not None:
            sent[0], began = 0, time.perf_counter()
            session.preview()  # what the terminal prints before the grade is read
            outcome = session.answer(4, entry.card.answer["en"])
            mine.append(outcome.entry.card.id)
            entry = session.show()
            per_card.append(time.perf_counter() - began)
            requests.append(sent[0])
    except Exception as exc:  # noqa: BLE001 - reported, and the audit says what was stored
        errors.append(f"{name}: {exc}")
    finally:
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=10)
    parser.add_argument("--answers", type=int, default=50, help="cards per learner (the lesson's)")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "bertdrill"]
    print(f"terminals on the class server: {args.learners} learners x {args.answers} cards "
          f"(load average {os.getloadavg()[0]:.1f})")
    scratch = Scratch()
    process = None
    try:
        with tempfile.TemporaryDirectory(prefix="bertdrill-bench-") as folder:
            lesson = Path(folder) / "bench.toml"
            lesson.write_text(lesson_text(args.answers), encoding="utf-8")
            names = set_up(scratch, lesson, args.learners, cli)
        process, port = serve(scratch, args.answers, cli)
        per_card: list[float] = []
        requests: list[int] = []
        acknowledged: dict[str, list[str]] = {}
        errors: list[str] = []
        by_path: dict[str, list[float]] = {}
        start = threading.Barrier(len(names) + 1)
        threads = [threading.Thread(target=learner, args=(port, name, start, per_card, requests, acknowledged, errors,
                                                            by_path))
                   for name in names]
        for thread in threads:
            thread.start()
        start.wait(timeout=TIMEOUT * 4)
        began, cpu = time.perf_counter(), time.process_time()
        for thread in threads:
            thread.join(timeout=900)
        wall, client_cpu = time.perf_counter() - began, time.process_time() - cpu
        server_cpu = stop(process)
        process = None
        done = sorted(per_card)
        print(f"  {len(done):,} answers in {wall:.1f} s = {len(done) / wall:,.1f} answers/s; per card p50 "
              f"{1000 * percentile(done, 0.5):.1f} ms, p99 {1000 * percentile(done, 0.99):.1f} ms (mean "
              f"{1000 * statistics.fmean(done):.1f} ms), {statistics.fmean(requests):.1f} requests per card; "
              f"server CPU {server_cpu:.1f} s ({1000 * server_cpu / max(1, len(done)):.1f} ms per answer), the "
              f"terminals' CPU {client_cpu:.1f} s")
        print("  per request (mean, the set-up's included): " + ", ".join(
            f"{path} {1000 * statistics.fmean(times):.1f} ms x {len(times)}" for path, times in sorted(by_path.items())))
        for error in errors[:5]:
            print(f"    error: {error}")
        good = audit(scratch, acknowledged) and not errors
    finally:
        if process is not None:
            process.kill()
            process.wait(timeout=10)
        scratch.drop()
    print(f"  load average after: {os.getloadavg()[0]:.1f}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
