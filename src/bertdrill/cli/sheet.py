"""``bertdrill sheet``: printable quiz sheets with answer keys, and Moodle GIFT."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, assert_never

import typer

from bertdrill.adapters.catalogs import use
from bertdrill.adapters.export.sheets.formats import KeyMode, SheetFormat, format_for
from bertdrill.cli.base import (
    DbOption,
    ForceOption,
    LangOption,
    LessonsArgument,
    app,
    escape,
    inputs,
    load,
    load_indexed,
    number,
    out,
    texts_language,
)
from bertdrill.cli.classroom import class_lessons, hardest_items
from bertdrill.core.i18n import _, ngettext

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bertdrill.adapters.export.files import Content, Input
    from bertdrill.adapters.export.sheets.model import Sheet
    from bertdrill.core.lesson import Lesson
    from bertdrill.ports import IndexedLesson


@app.command()
def sheet(
    output: Annotated[Path, typer.Option("--output", "-o", metavar="OUT", show_default=False,
                                         help="File to write; its extension picks the format (.html, .pdf, .md, .gift, .xml).")],
    paths: LessonsArgument = None,
    fmt: Annotated[SheetFormat | None, typer.Option("--format", show_default=False,
                                               help="Output format, when the file name does not tell.")] = None,
    versions: Annotated[int, typer.Option("--versions", "-n", min=1, max=26,
                                          help="Versions A, B, ... with their own order and parameter sets.")] = 1,
    seed: Annotated[int | None, typer.Option("--seed", min=0, show_default=False,
                                             help="Same seed, same sheets (default: a new seed, printed).")] = None,
    count: Annotated[int | None, typer.Option("--count", "-c", min=1, show_default=False,
                                              help="How many questions to draw (default: all).")] = None,
    kinds: Annotated[str | None, typer.Option("--kinds", "-k", show_default=False,
                                              help="Comma-separated kinds: fact, choice, blank, numeric, match, practice "
                                                   "(default: all but practice).")] = None,
    lang: LangOption = "",
    title: Annotated[str | None, typer.Option("--title", show_default=False,
                                              help="Sheet title (default: the lesson's title).")] = None,
    key: Annotated[KeyMode | None, typer.Option("--key", show_default=False,
                                                help="separate: the answer keys in OUT-key.EXT, never in the file "
                                                     "students get (default); pages: each version's key on its own "
                                                     "pages at the end of OUT; none: no key.")] = None,
    given: Annotated[bool, typer.Option("--given", help="Print a legend of the parameters numeric questions use: "
                                                        "what each letter stands for and its values.")] = False,
    instructions: Annotated[str | None, typer.Option("--instructions", show_default=False,
                                                     help="A line of instructions under the header "
                                                          "(default: the lesson's [sheet] instructions).")] = None,
    split: Annotated[bool, typer.Option("--split", help="One file per version: OUT-A.EXT, OUT-B.EXT, ...")] = False,
    students: Annotated[str | None, typer.Option(
        "--students", metavar="N|ROSTER.csv", show_default=False,
        help="One version per student, each with its own numbers and its own key (answer keys in their own "
             "file unless --key says otherwise): a number of students, or a CSV file with a name or id per "
             "line (its first column).")] = None,
    duplex: Annotated[bool, typer.Option("--duplex/--no-duplex",
                                         help="PDF: pad each version and each key to an even number of pages, "
                                              "so printed on both sides each starts on a new sheet.")] = True,
    from_class: Annotated[bool, typer.Option("--from-class", help="Only the items the class fails most "
                                             "(from the class's reviews in --db; see bertdrill class report).")] = False,
    hardest: Annotated[int, typer.Option("--hardest", min=1, help="With --from-class: how many items.")] = 10,
    db: DbOption = None,
    force: ForceOption = False,
) -> None:
    """Write quiz sheets in versions, with answer keys: HTML, PDF, Markdown, Moodle GIFT or Moodle XML."""
    import random

    from bertdrill.adapters.export.files import Replace, check_writable, write_atomic
    from bertdrill.adapters.export.sheets import model
    from bertdrill.adapters.export.sheets.output import bank_documents, documents, key_path, version_path
    from bertdrill.core.errors import BertdrillError
    from bertdrill.core.languages import listed

    chosen_format = fmt or format_for(output)
    if chosen_format is SheetFormat.gift and key is not None:
        raise BertdrillError(_("--key does not apply to GIFT: a GIFT file carries its answers in each question"))
    if chosen_format is SheetFormat.moodle_xml and key is not None:
        raise BertdrillError(_("--key does not apply to Moodle XML: the file carries its answers in each question"))
    if chosen_format.is_bank and split:
        raise BertdrillError(_("--split does not apply to a question bank: Moodle shuffles per attempt"))
    roster = read_roster(students) if students is not None else None
    if roster is not None and versions != 1:
        raise BertdrillError(_("--versions does not go with --students: each student gets a version of their own"))
    # A key on the last pages of the file a teacher prints is handed out with every copy: keys go to a
    # file of their own unless --key pages asks for them there.
    key_mode = key or KeyMode.separate
    if chosen_format.is_bank:
        key_mode = KeyMode.none  # a bank carries its answers in each question
    names = [str(index + 1) for index in range(len(roster))] if roster is not None else \
        [model.letter(index) for index in range(versions)]
    targets = [version_path(output, name) for name in names] if split else [output]
    read, replace = inputs(paths, db) + roster_input(students), Replace.forced(force)
    for target in targets:
        check_writable(target, replace=replace, example="quiz.html", inputs=read)
        if key_mode is KeyMode.separate:
            check_writable(key_path(target), replace=replace, example="quiz.html", inputs=read)
    if seed is None:
        seed = random.SystemRandom().randrange(100_000)
    # A bank of every item is written a lesson at a time (held whole, the 1M store's lessons' bank peaked at
    # 400 MB); a drawn sheet reads of the lessons' items only those the draw reaches (30 papers of 20 questions
    # from 100,000 items held every item: 237 MB). Both read the lessons' indexes.
    calculated = chosen_format is SheetFormat.moodle_xml
    if chosen_format.is_bank and count is None and roster is None and not given and not from_class:
        indexes = load_indexed(paths)
        bank = model.build_bank(indexes, language=_sheet_language(indexes, lang), seed=seed, versions=versions,
                                kinds=model.parse_kinds(kinds), title=title, instructions=instructions,
                                calculated=calculated)
        sheet_model, counted = bank.sheet, (bank.count, bank.calculated)
        files = bank_documents(bank, chosen_format, output)
    else:
        lessons: Sequence[Lesson | IndexedLesson] = (class_lessons(db) if from_class and not paths else None) or (
            load_indexed(paths) if count is not None and not given else load(paths))
        sheet_model = model.build_sheet(
            lessons, language=_sheet_language(lessons, lang), seed=seed, versions=versions, count=count,
            kinds=model.parse_kinds(kinds), title=title, given=given, instructions=instructions,
            items=hardest_items(db, hardest) if from_class else None, students=roster,
            calculated=calculated, bank=chosen_format.is_bank,
        )
        counted = _bank_counts(sheet_model, chosen_format)
        files = documents(sheet_model, chosen_format, output, key_mode, split=split, duplex=duplex)
    for path, data in files:
        write_atomic(path, data, replace=replace, example="quiz.html", inputs=read)
    out.print(_report(sheet_model, chosen_format, files, key_mode, counted))
    if sheet_model.given_out:
        out.print(escape(ngettext(
            "Left out {count} question that the --given legend answers: {items}.",
            "Left out {count} questions that the --given legend answers: {items}.",
            len(sheet_model.given_out)).format(count=number(len(sheet_model.given_out)),
                                               items=listed(sheet_model.given_out))))
    if sheet_model.left_out and not chosen_format.is_bank:
        out.print(escape(ngettext(
            "Left out {count} question that would give another away: {items} (bertdrill check says how).",
            "Left out {count} questions that would give others away: {items} (bertdrill check says how).",
            len(sheet_model.left_out)).format(count=number(len(sheet_model.left_out)), items=listed(sheet_model.left_out))))


def _sheet_language(lessons: Sequence[Lesson | IndexedLesson], lang: str) -> str:
    """The language of the sheet's texts; its labels follow them, for a printed sheet speaks one language."""
    language = texts_language(lessons, lang)
    if language != lang:
        use(language)
    return language


def roster_input(value: str | None) -> list[Input]:
    """``--students ROSTER.csv``'s file, which no output may replace (not even with --force)."""
    from bertdrill.adapters.export.files import Input, InputKind

    return [Input(Path(value), InputKind.ROSTER)] if value is not None and not value.strip().isdigit() else []


MAX_NAME = 200  # characters of a roster entry
ROSTER_HEADINGS = frozenset({"name", "names", "id", "student", "students", "ad", "adı", "isim", "öğrenci", "numara", "no"})
"""A first line holding one of these is a spreadsheet's column heading, not a student."""


def read_roster(value: str) -> list[str]:
    """``--students``: a number of students (known by number: ``[""] * N``), or a roster file's names or ids.

    A roster is CSV (a spreadsheet's export): the first column of every non-empty line, trimmed. A
    name given twice, one too long or holding control characters is refused as ``file:line: what``.
    """
    import csv

    from bertdrill.adapters.export.sheets.model import MAX_STUDENTS
    from bertdrill.core.errors import BertdrillError, os_reason
    from bertdrill.core.text import CONTROL

    if value.strip().isdigit():
        count = int(value)
        if not 1 <= count <= MAX_STUDENTS:
            raise BertdrillError(_("--students {count}: from 1 to {most} students").format(
                count=count, most=number(MAX_STUDENTS)))
        return [""] * count
    path = Path(value)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise BertdrillError(_("--students {path}: no such file (give a number of students, or a CSV roster)")
                             .format(path=value)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BertdrillError(_("--students {path}: cannot read it as UTF-8 text: {reason}").format(
            path=value, reason=os_reason(exc) if isinstance(exc, OSError) else exc)) from None
    names: list[str] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(csv.reader(text.splitlines()), start=1):
        name = " ".join(row[0].split()) if row else ""
        if not name or (not names and name.casefold() in ROSTER_HEADINGS):
            continue  # an empty line, or a spreadsheet's heading row
        where = f"{value}:{line}"
        if CONTROL.search(name) or len(name) > MAX_NAME:
            raise BertdrillError(_("{where}: a name must be printable text of at most {most} characters").format(
                where=where, most=MAX_NAME))
        if name in seen:
            raise BertdrillError(_("{where}: {name!r} is also on line {first}: two students would share a "
                                   "version").format(where=where, name=name, first=seen[name]))
        seen[name] = line
        names.append(name)
    if not names:
        raise BertdrillError(_("--students {path}: no names in it (a name or id per line)").format(path=value))
    if len(names) > MAX_STUDENTS:
        raise BertdrillError(_("--students {path}: {count} names; at most {most}").format(
            path=value, count=number(len(names)), most=number(MAX_STUDENTS)))
    return names


def _bank_counts(sheet_model: Sheet, chosen_format: SheetFormat) -> tuple[int, int]:
    """How many questions a bank's file holds, and how many of them are calculated questions (none of a sheet)."""
    from bertdrill.adapters.export.sheets import gift, moodle

    match chosen_format:
        case SheetFormat.moodle_xml:
            return moodle.count(sheet_model), len(sheet_model.calculated)
        case SheetFormat.gift:
            return len(gift.entries_of(sheet_model)), 0
        case SheetFormat.html | SheetFormat.pdf | SheetFormat.md:
            return 0, 0
        case unreachable:
            assert_never(unreachable)


def _report(sheet_model: Sheet, chosen_format: SheetFormat, files: list[tuple[Path, Content]], key_mode: KeyMode,
            counted: tuple[int, int]) -> str:
    """One line on what was written (``counted``: a bank's questions and calculated questions), and the seed that
    writes it again."""
    written = _(" and ").join(escape(str(path)) for path, _data in files)
    if chosen_format.is_bank:
        written_count, calculated_count = counted
        note = _(" (Moodle shuffles per attempt, so --versions does not apply)") if len(sheet_model.versions) > 1 else ""
        if sheet_model.versions[0].student_number:
            what = ngettext("{count} question for {students} student, in a category of their own",
                            "{count} questions for {students} students, each student's in a category of their "
                            "own", len(sheet_model.versions)).format(
                count=number(written_count), students=number(len(sheet_model.versions)))
        else:
            what = ngettext("{count} question for Moodle's question bank{note}",
                            "{count} questions for Moodle's question bank{note}", written_count).format(
                count=number(written_count), note=note)
        if calculated_count:
            what += ngettext("; {count} numeric item as a calculated question: Moodle draws each student's numbers",
                             "; {count} numeric items as calculated questions: Moodle draws each student's numbers",
                             calculated_count).format(count=number(calculated_count))
        if chosen_format is SheetFormat.gift:
            what += _("; GIFT has no marks, so Moodle gives every question 1 (each question's points are in its "
                      "tag points-N; Moodle XML keeps them)")
    else:
        first, many = sheet_model.versions[0], len(sheet_model.versions) > 1
        letters = ", ".join(version.letter for version in sheet_model.versions)
        questions = ngettext("{count} question", "{count} questions", len(first.questions)).format(
            count=number(len(first.questions)))
        points = ngettext("{count} point", "{count} points", first.points).format(count=number(first.points))
        if first.student_number:
            what = ngettext("{versions} version for {versions} student, {questions} and {points}",
                            "{versions} versions, one per student, each with its own numbers, {questions} and "
                            "{points} each", len(sheet_model.versions)).format(
                versions=number(len(sheet_model.versions)), questions=questions, points=points)
        else:
            what = (_("{versions} versions ({letters}), {questions} and {points} each") if many
                    else _("1 version ({letters}), {questions} and {points}")).format(
                versions=len(sheet_model.versions), letters=letters, questions=questions, points=points)
        match key_mode:
            case KeyMode.separate:  # name the key files: "the second file" is wrong when there are many
                keys = [str(path) for path, _data in files if path.stem.endswith("-key")]
                what += (ngettext("; the answer key in {files}", "; the answer keys in {files}", len(keys))
                         .format(files=_(" and ").join(escape(key) for key in keys)))
                written = _(" and ").join(escape(str(path)) for path, _data in files if not path.stem.endswith("-key"))
            case KeyMode.pages:
                what += _("; answer keys on the last pages") if many else _("; the answer key on the last pages")
            case KeyMode.none:
                what += _("; no answer key")
            case unreachable:
                assert_never(unreachable)
    return _("Wrote {files}: {what}. Seed {seed} (--seed {seed} writes the same again).").format(
        files=written, what=what, seed=sheet_model.seed)
