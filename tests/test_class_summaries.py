"""The class report's summaries of the log (schema version 15, PostgreSQL): kept by triggers in the transaction of
every answer and undo, they hold exactly what the log says, and the report read from them is the report read from
the log: after answers on days out of order, undos, archiving, a password reset, a rename, answers from many
learners and windows at once, a day after the report's, and a class migrated from version 14. A learner acting as
themselves reads only their own summary rows; nobody but their owner writes them.
"""

from __future__ import annotations

import random
import threading
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta

import psycopg
import pytest

from bertdrill.adapters.store import MIGRATIONS, PostgresStore, Store
from bertdrill.adapters.store.members import Member
from bertdrill.core.scheduling import sm2
from bertdrill.core.scheduling.state import AnswerKind

DAY = date(2025, 3, 3)
GRADES = (0, 1, 2, 3, 4, 5, 5, 4)


@pytest.fixture
def teacher(postgres, cli, monkeypatch):
    monkeypatch.setenv("BERTDRILL_DB", postgres.url)
    result = cli("class", "init")
    assert result.exit_code == 0, result.stderr
    return postgres


@pytest.fixture
def server(teacher, cli):
    """The class server's store acting as a teacher member (the dashboard's report), whose ``acting_as`` gives a
    learner's view."""
    with PostgresStore.serving(teacher.url_as(f"{teacher.database}_server")) as store:
        yield teaching(cli, store)


def teaching(cli, server: PostgresStore) -> PostgresStore:
    assert cli("class", "add-teacher", "Tülin", "--password", "password-tulin").exit_code == 0
    logged = server.gate().log_in("Tülin", "password-tulin")
    assert logged is not None
    return server.acting_as(logged[0])


def join(cli, server: PostgresStore, name: str) -> tuple[Member, PostgresStore]:
    assert cli("class", "add-learner", name, "--password", f"password-{name}").exit_code == 0
    logged = server.gate().log_in(name, f"password-{name}")
    assert logged is not None
    store = server.acting_as(logged[0])
    store.schedule_every_card()  # as the class server does at a member's first request
    return logged[0], store


def answer(store: PostgresStore, card_id: str, grade: int, day: date, minute: int = 0) -> int:
    """One answer on study day ``day`` (the first of the day schedules, the others are re-drills); its id."""
    moment = datetime.combine(day, time(9, minute % 60), tzinfo=UTC)
    return store.answer(card_id, grade=grade, kind=AnswerKind.NEW, reviewed_at=moment, study_day=day,
                        reschedule=lambda s: sm2.review(s, grade, today=day), once_per_day=True).id


def recounted(connection: psycopg.Connection) -> dict[str, set[tuple[object, ...]]]:
    """The three summaries as the log says they should be, counted here in Python from every answer."""
    days: dict[tuple[str, date], list[int]] = defaultdict(lambda: [0, 0, 0])
    latest: dict[tuple[str, date], datetime] = {}
    per_card: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for learner, card_id, day, moment, kind, grade, reps_before in connection.execute(
            "SELECT learner, card_id, study_day, reviewed_at, kind, grade, reps_before FROM review"):
        counts = days[learner, day]
        counts[0] += 1
        counts[1] += kind == "review"
        counts[2] += kind == "review" and grade >= 3
        latest[learner, day] = max(latest.get((learner, day), moment), moment)
        learned = kind == "review" and reps_before > 0
        card = per_card[learner, card_id]
        card[0] += 1
        card[1] += learned
        card[2] += learned and grade < 3
    runs: dict[tuple[str, date], int] = {}
    for learner, day in sorted(days):
        runs[learner, day] = runs.get((learner, day - timedelta(days=1)), 0) + 1
    learners: dict[str, tuple[date, date, datetime]] = {}
    for (learner, day), moment in sorted(latest.items()):
        first, _last, at = learners.get(learner, (day, day, moment))
        learners[learner] = (first, day, max(at, moment))
    return {"report_day": {(learner, day, *counts, latest[learner, day], runs[learner, day])
                           for (learner, day), counts in days.items()},
            "report_learner": {(learner, *figures) for learner, figures in learners.items()},
            "report_card": {(learner, card_id, *counts) for (learner, card_id), counts in per_card.items()}}


def stored(connection: psycopg.Connection) -> dict[str, set[tuple[object, ...]]]:
    columns = {"report_day": "learner, study_day, answers, reviews, passed, last_at, run",
               "report_learner": "learner, first_day, last_day, last_at",
               "report_card": "learner, card_id, answers, reviews, lapses"}
    found = {table: set(connection.execute(f"SELECT {names} FROM {table}").fetchall())
             for table, names in columns.items()}
    found["report_card"] = {row for row in found["report_card"] if row[2]}  # every answer to it undone: zeros
    return found


def assert_summaries_are_the_logs(teacher, server: PostgresStore | None = None, day: date = DAY) -> None:
    """Every summary row is the log's recount, and the report read from them is the report read from the log:
    through the teacher's command (a reader) and through the class server as a teacher (two connections)."""
    with teacher.connect() as connection:
        assert stored(connection) == recounted(connection)
    with Store.open(teacher.url, read_only=True) as reader:
        assert reader.class_report(day) == reader.class_report(day, from_log=True)
    if server is not None:
        assert server.class_report(day) == server.class_report(day, from_log=True)


def test_the_summaries_follow_answers_on_any_day_and_every_undo(teacher, server, cli, facts):
    """Answers on days in order and out of order (a day filled in between two others joins their runs), undone
    (a day emptied splits a run), re-drills and reviews: after each step the summaries are the log's."""
    rng = random.Random(7)
    people = [join(cli, server, name) for name in ("Ayşe", "Bora", "Cem")]
    logged: dict[str, list[int]] = defaultdict(list)
    days = [DAY - timedelta(days=offset) for offset in (9, 8, 6, 5, 4, 2, 1, 0)]
    for step in range(60):
        member, store = rng.choice(people)
        if logged[member.learner] and rng.random() < 0.25:
            latest = logged[member.learner].pop()
            store.undo(latest)
        else:
            day = rng.choice(days)
            card = rng.choice(facts[:6])
            logged[member.learner].append(answer(store, card.id, rng.choice(GRADES), day, step))
        if step % 10 == 9:
            assert_summaries_are_the_logs(teacher, server)
    assert_summaries_are_the_logs(teacher, server)
    report = server.class_report(DAY)
    assert {row.learner for row in report.learners} == {"Ayşe", "Bora", "Cem"}
    assert sum(card.answers for card in report.cards) == sum(len(ids) for ids in logged.values())


def test_a_gap_filled_and_emptied_again_joins_and_splits_the_streak(teacher, server, cli, facts):
    _member, ayse = join(cli, server, "Ayşe")
    for offset in (4, 3, 1, 0):
        answer(ayse, facts[offset].id, 4, DAY - timedelta(days=offset))
    assert [row.streak for row in server.class_report(DAY).learners] == [2]
    filled = answer(ayse, facts[5].id, 4, DAY - timedelta(days=2))  # the missing day, answered late
    assert [row.streak for row in server.class_report(DAY).learners] == [5]
    assert_summaries_are_the_logs(teacher, server)
    ayse.undo(filled)
    assert [row.streak for row in server.class_report(DAY).learners] == [2]
    assert_summaries_are_the_logs(teacher, server)


def test_archive_rename_and_a_new_password_change_no_figure(teacher, server, cli, facts):
    """Archiving leaves the member out of the learners (their answers still count in the cards'), a rename and a
    new password change nothing of the log: the report from the summaries stays the report from the log."""
    _ayse, as_ayse = join(cli, server, "Ayşe")
    _bora, as_bora = join(cli, server, "Bora")
    for offset, card in enumerate(facts[:4]):
        answer(as_ayse, card.id, 1 + offset, DAY - timedelta(days=offset % 2))
        answer(as_bora, card.id, 5 - offset, DAY)
    before = server.class_report(DAY)
    assert cli("class", "reset-password", "Ayşe", "--password", "another-password").exit_code == 0
    assert cli("class", "rename", "Bora", "Bora Kaya").exit_code == 0
    assert_summaries_are_the_logs(teacher, server)
    renamed = server.class_report(DAY)
    assert [row.learner for row in renamed.learners] == ["Ayşe", "Bora Kaya"]
    assert renamed.cards == before.cards
    assert cli("class", "archive", "Ayşe").exit_code == 0
    archived = server.class_report(DAY)
    assert [row.learner for row in archived.learners] == ["Bora Kaya"]
    assert archived.cards == before.cards  # her answers still count for the cards
    assert_summaries_are_the_logs(teacher, server)


def test_answers_landing_at_once_are_each_counted_once(teacher, server, cli, facts):
    """Six learners, two windows each, answering at the same moment through the class server's pool: the
    summaries are the log's, and so is the report."""
    people = [join(cli, server, f"learner {n}") for n in range(6)]
    barrier = threading.Barrier(len(people) * 2)
    failures: list[BaseException] = []

    def window(store: PostgresStore, seed: int) -> None:
        rng = random.Random(seed)
        try:
            barrier.wait(timeout=60)
            for step in range(12):
                card = rng.choice(facts[:8])
                answer(store, card.id, rng.choice(GRADES), DAY - timedelta(days=rng.choice((0, 0, 1, 3))), step)
        except BaseException as exc:  # noqa: BLE001 - reported below, in the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=window, args=(store, seed))
               for seed, (_member, store) in enumerate(people * 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    with teacher.connect() as connection:
        assert connection.execute("SELECT count(*) FROM review").fetchone() == (len(threads) * 12,)
    assert_summaries_are_the_logs(teacher, server)


def copy_answer(connection: psycopg.Connection, answer_id: int, day: date, card_id: str, learner: str) -> None:
    """The answer ``answer_id`` again, as ``learner``'s answer to ``card_id`` on ``day``, written as a hand edit
    would (the log's triggers run at the end of the statement)."""
    columns = [name for (name,) in connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'review'"
        " AND column_name NOT IN ('id', 'request', 'study_day', 'card_id', 'learner') ORDER BY ordinal_position")]
    names = ", ".join(columns)
    connection.execute(f"INSERT INTO review ({names}, study_day, card_id, learner)"
                       f" SELECT {names}, %s, %s, %s FROM review WHERE id = %s", (day, card_id, learner, answer_id))


def while_the_other_is_open(teacher, first: Callable[[psycopg.Connection], object],
                            second: Callable[[psycopg.Connection], object]) -> None:
    """``first`` runs in a transaction left open while ``second`` runs and commits in another; then ``first``
    commits. ``second`` may wait for ``first`` (a lock), or not: this waits until it has finished or waits."""
    with teacher.connect(autocommit=False) as one, teacher.connect(autocommit=False) as two:
        first(one)
        other = two.execute("SELECT pg_backend_pid()").fetchone()
        failures: list[BaseException] = []

        def run_second() -> None:
            try:
                second(two)
                two.commit()
            except BaseException as exc:  # noqa: BLE001 - reported below, in the test's thread
                failures.append(exc)

        thread = threading.Thread(target=run_second)
        thread.start()
        with teacher.connect() as watcher:
            while thread.is_alive() and watcher.execute(
                    "SELECT wait_event_type IS DISTINCT FROM 'Lock' FROM pg_stat_activity WHERE pid = %s",
                    other).fetchone() != (False,):
                thread.join(0.01)
        one.commit()
        thread.join(30)
        assert not thread.is_alive() and not failures, failures


@pytest.mark.parametrize("earlier", [True, False], ids=["a learner with answers", "a learner's first answers"])
def test_one_learners_answers_in_two_open_transactions_make_one_streak(teacher, server, cli, facts, earlier):
    """Two transactions of one learner, each adding a day next to the other's (to another card), neither
    committed when the other renumbers its runs: the second waits for the first (the learner's summary row is
    the lock), so it counts the first's day, and the streak is the log's. Without the lock each counted a run
    of one."""
    _bora, as_bora = join(cli, server, "Bora")
    model = answer(as_bora, facts[0].id, 4, DAY - timedelta(days=5))
    ayse, as_ayse = join(cli, server, "Ayşe")
    if earlier:
        answer(as_ayse, facts[0].id, 4, DAY - timedelta(days=5))
    while_the_other_is_open(
        teacher, lambda one: copy_answer(one, model, DAY - timedelta(days=1), facts[1].id, as_ayse.learner),
        lambda two: copy_answer(two, model, DAY, facts[2].id, as_ayse.learner))
    assert_summaries_are_the_logs(teacher, server)
    with teacher.connect() as connection:
        assert connection.execute("SELECT run FROM report_day WHERE learner = %s AND study_day = %s",
                                  (as_ayse.learner, DAY)).fetchone() == (2,)


def test_an_undo_and_an_answer_in_two_open_transactions_split_the_streak(teacher, server, cli, facts):
    """One transaction empties a day (an undo) while another adds the day after it: the run of the day added is
    counted from the days the undo left."""
    _member, ayse = join(cli, server, "Ayşe")
    ids = [answer(ayse, facts[n].id, 4, DAY - timedelta(days=2 - n)) for n in range(2)]
    while_the_other_is_open(teacher, lambda one: one.execute("DELETE FROM review WHERE id = %s", (ids[1],)),
                            lambda two: copy_answer(two, ids[0], DAY, facts[2].id, ayse.learner))
    assert_summaries_are_the_logs(teacher, server)
    with teacher.connect() as connection:
        assert connection.execute("SELECT study_day, run FROM report_day ORDER BY study_day").fetchall() == [
            (DAY - timedelta(days=2), 1), (DAY, 1)]


def test_an_answer_after_the_reports_day_is_read_from_the_log(teacher, server, cli, facts):
    """A learner whose study day began before the teacher's (another rollover hour): the summaries count that
    answer, the report of the teacher's day must not, so it reads the log, and says the same as before it."""
    _member, ayse = join(cli, server, "Ayşe")
    answer(ayse, facts[0].id, 4, DAY - timedelta(days=1))
    answer(ayse, facts[1].id, 2, DAY)
    yesterday = server.class_report(DAY - timedelta(days=1))
    assert [(row.answered_week, row.streak) for row in yesterday.learners] == [(1, 1)]
    assert sum(card.answers for card in yesterday.cards) == 1
    assert_summaries_are_the_logs(teacher, server, DAY - timedelta(days=1))


def test_a_learner_reads_only_their_own_summary_rows_and_writes_none(teacher, server, cli, facts):
    ayse, as_ayse = join(cli, server, "Ayşe")
    _bora, as_bora = join(cli, server, "Bora")
    answer(as_ayse, facts[0].id, 5, DAY)
    answer(as_bora, facts[0].id, 1, DAY)
    for table in ("report_day", "report_learner", "report_card"):
        assert as_ayse.rows(f"SELECT DISTINCT learner FROM {table}") == [(ayse.learner,)], table
    seen = as_ayse.class_report(DAY)
    assert [row.learner for row in seen.learners] == ["Ayşe"]
    assert sum(card.answers for card in seen.cards) == 1  # hers, not Bora's
    with teacher.connect(f"{teacher.database}_server") as connection:
        connection.execute(f"SET ROLE {teacher.database}_learner")
        connection.execute("SELECT set_config('bertdrill.learner', %s, false)", (ayse.learner,))
        for statement in ("UPDATE report_day SET answers = 100", "DELETE FROM report_card",
                          "INSERT INTO report_learner VALUES ('x', '2025-01-01', '2025-01-01', now())"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                connection.execute(statement)


V15_OBJECTS = """
DROP TRIGGER report_answers_added ON review;
DROP TRIGGER report_answers_removed ON review;
DROP TRIGGER report_answers_changed ON review;
DROP TRIGGER report_log_truncated ON review;
DROP FUNCTION report_log_changed();
DROP FUNCTION report_log_emptied();
DROP FUNCTION report_renumber(TEXT[], DATE[]);
DROP TABLE report_day, report_learner, report_card
"""
"""What version 15 adds: dropped, a class is as version 14 left it (its log without summaries)."""


def migrate_to_15(teacher) -> None:
    """Version 15's migration, run by the teacher's role on a class without the summaries (:data:`V15_OBJECTS`
    dropped): what the teacher's next command runs on a class at version 14. (Its version number is not set back:
    the versions after 15 would have to be undone too.)"""
    with Store.open(teacher.url) as store:
        store._run(MIGRATIONS[15], write=True)


def test_a_class_at_version_14_is_migrated_and_its_summaries_filled_from_its_log(teacher, cli, facts):
    """A class as version 14 left it (the log, no summaries): version 15's migration fills the summaries from the
    log, and the class server (whose roles already exist) reads them at once; its answers are summed from then on."""
    with PostgresStore.serving(teacher.url_as(f"{teacher.database}_server")) as served:
        server = teaching(cli, served)
        people = [join(cli, server, name) for name in ("Ayşe", "Bora")]
        with teacher.connect() as connection:
            for statement in V15_OBJECTS.split(";"):
                connection.execute(statement)
        for offset in range(5):
            for _member, store in people:
                answer(store, facts[offset].id, GRADES[offset], DAY - timedelta(days=offset))  # logged, unsummed
        migrate_to_15(teacher)
        assert_summaries_are_the_logs(teacher, server)
        report = server.class_report(DAY)
        assert [(row.learner, row.streak) for row in report.learners] == [("Ayşe", 5), ("Bora", 5)]
        answer(server.acting_as(people[0][0]), facts[6].id, 4, DAY)  # the triggers keep them from now on
    assert_summaries_are_the_logs(teacher)


def test_a_day_that_is_no_day_neither_fails_the_migration_nor_a_hand_edit(teacher, cli, facts):
    """A hand edit's ``-infinity`` study day (damage the readers name: tests/test_read_back.py) is left out of the
    days' summaries: the migration that fills them, and the edit itself, would otherwise fail on its arithmetic."""
    with PostgresStore.serving(teacher.url_as(f"{teacher.database}_server")) as served:
        server = teaching(cli, served)
        _member, store = join(cli, server, "Ayşe")
        with teacher.connect() as connection:
            for statement in V15_OBJECTS.split(";"):
                connection.execute(statement)
        for offset in range(3):
            answer(store, facts[offset].id, GRADES[offset], DAY - timedelta(days=offset))
    with teacher.connect() as connection:
        connection.execute("UPDATE review SET study_day = '-infinity' WHERE id = (SELECT min(id) FROM review)")
    migrate_to_15(teacher)  # fills the summaries
    with teacher.connect() as connection:
        connection.execute("UPDATE review SET study_day = '-infinity' WHERE id = (SELECT max(id) FROM review)")
        finite = connection.execute("SELECT count(*) FROM review WHERE isfinite(study_day)").fetchone()
        summed = connection.execute("SELECT sum(answers), bool_and(isfinite(study_day)) FROM report_day").fetchone()
        carded = connection.execute("SELECT sum(answers) FROM report_card").fetchone()
        total = connection.execute("SELECT count(*) FROM review").fetchone()
    assert finite == (1,) and summed == (1, True) and carded == total == (3,)


def test_the_migration_builds_exactly_the_summaries_tables(teacher):
    """Version 15's DDL, written out in migrations.py, and the tables the report's queries are built from agree
    column by column (the learner's tables have the same check against their models: tests/test_store.py)."""
    from sqlalchemy import create_engine, inspect

    from bertdrill.adapters.store.classroom import REPORT_CARD, REPORT_DAY, REPORT_LEARNER

    engine = create_engine(teacher.url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        inspector = inspect(engine)
        for table in (REPORT_DAY, REPORT_LEARNER, REPORT_CARD):
            columns = {c["name"]: (c["nullable"], type(c["type"]).__name__) for c in inspector.get_columns(table.name)}
            assert columns == {c.name: (c.nullable, type(c.type).__name__.upper().replace("DATETIME", "TIMESTAMP"))
                               for c in table.columns}, table.name
            assert inspector.get_pk_constraint(table.name)["constrained_columns"] == [c.name for c in
                                                                                      table.primary_key]
    finally:
        engine.dispose()


def test_a_hand_edit_of_the_log_and_a_truncate_keep_the_summaries(teacher, server, cli, facts):
    """The teacher's role editing the log by hand (a grade, a day, a learner's answers moved to another day) and
    emptying it: the update trigger takes the old rows out and puts the new ones in, the truncate empties them."""
    _member, ayse = join(cli, server, "Ayşe")
    _member, bora = join(cli, server, "Bora")
    for offset in range(4):
        answer(ayse, facts[offset].id, GRADES[offset], DAY - timedelta(days=offset))
        answer(bora, facts[offset].id, GRADES[-offset], DAY - timedelta(days=2 * offset))
    with teacher.connect() as connection:
        connection.execute("UPDATE review SET grade = 5, kind = 'review', reps_before = 1 WHERE card_id = %s",
                           (facts[0].id,))
        connection.execute("UPDATE review SET study_day = study_day - 1, reviewed_at = reviewed_at - interval '1 day' "
                           "WHERE study_day = %s", (DAY - timedelta(days=2),))  # a gap opened, another one closed
        connection.execute("UPDATE review SET duration_ms = 1")  # every row, nothing the summaries count
    assert_summaries_are_the_logs(teacher, server)
    with teacher.connect() as connection:
        connection.execute("TRUNCATE review")
        assert stored(connection) == recounted(connection) == {"report_day": set(), "report_learner": set(),
                                                               "report_card": set()}
