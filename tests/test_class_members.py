"""A class's members as rows, its lessons published into the database, and the class server's roles on PostgreSQL.

Through the teacher's commands (``class init``, ``add-learner``, ``rename``, ``archive``, ``reset-password``)
and through the store as the class server uses it (its own role, acting for one member per transaction).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import psycopg
import pytest
from postgres import old_class

from bertdrill.adapters.lessons import all_cards, load_lessons
from bertdrill.adapters.store import PostgresStore, Store
from bertdrill.adapters.store import members as class_members
from bertdrill.adapters.store.members import MemberRole
from bertdrill.core.errors import StoreError
from bertdrill.core.scheduling import sm2

DAY = date(2025, 3, 3)
MORNING = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
NAMES = ("Ayşe %Ö", "%%", "Александра Константиновна Преображенская-Добровольская", "李小龍")


@pytest.fixture
def teacher(postgres, cli, monkeypatch):
    monkeypatch.setenv("BERTDRILL_DB", postgres.url)
    result = cli("class", "init", "--address", "https://class.example.org/")
    assert result.exit_code == 0, result.stderr
    return postgres


def server(postgres) -> PostgresStore:
    """The class server's store: its own role, as class init made it."""
    return PostgresStore.serving(postgres.url_as(f"{postgres.database}_server"))


def log_in(gate: PostgresStore, name: str, password: str) -> tuple[class_members.Member, str]:
    """The member and token of a login that must succeed."""
    logged = gate.log_in(name, password)
    assert logged is not None, f"{name} could not log in"
    return logged


def answer(store, card, grade, lessons=None):
    store.sync(all_cards(load_lessons(lessons)))  # the published lesson's cards, as the class server syncs
    return store.answer(card.id, grade=grade, kind="new", reviewed_at=MORNING, study_day=DAY,
                        reschedule=lambda s: sm2.review(s, grade, today=DAY), once_per_day=True)


def test_add_learner_prints_how_to_log_in_never_a_database_url(teacher, cli):
    for name in NAMES:
        result = cli("class", "add-learner", name)
        assert result.exit_code == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[:3] == [f"Added {name} to the class.", "They log in at https://class.example.org/ with:",
                             f"  name: {name}"]
        assert lines[3].startswith("  password: ") and len(lines[3].split(": ")[1]) == 16
        assert lines[4] == "The password is shown only now: pass it on privately."
        assert "postgresql" not in result.stdout and teacher.database not in result.stdout
    given = cli("class", "add-learner", "Bora", "--password", "bora-secret")
    assert given.stdout.splitlines()[-2:] == [  # a password the teacher chose is not printed back
        "  name: Bora", "From a terminal: bertdrill login https://class.example.org/ --name Bora"]
    spaced = cli("class", "add-learner", "Ayşe Nur %Ö", "--password", "ayse-secret").stdout.splitlines()[-1]
    assert spaced == "From a terminal: bertdrill login https://class.example.org/ --name 'Ayşe Nur %Ö'"
    with teacher.connect() as connection:
        stored = connection.execute("SELECT name, role, learner FROM member ORDER BY id").fetchall()
        hashes = [row[0] for row in connection.execute("SELECT hash FROM member_password")]
    assert stored == [(name, "learner", f"member:{n}") for n, name in enumerate((*NAMES, "Bora", "Ayşe Nur %Ö"),
                                                                               start=1)]
    assert all(h.startswith("scrypt$16384$8$1$") and "bora-secret" not in h for h in hashes) and len(hashes) == 6
    again = cli("class", "add-learner", "BORA")  # the same name, in other letters: refused, nothing changed
    assert again.exit_code == 1
    assert again.stderr.startswith("Error: the class already has a member called 'BORA'")


def test_a_member_logs_in_with_name_and_password_and_the_teacher_resets_it(teacher, cli):
    cli("class", "add-learner", "Ayşe", "--password", "first-password")
    with server(teacher) as class_server:
        gate = class_server.gate()
        assert gate.log_in("ayşe", "wrong-password") is None
        assert gate.log_in("nobody", "first-password") is None
        member, token = log_in(gate, "AYŞE", "first-password")  # a name matches whatever its case
        assert member.name == "Ayşe" and member.role is MemberRole.LEARNER
        assert gate.logged_in(token) == member
        assert gate.logged_in(token + "x") is None
        reset = cli("class", "reset-password", "ayşe", "--password", "second-password")
        assert reset.exit_code == 0, reset.stderr
        assert gate.logged_in(token) is None  # a reset ends every login
        assert gate.log_in("Ayşe", "first-password") is None
        member, token = log_in(gate, "Ayşe", "second-password")
        own = class_server.acting_as(member)
        assert own.change_own_password(member, "not-mine", "third-password", token) is False
        assert own.change_own_password(member, "second-password", "third-password", token) is True
        assert gate.logged_in(token) == member  # changing one's own password keeps this login
        assert gate.log_in("Ayşe", "third-password") is not None
    with teacher.connect() as connection:
        assert connection.execute("SELECT count(*) FROM member_login").fetchone() == (2,)
        assert not connection.execute("SELECT 1 FROM member_password WHERE hash LIKE '%password%'").fetchall()


def test_an_archived_member_keeps_their_history_and_a_newcomer_of_that_name_starts_afresh(teacher, cli, facts):
    cli("class", "add-learner", "Ayşe", "--password", "ayse-password")
    cli("class", "add-learner", "Bora", "--password", "bora-password")
    with server(teacher) as class_server:
        gate = class_server.gate()
        old, token = log_in(gate, "Ayşe", "ayse-password")
        answer(class_server.acting_as(old), facts[0], 5)
        archived = cli("class", "archive", "Ayşe")
        assert archived.exit_code == 0, archived.stderr
        assert gate.logged_in(token) is None and gate.log_in("Ayşe", "ayse-password") is None
        cli("class", "add-learner", "Ayşe", "--password", "new-ayse-password")
        new, _token = log_in(gate, "Ayşe", "new-ayse-password")
        assert new.id != old.id and new.learner != old.learner
        assert class_server.acting_as(new).answers() == []  # nothing of the archived Ayşe's
        answer(class_server.acting_as(new), facts[1], 2)
    with teacher.connect() as connection:  # the archived member's answer is kept, under her own key
        assert connection.execute("SELECT learner, card_id FROM review ORDER BY id").fetchall() == [
            (old.learner, facts[0].id), (new.learner, facts[1].id)]
    report = json.loads(cli("class", "report", "--json").stdout)
    assert [row["learner"] for row in report["learners"]] == ["Ayşe", "Bora"]
    assert report["learners"][0]["answered_7_days"] in (0, 1)  # the new Ayşe's (the day is today's), not the old one's
    members = cli("class", "members", "--archived").stdout.splitlines()
    assert members == ["Ayşe  learner (archived)", "Ayşe  learner", "Bora  learner"]
    renamed = cli("class", "rename", "Bora", "Ayşe")
    assert renamed.exit_code == 1 and "already has a member called 'Ayşe'" in renamed.stderr
    assert cli("class", "rename", "Bora", "Bora Yıldız").exit_code == 0
    assert cli("class", "members").stdout.splitlines() == ["Ayşe  learner", "Bora Yıldız  learner"]


def test_two_classes_on_one_server_stay_apart(postgres, cli, monkeypatch):
    other = f"{postgres.database}_b"
    with postgres.connect() as connection:
        connection.execute(f'CREATE DATABASE "{other}"')
    try:
        other_url = postgres.url.rsplit("/", 1)[0] + "/" + other
        for url, password in ((postgres.url, "class-a-password"), (other_url, "class-b-password")):
            assert cli("class", "init", "--db", url).exit_code == 0
            assert cli("class", "add-learner", "Ayşe", "--password", password, "--db", url).exit_code == 0
        with server(postgres) as first:
            assert first.gate().log_in("Ayşe", "class-b-password") is None  # the other class's Ayşe
            assert first.gate().log_in("Ayşe", "class-a-password") is not None
        with postgres.connect() as connection:
            roles = {row[0] for row in connection.execute(
                "SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)", (postgres.database,))}
        assert {f"{postgres.database}_server", f"{other}_server"} <= roles  # each class has its own server role
    finally:
        with postgres.connect() as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{other}" WITH (FORCE)')


def test_the_server_role_acts_for_one_member_at_a_time_and_cannot_lift_row_level_security(teacher, cli, facts):
    cli("class", "add-learner", "Ayşe", "--password", "ayse-password")
    cli("class", "add-learner", "Bora", "--password", "bora-password")
    cli("class", "add-teacher", "Tülin", "--password", "tulin-password")
    with server(teacher) as class_server:
        gate = class_server.gate()
        ayse, bora, tulin = (log_in(gate, name, password)[0] for name, password in (
            ("Ayşe", "ayse-password"), ("Bora", "bora-password"), ("Tülin", "tulin-password")))
        answer(class_server.acting_as(ayse), facts[0], 5)
        answer(class_server.acting_as(bora), facts[0], 1)
        as_ayse = class_server.acting_as(ayse)
        assert [a.grade for a in as_ayse.answers()] == [5]
        # a query that forgets whose rows it reads still reads only hers: the policies, not the query, decide
        assert as_ayse.rows("SELECT DISTINCT learner FROM review") == [(ayse.learner,)]
        assert as_ayse.rows("SELECT name FROM member") == [("Ayşe",)]
        with pytest.raises(StoreError, match="may not do this"):
            as_ayse.rows("SELECT hash FROM member_password JOIN member ON member.id = member_id "
                         "WHERE member.name = 'Bora' FOR UPDATE OF member")
        assert class_server.acting_as(tulin).rows("SELECT count(*) FROM review") == [(2,)]  # the teacher reads all
        with pytest.raises(StoreError, match="may not do this|permission denied"):
            class_server.rows("SELECT count(*) FROM review")  # the server's own role, acting for nobody: nothing
    role = f"{teacher.database}_server"
    with teacher.connect(role) as connection:
        for statement in ("ALTER TABLE review DISABLE ROW LEVEL SECURITY", "DROP POLICY acting_learner ON review",
                          "SET ROLE postgres"):
            with pytest.raises(psycopg.Error, match="must be owner|permission denied"):
                connection.execute(statement)
        connection.execute(f"SET ROLE {teacher.database}_learner")
        connection.execute("SELECT set_config('bertdrill.learner', %s, false)", (ayse.learner,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            connection.execute("UPDATE review SET learner = %s", (bora.learner,))
        assert connection.execute("DELETE FROM review WHERE learner = %s", (bora.learner,)).rowcount == 0
        with pytest.raises(psycopg.Error, match="permission denied"):
            connection.execute("UPDATE card SET removed = true")
        timeouts = connection.execute("SELECT current_setting('statement_timeout'), "
                                      "current_setting('idle_in_transaction_session_timeout')").fetchone()
    assert timeouts == ("5s", "10s")  # set on the server's role itself, whatever client connects as it


def test_class_init_publishes_the_lessons_texts_and_republishing_keeps_every_history(teacher, cli, tmp_path, facts):
    from pathlib import Path

    shipped = Path(load_lessons()[0].path).read_text(encoding="utf-8")
    with teacher.connect() as connection:
        assert connection.execute("SELECT lesson_id, version, source FROM published_lesson").fetchall() == [
            ("bert-basics", 1, shipped)]
    cli("class", "add-learner", "Ayşe", "--password", "ayse-password")
    with server(teacher) as class_server:
        ayse = log_in(class_server.gate(), "Ayşe", "ayse-password")[0]
        answer(class_server.acting_as(ayse), facts[0], 5)
    prompt = facts[0].prompt["en"]
    edited = tmp_path / "bert-basics.toml"
    edited.write_text(shipped.replace(prompt, prompt + " (edited)", 1), encoding="utf-8")
    result = cli("class", "init", "--file", str(edited))
    assert result.exit_code == 0, result.stderr
    assert "Published bert-basics (version 2)." in result.stdout
    assert "nothing new to publish" in cli("class", "init", "--file", str(edited)).stdout
    with server(teacher) as class_server:
        newest = class_server.gate().published_lessons()
        assert [(lesson.lesson_id, lesson.version) for lesson in newest] == [("bert-basics", 2)]
        assert prompt + " (edited)" in newest[0].source
        assert [a.grade for a in class_server.acting_as(ayse).answers()] == [5]  # her history, kept
    with teacher.connect() as connection:
        assert connection.execute("SELECT version FROM published_lesson ORDER BY version").fetchall() == [(1,), (2,)]


def test_names_and_passwords_are_checked():
    assert class_members.display_name("  Aye\u0301 ") == "Ayé"  # NFC: one way to write each name
    assert class_members.name_key("AYŞE") == class_members.name_key("ayşe")
    for bad in ("", "   ", "a\x00b", "x" * 101):
        with pytest.raises(StoreError, match="is not a member's name"):
            class_members.display_name(bad)
    with pytest.raises(StoreError, match="a password has 8 to 1024 characters"):
        class_members.hash_password("short")
    stored = class_members.hash_password("long enough")
    assert class_members.password_matches("long enough", stored)
    assert not class_members.password_matches("long enougH", stored)
    assert not class_members.password_matches("long enough", "scrypt$broken")
    assert not class_members.password_matches("x" * 2000, stored)


def test_a_file_has_no_members(tmp_path):
    with Store.open(str(tmp_path / "mine.db")) as store:
        tables = {row[0] for row in store.rows("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "member" not in tables and "published_lesson" not in tables


def test_a_sheet_from_the_class_uses_the_texts_the_class_published(teacher, cli, tmp_path, facts):
    from pathlib import Path

    shipped = Path(load_lessons()[0].path).read_text(encoding="utf-8")
    prompt = facts[0].prompt["en"]
    edited = tmp_path / "lesson.toml"
    question = f'question = {{ en = "{prompt}"'
    assert question in shipped
    edited.write_text(shipped.replace(question, question[:-1] + ' (as the class has it)"', 1), encoding="utf-8")
    assert cli("class", "init", "--file", str(edited)).exit_code == 0
    cli("class", "add-learner", "Ayşe", "--password", "ayse-password")
    with server(teacher) as class_server:
        ayse = log_in(class_server.gate(), "Ayşe", "ayse-password")[0]
        answer(class_server.acting_as(ayse), facts[0], 1, [edited])
    out = tmp_path / "hard.md"
    result = cli("sheet", "--from-class", "-o", str(out), "--seed", "1", "--key", "none")  # no lesson file given
    assert result.exit_code == 0, result.stderr
    assert prompt + " (as the class has it)" in out.read_text()


def test_a_class_of_learner_roles_moves_over_with_every_answer(postgres, cli, monkeypatch, facts):
    """A class from before the server: learners with roles of their own, answering as those roles. `class init`
    makes each a member whose rows are theirs already, prints their login once, and the roles lose the class."""
    cards = all_cards(load_lessons())
    ayse = postgres.role("ayse")
    old_class(postgres, cards, ayse)
    with Store.open(postgres.url_as(ayse)) as own:
        answer(own, facts[0], 5)
        answer(own, facts[1], 1)
    monkeypatch.setenv("BERTDRILL_DB", postgres.url)
    moved = cli("class", "init")
    assert moved.exit_code == 0, moved.stderr
    lines = moved.stdout.splitlines()
    start = lines.index(f"Moved {ayse} over from a database role of their own: every answer stays theirs; their role "
                        "no longer reads the class.")
    assert lines[start + 2] == f"  name: {ayse}" and lines[start + 3].startswith("  password: ")
    password = lines[start + 3].split(": ", 1)[1]
    with postgres.connect(ayse) as connection, pytest.raises(psycopg.errors.InsufficientPrivilege):
        connection.execute("SELECT count(*) FROM review")  # her role reads nothing of the class now
    with server(postgres) as class_server:
        member, _token = log_in(class_server.gate(), ayse, password)
        assert member.learner == ayse  # her key is her role's name: the rows were hers already
        assert [a.grade for a in class_server.acting_as(member).answers()] == [5, 1]
    again = cli("class", "init")
    assert "Moved" not in again.stdout  # once
    report = json.loads(cli("class", "report", "--json").stdout)
    assert [(row["learner"], row["answered_7_days"] >= 0) for row in report["learners"]] == [(ayse, True)]


def test_the_dashboards_wrong_answers_are_read_from_their_own_index(teacher):
    """On 1M answers, scanning and sorting the log for them took 1.5 s: class init makes a partial index of the
    wrong answers, and the query must say what the index holds, or the planner silently goes back to the log.
    Wrong answers to fresh numbers have an index of their own, so the own numbers' index stays as it was."""
    from sqlalchemy.dialects import postgresql

    from bertdrill.adapters.store.classroom import variant_wrong_answers_query, wrong_answers_query

    def plan(query) -> str:
        sql = str(query.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
        with teacher.connect() as connection:
            connection.execute("SET enable_seqscan = off")  # a test's log is tiny: any plan would do, but not this
            return "\n".join(row[0] for row in connection.execute(f"EXPLAIN {sql}"))

    own, fresh = plan(wrong_answers_query()), plan(variant_wrong_answers_query())
    assert "ix_review_wrong " in own and "ix_review_wrong_variant" not in own, own
    assert "ix_review_wrong_variant" in fresh, fresh


def test_the_servers_report_read_on_two_connections_is_the_teachers_commands(teacher, cli, facts):
    """The class server reads the report's learners and cards on two connections at once; the teacher's command
    (a reader: one connection) reads them in turn. Both see the same class."""
    cli("class", "add-learner", "Ayşe", "--password", "ayse-password")
    cli("class", "add-learner", "Bora", "--password", "bora-password")
    cli("class", "add-teacher", "Tülin", "--password", "tulin-password")
    with server(teacher) as class_server:
        gate = class_server.gate()
        for name, grades in (("Ayşe", (5, 1)), ("Bora", (2, 4, 0))):
            member, _token = log_in(gate, name, f"{name.lower().replace('ş', 's')}-password")
            for card, grade in zip(facts, grades, strict=False):
                answer(class_server.acting_as(member), card, grade)
        tulin, _token = log_in(gate, "Tülin", "tulin-password")
        served = class_server.acting_as(tulin).class_report(DAY)
    with Store.open(teacher.url, read_only=True) as reader:
        assert isinstance(reader, PostgresStore) and reader.reading
        read = reader.class_report(DAY)
    assert [row.learner for row in served.learners] == ["Ayşe", "Bora"]
    assert sum(card.answers for card in served.cards) == 5
    assert served == read


@pytest.mark.parametrize("logged", ["123:d=512,f=2048", ":d=16", "7:", ""])
def test_the_variants_key_is_read_alike_by_both_backends_and_the_core(teacher, logged):
    """The dashboard groups wrong answers to fresh numbers by the key in a logged "seed:key", in SQL; each backend
    must read the key as :func:`bertdrill.core.variants.read_logged` does, or one would group what the other splits."""
    from sqlalchemy import create_engine, literal, select

    from bertdrill.adapters.store.schema import variant_key
    from bertdrill.core.variants import read_logged

    query = select(variant_key(literal(logged)))
    engines = [create_engine("sqlite://"), create_engine(teacher.url.replace("postgresql://", "postgresql+psycopg://"))]
    try:
        found = [engine.connect().execute(query).scalar_one() for engine in engines]
    finally:
        for engine in engines:
            engine.dispose()
    assert found == [read_logged(logged)[1]] * 2
