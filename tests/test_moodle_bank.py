"""Moodle banks that give every student fresh numbers and grade fairly, read back by Moodle's own rules.

Calculated questions go through the port of Moodle's XML importer (``moodle_xml``), its formula
check, its PHP evaluation and its numerical grading (``moodle_calculated``); every number Moodle
computes is compared with the one the lesson's formulas give for the same dataset item, computed
here from the lesson, not taken from the exporter.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import gift_parser
import moodle_calculated as mc
import moodle_xml
import pytest

from bertdrill.adapters import catalogs
from bertdrill.adapters.export.sheets import calculated, gift, model, moodle
from bertdrill.adapters.lessons import load_lessons
from bertdrill.core import formula
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson import NumericItem
from bertdrill.core.numbers import format_number


@pytest.fixture(scope="module")
def lesson():
    (found,) = load_lessons()
    return found


def bank(lesson, language="en", **options):
    catalogs.use(language)
    return model.build_sheet([lesson], language=language, seed=7, calculated=True, kinds=model.KINDS, **options)


def by_name(read):
    return {question.name: question for question in read}


@pytest.mark.parametrize("language", ["en", "tr"])
def test_numeric_items_are_calculated_questions_moodle_computes_as_the_lesson_does(lesson, language):
    read = moodle_xml.read(moodle.render(bank(lesson, language)))
    allowed = {variant.key for variant in lesson.allowed_variants()}
    varying = [item for item in lesson.items if isinstance(item, NumericItem) and item.varies]
    questions = by_name(read)
    fixed = lesson.variant_space.fixed
    for item in varying:
        question = questions[f"{lesson.id}/{item.id}"]
        assert question.qtype == "calculatedsimple" and question.idnumber == question.name
        assert question.default_mark == (item.points or 2)
        (answer,) = question.answers
        assert question.items() == 100  # Moodle's most
        seen = set()
        for number in range(1, question.items() + 1):
            values = question.item(number)
            params = {**fixed, **{name: int(value) for name, value in values.items()}}
            key = ",".join(f"{name}={params[name]}" for name in lesson.variant_space.varying)
            assert key in allowed  # every dataset item is a variant the lesson allows
            seen.add(key)
            exact = formula.evaluate(item.formula, formula.resolve(params, lesson.formulas))
            moodles = mc.calculate(answer.text, values)
            assert moodles == exact and type(moodles) is int  # PHP keeps integers exact here
            typed = format_number(exact, "en")  # "1,985,280": Moodle strips the commas
            # ... but reads one comma as a decimal point ("804,608" is 804.608): docs/sheets.md says so
            assert mc.grade(typed, moodles, float(answer.tolerance), int(answer.tolerance_type)) == (
                1 if typed.count(",") != 1 else 0)
            assert mc.grade(str(exact), moodles, float(answer.tolerance), int(answer.tolerance_type)) == 1
            assert mc.grade(str(exact + 1), moodles, float(answer.tolerance), int(answer.tolerance_type)) == 0
            shown = mc.replace_expressions_in_text(question.text.text, values)
            assert "{" not in shown and "}" not in shown
            assert f"d = {values['d']}" in shown  # the student reads the numbers they compute with
        assert len(seen) == 100  # a hundred different variants
    numerical = {q.name for q in read if q.qtype == "numerical" and "@" in q.name}
    assert not numerical & {f"{lesson.id}/{item.id}@{name}" for item in varying for name in item.sets}


def test_the_prompt_states_every_value_the_formula_needs(lesson):
    question = by_name(moodle_xml.read(moodle.render(bank(lesson))))["bert-basics/embedding-params"]
    shown = mc.replace_expressions_in_text(question.text.text, question.item(3))
    assert "(V = 30,522, L = 512, T = 2)" in shown  # fixed in every variant, but the formula needs them
    head = by_name(moodle_xml.read(moodle.render(bank(lesson))))["bert-basics/head-size"]
    feedback = mc.replace_expressions_in_text(head.general_feedback.text, head.item(1))
    d, h = int(head.item(1)["d"]), int(head.item(1)["h"])
    assert f"d / h = {d} / {h} = {d // h}." in feedback  # {head_size} became Moodle's {={d} / {h}}


def test_a_formula_moodle_computes_otherwise_stays_numerical_per_set(lesson):
    """PHP rounds halves away from zero (the lesson to even), and its % truncates to integers first."""
    for source in ("round(d / 3)", "d // 3", "d % 5", "d / 3.3"):
        changed = replace(lesson, formulas={**lesson.formulas, "head_size": formula.parse(source)}, _resolved={})
        varying = set(lesson.variant_space.varying)
        translated = calculated.moodle_formula(changed, "head_size", varying, dict(lesson.variant_space.fixed))
        if source == "d / 3.3":
            assert translated == "{d} / 3.3"
            continue
        assert translated is None, source
        sheet = model.build_sheet([changed], language="en", seed=7, calculated=True)
        assert "bert-basics/head-size" not in {question.item_key for question in sheet.calculated}
        names = {q.name for q in moodle_xml.read(moodle.render(sheet))}
        assert {"bert-basics/head-size@bert-base", "bert-basics/head-size@bert-large"} <= names


def test_moodles_formula_check_is_ported_faithfully():
    assert mc.find_formula_errors("4 * ({d} * {d} + {d})") is None
    assert mc.find_formula_errors("pow({d}, 2) + max({a}, {b}, 3) + round({x}, 2) + pi()") is None
    assert mc.find_formula_errors("pow({d})") == "functiontakestwoargs: pow"
    assert mc.find_formula_errors("sqrt(1, 2)") == "functiontakesonearg: sqrt"
    assert mc.find_formula_errors("system(1)") == "unsupportedformulafunction: system"
    assert mc.find_formula_errors("{d} // 2") is None  # PHP reads // as a comment: Moodle lets it through
    assert (mc.find_formula_errors("d * 2") or "").startswith("illegalformulasyntax")  # a bare name, not {d}
    assert (mc.find_formula_errors("(1, 2)") or "").startswith("illegalformulasyntax")
    assert mc.php_eval("(768) / (12)") == 64 and mc.php_eval("(7) / (2)") == 3.5
    assert mc.php_eval("-(3) * 2") == -6 and mc.php_eval("pow(2, 10)") == 1024
    assert math.isnan(mc.php_eval("pow(-8, 1 / 3)"))  # PHP's NAN, where Python's ** gives a complex number
    assert mc.php_eval("round(2.5)") == 3.0 and mc.php_eval("round(-2.5)") == -3.0  # away from zero
    assert mc.apply_units("23,440,896") == (23440896.0, "") and mc.apply_units("3,5") == (3.5, "")
    assert mc.apply_units("23.440.896") == (23.44, ".896")  # Moodle reads the Turkish grouping as a decimal


def test_texts_cannot_become_wildcards_or_formulas(lesson):
    changed = replace(lesson, items=tuple(
        replace(item, prompt={**item.prompt, "en": item.prompt["en"] + " {{=system(1)}} {{d}}"})
        if item.id == "pooler-params" else item for item in lesson.items))
    question = by_name(moodle_xml.read(moodle.render(bank(changed))))["bert-basics/pooler-params"]
    shown = mc.replace_expressions_in_text(question.text.text, question.item(1))
    assert "&#123;=system(1)&#125; &#123;d&#125;" in shown  # braces as entities: shown, never computed


# --- banks that grade fairly ------------------------------------------------------------------------

@pytest.mark.parametrize("typed, right", [("23,440,896", True), ("23440896", True), ("23000000", True),
                                          ("23,000,000", True), ("24,500,000", False), ("encoder", False)])
def test_the_word_embedding_question_grades_the_number_however_it_is_written(lesson, typed, right):
    question = by_name(moodle_xml.read(moodle.render(bank(lesson))))["bert-basics/word-embedding-table"]
    assert question.qtype == "numerical"
    (answer,) = question.answers
    assert mc.grade(typed, float(answer.text), float(answer.tolerance)) == (1 if right else 0)


def test_free_text_answers_go_to_the_teacher_with_the_model_answer(lesson):
    questions = by_name(moodle_xml.read(moodle.render(bank(lesson))))
    for name in ("bert-definition", "understands-not-generates", "pre-training", "bert-acronym"):
        question = questions[f"bert-basics/{name}"]
        assert question.qtype == "essay", name  # "encoder" no longer gets full marks on "What is BERT?"
    text = moodle.render(bank(lesson))
    assert "To understand text (to produce representations), not to generate it." in text  # grader information


def test_a_models_settings_are_a_cloze_with_a_number_each(lesson):
    question = by_name(moodle_xml.read(moodle.render(bank(lesson))))["bert-basics/bert-large-settings"]
    assert question.qtype == "multianswer"
    assert [(part.qtype, part.answers[0].text) for part in question.parts] == [
        ("numerical", "24"), ("numerical", "1024"), ("numerical", "16"), ("numerical", "4096")]
    assert "{#1} layers, d_model = {#2}, {#3} heads, FFN {#4}" in question.text.text


def test_every_question_has_an_idnumber_and_tags_and_gift_says_its_points(lesson):
    read = moodle_xml.read(moodle.render(bank(lesson)))
    named = [q for q in read if q.qtype != "multianswer"]
    assert all(q.idnumber == q.name for q in named) and len({q.idnumber for q in named}) == len(named)
    assert all(q.tags for q in named)
    sheet = bank(lesson)
    for question, parsed in zip(sheet.bank, (q for q in gift_parser.read(gift.render(sheet)) if q.qtype != "category")):
        assert parsed.idnumber == question.id and f"points-{question.points}" in parsed.tags


# --- a sheet per student, for Moodle -------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["moodle-xml", "gift"])
def test_students_get_their_own_numbers_in_categories_of_their_own(lesson, fmt):
    catalogs.use("en")
    sheet = model.build_sheet([lesson], language="en", seed=5, students=["Ayşe", "Bora", "Cem/2"])
    if fmt == "moodle-xml":
        read = moodle_xml.read(moodle.render(sheet))
        values = [(q.category, q.name, float(q.answers[0].text)) for q in read if q.qtype == "numerical"
                  and "@" in q.name]
    else:
        current = ""
        values = []
        for question in gift_parser.read(gift.render(sheet)):
            if question.qtype == "category":
                current = question.category
            elif question.qtype == "numerical":
                assert question.name is not None, question  # bertdrill names every question it writes
                if "@" in question.name:
                    values.append((current, question.name, float(question.answers[0])))
    root = "$course$/top/bertdrill/What is BERT?/"
    expected = [(root + label, q.id, float(number)) for version, label in
                zip(sheet.versions, ["1 Ayşe", "2 Bora", "3 Cem//2"]) for q in version.questions
                if q.kind == "numeric" and (number := q.value) is not None]
    assert len(expected) == sum(q.kind == "numeric" for version in sheet.versions for q in version.questions)
    assert values == expected
    per_student: dict[str, list[float]] = {}
    for category, _name, value in values:
        per_student.setdefault(category, []).append(value)
    assert len({tuple(v) for v in per_student.values()}) == 3  # each their own numbers


def test_the_cli_says_what_the_moodle_files_hold(cli, tmp_path):
    result = cli("sheet", "-o", str(tmp_path / "bank.xml"), "--seed", "7")
    assert result.exit_code == 0, result.stderr
    assert "7 numeric items as calculated questions: Moodle draws each student's numbers" in result.stdout
    assert re.search(r"Wrote .*bank\.xml: 22 questions for Moodle's question bank", result.stdout)
    result = cli("sheet", "-o", str(tmp_path / "class.gift"), "--seed", "7", "--students", "3")
    assert result.exit_code == 0, result.stderr
    catalogs.use("en")
    each = len(model.build_sheet(load_lessons(), language="en", seed=7, students=[""] * 3).versions[0].questions)
    assert f"{3 * each} questions for 3 students, each student's in a category of their own" in result.stdout
    assert not (tmp_path / "class-key.gift").exists()


def test_a_students_matching_question_carries_the_columns_decoys_as_answers_without_a_question(lesson):
    catalogs.use("en")
    sheet = model.build_sheet([lesson], language="en", seed=5, students=["Ayşe", "Bora"],
                               kinds=[Kind.MATCH, Kind.FACT])
    read = [q for q in moodle_xml.read(moodle.render(sheet)) if q.qtype == "matching"]
    printed = [next(q for q in version.questions if q.kind == "match") for version in sheet.versions]
    assert len(read) == 2
    for question, table in zip(read, printed):
        decoys = [answer for sub, answer in question.pairs if not sub.text]
        assert decoys and sorted(decoys + [table.choices[i] for i in table.correct]) == sorted(table.choices)
        assert {answer for sub, answer in question.pairs if sub.text} == {table.choices[i] for i in table.correct}
