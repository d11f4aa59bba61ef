"""A reader writes nothing (issue 23): how ``status``, ``stats``, ``class report`` and ``scheduler`` (no name)
open the database, and how they see lessons the database has not synced yet.

SQLite, by what is on disk:

- no file: nothing is created (neither the file nor its folder); the reader works on an empty
  database in memory, so it shows what a first review would start from;
- a file in a folder that takes the ``-shm`` file a WAL database needs: opened ``mode=ro``, so
  SQLite itself refuses any write to it (it may leave an empty ``-wal`` and a ``-shm`` beside it,
  as any reader of a WAL database does);
- a folder that cannot be written (a backup on read-only media): with no ``-wal`` file, or an
  empty one, the file holds every committed answer and is opened ``immutable=1``; a ``-wal`` holding
  frames holds answers the file does not have yet, which ``immutable`` would not read, so the file
  and its ``-wal`` are copied into a temporary folder and the copy is read (and removed after);
- an older schema: the file is copied into memory (SQLite's backup) and upgraded there.

PostgreSQL: every unit of a reader runs ``READ ONLY``; an older schema is refused (the teacher's
``class init`` upgrades it).

Lessons newer than the database (new or removed cards, a learner without schedules yet): the reader
copies ``lesson``, ``card`` and the learner's ``schedule`` rows into temporary tables of the same names,
which both databases look up before the real ones, and syncs those; every query then counts what a
synced database would, and the database's own rows are untouched.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Connection, text
from sqlalchemy.engine import URL

from bertdrill.adapters.store.database import learner_of

SHADOWED = ("lesson", "card", "schedule")
"""The tables a sync writes, shadowed by temporary copies in a reader's connection."""
_KEYS = {"lesson": "id", "card": "id", "schedule": "learner, card_id"}


def sqlite_file(url: URL) -> Path | None:
    """The file a SQLite URL names, or None for one that names no file."""
    database = url.database or ""
    if database in ("", ":memory:"):
        return None
    return Path(database.removeprefix("file:").split("?", 1)[0])


def _uri(path: Path, **options: str) -> URL:
    return URL.create("sqlite", database=f"file:{quote(str(path))}", query={**options, "uri": "true"})


def _readable(path: Path, mode: str) -> bool:
    """Whether SQLite can read the file where it is: a WAL file needs its ``-shm``, made in the folder.

    False only for "cannot open" (the folder does not take the ``-shm``); any other failure (not a
    database, damaged) is for the store's own messages, on the real open."""
    try:
        probe = sqlite3.connect(f"file:{quote(str(path))}?mode={mode}", uri=True)
    except sqlite3.Error:
        return False
    try:
        probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return True
    except sqlite3.Error as exc:
        return getattr(exc, "sqlite_errorname", "") not in ("SQLITE_CANTOPEN", "SQLITE_READONLY_CANTINIT",
                                                              "SQLITE_READONLY_DIRECTORY")
    finally:
        probe.close()


def sqlite_reader(path: Path) -> tuple[URL, Path | None]:
    """How a reader opens an existing file: its URL, and the temporary folder holding a copy (None: none).

    A file whose ``-wal`` holds frames (a writer is open, or crashed) is opened ``mode=ro``: a read-write
    connection closing last would fold the frames into the file. Otherwise ``mode=rw``, which SQLite never
    creates a file for, and which removes the ``-wal`` and ``-shm`` it made when it closes; the engine's
    authorizer (:func:`refuse_writes`) refuses every write to the file itself.
    """
    wal = Path(f"{path}-wal")
    framed = wal.exists() and wal.stat().st_size > 0
    mode = "ro" if framed else "rw"
    if _readable(path, mode):
        return _uri(path, mode=mode), None
    if not framed:
        return _uri(path, immutable="1"), None  # every committed answer is in the file itself
    folder = Path(tempfile.mkdtemp(prefix="bertdrill-read-"))
    try:
        copy = folder / path.name
        shutil.copyfile(path, copy)
        shutil.copyfile(wal, Path(f"{copy}-wal"))  # the answers not checkpointed yet: SQLite reads them
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return _uri(copy, mode="rw"), folder


_WRITES = frozenset(getattr(sqlite3, name) for name in (
    "SQLITE_INSERT", "SQLITE_UPDATE", "SQLITE_DELETE", "SQLITE_CREATE_TABLE", "SQLITE_CREATE_INDEX",
    "SQLITE_CREATE_TRIGGER", "SQLITE_CREATE_VIEW", "SQLITE_DROP_TABLE", "SQLITE_DROP_INDEX", "SQLITE_DROP_TRIGGER",
    "SQLITE_DROP_VIEW", "SQLITE_ALTER_TABLE", "SQLITE_REINDEX", "SQLITE_ANALYZE", "SQLITE_CREATE_VTABLE",
    "SQLITE_DROP_VTABLE"))


_LOOKUPS = frozenset(("table_info", "table_xinfo", "index_list", "index_info", "foreign_key_list"))
"""Pragmas whose argument names what to look up, not a value to set."""


def refuse_writes(action: int, first: str | None, second: str | None, database: str | None,
                  trigger: str | None) -> int:
    """SQLite's authorizer for a reader: every change to the file (``main``) is refused, and so are another
    file attached and a ``PRAGMA`` that sets something; the temporary tables (``temp``) take the shadows."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    if action in _WRITES and database != "temp":
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and second is not None and first not in _LOOKUPS:
        return sqlite3.SQLITE_DENY  # PRAGMA journal_mode = WAL, user_version = 7...
    return sqlite3.SQLITE_OK


def shadow(connection: Connection) -> None:
    """Temporary copies of the tables a sync writes (the learner's schedules only), looked up before the real
    ones for the rest of the connection; the sync then writes to them."""
    sqlite = connection.dialect.name == "sqlite"
    schema = "main" if sqlite else connection.execute(text("SELECT current_schema()")).scalar_one()
    learner = learner_of(connection)
    for table in SHADOWED:
        real = f"{_quoted(connection, schema)}.{table}"
        mine = " WHERE learner = :learner" if table == "schedule" else ""
        connection.execute(text(f"CREATE TEMP TABLE {table} AS SELECT * FROM {real}{mine}"),
                           {"learner": learner} if mine else {})
        index = f"temp.shadow_{table}" if sqlite else f"shadow_{table}"
        connection.execute(text(f"CREATE UNIQUE INDEX {index} ON {table} ({_KEYS[table]})"))


def _quoted(connection: Connection, name: str) -> str:
    return connection.dialect.identifier_preparer.quote_identifier(name)
