"""``bertdrill practice``: the lesson's coding exercise, started and checked."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, assert_never

import typer

from bertdrill.cli.base import (
    DbOption,
    FilesOption,
    ForceOption,
    LangOption,
    LearnerOption,
    RolloverOption,
    app,
    clock,
    decimal,
    escape,
    inputs,
    load,
    open_store,
    out,
    texts_language,
)
from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _
from bertdrill.core.limits import DEFAULT_ROLLOVER

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from bertdrill.app.practice import Outcome, Status
    from bertdrill.core.cards import Card, PracticeCard
    from bertdrill.ports import ReviewStore

practice_app = typer.Typer(
    help="The lesson's exercise: write the starter code, then check your script's output.",
    no_args_is_help=True,
)
app.add_typer(practice_app, name="practice")


def practice_card(cards: Sequence[Card], item: str | None) -> PracticeCard:
    """The practice card named by ``item`` (an item id or card id), or the only one there is."""
    from bertdrill.core.cards import PracticeCard

    practice = [card for card in cards if isinstance(card, PracticeCard)]
    if item:
        practice = [card for card in practice if item in (card.item_id, card.id)]
    if not practice:
        raise BertdrillError(_("no practice item {item!r}").format(item=item) if item
                             else _("the lessons have no practice item"))
    if len(practice) > 1:
        names = ", ".join(card.id for card in practice)
        raise BertdrillError(_("several practice items ({names}); name one").format(names=names))
    return practice[0]


@practice_app.command()
def start(
    item: Annotated[str | None, typer.Argument(metavar="[ITEM]", help="Practice item id (default: the only one).")] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the starter code.")] = Path("model.py"),
    force: ForceOption = False,
    lang: LangOption = "",
    paths: FilesOption = None,
) -> None:
    """Write the exercise's starter code, with the task as a comment."""
    from bertdrill.adapters.export.files import Replace, check_writable, write_atomic
    from bertdrill.adapters.export.marks import Mark, seal
    from bertdrill.adapters.lessons import all_cards

    # A starter bertdrill wrote and nobody changed is replaced; one the learner wrote in is theirs (--force).
    read, replace = inputs(paths), Replace.forced(force)
    check_writable(output, replace=replace, example="model.py", inputs=read)
    lessons = load(paths)
    lang = texts_language(lessons, lang)
    card = practice_card(all_cards(lessons), item)
    task = "\n".join(f"# {line}" for para in card.prompt[lang].splitlines() for line in textwrap.wrap(para, 76) or [""])
    check_it = _("Check it with: bertdrill practice check {file}").format(file=output)
    text = f"{task}\n# {check_it}\n\n{card.code[lang]}"
    write_atomic(output, seal(Mark.SCRIPT, text.encode("utf-8")), replace=replace, example="model.py",
                 inputs=read)  # a regular file, its mode kept
    out.print(_("Wrote {file}. Edit it, then run: bertdrill practice check {file}").format(file=escape(str(output))))


@practice_app.command("check")
def check_command(
    args: Annotated[list[str], typer.Argument(metavar="[ITEM] SCRIPT", help="Optional practice item id, then your script.")],
    lang: LangOption = "",
    db: DbOption = None,
    learner: LearnerOption = None,
    paths: FilesOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
) -> None:
    """Run your script, compare its output with the expected output line by line, and record the attempt.

    The attempt is saved as a review of the practice card (grade 5 right, 2 wrong, 1 did not run).
    Exits 0 when the output is right, 1 otherwise.
    """
    from bertdrill.app import practice

    if len(args) > 2:
        raise typer.BadParameter(_("give at most an item id and a script"), param_hint="[ITEM] SCRIPT")
    item, script = (args[0], args[1]) if len(args) == 2 else (None, args[0])
    from bertdrill.core.diagnosis import Diagnoser

    now = clock()
    loaded = load(paths)
    store, cards, _lessons = open_store(db, paths, None, None, loaded=loaded,
                                        learner=learner)  # first, so a bad database fails before the run
    with store:
        card = practice_card(cards, item)
        if practice.is_starter(card, Path(script)):  # nothing written yet: nothing to grade
            out.print(_("{script} is the starter code as written: write your solution in it, then check it "
                        "again. Nothing was recorded.").format(script=escape(script)))
            raise typer.Exit(1)
        diagnoser = next((Diagnoser.for_lesson(lesson) for lesson in loaded if lesson.id == card.lesson_id), None)
        outcome = practice.check(card, Path(script), language=lang, diagnoser=diagnoser)
        report(outcome, card.explanation.get(lang, ""))
        record(store, card, outcome, now(), rollover_hour)
    if not outcome.passed:
        raise typer.Exit(1)


def record(store: ReviewStore, card: PracticeCard, outcome: Outcome, moment: datetime, rollover_hour: int) -> None:
    """Save the attempt as a review of the practice card, and say when to try it again."""
    from bertdrill.app.session import record_attempt
    from bertdrill.cli.base import chosen_scheduler
    from bertdrill.cli.review import day_words, leech_warning
    from bertdrill.core.scheduling.state import became_leech, study_day

    answer = record_attempt(store, card.id, outcome.grade, moment=moment, rollover_hour=rollover_hour,
                            typed="\n".join(outcome.actual) or None, duration_ms=int(outcome.run.seconds * 1000),
                            scheduler=chosen_scheduler(store))
    today = study_day(moment, rollover_hour)
    due = answer.after.due
    if answer.after == answer.before or due is None:
        out.print(_("Saved: grade {grade} (already checked today: only the first check of a day moves the "
                    "schedule).").format(grade=answer.grade))
    else:
        out.print(_("Saved: grade {grade} · check it again {when}.").format(grade=answer.grade, when=day_words(due, today)))
    if became_leech(answer.before, answer.after):
        out.print(leech_warning(card.id, answer.after.lapses))


def headline(status: Status) -> str:
    """The first line of a failed attempt's report (``{seconds}`` and ``{code}`` are filled in)."""
    from bertdrill.app.practice import Status

    match status:
        case Status.TIMEOUT:
            return _("✗ Stopped: your script did not finish within {seconds} seconds. "
                     "Does it loop forever, or wait for input?")
        case Status.FLOODED:
            return _("✗ Stopped: your script printed far too much (over 64 KiB).")
        case Status.CRASHED:
            return _("✗ Your script stopped with an error (exit code {code}).")
        case Status.SILENT:
            return _("✗ Your script printed nothing.")
        case Status.WRONG:
            return _("✗ Not yet: the output differs from the expected output.")
        case Status.PASSED | Status.FORMATTING:
            raise ValueError("a passed attempt has no failure headline")
        case unreachable:
            assert_never(unreachable)


def report(outcome: Outcome, explanation: str) -> None:
    from bertdrill.app.practice import Status

    run = outcome.run
    if outcome.status is Status.PASSED:
        out.print(_("✓ Correct: your script printed the expected output ({seconds} s).").format(
            seconds=decimal(run.seconds, 2)))
        if explanation:
            out.print(escape(explanation))
        return
    if outcome.status is Status.FORMATTING:
        out.print(_("✓ The numbers are right; only the formatting differs. Expected output:"))
        for line in outcome.expected:
            out.print("  " + escape(line))
        if explanation:
            out.print(escape(explanation))
        return
    out.print(headline(outcome.status).format(seconds=practice_timeout(), code=run.returncode))
    if outcome.status is Status.CRASHED and run.stderr.strip():
        out.print(_("Last lines of the error:"))
        for line in run.stderr.strip().splitlines()[-6:]:
            out.print("  " + escape(_printable(line)))
    if outcome.status is Status.WRONG:
        for line in outcome.diff():
            out.print(escape(_printable(line)))
        for note in outcome.notes:
            out.print("  " + escape(note))
    else:
        out.print(_("Expected output:"))
        for line in outcome.expected:
            out.print("  " + escape(line))


def practice_timeout() -> int:
    from bertdrill.app.practice import TIMEOUT

    return int(TIMEOUT)


def _printable(text: str) -> str:
    """A line of a script's output, shortened; ``escape`` then shows its control characters as symbols."""
    return text[:500]
