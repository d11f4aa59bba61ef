"""Values read back are checked (issue 23): which row of the database holds a value bertdrill never writes.

A file edited by hand or by another program can hold anything in any column on SQLite (``ef100 = 'abc'``,
``due = 'not-a-date'``, a logged ``study_day = 'someday'``); PostgreSQL's types keep the kind of a value,
not its range (a grade of 9, a kind no answer has, ``NaN``). The store's methods (:mod:`bertdrill.adapters.store`)
run as usual; when one fails on a value (``ValueError``, ``TypeError``, an overflow...), :func:`find` looks for
the first row whose value is not what bertdrill writes, column by column, and the command says which
(``StoreError``: the table, the row's key, the column, the value), instead of a traceback. A failure that
no damaged row explains is raised as it was.

What a value may be comes from the tables themselves (:mod:`.schema`: a column's type and whether it may
be NULL), and, for the columns with a range or a list of words, from :data:`RANGES` and :func:`_words`. The
scan costs a pass over the tables, and runs only after a failure.

A value only SQL reads (an average over ``ef100``, a count of ``due <= today``, a sum of ``duration_ms``) fails
nothing: it gives a wrong figure. So every table carries an index of its damaged rows (schema version 12): a
partial index whose condition is "some column holds a value of the wrong type, an impossible date or time, or a
number outside its range" (:func:`damaged_condition`), which the database keeps up to date on every write,
whoever writes. :func:`anything_damaged` asks each index for one row, which costs a lookup in an index that is
empty when nothing is damaged, and the store asks it once before its first figure (:mod:`bertdrill.adapters.store`);
when a row is there, :func:`find` names it. The lists of words (answer kinds, scheduler names) are left out of
the condition, as schema 7 took them out of the CHECK constraints: a new kind needs no index rebuilt, and a
kind bertdrill does not know is named when a figure reads it (``AnswerKind(kind)``). The index is a speed-up
only: a database whose index is missing, or was made under other rules, is still checked, by a scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Boolean, Column, Connection, Date, DateTime, Float, Integer, String, Table, TypeDecorator, text

from bertdrill.adapters.store.schema import (
    ANSWER_KINDS,
    CARD,
    LESSON,
    META,
    REVIEW,
    SCHEDULE,
    SCHEDULER,
    FittedParametersRow,
    _table,
)
from bertdrill.core.i18n import N_, _, language
from bertdrill.core.kinds import Kind
from bertdrill.core.languages import written_short
from bertdrill.core.scheduling.registry import SchedulerName

FITTED = _table(FittedParametersRow)
TABLES: tuple[Table, ...] = (META, LESSON, CARD, SCHEDULE, REVIEW, SCHEDULER, FITTED)
KEYS = {"meta": ("key",), "lesson": ("id",), "card": ("id",), "schedule": ("learner", "card_id"), "review": ("id",),
        "scheduler": ("learner",), "fsrs_parameters": ("learner", "number")}
"""How a row of each table is named in the message."""

COUNT_MAX = 10**6
RANGES: dict[tuple[str, str], tuple[float, float]] = {
    **{("schedule", name): (0, COUNT_MAX) for name in ("repetitions", "lapses")},
    ("schedule", "interval"): (0, 36500),  # days: the schedulers' longest interval is 100 years
    ("schedule", "ef100"): (0, 100_000),
    **{("review", f"{name}_{when}"): (0, COUNT_MAX) for name in ("reps", "lapses") for when in ("before", "after")},
    **{("review", f"interval_{when}"): (0, 36500) for when in ("before", "after")},
    **{("review", f"ef100_{when}"): (0, 100_000) for when in ("before", "after")},
    ("review", "grade"): (0, 5),
    ("review", "duration_ms"): (0, 86_400_000),
    **{(table, name): (0, 36500) for table in ("schedule", "review")
       for name in ("stability", "stability_before", "stability_after")},
    **{(table, name): (1, 10) for table in ("schedule", "review")
       for name in ("difficulty", "difficulty_before", "difficulty_after")},
    ("scheduler", "retention"): (0.5, 0.999),
    ("scheduler", "exam_target"): (0.5, 0.999),
    ("card", "position"): (0, 10**9),
    ("lesson", "cards"): (0, 10**9),
    ("fsrs_parameters", "reviews"): (0, 10**12),
}
"""The columns whose numbers have a range (inclusive): a schedule bertdrill wrote lies inside it."""


def _words(table: str, column: str) -> tuple[str, ...] | None:
    """The words a column may hold, if it holds one of a list."""
    match table, column:
        case "review", "kind":
            return ANSWER_KINDS
        case "card", "kind":
            return tuple(kind.value for kind in Kind)
        case "scheduler", "name":
            return tuple(name.value for name in SchedulerName)
    return None


WHAT = {"integer": N_("a whole number"), "real": N_("a number"), "flag": N_("0 or 1"), "text": N_("text"),
        "date": N_("a date (YYYY-MM-DD)"), "time": N_("a time (YYYY-MM-DD HH:MM:SS)"), "json": N_("a JSON list")}


@dataclass(frozen=True)
class Damage:
    """A value bertdrill never writes, where it was found."""

    table: str
    key: tuple[tuple[str, Any], ...]  # the row's key columns and values
    column: str
    value: Any
    expected: str  # what belongs there, said for a person

    def message(self, where: str) -> str:
        row = ", ".join(f"{name} = {value!r}" for name, value in self.key)
        shown = repr(self.value)
        shown = shown if len(shown) <= 60 else shown[:59] + "…"
        return _("{where} is damaged: in table {table}, the row {row} holds {value} in {column}, where bertdrill "
                 "writes {expected}; restore the database from a backup, or correct that value").format(
                     where=where, table=self.table, row=row, value=shown, column=self.column, expected=self.expected)


def _kind(column: Column[Any]) -> str:
    kind = column.type.impl if isinstance(column.type, TypeDecorator) else column.type  # UTCTime, AutoString
    if isinstance(kind, Boolean):
        return "flag"
    if isinstance(kind, Integer):
        return "integer"
    if isinstance(kind, Float):
        return "real"
    if isinstance(kind, DateTime):
        return "time"
    if isinstance(kind, Date):
        return "date"
    if isinstance(kind, String):
        return "json" if (column.table.name, column.name) == ("fsrs_parameters", "parameters") else "text"
    raise AssertionError(f"no rule for the type of {column.table.name}.{column.name}: {kind!r}")


def _valid(column: Column[Any], dialect: str, *, words: bool = True) -> str:
    """SQL that is true where the column's value is one bertdrill writes (without ``words``: its list of words
    aside)."""
    name, kind = f'"{column.name}"', _kind(column)
    rules: list[str] = []
    if dialect == "sqlite":
        rules.append({
            "integer": f"typeof({name}) = 'integer'",
            "flag": f"typeof({name}) = 'integer' AND {name} IN (0, 1)",
            "real": f"typeof({name}) IN ('integer', 'real')",
            "text": f"typeof({name}) = 'text'",
            "json": f"typeof({name}) = 'text' AND json_valid({name}) AND json_type({name}) = 'array'",
            # A modifier makes SQLite compute the date, so 2025-02-30 becomes 2025-03-02 and differs (SQLite
            # 3.40 gives date('2025-02-30') back as it is).
            "date": f"typeof({name}) = 'text' AND date({name}, '+0 days') IS {name}",
            "time": f"typeof({name}) = 'text' AND julianday({name}) IS NOT NULL "
                    f"AND {name} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' "
                    f"AND date({name}, '+0 days') IS substr({name}, 1, 10)",
        }[kind])
    elif kind == "real":
        rules.append(f"{name} NOT IN ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)")
    elif kind in ("date", "time"):
        rules.append(f"isfinite({name})")
    bounds = RANGES.get((column.table.name, column.name))
    if bounds is not None:
        rules.append(f"{name} BETWEEN {bounds[0]} AND {bounds[1]}")
    listed = _words(column.table.name, column.name) if words else None
    if listed is not None:
        rules.append(f"{name} IN ({', '.join(repr(word) for word in listed)})")
    valid = " AND ".join(f"({rule})" for rule in rules) or "1 = 1"
    return f"({name} IS NULL OR ({valid}))" if column.nullable else f"({name} IS NOT NULL AND ({valid}))"


def _expected(column: Column[Any]) -> str:
    what = _(WHAT[_kind(column)])
    bounds = RANGES.get((column.table.name, column.name))
    words = _words(column.table.name, column.name)
    if words is not None:
        what = _("one of {words}").format(words=", ".join(words))
    elif bounds is not None:
        what = _("{what} from {low} to {high}").format(what=what, low=written_short(bounds[0], language()),
                                                        high=written_short(bounds[1], language()))
    return what if not column.nullable else _("{what} or nothing (NULL)").format(what=what)


def find(connection: Connection) -> Damage | None:
    """The first value in the database that bertdrill would not have written, table by table; None if none.

    Tables or columns the database does not have (an older schema) are skipped."""
    dialect = connection.dialect.name
    for table in TABLES:
        present = _columns(connection, table.name)
        keys = KEYS[table.name]
        for column in table.columns:
            if column.name not in present or not set(keys) <= present:
                continue
            chosen = ", ".join(f'"{key}"' for key in keys)
            # PostgreSQL's driver cannot make a Python date of 'infinity': the value is shown as the server writes it
            shown = f'"{column.name}"' if dialect == "sqlite" else f'CAST("{column.name}" AS TEXT)'
            found = connection.execute(text(
                f'SELECT {chosen}, {shown} FROM {table.name} WHERE NOT {_valid(column, dialect)} LIMIT 1'
            )).first()
            if found is not None:
                return Damage(table.name, tuple(zip(keys, found[:-1])), column.name, found[-1], _expected(column))
    return None


def _columns(connection: Connection, table: str) -> set[str]:
    if connection.dialect.name == "sqlite":
        return {row[1] for row in connection.exec_driver_sql(f"PRAGMA table_info({table})")}
    return {row[0] for row in connection.execute(text(
        "SELECT column_name FROM information_schema.columns WHERE table_name = :table "
        "AND table_schema = current_schema()"), {"table": table})}


# --- the index of damaged rows ------------------------------------------------------------------------------

def index_name(table: Table) -> str:
    return f"ix_{table.name}_damaged"


def damaged_condition(table: Table, present: set[str], dialect: str) -> str:
    """SQL true on a row of ``table`` holding a value bertdrill never writes in one of its ``present`` columns
    (word lists aside): the condition of the table's index of damaged rows, and of the query that reads it, which
    must be the same text for the database to use the index."""
    checked = [_valid(column, dialect, words=False) for column in table.columns if column.name in present]
    return "NOT (" + " AND ".join(checked) + ")"


def create_indexes(connection: Connection) -> None:
    """Schema version 12: each table's index of damaged rows, on its key (see the module's doc)."""
    dialect = connection.dialect.name
    for table in TABLES:
        present = _columns(connection, table.name)
        keys = ", ".join(f'"{key}"' for key in KEYS[table.name])
        connection.execute(text(f"CREATE INDEX {index_name(table)} ON {table.name} ({keys}) "
                                f"WHERE {damaged_condition(table, present, dialect)}"))


def anything_damaged(connection: Connection) -> bool:
    """Whether some row holds a value bertdrill never writes (word lists aside), by each table's index of
    damaged rows: one statement, a lookup per table when nothing is damaged (the class server asks it for each
    member's request). The tables themselves, not a reader's temporary copies of them (:mod:`.reading`), which
    hold the same rows or rows bertdrill wrote."""
    return bool(connection.execute(text(damaged_query(connection))).scalar_one())


def damaged_query(connection: Connection) -> str:
    """``SELECT EXISTS (a damaged row of meta) OR EXISTS (… of lesson) OR …``, each condition said exactly as
    its table's index says it (:func:`damaged_condition`), so the database reads the index."""
    dialect = connection.dialect.name
    if dialect == "sqlite":
        schema = "main"
        present = {table.name: _columns(connection, table.name) for table in TABLES}
    else:
        rows = connection.execute(text(
            "SELECT current_schema(), table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema()")).all()
        schema = rows[0][0] if rows else "public"
        present = {table.name: {column for _schema, name, column in rows if name == table.name} for table in TABLES}
    tests = [f'EXISTS (SELECT 1 FROM "{schema}".{table.name} WHERE {damaged_condition(table, present[table.name], dialect)})'
             for table in TABLES if present[table.name]]
    return "SELECT " + (" OR ".join(tests) if tests else "1 = 0")
