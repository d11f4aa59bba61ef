"""Commands that turn lessons into files for other tools: ``export anki``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, overload

import typer

from bertdrill.cli.base import (
    ForceOption,
    LessonsArgument,
    app,
    choose_language,
    escape,
    inputs,
    load_indexed,
    number,
    out,
    progress,
    texts_language,
)
from bertdrill.cli.review import kind_name
from bertdrill.core.i18n import _, ngettext
from bertdrill.core.kinds import Kind

if TYPE_CHECKING:
    from bertdrill.adapters.lessons import LessonIndex
    from bertdrill.core.lesson import Lesson


class _ReadInTurn(Sequence["Lesson"]):
    """The lessons, each read whole from its index when its turn comes, and not kept: an export holds one lesson
    and its notes, written before the next is read (the 1M store's eight lessons, held together, were a third of a
    448 MB export)."""

    def __init__(self, indexes: Sequence[LessonIndex]):
        self._indexes = indexes

    def __len__(self) -> int:
        return len(self._indexes)

    @overload
    def __getitem__(self, at: int) -> Lesson: ...

    @overload
    def __getitem__(self, at: slice) -> Sequence[Lesson]: ...

    def __getitem__(self, at: int | slice) -> Lesson | Sequence[Lesson]:
        if isinstance(at, slice):
            return _ReadInTurn(self._indexes[at])
        return self._indexes[at].lesson()


export_app = typer.Typer(no_args_is_help=True, help="Write lessons as files for other tools.")
app.add_typer(export_app, name="export", help="Write lessons as files for other tools (Anki).")


def _notes_language(value: str | None) -> str:
    """``all``, or a language as ``--lang`` reads it; messages follow $BERTDRILL_LANG or the locale for ``all``."""
    if value and value.strip().lower() == "all":
        choose_language(None)
        return "all"
    return choose_language(value)


@export_app.command("anki")
def anki(
    output: Annotated[Path, typer.Option("--output", "-o", metavar="FILE.apkg", help="The Anki package to write.",
                                         show_default=False)],
    paths: LessonsArgument = None,
    lang: Annotated[str, typer.Option(
        "--lang", "-l", metavar="LANG|all", callback=_notes_language, is_eager=True, show_default=False,
        help="Language of the notes and of the messages (default: $BERTDRILL_LANG, else the locale's, else en); "
             "'all' puts each language of a lesson in its own subdeck.")] = "",
    force: ForceOption = False,
) -> None:
    """Export lessons as an Anki package that updates in place when re-imported.

    Import the file in Anki with File > Import.
    Importing the export of an edited lesson updates its notes and keeps your review history.
    """
    from bertdrill.adapters.catalogs import translations
    from bertdrill.adapters.export.anki import check_target, export
    from bertdrill.adapters.export.files import Replace

    read, replace = inputs(paths), Replace.forced(force)
    check_target(output, replace=replace, inputs=read)  # before reading the lessons, which can take a while
    from bertdrill.adapters.export.anki import lesson_times

    indexes = load_indexed(paths, handover=True)  # an edited lesson is not read back just after verifying it
    package = export(_ReadInTurn(indexes), output,
                     lang if lang == "all" else texts_language(indexes, lang, refuse=False),
                     modified=lesson_times(indexes), track=lambda cards: progress(cards, _("Making notes")),
                     say_in=translations(), inputs=read, replace=replace)
    kinds = ", ".join(f"{number(count)} {kind_name(Kind(kind))}" for kind, count in sorted(package.kinds.items()))
    notes = ngettext("{count} note", "{count} notes", package.count).format(count=number(package.count))
    decks = ngettext("{count} deck", "{count} decks", len(package.decks)).format(count=number(len(package.decks)))
    out.print(_("Wrote {file}: {notes} ({kinds}), one card each, in {decks}:").format(
        file=escape(str(output)), notes=notes, kinds=kinds, decks=decks))
    for deck in package.decks:
        out.print(f"  {escape(deck.name)}")
