"""What a learner can do to a card outside a review, as in Anki's browser: the pure rule of each action.

``bertdrill cards suspend|unsuspend|forget|reset|reschedule`` run these; the store applies the result
and logs the action with the card's state before and after it, so it can be undone. Pure: ``today``
and the day asked for are arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from enum import StrEnum
from typing import assert_never

from bertdrill.core.scheduling.state import NEW, Schedule


class CardAction(StrEnum):
    """An action on one card, as stored (``card_action.action``)."""

    SUSPEND = "suspend"  # never shown until unsuspended (a leech's suspension is one too)
    UNSUSPEND = "unsuspend"  # shown again when due, with the schedule it had
    FORGET = "forget"  # new again: it comes with the day's new cards; its lapses (and leech tag) are kept
    RESET = "reset"  # new again, as never answered: lapses, leech tag and suspension cleared (a rewritten leech)
    RESCHEDULE = "reschedule"  # due on the day asked for (Anki's "set due date"); its interval kept


@dataclass(frozen=True)
class Managed:
    """A card's schedule and whether it is suspended: what an action reads and gives."""

    schedule: Schedule
    suspended: bool


def managed(state: Managed, action: CardAction, *, today: date, due: date | None = None) -> Managed:
    """The card after ``action`` on the study day ``today``; ``due`` is the day a reschedule asks for.

    A reschedule of a new card makes it a reviewed one, due that day, with an interval of the days to it
    (at least one), as Anki's "set due date" does; a day before today is refused.
    """
    match action:
        case CardAction.SUSPEND:
            return replace(state, suspended=True)
        case CardAction.UNSUSPEND:
            return replace(state, suspended=False)
        case CardAction.FORGET:
            return replace(state, schedule=replace(NEW, lapses=state.schedule.lapses))
        case CardAction.RESET:
            return Managed(NEW, False)
        case CardAction.RESCHEDULE:
            if due is None:
                raise ValueError("a reschedule needs the day the card is due")
            if due < today:
                raise ValueError(f"a card cannot be due before today ({today.isoformat()}), got {due.isoformat()}")
            interval = state.schedule.interval or max(1, (due - today).days)
            return replace(state, schedule=replace(state.schedule, due=due, interval=interval))
        case unreachable:
            assert_never(unreachable)
