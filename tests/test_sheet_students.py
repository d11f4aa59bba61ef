"""A sheet per student: the same questions and points for everyone, each student's own numbers and key."""

from __future__ import annotations

import re

from bertdrill.adapters.export.sheets import model
from bertdrill.adapters.lessons import load_lessons
from bertdrill.core.kinds import Kind


def test_every_student_gets_the_same_questions_and_points_and_their_own_numbers():
    lessons = load_lessons()
    sheet = model.build_sheet(lessons, language="en", seed=11, students=["Ayşe", "Bora", "Cem", "Deniz"])
    shapes = {tuple((q.kind, q.points, q.id) for q in version.questions) for version in sheet.versions}
    assert len(shapes) == 1  # the same items, kinds and points in the same places
    numeric = [[q for q in version.questions if q.kind is Kind.NUMERIC] for version in sheet.versions]
    totals = [next(q.value for q in questions if q.id.startswith("bert-basics/layer-params")) for questions in numeric]
    assert len(set(totals)) == 4 and 7087872 not in totals  # own numbers, none BERT-base's
    keys = {tuple(q.variant for q in questions) for questions in numeric}
    assert len(keys) == 4 and all(all(k) for k in keys)
    for questions in numeric:  # every numeric question of a student asks that student's one variant
        assert len({q.variant for q in questions}) == 1
        for question in questions:
            values = dict(part.split("=") for part in question.variant.split(","))
            assert f"d = {int(values['d']):,}" in question.prompt
    assert [v.student for v in sheet.versions] == ["Ayşe", "Bora", "Cem", "Deniz"]
    again = model.build_sheet(lessons, language="en", seed=11, students=["Ayşe", "Bora", "Cem", "Deniz"])
    assert again == sheet  # reproducible from one seed


def test_the_cli_writes_each_students_name_and_the_keys_in_their_own_file(cli, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("name,id\nAyşe Yılmaz,17\n\n\"Öztürk, Çağla\",18\n", encoding="utf-8")
    out = tmp_path / "quiz.md"
    result = cli("sheet", "-o", str(out), "--students", str(roster), "--seed", "4")
    assert result.exit_code == 0, result.output
    sheet, key = out.read_text(), (tmp_path / "quiz-key.md").read_text()
    assert "Name: Ayşe Yılmaz" in sheet and "Name: Öztürk, Çağla" in sheet and "Answer key" not in sheet
    assert "Answer key — Version 1 · Ayşe Yılmaz" in key
    assert "Name: name" not in sheet  # the heading row is no student
    assert "the answer key in" in result.output and "quiz-key.md" in result.output


def test_a_roster_naming_a_student_twice_is_refused_with_its_line(cli, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("Ayşe\nBora\nAyşe\n", encoding="utf-8")
    result = cli("sheet", "-o", str(tmp_path / "q.html"), "--students", str(roster))
    assert result.exit_code == 1
    assert f"{roster}:3: 'Ayşe' is also on line 1" in result.output
    assert not (tmp_path / "q.html").exists()


def _numbers(text: str) -> set[str]:
    """Numbers of three or more digits, as a reader sees them (``30,522`` and ``30522`` alike)."""
    return {match.replace(",", "") for match in re.findall(r"\d{1,3}(?:,\d{3})+|\d{3,}", text)}


def test_which_questions_share_a_paper_is_decided_on_each_students_own_numbers():
    """A student's embeddings question states V = 30,522: the vocabulary row of the matching table's answer."""
    lessons = load_lessons()
    sheet = model.build_sheet(lessons, language="en", seed=11, students=[""] * 12)
    for version in sheet.versions:
        for shown in version.questions:
            printed = _numbers(" ".join((shown.prompt, *shown.choices, *shown.rows)))
            for asked in version.questions:
                if asked is not shown:
                    assert not printed & _numbers(asked.answer), (version.letter, shown.id, asked.id)
    # with a student's own n, "embeddings + n layers + pooler" no longer states BERT-base's 12 layers
    assert all(any("/total-params@" in q.id for q in version.questions) for version in sheet.versions)


def test_thirty_students_spread_over_every_value_each_parameter_may_take():
    (lesson,) = load_lessons()
    sheet = model.build_sheet([lesson], language="en", seed=5, students=[""] * 30)
    asked = [dict(part.split("=") for part in next(q.variant for q in version.questions if q.variant).split(","))
             for version in sheet.versions]
    space = lesson.variant_space
    assert space is not None
    for name in space.varying:  # d, f, n and h: each takes as many values as it may, up to one per student
        possible = {str(variant.values[name]) for variant in lesson.allowed_variants()}
        assert len({values[name] for values in asked}) == min(30, len(possible)), name
    heads = {q.value for version in sheet.versions for q in version.questions if "/head-size@" in q.id}
    assert len(heads) > 1  # the head size d / h is no longer 64 for everyone
