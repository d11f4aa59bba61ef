"""The teacher's charts, a learner's page ("who failed what") and the sheet of the hardest items, on the class
server against a real PostgreSQL server; each refused to learners, each id checked."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

import pytest
from test_web_class import NOW, classroom, lesson  # noqa: F401 - the class server's fixtures

from bertdrill.web.class_charts import ACTIVITY_DAYS
from bertdrill.web.teaching import SHEET_POLICY

SVG = "{http://www.w3.org/2000/svg}"


def drawing(page: str, title: str) -> ElementTree.Element:
    found = [svg for svg in map(ElementTree.fromstring, re.findall(r"<svg .*?</svg>", page, flags=re.S))
             if svg.findtext(f"{SVG}title") == title]
    assert len(found) == 1, title
    return found[0]


def answer(web, typed: str, grade: str) -> None:
    web.get("/review")
    web.submit("/review/answer", answer=typed)
    web.submit("/review/grade", grade=grade)


@pytest.fixture
def taught(classroom):  # noqa: F811
    """Ayşe fails the width card typing 72, then picks the right letter; Bora fails the width card typing 8; the
    teacher's browser and the learners' ids by name."""
    ayse, bora = classroom("Ayşe"), classroom("Bora")
    answer(ayse, "72", "1")
    answer(ayse, "2", "5")
    answer(bora, "8", "0")
    teacher = classroom("Tülin")
    page = teacher.get("/teacher")
    ids = {name: int(number) for number, name in re.findall(r'<a href="/teacher/learners/(\d+)">([^<]+)</a>', page)}
    return teacher, ayse, bora, ids, page


def test_the_dashboard_charts_the_class_and_links_each_learner(taught):
    teacher, _ayse, _bora, ids, page = taught
    assert sorted(ids) == ["Ayşe", "Bora"]
    activity = drawing(page, f"Answers per day, last {ACTIVITY_DAYS} days")
    bars = [rect for rect in activity.iter(f"{SVG}rect") if "chart-bar" in (rect.get("class") or "")]
    assert len(bars) == ACTIVITY_DAYS
    assert bars[-1].findtext(f"{SVG}title") == f"{NOW.date().isoformat()}: 3 answers from 2 learners"
    assert all((bar.findtext(f"{SVG}title") or "").endswith("0 answers from 0 learners") for bar in bars[:-1])
    # nobody has had a review due yet (first answers only): no retention to chart
    assert "Retention per learner" not in page
    assert "<style" not in page and "style=" not in page


def test_a_learners_page_says_what_she_failed_and_what_she_typed(taught):
    teacher, _ayse, _bora, ids, _page = taught
    page = teacher.get(f"/teacher/learners/{ids['Ayşe']}")
    assert teacher.status == 200 and "<h1>Ayşe" in page
    failed = page[page.index("What they fail most"):page.index(" in all")]
    assert "<code>web/width@small</code>" in failed and "failed 1 of 1 time; last on 2025-03-03" in failed
    assert "typed 72: 72 is attention of Small without the factor 4, not attention." in failed
    assert "web/pick" not in failed  # she passed it
    assert "typed 8" not in page  # Bora's answer is on his page, not hers
    assert "3 answers in all" not in page and "2 answers in all" in page  # her figures, not the class's
    assert "typed 8: " in teacher.get(f"/teacher/learners/{ids['Bora']}")


def test_learner_pages_and_the_sheet_are_the_teachers_and_bad_ids_are_a_clear_4xx(taught, classroom):  # noqa: F811
    teacher, ayse, _bora, ids, _page = taught
    for path in (f"/teacher/learners/{ids['Bora']}", f"/teacher/learners/{ids['Ayşe']}", "/teacher/sheet",
                 "/teacher/sheet?part=key"):
        assert ayse.client.get(path).status_code == 403, path  # not even her own page: it is the teacher's view
        assert classroom().client.get(path, follow_redirects=False).headers["location"] == "/login"
    teacher_id = max(ids.values()) + 1  # Tülin was added after the learners
    for path, status in ((f"/teacher/learners/{teacher_id}", 404), ("/teacher/learners/999999", 404),
                         ("/teacher/learners/99999999999999999999", 404), ("/teacher/learners/-1", 404),
                         ("/teacher/learners/ayse", 404), ("/teacher/learners/1%2F..", 404),
                         ("/teacher/sheet?count=0", 400), ("/teacher/sheet?count=51", 400),
                         ("/teacher/sheet?count=x", 400), ("/teacher/sheet?count=²", 400),
                         ("/teacher/sheet?count=1&count=2", 400), ("/teacher/sheet?seed=-4", 400),
                         ("/teacher/sheet?part=answers", 400)):
        response = teacher.client.get(path)
        assert response.status_code == status, path
        assert "Traceback" not in response.text
    assert teacher.client.post("/teacher/sheet").status_code == 405  # nothing here posts, so nothing to forge


def test_the_sheet_of_the_hardest_items_prints_the_published_texts(taught):
    teacher = taught[0]
    sheet = teacher.client.get("/teacher/sheet?count=5&seed=7")
    assert sheet.status_code == 200 and sheet.headers["content-type"].startswith("text/html")
    assert sheet.headers.get_list("content-security-policy") == [SHEET_POLICY]  # its own, not the pages'
    assert "The hardest items of the class" in sheet.text
    assert "How wide is Small? &lt;script&gt;alert(1)&lt;/script&gt;" in sheet.text  # the published text, escaped
    assert "<script" not in sheet.text
    assert "Capital of Türkiye?" not in sheet.text  # nobody failed it: not on the sheet
    key = teacher.client.get("/teacher/sheet?count=5&seed=7&part=key")
    assert key.status_code == 200 and "288" in key.text and "288" not in sheet.text  # 4 * (8 * 8 + 8): the key's


def test_no_sheet_before_anyone_failed(classroom):  # noqa: F811
    teacher = classroom("Tülin")
    response = teacher.client.get("/teacher/sheet")
    assert response.status_code == 409 and "No learner has failed a card yet" in response.text


def test_the_settings_form_goes_back_to_a_learners_page_and_nowhere_else(taught):
    teacher, _ayse, _bora, ids, _page = taught
    page = f"/teacher/learners/{ids['Ayşe']}"
    teacher.get(page)
    token = teacher.forms()["/settings"]["csrf"]
    for back, lands in ((page, page), ("/stats", "/stats"), (page + "/../../x", "/review"),
                        ("//evil.example" + page, "/review"), ("/teacher/learners/1x", "/review")):
        response = teacher.client.post("/settings", data={"csrf": token, "back": back, "theme": "dark"},
                                       follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == lands, back
