"""The root typer app and what every command group shares: consoles, options, lesson loading.

Start-up is kept light (``bertdrill --help`` within 1.5x of ``import typer``, see
docs/robustness.md): rich is imported when something is first printed, not when a
command module is imported, and help is click's plain text (typer's rich help imports
rich's Markdown and traceback renderers, pygments with them: about 150 ms).
"""

from __future__ import annotations

import os
import sys
import traceback
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

try:  # recent typer vendors click; older releases use click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover
    from click.exceptions import ClickException

from .. import __version__
from ..errors import BertdrillError, LessonErrors


class LazyConsole:
    """A rich ``Console``, made on first use; attributes are read from it and set on it."""

    def __init__(self, **options):
        self.__dict__["_options"] = options
        self.__dict__["_console"] = None

    def _get(self):
        if self._console is None:
            from rich.console import Console

            options = {name: value() if callable(value) else value for name, value in self._options.items()}
            self.__dict__["_console"] = Console(**options)
        return self._console

    def __getattr__(self, name):
        return getattr(self._get(), name)

    def __setattr__(self, name, value):
        setattr(self._get(), name, value)


# Plain text on stdout when it is not a terminal (pipes, scripts, tests); rich honours NO_COLOR itself.
# emoji=False: a lesson's ":thumbs_up:" is text, not a picture (markup escaping does not cover emoji codes).
out = LazyConsole(highlight=False, emoji=False, soft_wrap=lambda: not sys.stdout.isatty())
err = LazyConsole(stderr=True, highlight=False, emoji=False, soft_wrap=True)

# C0 controls (but newline and tab), DEL and C1 controls: shown as symbols, never sent to the terminal,
# where ESC sequences in a lesson could recolour, retitle or clear it. Lesson text is data.
_CONTROLS = {code: 0x2400 + code for code in range(0x20) if chr(code) not in "\n\t"}
_CONTROLS |= {0x7F: 0x2421} | {code: 0xFFFD for code in range(0x80, 0xA0)}
_WORD_JOINER = "\u2060"


def escape(text: str) -> str:
    """Text from a lesson, a database or a person, made safe to print with rich: shown as it is.

    rich.markup.escape keeps ``[bold]`` from being read as markup; control characters become
    visible symbols (``␛``). A trailing backslash is kept from escaping whatever markup follows
    by an invisible word joiner, where rich.markup.escape would double it on screen.
    """
    from rich.markup import escape as escape_markup

    text = text.translate(_CONTROLS)
    body = text.rstrip("\\")
    tail = text[len(body):]
    return escape_markup(body) + (tail + _WORD_JOINER if tail else "")


debug = {"on": bool(os.environ.get("BERTDRILL_DEBUG"))}


class BertdrillGroup(TyperGroup):
    """The one place that turns errors into messages and exit codes.

    Anticipated failures (:class:`BertdrillError`) print ``Error: ...`` or
    ``file:line: ...`` lines on stderr and exit 1; Ctrl-C exits 130; anything
    unexpected prints one line (``--debug`` shows the traceback) and exits 1.
    """

    def invoke(self, ctx):
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
    rich_markup_mode=None,  # plain help: see the module's docstring
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
