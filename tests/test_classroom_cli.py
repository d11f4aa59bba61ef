"""bertdrill class init, add-learner and report, and --learner, through the CLI as a teacher and learners use them."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import PostgresStore, Store
from bertdrill.core.scheduling import sm2

NOW = "2025-03-03T09:00:00+00:00"
DAY = date(2025, 3, 3)



def answer(store, *graded):
    """A learner's session, through the class server's store acting as them: (card, grade) in order; the
    first answer of a card schedules."""
    store.sync(all_cards(load_lessons()))
    for card, grade in graded:
        store.answer(card.id, grade=grade, kind="new", reviewed_at=datetime(2025, 3, 3, 9, tzinfo=UTC),
                     study_day=DAY, reschedule=lambda s, g=grade: sm2.review(s, g, today=DAY), once_per_day=True)


@pytest.fixture
def teacher(postgres, cli, monkeypatch):
    """A class set up with `class init`, the teacher's URL in $BERTDRILL_DB."""
    monkeypatch.setenv("BERTDRILL_DB", postgres.url)
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    result = cli("class", "init")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"Class ready in {postgres.url}: 1 lesson.\nPublished bert-basics (version 1).")
    return postgres


@pytest.fixture
def class_server(teacher):
    with PostgresStore.serving(teacher.url_as(f"{teacher.database}_server")) as store:
        yield store


def add(cli, class_server, name):
    """A learner added with `class add-learner`, logged in: the server's store acting as them."""
    result = cli("class", "add-learner", name, "--password", "password-" + name)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (f"Added {name} to the class.\nThey log in at the address bertdrill serve prints (keep it "
                             f"with bertdrill class init --address URL) with:\n  name: {name}\n")
    member, _token = class_server.gate().log_in(name, "password-" + name)
    return name, class_server.acting_as(member)


def test_a_class_from_init_to_report(teacher, class_server, cli, facts):
    ayse, as_ayse = add(cli, class_server, "ayse")
    bora, as_bora = add(cli, class_server, "bora")
    answer(as_ayse, (facts[0], 5), (facts[1], 4), (facts[2], 1), (facts[2], 4))
    answer(as_bora, (facts[0], 2), (facts[0], 5), (facts[1], 4))
    assert len(as_ayse.answers()) == 4
    report = cli("class", "report", "--json")
    assert report.exit_code == 0, report.stderr
    data = json.loads(report.stdout)
    assert [(row["learner"], row["answered_7_days"], row["streak"]) for row in data["learners"]] == [
        (ayse, 4, 1), (bora, 3, 1)]
    first, second, third = data["cards"][:3]  # ayse failed the third card; bora the first, which ayse passed
    assert (first["card"], first["failed_last_time"], first["learners"], first["failed_share"]) == (
        facts[2].id, 1, 1, 1.0)
    assert (second["card"], second["failed_last_time"], second["learners"], second["failed_share"]) == (
        facts[0].id, 1, 2, 0.5)
    assert third["failed_share"] == 0.0 and third["learners"] == 2
    assert first["ef"] == 1.96 and first["stability_days"] is None  # SM-2 schedules both learners
    only = json.loads(cli("class", "report", "--json", "--lesson", "bert-basics").stdout)
    assert only["cards"] == data["cards"] and only["learners"] == data["learners"]
    other = json.loads(cli("class", "report", "--json", "--lesson", "no-such-lesson").stdout)
    assert other["cards"] == []  # nobody has a card of a lesson the class lacks; every member is listed, idle
    assert [(row["learner"], row["answered_7_days"], row["due"]) for row in other["learners"]] == [
        (ayse, 0, 0), (bora, 0, 0)]
    assert all(card["learners"] == 0 for card in data["cards"][4:])
    text = cli("class", "report").stdout.splitlines()
    assert text[0] == (f"Class report for study day 2025-03-03: 2 learners, {len(data['cards'])} cards "
                       f"({teacher.url})")
    assert text[2].split() == ["learner", "due", "7", "days", "retention", "streak", "last", "active"]
    assert text[3].split()[:5] == [ayse, "0", "4", "-", "1"]
    assert text[8].split()[:6] == [facts[2].id, "2", "-", "1/1", "100%", "1.96"]
    turkish = cli("class", "report", "--lang", "tr").stdout.splitlines()
    assert turkish[8].split()[:6] == [facts[2].id, "2", "-", "1/1", "%100", "1,96"]  # the EF with a decimal comma


def test_the_report_counts_one_learner_and_one_card_in_the_singular(teacher, class_server, cli, facts):
    add(cli, class_server, "ayse")
    first = cli("class", "report", "--lesson", "no-such-lesson").stdout.splitlines()[0]
    assert first.startswith("Class report for study day 2025-03-03: 1 learner, 0 cards ("), first
    turkish = cli("class", "report", "--lang", "tr").stdout.splitlines()[0]
    assert ": 1 öğrenci, " in turkish and " kart (" in turkish, turkish


def test_a_learner_sees_only_themselves(teacher, class_server, cli, facts):
    ayse, as_ayse = add(cli, class_server, "ayse")
    bora, as_bora = add(cli, class_server, "bora")
    answer(as_bora, (facts[0], 5))
    seen = as_ayse.class_report(DAY)
    assert [row.learner for row in seen.learners] == ["ayse"]  # herself (no answer yet); bora is invisible
    assert all(card.answers == 0 for card in seen.cards)


def test_class_commands_need_postgresql(cli, tmp_path):
    result = cli("class", "init", "--db", str(tmp_path / "mine.db"))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {tmp_path / 'mine.db'} is an SQLite file, and a class needs PostgreSQL")


def test_learner_option_and_environment_on_sqlite(cli, tmp_path, monkeypatch, facts):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    db = str(tmp_path / "shared.db")
    reviewed = cli("review", "--db", db, "--learner", "ayse", "--new", "1", input="5\n")
    assert reviewed.exit_code == 0 and "Saved: grade 5" in reviewed.stdout
    monkeypatch.setenv("BERTDRILL_LEARNER", "ayse")
    with Store.open(db) as own:
        answer(own, (facts[5], 5))
    monkeypatch.delenv("BERTDRILL_LEARNER")
    monkeypatch.setenv("BERTDRILL_LEARNER", "bora")
    assert json.loads(cli("status", "--json", "--db", db).stdout)["learned"] == 0
    assert json.loads(cli("status", "--json", "--db", db, "--learner", "ayse").stdout)["learned"] == 2
    report = json.loads(cli("class", "report", "--json", "--db", db).stdout)  # works on a file too
    # bora only looked (status): a reader writes nothing, so the class has no rows of bora's (issue 23)
    assert [(row["learner"], row["answered_7_days"]) for row in report["learners"]] == [("ayse", 2)]


def test_a_sheet_of_what_the_class_fails(teacher, class_server, cli, tmp_path, facts):
    ayse, as_ayse = add(cli, class_server, "ayse")
    bora, as_bora = add(cli, class_server, "bora")
    nothing = cli("sheet", "--from-class", "-o", str(tmp_path / "none.md"), "--seed", "1")
    assert nothing.exit_code == 1
    assert nothing.stderr.startswith(f"Error: no learner in {teacher.url} has failed a card yet")
    answer(as_ayse, (facts[0], 5), (facts[1], 4), (facts[2], 1))
    answer(as_bora, (facts[0], 2), (facts[1], 4))
    out = tmp_path / "hard.md"
    result = cli("sheet", "--from-class", "--hardest", "5", "-o", str(out), "--seed", "1", "--key", "none")
    assert result.exit_code == 0, result.stderr
    assert ", 2 questions and " in result.stdout
    text = out.read_text()
    assert facts[2].prompt["en"] in text and facts[0].prompt["en"] in text  # ayse's failure, and bora's
    assert "**2.**" in text and "**3.**" not in text  # two items, nothing else
    one = cli("sheet", "--from-class", "--hardest", "1", "-o", str(tmp_path / "one.md"), "--seed", "1")
    assert one.exit_code == 0
    hardest = (tmp_path / "one.md").read_text()  # failed by everyone who answered it: first
    assert facts[2].prompt["en"] in hardest and "**2.**" not in hardest
