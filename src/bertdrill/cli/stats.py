"""``bertdrill stats``: progress you can see, on one screen or as JSON.

The store counts; :mod:`bertdrill.stats` turns counts into cells, levels and bars;
this module only gathers and draws. Every figure is written with glyphs and words,
so the screen reads the same with ``NO_COLOR``; colour is laid on top when allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Annotated

import typer

from ..limits import DEFAULT_ROLLOVER
from .base import (
    DbOption,
    FilesOption,
    LangOption,
    Language,
    LessonOption,
    RolloverOption,
    app,
    clock,
    open_store,
    out,
    print_json,
)

if TYPE_CHECKING:  # bound for real by _import_rich, when the command runs
    from rich.cells import cell_len, set_cell_size
    from rich.text import Text

    from ..cards import Card
    from ..ports import CardState, Retention, ReviewReports
    from ..stats import Heatmap

LEVEL_STYLES = ("bright_black", "color(28)", "color(34)", "color(40)", "color(46)")  # greens, dark to bright
LEECHES_SHOWN = 10
HARDEST_SHOWN = 5
FORECAST_WIDTH = 40  # cells for the longest forecast bar
STATE_WORDS = {"new": "new", "learning": "learning", "young": "young", "mature": "mature",
               "suspended": "suspended", "removed": "removed"}

DaysOption = Annotated[int, typer.Option("--days", min=1, max=365, help="Days in the forecast, today included.")]


@dataclass(frozen=True)
class Figures:
    """Everything the screen shows, gathered once, so the screen and --json cannot disagree."""

    today: date
    lesson: str | None
    answers: int  # in the whole log (of the lesson)
    heatmap: Heatmap
    streak: tuple[int, int]  # current, longest
    forecast: list[tuple[date, int]]
    retention: Retention
    states: dict[str, int]
    average_ef: float | None
    leeches: list[CardState]
    hardest: list[CardState]  # EF below the start, leeches left out
    prompts: dict[str, str]  # card id -> one-line question
    database: str


@app.command()
def stats(
    lesson_id: LessonOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the same figures as JSON for scripts.")] = False,
    calibration: Annotated[bool, typer.Option(
        "--calibration", help="Score how well SM-2 and FSRS predict your recall, on your own review log.")] = False,
    days: DaysOption = 14,
    lang: LangOption = Language.en,
    db: DbOption = None,
    paths: FilesOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
) -> None:
    """Show your progress: review heatmap, streaks, forecast, retention, card states, leeches."""
    from .. import sm2

    _import_rich()
    store, cards, lessons = open_store(db, paths, lesson_id, lang.value, read_only=True)
    if calibration:
        from . import calibration as scores

        with store:
            scores.show(store, lessons if lesson_id else None, as_json=as_json)
        return
    with store:
        today = sm2.study_day(clock()(), rollover_hour)
        figures = gather(store, today, days, lessons if lesson_id else None, cards, lang.value)
    if as_json:
        print_json(as_data(figures))
    elif not figures.answers:
        only = f" in lesson {lesson_id}" if lesson_id else ""
        again = f" --lesson {lesson_id}" if lesson_id else ""
        out.print(Text(f"No reviews yet{only}, so there is nothing to chart. Start with: bertdrill review{again}"))
    else:
        draw(figures, out.width)


def _import_rich() -> None:
    """Bind rich's names here when the command runs: importing rich at start-up would slow
    every command's start, ``--help`` included (see cli/base.py)."""
    global Text, cell_len, set_cell_size
    from rich.cells import cell_len, set_cell_size
    from rich.text import Text


def gather(store: ReviewReports, today: date, days: int, lessons: list[str] | None, cards: list[Card],
           language: str) -> Figures:
    from .. import stats
    from ..sm2 import EF_START

    first = stats.heatmap_start(today)
    leeches = store.leeches(lessons=lessons)
    # Leeches are listed already: the hardest of the rest say more, and only below the starting EF.
    hardest = [state for state in store.hardest(HARDEST_SHOWN + len(leeches), lessons=lessons)
               if state.schedule.ef100 < EF_START and not state.leech][:HARDEST_SHOWN]
    return Figures(
        today=today,
        lesson=lessons[0] if lessons else None,
        answers=store.answer_count(lessons=lessons),
        heatmap=stats.heatmap(store.reviews_per_day(first, today, lessons=lessons), today),
        streak=store.streaks(today, lessons=lessons),
        forecast=store.forecast(today, days, lessons=lessons),
        retention=store.retention(lessons=lessons),
        states=store.card_states(today, lessons=lessons),
        average_ef=store.average_ef(lessons=lessons),
        leeches=leeches,
        hardest=hardest,
        prompts={card.id: " ".join(card.question(language).split()) for card in cards},
        database=store.where,
    )


# --------------------------------------------------------------------------- JSON


def as_data(figures: Figures) -> dict[str, object]:
    from .. import stats

    heat, retention = figures.heatmap, figures.retention

    def card(state: CardState) -> dict[str, object]:
        return {"card": state.card_id, "prompt": figures.prompts.get(state.card_id), "ef": state.schedule.ef,
                "lapses": state.schedule.lapses, "suspended": state.suspended}

    def rate(passed: int, total: int) -> dict[str, object]:
        return {"passed": passed, "total": total, "rate": stats.share(passed, total)}

    return {
        "study_day": figures.today.isoformat(),
        "lesson": figures.lesson,
        "answers": figures.answers,
        "heatmap": {"first": heat.first.isoformat(), "last": heat.today.isoformat(), "weeks": heat.weeks,
                    "answers": heat.total, "active_days": heat.active_days, "top": heat.top,
                    "levels": [{"level": level, "glyph": stats.GLYPHS[level], "from": low, "to": high}
                               for level, low, high in heat.legend()],
                    "days": {day.isoformat(): count for day, count in sorted(heat.counts.items())}},
        "streak": {"current": figures.streak[0], "longest": figures.streak[1]},
        "forecast": [{"day": day.isoformat(), "due": count} for day, count in figures.forecast],
        "retention": {"target": stats.RETENTION_TARGET, "young": rate(retention.young_passed, retention.young_total),
                      "mature": rate(retention.mature_passed, retention.mature_total)},
        "cards": figures.states,
        "average_ef": round(figures.average_ef, 2) if figures.average_ef is not None else None,
        "leeches": [card(state) for state in figures.leeches],
        "hardest": [card(state) for state in figures.hardest],
        "database": figures.database,
    }


# --------------------------------------------------------------------------- the screen


def draw(figures: Figures, width: int) -> None:
    scope = f"lesson {figures.lesson}" if figures.lesson else "all lessons"
    out.print(Text.assemble(("Progress", "bold"), f" · {scope} · study day {figures.today.isoformat()}"))
    for section in (draw_heatmap, draw_streak, draw_forecast, draw_retention, draw_cards, draw_leeches):
        out.print()
        section(figures, width)


def heading(title: str, detail: str = "") -> Text:
    return Text.assemble((title, "bold"), (f"  {detail}" if detail else "", "dim"))


def draw_heatmap(figures: Figures, width: int) -> None:
    from .. import stats

    heat = figures.heatmap
    out.print(heading(f"Reviews, last {heat.weeks} weeks",
                      f"{heat.total:,} answers on {heat.active_days} of {heat.days} days"))
    labels = [" "] * (heat.weeks * 2)
    for column, name in heat.months():
        start = column * 2
        if all(ch == " " for ch in labels[max(0, start - 1):start + len(name)]):
            labels[start:start + len(name)] = name
    out.print(Text("    " + "".join(labels).rstrip()), style="dim")
    for weekday, row in zip(stats.WEEKDAYS, heat.grid()):
        line = Text.assemble((weekday, "dim"), " ")
        for level in row:
            if level is None:
                break
            line.append(stats.GLYPHS[level], style=LEVEL_STYLES[level])
            line.append(" ")
        line.rstrip()
        out.print(line)
    legend = Text("    ")
    for level, low, high in heat.legend():
        words = "none" if level == 0 else str(low) if low == high else f"{low}–{high}"
        legend.append(stats.GLYPHS[level], style=LEVEL_STYLES[level])
        legend.append(f" {words}   ", style="dim")
    legend.rstrip()
    out.print(legend)


def draw_streak(figures: Figures, width: int) -> None:
    current, longest = figures.streak
    today_done = figures.heatmap.counts.get(figures.today, 0) > 0
    note = "" if today_done or not current else "  (answer a card today to keep it)"
    out.print(Text.assemble(("Streak", "bold"), f"  {_plural(current, 'day')} now · longest {_plural(longest, 'day')}",
                            (note, "dim")))


def draw_forecast(figures: Figures, width: int) -> None:
    from .. import stats

    total = sum(count for _, count in figures.forecast)
    out.print(heading(f"Due in the next {_plural(len(figures.forecast), 'day')}",
                      f"{_plural(total, 'card')}; today's count includes anything overdue"))
    top = max((count for _, count in figures.forecast), default=0)
    digits = len(str(top))
    room = max(10, min(FORECAST_WIDTH, width - 18 - digits))
    for day, count in figures.forecast:
        label = f"  {stats.WEEKDAYS[day.weekday()]} {day.strftime('%m-%d')} "
        line = Text.assemble((label, "bold" if day == figures.today else ""))
        line.append(f"{count:>{digits}} ")
        line.append(stats.bar(count, top, room), style="cyan")
        line.rstrip()
        out.print(line)


def draw_retention(figures: Figures, width: int) -> None:
    from .. import stats
    from ..store import MATURE_DAYS

    retention = figures.retention
    target = stats.RETENTION_TARGET
    out.print(heading("Retention", f"share of due reviews graded 3 or more; target {target * 100:.0f} %"))
    rows = (("young", f"interval under {MATURE_DAYS} days", retention.young_passed, retention.young_total),
            ("mature", f"interval {MATURE_DAYS} days or more", retention.mature_passed, retention.mature_total))
    counted = max(len(f"{passed:,} of {total:,}") for _, _, passed, total in rows)
    for name, meaning, passed, total in rows:
        rate = stats.share(passed, total)
        line = Text(f"  {name:<7}")
        if rate is None:
            line.append(f"{'—':>7}  {'no reviews yet':<{counted}}", style="dim")
        else:
            points = (rate - target) * 100
            side = "on target" if abs(points) < 0.05 else f"{abs(points):.1f} points {'above' if points > 0 else 'below'}"
            line.append(f"{rate * 100:5.1f} %", style="green" if points >= 0 else "yellow")
            line.append(f"  {f'{passed:,} of {total:,}':>{counted}}  {side}")
        line.append(f"  ({meaning})", style="dim")
        out.print(line)


def draw_cards(figures: Figures, width: int) -> None:
    states = figures.states
    ef = f"average EF {figures.average_ef:.2f}" if figures.average_ef is not None else "no card reviewed yet"
    out.print(heading(f"Cards: {sum(states.values()):,}", ef))
    out.print(Text("  " + " · ".join(f"{STATE_WORDS[state]} {count:,}" for state, count in states.items())))


def draw_leeches(figures: Figures, width: int) -> None:
    from ..sm2 import LEECH_LAPSES

    leeches = figures.leeches
    if not leeches:
        out.print(Text.assemble(("Leeches", "bold"), f"  none (a leech is a card that lapsed {LEECH_LAPSES} times)"))
    else:
        out.print(heading(f"Leeches: {len(leeches)}", f"{LEECH_LAPSES} lapses or more; rewrite them, or suspend them"))
        for state in leeches[:LEECHES_SHOWN]:
            out.print(_card_line(figures, state, f"{state.schedule.lapses:>3} lapses", width))
        if len(leeches) > LEECHES_SHOWN:
            out.print(Text(f"  and {len(leeches) - LEECHES_SHOWN} more (bertdrill stats --json lists all)", style="dim"))
    out.print()
    if not figures.hardest:
        out.print(Text.assemble(("Hardest cards", "bold"), "  none below the starting EF 2.50, leeches aside"))
        return
    out.print(heading("Hardest cards", "lowest EF first, leeches aside"))
    for state in figures.hardest:
        out.print(_card_line(figures, state, f"EF {state.schedule.ef:.2f}", width))


def _card_line(figures: Figures, state: CardState, figure: str, width: int) -> Text:
    """``  figure  card-id  prompt``, the prompt cut to fit the width (lesson text: never markup)."""
    start = f"  {figure}  {state.card_id}"
    if state.suspended:
        start += " (suspended)"
    prompt = figures.prompts.get(state.card_id, "")
    room = width - cell_len(start) - 2
    line = Text(start)
    if prompt and room >= 10:
        shown = prompt if cell_len(prompt) <= room else set_cell_size(prompt, room - 1) + "…"
        line.append("  " + shown, style="dim")
    return line


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"
