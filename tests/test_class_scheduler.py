"""A class learner chooses and fits their scheduler through the class server (issue 22's class part).

A class of Ayşe and Bora (learners) and Tülin (the teacher) on a test PostgreSQL database, its lesson 60 synthetic
fact cards; Ayşe's log is the synthetic learner's 200 days (tests/learner_store.py), written straight into the
class's review table (answering it through a server would take minutes), and the same log is a SQLite store of
her own, so a switch through the server can be compared, schedule by schedule, with the same switch on her own
store. The server runs on 127.0.0.1 (uvicorn in a thread) for her terminal; the browser's form is driven
in-process over the same server.
"""

from __future__ import annotations

import http.client
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import pytest
from learner_store import LESSON, learner_store
from postgres import Server
from serving import listening
from test_scheduler_cli import NOW
from test_web_class import current_card
from web_client import Browser

from bertdrill.adapters.remote.client import Connection
from bertdrill.adapters.remote.login import login_path, saved_login
from bertdrill.adapters.store import PostgresStore
from bertdrill.cli.base import chosen_scheduler
from bertdrill.core.errors import StoreError
from bertdrill.web.app import class_app
from bertdrill.web.classroom import ClassServer

CARDS = 60
SCHEDULE = ("card_id", "repetitions", "ef100", "interval", "due", "lapses", "suspended", "buried_until", "leech",
            "stability", "difficulty")
REVIEW = ("card_id", "reviewed_at", "study_day", "kind", "grade", "duration_ms", "reps_before", "ef100_before",
          "interval_before", "due_before", "lapses_before", "reps_after", "ef100_after", "interval_after", "due_after",
          "lapses_after")


def synthetic_lesson() -> str:
    items = "".join(f'\n[[item]]\nid = "card-{n:03d}"\nkind = "fact"\nquestion = {{ en = "Question {n}?", '
                    f'tr = "Soru {n}?" }}\nanswer = {{ en = "Answer {n}.", tr = "Cevap {n}." }}\n'
                    for n in range(CARDS))
    return f'[lesson]\nid = "{LESSON}"\nlanguages = ["en", "tr"]\ntitle = {{ en = "Synthetic", tr = "Yapay" }}\n{items}'


@dataclass
class Class:
    url: str
    postgres: Server
    app: Any
    own: str  # Ayşe's own SQLite store, holding the same log as hers in the class

    def learner(self, name: str) -> str:
        with self.postgres.connect() as connection:
            found = connection.execute("SELECT learner FROM member WHERE name = %s", (name,)).fetchone()
        assert found is not None
        return str(found[0])

    def schedules(self, name: str) -> dict[str, tuple[Any, ...]]:
        with self.postgres.connect() as connection:
            rows = connection.execute(f"SELECT {', '.join(SCHEDULE)} FROM schedule WHERE learner = %s",
                                      (self.learner(name),)).fetchall()
        return {row[0]: tuple(row[1:]) for row in rows}

    def choice(self, name: str) -> tuple[Any, ...] | None:
        with self.postgres.connect() as connection:
            found = connection.execute("SELECT name, retention, parameters, spread FROM scheduler WHERE learner = %s",
                                       (self.learner(name),)).fetchone()
        return None if found is None else tuple(found)

    def browser(self, name: str) -> Browser:
        web = Browser(self.app)
        web.get("/login")
        web.submit("/login", name=name, password=f"{name}-password")
        assert web.status == 200, web.page[:300]
        return web


def own_schedules(path: str) -> dict[str, tuple[Any, ...]]:
    """The SQLite store's schedules, as PostgreSQL gives them back (days and flags as Python values)."""
    from datetime import date

    with sqlite3.connect(path) as connection:
        rows = connection.execute(f"SELECT {', '.join(SCHEDULE)} FROM schedule").fetchall()
    return {row[0]: (*row[1:4], date.fromisoformat(row[4]) if row[4] else None, row[5], bool(row[6]),
                     date.fromisoformat(row[7]) if row[7] else None, bool(row[8]), row[9], row[10]) for row in rows}


def copy_log(own: str, postgres: Server, learner: str, cards: int = CARDS) -> None:
    """Ayşe's own log, as the class's rows of ``learner`` (the first ``cards`` cards' answers)."""
    kept = {f"{LESSON}/card-{n:03d}" for n in range(cards)}
    with sqlite3.connect(own) as connection:
        rows = [row for row in connection.execute(f"SELECT {', '.join(REVIEW)} FROM review ORDER BY id")
                if row[0] in kept]
    with postgres.connect() as connection, connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO review ({', '.join(REVIEW)}, learner) VALUES "
                           f"({', '.join(['%s'] * len(REVIEW))}, %s)",
                           [(*row[:1], datetime.fromisoformat(row[1]), *row[2:], learner) for row in rows])


@pytest.fixture
def klass(postgres, cli, tmp_path, monkeypatch) -> Iterator[Class]:
    lesson = tmp_path / "synthetic.toml"
    lesson.write_text(synthetic_lesson(), encoding="utf-8")
    monkeypatch.setenv("BERTDRILL_DB", postgres.url)
    monkeypatch.setenv("BERTDRILL_NOW", NOW)  # the local store's clock: the server's below
    assert cli("class", "init", "--file", str(lesson)).exit_code == 0
    for command, name in (("add-learner", "Ayşe"), ("add-learner", "Bora"), ("add-teacher", "Tülin")):
        assert cli("class", command, name, "--password", f"{name}-password").exit_code == 0
    monkeypatch.delenv("BERTDRILL_DB")  # the learner's machine has no database
    own = str(tmp_path / "own.db")
    learner_store(tmp_path / "own.db", count=CARDS)
    klass = Class("", postgres, None, own)
    copy_log(own, postgres, klass.learner("Ayşe"))
    copy_log(own, postgres, klass.learner("Bora"), cards=5)  # Bora has a short log of his own
    store = PostgresStore.serving(postgres.url_as(f"{postgres.database}_server"))
    server = ClassServer(store, clock=lambda: datetime.fromisoformat(NOW), scheduler=chosen_scheduler)  # as serve
    app = class_app(server)
    try:
        with listening(app) as url:
            klass.url, klass.app = url, app
            yield klass
    finally:
        store.close()


def log_in(cli, klass: Class, name: str) -> str:
    result = cli("login", klass.url, "--name", name, input=f"{name}-password\n")
    assert result.exit_code == 0, result.output
    found = saved_login(login_path())
    assert found is not None
    return found.token


def test_a_learner_fits_and_switches_from_the_terminal_exactly_as_on_her_own_store(klass, cli):
    log_in(cli, klass, "Bora")
    assert cli("scheduler", "fsrs", "--retention", "0.85").exit_code == 0  # Bora's own choice, before Ayşe's
    bora, bora_choice = klass.schedules("Bora"), klass.choice("Bora")
    log_in(cli, klass, "Ayşe")
    shown = cli("scheduler")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("Scheduler: SM-2.\n") and "Fitted parameter sets" not in shown.stdout
    through = cli("scheduler", "fsrs", "--fit", "--retention", "0.88")
    assert through.exit_code == 0, through.output
    assert "Fitting FSRS's parameters to your reviews (fsrs-rs)..." in through.stderr
    local = cli("scheduler", "fsrs", "--fit", "--retention", "0.88", "--db", klass.own)  # the same, on her own
    assert local.exit_code == 0, local.output
    assert through.stdout == local.stdout  # the same lines: the choice, the cards, answers, due before and after
    assert through.stdout.startswith("Switched to FSRS, desired retention 0.88, parameters set 1: fitted 2025-07-20 on ")
    assert through.stdout.splitlines()[-1] == "To undo, switch back: bertdrill scheduler sm2"
    assert klass.schedules("Ayşe") == own_schedules(klass.own)  # every card, every float, exactly
    assert klass.choice("Ayşe") == ("fsrs", 0.88, 1, None)
    assert klass.schedules("Bora") == bora and klass.choice("Bora") == bora_choice  # untouched
    shown = cli("scheduler").stdout
    assert "Scheduler: FSRS, desired retention 0.88, parameters set 1: fitted 2025-07-20" in shown
    assert "  set 1: fitted 2025-07-20 on " in shown
    for asked in (["scheduler", "--spread", "off"], ["scheduler", "fsrs", "--parameters", "default"],
                  ["scheduler", "sm2"]):  # the spread alone, a stored set, and back: each as on her own store
        through, local = cli(*asked), cli(*asked, "--db", klass.own)
        assert through.exit_code == 0 and through.stdout == local.stdout, (through.output, local.output)
        assert klass.schedules("Ayşe") == own_schedules(klass.own)
    assert cli("scheduler", "sm2").stdout == "Already using SM-2: nothing to change.\n"


def test_bad_requests_are_400_with_the_message_and_touch_nothing(klass, cli):
    token = log_in(cli, klass, "Ayşe")
    api = Connection(klass.url, token=token, reconnect=0)
    api.get("/api/scheduler")  # her schedule rows are made on her first request
    before = klass.schedules("Ayşe")
    for body, message in (({"name": "fsrs", "retention": 0.5}, "desired retention must be from 0.70 to 0.97, got 0.5"),
                          ({"name": "fsrs", "retention": "high"}, "the desired retention is a number from 0.70 to 0.97"),
                          ({"name": "sm2", "fit": True}, "--fit is a setting of FSRS"),
                          ({"name": "fsrs", "fit": True, "parameters": "1"}, "give one of them"),
                          ({"name": "fsrs", "parameters": "7"}, "the number of a fitted set (none yet"),
                          ({"name": "anki"}, "name is one of sm2, fsrs, or null"),
                          ({"spread": "wide"}, "spread is one of off, fuzz, balance, or null"),
                          ({"name": "fsrs", "learner": "Bora"}, "a scheduler request has no field 'learner'")):
        with pytest.raises(StoreError, match="refused") as refused:
            api.post("/api/scheduler", body)
        assert message in str(refused.value), (body, str(refused.value))
    parts = urlsplit(klass.url)  # the status and the language, over a request of its own
    raw = http.client.HTTPConnection(parts.hostname or "", parts.port)
    raw.request("POST", "/api/scheduler", body=b'{"name": "fsrs", "retention": 0.99}', headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {token}", "Accept-Language": "tr"})
    answer = raw.getresponse()
    assert answer.status == 400
    assert "0.70" in answer.read().decode("utf-8")
    raw.close()
    assert klass.schedules("Ayşe") == before and klass.choice("Ayşe") is None
    shown = cli("scheduler", "fsrs", "--retention", "0.99")
    assert shown.exit_code == 1 and "desired retention must be from 0.70 to 0.97, got 0.99" in shown.stderr


def test_too_short_a_history_says_how_many_reviews_are_missing_and_keeps_the_defaults(klass, cli):
    log_in(cli, klass, "Bora")  # five cards' answers
    result = cli("scheduler", "fsrs", "--fit")
    assert result.exit_code == 1
    assert "more are needed: FSRS keeps its default parameters" in result.stderr and "Traceback" not in result.output
    assert klass.choice("Bora") is None  # nothing changed
    assert cli("scheduler", "fsrs").exit_code == 0
    assert klass.choice("Bora") == ("fsrs", 0.9, None, None)


def test_the_stats_page_form_switches_and_a_teacher_gets_403(klass, cli):
    web = klass.browser("Ayşe")
    sitting = web.get("/review")  # a sitting open in another tab: it starts again after the switch
    assert 'name="card"' in sitting
    page = web.get("/stats")
    assert 'action="/stats/scheduler"' in page and "In use: SM-2." in page
    page = web.submit("/stats/scheduler", scheduler="fsrs", retention="0.85", parameters="keep", spread="fuzz")
    assert web.status == 200, page[:500]
    assert "Switched to FSRS, desired retention 0.85:" in page and "In use: FSRS, desired retention 0.85." in page
    local = cli("scheduler", "fsrs", "--retention", "0.85", "--spread", "fuzz", "--db", klass.own)
    assert local.exit_code == 0
    assert klass.schedules("Ayşe") == own_schedules(klass.own)
    assert "Your scheduler was switched" in web.get("/review")
    web.get("/stats")
    page = web.submit("/stats/scheduler", scheduler="fsrs", retention="1.5", parameters="keep", spread="fuzz")
    assert web.status == 400 and "the desired retention is a number from 0.70 to 0.97" in page  # as the form writes it
    web.client.cookies.set("bertdrill_csrf", "x" * 32)  # another site's post: the token does not match
    web.client.post("/stats/scheduler", data={"csrf": "y" * 32, "scheduler": "sm2", "spread": "fuzz"})
    assert klass.choice("Ayşe") == ("fsrs", 0.85, None, "fuzz")
    teacher = klass.browser("Tülin")
    teacher.get("/teacher")
    csrf = teacher.client.cookies.get("bertdrill_csrf")
    refused = teacher.client.post("/stats/scheduler", data={"csrf": csrf or "", "scheduler": "sm2", "spread": "off"})
    assert refused.status_code == 403
    bora = klass.browser("Bora")  # five cards' answers: too few to fit, said on the page, and nothing changes
    bora.get("/stats")
    page = bora.submit("/stats/scheduler", scheduler="fsrs", retention="0.90", parameters="fit", spread="balance")
    assert bora.status == 409 and "more are needed: FSRS keeps its default parameters" in page
    assert klass.choice("Bora") is None
    bora.client.cookies.set("bertdrill_lang", "tr")
    page = bora.get("/stats")
    assert "Zamanlayıcın" in page and "Sınavın" in page


def test_an_exam_plan_is_set_from_the_terminal_and_the_page_as_on_her_own_store(klass, cli):
    """``bertdrill review --exam`` after login: the server plans her cards, as the same plan on her own store does
    (the class's limits, 10 new and 200 reviews a day); the page's form sets and ends it too."""
    from datetime import date

    from bertdrill.adapters.store import Store
    from bertdrill.app.scheduling import plan_exam
    from bertdrill.cli.base import scheduler_of
    from bertdrill.cli.exam import cannot_lines, planned_lines
    from bertdrill.core.cards import compile_lesson
    from bertdrill.core.lesson import parse
    from bertdrill.ports import ExamAsked

    log_in(cli, klass, "Ayşe")
    refused = cli("review", "--exam", "2025-08-20", input=":quit\n")  # SM-2 predicts no recall
    assert refused.exit_code == 1 and "an exam plan needs FSRS's predicted recall" in refused.stderr
    assert cli("scheduler", "fsrs", "--spread", "fuzz").exit_code == 0
    assert cli("scheduler", "fsrs", "--spread", "fuzz", "--db", klass.own).exit_code == 0
    for day, message in (("2025-07-20", "the exam day 2025-07-20 is not after today (2025-07-20)"),
                         ("2025-13-01", "--exam takes a day such as 2027-01-15, or off")):
        refused = cli("review", "--exam", day, input=":quit\n")
        assert refused.exit_code == 1 and message in refused.stderr, refused.output
    result = cli("review", "--exam", "2025-08-20", "--exam-target", "0.95", input=":quit\n")
    assert result.exit_code == 0, result.output
    cards = compile_lesson(parse(synthetic_lesson(), "synthetic.toml"))
    with Store.open(klass.own) as store:
        planned = plan_exam(store, cards, ExamAsked(date(2025, 8, 20), 0.95), date(2025, 7, 20), scheduler_of,
                            new=10, limit=200)
    assert result.stdout.startswith("\n".join(planned_lines(planned)) + "\n")
    assert result.stdout.startswith("Exam on 2025-08-20: 60 cards replanned so their predicted recall on the day "
                                    "reaches 0.95.\nBefore the exam: ")
    assert "\n".join(cannot_lines(planned)) in result.stderr
    assert klass.schedules("Ayşe") == own_schedules(klass.own)  # every card replanned exactly as on her own
    web = klass.browser("Ayşe")
    page = web.get("/stats")
    assert "Every lesson: exam on 2025-08-20, target 0.95." in page
    page = web.submit("/stats/exam", plan="off", lesson="")
    assert web.status == 200 and "Exam plan ended: 60 cards rescheduled by FSRS alone." in page
    assert "No exam plan is set." in page
    page = web.submit("/stats/exam", plan="set", day="2025-09-01", target="0.90", lesson=LESSON)
    assert web.status == 200 and f"Exam of {LESSON} on 2025-09-01: its cards replanned" in page, page[:2000]
    page = web.submit("/stats/exam", plan="set", day="2025-09-01", target="1.5", lesson="")
    assert web.status == 400 and "--exam-target must be from 0.70 to 0.99, got 1.5" in page
    token = saved_login(login_path())
    assert token is not None
    api = Connection(klass.url, token=token.token, reconnect=0)
    for body, message in (({"day": "tomorrow"}, "the exam's day is a date such as 2027-01-15"),
                          ({"day": "2025-09-01", "lesson": "physics"}, "no lesson 'physics' here"),
                          ({"day": "2025-09-01", "learner": "Bora"}, "an exam request has no field 'learner'")):
        with pytest.raises(StoreError, match="refused") as refused_api:
            api.post("/api/exam", body)
        assert message in str(refused_api.value)
    assert klass.choice("Bora") is None  # Bora's scheduler is his own


def test_a_review_page_open_before_the_switch_schedules_with_the_new_choice(klass):
    """A sitting opened under SM-2 starts again after the switch, so its next answer is FSRS's (a memory state)."""
    web = klass.browser("Ayşe")
    page = web.get("/review")
    card = current_card(page)
    web.get("/stats")
    web.submit("/stats/scheduler", scheduler="fsrs", retention="0.90", parameters="keep", spread="balance")
    assert klass.schedules("Ayşe")[card][-2] is not None  # the replay gave every reviewed card FSRS's state
    page = web.get("/review")
    assert "Your scheduler was switched: the review starts again over what is due now." in page
    card = current_card(page)
    web.submit("/review/answer", answer="Answer.")
    web.submit("/review/grade", grade="4")
    with klass.postgres.connect() as connection:
        logged = connection.execute("SELECT stability_after, difficulty_after FROM review WHERE card_id = %s "
                                    "ORDER BY id DESC LIMIT 1", (card,)).fetchone()
    assert logged is not None and None not in logged  # scheduled by FSRS, not the sitting's old SM-2
