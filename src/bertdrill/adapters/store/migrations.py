"""The schema's versions: the DDL of each, and bringing a database up to the newest.

One history for both backends: each version's DDL is written once (in SQLite's words; the
PostgreSQL backend translates the few that differ, :meth:`.database.Database.ddl`). SQLite
keeps the version in ``PRAGMA user_version``, PostgreSQL in the ``meta`` table (which
repeats it, with dates, on SQLite too); :data:`MIGRATIONS` brings older databases up to date
and a newer one is refused, before anything is written to it, rather than misread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlalchemy import Connection, text

from bertdrill.adapters.store.database import Backend, Database
from bertdrill.adapters.store.members import DDL_V8
from bertdrill.core.errors import StoreError

SCHEMA_VERSION = 9

# Each migration brings the file from version - 1 to version. The DDL is written out
# rather than generated from the models in .schema, so version 1 stays version 1 when the
# models move on; tests check that the newest migration matches the models.
_V1 = """
CREATE TABLE meta (
    key TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE lesson (
    id TEXT NOT NULL PRIMARY KEY,
    digest TEXT NOT NULL,
    cards INTEGER NOT NULL,
    synced_at DATETIME NOT NULL
);
CREATE TABLE card (
    id TEXT NOT NULL PRIMARY KEY,
    lesson_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    position INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    removed BOOLEAN NOT NULL DEFAULT 0,
    first_seen DATETIME NOT NULL,
    updated DATETIME NOT NULL
);
CREATE INDEX ix_card_lesson ON card (lesson_id, position);
CREATE TABLE schedule (
    card_id TEXT NOT NULL PRIMARY KEY REFERENCES card (id),
    repetitions INTEGER NOT NULL DEFAULT 0,
    ef100 INTEGER NOT NULL DEFAULT 250,
    interval INTEGER NOT NULL DEFAULT 0,
    due DATE,
    lapses INTEGER NOT NULL DEFAULT 0,
    suspended BOOLEAN NOT NULL DEFAULT 0,
    buried_until DATE,
    leech BOOLEAN NOT NULL DEFAULT 0
);
CREATE INDEX ix_schedule_due ON schedule (due);
CREATE TABLE review (
    id INTEGER NOT NULL PRIMARY KEY,
    card_id TEXT NOT NULL REFERENCES card (id),
    reviewed_at DATETIME NOT NULL,
    study_day DATE NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('review', 'new', 'redrill', 'practice')),
    grade INTEGER NOT NULL CHECK (grade BETWEEN 0 AND 5),
    typed TEXT,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    reps_before INTEGER NOT NULL,
    ef100_before INTEGER NOT NULL,
    interval_before INTEGER NOT NULL,
    due_before DATE,
    lapses_before INTEGER NOT NULL,
    reps_after INTEGER NOT NULL,
    ef100_after INTEGER NOT NULL,
    interval_after INTEGER NOT NULL,
    due_after DATE,
    lapses_after INTEGER NOT NULL
);
CREATE INDEX ix_review_card ON review (card_id, id);
CREATE INDEX ix_review_day ON review (study_day);
"""



# Version 2: every schedule and answer belongs to a learner. SQLite cannot change a primary key in place,
# so the schedule table is rebuilt; the rows a file already has go to the learner who opens it first
# (``:learner``): a file had one learner until now. (A class's PostgreSQL database starts empty.)
_V2 = """
CREATE TABLE schedule_v2 (
    card_id TEXT NOT NULL REFERENCES card (id),
    repetitions INTEGER NOT NULL DEFAULT 0,
    ef100 INTEGER NOT NULL DEFAULT 250,
    interval INTEGER NOT NULL DEFAULT 0,
    due DATE,
    lapses INTEGER NOT NULL DEFAULT 0,
    suspended BOOLEAN NOT NULL DEFAULT 0,
    buried_until DATE,
    leech BOOLEAN NOT NULL DEFAULT 0,
    learner TEXT NOT NULL,
    PRIMARY KEY (learner, card_id)
);
INSERT INTO schedule_v2 SELECT schedule.*, :learner FROM schedule;
DROP TABLE schedule;
ALTER TABLE schedule_v2 RENAME TO schedule;
CREATE INDEX ix_schedule_due ON schedule (learner, due);
ALTER TABLE review ADD COLUMN learner TEXT NOT NULL DEFAULT '';
UPDATE review SET learner = :learner;
DROP INDEX ix_review_card;
CREATE INDEX ix_review_card ON review (learner, card_id, id);
DROP INDEX ix_review_day;
CREATE INDEX ix_review_day ON review (learner, study_day);
"""

# Version 3: FSRS beside SM-2. A schedule and each logged answer keep FSRS's memory state (stability and
# difficulty, NULL until FSRS schedules the card), and each learner's choice of scheduler has a row (none:
# SM-2). DOUBLE PRECISION keeps every bit of py-fsrs's floats on both backends (SQLite reads it as REAL),
# so a stored state is exactly the one FSRS computed.
_V3 = """
ALTER TABLE schedule ADD COLUMN stability DOUBLE PRECISION;
ALTER TABLE schedule ADD COLUMN difficulty DOUBLE PRECISION;
ALTER TABLE review ADD COLUMN stability_before DOUBLE PRECISION;
ALTER TABLE review ADD COLUMN difficulty_before DOUBLE PRECISION;
ALTER TABLE review ADD COLUMN stability_after DOUBLE PRECISION;
ALTER TABLE review ADD COLUMN difficulty_after DOUBLE PRECISION;
CREATE TABLE scheduler (
    learner TEXT NOT NULL PRIMARY KEY,
    name TEXT NOT NULL CHECK (name IN ('sm2', 'fsrs')),
    retention DOUBLE PRECISION,
    switched_at DATETIME NOT NULL
);
"""

# Version 4: FSRS fitted to each learner's own log. Every fitted set is a row (numbered per learner, never
# overwritten, so the previous set stays), and the scheduler row names the set FSRS runs with (NULL: defaults).
_V4 = """
CREATE TABLE fsrs_parameters (
    learner TEXT NOT NULL,
    number INTEGER NOT NULL,
    parameters TEXT NOT NULL,
    reviews INTEGER NOT NULL,
    fitted_at DATETIME NOT NULL,
    PRIMARY KEY (learner, number)
);
ALTER TABLE scheduler ADD COLUMN parameters INTEGER;
"""

# Version 5: an exam date FSRS plans for (bertdrill review --exam), with the recall wanted on the day.
_V5 = """
ALTER TABLE scheduler ADD COLUMN exam DATE;
ALTER TABLE scheduler ADD COLUMN exam_target DOUBLE PRECISION;
"""


# Version 6: a card asked with fresh numbers (a variant of its parameters) logs what was asked with the answer:
# the seed that drew the variant and the variant's values ("seed:key"), NULL for a card asked with its own set.
_V6 = """
ALTER TABLE review ADD COLUMN variant TEXT;
"""


# Version 7: the scheduler's name and the answer's kind are no longer listed in CHECK constraints, so a third
# scheduler or a new kind of answer is one module and one registry entry, with no table rebuilt (the code's
# enums, core.scheduling.registry and AnswerKind, say what is valid). SQLite cannot drop a constraint, so it
# rebuilds the two tables as its ALTER TABLE page says (new table, copy, drop, rename, indexes), in the one
# migration transaction; PostgreSQL drops the constraints by the names it gave them, keeping grants and
# row-level security. The columns keep their order, so ``SELECT *`` copies them.
_V7_SQLITE = """
CREATE TABLE review_v7 (
    id INTEGER NOT NULL PRIMARY KEY,
    card_id TEXT NOT NULL REFERENCES card (id),
    reviewed_at DATETIME NOT NULL,
    study_day DATE NOT NULL,
    kind TEXT NOT NULL,
    grade INTEGER NOT NULL CHECK (grade BETWEEN 0 AND 5),
    typed TEXT,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    reps_before INTEGER NOT NULL,
    ef100_before INTEGER NOT NULL,
    interval_before INTEGER NOT NULL,
    due_before DATE,
    lapses_before INTEGER NOT NULL,
    reps_after INTEGER NOT NULL,
    ef100_after INTEGER NOT NULL,
    interval_after INTEGER NOT NULL,
    due_after DATE,
    lapses_after INTEGER NOT NULL,
    learner TEXT NOT NULL DEFAULT '',
    stability_before DOUBLE PRECISION,
    difficulty_before DOUBLE PRECISION,
    stability_after DOUBLE PRECISION,
    difficulty_after DOUBLE PRECISION,
    variant TEXT
);
INSERT INTO review_v7 SELECT * FROM review;
DROP TABLE review;
ALTER TABLE review_v7 RENAME TO review;
CREATE INDEX ix_review_card ON review (learner, card_id, id);
CREATE INDEX ix_review_day ON review (learner, study_day);
CREATE TABLE scheduler_v7 (
    learner TEXT NOT NULL PRIMARY KEY,
    name TEXT NOT NULL,
    retention DOUBLE PRECISION,
    switched_at DATETIME NOT NULL,
    parameters INTEGER,
    exam DATE,
    exam_target DOUBLE PRECISION
);
INSERT INTO scheduler_v7 SELECT * FROM scheduler;
DROP TABLE scheduler;
ALTER TABLE scheduler_v7 RENAME TO scheduler;
"""
_V7_POSTGRESQL = """
ALTER TABLE review DROP CONSTRAINT review_kind_check;
ALTER TABLE scheduler DROP CONSTRAINT scheduler_name_check;
"""


# Version 9: what a learner does to a card outside a review (bertdrill cards suspend, unsuspend, forget, reset,
# reschedule) is logged with the card's state before and after, as each answer is, so it can be undone and
# read back in the card's history.
_V9 = """
CREATE TABLE card_action (
    id INTEGER NOT NULL PRIMARY KEY,
    learner TEXT NOT NULL,
    card_id TEXT NOT NULL REFERENCES card (id),
    at DATETIME NOT NULL,
    study_day DATE NOT NULL,
    action TEXT NOT NULL,
    reps_before INTEGER NOT NULL,
    ef100_before INTEGER NOT NULL,
    interval_before INTEGER NOT NULL,
    due_before DATE,
    lapses_before INTEGER NOT NULL,
    stability_before DOUBLE PRECISION,
    difficulty_before DOUBLE PRECISION,
    suspended_before BOOLEAN NOT NULL,
    reps_after INTEGER NOT NULL,
    ef100_after INTEGER NOT NULL,
    interval_after INTEGER NOT NULL,
    due_after DATE,
    lapses_after INTEGER NOT NULL,
    stability_after DOUBLE PRECISION,
    difficulty_after DOUBLE PRECISION,
    suspended_after BOOLEAN NOT NULL
);
CREATE INDEX ix_card_action_card ON card_action (learner, card_id, id);
"""


def _script(ddl: str | Mapping[Backend, str]) -> Callable[[Connection], None]:
    """A migration that runs ``ddl``'s statements in order, in the backend's words, with ``:learner`` bound
    (the backend is the connection's ``info["database"]``, set by :func:`upgrade`). ``ddl`` is one script
    for both backends, or one per backend where they must do different things."""

    def migrate(connection: Connection) -> None:
        database: Database = connection.info["database"]
        script = ddl if isinstance(ddl, str) else ddl[database.backend]
        for statement in script.split(";"):
            if statement.strip():
                translated = database.ddl(statement)
                if ":learner" in translated:
                    connection.execute(text(translated), {"learner": database.learner})
                else:
                    connection.exec_driver_sql(translated)

    return migrate


MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _script(_V1), 2: _script(_V2), 3: _script(_V3), 4: _script(_V4),
                                                   5: _script(_V5), 6: _script(_V6),
                                                   7: _script({Backend.sqlite: _V7_SQLITE,
                                                               Backend.postgresql: _V7_POSTGRESQL}),
                                                   # Version 8: a class's members, their passwords and logins, and
                                                   # the lessons as published (.members): PostgreSQL only, where a
                                                   # class lives; an SQLite file has one learner, and only its
                                                   # version number moves.
                                                   8: _script({Backend.sqlite: "", Backend.postgresql: DDL_V8}),
                                                   9: _script(_V9)}
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
