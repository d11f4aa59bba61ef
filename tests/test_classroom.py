"""A class on PostgreSQL: each learner's role reads and writes only its own rows; the teacher reads all."""

from __future__ import annotations

from datetime import UTC, date, datetime

import psycopg
import pytest

from bertdrill import sm2
from bertdrill.loader import all_cards, load_lessons
from bertdrill.store import Store

DAY = date(2025, 3, 3)
MORNING = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def cards():
    return all_cards(load_lessons())


def answer(store, card_id, grade, day=DAY):
    return store.answer(card_id, grade=grade, kind="new", reviewed_at=MORNING, study_day=day,
                        reschedule=lambda s: sm2.review(s, grade, today=day), once_per_day=True)


@pytest.fixture
def classroom(postgres, cards):
    """A class with two learners who have each answered the first card; yields (postgres, ayse, bora)."""
    ayse, bora = postgres.role("ayse"), postgres.role("bora")
    with Store.open(postgres.url) as teacher:
        group = teacher.class_init(cards)
        assert group == f"{postgres.database}_learners"
        assert teacher.add_learner(ayse, "secret-1")[0] is True
        created, url = teacher.add_learner(bora, "secret-2")
        assert created is True and url == postgres.url_as(bora).replace(f"{bora}@", f"{bora}:secret-2@")
        assert teacher.add_learner(bora, "secret-2")[0] is False  # already there: only joins the group
    for learner, grade in ((ayse, 5), (bora, 2)):
        with Store.open(postgres.url_as(learner)) as own:
            assert own.learner == learner  # on PostgreSQL the learner is the role, by default
            own.sync(cards)
            answer(own, cards[0].id, grade)
    return postgres, ayse, bora


def test_a_learner_can_neither_read_nor_write_another_learners_rows(classroom, cards):
    postgres, ayse, bora = classroom
    card = cards[0].id
    insert_review = ("INSERT INTO review (card_id, reviewed_at, study_day, kind, grade, reps_before, ef100_before, "
                     "interval_before, lapses_before, reps_after, ef100_after, interval_after, lapses_after, learner) "
                     "VALUES (%s, now(), current_date, 'new', 4, 0, 250, 0, 0, 1, 250, 1, 0, %s)")
    with postgres.connect(ayse) as connection:
        # reading: only her own rows, whatever the query asks for
        assert connection.execute("SELECT DISTINCT learner FROM schedule").fetchall() == [(ayse,)]
        assert connection.execute("SELECT learner, grade FROM review").fetchall() == [(ayse, 5)]
        assert connection.execute("SELECT count(*) FROM review WHERE learner = %s", (bora,)).fetchone() == (0,)
        # changing: bora's rows are not there to update or delete
        assert connection.execute("UPDATE schedule SET ef100 = 130 WHERE learner = %s", (bora,)).rowcount == 0
        assert connection.execute("DELETE FROM review WHERE learner = %s", (bora,)).rowcount == 0
        # writing: a row in bora's name is refused, and so is handing her own row to him
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            connection.execute(insert_review, (card, bora))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            connection.execute("UPDATE schedule SET learner = %s WHERE card_id = %s", (bora, card))
        # the class's lessons: read, never written
        assert connection.execute("SELECT count(*) FROM card").fetchone() == (len(cards),)
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            connection.execute("UPDATE card SET removed = true")
    with postgres.connect() as teacher:  # the teacher's role owns the tables and reads the whole class
        assert sorted(teacher.execute("SELECT learner, grade FROM review").fetchall()) == sorted([(ayse, 5), (bora, 2)])
        assert teacher.execute("SELECT ef100 FROM schedule WHERE learner = %s AND card_id = %s",
                               (bora, card)).fetchone() == (218,)


def test_a_learner_cannot_answer_as_another_through_bertdrill(classroom, cards):
    postgres, ayse, bora = classroom
    with Store.open(postgres.url_as(ayse), learner=bora) as pretending:
        assert pretending.answers() == []  # bora's log is invisible to ayse's role
        with pytest.raises(Exception, match=f"no card '{cards[0].id}'"):
            answer(pretending, cards[0].id, 5)
    with Store.open(postgres.url, learner=bora) as teacher_as_bora:  # the teacher may look at any learner
        assert [a.grade for a in teacher_as_bora.answers()] == [2]
