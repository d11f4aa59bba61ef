"""The root typer app and what every command group shares: consoles, options, lesson loading."""

from __future__ import annotations

import os
import sys
import traceback
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from typer.core import TyperGroup

try:  # recent typer vendors click; older releases use click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover
    from click.exceptions import ClickException

from .. import __version__
from ..errors import BertdrillError, LessonErrors

# Plain text on stdout when it is not a terminal (pipes, scripts, tests); rich honours NO_COLOR itself.
out = Console(highlight=False, soft_wrap=not sys.stdout.isatty())
err = Console(stderr=True, highlight=False, soft_wrap=True)

debug = {"on": bool(os.environ.get("BERTDRILL_DEBUG"))}


class BertdrillGroup(TyperGroup):
    """The one place that turns errors into messages and exit codes.

    Anticipated failures (:class:`BertdrillError`) print ``Error: ...`` or
    ``file:line: ...`` lines on stderr and exit 1; Ctrl-C exits 130; anything
    unexpected prints one line (``--debug`` shows the traceback) and exits 1.
    """

    def invoke(self, ctx):
        from rich.markup import escape

        try:
            return super().invoke(ctx)
        except LessonErrors as exc:
            for error in exc.errors:
                err.print(escape(str(error)))
            raise typer.Exit(1) from None
        except BertdrillError as exc:
            err.print(f"Error: {escape(str(exc))}")
            raise typer.Exit(1) from None
        except (KeyboardInterrupt, EOFError):
            err.print("Interrupted.")
            raise typer.Exit(130) from None
        except (ClickException, typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if debug["on"]:
                traceback.print_exc()
            else:
                err.print(f"Error: unexpected {type(exc).__name__}: {escape(str(exc))} (run with --debug for details)")
            raise typer.Exit(1) from None


app = typer.Typer(
    cls=BertdrillGroup,
    name="bertdrill",
    help="Turn a technical lesson into things people practise with: spaced review, Anki decks, quiz sheets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="rich",
)

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
