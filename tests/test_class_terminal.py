"""The terminal learner in a class, through the class server (issue 20): ``bertdrill login``, ``review``, ``logout``.

A real server on 127.0.0.1 (uvicorn in a thread, on a free port, stopped by the fixture) in front of a test
PostgreSQL database; the learners' terminals are the CLI run in-process (CliRunner), reading answers as lines.
Nothing here gives a learner a database URL: their terminal holds a login token, and the server records.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from postgres import Server
from serving import listening
from test_web import LESSON

from bertdrill.adapters.remote.client import Connection
from bertdrill.adapters.remote.login import Login, login_path, saved_login
from bertdrill.adapters.store import PostgresStore
from bertdrill.core.errors import StoreError
from bertdrill.core.scheduling.state import AnswerKind
from bertdrill.web.app import class_app
from bertdrill.web.classroom import ClassServer

NOW = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)  # the server's clock: every study day is the server's
WIDTH = "web/width@small"  # numeric: 4 * (d * d + d) with d = 8 is 288
PICK = "web/pick"  # choice: b
CAPITAL = "web/capital"  # fact: Ankara


@dataclass
class Served:
    url: str
    postgres: Server
    clock: list[datetime]  # the server's clock: a test moves it on

    def rows(self, sql: str = "SELECT m.name, r.card_id, r.kind, r.grade, r.typed FROM review r "
                              "JOIN member m ON m.learner = r.learner ORDER BY r.id") -> list[tuple[Any, ...]]:
        with self.postgres.connect() as connection:
            return [tuple(row) for row in connection.execute(sql).fetchall()]


@pytest.fixture
def served(postgres, cli, tmp_path, monkeypatch) -> Iterator[Served]:
    """A class of Ayşe and Bora (learners) and Tülin (the teacher), its server listening on a free port."""
    lesson = tmp_path / "web.toml"
    lesson.write_text(LESSON, encoding="utf-8")
    monkeypatch.setenv("BERTDRILL_DB", postgres.url)
    assert cli("class", "init", "--file", str(lesson)).exit_code == 0
    for command, name in (("add-learner", "Ayşe"), ("add-learner", "Bora"), ("add-teacher", "Tülin")):
        assert cli("class", command, name, "--password", f"{name}-password").exit_code == 0
    # the learner's machine has no database: whatever BERTDRILL_DB said was the teacher's
    monkeypatch.delenv("BERTDRILL_DB")
    store = PostgresStore.serving(postgres.url_as(f"{postgres.database}_server"))
    clock = [NOW]
    server = ClassServer(store, clock=lambda: clock[0])
    try:
        with listening(class_app(server)) as url:
            yield Served(url, postgres, clock)
    finally:
        store.close()


def log_in(cli, served: Served, name: str) -> Login:
    result = cli("login", served.url, "--name", name, input=f"{name}-password\n")
    assert result.exit_code == 0, result.output
    found = saved_login(login_path())
    assert found is not None and found.name == name
    return found


def api(served: Served, token: str | None) -> Connection:
    return Connection(served.url, token=token, reconnect=0)


def test_a_learner_logs_in_reviews_in_the_terminal_and_logs_out(served, cli):
    result = cli("login", served.url, "--name", "ayşe", input="Ayşe-password\n")  # a name in any case
    assert result.exit_code == 0, result.output
    assert f"Logged in to {served.url} as Ayşe." in result.output
    path = login_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # only the learner reads the token
    kept = json.loads(path.read_text(encoding="utf-8"))
    assert set(kept) == {"server", "name", "token"} and "Ayşe-password" not in path.read_text(encoding="utf-8")
    assert "postgresql" not in path.read_text(encoding="utf-8")
    # the queue is the server's: due, then new cards in the lesson's interleaved order; the answers are lines
    result = cli("review", input="72\n1\n2\n\n:quit\n")  # width: d*d + d (the factor 4 left out), graded 1
    assert result.exit_code == 0, result.output
    assert "Reviewing in the class at" in result.output and "as Ayşe" in result.output
    assert "72 is attention of Small without the factor 4, not attention." in result.output  # diagnosed here
    assert "Saved: grade 1 · next review tomorrow (2025-03-04); back later in this session." in result.output
    assert "Saved: grade 4" in result.output  # the choice: b, Enter takes the suggested grade
    assert served.rows() == [("Ayşe", WIDTH, "new", 1, "72"), ("Ayşe", PICK, "new", 4, "2")]
    stats = cli("stats")  # the class's figures are on the server's page, not in a database here
    assert stats.exit_code == 1 and f"your figures are on its page {served.url}/stats" in stats.stderr
    shown = cli("scheduler")  # the class's server keeps her scheduler: shown from there, not her own file's
    assert shown.exit_code == 0 and shown.stdout.startswith("Scheduler: SM-2.\n"), shown.output
    fitted = cli("scheduler", "fsrs", "--fit")  # two answers: too few to fit, and nothing changes
    assert fitted.exit_code == 1 and "more are needed: FSRS keeps its default parameters" in fitted.stderr
    status = json.loads(cli("status", "--json").stdout)  # the class's status too, from the server
    assert (status["study_day"], status["answered_today"], status["learned"], status["cards"]) == ("2025-03-03", 2, 2, 3)
    assert status["database"] == f"the class at {served.url}, as Ayşe"
    result = cli("logout")
    assert result.exit_code == 0 and f"Logged out of {served.url}." in result.output
    assert not path.exists()
    with pytest.raises(StoreError, match="log in again"):  # the token is revoked on the server, not only here
        api(served, kept["token"]).get("/api/class")


def test_undo_bury_and_suspend_go_through_the_server(served, cli):
    log_in(cli, served, "Ayşe")
    result = cli("review", input="288\n\n:undo\n288\n5\n:suspend\n:bury\n:quit\n")
    assert result.exit_code == 0, result.output
    assert "Undone: web/width@small is back as it was." in result.output
    assert "Suspended web/pick" in result.output and "Buried web/capital until tomorrow." in result.output
    assert served.rows() == [("Ayşe", WIDTH, "new", 5, "288")]  # the undone answer is gone, the second kept
    flags = served.rows("SELECT card_id, suspended, buried_until FROM schedule s JOIN member m ON m.learner = "
                        "s.learner WHERE m.name = 'Ayşe' AND card_id <> 'web/width@small' ORDER BY card_id")
    assert flags == [(CAPITAL, False, NOW.date().replace(day=4)), (PICK, True, None)]
    assert served.rows("SELECT action FROM card_action") == [("suspend",)]  # logged, as the terminal logs it


def test_wrong_password_server_down_and_an_ended_login_are_messages_not_tracebacks(served, cli, monkeypatch):
    result = cli("login", served.url, "--name", "Ayşe", input="not-her-password\n")
    assert result.exit_code == 1 and "do not match a member of the class" in result.stderr
    assert "Traceback" not in result.output + result.stderr and not login_path().exists()
    result = cli("login", "http://class.example.org", "--name", "Ayşe", input="x\n")
    assert result.exit_code == 1 and "plain http" in result.stderr  # never a password in clear over a network
    login = log_in(cli, served, "Ayşe")
    with socket.socket() as probe:  # a port nothing listens on: the server is down
        probe.bind(("127.0.0.1", 0))
        down = probe.getsockname()[1]
    login_path().write_text(json.dumps({"server": f"http://127.0.0.1:{down}", "name": "Ayşe",
                                        "token": login.token}), encoding="utf-8")
    monkeypatch.setattr("bertdrill.adapters.remote.client.RECONNECT_SECONDS", 0.5)
    result = cli("review", input="")
    assert result.exit_code == 1 and "cannot reach the class server at" in result.stderr
    assert "nothing listens there" in result.stderr and "Traceback" not in result.stderr
    login_path().write_text(json.dumps({"server": served.url, "name": "Ayşe", "token": "forged"}), encoding="utf-8")
    result = cli("review", input="")
    assert result.exit_code == 1 and "log in again with bertdrill login" in result.stderr
    assert cli("review", "--file", "x.toml").exit_code == 1  # the class's lessons are the teacher's


def test_a_server_that_never_replies_and_an_expired_login_end_the_review_with_a_message(served, cli, monkeypatch):
    login = log_in(cli, served, "Ayşe")
    with served.postgres.connect() as connection:  # thirty days on: the login has expired
        connection.execute("UPDATE member_login SET expires_at = now() - interval '1 minute'")
    result = cli("review", input="")
    assert result.exit_code == 1 and "your login has ended (expired" in result.stderr
    silent = socket.socket()  # accepts connections (the backlog), and never answers one
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    try:
        login_path().write_text(json.dumps({"server": f"http://127.0.0.1:{silent.getsockname()[1]}", "name": "Ayşe",
                                            "token": login.token}), encoding="utf-8")
        monkeypatch.setattr("bertdrill.adapters.remote.client.TIMEOUT_SECONDS", 0.5)
        monkeypatch.setattr("bertdrill.adapters.remote.client.RECONNECT_SECONDS", 1.0)
        began = time.monotonic()
        result = cli("review", input="")
        assert result.exit_code == 1 and "no reply within 0.5 s" in result.stderr
        assert time.monotonic() - began < 10 and "Traceback" not in result.stderr  # no hang
    finally:
        silent.close()


def test_a_learners_own_limit_lowers_the_classs(served, cli):
    log_in(cli, served, "Ayşe")
    result = cli("review", "--new", "1", input="288\n\n")
    assert "Review: 1 card (0 due, 0 to re-drill, 1 new)." in result.output
    assert "Review: 2 cards (0 due, 0 to re-drill, 2 new)." in cli("review", input="").output  # the class's 10: the rest


def sent(card: str, grade: int, typed: str | None, request: str | None = None) -> dict[str, Any]:
    return {"request": request or str(uuid.uuid4()), "card": card, "grade": grade, "typed": typed,
            "duration_ms": 1500, "cram": False, "variant": None, "language": "en"}


def test_a_replayed_answer_id_is_recorded_once(served, cli):
    ayse = api(served, log_in(cli, served, "Ayşe").token)
    first = ayse.post("/api/answers", sent(WIDTH, 4, "288", request="same-id"))
    again = ayse.post("/api/answers", sent(WIDTH, 4, "288", request="same-id"))
    assert again == first and served.rows() == [("Ayşe", WIDTH, "new", 4, "288")]


def test_an_answer_whose_reply_is_lost_is_sent_again_and_logged_once(served, cli):
    """The connection drops after the server committed the answer and before its reply arrived: the client sends it
    again under the same id, and the log holds it once."""
    import http.client

    connection = api(served, log_in(cli, served, "Ayşe").token)
    connection.reconnect = 5.0
    real_read = http.client.HTTPResponse.read
    dropped: list[bytes] = []

    def lose_first_answer_reply(self: http.client.HTTPResponse, amount: int | None = None) -> bytes:
        data = real_read(self, amount)
        if b'"card_id"' in data and not dropped:  # the answer's reply, read once and thrown away
            dropped.append(data)
            raise http.client.RemoteDisconnected("the connection dropped")
        return data

    from bertdrill.adapters.remote.client import ClassStore

    store = ClassStore(Login(served.url, "Ayşe", connection.token or ""), connection=connection)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(http.client.HTTPResponse, "read", lose_first_answer_reply)
        logged = store.answer(WIDTH, grade=4, kind=AnswerKind.NEW, reviewed_at=NOW, study_day=NOW.date(), typed="288")
    assert dropped and logged.grade == 4
    assert served.rows() == [("Ayşe", WIDTH, "new", 4, "288")]


def test_a_learners_token_reaches_none_of_another_learners_cards(served, cli):
    ayse = api(served, log_in(cli, served, "Ayşe").token)
    answered = ayse.post("/api/answers", sent(WIDTH, 5, "288"))
    bora = api(served, log_in(cli, served, "Bora").token)
    assert bora.get("/api/state", card=WIDTH)["schedule"]["due"] is None  # Bora's own card: new
    assert bora.get("/api/due", day="2025-03-04", limit=10) == []  # Ayşe's due card is not in Bora's queue
    with pytest.raises(StoreError, match="not one of today's answers"):  # her answer's id, edited into his undo
        bora.post("/api/undo", {"answer": answered["id"]})
    with pytest.raises(StoreError, match="not one of today's"):
        bora.post("/api/undo-action", {"action": 1})
    assert served.rows() == [("Ayşe", WIDTH, "new", 5, "288")]
    teacher = api(served, None)
    with pytest.raises(StoreError, match="a teacher reads the class at /teacher"):
        teacher.post("/api/login", {"name": "Tülin", "password": "Tülin-password"})


def test_the_server_decides_the_record_not_the_client(served, cli):
    """A forged client: a pass for a wrong typed answer is recorded as a fail; a card not due, a numeric card without
    its typed answer, a variant the lesson does not have and a burial past tomorrow are refused; the answer's time
    and study day are the server's."""
    ayse = api(served, log_in(cli, served, "Ayşe").token)
    logged = ayse.post("/api/answers", sent(WIDTH, 5, "72"))
    assert logged["grade"] == 2 and logged["reviewed_at"].startswith("2025-03-03T09:00")
    assert logged["after"]["due"] == "2025-03-04"
    for day in (3, 4):  # new on Monday, due on Tuesday: 5 and 5 put it days out (six, fuzzed)
        served.clock[0] = NOW.replace(day=day)
        ayse.post("/api/answers", sent(PICK, 5, "b"))
    due = ayse.get("/api/state", card=PICK)["schedule"]["due"]
    assert due > "2025-03-05"
    served.clock[0] = NOW.replace(day=5)
    with pytest.raises(StoreError, match=f"not due until {due}"):  # answering early would push it further
        ayse.post("/api/answers", sent(PICK, 5, "b"))
    with pytest.raises(StoreError, match="graded from what was typed"):
        ayse.post("/api/answers", sent(WIDTH, 5, None))
    with pytest.raises(StoreError, match="is not a variant"):
        ayse.post("/api/answers", {**sent(CAPITAL, 5, "Ankara"), "variant": "1:d=9"})
    with pytest.raises(StoreError, match="buried until tomorrow at most"):
        ayse.post("/api/flags", {"card": CAPITAL, "suspended": None, "bury": True, "buried_until": "2030-01-01"})
    assert ayse.post("/api/answers", sent(CAPITAL, 5, None))["grade"] == 5  # a fact the learner judges
    with pytest.raises(StoreError, match="415|JSON"):
        ayse.call("POST", "/api/answers", None, again=False)
    assert served.rows("SELECT card_id, kind, grade, study_day FROM review ORDER BY id") == [
        (WIDTH, "new", 2, NOW.date()), (PICK, "new", 5, NOW.date()), (PICK, "review", 5, NOW.date().replace(day=4)),
        (CAPITAL, "new", 5, NOW.date().replace(day=5))]
    assert not any(os.environ.get(name, "").startswith("postgresql") for name in ("BERTDRILL_DB",))


def test_the_servers_balance_is_kept_between_answers_and_moved_by_each():
    """The load the balancer reads is read once per learner and study day (then every minute), not per answer, and
    each answer moves it, as a review session moves its own."""
    from bertdrill.adapters.store.memory import MemoryStore
    from bertdrill.app import served
    from bertdrill.cli.base import scheduler_of
    from bertdrill.core.cards import compile_lesson
    from bertdrill.core.lesson import parse

    cards = {card.id: card for card in compile_lesson(parse(LESSON, "web.toml"))}
    store = MemoryStore(learner="ayse")
    store.sync(list(cards.values()))
    forecasts = []
    real = store.forecast

    def counted(*args, **kwargs):
        forecasts.append(args)
        return real(*args, **kwargs)

    store.forecast = counted  # type: ignore[method-assign]
    ticks = [0.0]
    balance = served.Balance(lambda: ticks[0])
    desk = served.Recording(store=store, managing=store, cards=cards.get, lessons=lambda lesson_id: None,
                            follow=scheduler_of, now=NOW, today=NOW.date(), balance=balance)
    first = served.record(desk, served.Sent(WIDTH, 4, "288", 1000, "a", "en"), learner_judges=lambda card: False)
    served.record(desk, served.Sent(PICK, 4, "b", 1000, "b", "en"), learner_judges=lambda card: False)
    assert len(forecasts) == 1  # the default spread balances: read once for both answers
    kept = balance._kept
    assert kept is not None and kept[3] is not None and kept[3].due == {first.after.due: 2}  # both moved in
    ticks[0] = 61.0
    served.record(desk, served.Sent(CAPITAL, 4, None, 1000, "c", "en"), learner_judges=lambda card: True)
    assert len(forecasts) == 2  # a minute on: read again


def test_the_teachers_changes_reach_the_terminal(served, cli, tmp_path, monkeypatch):
    """A lesson edited and published again is what the next terminal review asks; a password reset ends the
    terminal's login (within the server's 2 s cache of logins)."""
    log_in(cli, served, "Ayşe")
    edited = tmp_path / "web.toml"
    edited.write_text(LESSON.replace("Capital of Türkiye?", "Which city is the capital of Türkiye?"), encoding="utf-8")
    monkeypatch.setenv("BERTDRILL_DB", served.postgres.url)  # the teacher's commands, on the teacher's database
    assert "(version 2)" in cli("class", "init", "--file", str(edited)).stdout
    monkeypatch.delenv("BERTDRILL_DB")
    with pytest.MonkeyPatch.context() as later:  # the server looks for a new version every 30 s: now, here
        later.setattr("bertdrill.web.classroom.REFRESH_SECONDS", 0.0)
        result = cli("review", input="288\n\n2\n\n")
    assert "Which city is the capital of Türkiye?" in result.output, result.output
    monkeypatch.setenv("BERTDRILL_DB", served.postgres.url)
    assert cli("class", "reset-password", "Ayşe").exit_code == 0
    monkeypatch.delenv("BERTDRILL_DB")
    time.sleep(2.1)  # the server reads a login again after 2 s
    result = cli("review", input="")
    assert result.exit_code == 1 and "log in again with bertdrill login" in result.stderr
