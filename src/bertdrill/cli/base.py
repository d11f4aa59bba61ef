"""The root typer app and what every command group shares: consoles, options, lesson loading.

Start-up is kept light (``bertdrill --help`` within 1.5x of ``import typer``, see
docs/robustness.md): rich is imported when something is first printed, not when a
command module is imported, and help is click's plain text (typer's rich help imports
rich's Markdown and traceback renderers, pygments with them: about 150 ms).
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeVar, cast

import typer
import typer.main
from typer.core import TyperArgument, TyperCommand, TyperGroup
from typer.models import CommandFunctionType, CommandInfo, TyperInfo

try:  # recent typer vendors click; older releases use click itself
    from typer._click.core import Command as ClickCommand
    from typer._click.core import Context as ClickContext
    from typer._click.exceptions import ClickException
    from typer._click.formatting import HelpFormatter
except ImportError:  # pragma: no cover
    from click.core import Command as ClickCommand  # type: ignore[import-not-found, no-redef, assignment, unused-ignore]
    from click.core import Context as ClickContext  # type: ignore[import-not-found, no-redef, assignment, unused-ignore]
    from click.exceptions import ClickException  # type: ignore[import-not-found, no-redef, assignment, unused-ignore]
    from click.formatting import HelpFormatter  # type: ignore[import-not-found, no-redef, assignment, unused-ignore]

from bertdrill import __version__
from bertdrill.core import i18n
from bertdrill.core.errors import BertdrillError, LessonErrors
from bertdrill.core.i18n import _, ngettext

if TYPE_CHECKING:
    from rich.console import Console

    from bertdrill.adapters.export.files import Input
    from bertdrill.adapters.lessons import LessonCache, LessonIndex
    from bertdrill.adapters.store import Store
    from bertdrill.core.cards import Card
    from bertdrill.core.lesson import Lesson
    from bertdrill.ports import CardManagement, ReviewStore, Scheduler, SchedulerChoice, SyncCard


class LazyConsole:
    """A rich ``Console``, made on first use by ``make``; attributes are read from it and set on it."""

    _make: Callable[[], Console]
    _console: Console | None

    def __init__(self, make: Callable[[], Console]):
        self.__dict__["_make"] = make  # __setattr__ passes everything on to the console
        self.__dict__["_console"] = None

    def get(self) -> Console:
        """The Console itself, made now if need be."""
        if self._console is None:
            self.__dict__["_console"] = self._make()
        assert self._console is not None
        return self._console

    def __getattr__(self, name: str) -> object:
        return getattr(self.get(), name)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self.get(), name, value)

    def __enter__(self) -> Console:  # rich's Live uses `with console:`; dunders are looked up on the class
        return self.get().__enter__()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.get().__exit__(kind, error, trace)


def _stdout() -> Console:
    # Plain text on stdout when it is not a terminal (pipes, scripts, tests); rich honours NO_COLOR itself.
    # emoji=False: a lesson's ":thumbs_up:" is text, not a picture (markup escaping does not cover emoji codes).
    from rich.console import Console

    return Console(highlight=False, emoji=False, soft_wrap=not sys.stdout.isatty())


def _stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, emoji=False, soft_wrap=True)


# Typed as the Console each stands for, so mypy checks every call against rich's own signatures.
out = cast("Console", LazyConsole(_stdout))
err = cast("Console", LazyConsole(_stderr))

_WORD_JOINER = "\u2060"


def escape(text: str) -> str:
    """Text from a lesson, a database or a person, made safe to print with rich: shown as it is.

    rich.markup.escape keeps ``[bold]`` from being read as markup; control characters become
    visible symbols (``␛``). A trailing backslash is kept from escaping whatever markup follows
    by an invisible word joiner, where rich.markup.escape would double it on screen.
    """
    from rich.markup import escape as escape_markup

    from bertdrill.core.text import show_controls

    text = show_controls(text)  # ESC sequences in a lesson could recolour, retitle or clear the terminal
    body = text.rstrip("\\")
    tail = text[len(body):]
    return escape_markup(body) + (tail + _WORD_JOINER if tail else "")


def print_lines(lines: Sequence[str]) -> None:
    """Lines of text from a database, a lesson or a person, shown as they are (:func:`escape`), through rich in one
    call: rich renders each ``print`` on its own (1,000 lines: 55 ms one by one, 10 ms at once; the same text)."""
    if lines:
        out.print("\n".join(escape(line) for line in lines))


def print_json(data: object) -> None:
    """``data`` as indented JSON on standard output: plain text, and highlighted only on a terminal.

    rich's highlighting costs about 0.7 ms per card (7 s for the cards of a 10,000-item lesson,
    against 0.9 s to check it), so scripts and pipes get the same text, written directly. Always valid
    JSON: a number that is not one (NaN, infinity, read back from a database row) is ``null``.
    """
    import json

    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, allow_nan=False)
    if out.is_terminal:
        out.print_json(encoder.encode(_finite(data)))
        return
    # written as it is encoded: the whole text of 100,000 cards, made first, took 200 MB (indented JSON is encoded
    # in Python, a string per token)
    chunks: list[str] = []
    for chunk in encoder.iterencode(_finite(data)):
        chunks.append(chunk)
        if len(chunks) == 8192:
            out.file.write("".join(chunks))
            chunks.clear()
    out.file.write("".join(chunks) + "\n")


def print_json_items(items: Iterable[object]) -> None:
    """:func:`print_json` of a list, each item encoded and written as it comes: the same text as the list's, and
    only one item is held (``bertdrill cards --json`` of 100,000 cards)."""
    import json

    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, allow_nan=False)
    write = _json_writer()
    shown = 0
    pending: list[str] = []
    for item in items:
        pending.append(("[\n  " if not shown else ",\n  ") + encoder.encode(_finite(item)).replace("\n", "\n  "))
        shown += 1
        if len(pending) == 256:
            write("".join(pending))
            pending.clear()
    write("".join(pending) + ("\n]\n" if shown else "[]\n"))


def _json_writer() -> Callable[[str], None]:
    """Where JSON text goes: standard output as it is, or highlighted on a terminal as ``print_json`` does."""
    if not out.is_terminal:
        file = out.file

        def written(chunk: str) -> None:
            file.write(chunk)

        return written
    from rich.highlighter import JSONHighlighter
    from rich.text import Text

    highlighter = JSONHighlighter()

    def highlighted(chunk: str) -> None:
        text = highlighter(Text(chunk))
        text.no_wrap, text.overflow = True, None  # as rich's print_json shows JSON
        out.print(text, soft_wrap=True, end="")

    return highlighted


def _finite(data: object) -> object:
    """``data`` with every NaN and infinity as None: JSON has no such numbers (``NaN`` is no JSON)."""
    match data:
        case float() if data != data or data in (float("inf"), float("-inf")):
            return None
        case dict():
            return {key: _finite(value) for key, value in data.items()}
        case list() | tuple():
            return [_finite(value) for value in data]
    return data


debug = {"on": bool(os.environ.get("BERTDRILL_DEBUG"))}
T = TypeVar("T")
L = TypeVar("L", "Lesson", "LessonIndex")  # a lesson, or its index: what a command is given to work on
PROGRESS_AFTER = 0.3  # seconds of work before a progress bar appears: quick work never flickers


class BertdrillGroup(TyperGroup):
    """The root command: the one place that turns errors into messages and exit codes, and the one that builds
    a command when it is first looked up (:class:`CommandsBuiltWhenUsed`).

    Anticipated failures (:class:`BertdrillError`) print ``Error: ...`` or
    ``file:line: ...`` lines on stderr and exit 1; Ctrl-C exits 130; anything
    unexpected prints one line (``--debug`` shows the traceback) and exits 1.
    """

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        self.commands = CommandsBuiltWhenUsed(app)

    def list_commands(self, ctx: ClickContext) -> list[str]:
        return list(self.commands)  # the names alone: typer's own list reads every command, which builds it

    def format_commands(self, ctx: ClickContext, formatter: HelpFormatter) -> None:
        commands = self.commands
        assert isinstance(commands, CommandsBuiltWhenUsed)
        with commands.listed():  # the list shows each command's name and help alone: none need be built
            super().format_commands(ctx, formatter)

    def invoke(self, ctx: ClickContext) -> object:
        try:
            return super().invoke(ctx)
        except LessonErrors as exc:
            for error in exc.errors:
                err.print(escape(str(error)))
            raise typer.Exit(1) from None
        except BertdrillError as exc:
            err.print(_("Error: {message}").format(message=escape(str(exc))))
            raise typer.Exit(1) from None
        except (KeyboardInterrupt, EOFError):
            err.print(_("Interrupted."))
            raise typer.Exit(130) from None
        except ClickException as exc:
            exc.message = plain_usage_message(exc.message)
            raise
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if debug["on"]:
                traceback.print_exc()
            else:
                err.print(_("Error: unexpected {name}: {message} (run with --debug for details)").format(
                    name=type(exc).__name__, message=escape(str(exc))))
            raise typer.Exit(1) from None


_PYDANTIC_WORDING = (
    ("Value error, ", ""),  # typer checks choices through pydantic, which prefixes the message so
    ("Input should be a valid integer, unable to parse string as an integer", "not a whole number"),
    ("Input should be a valid number, unable to parse string as a number", "not a number"),
)


def plain_usage_message(message: str) -> str:
    """A usage error as a person reads it: ``'xyz' is not one of 'sm2', 'fsrs'.``, without pydantic's words."""
    for wording, plain in _PYDANTIC_WORDING:
        message = message.replace(wording, plain)
    return message


class DeferringTyper(typer.Typer):
    """The root app, whose commands and groups are kept aside as they are registered, for its group to build
    each when it is first looked up (:class:`CommandsBuiltWhenUsed`). typer builds the click command of every
    command it holds before it reads the command line: each signature's annotations evaluated, 93 options made,
    about 40 ms of every start-up, for a run that uses one command."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        self.deferred: list[CommandInfo | TyperInfo] = []

    def command(self, *args: Any, **settings: Any) -> Callable[[CommandFunctionType], CommandFunctionType]:
        register = super().command(*args, **settings)

        def deferring(function: CommandFunctionType) -> CommandFunctionType:
            register(function)
            self.deferred.append(self.registered_commands.pop())
            return function

        return deferring

    def add_typer(self, *args: Any, **settings: Any) -> None:
        super().add_typer(*args, **settings)
        self.deferred.append(self.registered_groups.pop())


class CommandsBuiltWhenUsed(MutableMapping[str, "ClickCommand"]):
    """The root's commands by name, in the order they were registered; each is built by typer (as typer would
    have built it with the rest) when it is first read: to run it, to list it in ``--help``, to complete it."""

    def __init__(self, root: DeferringTyper):
        self._root = root
        # typer lists the commands first, then the groups
        listed = sorted(root.deferred, key=lambda info: isinstance(info, TyperInfo))  # sorted() is stable
        self._registered = {_command_name(info): info for info in listed}
        self._built: dict[str, ClickCommand] = {}

    _listing = False

    def __getitem__(self, name: str) -> ClickCommand:
        if name not in self._built:
            if self._listing:
                return _listed(name, self._registered[name])
            self._built[name] = self._build(self._registered[name])
        return self._built[name]

    @contextmanager
    def listed(self) -> Iterator[None]:
        """While ``--help`` lists the commands: a command not built yet is read as a stand-in that holds only
        what the list shows (its name, help, short help, whether it is hidden or deprecated), as typer would
        have built it."""
        self._listing = True
        try:
            yield
        finally:
            self._listing = False

    def _build(self, info: CommandInfo | TyperInfo) -> ClickCommand:
        root = self._root
        if isinstance(info, CommandInfo):
            return typer.main.get_command_from_info(
                info, pretty_exceptions_short=root.pretty_exceptions_short, rich_markup_mode=root.rich_markup_mode)
        return typer.main.get_group_from_info(
            info, pretty_exceptions_short=root.pretty_exceptions_short, rich_markup_mode=root.rich_markup_mode,
            suggest_commands=root.suggest_commands)

    def __setitem__(self, name: str, command: ClickCommand) -> None:  # click's add_command: built already
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        self._built.pop(name, None)
        self._registered.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self._registered
        yield from (name for name in self._built if name not in self._registered)

    def __len__(self) -> int:
        return len(self._registered) + sum(name not in self._registered for name in self._built)


def _listed(name: str, info: CommandInfo | TyperInfo) -> ClickCommand:
    """A command as ``--help`` lists it, without its options: the help typer would give it (a command's own, else
    its function's docstring; a group's as typer solves it)."""
    if isinstance(info, CommandInfo):
        text = inspect.getdoc(info.callback) if info.help is None else inspect.cleandoc(info.help)
        return TyperCommand(name=name, help=text, short_help=info.short_help, hidden=info.hidden,
                            deprecated=info.deprecated)
    solved = typer.main.solve_typer_info_defaults(info)
    return TyperCommand(name=name, help=solved.help, short_help=solved.short_help, hidden=solved.hidden,
                        deprecated=solved.deprecated)


def _command_name(info: CommandInfo | TyperInfo) -> str:
    """The name typer gives a registered command or group."""
    if isinstance(info, CommandInfo):
        return info.name or typer.main.get_command_name(info.callback.__name__)  # type: ignore[union-attr]
    name = typer.main.solve_typer_info_defaults(info).name
    assert isinstance(name, str), "every group is added with its name"
    return name


app = DeferringTyper(
    cls=BertdrillGroup,
    name="bertdrill",
    help="Turn a technical lesson into things people practise with: spaced review, Anki decks, quiz sheets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,  # plain help: see the module's docstring
)


_chosen = {"explicitly": False}  # whether this command's language was asked for (--lang, $BERTDRILL_LANG)


def choose_language(value: str | None) -> str:
    """Resolve ``--lang`` (else $BERTDRILL_LANG, else the locale, else English) and speak it from now on."""
    from bertdrill.adapters.catalogs import known_languages, use

    try:
        language = i18n.choose_language(value, os.environ, known_languages())
    except ValueError as exc:
        raise typer.BadParameter(_("{value!r} is not a language code such as en or tr").format(value=str(exc))) from None
    _chosen["explicitly"] = bool(value or os.environ.get("BERTDRILL_LANG"))
    use(language)
    return language


class _HasLanguages(Protocol):
    """A lesson, or its index: what choosing the texts' language needs."""

    @property
    def id(self) -> str: ...
    @property
    def languages(self) -> tuple[str, ...]: ...


def texts_language(lessons: Sequence[_HasLanguages], language: str, *, refuse: bool = True) -> str:
    """The language to show these lessons' texts in: the chosen one. A language that only came from the
    locale is a preference: where a lesson lacks it, English, else the first language every lesson has (the
    messages stay in the locale's language). A language asked for that a lesson lacks is an error, or, with
    ``refuse=False``, given back for the command to refuse in its own words."""
    missing = [lesson for lesson in lessons if language not in lesson.languages]
    if not missing:
        return language
    if not _chosen["explicitly"]:
        common = [code for code in lessons[0].languages if all(code in lesson.languages for lesson in lessons)]
        if common:
            return i18n.ENGLISH if i18n.ENGLISH in common else common[0]
    if not refuse:
        return language
    lesson = missing[0]
    raise BertdrillError(_("lesson {lesson} has no {language!r} texts (it has {languages}); use --lang {first}")
                         .format(lesson=lesson.id, language=language, languages=", ".join(lesson.languages),
                                 first=lesson.languages[0]))


# Eager, so the language is chosen before the other options are read and their errors are in it too.
LangOption = Annotated[str, typer.Option(
    "--lang", "-l", metavar="LANG", callback=choose_language, is_eager=True, show_default=False,
    help="Language of the lesson texts and of bertdrill's messages (default: $BERTDRILL_LANG, else the "
         "locale's language, else en).")]
DbOption = Annotated[str | None, typer.Option(
    "--db", metavar="PATH_OR_URL", show_default=False,
    help="Database file or sqlite:/// URL, or a class's postgresql:// URL (default: $BERTDRILL_DB, else "
         "$BERTDRILL_HOME/bertdrill.db, else the user data folder).")]
LearnerOption = Annotated[str | None, typer.Option(
    "--learner", envvar="BERTDRILL_LEARNER", show_default=False,
    help="Whose reviews (default: $BERTDRILL_LEARNER, else your login name; in a class, your database role).")]
FilesOption = Annotated[list[Path] | None, typer.Option(
    "--file", "-f", metavar="FILE", show_default=False, help="Use these lesson files instead of the shipped lessons.")]
ForceOption = Annotated[bool, typer.Option(
    "--force", help="Replace the output file even if it is not one bertdrill wrote (without it, such a file is "
                    "refused and left as it was).")]
LessonOption = Annotated[str | None, typer.Option("--lesson", show_default=False, help="Only this lesson (id).")]
NewOption = Annotated[int, typer.Option(
    "--new", min=0, envvar="BERTDRILL_NEW_PER_DAY", help="New cards per study day.")]
LimitOption = Annotated[int, typer.Option(
    "--limit", min=0, envvar="BERTDRILL_LIMIT_PER_DAY", help="Cards per study day, due and new together.")]
RolloverOption = Annotated[int, typer.Option(
    "--rollover-hour", min=0, max=23, envvar="BERTDRILL_ROLLOVER_HOUR",
    help="Hour when a new study day starts (a review at 00:30 counts for the day before).")]
LessonsArgument = Annotated[
    list[Path] | None,
    typer.Argument(metavar="PATH", help="Lesson files or folders (default: the lessons that ship with bertdrill).",
                   show_default=False),
]


def _argument_type(self: TyperArgument, ctx: object) -> str | None:
    """An argument with a metavar is shown by it alone, as an option with one is: typer 0.29 adds the Python
    type after it (``[ITEM] SCRIPT <list[str]>``), which tells a learner nothing."""
    return None if self.metavar else TyperArgument.display_type(self, ctx)  # type: ignore[arg-type]


TyperArgument.display_type_rich = _argument_type  # type: ignore[method-assign,assignment]


def number(value: int) -> str:
    """A count written the interface language's way: 1,234 in English, 1.234 in Turkish."""
    from bertdrill.core.languages import written_count

    return written_count(value, i18n.language())


def day_count(count: int) -> str:
    return ngettext("{count} day", "{count} days", count).format(count=number(count))


def card_count(count: int) -> str:
    return ngettext("{count} card", "{count} cards", count).format(count=number(count))


def decimal(value: float, places: int) -> str:
    """A decimal written the interface language's way: 57.1 in English, 57,1 in Turkish."""
    from bertdrill.core.languages import written_decimal

    return written_decimal(value, places, i18n.language())


def percent(number_text: str) -> str:
    """``57.1%`` in English, ``%57,1`` in Turkish (CLDR's patterns): where the sign goes is the catalog's. No
    space inside, so a narrow terminal never wraps the number and its sign apart."""
    return _("{number}%").format(number=number_text)


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


def load(paths: list[Path] | None) -> list[Lesson]:
    """The lessons named on the command line, or the shipped ones, parsed and verified."""
    import gc

    from bertdrill.adapters.lessons import load_lessons
    from bertdrill.core import collector

    with collector.paused():  # a parsed lesson is many small objects, none of them garbage
        lessons = load_lessons(list(paths) if paths else None,
                               track=lambda files: progress(files, _("Reading lessons")), cache=lesson_cache())
    # The lessons live as long as the command: the cycle collector need not walk them again each time the
    # cards built from them fill a generation (a quarter of compiling 100,000 items' cards went to that).
    gc.freeze()
    return lessons


def inputs(paths: list[Path] | None, db: str | None = None) -> list[Input]:
    """What a command that writes a file reads, so its output never replaces it: the lesson files (named
    or shipped) and the review database in use (``--db``, ``$BERTDRILL_DB`` or the default), journals too."""
    from bertdrill.adapters.export.files import Input, InputKind
    from bertdrill.adapters.lessons import expand, shipped_paths

    lessons = [Input(path, InputKind.LESSON) for path in (expand(list(paths)) if paths else shipped_paths())]
    return lessons + database_files(db)


def database_files(db: str | None) -> list[Input]:
    """The SQLite database in use and its journal files; none for PostgreSQL or a URL that is refused anyway."""
    from bertdrill.adapters.export.files import Input, InputKind
    from bertdrill.adapters.store.sqlite import database_url

    try:
        url = database_url(db)
    except BertdrillError:
        return []  # the command that opens it says what is wrong with it
    if url.get_backend_name() != "sqlite" or not url.database:
        return []
    path = Path(url.database.removeprefix("file:"))
    return [Input(Path(f"{path}{suffix}"), InputKind.DATABASE, str(path)) for suffix in ("", "-wal", "-shm", "-journal")]


def lesson_cache() -> LessonCache:
    """The cache of verified lessons (:class:`bertdrill.adapters.lessons.LessonCache`), written through the one
    atomic writer."""
    from bertdrill.adapters.lessons import LessonCache, cache_folder

    return LessonCache(cache_folder(), _write_cache_file)


def _write_cache_file(path: Path, data: bytes) -> None:
    """A file of the lesson cache, through the one atomic writer, whose module loads only when an entry is written
    (a command whose lessons are all cached writes none: 2 ms of each ``status`` and ``stats``)."""
    from bertdrill.adapters.export.files import Replace, write_atomic

    write_atomic(path, data, replace=Replace.ANY)  # bertdrill's own files, in a folder of its own: replaced


def progress(items: Sequence[T], description: str, *, after: float = PROGRESS_AFTER) -> Iterator[T]:
    """Yield ``items``, with a rich progress bar on a terminal once the work has taken ``after`` seconds.

    Quiet when standard output is not a terminal (pipes, scripts, tests), and the bar is
    cleared when done, so it never mixes with what the command prints.
    """
    if not out.is_terminal:
        yield from items
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    started = time.monotonic()
    bar = task = None
    step = max(1, len(items) // 1000)  # the bar moves a thousand times at most: rich's update costs microseconds
    try:
        for done, item in enumerate(items, start=1):
            if bar is None and time.monotonic() - started > after:
                bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                               TimeRemainingColumn(), console=out, transient=True)
                bar.start()
                task = bar.add_task(description, total=len(items), completed=done - 1)
            yield item
            if bar is not None and task is not None and (done % step == 0 or done == len(items)):
                bar.update(task, completed=done)
    finally:
        if bar is not None:
            bar.stop()


def chosen_lessons(lessons: list[L], lesson_id: str | None) -> list[L]:
    """The lesson ``--lesson`` names (an error if none has that id), else all of them."""
    from bertdrill.adapters.lessons import find_lesson

    return [find_lesson(lessons, lesson_id)] if lesson_id else lessons


def open_store(db: str | None, paths: list[Path] | None, lesson_id: str | None, language: str | None, *,
               read_only: bool = False, loaded: list[Lesson] | None = None,
               learner: str | None = None) -> tuple[ReviewStore, list[Card], list[str]]:
    """The store (created or migrated), synced with the lessons; the cards and lessons to review.

    Use the store in a ``with`` block, so it is closed on every path. ``read_only``: for the
    commands that only read (``status``, ``stats``): an up-to-date file is not written to
    unless its lessons changed (see :meth:`bertdrill.adapters.store.Store.open`). ``loaded``: the lessons,
    when the caller has read them already (``review`` needs them for diagnosis).
    """
    from bertdrill.core.cards import compile_lesson

    lessons = loaded if loaded is not None else load(paths)
    chosen = chosen_lessons(lessons, lesson_id)
    if language:
        texts_language(chosen, language)
    compiled = {lesson.id: compile_lesson(lesson) for lesson in progress(lessons, _("Building cards"))}
    store = _synced([card for cards in compiled.values() for card in cards], db, read_only, learner)
    return store, [card for lesson in chosen for card in compiled[lesson.id]], [lesson.id for lesson in chosen]


def load_indexed(paths: list[Path] | None, *, handover: bool = False) -> list[LessonIndex]:
    """The lessons named on the command line, or the shipped ones, each as its index
    (:class:`bertdrill.adapters.lessons.LessonIndex`): an unchanged lesson is neither parsed nor rebuilt;
    ``handover``: the last one verified is kept at hand, for a command that reads each whole."""
    from bertdrill.adapters.lessons import load_indexes

    return load_indexes(list(paths) if paths else None, track=lambda files: progress(files, _("Reading lessons")),
                        cache=lesson_cache(), handover=handover)


def open_indexed_store(db: str | None, paths: list[Path] | None, lesson_id: str | None, language: str | None, *,
                       read_only: bool = False, learner: str | None = None, loaded: list[LessonIndex] | None = None,
                       ) -> tuple[ReviewStore, list[LessonIndex], list[str]]:
    """:func:`open_store` for the commands that show few cards or none (``status``, ``stats``, ``review``):
    the lessons as their indexes (:func:`load_indexed`, or ``loaded``), synced by their digests, so an
    unchanged lesson's cards are not even read; the chosen lessons' indexes and ids. A card is built when
    it is shown (:meth:`bertdrill.adapters.lessons.LessonIndex.cards_of`)."""
    indexes = loaded if loaded is not None else load_indexed(paths)
    chosen = chosen_lessons(indexes, lesson_id)
    if language:
        texts_language(chosen, language)  # a language asked for that a lesson lacks is refused, as review does
    store = _store_class().open(db, read_only=read_only, learner=learner)
    with _closed_on_error(store):
        store.sync_lessons(indexes, track=lambda stale: progress(stale, _("Syncing lessons")))
    return store, chosen, [index.id for index in chosen]


def cards_by_id(indexes: Sequence[LessonIndex], card_ids: Iterable[str]) -> dict[str, Card]:
    """The cards of these lessons with these ids, built (ids of no card of theirs are left out)."""
    wanted: dict[str, list[str]] = {}
    for card_id in card_ids:
        wanted.setdefault(card_id.partition("/")[0], []).append(card_id)
    found: dict[str, Card] = {}
    for index in indexes:
        found.update(index.cards_of(wanted.get(index.id, ())))
    return found


def _synced(cards: Sequence[SyncCard], db: str | None, read_only: bool, learner: str | None) -> ReviewStore:
    store = _store_class().open(db, read_only=read_only, learner=learner)
    with _closed_on_error(store):
        store.sync(cards, track=lambda stale: progress(stale, _("Syncing lessons")))
    return store


def _store_class() -> type[Store]:
    """The store's class, its modules (SQLAlchemy, SQLModel, the tables: some 50,000 objects the cycle collector
    tracks) imported with the collector paused, then frozen out of it (:func:`bertdrill.core.collector.paused`):
    they live as long as the process and none is garbage, yet the collector walked them as they came, once in a
    full pass (`stats` on the 1M store: 43 ms of collections, 14 with them frozen). Paused alone, its first pass
    after would walk them all at once."""
    from bertdrill.core import collector

    with collector.paused(freeze=True):
        from bertdrill.adapters.store import Store
    return Store


def managing(store: ReviewStore) -> CardManagement:
    """The store as :class:`bertdrill.ports.CardManagement`: every store bertdrill opens is one (mypy checks the
    SQL and memory stores against both protocols)."""
    return cast("CardManagement", store)


def chosen_scheduler(store: ReviewStore) -> Scheduler:
    """The scheduler the learner chose (``bertdrill scheduler``), with its settings: parameters, exams, spread."""
    return scheduler_of(store.scheduler_choice())


def scheduler_of(choice: SchedulerChoice) -> Scheduler:
    """The scheduler a choice names, with its parameters and exams, its intervals spread as the choice says
    (fuzz and the load balancer: :mod:`bertdrill.core.scheduling.spread`); what a switch replays with too."""
    from bertdrill.core.scheduling.registry import scheduler_chosen
    from bertdrill.core.scheduling.spread import spread_chosen

    return spread_chosen(scheduler_chosen(
        choice.name, choice.retention, choice.fitted.parameters if choice.fitted else None, choice.exam,
        choice.exam_target, [(each.lesson, each.exam, each.target) for each in choice.lesson_exams]), choice.spread)


def settled(session: T) -> T:
    """A review session just built, and everything alive with it, frozen out of the cycle collector
    (:func:`gc.freeze`): its queue and cards live as long as the session, and none of them is garbage. Unfrozen, the
    collector's full passes, one every few thousand answers, walked them all while a card waited: at 100,000 cards
    about 0.2 s each (0.2 ms an answer over ``benchmarks/answering.py``'s 1,000 answers, against 0.05 at 1,000
    cards). What the session makes afterwards is collected as ever; a frozen object still goes when nothing holds it.
    ``bertdrill review`` and ``benchmarks/answering.py`` both settle the session they build."""
    import gc

    gc.freeze()
    return session


@contextmanager
def _closed_on_error(store: ReviewStore) -> Iterator[None]:
    try:
        yield
    except BaseException:
        store.close()
        raise


def _local_now() -> datetime:
    """The wall clock as an aware local time (what :func:`bertdrill.app.session.local_now` is)."""
    return datetime.now().astimezone()


CLOCK_YEARS = (1970, 9000)
_DATE_ONLY = re.compile(r"\A\d{4}-?\d{2}-?\d{2}\Z")  # ISO 8601 dates, extended and basic
"""The years BERTDRILL_NOW may name: every date worked out from it (a study day, due dates years ahead,
a year of history behind, another time zone) is then a date Python can hold."""


def clock() -> Callable[[], datetime]:
    """The wall clock, or one started at ``BERTDRILL_NOW`` (ISO 8601) for scripts and checks.

    A time with an offset (``2025-03-03T09:00+03:00``) is that wall time in that offset, so a
    script means the same study day on every machine; a time without one is local time. A date
    alone (``2025-03-03``) means that study day: noon, local time (midnight would fall before the
    rollover hour and so belong to the day before).
    """
    start_text = os.environ.get("BERTDRILL_NOW")
    if not start_text:
        return _local_now  # the session's default clock, without loading the session (status needs none)
    try:
        start = datetime.fromisoformat(start_text)
        if _DATE_ONLY.match(start_text.strip()):
            start = start.replace(hour=12)
    except ValueError:
        raise BertdrillError(_("BERTDRILL_NOW={value!r} is not a date and time such as 2024-05-01T09:00").format(
            value=start_text)) from None
    if not CLOCK_YEARS[0] <= start.year <= CLOCK_YEARS[1]:  # room for due dates, a year of history, time zones
        raise BertdrillError(_("BERTDRILL_NOW={text!r} is outside the years {first} to {last}").format(
            text=start_text, first=CLOCK_YEARS[0], last=CLOCK_YEARS[1]))
    start = start if start.tzinfo else start.astimezone()
    began = time.monotonic()
    return lambda: start + timedelta(seconds=time.monotonic() - began)
