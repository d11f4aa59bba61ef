"""``bertdrill scheduler``: show the scheduler, or switch it (SM-2 or FSRS) by replaying the log."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from bertdrill.cli.base import DbOption, LangOption, LearnerOption, RolloverOption, app, clock, out, progress
from bertdrill.core.i18n import _
from bertdrill.core.limits import DEFAULT_ROLLOVER


class SchedulerName(StrEnum):
    sm2 = "sm2"
    fsrs = "fsrs"


@app.command("scheduler")
def scheduler_command(
    name: Annotated[SchedulerName | None, typer.Argument(
        help="Switch to this scheduler; without it, show the one in use.", show_default=False)] = None,
    retention: Annotated[float | None, typer.Option(
        "--retention", metavar="R", show_default=False,
        help="FSRS's desired retention, 0.70 to 0.97 (default 0.90): lower means longer intervals.")] = None,
    db: DbOption = None,
    learner: LearnerOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
    lang: LangOption = "",
) -> None:
    """Show the scheduler, or switch it: every card's schedule is rebuilt from its review log.

    Switching never loses progress, and switching back restores the old schedules exactly.
    """
    from bertdrill.adapters.store import Store
    from bertdrill.core.errors import BertdrillError
    from bertdrill.core.scheduling import scheduler_named, sm2
    from bertdrill.core.scheduling.fsrs import DEFAULT_RETENTION, check_retention
    from bertdrill.ports import SchedulerChoice

    if retention is not None and name is not SchedulerName.fsrs:
        raise BertdrillError(_("--retention is a setting of FSRS: use it with `bertdrill scheduler fsrs`"))
    with Store.open(db, read_only=name is None, learner=learner) as store:
        current = store.scheduler_choice()
        if name is None:
            out.print(_("Scheduler: {scheduler}.").format(scheduler=describe(current)))
            out.print(_("Switch with `bertdrill scheduler fsrs [--retention R]` or `bertdrill scheduler sm2`."))
            return
        if name is SchedulerName.fsrs:
            wanted = SchedulerChoice("fsrs", check_retention(DEFAULT_RETENTION if retention is None else retention))
        else:
            wanted = SchedulerChoice("sm2")
        if wanted == current:
            out.print(_("Already using {scheduler}: nothing to change.").format(scheduler=describe(current)))
            return
        today = sm2.study_day(clock()(), rollover_hour)
        due_before = store.due_count(today)
        switch = store.switch_scheduler(wanted, scheduler_named(wanted.name, wanted.retention),
                                        track=lambda cards: progress(cards, _("Replaying the review log")))
        due_after = store.due_count(today)
    out.print(_("Switched to {scheduler}: {cards} cards rescheduled from {answers} answers in their log.").format(
        scheduler=describe(wanted), cards=f"{switch.cards:,}", answers=f"{switch.answers:,}"))
    out.print(_("Due today: {after} (before the switch: {before}).").format(
        after=f"{due_after:,}", before=f"{due_before:,}"))
    out.print(_("To undo, switch back: {command}").format(command=describe_command(current)))


def describe(choice) -> str:
    """The scheduler as a learner reads it: "SM-2", "FSRS, desired retention 0.90"."""
    if choice.name == "fsrs":
        return _("FSRS, desired retention {retention}").format(retention=f"{choice.retention:.2f}")
    return "SM-2"


def describe_command(choice) -> str:
    if choice.name == "fsrs":
        return f"bertdrill scheduler fsrs --retention {choice.retention:.2f}"
    return "bertdrill scheduler sm2"
