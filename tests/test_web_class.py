"""The class server (``bertdrill serve --db postgresql://...``) on a real PostgreSQL server, driven as browsers drive it.

Two learners and a teacher, members of a class made with the teacher's commands; the server runs as its own
role and acts for one member per transaction. Each security property the issue lists has a test here: logins
rate-limited, cookies HttpOnly/SameSite (Secure behind TLS), CSRF on every form, teacher pages refused to
learners, ids edited in forms and cookies reaching nothing of anyone else, bad input a clear 4xx, and lesson
text and typed answers escaped in every page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from postgres import Server
from starlette.applications import Starlette
from test_web import LESSON
from web_client import Browser

from bertdrill.adapters.store import PostgresStore
from bertdrill.web import pages
from bertdrill.web.app import class_app
from bertdrill.web.classroom import ClassServer, Throttle

NOW = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def lesson(tmp_path):
    path = tmp_path / "web.toml"
    path.write_text(LESSON.replace('title = { en = "Web"', f'title = {{ en = "Web {HOSTILE}"'), encoding="utf-8")
    return path


@pytest.fixture
def classroom(postgres, cli, lesson, monkeypatch):
    """A class with learners Ayşe and Bora and the teacher Tülin; yields a function that opens a browser."""
    monkeypatch.setenv("BERTDRILL_DB", postgres.url)
    assert cli("class", "init", "--file", str(lesson)).exit_code == 0
    for command, name in (("add-learner", "Ayşe"), ("add-learner", "Bora"), ("add-teacher", "Tülin")):
        result = cli("class", command, name, "--password", f"{name}-password")
        assert result.exit_code == 0, result.stderr
    store = PostgresStore.serving(postgres.url_as(f"{postgres.database}_server"))
    ticks = [0.0]  # the server's monotonic clock, for its cache of logins
    server = ClassServer(store, clock=lambda: NOW, throttle=Throttle(),
                         monotonic=lambda: ticks[0])
    browsers = Classroom(class_app(server), server, postgres, ticks)
    yield browsers
    for web in browsers.opened:
        web.close()
    store.close()


@dataclass
class Classroom:
    """Browsers on the class server: ``classroom(name)`` opens one logged in as ``name`` (no name: logged out);
    the server, its database and its monotonic clock beside them."""

    app: Starlette
    server: ClassServer
    postgres: Server
    ticks: list[float]  # the server's monotonic clock, for its cache of logins
    opened: list[Browser] = field(default_factory=list)

    def __call__(self, name: str | None = None, base_url: str = "http://127.0.0.1:8000") -> Browser:
        web = Browser(self.app, base_url=base_url)
        self.opened.append(web)
        if name is not None:
            web.get("/login")
            web.submit("/login", name=name, password=f"{name}-password")
            assert web.status == 200, web.page[:500]
        return web

    def advance(self, seconds: float) -> None:
        """Move the server's monotonic clock on."""
        self.ticks[0] += seconds


def logged(postgres, sql="SELECT m.name, r.card_id, r.grade, r.typed FROM review r JOIN member m ON m.learner = "
                         "r.learner ORDER BY r.id"):
    with postgres.connect() as connection:
        return connection.execute(sql).fetchall()


def current_card(page: str) -> str:
    found = re.search(r'name="card" value="([^"]+)"', page)
    assert found is not None, page
    return found[1]


def test_a_learner_logs_in_reviews_and_the_answer_is_filed_under_her_alone(classroom):
    web = classroom()
    assert web.client.get("/", follow_redirects=False).headers["location"] == "/login"
    assert web.client.get("/review", follow_redirects=False).headers["location"] == "/login"
    page = web.get("/login")
    assert 'name="password" type="password"' in page
    web.submit("/login", name="ayşe", password="wrong-password")
    assert web.status == 401 and "do not match a member" in web.page
    page = web.submit("/login", name="AYŞE", password="Ayşe-password")  # a name matches in any case
    assert web.status == 200 and current_card(page) == "web/width@small"
    assert "Log out (Ayşe)" in page
    page = web.submit("/review/answer", answer="72")  # d*d + d: the factor 4 left out
    found = re.search(r'id="diagnosis">([^<]+)<', page)
    assert found is not None, page
    diagnosis = found[1]
    assert diagnosis == "72 is attention of Small without the factor 4, not attention."
    page = web.submit("/review/grade", grade="1")
    assert "Saved: grade 1" in page
    assert logged(classroom.postgres) == [("Ayşe", "web/width@small", 1, "72")]
    page = web.submit("/review/undo")
    assert "Undone: web/width@small is back as it was." in page and logged(classroom.postgres) == []
    web.submit("/logout")
    assert web.client.get("/review", follow_redirects=False).headers["location"] == "/login"  # the token is gone


def test_login_cookie_is_httponly_samesite_and_secure_behind_tls(classroom):
    for base, secure in (("http://127.0.0.1:8000", False), ("https://class.example.org", True)):
        web = classroom(base_url=base)
        web.get("/login")
        response = web.client.post("/login", data={**web.forms()["/login"], "name": "Bora",
                                                   "password": "Bora-password"}, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/review"
        login = [c for c in response.headers.get_list("set-cookie") if c.startswith("bertdrill_login=")]
        assert len(login) == 1 and "HttpOnly" in login[0] and "SameSite=lax" in login[0]
        assert ("Secure" in login[0]) is secure


def test_logins_are_rate_limited_per_name(classroom):
    web = classroom()
    web.get("/login")
    form = web.forms()["/login"]
    for _attempt in range(5):
        assert web.client.post("/login", data={**form, "name": "Bora", "password": "guess-guess"}).status_code == 401
    refused = web.client.post("/login", data={**form, "name": "Bora", "password": "Bora-password"})
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0  # even the right password, now
    assert "Too many attempts" in refused.text
    other = web.client.post("/login", data={**form, "name": "Ayşe", "password": "Ayşe-password"},
                            follow_redirects=False)
    assert other.status_code == 303  # another name is not locked out by guesses at Bora's
    for _login in range(40):  # a school's learners log in from one address: success never counts against it
        web.client.post("/login", data={**form, "name": "Ayşe", "password": "Ayşe-password"})
    for number in range(25):  # but guesses at many names from one address do: 30 failures in 5 minutes
        assert web.client.post("/login", data={**form, "name": f"guess-{number}", "password": "guess-guess"}
                               ).status_code == 401
    assert web.client.post("/login", data={**form, "name": "Ayşe", "password": "Ayşe-password"},
                           follow_redirects=False).status_code == 429


def test_every_form_needs_its_csrf_token(classroom):
    web = classroom()
    web.get("/login")
    assert web.client.post("/login", data={"name": "Bora", "password": "Bora-password"}).status_code == 403
    assert web.client.post("/login", data={"csrf": "forged", "name": "Bora",
                                           "password": "Bora-password"}).status_code == 403
    web = classroom("Bora")
    for action in ("/review/answer", "/review/undo", "/logout", "/password", "/settings"):
        response = web.client.post(action, data={"csrf": "forged", "answer": "1", "old": "x", "new": "y", "again": "y"})
        assert response.status_code == 403, action
    assert 'action="/logout"' in web.get("/review")  # still logged in: the forged logout did nothing


def test_teacher_pages_refuse_learners_and_show_the_class_to_the_teacher(classroom):
    ayse, bora = classroom("Ayşe"), classroom("Bora")
    for web, typed in ((ayse, "72"), (bora, "72")):
        page = web.get("/review")
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page  # lesson text escaped
        web.submit("/review/answer", answer=typed)
        web.submit("/review/grade", grade="1")
    bora.get("/review")
    bora.submit("/review/answer", option="1")
    bora.submit("/review/grade", grade="1")
    assert current_card(bora.get("/review")) == "web/capital"
    page = bora.submit("/review/answer", answer=HOSTILE)  # a typed answer with markup, for the teacher to read
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "<img" not in page
    bora.submit("/review/grade", grade="0")
    for path in ("/teacher", "/teacher/learners.csv"):
        assert ayse.client.get(path).status_code == 403
    teacher = classroom("Tülin")
    assert teacher.client.get("/review", follow_redirects=False).headers["location"] == "/teacher"
    page = teacher.get("/teacher")
    assert teacher.status == 200
    names = re.findall(r'<td class="name">(?:<a href="/teacher/learners/\d+">)?([^<]+)<', page)
    assert names == ["Ayşe", "Bora"]
    assert "2 learners typed 72: 72 is attention of Small without the factor 4, not attention." in page
    assert "1 learner typed &lt;img src=x onerror=alert(1)&gt;: " in page  # escaped, as every typed answer
    assert "<img" not in page and "<script>alert" not in page
    csv = teacher.client.get("/teacher/learners.csv")
    assert csv.headers["content-type"].startswith("text/csv")
    lines = csv.text.splitlines()
    assert lines[0] == "learner,learned,cards,due,answered_7_days,retention_30_days,streak,last_active_utc"
    assert [line.split(",")[:5] for line in lines[1:]] == [["Ayşe", "1", "3", "0", "1"], ["Bora", "3", "3", "0", "3"]]


def test_a_learner_editing_ids_reaches_nothing_of_anyone_else(classroom):
    ayse, bora = classroom("Ayşe"), classroom("Bora")
    ayse.get("/review")
    ayse.submit("/review/answer", answer="288")
    ayse.submit("/review/grade", grade="5")
    bora.get("/review")
    sitting = bora.client.cookies.get("bertdrill_sitting")
    form = bora.forms()["/review/answer"]
    # Ayşe's browser with Bora's sitting id: the sittings are per member, so it is nobody's here
    ayse.client.cookies.set("bertdrill_sitting", sitting, domain="127.0.0.1")
    stolen = ayse.client.post("/review/answer", data={**form, "csrf": ayse.client.cookies.get("bertdrill_csrf"),
                                                      "answer": "1"})
    assert stolen.status_code == 403
    # card ids edited in a form: another card, an unknown one, one Ayşe answered already
    ayse.client.cookies.delete("bertdrill_sitting")
    page = ayse.get("/review")
    mine = ayse.forms()["/review/answer"]
    for card in ("web/capital", "web/no-such-card", "web/width@small", "../" * 50):
        assert ayse.client.post("/review/answer", data={**mine, "card": card, "answer": "1"}).status_code == 409
    assert current_card(page) == "web/pick"
    assert logged(classroom.postgres) == [("Ayşe", "web/width@small", 5, "288")]  # Bora's record untouched
    assert current_card(bora.get("/review")) == "web/width@small"  # and his queue is his own
    # a login cookie made up or copied with one letter changed is nobody's
    bora.client.cookies.set("bertdrill_login", "x" * 43, domain="127.0.0.1")
    assert bora.client.get("/review", follow_redirects=False).headers["location"] == "/login"


@pytest.mark.parametrize(("action", "fields", "status"), [
    ("/review/answer", {"answer": "x" * 1_000_000}, 413),  # a 1 MB answer
    ("/review/answer", {"card": "web/no-such-card"}, 409),  # an unknown card id
    ("/review/grade", {"grade": "9"}, 409),  # grading before answering
    ("/login", {"name": "x" * 100_000}, 413),
    ("/password", {"old": "x", "new": "y" * 2000, "again": "y" * 2000}, 413),
])
def test_bad_input_gets_a_clear_4xx_never_a_500(classroom, action, fields, status):
    web = classroom("Ayşe")
    web.get("/review")
    form = {**web.forms()["/review/answer"], "answer": "320", "name": "n", "password": "p", **fields}
    response = web.client.post(action, data=form)
    assert response.status_code == status, response.text[:300]
    assert "<h1>" in response.text and "Traceback" not in response.text
    assert web.client.post("/review/answer", content=b"\xff\xfe=%%%", headers={
        "content-type": "application/x-www-form-urlencoded"}).status_code in (400, 403)
    assert web.client.post("/login", files={"name": ("a.txt", b"x")}).status_code == 400
    assert web.client.get("/teacher/../../etc/passwd").status_code in (403, 404)
    assert logged(classroom.postgres) == []


def test_a_learner_changes_her_own_password_and_an_archived_member_is_logged_out(classroom, cli):
    ayse = classroom("Ayşe")
    ayse.get("/password")
    ayse.submit("/password", old="Ayşe-password", new="new-password-1", again="new-password-2")
    assert ayse.status == 400 and "The two new passwords differ." in ayse.page
    ayse.submit("/password", old="not-my-password", new="new-password-1", again="new-password-1")
    assert ayse.status == 403 and "not your current password" in ayse.page
    ayse.submit("/password", old="Ayşe-password", new="new-password-1", again="new-password-1")
    assert ayse.status == 200 and "Password changed" in ayse.page
    again = classroom()
    again.get("/login")
    again.submit("/login", name="Ayşe", password="new-password-1")
    assert again.status == 200 and "Log out (Ayşe)" in again.page
    assert cli("class", "archive", "Ayşe").exit_code == 0
    assert ayse.client.get("/review", follow_redirects=False).status_code == 200  # her login, read < 2 s ago
    classroom.advance(2.5)  # the server reads each login again after 2 s: then it is refused
    for web in (ayse, again):
        assert web.client.get("/review", follow_redirects=False).headers["location"] == "/login"


def test_guesses_at_the_current_password_count_as_failed_logins(classroom):
    """The password page checks the current password: it was a way around the login's limit for whoever finds a
    browser left logged in (a dozen guesses a second, each an scrypt hash of the server's). Its failures now count
    with the login's, for the member's name and the address alike."""
    ayse = classroom("Ayşe")
    ayse.get("/password")
    for guess in range(5):
        ayse.submit("/password", old=f"guess-{guess}", new="taken-over-1", again="taken-over-1")
        assert ayse.status == 403 and "not your current password" in ayse.page
    refused = ayse.client.post("/password", data={**ayse.forms()["/password"], "old": "Ayşe-password",
                                                  "new": "taken-over-1", "again": "taken-over-1"})
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0 and "Too many attempts" in refused.text
    assert "Password changed" not in refused.text
    elsewhere = classroom()
    elsewhere.get("/login")
    elsewhere.submit("/login", name="Ayşe", password="Ayşe-password")
    assert elsewhere.status == 429  # the login's limit is the same one
    assert classroom("Bora").status == 200  # another member is not locked out


def test_an_undo_another_window_overtook_is_refused_in_the_pages_language(classroom):
    """Two browsers of one learner answer the same card, and the first one's undo is refused: only a card's latest
    answer can be undone. The store's reason was English on a Turkish page (not in the catalogs), and the API gave
    it as the database failing (503) where it is a refusal (409)."""
    first, second = classroom("Ayşe"), classroom("Ayşe")
    for web in (first, second):
        web.client.cookies.set(pages.LANGUAGE_COOKIE, "tr")
        assert current_card(web.get("/review")) == "web/width@small"
    for web in (first, second):
        web.submit("/review/answer", answer="288")
        web.submit("/review/grade", grade="5")
    page = first.submit("/review/undo")
    assert ("Geri alınmadı: web/width@small o zamandan beri yeniden yanıtlandı (başka bir pencerede mi?); bir "
            "kartın yalnızca son yanıtı geri alınabilir.") in page.replace("&#39;", "'")
    assert [row[1] for row in logged(classroom.postgres)] == ["web/width@small"] * 2  # both answers stay
    token = first.client.post("/api/login", json={"name": "Ayşe", "password": "Ayşe-password"}).json()["token"]
    overtaken = logged(classroom.postgres, "SELECT id FROM review ORDER BY id")[0][0]
    refused = first.client.post("/api/undo", json={"answer": overtaken},
                                headers={"Authorization": f"Bearer {token}", "Accept-Language": "tr"})
    assert refused.status_code == 409 and refused.json()["error"].endswith("yalnızca son yanıtı geri alınabilir")


def test_serve_on_postgresql_is_the_class_server_and_refuses_a_class_not_set_up(classroom, cli):
    import os
    import subprocess
    import sys
    import urllib.request

    postgres = classroom.postgres
    url = postgres.url_as(f"{postgres.database}_server")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen([sys.executable, "-m", "bertdrill", "serve", "--db", url, "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert server.stdout is not None and server.stderr is not None
    try:
        line = server.stdout.readline()
        address = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert address, line + server.stderr.read()
        assert "reverse proxy with TLS" in line
        with urllib.request.urlopen(address[0] + "review", timeout=30) as response:  # redirected to log in
            assert response.status == 200 and response.url.endswith("/login")
            assert 'name="password"' in response.read().decode()
    finally:
        server.terminate()
        assert server.wait(timeout=30) is not None
        server.stdout.close()
        server.stderr.close()
    empty = postgres.url.rsplit("/", 1)[0] + "/postgres"
    refused = cli("serve", "--db", empty, "--port", "0")
    assert refused.exit_code == 1 and "no class yet" in refused.output + refused.stderr


def test_a_lesson_republished_while_the_server_runs_locks_nobody_out(classroom, cli, lesson, monkeypatch):
    from bertdrill.web import classroom as class_server

    monkeypatch.setattr(class_server, "REFRESH_SECONDS", 0.0)  # look for new versions at every desk's request
    ayse = classroom("Ayşe")
    page = ayse.get("/review")
    assert "How wide is Small?" in page
    edited = lesson.read_text(encoding="utf-8").replace("How wide is {set}?", "How wide, really, is {set}?")
    lesson.write_text(edited, encoding="utf-8")
    assert "(version 2)" in cli("class", "init", "--file", str(lesson)).stdout
    bora = classroom("Bora")  # new to the server: his schedules are made from the store's cards, nothing refused
    assert bora.status == 200 and "How wide, really, is Small?" in bora.page
    assert "How wide, really, is Small?" in ayse.get("/review")  # the running server serves the new text to all
    ayse.submit("/review/answer", answer="288")
    ayse.submit("/review/grade", grade="5")
    assert logged(classroom.postgres) == [("Ayşe", "web/width@small", 5, "288")]


def shown_password(page: str) -> str:
    """The generated password a members page shows once."""
    found = re.search(r"Their password, shown only now: (\w+)", page)
    assert found is not None, page
    return found[1]


def test_the_teacher_manages_members_on_a_page_and_learners_cannot(classroom):
    ayse = classroom("Ayşe")
    assert ayse.client.get("/teacher/members").status_code == 403
    assert ayse.client.post("/teacher/members/add", data={"csrf": ayse.client.cookies.get("bertdrill_csrf"),
                                                          "name": "Intruder"}).status_code == 403
    teacher = classroom("Tülin")
    page = teacher.get("/teacher/members")
    assert re.findall(r'<span class="name">([^<]+)</span>', page) == ["Ayşe", "Bora", "Tülin"]
    page = teacher.submit("/teacher/members/add", name="<b>Cem</b>")
    password = shown_password(page)
    assert "&lt;b&gt;Cem&lt;/b&gt;" in page and "<b>Cem" not in page  # a name is text, wherever it is shown
    cem = classroom()
    cem.get("/login")
    cem.submit("/login", name="<b>Cem</b>", password=password)
    assert cem.status == 200 and "Log out (&lt;b&gt;Cem&lt;/b&gt;)" in cem.page
    teacher.submit("/teacher/members/add", name="ayşe")
    assert teacher.status == 409 and "already has a member called" in teacher.page
    page = teacher.client.post("/teacher/members/rename", data={
        "csrf": teacher.client.cookies.get("bertdrill_csrf"), "name": "<b>Cem</b>", "new_name": "Cem"}).text
    assert "is now Cem" in page
    page = teacher.client.post("/teacher/members/reset", data={
        "csrf": teacher.client.cookies.get("bertdrill_csrf"), "name": "Cem"}).text
    new_password = shown_password(page)
    assert new_password != password
    page = teacher.client.post("/teacher/members/archive", data={
        "csrf": teacher.client.cookies.get("bertdrill_csrf"), "name": "Bora"}).text
    assert "Archived Bora" in page and re.findall(r'<span class="name">([^<]+)</span>', page)[-1] == "Bora"
    assert teacher.client.post("/teacher/members/archive", data={"name": "Ayşe"}).status_code == 403  # no token
    assert teacher.client.post("/teacher/members/delete", data={
        "csrf": teacher.client.cookies.get("bertdrill_csrf"), "name": "Ayşe"}).status_code == 404
    classroom.advance(2.5)
    assert cem.client.get("/review", follow_redirects=False).headers["location"] == "/login"  # reset: logged out
    assert logged(classroom.postgres, "SELECT name FROM member WHERE archived_at IS NOT NULL") == [("Bora",)]


def test_a_teacher_cannot_archive_herself_from_the_members_page(classroom):
    """The page shows no Archive button beside the teacher's own name, but the server archived whoever the form named:
    a class's one teacher, posting her own name (in any case), locked herself and the dashboard out."""
    teacher = classroom("Tülin")
    teacher.get("/teacher/members")
    for named in ("Tülin", "TÜLIN", " tülin "):
        refused = teacher.client.post("/teacher/members/archive", data={
            "csrf": teacher.client.cookies.get("bertdrill_csrf"), "name": named})
        assert refused.status_code == 409 and "You cannot archive yourself here" in refused.text, named
    classroom.advance(2.5)  # her login is read from the database again: still hers
    assert teacher.client.get("/teacher", follow_redirects=False).status_code == 200
    assert logged(classroom.postgres, "SELECT name FROM member WHERE archived_at IS NOT NULL") == []


def test_a_pass_for_a_wrong_answer_is_recorded_as_a_fail_as_the_terminal_records_it(classroom):
    """The class records alike from the browser and from the terminal (bertdrill.app.served): a grade of 5 chosen
    for a number the grader marks wrong is stored as 2; a fact the learner judges keeps the grade chosen."""
    ayse = classroom("Ayşe")
    ayse.get("/review")
    ayse.submit("/review/answer", answer="72")
    page = ayse.submit("/review/grade", grade="5")
    assert "Saved: grade 2" in page
    assert logged(classroom.postgres) == [("Ayşe", "web/width@small", 2, "72")]
