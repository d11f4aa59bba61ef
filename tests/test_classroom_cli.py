"""bertdrill class init, add-learner and report, and --learner, through the CLI as a teacher and learners use them."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import Store
from bertdrill.core.kinds import Kind
from bertdrill.core.scheduling import sm2

NOW = "2025-03-03T09:00:00+00:00"
DAY = date(2025, 3, 3)


@pytest.fixture(scope="module")
def facts():
    """The shipped lesson's fact cards, in lesson order: what the learners below answer."""
    return [card for card in all_cards(load_lessons()) if card.kind == Kind.FACT]


def answer(url, *graded):
    """A learner's session, through the store: (card, grade) in order; the first answer of a card schedules."""
    with Store.open(url) as store:
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
    assert result.stdout.startswith(f"Class ready in {postgres.url}: 1 lesson; each learner sees only their own")
    return postgres


def add(cli, postgres, name):
    role = postgres.role(name)
    result = cli("class", "add-learner", role, "--password", "pw-" + name)
    assert result.exit_code == 0, result.stderr
    url = postgres.url_as(role).replace(f"{role}@", f"{role}:pw-{name}@")
    assert result.stdout == (f"Added {role}: a PostgreSQL role of their own, in the class.\n"
                             f"{role} connects with:\n  export BERTDRILL_DB='{url}'\n  bertdrill review\n")
    return role, url


def test_a_class_from_init_to_report(teacher, cli, facts):
    ayse, ayse_url = add(cli, teacher, "ayse")
    bora, bora_url = add(cli, teacher, "bora")
    answer(ayse_url, (facts[0], 5), (facts[1], 4), (facts[2], 1), (facts[2], 4))
    answer(bora_url, (facts[0], 2), (facts[0], 5), (facts[1], 4))
    mine = json.loads(cli("status", "--json", "--db", ayse_url).stdout)
    assert mine["learned"] == 3 and mine["answered_today"] == 4
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
    assert other["cards"] == [] and other["learners"] == []  # nobody has a card of a lesson the class lacks
    assert all(card["learners"] == 0 for card in data["cards"][4:])
    text = cli("class", "report").stdout.splitlines()
    assert text[0] == (f"Class report for study day 2025-03-03: 2 learners, {len(data['cards'])} cards "
                       f"({teacher.url})")
    assert text[2].split() == ["learner", "due", "7", "days", "retention", "streak", "last", "active"]
    assert text[3].split()[:5] == [ayse, "0", "4", "-", "1"]
    assert text[8].split()[:6] == [facts[2].id, "2", "-", "1/1", "100%", "1.96"]


def test_a_learner_sees_only_themselves(teacher, cli, facts):
    ayse, ayse_url = add(cli, teacher, "ayse")
    bora, bora_url = add(cli, teacher, "bora")
    answer(bora_url, (facts[0], 5))
    data = json.loads(cli("class", "report", "--json", "--db", ayse_url).stdout)
    assert [row["learner"] for row in data["learners"]] == []  # ayse has no schedule yet, bora is invisible
    assert all(card["answers"] == 0 for card in data["cards"])
    as_bora = cli("review", "--db", ayse_url, "--learner", bora, "--new", "1", input="5\n")
    assert as_bora.exit_code == 1
    assert "your role may not do this" in as_bora.stderr and "row-level security" in as_bora.stderr


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
    answer(db, (facts[5], 5))
    monkeypatch.delenv("BERTDRILL_LEARNER")
    monkeypatch.setenv("BERTDRILL_LEARNER", "bora")
    assert json.loads(cli("status", "--json", "--db", db).stdout)["learned"] == 0
    assert json.loads(cli("status", "--json", "--db", db, "--learner", "ayse").stdout)["learned"] == 2
    report = json.loads(cli("class", "report", "--json", "--db", db).stdout)  # works on a file too
    assert [(row["learner"], row["answered_7_days"]) for row in report["learners"]] == [("ayse", 2), ("bora", 0)]


def test_a_sheet_of_what_the_class_fails(teacher, cli, tmp_path, facts):
    ayse, ayse_url = add(cli, teacher, "ayse")
    bora, bora_url = add(cli, teacher, "bora")
    nothing = cli("sheet", "--from-class", "-o", str(tmp_path / "none.md"), "--seed", "1")
    assert nothing.exit_code == 1
    assert nothing.stderr.startswith(f"Error: no learner in {teacher.url} has failed a card yet")
    answer(ayse_url, (facts[0], 5), (facts[1], 4), (facts[2], 1))
    answer(bora_url, (facts[0], 2), (facts[1], 4))
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
