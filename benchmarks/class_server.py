"""The class server under load over loopback HTTP, then audited; beside the same answers written straight to the store.

    python benchmarks/class_server.py [--learners 50] [--answers 200] [--rate 50] [--lockstep]
        [--skip-saturation] [--skip-offered] [--skip-baseline] [--skip-dashboard | --only-dashboard] [--dashboard-variants PERCENT]

Needs a PostgreSQL server (``$BERTDRILL_TEST_POSTGRES``, else 127.0.0.1:5432); its database and roles are
named ``bertdrill_bench_*`` and dropped at the end. Only 127.0.0.1 is ever contacted.

1. ``class init`` with a lesson of ``--answers`` fact cards, ``--learners`` members; ``bertdrill serve`` on it
   (a process of its own, ``--new`` = ``--answers``), reached on 127.0.0.1.
2. **Saturation**: every learner at once, each in a thread with a keep-alive connection, logs in and answers
   every card as a browser does (POST the answer, follow the redirect to the verdict, POST the grade, follow
   the redirect to the next card): answers/s, and the latency of one answer (those four requests).
3. **Offered load**: the same on a fresh class, each learner answering at ``--rate`` / ``--learners`` answers
   per second (50 answers/s in all by default), the learners' answers spread evenly over each second (learner i
   starts i / rate seconds in): p50 and p99 latency per answer. Target: p99 <= 100 ms. ``--lockstep`` has them
   all answer at the same instant instead: a burst of 50 answers each second, which measures the burst.
4. **Audit** after each run, as the teacher: every answer the server acknowledged is in the log exactly once,
   filed under its learner, and nothing else is there.
5. **Baseline**, in the same run: the same learners' answers through the store the server uses
   (``PostgresStore.acting_as``), one thread per learner, no HTTP.

Bounded: every request has a 30 s timeout, every run a deadline; the server is stopped (SIGTERM, then killed)
in a ``finally``. Prints figures; exits 1 only when an audit finds an answer lost or doubled.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))
from classroom import Scratch, percentile  # noqa: E402  (benchmarks/classroom.py: a scratch database)

TIMEOUT = 30.0
DEADLINE = 900.0  # seconds for one run


def lesson_text(cards: int) -> str:
    items = "".join(f'\n[[item]]\nid = "item-{i:04d}"\nkind = "fact"\nquestion = {{ en = "Question {i}?" }}\n'
                    f'answer = {{ en = "Answer {i}" }}\n' for i in range(cards))
    return f'[lesson]\nid = "bench"\nlanguages = ["en"]\ntitle = {{ en = "Bench" }}\n{items}'


class Client:
    """One learner's browser: a keep-alive connection, cookies, the forms' hidden fields."""

    def __init__(self, port: int):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        self.cookies: dict[str, str] = {}
        self.page = ""

    def request(self, method: str, path: str, fields: dict[str, str] | None = None) -> str:
        while True:
            headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
            body = None
            if fields is not None:
                body = urlencode(fields)
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            text = response.read().decode("utf-8")
            for header, value in response.getheaders():
                if header.lower() == "set-cookie":
                    name, _sep, rest = value.partition("=")
                    self.cookies[name] = rest.split(";", 1)[0].strip('"')
            if response.status in (302, 303):
                method, path, fields = "GET", response.getheader("location") or "/", None
                continue
            if response.status >= 400:
                raise RuntimeError(f"{method} {path}: {response.status} {text[:200]}")
            self.page = text
            return text

    def hidden(self, name: str) -> str:
        found = re.search(rf'name="{name}" value="([^"]*)"', self.page)
        assert found, f"no {name} on the page: {self.page[:300]}"
        return found[1]

    def close(self) -> None:
        self.connection.close()


def learner_run(port: int, name: str, answers: int, pace: float, phase: float, start: threading.Barrier,
                latencies: list[float], acknowledged: list[str], errors: list[str]) -> None:
    """One learner: log in, wait for the others, then answer every card, the n-th at ``phase + n * pace``
    seconds after the start (``pace`` 0: each as soon as the one before is done)."""
    client = Client(port)
    try:
        client.request("GET", "/login")
        client.request("POST", "/login", {"csrf": client.cookies["bertdrill_csrf"], "name": name,
                                          "password": f"{name}-password"})
        start.wait(timeout=TIMEOUT * 4)
        began = time.perf_counter()
        for number in range(answers):
            if pace:
                delay = began + phase + number * pace - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            card = client.hidden("card")
            typed = "Answer " + str(int(card.rsplit("-", 1)[1]))
            t0 = time.perf_counter()
            client.request("POST", "/review/answer", {"csrf": client.cookies["bertdrill_csrf"], "card": card,
                                                      "answer": typed})
            client.request("POST", "/review/grade", {"csrf": client.cookies["bertdrill_csrf"], "card": card,
                                                     "grade": "4"})
            latencies.append(time.perf_counter() - t0)
            acknowledged.append(card)  # the grade's redirect came back: the answer is committed
    except Exception as exc:  # noqa: BLE001 - reported, and the audit then says what was stored
        errors.append(f"{name}: {exc}")
        start.abort()  # the others stop waiting for this learner
    finally:
        client.close()


def set_up(scratch: Scratch, lesson: Path, learners: int, cli) -> list[str]:
    from bertdrill.adapters.store import PostgresStore, Store

    subprocess.run([*cli, "class", "init", "--db", scratch.url(), "--file", str(lesson)], check=True,
                   stdout=subprocess.DEVNULL)
    names = [f"learner-{n:03d}" for n in range(learners)]
    with Store.open(scratch.url()) as teacher:
        assert isinstance(teacher, PostgresStore)  # a class: members are PostgreSQL's
        for name in names:
            teacher.add_member(name, f"{name}-password")
    return names


def serve(scratch: Scratch, answers: int, cli) -> tuple[subprocess.Popen[str], int]:
    url = scratch.url(f"{scratch.name}_server")
    process = subprocess.Popen([*cli, "serve", "--db", url, "--port", "0", "--new", str(answers), "--limit",
                                str(answers)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline() if process.stdout else ""
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not found:
        process.kill()
        raise SystemExit(f"the server did not start: {line}{process.stderr.read() if process.stderr else ''}")
    return process, int(found[1])


def stop(process: subprocess.Popen[str]) -> float:
    """Stop the server; its CPU seconds (user + system) from wait4."""
    process.send_signal(signal.SIGTERM)
    try:
        _pid, _status, usage = os.wait4(process.pid, 0)
    except ChildProcessError:
        return float("nan")
    process.returncode = 0
    for stream in (process.stdout, process.stderr):
        if stream:
            stream.close()
    return usage.ru_utime + usage.ru_stime


def audit(scratch: Scratch, acknowledged: dict[str, list[str]]) -> bool:
    import psycopg

    with psycopg.connect(scratch.url(), autocommit=True) as connection:
        rows = connection.execute("SELECT m.name, r.card_id FROM review r JOIN member m ON m.learner = r.learner "
                                  "ORDER BY r.id").fetchall()
    stored: dict[str, list[str]] = {}
    for name, card in rows:
        stored.setdefault(name, []).append(card)
    good = all(sorted(stored.get(name, [])) == sorted(cards) for name, cards in acknowledged.items()) and \
        set(stored) <= set(acknowledged)
    lost = sum(max(0, len(cards) - len(stored.get(name, []))) for name, cards in acknowledged.items())
    print(f"  audit: {len(rows):,} answers stored, {sum(map(len, acknowledged.values())):,} acknowledged; "
          f"{'every one exactly once' if good else f'MISMATCH ({lost} lost)'}")
    return good


def http_run(label: str, args, lesson: Path, cli, pace: float) -> bool:
    """One run over HTTP. With a ``pace``, the learners' answers are spread evenly over each period (learner i
    starts i / rate seconds in), so the server is offered a steady rate; ``--lockstep`` has every learner answer
    at the same instant instead (a burst of ``--learners`` answers each period: what last session measured)."""
    scratch = Scratch()
    process = None
    try:
        names = set_up(scratch, lesson, args.learners, cli)
        process, port = serve(scratch, args.answers, cli)
        latencies: list[float] = []
        acknowledged: dict[str, list[str]] = {name: [] for name in names}
        errors: list[str] = []
        start = threading.Barrier(len(names) + 1)
        phases = [0.0 if args.lockstep else index * pace / len(names) for index in range(len(names))]
        threads = [threading.Thread(target=learner_run, args=(port, name, args.answers, pace, phase, start, latencies,
                                                              acknowledged[name], errors), daemon=True)
                   for name, phase in zip(names, phases, strict=True)]
        for thread in threads:
            thread.start()
        try:
            start.wait(timeout=TIMEOUT * 4)  # every learner logged in (a scrypt hash each)
        except threading.BrokenBarrierError:
            raise SystemExit(f"{label}: the learners could not all log in: {errors[:3]}") from None
        began, cpu = time.perf_counter(), time.process_time()
        for thread in threads:
            thread.join(timeout=max(1.0, DEADLINE - (time.perf_counter() - began)))
        wall, client_cpu = time.perf_counter() - began, time.process_time() - cpu
        server_cpu = stop(process)
        process = None
        done = sorted(latencies)
        print(f"  {label}: {len(done):,} answers in {wall:.1f} s = {len(done) / wall:,.1f} answers/s; per answer "
              f"p50 {1000 * percentile(done, 0.5):.1f} ms, p99 {1000 * percentile(done, 0.99):.1f} ms "
              f"(mean {1000 * statistics.fmean(done):.1f} ms); server CPU {server_cpu:.1f} s, clients' CPU "
              f"{client_cpu:.1f} s")
        for error in errors[:5]:
            print(f"    error: {error}")
        return audit(scratch, acknowledged)
    finally:
        if process is not None:
            process.kill()
            process.wait(timeout=10)
        scratch.drop()


def direct_run(args, lesson: Path, cli) -> None:
    """The baseline: the same answers through the store the server uses, one thread per learner, no HTTP."""
    from bertdrill.adapters.lessons import all_cards, load_lessons
    from bertdrill.adapters.store import PostgresStore
    from bertdrill.core.scheduling import sm2
    from bertdrill.core.scheduling.state import AnswerKind

    scratch = Scratch()
    try:
        names = set_up(scratch, lesson, args.learners, cli)
        cards = all_cards(load_lessons([lesson]))
        day, moment = date(2025, 3, 3), datetime(2025, 3, 3, 9, tzinfo=UTC)
        with PostgresStore.serving(scratch.url(f"{scratch.name}_server")) as store:
            gate = store.gate()
            logins = [gate.log_in(name, f"{name}-password") for name in names]
            members = [login[0] for login in logins if login is not None]
            assert len(members) == len(names), "every learner set up logs in"
            latencies: list[float] = []
            errors: list[str] = []
            start = threading.Barrier(len(members) + 1)
            for member in members:  # as the server does on a learner's first visit, before the clock starts
                store.acting_as(member).schedule_every_card()

            def learner(member) -> None:
                own = store.acting_as(member)
                start.wait(timeout=TIMEOUT)
                try:
                    for card in cards[:args.answers]:
                        t0 = time.perf_counter()
                        own.answer(card.id, grade=4, kind=AnswerKind.NEW, reviewed_at=moment, study_day=day,
                                   reschedule=lambda s: sm2.review(s, 4, today=day), once_per_day=True,
                                   typed="Answer")
                        latencies.append(time.perf_counter() - t0)
                except Exception as exc:  # noqa: BLE001 - reported below
                    errors.append(f"{member.name}: {exc}")

            threads = [threading.Thread(target=learner, args=(member,), daemon=True) for member in members]
            for thread in threads:
                thread.start()
            start.wait(timeout=TIMEOUT)
            began = time.perf_counter()
            for thread in threads:
                thread.join(timeout=DEADLINE)
            wall = time.perf_counter() - began
        for error in errors[:3]:
            print(f"    error: {error}")
        done = sorted(latencies)
        print(f"  baseline, the store without HTTP ({len(errors)} learners failed): {len(done):,} answers in {wall:.1f} s = {len(done) / wall:,.1f} "
              f"answers/s; per answer p50 {1000 * percentile(done, 0.5):.1f} ms, "
              f"p99 {1000 * percentile(done, 0.99):.1f} ms")
    finally:
        scratch.drop()


DASHBOARD_FILL = """
INSERT INTO member (id, class_id, name, name_key, role, learner, created_at)
SELECT 1000 + g, (SELECT min(id) FROM classroom), 'learner ' || g, 'learner ' || g, 'learner', 'member:' || (1000 + g),
       now() FROM generate_series(1, :learners) g;
INSERT INTO schedule (learner, card_id, repetitions, ef100, interval, due, lapses)
SELECT 'member:' || (1000 + g), c.id, (hashtext(g || c.id) & 7) % 4, 130 + (hashtext(c.id || g) & 127), 6,
       CAST(:today AS date) + (hashtext(g || '-' || c.id) & 15) - 8, 1
FROM generate_series(1, :learners) g, card c;
INSERT INTO review (learner, card_id, reviewed_at, study_day, kind, grade, typed, duration_ms, reps_before,
                    ef100_before, interval_before, lapses_before, reps_after, ef100_after, interval_after, lapses_after,
                    variant)
SELECT 'member:' || (1000 + g), c.id, CAST(:today AS date) - (:per - 1 - n) * 60 / :per + TIME '09:00',
       CAST(:today AS date) - (:per - 1 - n) * 60 / :per,
       CASE WHEN n < :cards THEN 'new' ELSE 'review' END, (hashtext(g || ':' || n) & 7) % 6,
       CASE WHEN (hashtext(g || ':' || n) & 7) % 6 < 3 THEN 'wrong ' || (hashtext(c.id || n) & 3) ELSE 'right' END,
       4000, n / :cards, 250, 6, 0, n / :cards + 1, 250, 15, 0,
       CASE WHEN abs(hashtext(g || '/' || n)) % 100 < :variants
            THEN (hashtext(n || '/' || g) & 65535) || ':' || 'd=' || (16 + 8 * (hashtext(c.id || g) & 3)) END
FROM generate_series(1, :learners) g, generate_series(0, :per - 1) n
JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM card) c ON c.k = n % :cards
"""


def dashboard_run(args, cli) -> None:
    """The teacher's dashboard (GET /teacher, in process) on ``--dashboard-learners`` members with
    ``--dashboard-reviews`` answers in all, written by SQL (``--dashboard-variants`` percent of them to fresh
    numbers); median of 3, wall and CPU."""
    import warnings

    from sqlalchemy import create_engine, text

    from bertdrill.adapters.store import PostgresStore, Store
    from bertdrill.adapters.store.members import MemberRole
    from bertdrill.web.app import class_app
    from bertdrill.web.classroom import ClassServer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    scratch = Scratch()
    try:
        with tempfile.TemporaryDirectory(prefix="bertdrill-bench-") as folder:
            lesson = Path(folder) / "bench.toml"
            lesson.write_text(lesson_text(args.dashboard_cards), encoding="utf-8")
            subprocess.run([*cli, "class", "init", "--db", scratch.url(), "--file", str(lesson)], check=True,
                           stdout=subprocess.DEVNULL)
        with Store.open(scratch.url()) as teacher:
            assert isinstance(teacher, PostgresStore)
            teacher.add_member("Teacher", "teacher-password", MemberRole.TEACHER)
        began = time.perf_counter()
        engine = create_engine(scratch.url().replace("postgresql://", "postgresql+psycopg://"))
        today = date.today()
        with engine.begin() as connection:
            for statement in DASHBOARD_FILL.split(";"):
                if statement.strip():
                    connection.execute(text(statement), {
                        "today": today, "learners": args.dashboard_learners, "cards": args.dashboard_cards,
                        "per": args.dashboard_reviews // args.dashboard_learners,
                        "variants": args.dashboard_variants})
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql("VACUUM ANALYZE")
            reviews = connection.exec_driver_sql("SELECT count(*) FROM review").scalar_one()
        engine.dispose()
        print(f"  dashboard: {args.dashboard_learners:,} learners, {reviews:,} answers written in "
              f"{time.perf_counter() - began:.1f} s")
        with PostgresStore.serving(scratch.url(f"{scratch.name}_server")) as store:
            client = TestClient(class_app(ClassServer(store, clock=lambda: datetime.now(UTC))),
                                base_url="http://127.0.0.1")
            client.get("/login")
            client.post("/login", data={"csrf": client.cookies.get("bertdrill_csrf"), "name": "Teacher",
                                        "password": "teacher-password"})
            walls, cpus = [], []
            for _ in range(3):
                started, used = time.perf_counter(), time.process_time()
                page = client.get("/teacher")
                walls.append(time.perf_counter() - started)
                cpus.append(time.process_time() - used)
                assert page.status_code == 200 and page.text.count('<td class="name">') == args.dashboard_learners
            client.close()
            teacher_member = store.gate().log_in("Teacher", "teacher-password")[0]  # type: ignore[index]
            as_teacher = store.acting_as(teacher_member)
            parts = {}
            for name, work in (("class_report", lambda: as_teacher.class_report(date.today())),
                               ("wrong_answers", as_teacher.wrong_answers),
                               ("class_members", lambda: as_teacher.class_members(archived=True)),
                               ("class_activity", lambda: as_teacher.class_activity(  # the activity chart's
                                   date.today() - timedelta(days=29), date.today()))):
                started = time.perf_counter()
                work()
                parts[name] = time.perf_counter() - started
        print("  dashboard's parts: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in parts.items()))
        print(f"  dashboard: GET /teacher median {statistics.median(walls):.2f} s wall, "
              f"{statistics.median(cpus):.2f} s CPU in this process (target <= 1 s)")
    finally:
        scratch.drop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=50)
    parser.add_argument("--answers", type=int, default=200, help="answers per learner (the lesson's cards)")
    parser.add_argument("--rate", type=float, default=50.0, help="offered load, answers/s in all")
    parser.add_argument("--skip-saturation", action="store_true")
    parser.add_argument("--lockstep", action="store_true",
                        help="offered load: every learner answers at the same instant (bursts), not spread evenly")
    parser.add_argument("--skip-http", action="store_true", help="only the baseline")
    parser.add_argument("--skip-offered", action="store_true", help="no run at the offered rate")
    parser.add_argument("--skip-baseline", action="store_true", help="no run through the store without HTTP")
    parser.add_argument("--dashboard-learners", type=int, default=1000)
    parser.add_argument("--dashboard-reviews", type=int, default=1_000_000)
    parser.add_argument("--dashboard-cards", type=int, default=32)
    parser.add_argument("--dashboard-variants", type=int, default=0,
                        help="percent of the dashboard's answers logged as asked with fresh numbers (a seed and one "
                             "of 4 variants' keys), so both of its wrong-answer indexes are read")
    parser.add_argument("--skip-dashboard", action="store_true")
    parser.add_argument("--only-dashboard", action="store_true")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "bertdrill"]
    print(f"class server over loopback HTTP: {args.learners} learners x {args.answers} answers "
          f"(load average {os.getloadavg()[0]:.1f})")
    with tempfile.TemporaryDirectory(prefix="bertdrill-bench-") as folder:
        lesson = Path(folder) / "bench.toml"
        lesson.write_text(lesson_text(args.answers), encoding="utf-8")
        good = True
        if args.only_dashboard:
            dashboard_run(args, cli)
            return 0
        if not args.skip_saturation and not args.skip_http:
            good &= http_run("saturation, all at once", args, lesson, cli, pace=0.0)
        if not args.skip_http and not args.skip_offered:
            good &= http_run(f"offered {args.rate:g} answers/s{' in lockstep bursts' if args.lockstep else ''}", args, lesson, cli, pace=args.learners / args.rate)
        if not args.skip_baseline:
            direct_run(args, lesson, cli)
        if not args.skip_dashboard:
            dashboard_run(args, cli)
    print(f"  load average after: {os.getloadavg()[0]:.1f}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
