"""The schema's versions: the DDL of each, and bringing a database up to the newest.

One history for both backends. Each version is a list of steps: tables and columns as SQLAlchemy
constructs (:class:`Table`, :class:`Column`), compiled for the database at hand, so each dialect's words
(``DATETIME`` or ``TIMESTAMP``, ``0`` or ``false``, a rowid or an identity column) come from SQLAlchemy,
not from rewriting one dialect's text into another's; and statements both dialects spell alike (indexes,
renames, copies) as SQL text. SQLite keeps the version in ``PRAGMA user_version``, PostgreSQL in the
``meta`` table (which repeats it, with dates, on SQLite too); :data:`MIGRATIONS` brings older databases up
to date and a newer one is refused, before anything is written to it, rather than misread.

The tables of each version are written out here rather than taken from the models in :mod:`.schema`, so
version 1 stays version 1 when the models move on; tests check that the newest version matches the models.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import (
    DOUBLE_PRECISION,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Connection,
    Date,
    DateTime,
    ForeignKey,
    Identity,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    false,
    text,
)
from sqlalchemy.schema import CreateColumn, CreateTable

from bertdrill.adapters.store.database import Backend, Database
from bertdrill.core.errors import StoreError

SCHEMA_VERSION = 17

Step = Callable[[Connection], None]
"""One statement of a migration, run on the migrating connection (its ``info["database"]`` is the store)."""


def _create(table: Table) -> Step:
    """CREATE TABLE, compiled for the connection's dialect."""

    def create(connection: Connection) -> None:
        connection.execute(CreateTable(table))

    return create


def _add(table: Table, column: Column[Any]) -> Step:
    """ALTER TABLE ... ADD COLUMN, the column's words compiled for the connection's dialect."""
    table.append_column(column)  # a column compiles as part of its table (its name, its constraints)

    def add(connection: Connection) -> None:
        words = CreateColumn(column).compile(dialect=connection.dialect)
        connection.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {words}")

    return add


def _sql(statements: str) -> list[Step]:
    """Statements both dialects spell alike, separated by ``;``; ``:learner`` is bound to the store's learner."""
    return [_statement(statement) for statement in statements.split(";") if statement.strip()]


def _statement(statement: str) -> Step:
    """One statement (a trigger's, whose body holds several, included); ``:learner`` is bound to the store's learner."""

    def step(connection: Connection) -> None:
        database: Database = connection.info["database"]
        if ":learner" in statement:
            connection.execute(text(statement), {"learner": database.learner})
        else:
            connection.exec_driver_sql(statement)

    return step


def _per_backend(steps: Mapping[Backend, Sequence[Step]]) -> list[Step]:
    """Steps where the two backends must do different things (not merely say the same thing differently)."""

    def step(connection: Connection) -> None:
        database: Database = connection.info["database"]
        for each in steps[database.backend]:
            each(connection)

    return [step]


# The columns several versions declare alike.
def _text(name: str, *constraints: CheckConstraint, **options: Any) -> Column[Any]:
    return Column(name, Text, *constraints, nullable=False, **options)


def _integer(name: str, default: int | None = None) -> Column[Any]:
    return Column(name, Integer, nullable=False, server_default=None if default is None else text(str(default)))


def _flag(name: str) -> Column[Any]:
    return Column(name, Boolean, nullable=False, server_default=false())


def _moment(name: str) -> Column[Any]:
    return Column(name, DateTime, nullable=False)  # naive UTC on both (PostgreSQL's sessions run in UTC)


def _float(name: str) -> Column[Any]:
    # DOUBLE PRECISION keeps every bit of FSRS's floats on both backends (SQLite reads it as REAL)
    return Column(name, DOUBLE_PRECISION)


def _answer_id() -> Column[Any]:
    """The log's id: SQLite's rowid (INTEGER PRIMARY KEY), PostgreSQL's 64-bit identity."""
    return Column("id", BigInteger().with_variant(Integer(), "sqlite"), Identity(), primary_key=True)


def _grade() -> Column[Any]:
    return Column("grade", Integer, CheckConstraint("grade BETWEEN 0 AND 5"), nullable=False)


def _schedule_columns(*, card_is_key: bool) -> list[Column[Any]]:
    """The schedule's columns of version 1 (its key: the card then; the learner and the card from version 2)."""
    return [Column("card_id", Text, ForeignKey("card.id"), nullable=False, primary_key=card_is_key),
            _integer("repetitions", 0),
            _integer("ef100", 250), _integer("interval", 0), Column("due", Date), _integer("lapses", 0),
            _flag("suspended"), Column("buried_until", Date), _flag("leech")]


def _review_columns(kind: Column[Any]) -> list[Column[Any]]:
    """The log's columns of version 1, its kind as given."""
    return [_answer_id(), Column("card_id", Text, ForeignKey("card.id"), nullable=False), _moment("reviewed_at"),
            Column("study_day", Date, nullable=False), kind, _grade(), Column("typed", Text),
            _integer("duration_ms", 0), _integer("reps_before"), _integer("ef100_before"),
            _integer("interval_before"), Column("due_before", Date), _integer("lapses_before"),
            _integer("reps_after"), _integer("ef100_after"), _integer("interval_after"), Column("due_after", Date),
            _integer("lapses_after")]


def _card_key(tables: MetaData) -> None:
    """The card table as far as a foreign key needs it (its key), in a version's own metadata."""
    Table("card", tables, _text("id", primary_key=True))


def _version_1() -> list[Step]:
    tables = MetaData()
    card = Table("card", tables, _text("id", primary_key=True), _text("lesson_id"), _text("item_id"), _text("kind"),
                 _integer("position"), _text("fingerprint"), _flag("removed"), _moment("first_seen"),
                 _moment("updated"))
    kind = _text("kind", CheckConstraint("kind IN ('review', 'new', 'redrill', 'practice')"))
    return [
        _create(Table("meta", tables, _text("key", primary_key=True), _text("value"))),
        _create(Table("lesson", tables, _text("id", primary_key=True), _text("digest"), _integer("cards"),
                      _moment("synced_at"))),
        _create(card),
        *_sql("CREATE INDEX ix_card_lesson ON card (lesson_id, position)"),
        _create(Table("schedule", tables, *_schedule_columns(card_is_key=True))),
        *_sql("CREATE INDEX ix_schedule_due ON schedule (due)"),
        _create(Table("review", tables, *_review_columns(kind))),
        *_sql("CREATE INDEX ix_review_card ON review (card_id, id); CREATE INDEX ix_review_day ON review (study_day)"),
    ]


def _version_2() -> list[Step]:
    """Every schedule and answer belongs to a learner. SQLite cannot change a primary key in place, so the
    schedule table is rebuilt; the rows a file already has go to the learner who opens it first
    (``:learner``): a file had one learner until then. (A class's PostgreSQL database starts empty.)"""
    tables = MetaData()
    _card_key(tables)
    schedule = Table("schedule_v2", tables, *_schedule_columns(card_is_key=False), _text("learner"),
                     PrimaryKeyConstraint("learner", "card_id"))
    return [
        _create(schedule),
        *_sql("""INSERT INTO schedule_v2 SELECT schedule.*, :learner FROM schedule;
                 DROP TABLE schedule;
                 ALTER TABLE schedule_v2 RENAME TO schedule;
                 CREATE INDEX ix_schedule_due ON schedule (learner, due)"""),
        _add(Table("review", tables), _text("learner", server_default="")),
        *_sql("""UPDATE review SET learner = :learner;
                 DROP INDEX ix_review_card;
                 CREATE INDEX ix_review_card ON review (learner, card_id, id);
                 DROP INDEX ix_review_day;
                 CREATE INDEX ix_review_day ON review (learner, study_day)"""),
    ]


def _version_3() -> list[Step]:
    """FSRS beside SM-2: a schedule and each logged answer keep FSRS's memory state (stability and difficulty,
    NULL until FSRS schedules the card), and each learner's choice of scheduler has a row (none: SM-2)."""
    tables = MetaData()
    schedule, review = Table("schedule", tables), Table("review", tables)
    return [
        _add(schedule, _float("stability")), _add(schedule, _float("difficulty")),
        *(_add(review, _float(f"{field}_{when}")) for when in ("before", "after") for field in ("stability", "difficulty")),
        _create(Table("scheduler", tables, _text("learner", primary_key=True),
                      _text("name", CheckConstraint("name IN ('sm2', 'fsrs')")), _float("retention"),
                      _moment("switched_at"))),
    ]


def _version_4() -> list[Step]:
    """FSRS fitted to each learner's own log: every fitted set is a row (numbered per learner, never
    overwritten, so the previous set stays), and the scheduler row names the set FSRS runs with (NULL: defaults)."""
    tables = MetaData()
    return [
        _create(Table("fsrs_parameters", tables, _text("learner", primary_key=True),
                      Column("number", Integer, nullable=False, primary_key=True), _text("parameters"),
                      _integer("reviews"), _moment("fitted_at"))),
        _add(Table("scheduler", tables), Column("parameters", Integer)),
    ]


def _version_5() -> list[Step]:
    """An exam date FSRS plans for (bertdrill review --exam), with the recall wanted on the day."""
    scheduler = Table("scheduler", MetaData())
    return [_add(scheduler, Column("exam", Date)), _add(scheduler, _float("exam_target"))]


def _version_6() -> list[Step]:
    """A card asked with fresh numbers (a variant of its parameters) logs what was asked with the answer: the
    seed that drew the variant and the variant's values ("seed:key"), NULL for a card asked with its own set."""
    return [_add(Table("review", MetaData()), Column("variant", Text))]


def _version_7() -> list[Step]:
    """The scheduler's name and the answer's kind are no longer listed in CHECK constraints, so a third
    scheduler or a new kind of answer is one module and one registry entry, with no table rebuilt (the code's
    enums, core.scheduling.registry and AnswerKind, say what is valid). SQLite cannot drop a constraint, so it
    rebuilds the two tables as its ALTER TABLE page says (new table, copy, drop, rename, indexes), in the one
    migration transaction; PostgreSQL drops the constraints by the names it gave them, keeping grants and
    row-level security. The columns keep their order, so ``SELECT *`` copies them."""
    tables = MetaData()
    _card_key(tables)
    review = Table("review_v7", tables, *_review_columns(_text("kind")), _text("learner", server_default=""),
                   *(_float(f"{field}_{when}") for when in ("before", "after") for field in ("stability", "difficulty")),
                   Column("variant", Text))
    scheduler = Table("scheduler_v7", tables, _text("learner", primary_key=True), _text("name"), _float("retention"),
                      _moment("switched_at"), Column("parameters", Integer), Column("exam", Date),
                      _float("exam_target"))
    sqlite = [
        _create(review),
        *_sql("""INSERT INTO review_v7 SELECT * FROM review;
                 DROP TABLE review;
                 ALTER TABLE review_v7 RENAME TO review;
                 CREATE INDEX ix_review_card ON review (learner, card_id, id);
                 CREATE INDEX ix_review_day ON review (learner, study_day)"""),
        _create(scheduler),
        *_sql("""INSERT INTO scheduler_v7 SELECT * FROM scheduler;
                 DROP TABLE scheduler;
                 ALTER TABLE scheduler_v7 RENAME TO scheduler"""),
    ]
    postgresql = _sql("""ALTER TABLE review DROP CONSTRAINT review_kind_check;
                         ALTER TABLE scheduler DROP CONSTRAINT scheduler_name_check""")
    return _per_backend({Backend.sqlite: sqlite, Backend.postgresql: postgresql})


# Schema version 8, PostgreSQL only: the class server's tables as members.py's models say, written out here
# (version 8 stays version 8; and opening a learner's file loads none of the class server's code).
DDL_V8 = """
CREATE TABLE classroom (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL,
    address TEXT,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE member (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    class_id BIGINT NOT NULL REFERENCES classroom (id),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    name_key TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('learner', 'teacher')),
    learner TEXT NOT NULL UNIQUE,
    created_at TIMESTAMP NOT NULL,
    archived_at TIMESTAMP
);
CREATE UNIQUE INDEX ix_member_current_name ON member (class_id, name_key) WHERE archived_at IS NULL;
CREATE TABLE member_password (
    member_id BIGINT NOT NULL PRIMARY KEY REFERENCES member (id),
    hash TEXT NOT NULL,
    changed_at TIMESTAMP NOT NULL
);
CREATE TABLE member_login (
    token_hash TEXT NOT NULL PRIMARY KEY,
    member_id BIGINT NOT NULL REFERENCES member (id),
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX ix_member_login_member_id ON member_login (member_id);
CREATE TABLE published_lesson (
    lesson_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    path TEXT NOT NULL,
    source TEXT NOT NULL,
    digest TEXT NOT NULL,
    published_at TIMESTAMP NOT NULL,
    PRIMARY KEY (lesson_id, version)
)
"""


def _version_8() -> list[Step]:
    """A class's members, their passwords and logins, and the lessons as published (.members): PostgreSQL only,
    where a class lives; an SQLite file has one learner, and only its version number moves."""
    return _per_backend({Backend.sqlite: [], Backend.postgresql: _sql(DDL_V8)})


def _version_9() -> list[Step]:
    """What a learner does to a card outside a review (bertdrill cards suspend, unsuspend, forget, reset,
    reschedule): each action a row, with the schedule before and after it, so it can be undone and shown."""
    tables = MetaData()
    _card_key(tables)
    states = [column for when in ("before", "after") for column in (
        _integer(f"reps_{when}"), _integer(f"ef100_{when}"), _integer(f"interval_{when}"), Column(f"due_{when}", Date),
        _integer(f"lapses_{when}"), _float(f"stability_{when}"), _float(f"difficulty_{when}"),
        Column(f"suspended_{when}", Boolean, nullable=False))]
    action = Table("card_action", tables, _answer_id(), _text("learner"),
                   Column("card_id", Text, ForeignKey("card.id"), nullable=False), _moment("at"),
                   Column("study_day", Date, nullable=False), _text("action"), *states)
    return [_create(action), *_sql("CREATE INDEX ix_card_action_card ON card_action (learner, card_id, id)")]


def _version_10() -> list[Step]:
    """How the learner's intervals are spread (fuzz and the load balancer, ``bertdrill scheduler --spread``; NULL:
    the default, both on as in Anki), and an exam date per lesson (``bertdrill review --exam DAY --lesson L``): a
    learner's row per lesson, beside the exam of the scheduler row (which covers every lesson)."""
    tables = MetaData()
    exams = Table("lesson_exam", tables, _text("learner", primary_key=True), _text("lesson_id", primary_key=True),
                  Column("exam", Date, nullable=False), Column("target", DOUBLE_PRECISION, nullable=False))
    return [_add(Table("scheduler", tables), Column("spread", Text)), _create(exams)]


def _version_11() -> list[Step]:
    """An answer sent over the network (the terminal through the class server) carries an id its client made, so
    an answer sent again after a dropped connection is logged once: a unique index per learner (NULL, an answer
    made here, is never a duplicate: both backends let NULLs repeat in a unique index)."""
    return [_add(Table("review", MetaData()), Column("request", Text)),
            *_sql("CREATE UNIQUE INDEX ix_review_request ON review (learner, request)")]


def _version_12() -> list[Step]:
    """Each table's index of its damaged rows (:mod:`.damage`): a value only SQL reads (an average, a count of
    due cards) is checked by a lookup instead of a scan. The condition is the damage rules' at this version; a
    later version that changes a table's columns or a rule makes the index again (:func:`.damage.create_indexes`
    after dropping it), and until then a database with the older index is still checked, by a scan."""
    from bertdrill.adapters.store import damage

    return [damage.create_indexes]


# Schema version 13, SQLite only: the log's answers counted by learner, study day, lesson, kind and maturity, kept
# by triggers on every write to the log, whoever writes it. MATURE_DAYS (21) and PASSING (3) as at this version:
# a version that changes either writes the table again.
def _tallied(row: str) -> str:
    """The tally's key of the log's row ``NEW`` or ``OLD`` (its card's lesson; '' for a card no longer there)."""
    return (f"{row}.learner, {row}.study_day, coalesce((SELECT lesson_id FROM card WHERE id = {row}.card_id), ''), "
            f"{row}.kind, {row}.interval_before >= 21")


def _count_in(row: str) -> str:
    return (f"INSERT INTO answer_tally (learner, study_day, lesson_id, kind, mature, answers, passed) "
            f"VALUES ({_tallied(row)}, 1, {row}.grade >= 3) "
            f"ON CONFLICT (learner, study_day, lesson_id, kind, mature) "
            f"DO UPDATE SET answers = answers + 1, passed = passed + excluded.passed;")


def _count_out(row: str) -> str:
    key = f"(learner, study_day, lesson_id, kind, mature) = ({_tallied(row)})"
    return (f"UPDATE answer_tally SET answers = answers - 1, passed = passed - ({row}.grade >= 3) WHERE {key}; "
            f"DELETE FROM answer_tally WHERE {key} AND answers = 0;")


def _version_13() -> list[Step]:
    """What ``stats`` reads of every answer (the retention over the whole log, the answers per day and in all)
    as a running count, so it reads a row per day and lesson instead of a million answers. SQLite only, where a
    learner keeps years of answers in one file; the triggers keep the count exact on every insert, delete and
    update of the log, a hand edit's included. A class's PostgreSQL counts from its log, as before."""
    tables = MetaData()
    tally = Table("answer_tally", tables, _text("learner", primary_key=True), Column("study_day", Date, primary_key=True),
                  _text("lesson_id", primary_key=True), _text("kind", primary_key=True),
                  Column("mature", Boolean, primary_key=True), _integer("answers"), _integer("passed"))
    counted = "UPDATE OF learner, card_id, study_day, kind, grade, interval_before"
    statements = [
        "INSERT INTO answer_tally (learner, study_day, lesson_id, kind, mature, answers, passed) "
        "SELECT r.learner, r.study_day, coalesce(c.lesson_id, ''), r.kind, r.interval_before >= 21, count(*), "
        "sum(r.grade >= 3) FROM review r LEFT JOIN card c ON c.id = r.card_id GROUP BY 1, 2, 3, 4, 5",
        f"CREATE TRIGGER answer_tally_insert AFTER INSERT ON review BEGIN {_count_in('NEW')} END",
        f"CREATE TRIGGER answer_tally_delete AFTER DELETE ON review BEGIN {_count_out('OLD')} END",
        f"CREATE TRIGGER answer_tally_update AFTER {counted} ON review BEGIN {_count_out('OLD')} {_count_in('NEW')} END",
    ]
    return _per_backend({Backend.sqlite: [_create(tally), *map(_statement, statements)], Backend.postgresql: []})


def _version_14() -> list[Step]:
    """The index of each card's log covers what a replay reads of it (study day, kind, grade): switching scheduler
    walks a million answers through the index alone, in card order, instead of looking up each answer's row (SQLite
    alone: 1.65 -> 0.75 s of CPU for 1M answers). The same index, wider: every query that used it still does."""
    return _sql("""DROP INDEX ix_review_card;
                   CREATE INDEX ix_review_card ON review (learner, card_id, id, study_day, kind, grade)""")


# Schema version 15, PostgreSQL only: the class report's summaries of the log, kept by triggers; written out here,
# as version 8's tables are, so version 15 stays version 15. Each statement is one string: the functions' bodies
# hold semicolons of their own.
V15_TABLES = """
CREATE TABLE report_day (
    learner TEXT NOT NULL,
    study_day DATE NOT NULL,
    answers INTEGER NOT NULL,
    reviews INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    last_at TIMESTAMP NOT NULL,
    run INTEGER NOT NULL,
    PRIMARY KEY (learner, study_day)
);
CREATE INDEX ix_report_day_day ON report_day (study_day);
CREATE TABLE report_learner (
    learner TEXT NOT NULL PRIMARY KEY,
    first_day DATE NOT NULL,
    last_day DATE NOT NULL,
    last_at TIMESTAMP NOT NULL
);
CREATE TABLE report_card (
    learner TEXT NOT NULL,
    card_id TEXT NOT NULL,
    answers INTEGER NOT NULL,
    reviews INTEGER NOT NULL,
    lapses INTEGER NOT NULL,
    PRIMARY KEY (learner, card_id)
)
"""
"""``report_day``: a learner's answers of one study day (every kind), due reviews, of which passed, the latest
answer's time, and ``run``: the study days in a row with an answer that end on this day (the streak). A day
without answers has no row. ``report_learner``: a learner's first and last study day and latest answer.
``report_card``: a learner's answers to one card, due reviews of it learned, of which lapsed."""

V15_RENUMBER = """
CREATE FUNCTION report_renumber(learners TEXT[], since DATE[]) RETURNS void LANGUAGE sql AS $$
    WITH touched AS (SELECT * FROM unnest(learners, since) AS t (learner, since)),
    days AS (
        SELECT d.learner, d.study_day, d.run, t.since,
               d.study_day - CAST(row_number() OVER (PARTITION BY d.learner ORDER BY d.study_day) AS INTEGER) AS island
        FROM report_day d JOIN touched t ON d.learner = t.learner AND d.study_day >= t.since - 1),
    runs AS (
        SELECT learner, study_day, since,
               CASE WHEN first_value(study_day) OVER island < since
                    THEN first_value(run) OVER island + (study_day - first_value(study_day) OVER island)
                    ELSE study_day - first_value(study_day) OVER island + 1 END AS run
        FROM days WINDOW island AS (PARTITION BY learner, island ORDER BY study_day))
    UPDATE report_day d SET run = runs.run FROM runs
    WHERE d.learner = runs.learner AND d.study_day = runs.study_day AND runs.study_day >= runs.since
      AND d.run <> runs.run
$$
"""
"""The runs of each learner's days from ``since`` on, after days were added or emptied there: days in a row share
"day - rank" (an island); an island that starts before ``since`` goes on from the run of its first day, which
nothing changed; one that starts on or after it counts from 1."""

V15_TRIGGER = """
CREATE FUNCTION report_log_changed() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    changed RECORD;
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE report_card t SET answers = t.answers - g.answers, reviews = t.reviews - g.reviews,
                                 lapses = t.lapses - g.lapses
        FROM (SELECT learner, card_id, count(*) AS answers,
                     count(*) FILTER (WHERE kind = 'review' AND reps_before > 0) AS reviews,
                     count(*) FILTER (WHERE kind = 'review' AND reps_before > 0 AND grade < 3) AS lapses
              FROM removed GROUP BY learner, card_id) g
        WHERE t.learner = g.learner AND t.card_id = g.card_id;
        UPDATE report_day t SET answers = t.answers - g.answers, reviews = t.reviews - g.reviews,
                                passed = t.passed - g.passed,
                                last_at = CASE WHEN g.last_at < t.last_at THEN t.last_at ELSE coalesce(
                                    (SELECT max(r.reviewed_at) FROM review r
                                     WHERE r.learner = t.learner AND r.study_day = t.study_day), t.last_at) END
        FROM (SELECT learner, study_day, count(*) AS answers, count(*) FILTER (WHERE kind = 'review') AS reviews,
                     count(*) FILTER (WHERE kind = 'review' AND grade >= 3) AS passed, max(reviewed_at) AS last_at
              FROM removed WHERE isfinite(study_day) GROUP BY learner, study_day) g
        WHERE t.learner = g.learner AND t.study_day = g.study_day;
        WITH emptied AS (DELETE FROM report_day t WHERE t.answers <= 0
                             AND (t.learner, t.study_day) IN (SELECT learner, study_day FROM removed)
                         RETURNING t.learner, t.study_day),
             firsts AS (SELECT learner, min(study_day) + 1 AS since FROM emptied GROUP BY learner)
        SELECT array_agg(learner) AS learners, array_agg(since) AS since INTO changed FROM firsts;
        IF changed.learners IS NOT NULL THEN
            PERFORM report_renumber(changed.learners, changed.since);
        END IF;
        DELETE FROM report_learner t WHERE t.learner IN (SELECT learner FROM removed)
            AND NOT EXISTS (SELECT 1 FROM report_day d WHERE d.learner = t.learner);
        UPDATE report_learner t SET first_day = g.first_day, last_day = g.last_day, last_at = g.last_at
        FROM (SELECT d.learner, min(d.study_day) AS first_day, max(d.study_day) AS last_day, max(d.last_at) AS last_at
              FROM report_day d WHERE d.learner IN (SELECT learner FROM removed) GROUP BY d.learner) g
        WHERE t.learner = g.learner;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO report_card AS t (learner, card_id, answers, reviews, lapses)
        SELECT learner, card_id, count(*), count(*) FILTER (WHERE kind = 'review' AND reps_before > 0),
               count(*) FILTER (WHERE kind = 'review' AND reps_before > 0 AND grade < 3)
        FROM added GROUP BY learner, card_id ORDER BY learner, card_id
        ON CONFLICT (learner, card_id) DO UPDATE SET answers = t.answers + excluded.answers,
            reviews = t.reviews + excluded.reviews, lapses = t.lapses + excluded.lapses;
        WITH counted AS (
                 INSERT INTO report_day AS t (learner, study_day, answers, reviews, passed, last_at, run)
                 SELECT learner, study_day, count(*), count(*) FILTER (WHERE kind = 'review'),
                        count(*) FILTER (WHERE kind = 'review' AND grade >= 3), max(reviewed_at), 0
                 FROM added WHERE isfinite(study_day) GROUP BY learner, study_day ORDER BY learner, study_day
                 ON CONFLICT (learner, study_day) DO UPDATE SET answers = t.answers + excluded.answers,
                     reviews = t.reviews + excluded.reviews, passed = t.passed + excluded.passed,
                     last_at = greatest(t.last_at, excluded.last_at)
                 RETURNING t.learner, t.study_day, t.run),
             firsts AS (SELECT learner, min(study_day) AS since FROM counted WHERE run = 0 GROUP BY learner)
        SELECT array_agg(learner) AS learners, array_agg(since) AS since INTO changed FROM firsts;
        IF changed.learners IS NOT NULL THEN
            PERFORM report_renumber(changed.learners, changed.since);
        END IF;
        INSERT INTO report_learner AS t (learner, first_day, last_day, last_at)
        SELECT learner, min(study_day), max(study_day), max(reviewed_at) FROM added WHERE isfinite(study_day)
        GROUP BY learner ORDER BY learner
        ON CONFLICT (learner) DO UPDATE SET first_day = least(t.first_day, excluded.first_day),
            last_day = greatest(t.last_day, excluded.last_day), last_at = greatest(t.last_at, excluded.last_at);
    END IF;
    RETURN NULL;
END
$$
"""
"""The summaries of the answers a statement added (``added``), removed (``removed``), or both (an update), in its
transaction: counts added or taken away (the days' summaries leave out a day that is no day, the ``-infinity``
only a hand edit writes: its arithmetic would fail the edit, and the damage check names the row to every reader); a day's latest answer and a learner's first and last day read again
from what is left; the runs renumbered from a day that appeared or emptied. SECURITY DEFINER: it writes as the
owner of the tables (the teacher's role), so whoever may write the log keeps the summaries, and nobody writes
them directly; its search path is fixed (:func:`_fix_search_path`). A new day of an answer gets run 0 until it
is renumbered, which is how the INSERT tells a new day from one it added to. Rows are upserted in key order, so
two transactions of one learner never wait for each other in opposite orders."""

V15_EMPTIED = """
CREATE FUNCTION report_log_emptied() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    DELETE FROM report_day;
    DELETE FROM report_learner;
    DELETE FROM report_card;
    RETURN NULL;
END
$$
"""
"""A log truncated leaves nothing to summarise."""

V15_TRIGGERS = """
CREATE TRIGGER report_answers_added AFTER INSERT ON review REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION report_log_changed();
CREATE TRIGGER report_answers_removed AFTER DELETE ON review REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION report_log_changed();
CREATE TRIGGER report_answers_changed AFTER UPDATE ON review REFERENCING OLD TABLE AS removed NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION report_log_changed();
CREATE TRIGGER report_log_truncated AFTER TRUNCATE ON review FOR EACH STATEMENT EXECUTE FUNCTION report_log_emptied()
"""

V15_FILL = """
INSERT INTO report_card (learner, card_id, answers, reviews, lapses)
SELECT learner, card_id, count(*), count(*) FILTER (WHERE kind = 'review' AND reps_before > 0),
       count(*) FILTER (WHERE kind = 'review' AND reps_before > 0 AND grade < 3)
FROM review GROUP BY learner, card_id;
INSERT INTO report_day (learner, study_day, answers, reviews, passed, last_at, run)
SELECT learner, study_day, answers, reviews, passed, last_at,
       study_day - first_value(study_day) OVER (PARTITION BY learner, island ORDER BY study_day) + 1
FROM (SELECT *, study_day - CAST(row_number() OVER (PARTITION BY learner ORDER BY study_day) AS INTEGER) AS island
      FROM (SELECT learner, study_day, count(*) AS answers, count(*) FILTER (WHERE kind = 'review') AS reviews,
                   count(*) FILTER (WHERE kind = 'review' AND grade >= 3) AS passed, max(reviewed_at) AS last_at
            FROM review WHERE isfinite(study_day) GROUP BY learner, study_day) days) islands;
INSERT INTO report_learner (learner, first_day, last_day, last_at)
SELECT learner, min(study_day), max(study_day), max(last_at) FROM report_day GROUP BY learner
"""
"""The summaries of the log as the migration finds it (1M answers: about 3 s)."""


def _fix_search_path(connection: Connection) -> None:
    """The definer functions look their tables up in the schema they were made in, and nowhere else first (a
    SECURITY DEFINER function on a search path a caller controls could be handed other tables)."""
    schema = connection.exec_driver_sql("SELECT quote_ident(current_schema())").scalar_one()
    for function in ("report_log_changed()", "report_log_emptied()", "report_renumber(TEXT[], DATE[])"):
        connection.exec_driver_sql(f"ALTER FUNCTION {function} SET search_path = {schema}, pg_temp")


def _version_15() -> list[Step]:
    """The class report's summaries (:mod:`.classroom`): per learner and day, per learner, per learner and card,
    kept up to date by triggers on the log in the transaction of every insert, delete or update of an answer
    (whoever writes it: an answer, an undo, a learner's own role in a class from before the server), and filled
    from the log once here, under a lock that holds every writer of the log until the migration commits. Then
    the report reads thousands of rows instead of every answer. PostgreSQL only: an SQLite file has one learner,
    and only its version number moves."""
    from bertdrill.adapters.store import postgresql

    postgresql_steps = [*_sql("LOCK TABLE review IN SHARE ROW EXCLUSIVE MODE"), *_sql(V15_TABLES), _statement(V15_RENUMBER),
                        _statement(V15_TRIGGER), _statement(V15_EMPTIED), *_sql(V15_TRIGGERS),
                        *_sql(V15_FILL), _fix_search_path, postgresql.secure_summaries]
    return _per_backend({Backend.sqlite: [], Backend.postgresql: postgresql_steps})


def _version_16() -> list[Step]:
    """An index of the cards no review shows (removed ones, practice ones: usually none), so ``stats`` counts the
    schedules of the other cards without joining each of them to its card: it reads the few hidden ones first."""
    return _per_backend({
        Backend.sqlite: _sql("CREATE INDEX ix_card_hidden ON card (id) WHERE removed IS 1 OR kind IN ('practice')"),
        Backend.postgresql: _sql("CREATE INDEX ix_card_hidden ON card (id) WHERE removed IS true OR kind IN ('practice')"),
    })


V17_LOCK = """BEGIN
    -- The learner's summary row is the lock of their summaries: made or locked first, it holds another
    -- transaction of the same learner here until this one commits, so that one's statements then see this one's
    -- days (READ COMMITTED: each statement reads what was committed when it began). Else two transactions each
    -- adding a day next to the other's renumber their runs without the other's day, and the streak is wrong.
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO report_learner AS t (learner, first_day, last_day, last_at)
        SELECT learner, min(study_day), max(study_day), max(reviewed_at) FROM added WHERE isfinite(study_day)
        GROUP BY learner ORDER BY learner
        ON CONFLICT (learner) DO UPDATE SET first_day = least(t.first_day, excluded.first_day),
            last_day = greatest(t.last_day, excluded.last_day), last_at = greatest(t.last_at, excluded.last_at);
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM 1 FROM report_learner WHERE learner IN (SELECT learner FROM removed) ORDER BY learner FOR UPDATE;
    END IF;
"""


def _version_17_trigger() -> str:
    """Version 15's function with :data:`V17_LOCK` first. The upsert of the learner's row stays at its end too:
    an update's removed answers read the learner's days again, without the days it adds."""
    replaced = V15_TRIGGER.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1).replace("BEGIN\n", V17_LOCK, 1)
    assert replaced.count(V17_LOCK) == 1 and "CREATE OR REPLACE" in replaced
    return replaced


def _version_17() -> list[Step]:
    """The class report's summaries stay the log's when one learner's answers land in two transactions at once (two
    windows, an undo beside an answer): each transaction takes the learner's summary row first (:data:`V17_LOCK`).
    PostgreSQL only, as version 15."""
    return _per_backend({Backend.sqlite: [],
                         Backend.postgresql: [_statement(_version_17_trigger()), _fix_search_path]})


def _migration(steps: Callable[[], Sequence[Step]]) -> Callable[[Connection], None]:
    """A version's migration; its steps are built when it runs (every open reads this module, few migrate)."""

    def migrate(connection: Connection) -> None:
        for step in steps():
            step(connection)

    return migrate


MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    version: _migration(steps) for version, steps in enumerate(
        (_version_1, _version_2, _version_3, _version_4, _version_5, _version_6, _version_7, _version_8,
         _version_9, _version_10, _version_11, _version_12, _version_13, _version_14,
         _version_15, _version_16, _version_17), start=1)}
"""version -> function(connection) that brings a database at version - 1 up to it."""


def upgrade(connection: Connection, database: Database, found: int, now: str, created_by: str) -> None:
    """Run the migrations from ``found`` up to :data:`SCHEMA_VERSION`, and note them in ``meta``."""
    connection.info["database"] = database
    for version in range(found + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[version](connection)
        put_meta(connection, f"migrated_to_{version}", now)
    if found == 0:
        put_meta(connection, "created_at", now)
        put_meta(connection, "created_by", created_by)
    if found != SCHEMA_VERSION or database.writes_on_open:
        put_meta(connection, "schema_version", str(SCHEMA_VERSION))
        put_meta(connection, "opened_at", now)  # also proves the file is writable now, not at the first answer
        database.set_schema_version(connection, SCHEMA_VERSION)


def put_meta(connection: Connection, key: str, value: str) -> None:
    connection.execute(text("INSERT INTO meta (key, value) VALUES (:key, :value) "
                            "ON CONFLICT (key) DO UPDATE SET value = excluded.value"), {"key": key, "value": value})


def version_of(connection: Connection, database: Database) -> int:
    """The database's schema version, or StoreError for one bertdrill must not touch."""
    found = database.schema_version(connection)
    if found < 0 or (found > 0 and not database.written_by_bertdrill(connection)):
        raise StoreError(database.not_ours())  # a version number alone is no proof: other programs set one too
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"{database.where} was written by a newer bertdrill (schema version {found}; this one knows "
            f"up to {SCHEMA_VERSION}); upgrade bertdrill to open it"
        )
    if found == 0 and database.has_tables(connection):
        raise StoreError(database.not_ours())
    return found
