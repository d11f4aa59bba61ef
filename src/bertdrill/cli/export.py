"""Commands that turn lessons into files for other tools: ``export anki``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from .base import LessonsArgument, app, escape, load, out, progress

export_app = typer.Typer(no_args_is_help=True, help="Write lessons as files for other tools.")
app.add_typer(export_app, name="export", help="Write lessons as files for other tools (Anki).")


class ExportLanguage(StrEnum):
    en = "en"
    tr = "tr"
    all = "all"


@export_app.command("anki")
def anki(
    output: Annotated[Path, typer.Option("--output", "-o", metavar="FILE.apkg", help="The Anki package to write.",
                                         show_default=False)],
    paths: LessonsArgument = None,
    lang: Annotated[ExportLanguage, typer.Option("--lang", "-l", help="Language of the notes; 'all' puts each "
                                                 "language in its own subdeck.")] = ExportLanguage.en,
) -> None:
    """Export lessons as an Anki package that updates in place when re-imported.

    Import the file in Anki with File > Import.
    Importing the export of an edited lesson updates its notes and keeps your review history.
    """
    from ..anki import check_target, export

    check_target(output)  # before reading the lessons, which can take a while
    package = export(load(paths), output, lang.value, track=lambda cards: progress(cards, "Making notes"))
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(package.kinds.items()))
    decks = "deck" if len(package.decks) == 1 else "decks"
    out.print(f"Wrote {escape(str(output))}: {len(package.notes)} notes ({kinds}), one card each, "
              f"in {len(package.decks)} {decks}:")
    for deck in package.decks:
        out.print(f"  {escape(deck.name)}")
