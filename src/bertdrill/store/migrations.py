"""The schema's versions: the DDL of each, and bringing a file up to the newest.

``PRAGMA user_version`` carries the schema version (the ``meta`` table repeats it with
dates); :data:`MIGRATIONS` brings older files up to date and a newer file is refused
rather than misread.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection

from ..errors import StoreError

SCHEMA_VERSION = 1

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



def _migrate_to_1(connection: Connection) -> None:
    for statement in _V1.split(";"):
        if statement.strip():
            connection.exec_driver_sql(statement)


MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _migrate_to_1}
"""version -> function(connection) that brings a file at version - 1 up to it."""


def upgrade(connection: Connection, found: int, now: str, created_by: str) -> None:
    """Run the migrations from ``found`` up to :data:`SCHEMA_VERSION`, and note them in ``meta``."""
    for version in range(found + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[version](connection)
        put_meta(connection, f"migrated_to_{version}", now)
    if found == 0:
        put_meta(connection, "created_at", now)
        put_meta(connection, "created_by", created_by)
    put_meta(connection, "schema_version", str(SCHEMA_VERSION))
    put_meta(connection, "opened_at", now)  # also proves the file is writable now, not at the first answer
    connection.exec_driver_sql(f"PRAGMA user_version = {SCHEMA_VERSION}")


def put_meta(connection: Connection, key: str, value: str) -> None:
    connection.exec_driver_sql("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def version_of(connection: Connection, where: str) -> int:
    """The file's schema version, or StoreError for a file bertdrill must not touch."""
    found = connection.exec_driver_sql("PRAGMA user_version").scalar_one()
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"{where} was written by a newer bertdrill (schema version {found}; this one knows "
            f"up to {SCHEMA_VERSION}); upgrade bertdrill to open it"
        )
    tables = connection.exec_driver_sql("SELECT count(*) FROM sqlite_master WHERE type = 'table'").scalar_one()
    if found == 0 and tables:
        raise StoreError(f"{where} is an SQLite database but not a bertdrill one; use another file")
    return int(found)
