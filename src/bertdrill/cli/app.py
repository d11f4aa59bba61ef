"""The root typer app and what every command group shares: consoles, options, lesson loading."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .. import __version__

app = typer.Typer(
    name="bertdrill",
    help="Turn a technical lesson into things people practise with: spaced review, Anki decks, quiz sheets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="rich",
)

# Plain text on stdout when it is not a terminal (pipes, scripts, tests); rich honours NO_COLOR itself.
out = Console(highlight=False, soft_wrap=not sys.stdout.isatty())
err = Console(stderr=True, highlight=False, soft_wrap=True)

debug = {"on": bool(os.environ.get("BERTDRILL_DEBUG"))}


class Language(str, Enum):
    en = "en"
    tr = "tr"


LangOption = Annotated[Language, typer.Option("--lang", "-l", help="Language of the lesson texts.")]
LessonsArgument = Annotated[
    list[Path] | None,
    typer.Argument(help="Lesson files or folders (default: the lessons that ship with bertdrill).", show_default=False),
]


def _version(value: bool) -> None:
    if value:
        out.print(f"bertdrill {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")] = False,
    debug_flag: Annotated[bool, typer.Option("--debug", help="Show tracebacks of unexpected errors.")] = False,
) -> None:
    """bertdrill: drill a technical lesson until it sticks."""
    if debug_flag:
        debug["on"] = True


def load(paths: list[Path] | None):
    """The lessons named on the command line, or the shipped ones, parsed and verified."""
    from ..loader import load_lessons

    return load_lessons(list(paths) if paths else None)
