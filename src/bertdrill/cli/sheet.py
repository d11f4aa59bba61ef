"""``bertdrill sheet``: printable quiz sheets with answer keys, and Moodle GIFT."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from bertdrill.adapters.catalogs import use
from bertdrill.cli.base import (
    DbOption,
    LangOption,
    LessonsArgument,
    app,
    escape,
    inputs,
    load,
    number,
    out,
    texts_language,
)
from bertdrill.cli.classroom import hardest_items
from bertdrill.core.i18n import _, ngettext


class Format(StrEnum):
    html = "html"
    pdf = "pdf"
    md = "md"
    gift = "gift"
    moodle_xml = "moodle-xml"


class KeyMode(StrEnum):
    pages = "pages"
    separate = "separate"
    none = "none"


@app.command()
def sheet(
    output: Annotated[Path, typer.Option("--output", "-o", metavar="OUT", show_default=False,
                                         help="File to write; its extension picks the format (.html, .pdf, .md, .gift, .xml).")],
    paths: LessonsArgument = None,
    fmt: Annotated[Format | None, typer.Option("--format", show_default=False,
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
                                                help="pages: each version's key on its own pages at the end (default); "
                                                     "separate: in OUT-key.EXT; none: no key.")] = None,
    given: Annotated[bool, typer.Option("--given", help="Print a legend of the parameters numeric questions use: "
                                                        "what each letter stands for and its values.")] = False,
    instructions: Annotated[str | None, typer.Option("--instructions", show_default=False,
                                                     help="A line of instructions under the header "
                                                          "(default: the lesson's [sheet] instructions).")] = None,
    split: Annotated[bool, typer.Option("--split", help="One file per version: OUT-A.EXT, OUT-B.EXT, ...")] = False,
    duplex: Annotated[bool, typer.Option("--duplex/--no-duplex",
                                         help="PDF: pad each version and each key to an even number of pages, "
                                              "so printed on both sides each starts on a new sheet.")] = True,
    from_class: Annotated[bool, typer.Option("--from-class", help="Only the items the class fails most "
                                             "(from the class's reviews in --db; see bertdrill class report).")] = False,
    hardest: Annotated[int, typer.Option("--hardest", min=1, help="With --from-class: how many items.")] = 10,
    db: DbOption = None,
) -> None:
    """Write quiz sheets in versions, with answer keys: HTML, PDF, Markdown, Moodle GIFT or Moodle XML."""
    import random

    from bertdrill.adapters.export.files import check_writable, write_atomic
    from bertdrill.adapters.export.sheets import model
    from bertdrill.adapters.export.sheets.output import BANKS, documents, format_for, key_path, version_path
    from bertdrill.core.errors import BertdrillError

    chosen_format = fmt.value if fmt else format_for(output)
    if chosen_format == "gift" and key is not None:
        raise BertdrillError(_("--key does not apply to GIFT: a GIFT file carries its answers in each question"))
    if chosen_format == "moodle-xml" and key is not None:
        raise BertdrillError(_("--key does not apply to Moodle XML: the file carries its answers in each question"))
    if chosen_format in BANKS and split:
        raise BertdrillError(_("--split does not apply to a question bank: Moodle shuffles per attempt"))
    key_mode = (key or KeyMode.pages).value
    targets = [version_path(output, model.letter(index)) for index in range(versions)] if split else [output]
    read = inputs(paths, db)
    for target in targets:
        check_writable(target, example="quiz.html", inputs=read)
        if key_mode == "separate":
            check_writable(key_path(target), example="quiz.html", inputs=read)
    if seed is None:
        seed = random.SystemRandom().randrange(100_000)
    lessons = load(paths)
    language = texts_language(lessons, lang)
    if language != lang:  # a printed sheet speaks one language: its labels follow its texts
        use(language)
    sheet_model = model.build_sheet(
        lessons, language=language, seed=seed, versions=versions, count=count,
        kinds=model.parse_kinds(kinds), title=title, given=given, instructions=instructions,
        items=hardest_items(db, hardest) if from_class else None,
    )
    files = documents(sheet_model, chosen_format, output, key_mode, split=split, duplex=duplex)
    for path, data in files:
        write_atomic(path, data, example="quiz.html", inputs=read)
    out.print(_report(sheet_model, chosen_format, files, key_mode))
    if sheet_model.left_out and chosen_format not in BANKS:
        out.print(escape(ngettext(
            "Left out {count} question that would give another away: {items} (bertdrill check says how).",
            "Left out {count} questions that would give others away: {items} (bertdrill check says how).",
            len(sheet_model.left_out)).format(count=len(sheet_model.left_out), items=", ".join(sheet_model.left_out))))


def _report(sheet_model, chosen_format: str, files: list[tuple[Path, bytes]], key_mode: str) -> str:
    """One line on what was written, and the seed that writes it again."""
    written = _(" and ").join(escape(str(path)) for path, _data in files)
    if chosen_format in ("gift", "moodle-xml"):
        note = _(" (Moodle shuffles per attempt, so --versions does not apply)") if len(sheet_model.versions) > 1 else ""
        what = ngettext("{count} question for Moodle's question bank{note}",
                        "{count} questions for Moodle's question bank{note}", len(sheet_model.bank)).format(
            count=number(len(sheet_model.bank)), note=note)
    else:
        first, many = sheet_model.versions[0], len(sheet_model.versions) > 1
        letters = ", ".join(version.letter for version in sheet_model.versions)
        questions = ngettext("{count} question", "{count} questions", len(first.questions)).format(
            count=number(len(first.questions)))
        points = ngettext("{count} point", "{count} points", first.points).format(count=number(first.points))
        what = (_("{versions} versions ({letters}), {questions} and {points} each") if many
                else _("1 version ({letters}), {questions} and {points}")).format(
            versions=len(sheet_model.versions), letters=letters, questions=questions, points=points)
        what += {"pages": _("; answer keys on the last pages") if many else _("; the answer key on the last pages"),
                 "separate": _("; answer keys in the second file") if many else _("; the answer key in the second file"),
                 "none": _("; no answer key")}[key_mode]
    return _("Wrote {files}: {what}. Seed {seed} (--seed {seed} writes the same again).").format(
        files=written, what=what, seed=sheet_model.seed)
