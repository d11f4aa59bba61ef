"""The stats page (``GET /stats``): the figures of ``bertdrill stats`` as SVG charts, on a learner's own server
and on the class server, where each learner sees their own figures only."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from datetime import date, timedelta

import pytest
from learner_store import learner_store
from test_web_class import classroom, lesson  # noqa: F401 - the class server's fixtures
from web_client import Browser

from bertdrill.adapters.store import Store
from bertdrill.cli.review import LeechChoice
from bertdrill.cli.serve import _desk
from bertdrill.core.scheduling.workload import RETENTIONS
from bertdrill.core.stats import heatmap_start
from bertdrill.web.app import local_app

SVG = "{http://www.w3.org/2000/svg}"
TODAY = date(2025, 7, 20)


def charts(page: str) -> list[ElementTree.Element]:
    """Every SVG drawing of the page, parsed as XML (so each is well-formed)."""
    return [ElementTree.fromstring(found) for found in re.findall(r"<svg .*?</svg>", page, flags=re.S)]


def titled(drawings: list[ElementTree.Element], title: str) -> ElementTree.Element:
    found = [svg for svg in drawings if (svg.findtext(f"{SVG}title") or "") == title]
    assert len(found) == 1, [svg.findtext(f"{SVG}title") for svg in drawings]
    return found[0]


@pytest.fixture
def learner(isolated_home, monkeypatch):
    """A learner's own database holding a synthetic learner's 200 days; a browser on their own server."""
    monkeypatch.setenv("BERTDRILL_NOW", f"{TODAY.isoformat()}T10:00:00+00:00")
    isolated_home.mkdir(parents=True, exist_ok=True)
    logs = learner_store(isolated_home / "bertdrill.db")
    desk = _desk(None, None, None, None, 10, 200, 4, LeechChoice.suspend)
    web = Browser(local_app(desk))
    yield web, logs
    web.close()
    desk.store.close()


def test_the_stats_page_draws_the_terminals_figures_as_charts(learner):
    web, logs = learner
    page = web.get("/stats")
    assert web.status == 200
    drawings = charts(page)
    with Store.open(None, read_only=True) as store:
        first = heatmap_start(TODAY)
        per_day = store.reviews_per_day(first, TODAY)
        forecast = store.forecast(TODAY, 14)
        answers = store.answer_count()
    assert answers == sum(len(log) for log in logs.values())
    assert f"{answers:,} answers in all" in page
    heat = titled(drawings, "Reviews, last 26 weeks")
    cells = [rect for rect in heat.iter(f"{SVG}rect") if rect.findtext(f"{SVG}title")]
    assert len(cells) == (TODAY - first).days + 1  # one cell a day, today included, each naming its figure
    busiest = max(per_day, key=lambda day: per_day[day])
    named = {rect.findtext(f"{SVG}title"): rect.get("class") for rect in cells}
    assert named[f"{busiest.isoformat()}: {per_day[busiest]} answers"] == "heat-4"
    quiet = next(first + timedelta(days=n) for n in range(200) if first + timedelta(days=n) not in per_day)
    assert named[f"{quiet.isoformat()}: 0 answers"] == "heat-0"
    due = titled(drawings, "Due in the next 14 days")
    bars = [rect for rect in due.iter(f"{SVG}rect") if "chart-bar" in (rect.get("class") or "")]
    assert [(rect.findtext(f"{SVG}title") or "").rsplit(": ", 1)[1] for rect in bars] == [str(n) for _day, n in forecast]
    assert [rect.get("class") for rect in bars].count("chart-bar chart-alt") == 1  # today, marked
    retention = titled(drawings, "Retention")
    assert [text.text for text in retention.iter(f"{SVG}text")][-1] == "target 90%"
    table = page[page.index("What each desired retention costs"):page.index("Calibration:")]
    assert len(re.findall(r"<tr[^>]*><td class=\"name\">0\.\d\d", table)) == len(RETENTIONS)
    assert table.count("· best") == 1
    titled(drawings, "A year at each desired retention")
    calibration = titled(drawings, "Predicted against observed recall")
    assert {text.text for text in calibration.iter(f"{SVG}text")} >= {"FSRS*", "FSRS", "SM-2"}
    assert "predicts your recall" in page
    # no inline style or script anywhere: the page's Content-Security-Policy would refuse it
    assert "<style" not in page and "style=" not in page and "<script>" not in page
    assert all(not re.search(r'fill="#|stroke="#', ElementTree.tostring(svg, encoding="unicode")) for svg in drawings)


def test_the_stats_page_speaks_turkish_and_an_empty_log_says_there_is_nothing_yet(isolated_home, monkeypatch):
    monkeypatch.setenv("BERTDRILL_NOW", f"{TODAY.isoformat()}T10:00:00+00:00")
    desk = _desk(None, None, None, None, 10, 200, 4, LeechChoice.suspend)
    web = Browser(local_app(desk), **{"accept-language": "tr"})
    try:
        page = web.get("/stats")
        assert web.status == 200 and 'lang="tr"' in page
        assert "Henüz tekrar yok" in page and charts(page) == []
    finally:
        web.close()
        desk.store.close()


def test_a_learner_sees_her_own_stats_only_and_the_teacher_is_sent_to_the_dashboard(classroom):  # noqa: F811
    ayse, bora = classroom("Ayşe"), classroom("Bora")
    ayse.get("/review")
    ayse.submit("/review/answer", answer="320")
    ayse.submit("/review/grade", grade="5")
    page = ayse.get("/stats")
    assert ayse.status == 200 and "1 answer in all" in page
    # no id in the page's address reaches anyone else: what Bora edits in, the page ignores
    for path in ("/stats", "/stats?learner=member:1", "/stats?member=1&id=1"):
        page = bora.get(path)
        assert bora.status == 200 and "No reviews yet" in page, path
    assert bora.client.get("/stats/1").status_code == 404
    teacher = classroom("Tülin")
    assert teacher.client.get("/stats", follow_redirects=False).headers["location"] == "/teacher"
    assert classroom().client.get("/stats", follow_redirects=False).headers["location"] == "/login"


def test_one_chart_module_draws_the_file_with_its_own_colours_and_the_page_without():
    from bertdrill.cli.workload import chart_svg
    from bertdrill.core.scheduling.fitted import default_parameters
    from bertdrill.core.scheduling.workload import best, habits, table

    rows = table(default_parameters(), habits({}, cards=50, new_per_day=5))
    written, drawn = chart_svg(rows, best(rows)), chart_svg(rows, best(rows), standalone=False, width=480)
    assert "<style>" in written and "prefers-color-scheme: dark" in written  # a file opened alone, either theme
    assert "<style" not in drawn and 'width="480"' in drawn  # a page's drawing: the page's style sheet colours it
    for svg in (written, drawn):
        shapes = ElementTree.fromstring(svg)
        assert not [element for element in shapes.iter() if element.get("fill", "").startswith("#")]


def test_a_learners_own_server_switches_her_scheduler_from_the_page(learner, cli):
    """The same form on a learner's own ``bertdrill serve``: the switch is the command's, on her own database."""
    web, _logs = learner
    web.get("/stats")
    page = web.submit("/stats/scheduler", scheduler="fsrs", retention="0.86", parameters="keep", spread="balance")
    assert web.status == 200 and "Switched to FSRS, desired retention 0.86:" in page
    with Store.open(None, read_only=True) as store:
        assert (store.scheduler_choice().name, store.scheduler_choice().retention) == ("fsrs", 0.86)
    assert cli("scheduler").stdout.startswith("Scheduler: FSRS, desired retention 0.86.\n")
    page = web.submit("/stats/scheduler", scheduler="sm2", spread="balance")
    assert "Switched to SM-2:" in page and "To undo, switch back to FSRS, desired retention 0.86 with the form below." in page
    notices = re.findall(r'<p class="notice" role="status">(.*?)</p>', page)
    assert len(notices) == 3 and not any("bertdrill " in notice for notice in notices)  # no terminal command
