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
    from collections.abc import Sequence

    from bertdrill.ports import CardLog, FittedSet, ReviewStore, SchedulerChoice


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
    from dataclasses import replace

    from bertdrill.adapters.store import Store
    from bertdrill.cli.base import scheduler_of
    from bertdrill.core.errors import BertdrillError
    from bertdrill.core.scheduling.registry import registered
    from bertdrill.core.scheduling.state import study_day

    if db is None and learner is None and (login := saved()) is not None:
        # Logged in to a class: its server keeps this learner's scheduler, and the terminal cannot reach it yet;
        # showing or switching the learner's own file instead would say something false about the class.
        raise BertdrillError(_("you review in the class at {server}, whose server keeps your scheduler: the "
                               "terminal cannot show or switch it yet (--db acts on a database of your own)").format(
                                   server=login.server))
    if name is None and spread is not None:  # the spread alone changes: the scheduler stays
        with Store.open(db, read_only=True, learner=learner) as store:
            name = store.scheduler_choice().name
    if name is None or not registered(name).has_retention:
        for given, option in ((retention is not None, "--retention"), (fit, "--fit"), (parameters is not None,
                                                                                     "--parameters")):
            if given:
                raise BertdrillError(_("{option} is a setting of FSRS: use it with `bertdrill scheduler fsrs`").format(
                    option=option))
    if fit and parameters is not None:
        raise BertdrillError(_("--fit makes a new parameter set; --parameters picks a stored one: give one of them"))
    with Store.open(db, read_only=name is None, learner=learner) as store:
        current = store.scheduler_choice()
        if name is None:
            show(current, store.fitted_sets())
            return
        wanted = wanted_choice(store, current, name, retention, fit, parameters)
        wanted = replace(wanted, spread=current.spread if spread is None else spread)
        if wanted == current:
            out.print(_("Already using {scheduler}: nothing to change.").format(scheduler=describe(current)))
            return
        today = study_day(clock()(), rollover_hour)
        due_before = store.due_count(today)
        switch = store.switch_scheduler(wanted, scheduler_of(wanted),
                                        track=lambda cards: progress(cards, _("Replaying the review log")))
        due_after = store.due_count(today)
    stored = switch.choice or wanted
    answers = ngettext("{count} answer", "{count} answers", switch.answers).format(count=number(switch.answers))
    out.print(_("Switched to {scheduler}: {cards} rescheduled from {answers} in their log.").format(
        scheduler=describe(stored), cards=card_count(switch.cards), answers=answers))
    out.print(_("Due today: {after} (before the switch: {before}).").format(
        after=f"{due_after:,}", before=f"{due_before:,}"))
    out.print(_("To undo, switch back: {command}").format(command=describe_command(current, stored)))


def wanted_choice(store: ReviewStore, current: SchedulerChoice, name: SchedulerName, retention: float | None,
                  fit: bool, parameters: str | None) -> SchedulerChoice:
    """The choice the options ask for. FSRS keeps the parameters in use unless ``--fit`` or ``--parameters``."""
    from bertdrill.core.scheduling.fsrs import DEFAULT_RETENTION, check_retention
    from bertdrill.core.scheduling.registry import registered
    from bertdrill.ports import SchedulerChoice

    if not registered(name).has_retention:
        return SchedulerChoice(name)  # SM-2 predicts no recall: an exam plan ends with FSRS
    kept = retention if retention is not None else current.retention if current.name is name else None
    chosen = check_retention(DEFAULT_RETENTION if kept is None else kept)
    fitted: FittedSet | None
    if fit:
        fitted = fit_log(store)
    elif parameters is not None:
        fitted = stored_set(store, parameters)
    else:
        fitted = current.fitted if current.name is name else None
    return SchedulerChoice(name, chosen, fitted, current.exam, current.exam_target,
                           lesson_exams=current.lesson_exams)  # an exam plan stays


def fit_log(store: ReviewStore) -> FittedSet:
    """A new parameter set fitted to the learner's whole log (numbered when stored), or NotEnoughHistory."""
    from datetime import UTC

    from bertdrill.core.scheduling.fitted import fit
    from bertdrill.ports import FittedSet

    logs: list[CardLog] = []
    store.card_logs(logs.append, track=lambda cards: progress(cards, _("Reading the review log")))
    err.print(_("Fitting FSRS's parameters to your reviews (fsrs-rs)..."))
    result = fit(logs)
    return FittedSet(0, result.parameters, result.reviews, clock()().astimezone(UTC))


def stored_set(store: ReviewStore, wanted: str) -> FittedSet | None:
    """The learner's stored set named by ``--parameters`` (a number, or ``default`` for None)."""
    from bertdrill.core.errors import BertdrillError

    if wanted.strip().casefold() == "default":
        return None
    sets = {each.number: each for each in store.fitted_sets()}
    try:
        return sets[int(wanted)]
    except (ValueError, KeyError):
        numbers = ", ".join(str(number) for number in sorted(sets)) or _("none yet: `bertdrill scheduler fsrs --fit`")
        raise BertdrillError(_("--parameters takes `default` or the number of a fitted set ({numbers}), got {value!r}")
                             .format(numbers=numbers, value=wanted)) from None


def show(current: SchedulerChoice, sets: Sequence[FittedSet]) -> None:
    out.print(_("Scheduler: {scheduler}.").format(scheduler=describe(current)))
    out.print(_("Intervals: {spread} (change with `bertdrill scheduler --spread balance|fuzz|off`).").format(
        spread=spread_words(current.spread)))
    out.print(_("Switch with `bertdrill scheduler fsrs [--retention R] [--fit]` or `bertdrill scheduler sm2`."))
    if sets:
        out.print("")
        out.print(_("Fitted parameter sets (switch with `bertdrill scheduler fsrs --parameters N`):"))
        for each in sets:
            out.print("  " + fitted_line(each), markup=False)


def fitted_line(each: FittedSet) -> str:
    return _("set {number}: fitted {day} on {reviews} reviews").format(
        number=each.number, day=each.fitted_at.date().isoformat(), reviews=f"{each.reviews:,}")


def describe(choice: SchedulerChoice) -> str:
    """The scheduler as a learner reads it: "SM-2", "FSRS, desired retention 0.90"."""
    match choice.name:
        case SchedulerName.SM2:
            return "SM-2"
        case SchedulerName.FSRS:
            if choice.fitted is None:
                described = _("FSRS, desired retention {retention}").format(retention=f"{_retention(choice):.2f}")
            else:
                described = _("FSRS, desired retention {retention}, parameters {fitted}").format(
                    retention=f"{_retention(choice):.2f}", fitted=fitted_line(choice.fitted))
            if choice.exam is None:
                return described
            return _("{scheduler}, planning for an exam on {day} at predicted recall {target}").format(
                scheduler=described, day=choice.exam.isoformat(), target=f"{choice.exam_target:.2f}")
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
