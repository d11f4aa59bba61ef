"""``bertdrill scheduler``: show the scheduler, or switch it (SM-2 or FSRS) by replaying the log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, assert_never

import typer

from bertdrill.cli.base import (
    DbOption,
    LangOption,
    LearnerOption,
    RolloverOption,
    app,
    card_count,
    clock,
    decimal,
    err,
    number,
    out,
    progress,
)
from bertdrill.cli.remote import saved
from bertdrill.core.i18n import _, ngettext
from bertdrill.core.limits import DEFAULT_ROLLOVER
from bertdrill.core.scheduling.registry import SchedulerName, Spreading

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from bertdrill.adapters.remote.login import Login
    from bertdrill.ports import FittedSet, SchedulerAsked, SchedulerChoice, Switched


@app.command("scheduler")
def scheduler_command(
    name: Annotated[SchedulerName | None, typer.Argument(
        help="Switch to this scheduler; without it, show the one in use.", show_default=False)] = None,
    retention: Annotated[float | None, typer.Option(
        "--retention", metavar="R", show_default=False,
        help="FSRS's desired retention, 0.70 to 0.97 (default 0.90): lower means longer intervals.")] = None,
    fit: Annotated[bool, typer.Option(
        "--fit", help="Fit FSRS's parameters to your own review log (fsrs-rs, as Anki does) and switch to them.")] = False,
    parameters: Annotated[str | None, typer.Option(
        "--parameters", metavar="SET", show_default=False,
        help="FSRS's parameters: the number of a fitted set (`bertdrill scheduler` lists them) or `default`.")] = None,
    spread: Annotated[Spreading | None, typer.Option(
        "--spread", show_default=False, case_sensitive=False,
        help="Spread the intervals: `balance` (fuzz, and the load balancer evens out the days, as Anki; the "
             "default), `fuzz` (fuzz only) or `off`.")] = None,
    db: DbOption = None,
    learner: LearnerOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
    lang: LangOption = "",
) -> None:
    """Show the scheduler, or switch it: every card's schedule is rebuilt from its review log.

    Switching never loses progress, and switching back restores the old schedules exactly.
    """
    from bertdrill.adapters.store import Store
    from bertdrill.app.scheduling import check, switch
    from bertdrill.cli.base import scheduler_of
    from bertdrill.core.scheduling.state import study_day
    from bertdrill.ports import SchedulerAsked

    asked = SchedulerAsked(name, retention, fit, parameters, spread)
    if asked.shows:
        check(asked)  # a setting of FSRS needs FSRS named
    if db is None and learner is None and (login := saved()) is not None:
        for line in class_scheduler(login, asked):  # the class's server keeps the learner's scheduler
            out.print(line, markup=False)
        return
    with Store.open(db, read_only=asked.shows, learner=learner) as store:
        if asked.shows:
            for line in shown(store.scheduler_choice(), store.fitted_sets()):
                out.print(line, markup=False)
            return
        now = clock()()
        done = switch(store, asked, study_day(now, rollover_hour), scheduler_of, now=now, track=progress,
                      notice=err.print)
    for line in switched_lines(done):
        out.print(line, markup=False)


def class_scheduler(login: Login, asked: SchedulerAsked) -> list[str]:
    """``bertdrill scheduler`` in the class the learner logged in to: shown or switched by its server, which acts
    as the learner (the terminal holds no database credentials)."""
    from bertdrill.adapters.remote.client import ClassStore
    from bertdrill.core import i18n

    with ClassStore(login, language=i18n.language()) as store:  # the server's messages in the interface's language
        if asked.shows:
            return shown(store.scheduler_choice(), store.fitted_sets())
        if asked.fit:
            err.print(_("Fitting FSRS's parameters to your reviews (fsrs-rs)..."))
        return switched_lines(store.choose(asked))


def undo_by_command(before: SchedulerChoice, after: SchedulerChoice) -> str:
    """How to go back, in the terminal: the command that does it."""
    return _("To undo, switch back: {command}").format(command=describe_command(before, after))


def switched_lines(done: Switched, undo: Callable[[SchedulerChoice, SchedulerChoice], str] = undo_by_command,
                   ) -> list[str]:
    """What a switch did, as ``bertdrill scheduler`` prints it; the class server's page says the same, with its
    own way back (``undo``: its form, not a command it cannot run)."""
    if done.switch is None:
        return [_("Already using {scheduler}: nothing to change.").format(scheduler=describe(done.before))]
    switched = done.switch
    answers = ngettext("{count} answer", "{count} answers", switched.answers).format(count=number(switched.answers))
    return [_("Switched to {scheduler}: {cards} rescheduled from {answers} in their log.").format(
                scheduler=describe(done.after), cards=card_count(switched.cards), answers=answers),
            _("Due today: {after} (before the switch: {before}).").format(
                after=number(done.due_after), before=number(done.due_before)),
            undo(done.before, done.after)]


def shown(current: SchedulerChoice, sets: Sequence[FittedSet]) -> list[str]:
    """The choice in use and the learner's fitted sets, as ``bertdrill scheduler`` prints them."""
    lines = [_("Scheduler: {scheduler}.").format(scheduler=describe(current)),
             _("Intervals: {spread} (change with `bertdrill scheduler --spread balance|fuzz|off`).").format(
                 spread=spread_words(current.spread)),
             _("Switch with `bertdrill scheduler fsrs [--retention R] [--fit]` or `bertdrill scheduler sm2`.")]
    if sets:
        lines += ["", _("Fitted parameter sets (switch with `bertdrill scheduler fsrs --parameters N`):")]
        lines += ["  " + fitted_line(each) for each in sets]
    return lines


def fitted_line(each: FittedSet) -> str:
    return _("set {number}: fitted {day} on {reviews} reviews").format(
        number=each.number, day=each.fitted_at.date().isoformat(), reviews=number(each.reviews))


def describe(choice: SchedulerChoice) -> str:
    """The scheduler as a learner reads it: "SM-2", "FSRS, desired retention 0.90"."""
    match choice.name:
        case SchedulerName.SM2:
            return "SM-2"
        case SchedulerName.FSRS:
            if choice.fitted is None:
                described = _("FSRS, desired retention {retention}").format(retention=decimal(_retention(choice), 2))
            else:
                described = _("FSRS, desired retention {retention}, parameters {fitted}").format(
                    retention=decimal(_retention(choice), 2), fitted=fitted_line(choice.fitted))
            if choice.exam is None or choice.exam_target is None:
                return described
            return _("{scheduler}, planning for an exam on {day} at predicted recall {target}").format(
                scheduler=described, day=choice.exam.isoformat(), target=decimal(choice.exam_target, 2))
        case unreachable:
            assert_never(unreachable)


def spread_words(spread: Spreading | None) -> str:
    """How the intervals are spread, as a learner reads it."""
    from bertdrill.core.scheduling.registry import DEFAULT_SPREADING

    match DEFAULT_SPREADING if spread is None else spread:
        case Spreading.OFF:
            return _("as the scheduler gives them, neither fuzzed nor balanced")
        case Spreading.FUZZ:
            return _("fuzzed, as Anki does, without the load balancer")
        case Spreading.BALANCE:
            return _("fuzzed and spread by the load balancer, as Anki does")
        case unreachable:
            assert_never(unreachable)


def _retention(choice: SchedulerChoice) -> float:
    from bertdrill.core.scheduling.fsrs import DEFAULT_RETENTION

    return DEFAULT_RETENTION if choice.retention is None else choice.retention


def describe_command(choice: SchedulerChoice, switched_to: SchedulerChoice) -> str:
    """The command that goes back to ``choice`` from ``switched_to``."""
    from bertdrill.core.scheduling.registry import DEFAULT_SPREADING, registered

    spread = "" if choice.spread == switched_to.spread else f" --spread {(choice.spread or DEFAULT_SPREADING).value}"
    if not registered(choice.name).has_retention:
        return f"bertdrill scheduler {choice.name}{spread}"
    command = f"bertdrill scheduler {choice.name} --retention {_retention(choice):.2f}{spread}"
    if choice.fitted is not None:
        return f"{command} --parameters {choice.fitted.number}"
    # FSRS keeps the parameters in use: going back to the defaults from a fitted set says so
    return f"{command} --parameters default" if switched_to.fitted is not None else command
