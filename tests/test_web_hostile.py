"""The class server as an adversary (or a careless client) reaches it: bad input to the API and the forms, refusals
raised before any page chose a language, and numbers written the reader's way in what the pages draw.

Every refusal is a 4xx with its reason in the request's language, never a 500 (the test client raises the
server's exceptions, so a crash fails the test). The class of two learners and a teacher is
``tests/test_web_class.py``'s.
"""

from __future__ import annotations

import html
import json
from typing import Any

import pytest
from test_web_class import classroom, lesson  # noqa: F401 - the class server's fixtures
from web_client import Browser

from bertdrill.adapters.export.chart import Series, Share, calibration_svg, shares_svg
from bertdrill.web import pages

CARD = "web/width@small"  # numeric, graded from what was typed


def token_of(web: Browser, name: str) -> str:
    response = web.client.post("/api/login", json={"name": name, "password": f"{name}-password"})
    assert response.status_code == 200, response.text
    found: str = response.json()["token"]
    return found


def answer(**changed: Any) -> dict[str, Any]:
    return {"card": CARD, "grade": 4, "typed": "288", "request": "r-1", "language": "en", "duration_ms": 900,
            **changed}


@pytest.mark.parametrize(("method", "path", "body", "status"), [
    ("POST", "/api/answers", answer(grade=99), 400),  # out of 0-5: the core's check raised, a 500
    ("POST", "/api/answers", answer(grade=-1), 400),
    ("POST", "/api/answers", answer(grade=10**30), 400),
    ("POST", "/api/answers", answer(typed="288\x00"), 400),  # PostgreSQL's text holds no NUL: it was a 503
    ("POST", "/api/answers", b'{"card": "web/width@small", "grade": 4, "duration_ms": NaN}', 400),  # not JSON
    ("POST", "/api/scheduler", b'{"name": "fsrs", "retention": Infinity}', 400),
    ("POST", "/api/scheduler", b"[" * 30_000 + b"]" * 30_000, 400),  # deeper than the parser goes: a crash
    ("POST", "/api/login", b'{"name": "A\\u0000", "password": "x"}', 400),
    ("GET", "/api/forecast?day=9999-12-30&days=400", None, 400),  # the forecast's last day overflowed date
    ("GET", "/api/due?day=0001-01-01&limit=5", None, 400),
    ("GET", "/api/due?day=2025-03-03&limit=5&lessons=" + "%5B" * 5_000, None, 400),  # a crash in the parser
    # a number read with str.isdigit alone: int() refuses a superscript and more than 4,300 digits (both 500s),
    # and reads another script's digits as a number the form never sends
    ("GET", "/api/due?day=2025-03-03&limit=%C2%B2", None, 400),
    ("GET", "/api/due?day=2025-03-03&limit=" + "9" * 5_000, None, 400),
    ("GET", "/api/forecast?day=2025-03-03&days=%D9%A3", None, 400),
    ("GET", "/api/nothing-here", None, 404),  # the router's own refusals, as JSON too
    ("POST", "/api/fitted-sets", b"{}", 405),
])
def test_bad_input_to_the_api_is_a_json_4xx_with_its_reason_never_a_500(classroom, method, path, body, status):  # noqa: F811
    web = classroom()
    headers = {"Authorization": f"Bearer {token_of(web, 'Ayşe')}", "Content-Type": "application/json"}
    content = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    response = web.client.request(method, path, content=content, headers=headers)
    assert response.status_code == status, response.text[:300]
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"] and "Traceback" not in response.text


def test_the_apis_refusals_speak_the_learners_language(classroom):  # noqa: F811
    web = classroom()
    headers = {"Authorization": f"Bearer {token_of(web, 'Ayşe')}", "Accept-Language": "tr"}
    assert web.client.get("/api/nothing-here", headers=headers).json() == {"error": "Böyle bir sayfa yok."}
    refused = web.client.post("/api/answers", json=answer(grade=7), headers=headers)
    assert refused.json() == {"error": "not 0 ile 5 arasında bir tam sayıdır"}


def test_an_answer_the_grader_asks_again_for_is_refused_with_its_reason(classroom):  # noqa: F811
    """What the review asks again for (no number at all, an option that does not exist) is not graded through the
    API either: refused with the grader's own reason, in the learner's language."""
    web = classroom()
    headers = {"Authorization": f"Bearer {token_of(web, 'Ayşe')}"}
    refused = web.client.post("/api/answers", json=answer(typed="twelvish"), headers=headers)
    assert refused.status_code == 409, refused.text
    assert refused.json() == {"error": "'twelvish' is not graded for web/width@small: Type it again: not a number or "
                                       "an expression"}
    turkish = web.client.post("/api/answers", json=answer(typed="twelvish", language="tr"),
                              headers={**headers, "Accept-Language": "tr"})
    assert turkish.json() == {"error": "'twelvish', web/width@small için notlanmadı: Yeniden yaz: bir sayı ya da "
                                       "ifade değil"}


def reason(page: str) -> str:
    return html.unescape(page.split('<p class="reason"><code>')[1].split("</code>")[0]) if 'class="reason"' in page else ""


def test_a_refusal_raised_before_a_handler_speaks_the_pages_language(classroom):  # noqa: F811
    """The form's checks (CSRF, size, NUL) and the teacher's pages refuse before the handler picks a language:
    their reasons were English on a Turkish page, under a heading that spoke of an expired form."""
    ayse = classroom("Ayşe")
    ayse.client.cookies.set(pages.LANGUAGE_COOKIE, "tr")
    ayse.get("/review")
    refused = ayse.client.get("/teacher")
    assert refused.status_code == 403
    assert reason(refused.text) == "bu sayfa öğretmenindir: öğrenci /review adresinde tekrar yapar"
    assert "formun süresi dolmuş" in refused.text and "Bu sana açık değil" in refused.text
    forged = ayse.client.post("/stats/scheduler", data={"csrf": "forged" * 4, "scheduler": "fsrs", "spread": "off"})
    assert forged.status_code == 403
    assert reason(forged.text) == "formun güvenlik belirteci eksik ya da eskimiş: sayfayı yenile"
    form = ayse.forms()["/review/answer"]
    nul = ayse.client.post("/review/answer", data={**form, "answer": "288\x00"})
    assert nul.status_code == 400 and reason(nul.text) == "bir formun metninde NUL karakteri bulunamaz"
    big = ayse.client.post("/review/answer", data={**form, "answer": "x" * 100_000})
    assert big.status_code == 413 and reason(big.text) == "form 64 kB'tan büyük"
    unknown = ayse.client.get("/no-such-page")
    assert unknown.status_code == 404 and "Böyle bir sayfa yok." in unknown.text and "Not Found" not in unknown.text
    teacher = classroom("Tülin")
    teacher.client.cookies.set(pages.LANGUAGE_COOKIE, "tr")
    teacher.get("/teacher/members")
    action = teacher.client.post("/teacher/members/explode", data={"csrf": teacher.forms()["/teacher/members/add"][
        "csrf"], "name": "x"})
    assert action.status_code == 404 and reason(action.text) == "üyeler sayfasında 'explode' diye bir işlem yok"


def test_the_scheduler_form_reads_a_turkish_retention_and_says_its_range_the_turkish_way(classroom):  # noqa: F811
    ayse = classroom("Ayşe")
    ayse.client.cookies.set(pages.LANGUAGE_COOKIE, "tr")
    ayse.get("/stats")
    form = {**ayse.forms()["/stats/scheduler"], "scheduler": "fsrs", "parameters": "keep", "spread": "off"}
    for typed in ("0,5", "NaN", "1e308", ""):
        refused = ayse.client.post("/stats/scheduler", data={**form, "retention": typed})
        assert refused.status_code == 400, typed
        assert "istenen hatırlama oranı 0,70 ile 0,97 arasında bir sayıdır" in refused.text
    switched = ayse.client.post("/stats/scheduler", data={**form, "retention": "0,85"})
    assert switched.status_code == 200 and "istenen hatırlama oranı 0,85" in switched.text


def test_the_charts_and_the_dashboard_write_a_percentage_the_readers_way():
    from bertdrill.cli.classroom import _percent as report_percent
    from bertdrill.web.classroom import _percent as dashboard_percent

    with pages.speaking("tr"):
        shares = shares_svg([Share("genç", 0.5, "%50")], "Hatırlama", target=0.9, target_words="hedef %90")
        calibration = calibration_svg([Series("FSRS", [(0.5, 0.5, 1234)])], "Kalibrasyon", "tahmin", "hatırlanan")
        assert ">%0<" in shares and ">%50<" in shares and ">%100<" in shares and "50%" not in shares
        assert ">%50<" in calibration and "FSRS: %50 → %50 (1.234)" in calibration
        assert dashboard_percent(0.5) == report_percent(0.5) == "%50"
    with pages.speaking("en"):
        assert ">50%<" in shares_svg([Share("young", 0.5, "50%")], "Retention")
        assert dashboard_percent(0.5) == "50%"


def test_a_form_another_site_sent_is_refused_even_with_the_right_token(classroom):  # noqa: F811
    """The double-submit token holds alone against a site that cannot read the cookie; the browser's
    Sec-Fetch-Site is a second lock (a sibling site that planted its own cookie and token)."""
    ayse = classroom("Ayşe")
    ayse.get("/stats")
    form = {**ayse.forms()["/stats/scheduler"], "scheduler": "fsrs", "retention": "0.85", "parameters": "keep",
            "spread": "off"}
    for site in ("cross-site", "same-site"):
        refused = ayse.client.post("/stats/scheduler", data=form, headers={"Sec-Fetch-Site": site})
        assert refused.status_code == 403 and "sent from another site" in refused.text, site
    assert "In use: SM-2." in ayse.get("/stats")
    own = ayse.client.post("/stats/scheduler", data=form, headers={"Sec-Fetch-Site": "same-origin"})
    assert own.status_code == 200 and "In use: FSRS, desired retention 0.85." in own.text


def test_a_field_sent_twice_is_refused_and_a_refused_form_shows_what_was_sent(classroom):  # noqa: F811
    """No page's form sends a field twice: which would count is a guess, so the form is refused (400), nothing
    changed. A refused form comes back as it was sent (FSRS chosen, the retention typed, the parameters and the
    spread picked), for the learner to correct, while the page says the choice in use."""
    ayse = classroom("Ayşe")
    ayse.get("/stats")
    form = {**ayse.forms()["/stats/scheduler"], "parameters": "fit", "spread": "off"}
    twice = ayse.client.post("/stats/scheduler", data={**form, "scheduler": ["sm2", "fsrs"], "retention": "0.85"})
    assert twice.status_code == 400 and "the form sends the field &#39;scheduler&#39; more than once" in twice.text
    assert "In use: SM-2." in ayse.get("/stats")
    refused = ayse.client.post("/stats/scheduler", data={**form, "scheduler": "fsrs", "retention": "0.5"})
    assert refused.status_code == 400 and "In use: SM-2." in refused.text
    page = refused.text
    assert 'value="fsrs" checked' in page and 'value="sm2" checked' not in page
    assert 'value="0.5" required' in page and 'name="parameters" value="fit" checked' in page
    assert 'name="spread" value="off" checked' in page and 'name="parameters" value="keep" checked' not in page
    exam = {**ayse.forms()["/stats/exam"], "day": "1999-01-01", "target": "0.93", "plan": "set"}
    refused = ayse.client.post("/stats/exam", data=exam)
    assert refused.status_code == 400 and 'value="1999-01-01"' in refused.text and 'value="0.93"' in refused.text


def test_a_made_up_card_is_not_echoed_back_whole(classroom):  # noqa: F811
    web = classroom()
    headers = {"Authorization": f"Bearer {token_of(web, 'Ayşe')}"}
    refused = web.client.get("/api/state", params={"card": "x" * 50_000}, headers=headers)
    assert refused.status_code == 404 and len(refused.text) < 1_000


def test_a_grade_is_ascii_digits_and_a_form_that_sends_another_is_refused(classroom):  # noqa: F811
    """The grade's form field read with str.isdigit alone: ``²`` passed it and crashed int() (a 500), and an
    Arabic-Indic ``٣`` was recorded as a 3 though no page's form sends it."""
    ayse = classroom("Ayşe")
    ayse.get("/review")
    ayse.submit("/review/answer", answer="288")
    form = ayse.forms()["/review/grade"]
    for typed in ("²", "٣", "9"):
        refused = ayse.client.post("/review/grade", data={**form, "grade": typed})
        assert refused.status_code == 400 and "a grade is a whole number from 0 to 5" in refused.text, typed
    assert "Saved: grade 4" in ayse.submit("/review/grade", grade="4")  # the answer was still waiting for its grade


def test_an_exam_past_the_calendar_the_server_plans_in_is_refused_on_the_page_and_the_api(classroom):  # noqa: F811
    """An exam in the year 9999 left no room for the intervals planned up to it: date overflowed (a 500, on the
    page's form and through the API alike). Both read the day with one check, up to the server's last day."""
    ayse = classroom("Ayşe")
    headers = {"Authorization": f"Bearer {token_of(ayse, 'Ayşe')}"}
    assert ayse.client.post("/api/scheduler", json={"name": "fsrs"}, headers=headers).status_code == 200
    refused = ayse.client.post("/api/exam", json={"day": "9999-12-31", "target": 0.9}, headers=headers)
    assert refused.status_code == 400 and refused.json() == {"error": "the exam's day is at the latest 9000-12-31"}
    ayse.get("/stats")
    form = {**ayse.forms()["/stats/exam"], "day": "9999-12-31", "target": "0.9", "plan": "set"}
    page = ayse.client.post("/stats/exam", data=form)
    assert page.status_code == 400 and "the exam&#39;s day is at the latest 9000-12-31" in page.text
    planned = ayse.client.post("/api/exam", json={"day": "2025-06-01", "target": 0.9}, headers=headers)
    assert planned.status_code == 200 and planned.json()["asked"]["day"] == "2025-06-01"  # a day in range still plans


def test_a_database_that_fails_is_never_named_to_a_member(classroom, monkeypatch, capsys):  # noqa: F811
    """When the class's database refuses the server (no connection allowed for its role, as while PostgreSQL
    restarts or is full), the pages and the API said so with the database's address, the server's role and
    PostgreSQL's own words, to anyone at the login page. A member now reads that the database failed; the server's
    log keeps the whole message, for the teacher."""
    from bertdrill.adapters.store import postgresql

    monkeypatch.setattr(postgresql, "RECONNECT_SECONDS", 0.0)  # refused at once, not after 20 s of trying again
    postgres = classroom.postgres
    role = f"{postgres.database}_server"
    ayse = classroom("Ayşe")
    token = token_of(ayse, "Ayşe")
    stranger = classroom()
    stranger.get("/login")
    with postgres.connect() as admin:
        admin.execute(f'ALTER ROLE "{role}" CONNECTION LIMIT 0')
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                      "AND pid <> pg_backend_pid()", (postgres.database,))  # the server's pooled connections
    try:
        capsys.readouterr()
        login = stranger.client.post("/login", data={**stranger.forms()["/login"], "name": "Ayşe",
                                                     "password": "Ayşe-password"})
        api_login = stranger.client.post("/api/login", json={"name": "Ayşe", "password": "Ayşe-password"})
        classroom.advance(2.5)  # her login is read from the database again
        stats = ayse.client.get("/stats")
        status = ayse.client.get("/api/status?day=2025-03-03", headers={"Authorization": f"Bearer {token}"})
        logout = ayse.client.post("/api/logout", headers={"Authorization": f"Bearer {token}"})
    finally:
        with postgres.connect() as admin:
            admin.execute(f'ALTER ROLE "{role}" CONNECTION LIMIT -1')
    said = [login.text, stats.text] + [reply.json()["error"] for reply in (api_login, status, logout)]
    assert [reply.status_code for reply in (login, stats, api_login, status, logout)] == [503] * 5
    for text in said:
        assert role not in text and "postgresql" not in text and "127.0.0.1" not in text and "FATAL" not in text
        assert "the class&#39;s database did not answer" in text or text.startswith("the class's database did not")
    assert role in capsys.readouterr().err  # the server's log says why
