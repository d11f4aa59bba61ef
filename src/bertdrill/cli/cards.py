"""``bertdrill cards``: the cards a lesson compiles into, found by a search, and managed as in Anki's browser.

``bertdrill cards [LESSON] [--search WORDS]`` lists them (an author's view, and a learner's way to find a
card's id); the subcommands act on one learner's cards, each action logged with the card's state before and
after it (the store's ``card_action`` table), so ``bertdrill cards undo`` takes the latest back.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import TYPE_CHECKING, Annotated, TypeVar, assert_never

import typer
from typer.core import TyperGroup

from bertdrill.cli.base import (
    DbOption,
    FilesOption,
    LangOption,
    LazyConsole,
    LearnerOption,
    RolloverOption,
    app,
    clock,
    escape,
    load_indexed,
    managing,
    number,
    open_indexed_store,
    out,
    print_json,
    texts_language,
)
from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _, ngettext, pgettext
from bertdrill.core.limits import DEFAULT_ROLLOVER

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from rich.table import Table
    from typer._click.core import Context

    from bertdrill.adapters.lessons import CardRow, LessonIndex
    from bertdrill.core.cards import Card
    from bertdrill.core.scheduling.actions import CardAction
    from bertdrill.ports import Action, Answer, CardState


class CardsGroup(TyperGroup):
    """``bertdrill cards LESSON``: a first word that names no subcommand is the lesson to list, as before
    ``cards`` had subcommands (``bertdrill cards bert-basics --json``)."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["--lesson", args[0], *args[1:]]
        return super().parse_args(ctx, args)


cards_app = typer.Typer(cls=CardsGroup, invoke_without_command=True, no_args_is_help=False,
                        help="Show the cards a lesson compiles into, find one, and manage yours: history, suspend, "
                             "unsuspend, forget, reset, reschedule, undo.")
app.add_typer(cards_app, name="cards")

CardsArgument = Annotated[list[str], typer.Argument(
    metavar="CARD...", show_default=False,
    help="Card ids (bert-basics/total-params@bert-base), without the lesson (total-params@bert-base), or an "
         "item id for all its cards (total-params); `bertdrill cards --search WORDS` finds them.")]


@cards_app.callback()
def cards(
    ctx: typer.Context,
    lesson_id: Annotated[str | None, typer.Option("--lesson", metavar="LESSON", show_default=False,
                                                  help="Lesson id (default: every lesson); also the first word: "
                                                       "bertdrill cards bert-basics.")] = None,
    search: Annotated[str | None, typer.Option(
        "--search", "-s", metavar="WORDS", show_default=False,
        help="Only the cards with every one of these words in their id, question, answer or explanation, in any "
             "language (case and Turkish i aside).")] = None,
    lang: LangOption = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    paths: FilesOption = None,
) -> None:
    """Show the cards a lesson compiles into, or the ones a search finds; manage yours with the commands below."""
    if ctx.invoked_subcommand is not None:
        return
    from bertdrill.cli.base import chosen_lessons, print_json_items
    from bertdrill.cli.lessons import _card_json

    lessons = chosen_lessons(load_indexed(paths), lesson_id)
    language = texts_language(lessons, lang)
    compiled = _streamed_cards(lessons, search)
    if as_json:
        print_json_items(_card_json(card, language) for card in compiled)
        return
    from itertools import islice

    first = list(islice(compiled, TABLE_AT_ONCE + 1))
    if search is not None and not first:
        out.print(_("No card has all of {words!r}.").format(words=search))
        return
    if len(first) <= TABLE_AT_ONCE:
        out.print(_cards_table(first, language, len(first)))
        return
    count = None if search is not None else sum(lesson.count for lesson in lessons)
    shown = _print_streamed(first, compiled, language, count)
    if count is None:
        out.print(ngettext("{count} card", "{count} cards", shown).format(count=number(shown)), style="italic")


# Up to this many cards, the list is one rich table, its columns as wide as their texts; beyond it, the rows are
# printed as they are built, in the columns rich makes for the first ones (rich measures every cell of a table
# before it prints a line: the 100,000 cards of eight lessons took 61 s and 710 MB, and nothing showed for a minute)
TABLE_AT_ONCE = 500


def _streamed_cards(lessons: Sequence[LessonIndex], search: str | None) -> Iterator[Card]:
    """The lessons' cards (those the search finds), a lesson at a time: only one lesson's are held."""
    from bertdrill.core import collector
    from bertdrill.core.cards import compile_lesson
    from bertdrill.core.cards import search as search_cards

    for lesson in lessons:
        with collector.paused():  # a lesson's cards are many small objects, none of them garbage
            cards = compile_lesson(lesson.lesson())
        yield from cards if search is None else search_cards(cards, search)
        del cards


def _cards_table(cards: Sequence[Card], language: str, count: int, widths: Sequence[int] | None = None) -> Table:
    from rich.table import Table

    table = Table(title=ngettext("{count} card", "{count} cards", count).format(count=number(count)),
                  show_lines=False, expand=False)
    for index, column in enumerate((pgettext("column", "id"), pgettext("column", "kind"),
                                    pgettext("column", "question"), pgettext("column", "answer"))):
        table.add_column(column, overflow="fold", width=widths[index] if widths else None)
    for card in cards:
        table.add_row(*(escape(cell) for cell in _cells(card, language)))
    return table


def _cells(card: Card, language: str) -> tuple[str, str, str, str]:
    from bertdrill.cli.review import kind_name

    return card.key, kind_name(card.kind), card.question(language), card.answer[language]


def _print_streamed(first: list[Card], rest: Iterator[Card], language: str, count: int | None) -> int:
    """:func:`_cards_table`'s table, its rows written as they come, in the columns rich makes for the ``first``
    cards; a longer text wraps in its column as rich wraps it (folded where a word is longer). The title, the
    header and its edges are rich's own; ``count`` is the title's (None: no title). Returns how many cards
    were shown."""
    import re
    from itertools import chain

    from rich.cells import cell_len as cells_of

    from bertdrill.core.text import show_controls

    def cell_len(text: str) -> int:  # ASCII text (controls are symbols by now) is a cell a character
        return len(text) if text.isascii() else cells_of(text)

    widths = _column_widths(first, language)
    head = _cards_table(first[:1], language, count or 0, widths)
    if count is None:
        head.title = None
    with out.capture() as captured:
        out.print(head)
    lines = captured.get().splitlines()
    cut = next(at for at, line in enumerate(lines) if re.sub(r"\x1b\[[0-9;]*m", "", line).startswith("\u2521"))
    write = out.file.write
    write("\n".join(lines[: cut + 1]) + "\n")  # the title, the top edge, the header, the line under it
    shown, pending = 0, []
    for card in chain(first, rest):
        shown += 1
        cells = [_wrapped(_shown_text(cell, show_controls), width, cell_len)
                 for cell, width in zip(_cells(card, language), widths, strict=True)]
        for row in range(max(map(len, cells))):
            parts = []
            for cell, width in zip(cells, widths, strict=True):
                line = cell[row] if row < len(cell) else ""
                parts.append(" " + line + " " * (width - cell_len(line) + 1))
            pending.append("\u2502" + "\u2502".join(parts) + "\u2502")
        if len(pending) >= 512:
            write("\n".join(pending) + "\n")
            pending.clear()
    pending.append("\u2514" + "\u2534".join("\u2500" * (width + 2) for width in widths) + "\u2518")
    write("\n".join(pending) + "\n")
    out.file.flush()
    return shown


def _shown_text(text: str, show_controls: Callable[[str], str]) -> str:
    """A text as rich shows :func:`escape`'s markup of it: control characters as symbols, a trailing backslash
    followed by a word joiner."""
    text = show_controls(text)
    return text + "\u2060" if text.endswith("\\") else text


def _wrapped(text: str, width: int, cell_len: Callable[[str], int]) -> list[str]:
    """A cell's lines at ``width`` cells, as rich wraps a cell whose overflow is ``fold``: at spaces, and inside a
    word longer than the line."""
    from rich._wrap import divide_line

    lines = []
    if "\t" in text:
        text = text.expandtabs(8)
    for line in text.split("\n"):
        if cell_len(line) <= width:
            lines.append(line)
            continue
        offsets = [0, *divide_line(line, width, fold=True), len(line)]
        for start, end in zip(offsets, offsets[1:], strict=False):
            piece = line[start:end]
            lines.append(piece.rstrip() if cell_len(piece) > width else piece)  # the spaces after a word's end
    return lines


def _column_widths(cards: Sequence[Card], language: str) -> list[int]:
    """The width of each column's text, as rich makes it for a table of these cards on this console."""
    console = out.get() if isinstance(out, LazyConsole) else out
    table = _cards_table(cards, language, len(cards))
    options = console.options  # what rich gives the columns: the console's width, less the table's lines
    widths = table._calculate_column_widths(console, options.update_width(options.max_width - table._extra_width))
    return [width - 2 for width in widths]  # a cell's padding: a space either side


# --------------------------------------------------------------------------- one learner's cards


@cards_app.command()
def history(
    card: Annotated[str, typer.Argument(metavar="CARD", show_default=False,
                                        help="A card id, with or without its lesson.")],
    lang: LangOption = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    db: DbOption = None,
    learner: LearnerOption = None,
    paths: FilesOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
) -> None:
    """Show a card, its schedule now, and everything that happened to it: answers and actions, oldest first."""
    from bertdrill.core.scheduling.state import study_day

    loaded = load_indexed(paths)
    language = texts_language(loaded, lang)
    store, indexes, _lessons = open_indexed_store(db, paths, None, language, loaded=loaded, learner=learner)
    with store:
        chosen = built_cards(indexes, [card], single=True)[0]
        state = store.state(chosen.id)
        answers = managing(store).answers(chosen.id)
        actions = managing(store).actions(chosen.id)
    today = study_day(clock()(), rollover_hour)
    events = sorted([(answer.reviewed_at, 0, answer) for answer in answers] +
                    [(done.at, 1, done) for done in actions], key=lambda event: (event[0], event[1]))
    if as_json:
        print_json({"card": chosen.id, "question": chosen.question(language), "answer": chosen.answer[language],
                    "state": _state_json(state), "history": [_event_json(event) for _at, _order, event in events]})
        return
    out.print(f"[bold]{escape(chosen.id)}[/bold]")
    out.print(escape(chosen.question(language)))
    out.print(_("[bold]Answer:[/bold] {answer}").format(answer=escape(chosen.answer[language])))
    out.print(_("Now: {state}").format(state=state_words(state, today)))
    if not events:
        out.print(_("Never answered."))
        return
    for _at, _order, event in events:
        out.print("  " + event_words(event))


@cards_app.command()
def suspend(cards: CardsArgument, lang: LangOption = "", db: DbOption = None, learner: LearnerOption = None,
            paths: FilesOption = None, rollover_hour: RolloverOption = DEFAULT_ROLLOVER) -> None:
    """Suspend cards: never shown until unsuspended."""
    _act(cards, "suspend", lang, db, learner, paths, rollover_hour)


@cards_app.command()
def unsuspend(cards: CardsArgument, lang: LangOption = "", db: DbOption = None, learner: LearnerOption = None,
              paths: FilesOption = None, rollover_hour: RolloverOption = DEFAULT_ROLLOVER) -> None:
    """Unsuspend cards (a leech too): shown again when due, with the schedule they had."""
    _act(cards, "unsuspend", lang, db, learner, paths, rollover_hour)


@cards_app.command()
def forget(cards: CardsArgument, lang: LangOption = "", db: DbOption = None, learner: LearnerOption = None,
           paths: FilesOption = None, rollover_hour: RolloverOption = DEFAULT_ROLLOVER) -> None:
    """Make cards new again: they come with the day's new cards; their history, lapses and leech tag are kept."""
    _act(cards, "forget", lang, db, learner, paths, rollover_hour)


@cards_app.command()
def reset(cards: CardsArgument, lang: LangOption = "", db: DbOption = None, learner: LearnerOption = None,
          paths: FilesOption = None, rollover_hour: RolloverOption = DEFAULT_ROLLOVER) -> None:
    """Start cards over, as never answered: new, no lapses, no leech tag, unsuspended (after rewriting a leech).
    Their history is kept."""
    _act(cards, "reset", lang, db, learner, paths, rollover_hour)


@cards_app.command()
def reschedule(
    cards: CardsArgument,
    due: Annotated[str, typer.Option("--due", metavar="DAY", show_default=False,
                                     help="The day they are due: YYYY-MM-DD, today, tomorrow, or +N (N days from "
                                          "today).")],
    lang: LangOption = "", db: DbOption = None, learner: LearnerOption = None, paths: FilesOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
) -> None:
    """Set the day cards are due (Anki's "set due date"); their interval is kept (a new card's becomes the days
    to that day)."""
    _act(cards, "reschedule", lang, db, learner, paths, rollover_hour, due=due)


@cards_app.command()
def undo(lang: LangOption = "", db: DbOption = None, learner: LearnerOption = None, paths: FilesOption = None) -> None:
    """Take back the latest suspend, unsuspend, forget, reset or reschedule, if the card has not changed since."""
    store, _indexes, _lessons = open_indexed_store(db, paths, None, lang, learner=learner)
    with store:
        done = managing(store).undo_action()
    out.print(_("Undone: {action} of {card}; it is back as it was.").format(action=action_name(done.action),
                                                                          card=escape(done.card_id)))


def _act(names: list[str], action_name_: str, lang: str, db: str | None, learner: str | None,
         paths: list[Path] | None, rollover_hour: int, *, due: str | None = None) -> None:
    from bertdrill.core.scheduling.actions import CardAction
    from bertdrill.core.scheduling.state import study_day

    action = CardAction(action_name_)
    store, indexes, _lessons = open_indexed_store(db, paths, None, lang, learner=learner)
    with store:
        chosen = built_cards(indexes, names)
        moment = clock()()
        today = study_day(moment, rollover_hour)
        day = due_day(due, today) if due is not None else None
        done = []
        for card in chosen:
            try:
                done.append(managing(store).manage(card.id, action, at=moment, study_day=today, due=day))
            except ValueError as exc:
                raise BertdrillError(str(exc)) from None
    for record in done:
        out.print(action_line(record, today))
    out.print(_("`bertdrill cards undo` takes back the latest, one at a time."), style="dim")


# --------------------------------------------------------------------------- helpers


def built_cards(indexes: Sequence[LessonIndex], names: Sequence[str], *, single: bool = False) -> list[Card]:
    """:func:`chosen_cards` among the lessons' rows, and only those cards built (a lesson's cards are many: the 1M
    store's 100,000 built and synced to act on one took 220 MB)."""
    from bertdrill.cli.base import cards_by_id

    chosen = chosen_cards([row for index in indexes for row in index.cards], names, single=single)
    built = cards_by_id(indexes, [row.id for row in chosen])
    return [built[row.id] for row in chosen]


Named = TypeVar("Named", "Card", "CardRow")


def chosen_cards(cards: Sequence[Named], names: Sequence[str], *, single: bool = False) -> list[Named]:
    """The reviewed cards the names stand for, in the order named: a card id, its key (without the lesson), or an
    item id (all its cards). An unknown name is an error naming the closest ids."""
    import difflib

    reviewed = [card for card in cards if card.kind.reviewed]
    chosen: list[Named] = []
    for name in names:
        found = [card for card in reviewed if name in (card.id, _key(card))] or \
                [card for card in reviewed if card.item_id == name]
        if not found:
            close = difflib.get_close_matches(name, [_key(card) for card in reviewed], n=3)
            hint = _(" (did you mean {names}?)").format(names=", ".join(close)) if close else ""
            raise BertdrillError(_("no card {name!r} in the lessons{hint}; `bertdrill cards --search WORDS` finds "
                                   "one").format(name=name, hint=hint))
        if single and len(found) > 1:
            raise BertdrillError(_("{name!r} has several cards ({cards}); name one").format(
                name=name, cards=", ".join(map(_key, found))))
        chosen.extend(card for card in found if card not in chosen)
    return chosen


def _key(card: Card | CardRow) -> str:
    """A card's id without its lesson: ``bert-acronym`` for ``bert-basics/bert-acronym`` (a row has no key)."""
    return card.id.partition("/")[2]


def due_day(text: str, today: date) -> date:
    """``--due``: a date, ``today``, ``tomorrow`` or ``+N`` days from ``today``."""
    word = text.strip().lower()
    if word in ("today", _("today")):
        return today
    if word in ("tomorrow", _("tomorrow")):
        return today + timedelta(days=1)
    try:
        if word.startswith("+"):
            return today + timedelta(days=int(word[1:]))
        return date.fromisoformat(word)
    except ValueError:
        raise BertdrillError(_("--due {text!r} is not a day such as 2025-03-10, today, tomorrow or +3").format(
            text=text)) from None


def action_name(action: CardAction) -> str:
    from bertdrill.core.scheduling.actions import CardAction

    match action:
        case CardAction.SUSPEND:
            return _("suspend")
        case CardAction.UNSUSPEND:
            return _("unsuspend")
        case CardAction.FORGET:
            return _("forget")
        case CardAction.RESET:
            return _("reset")
        case CardAction.RESCHEDULE:
            return _("reschedule")
        case unreachable:
            assert_never(unreachable)


def action_line(done: Action, today: date) -> str:
    """What an action did, in a line."""
    from bertdrill.cli.review import day_words
    from bertdrill.core.scheduling.actions import CardAction

    card = escape(done.card_id)
    match done.action:
        case CardAction.SUSPEND:
            return _("Suspended {card}: it is not shown until `bertdrill cards unsuspend`.").format(card=card)
        case CardAction.UNSUSPEND:
            due = done.after.due
            when = day_words(due, today) if due is not None else _("with the new cards")
            return _("Unsuspended {card}: it comes back {when}.").format(card=card, when=when)
        case CardAction.FORGET:
            return ngettext("Forgot {card}: it is new again ({lapses} lapse kept).",
                            "Forgot {card}: it is new again ({lapses} lapses kept).", done.after.lapses).format(
                card=card, lapses=done.after.lapses)
        case CardAction.RESET:
            return _("Reset {card}: new again, no lapses, not suspended.").format(card=card)
        case CardAction.RESCHEDULE:
            assert done.after.due is not None
            return _("Rescheduled {card}: due {when}.").format(card=card, when=day_words(done.after.due, today))
        case unreachable:
            assert_never(unreachable)


def state_words(state: CardState, today: date) -> str:
    """A card's schedule and flags now, in one line."""
    from bertdrill.cli.base import decimal
    from bertdrill.cli.review import day_words

    schedule = state.schedule
    parts = [_("new") if schedule.due is None else _("due {when}").format(when=day_words(schedule.due, today))]
    if schedule.due is not None:
        parts.append(ngettext("interval {count} day", "interval {count} days", schedule.interval).format(
            count=number(schedule.interval)))
        parts.append(_("ease {ef}").format(ef=decimal(schedule.ef, 2)))
    parts.append(ngettext("{count} lapse", "{count} lapses", schedule.lapses).format(count=schedule.lapses))
    if state.leech:
        parts.append(_("leech"))
    if state.suspended:
        parts.append(_("suspended"))
    if state.buried_until is not None and state.buried_until > today:
        parts.append(_("buried until {day}").format(day=state.buried_until.isoformat()))
    if state.removed:
        parts.append(_("removed from its lesson"))
    return " · ".join(parts)


def event_words(event: Answer | Action) -> str:
    from bertdrill.cli.review import entry_word
    from bertdrill.ports import Action

    if isinstance(event, Action):
        after = event.after.due.isoformat() if event.after.due else _("new")
        return f"{event.study_day.isoformat()}  {action_name(event.action):<10} → {after}"
    after = event.after.due.isoformat() if event.after.due else "—"
    typed = f"  {escape(event.typed)!r}" if event.typed else ""
    return (f"{event.study_day.isoformat()}  {entry_word(event.kind):<10} "
            + _("grade {grade}").format(grade=event.grade) + f" → {after}{typed}")


def _state_json(state: CardState) -> dict[str, object]:
    schedule = state.schedule
    return {"due": schedule.due.isoformat() if schedule.due else None, "interval": schedule.interval,
            "ef": schedule.ef, "repetitions": schedule.repetitions, "lapses": schedule.lapses, "leech": state.leech,
            "suspended": state.suspended, "buried_until": state.buried_until.isoformat() if state.buried_until else None,
            "removed": state.removed}


def _event_json(event: Answer | Action) -> dict[str, object]:
    from bertdrill.ports import Action

    if isinstance(event, Action):
        return {"at": event.at.isoformat(), "study_day": event.study_day.isoformat(), "action": str(event.action),
                "due_before": event.before.due.isoformat() if event.before.due else None,
                "due_after": event.after.due.isoformat() if event.after.due else None,
                "suspended_after": event.suspended_after}
    return {"at": event.reviewed_at.isoformat(), "study_day": event.study_day.isoformat(), "kind": str(event.kind),
            "grade": event.grade, "typed": event.typed,
            "due_after": event.after.due.isoformat() if event.after.due else None}
