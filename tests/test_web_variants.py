"""Fresh numbers on the review page: a numeric card drawing a variant shows the variant's values, is graded
and diagnosed on the variant's own numbers, and its answer is logged with the seed that drew it, on a
learner's own SQLite (``serve``) and on the class server (PostgreSQL)."""

from __future__ import annotations

import json
import os
import re

import pytest
from test_web import LESSON, current_card
from test_web_class import classroom, logged  # noqa: F401  # the class server's fixture, over this module's lesson
from web_client import Browser

from bertdrill.adapters.lessons import read_lesson
from bertdrill.adapters.store import Store
from bertdrill.cli.review import LeechChoice, NumbersChoice
from bertdrill.cli.serve import _desk
from bertdrill.core.lesson import VariantMode
from bertdrill.core.variants import draw, read_logged
from bertdrill.web.app import local_app

VARIANTS = """
[variants]
mode = "fresh"
d = [16, 24, 40]
"""
CARD = "web/width@small"


@pytest.fixture
def lesson(tmp_path):
    path = tmp_path / "web.toml"
    path.write_text(LESSON.replace("[formulas]", VARIANTS + "\n[formulas]"), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def monday(monkeypatch):
    monkeypatch.setenv("BERTDRILL_NOW", "2025-03-03T09:00:00+03:00")


def asked_width(page: str) -> int:
    """The variant's d, as the question states it."""
    found = re.search(r"How wide is d = (\d+)\?", page)
    assert found is not None, page
    return int(found[1])


def diagnosis(page: str) -> str:
    found = re.search(r'id="diagnosis">([^<]+)<', page)
    assert found is not None, page
    return found[1]


def answer_and_check(web: Browser, lesson_path, stored) -> None:
    """Answer the numeric card wrong then right; ``stored()`` reads back (card, grade, typed, variant) rows."""
    page = web.get("/review")
    assert current_card(page) == CARD
    d = asked_width(page)
    assert d in (16, 24, 40) and "How wide is Small" not in page
    assert asked_width(web.get("/review")) == d  # the page shown again asks the same numbers
    wrong = d * d + d  # the factor 4 left out, on the variant's own d
    page = web.submit("/review/answer", answer=str(wrong))
    assert "✗" in page
    assert diagnosis(page) == f"{wrong:,} is attention of d = {d} without the factor 4, not attention."
    assert f"{4 * (d * d + d):,}" in page  # the expected answer is the variant's
    web.submit("/review/grade", grade="1")
    ((card, grade, typed, variant),) = stored()
    assert (card, grade, typed) == (CARD, 1, str(wrong)) and variant is not None
    seed, key = read_logged(variant)
    assert key == f"d={d}" and seed is not None
    drawn = draw(read_lesson(lesson_path), seed)  # the seed logged draws exactly what was asked
    assert drawn is not None and drawn.key == key
    page = web.submit("/review/undo")
    assert stored() == [] and asked_width(page) == d  # undone: the same numbers again
    page = web.submit("/review/answer", answer=f"{4 * (d * d + d)}")
    assert "✓" in page


def test_serve_asks_fresh_numbers_grades_them_and_logs_the_seed(lesson):
    desk = _desk(None, [lesson], None, None, 10, 200, 4, LeechChoice.suspend)
    web = Browser(local_app(desk))

    def stored():
        with Store.open(os.environ["BERTDRILL_DB"], read_only=True) as store:
            return [(CARD, a.grade, a.typed, a.variant) for a in store.answers(CARD)]

    try:
        answer_and_check(web, lesson, stored)
    finally:
        web.close()
        desk.store.close()


def test_serve_numbers_fixed_keeps_the_lessons_own_set(lesson):
    desk = _desk(None, [lesson], None, None, 10, 200, 4, LeechChoice.suspend, NumbersChoice.fixed)
    web = Browser(local_app(desk))
    try:
        page = web.get("/review")
        assert "How wide is Small?" in page
        page = web.submit("/review/answer", answer="72")
        assert diagnosis(page) == "72 is attention of Small without the factor 4, not attention."
    finally:
        web.close()
        desk.store.close()


def test_the_class_server_asks_each_learner_fresh_numbers_and_logs_the_seed(classroom, lesson):  # noqa: F811
    web = classroom("Ayşe")

    def stored():
        return [tuple(row) for row in logged(classroom.postgres, "SELECT card_id, grade, typed, variant FROM review "
                                                                 "ORDER BY id")]

    answer_and_check(web, lesson, stored)


def test_the_teacher_sees_wrong_answers_to_fresh_numbers_under_their_variant(classroom, cli, lesson,  # noqa: F811
                                                                             monkeypatch):
    """Two learners answer the same variant wrong (their sittings share a salt, so their first showings draw the
    same numbers): the dashboard groups them under the card and the variant's values, diagnosed on the variant's
    own numbers; a third learner asked the card's own numbers is grouped apart, as before; a learner's page says
    which numbers each wrong answer answered."""
    monkeypatch.setattr("bertdrill.web.desk.secrets.randbits", lambda bits: 7)
    asked = []
    for name in ("Ayşe", "Bora"):
        web = classroom(name)
        d = asked_width(web.get("/review"))
        web.submit("/review/answer", answer=str(d * d + d))  # the factor 4 left out, on the variant's own d
        web.submit("/review/grade", grade="1")
        asked.append(d)
    assert asked[0] == asked[1]
    d, wrong = asked[0], asked[0] * asked[0] + asked[0]
    keys = {read_logged(variant)[1] for (variant,) in logged(classroom.postgres, "SELECT variant FROM review")}
    assert keys == {f"d={d}"}  # each answer logged with the seed and key that drew it
    assert cli("class", "add-learner", "Cem", "--password", "Cem-password").exit_code == 0
    classroom.server.numbers = VariantMode.FIXED  # Cem's sitting asks the card's own numbers
    cem = classroom("Cem")
    assert "How wide is Small?" in cem.get("/review")
    cem.submit("/review/answer", answer=str(wrong))  # the same number, wrong for Small's own d (8) otherwise
    cem.submit("/review/grade", grade="1")
    teacher = classroom("Tülin")
    page = teacher.get("/teacher")
    assert (f"2 learners typed {wrong:,} for d = {d}: {wrong:,} is attention of d = {d} without the factor 4, "
            "not attention.") in page
    own = re.findall(rf"1 learner typed {wrong:,}: ([^<]*)<", page)
    assert len(own) == 1 and f"d = {d}" not in own[0]  # the card's own numbers: diagnosed on Small, grouped apart
    ids = {name: int(number) for number, name in re.findall(r'<a href="/teacher/learners/(\d+)">([^<]+)</a>', page)}
    learner = teacher.get(f"/teacher/learners/{ids['Bora']}")
    assert f"typed {wrong:,} for d = {d}: {wrong:,} is attention of d = {d} without the factor 4" in learner
    report = cli("class", "report")  # the teacher's command says the same
    assert report.exit_code == 0, report.stderr
    assert (f"{CARD}: 2 learners typed {wrong:,} for d = {d}: {wrong:,} is attention of d = {d} without the factor "
            "4, not attention.") in report.stdout
    found = json.loads(cli("class", "report", "--json").stdout)
    (card,) = [card for card in found["cards"] if card["card"] == CARD]
    assert [(row["typed"], row["learners"], row["variant"], row["values"]) for row in card["wrong_answers"]] == [
        (str(wrong), 1, None, None), (str(wrong), 2, f"d={d}", f"d = {d}")]
