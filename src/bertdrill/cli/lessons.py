"""Commands for lesson authors: ``check``, ``cards`` and ``params``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, assert_never

import typer

from bertdrill.cli.base import (
    FilesOption,
    LangOption,
    LessonsArgument,
    app,
    escape,
    load_indexed,
    number,
    out,
    texts_language,
)
from bertdrill.core.i18n import _, ngettext

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from bertdrill.app.practice import Outcome
    from bertdrill.core.cards import Card
    from bertdrill.core.errors import LessonError
    from bertdrill.core.leaks import Leak, SizeOrder, Where


@app.command()
def check(
    paths: LessonsArgument = None,
    strict: Annotated[bool, typer.Option("--strict", help="Treat warnings (a prompt that gives its answer away) "
                                                           "as errors: exit 1.")] = False,
    run_solutions: Annotated[bool, typer.Option(
        "--run-solutions", help="Also run each practice item's sample solution, in every language, with the "
                                "practice runner's limits, and compare its output with the formulas.")] = False,
    leaks: Annotated[bool | None, typer.Option(
        "--leaks/--no-leaks", show_default=False,
        help="List the questions that give each other away, for whoever prints sheets (default: when lesson "
             "files are named, as an author checks them; not for the shipped lessons).")] = None,
    lang: LangOption = "",
) -> None:
    """Parse lessons and prove every stated number against its formula.

    Prints a summary per lesson; on any problem prints `path:line: message`
    lines on stderr and exits 1. Warnings (`path:line: warning: ...`) do not
    change the exit status unless --strict is given; questions that give each
    other away are listed for lesson files named on the command line (or with
    --leaks), and never fail (sheets keep them apart).
    """
    from bertdrill.core import collector
    from bertdrill.core.cards import giveaways
    from bertdrill.core.errors import LessonErrors
    from bertdrill.core.leaks import lesson_leaks, size_orders
    from bertdrill.core.lesson import variant_errors

    warned = 0
    wrong = []
    # The cards, exposures and leaks found are many small objects holding no cycles, as the lessons are; the
    # command ends after them, so they are frozen rather than walked once more.
    # A lesson at a time, read whole from its index when its turn comes: the eight lessons of the 1M-review store,
    # held together, peaked at 278 MB.
    with collector.paused(freeze=True):
        for index in load_indexed(paths, handover=True):  # an edited lesson is not read back just after verifying it
            lesson, cards = index.whole()
            if found := variant_errors(lesson):
                wrong += found
                continue
            if run_solutions:
                found = solution_errors(lesson.path, cards)
                if found:
                    wrong += found
                    continue
            items = ngettext("{count} item", "{count} items", len(lesson.items)).format(count=number(len(lesson.items)))
            counted = ngettext("{count} card", "{count} cards", len(cards)).format(count=number(len(cards)))
            verified = ngettext("{count} number verified", "{count} numbers verified", lesson.verified).format(
                count=number(lesson.verified))
            out.print(_("✓ {lesson} ({file}): {items}, {cards}, {verified}; languages {languages}").format(
                lesson=escape(lesson.id), file=escape(_short(lesson.path)), items=items, cards=counted, verified=verified,
                languages=", ".join(lesson.languages)))
            if variants := lesson.allowed_variants():
                out.print(escape(ngettext("  fresh numbers: {count} variant allowed by [variants], its numbers proven",
                                          "  fresh numbers: {count} variants allowed by [variants], each one's numbers "
                                          "proven", len(variants)).format(count=number(len(variants)))))
            seen: set[tuple[str, str, str]] = set()
            for card in cards:
                for language, words in giveaways(card):
                    if (card.item_id, language, words) in seen:
                        continue  # one item's cards share a prompt: say it once
                    seen.add((card.item_id, language, words))
                    warned += 1
                    typer.echo(_("{path}:{line}: warning: item {item}: the prompt gives its answer away "
                                 "({words!r} in {language})").format(
                        path=_short(lesson.path), line=card.line, item=card.item_id, words=words, language=language), err=True)
            # Questions that give each other away are worth knowing, not failing: sheets keep them apart.
            # One line per item, place and clue, naming the first few items it gives away: a lesson that repeats
            # a phrase in every item gets a line per item, not one per pair.
            if not (leaks if leaks is not None else bool(paths)):
                continue
            lines = {item.id: item.line for item in lesson.items}
            path = _short(lesson.path)
            for (source, where, clue), targets in _grouped(lesson_leaks(cards, lesson.languages, per_source=_TARGETS_SHOWN + 1, lesson=lesson)).items():
                shown = ", ".join(targets[:_TARGETS_SHOWN]) + (", …" if len(targets) > _TARGETS_SHOWN else "")
                typer.echo(_leak_warning(where).format(path=path, line=lines[source], source=source, target=shown,
                                                       clue=clue), err=True)
            for order in size_orders(lesson, lesson.languages[0]):
                typer.echo(_size_warning(order, path, lines[order.item_id], has_variants=bool(lesson.allowed_variants())),
                           err=True)
    if wrong:
        raise LessonErrors(wrong)
    if warned and strict:
        typer.echo(_("Error: {count} warnings, and --strict makes them errors").format(count=warned), err=True)
        raise typer.Exit(1)


def solution_errors(path: str, cards: Sequence[Card]) -> list[LessonError]:
    """A ``file:line`` error for each practice solution, in each language, that does not print the expected output."""
    from bertdrill.app import practice
    from bertdrill.core.cards import PracticeCard
    from bertdrill.core.errors import LessonError

    errors = []
    for card in cards:
        if not isinstance(card, PracticeCard):
            continue
        for language, outcome in practice.check_solutions(card):
            why = _why_wrong(outcome)
            errors.append(LessonError(_short(path), card.line, _("item {item!r}: the {language} sample solution is "
                                                                 "wrong: {why}").format(item=card.item_id,
                                                                                        language=language, why=why)))
    return errors
_TARGETS_SHOWN = 3


def _grouped(leaks: Iterable[Leak]) -> dict[tuple[str, Where, str], list[str]]:
    """Leaks grouped by the item that gives something away, where, and what: the items given away, in order."""
    grouped: dict[tuple[str, Where, str], list[str]] = {}
    for leak in leaks:
        grouped.setdefault((leak.source, leak.where, leak.clue), []).append(leak.target)
    return grouped


def _size_warning(order: SizeOrder, path: str, line: int, *, has_variants: bool) -> str:
    """A matching table a learner can pair by the sizes of its numbers, and what a sheet does about it."""
    sizes = " < ".join(order.terms)
    if not has_variants:
        text = _("{path}:{line}: warning: the matching table {item} can be paired by the sizes of its numbers "
                 "({sizes} in every parameter set); declare [variants] so a sheet prints decoys among them")
    elif order.constant:
        text = _("{path}:{line}: warning: the matching table {item} can be paired by the sizes of its numbers "
                 "({sizes} in every set the lesson allows); a sheet prints decoys from [variants] among them, "
                 "but none beside {constant}: its value is the same in every set")
    else:
        text = _("{path}:{line}: warning: the matching table {item} can be paired by the sizes of its numbers "
                 "({sizes} in every set the lesson allows); a sheet prints decoys from [variants] among them")
    return text.format(path=path, line=line, item=order.item_id, sizes=sizes, constant=", ".join(order.constant))


def _leak_warning(where: Where) -> str:
    from bertdrill.core.leaks import Where

    match where:
        case Where.QUESTION:
            return _("{path}:{line}: warning: the question of {source} shows \u201c{clue}\u201d, "
                     "the answer to {target}; a sheet never puts the two on one version")
        case Where.ANSWER:
            return _("{path}:{line}: warning: the answer of {source} shows \u201c{clue}\u201d, "
                     "the answer to {target}; a sheet never puts the two on one version")
        case _:
            assert_never(where)


@app.command()
def params(
    set_name: Annotated[str | None, typer.Argument(metavar="[SET]", help="Parameter set, e.g. bert-large (default: the lesson's first).")] = None,
    overrides: Annotated[list[str] | None, typer.Option("--set", "-s", metavar="NAME=VALUE", help="Change one parameter, e.g. --set d=512.")] = None,
    lesson_id: Annotated[str | None, typer.Option("--lesson", help="Lesson id (default: the first shipped lesson).")] = None,
    lang: LangOption = "",
    paths: FilesOption = None,
) -> None:
    """Show a parameter set's breakdown: every formula of the lesson, computed."""
    from bertdrill.adapters.lessons import find_lesson
    from bertdrill.core import formula
    from bertdrill.core.errors import BertdrillError
    from bertdrill.core.numbers import format_number

    indexes = load_indexed(paths)  # only the lesson shown is read whole (all eight of the 1M store's: 185 MB)
    lesson = (find_lesson(indexes, lesson_id) if lesson_id else indexes[0]).lesson()
    lang = texts_language([lesson], lang)
    chosen = set_name or next(iter(lesson.params))
    if chosen not in lesson.params:
        raise BertdrillError(formula.unknown_name_message(chosen, lesson.params).replace("name", "parameter set", 1))
    values = dict(lesson.params[chosen].values)
    for assignment in overrides or []:
        name, equals, text = assignment.partition("=")
        name = name.strip()
        if not equals or name not in values:
            hint = (formula.unknown_name_message(name, values) if equals
                    else _("{text!r} is not NAME=VALUE").format(text=assignment))
            raise BertdrillError(f"--set: {hint}")
        values[name] = formula.evaluate(text, {})
    resolved = formula.resolve(values, lesson.formulas)
    custom = " (custom)" if overrides else ""
    from rich.table import Table

    table = Table(title=f"{escape(lesson.params[chosen].title)}{custom}: {escape(lesson.title[lang])}")
    table.add_column("name")
    table.add_column("formula", overflow="fold")
    table.add_column("value", justify="right")
    for name, value in values.items():
        table.add_row(name, "parameter", format_number(value, lang))
    table.add_section()
    for name, parsed in lesson.formulas.items():
        shown = resolved[name]
        if not isinstance(shown, int):
            shown = round(shown, 3)
        table.add_row(name, escape(parsed.source), format_number(shown, lang))
    out.print(table)


def _why_wrong(outcome: Outcome) -> str:
    """Why a sample solution fails, in a clause (``it prints nothing``)."""
    from bertdrill.app.practice import TIMEOUT, Status

    match outcome.status:
        case Status.WRONG:
            return _("it prints {actual} where the formulas give {expected}").format(
                actual=" / ".join(outcome.actual), expected=" / ".join(outcome.expected))
        case Status.CRASHED:
            last = outcome.run.stderr.strip().splitlines()[-1:] or [""]
            return _("it stops with an error (exit code {code}): {error}").format(code=outcome.run.returncode,
                                                                                 error=last[0])
        case Status.TIMEOUT:
            return _("it does not finish within {seconds} seconds").format(seconds=int(TIMEOUT))
        case Status.FLOODED:
            return _("it prints far too much")
        case Status.SILENT:
            return _("it prints nothing")
        case Status.PASSED | Status.FORMATTING:
            raise ValueError("a passed solution is not wrong")
        case unreachable:
            assert_never(unreachable)


def _short(path: str) -> str:
    """A path relative to the current folder when it is inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


def _card_json(card: Card, language: str) -> dict[str, object]:
    from bertdrill.core.cards import BlankCard, ChoiceCard, FactCard, MatchCard, NumericCard, PracticeCard

    data: dict[str, object] = {
        "id": card.id,
        "kind": card.kind,
        "question": card.question(language),
        "answer": card.answer[language],
        "explanation": card.explanation.get(language, ""),
        "tags": list(card.tags),
    }
    match card:
        case FactCard() | BlankCard():
            pass
        case ChoiceCard():
            data["options"] = list(card.options[language])
            data["correct"] = card.correct
        case NumericCard() | MatchCard():
            if card.value is not None:
                data["value"] = card.value if isinstance(card.value, int) else str(card.value)
            data["params"] = card.set_name
        case PracticeCard():
            data["params"] = card.set_name
            data["expected_output"] = list(card.expected_output)
        case _:
            assert_never(card)
    return data
