"""A class on PostgreSQL: each learner's role reads and writes only its own rows; the teacher reads all."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import create_engine, text

from bertdrill import _pg_draft as pg
from bertdrill.store import _V1


def build_schema(postgres):
    """The schema as the PostgreSQL store creates it, with the class's security on top."""
    engine = create_engine(postgres.url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.begin() as connection:
        for statement in (pg.postgres_ddl(_V1) + pg.postgres_ddl(pg.V2_LEARNERS)).split(";"):
            if statement.strip():
                connection.execute(text(statement), {"learner": "nobody"} if ":learner" in statement else {})
        connection.exec_driver_sql("INSERT INTO card VALUES ('l/a', 'l', 'a', 'fact', 0, 'f', false, now(), now())")
        group = pg.class_init(connection)
    return engine, group


def test_a_learner_can_neither_read_nor_write_another_learners_rows(postgres):
    engine, group = build_schema(postgres)
    ayse, bora = postgres.role("ayse"), postgres.role("bora")
    with engine.begin() as connection:
        assert pg.add_learner(connection, ayse, "secret-1") is True
        assert pg.add_learner(connection, bora, "secret-2") is True
        assert pg.add_learner(connection, bora, "secret-2") is False  # already there: only joins the group
    insert_review = ("INSERT INTO review (card_id, reviewed_at, study_day, kind, grade, reps_before, ef100_before, "
                     "interval_before, lapses_before, reps_after, ef100_after, interval_after, lapses_after, learner) "
                     "VALUES ('l/a', now(), current_date, 'new', 4, 0, 250, 0, 0, 1, 250, 1, 0, %s)")
    for learner in (ayse, bora):
        with postgres.connect(learner) as own:
            own.execute("INSERT INTO schedule (card_id, learner) VALUES ('l/a', %s)", (learner,))
            own.execute(insert_review, (learner,))
    with postgres.connect(ayse) as connection:
        # reading: only her own rows, whatever the query asks for
        assert connection.execute("SELECT learner FROM schedule").fetchall() == [(ayse,)]
        assert connection.execute("SELECT learner FROM review").fetchall() == [(ayse,)]
        assert connection.execute("SELECT count(*) FROM review WHERE learner = %s", (bora,)).fetchone() == (0,)
        # changing: bora's rows are not there to update or delete
        assert connection.execute("UPDATE schedule SET ef100 = 130 WHERE learner = %s", (bora,)).rowcount == 0
        assert connection.execute("DELETE FROM review WHERE learner = %s", (bora,)).rowcount == 0
        # writing: a row in bora's name is refused, and so is moving her own row to him
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            connection.execute(insert_review, (bora,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            connection.execute("UPDATE schedule SET learner = %s", (bora,))
        # the class's lessons: read, never written
        assert connection.execute("SELECT id FROM card").fetchall() == [("l/a",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            connection.execute("UPDATE card SET removed = true")
    with postgres.connect() as teacher:  # the teacher's role owns the tables and reads the whole class
        assert sorted(teacher.execute("SELECT learner FROM review").fetchall()) == [(ayse,), (bora,)]
        assert teacher.execute("SELECT ef100 FROM schedule WHERE learner = %s", (bora,)).fetchone() == (250,)
    engine.dispose()
