"""``bertdrill stats``: progress you can see, on one screen or as JSON.

The store counts; :mod:`bertdrill.core.stats` turns counts into cells, levels and bars;
this module only gathers and draws. Every figure is written with glyphs and words,
so the screen reads the same with ``NO_COLOR``; colour is laid on top when allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, assert_never, overload

import typer

from bertdrill.cli.base import (
    DbOption,
    FilesOption,
    ForceOption,
    LangOption,
    LearnerOption,
    LessonOption,
    RolloverOption,
    app,
    card_count,
    cards_by_id,
    chosen_lessons,
    clock,
    day_count,
    decimal,
    load_indexed,
    number,
    open_indexed_store,
    out,
    percent,
    print_json,
    texts_language,
)
from bertdrill.cli.remote import saved
from bertdrill.core.i18n import _, ngettext
from bertdrill.core.limits import DEFAULT_ROLLOVER

if TYPE_CHECKING:  # bound for real by _import_rich, when the command runs
    from rich.cells import cell_len, set_cell_size
    from rich.text import Text

    from bertdrill.adapters.lessons import LessonIndex
    from bertdrill.app.progress import Figures
    from bertdrill.core.scheduling.state import CardStage
    from bertdrill.ports import CardState, ReviewReports, SyncCard

LEVEL_STYLES = ("bright_black", "color(28)", "color(34)", "color(40)", "color(46)")  # greens, dark to bright
FORECAST_WIDTH = 40  # cells for the longest forecast bar

DaysOption = Annotated[int, typer.Option("--days", min=1, max=365, help="Days in the forecast, today included.")]


@app.command()
def stats(
    lesson_id: LessonOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the same figures as JSON for scripts.")] = False,
    calibration: Annotated[bool, typer.Option(
        "--calibration", help="Score how well SM-2, FSRS and FSRS fitted to you predict your recall, on reviews "
                              "the fit never saw.")] = False,
    workload: Annotated[bool, typer.Option(
        "--workload", help="What each desired retention would cost you: a year simulated by fsrs-rs with your "
                           "parameters and answer times.")] = False,
    chart: Annotated[Path | None, typer.Option(
        "--chart", metavar="FILE.svg", help="With --workload: also draw it as an SVG chart in this file.",
        show_default=False)] = None,
    days: DaysOption = 14,
    lang: LangOption = "",
    db: DbOption = None,
    learner: LearnerOption = None,
    paths: FilesOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
    force: ForceOption = False,
) -> None:
    """Show your progress: review heatmap, streaks, forecast, retention, card states, leeches."""
    from bertdrill.core.scheduling.state import study_day

    if db is None and (login := saved()) is not None:  # logged in to a class: the figures are on its server
        from bertdrill.core.errors import BertdrillError

        raise BertdrillError(_("you review in the class at {server}: your figures are on its page {server}/stats "
                               "(--db shows a database of your own)").format(server=login.server))
    _import_rich()
    if chart is not None and not workload:
        from bertdrill.core.errors import BertdrillError

        raise BertdrillError(_("--chart goes with --workload: bertdrill stats --workload --chart FILE.svg"))
    if force and chart is None:  # it replaces only the chart's file: without one it would do nothing, silently
        from bertdrill.core.errors import BertdrillError

        raise BertdrillError(_("--force goes with --chart: bertdrill stats --workload --chart FILE.svg --force"))
    if chart is not None:  # before the year's simulation, which takes a while
        from bertdrill.cli import workload as costs

        costs.check_chart(chart, paths, db, force=force)
    loaded = load_indexed(paths)  # each lesson as its index: only the cards named on the screen are built
    lang = texts_language(chosen_lessons(loaded, lesson_id), lang)
    store, chosen, lessons = open_indexed_store(db, paths, lesson_id, lang, read_only=True, learner=learner,
                                                loaded=loaded)
    if workload:
        from bertdrill.cli import workload as costs

        with store:
            today = study_day(clock()(), rollover_hour)
            costs.show(store, lessons if lesson_id else None, today, as_json=as_json, chart=chart, force=force)
        return
    if calibration:
        from bertdrill.cli import calibration as scores

        with store:
            scores.show(store, lessons if lesson_id else None, as_json=as_json)
        return
    from bertdrill.cli.exam import exam_outlook

    with store:
        today = study_day(clock()(), rollover_hour)
        figures = gather(store, today, days, lessons if lesson_id else None, chosen, lang)
        outlook = exam_outlook(store, Rows(chosen))
    if as_json:
        print_json(as_data(figures) | ({"exam": outlook.as_data()} if outlook else {}))
    elif not figures.answers:
        message = (_("No reviews yet in lesson {lesson}, so there is nothing to chart. Start with: "
                     "bertdrill review --lesson {lesson}") if lesson_id
                   else _("No reviews yet, so there is nothing to chart. Start with: bertdrill review"))
        out.print(Text(message.format(lesson=lesson_id)))
    else:
        draw(figures, out.width)
    if outlook and not as_json:
        for line in outlook.lines():
            out.print(line, markup=False)


class Rows(Sequence["SyncCard"]):
    """The chosen lessons' cards as rows, read only if something walks them (an exam's outlook does)."""

    def __init__(self, indexes: Sequence[LessonIndex]):
        self.indexes = indexes

    @cached_property
    def rows(self) -> list[SyncCard]:
        return [card for index in self.indexes for card in index.cards]

    @overload
    def __getitem__(self, index: int) -> SyncCard: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SyncCard]: ...
    def __getitem__(self, index: int | slice) -> SyncCard | Sequence[SyncCard]:
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)


def _import_rich() -> None:
    """Bind rich's names here when the command runs: importing rich at start-up would slow
    every command's start, ``--help`` included (see cli/base.py)."""
    global Text, cell_len, set_cell_size
    from rich.cells import cell_len, set_cell_size
    from rich.text import Text


def gather(store: ReviewReports, today: date, days: int, lessons: list[str] | None, indexes: Sequence[LessonIndex],
           language: str) -> Figures:
    from bertdrill.app.progress import gather as figures_of

    return figures_of(store, today, days, lessons, lambda ids: {
        card.id: " ".join(card.question(language).split()) for card in cards_by_id(indexes, ids).values()})


# --------------------------------------------------------------------------- JSON


def as_data(figures: Figures) -> dict[str, object]:
    from bertdrill.core import stats

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
    scope = _("lesson {lesson}").format(lesson=figures.lesson) if figures.lesson else _("all lessons")
    out.print(Text.assemble((_("Progress"), "bold"),
                            _(" · {scope} · study day {day}").format(scope=scope, day=figures.today.isoformat())))
    for section in (draw_heatmap, draw_streak, draw_forecast, draw_retention, draw_cards, draw_leeches):
        out.print()
        section(figures, width)


def heading(title: str, detail: str = "") -> Text:
    return Text.assemble((title, "bold"), (f"  {detail}" if detail else "", "dim"))


def draw_heatmap(figures: Figures, width: int) -> None:
    from bertdrill.core import stats

    heat = figures.heatmap
    out.print(heading(ngettext("Reviews, last {weeks} week", "Reviews, last {weeks} weeks", heat.weeks).format(
                          weeks=number(heat.weeks)),
                      ngettext("{answers} answer on {active} of {days} days", "{answers} answers on {active} of {days} days",
                               heat.total).format(answers=number(heat.total), active=number(heat.active_days),
                                                  days=number(heat.days))))
    labels = [" "] * (heat.weeks * 2)
    for column, name in heat.months():
        start = column * 2
        if all(ch == " " for ch in labels[max(0, start - 1):start + len(name)]):
            labels[start:start + len(name)] = name
    out.print(Text("    " + "".join(labels).rstrip()), style="dim")
    for weekday, row in zip(stats.weekday_names(), heat.grid()):
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
        words = _("none") if level == 0 else number(low) if low == high else f"{number(low)}–{number(high)}"
        legend.append(stats.GLYPHS[level], style=LEVEL_STYLES[level])
        legend.append(f" {words}   ", style="dim")
    legend.rstrip()
    out.print(legend)


def draw_streak(figures: Figures, width: int) -> None:
    current, longest = figures.streak
    today_done = figures.heatmap.counts.get(figures.today, 0) > 0
    note = "" if today_done or not current else _("  (answer a card today to keep it)")
    out.print(Text.assemble((_("Streak"), "bold"), _("  {current} now · longest {longest}").format(
        current=day_count(current), longest=day_count(longest)), (note, "dim")))


def draw_forecast(figures: Figures, width: int) -> None:
    from bertdrill.core import stats

    total = sum(count for _day, count in figures.forecast)
    out.print(heading(ngettext("Due in the next {days} day", "Due in the next {days} days", len(figures.forecast))
                      .format(days=number(len(figures.forecast))),
                      _("{cards}; today's count includes anything overdue").format(cards=card_count(total))))
    top = max((count for _day, count in figures.forecast), default=0)
    digits = len(str(top))
    room = max(10, min(FORECAST_WIDTH, width - 18 - digits))
    weekdays = stats.weekday_names()
    labels = [f"  {weekdays[day.weekday()]} {stats.short_date(day)} " for day, _count in figures.forecast]
    widest = max(map(cell_len, labels), default=0)
    for label, (day, count) in zip(labels, figures.forecast):
        label += " " * (widest - cell_len(label))
        line = Text.assemble((label, "bold" if day == figures.today else ""))
        line.append(f"{count:>{digits}} ")
        line.append(stats.bar(count, top, room), style="cyan")
        line.rstrip()
        out.print(line)


def draw_retention(figures: Figures, width: int) -> None:
    from bertdrill.adapters.store import MATURE_DAYS
    from bertdrill.core import stats

    retention = figures.retention
    target = stats.RETENTION_TARGET
    out.print(heading(_("Retention"), _("share of due reviews graded 3 or more; target {percent}").format(
        percent=percent(decimal(target * 100, 0)))))
    rows = ((_("young"), ngettext("interval under {days} day", "interval under {days} days", MATURE_DAYS).format(
                days=number(MATURE_DAYS)), retention.young_passed, retention.young_total),
            (_("mature"), ngettext("interval {days} day or more", "interval {days} days or more", MATURE_DAYS).format(
                days=number(MATURE_DAYS)), retention.mature_passed, retention.mature_total))
    of = [_("{passed} of {total}").format(passed=number(passed), total=number(total)) for *_rest, passed, total in rows]
    no_reviews = _("no reviews yet")
    counted = max(cell_len(text) for text in of)
    named = max(7, *(cell_len(name) for name, *_rest in rows))
    rates = [stats.share(passed, total) for *_rest, passed, total in rows]
    shown = [percent(decimal(rate * 100, 1)) if rate is not None else "—" for rate in rates]
    wide = max(7, *(cell_len(text) for text in shown))
    for (name, meaning, _passed, _total), rate, rate_text, passed_text in zip(rows, rates, shown, of):
        line = Text(f"  {name:<{named}}")
        if rate is None:
            line.append(f"{rate_text:>{wide}}  {no_reviews:<{counted}}", style="dim")
        else:
            points = (rate - target) * 100
            side = (_("on target") if abs(points) < 0.05
                    else (_("{points} points above") if points > 0 else _("{points} points below")).format(
                        points=decimal(abs(points), 1)))
            line.append(f"{rate_text:>{wide}}", style="green" if points >= 0 else "yellow")
            line.append(f"  {passed_text:>{counted}}  {side}")
        line.append(f"  ({meaning})", style="dim")
        out.print(line)


def draw_cards(figures: Figures, width: int) -> None:
    states = figures.states
    ef = (_("average EF {ef}").format(ef=decimal(figures.average_ef, 2)) if figures.average_ef is not None
          else _("no card reviewed yet"))
    out.print(heading(_("Cards: {count}").format(count=number(sum(states.values()))), ef))
    out.print(Text("  " + " · ".join(f"{stage_word(state)} {number(count)}" for state, count in states.items())))


def stage_word(stage: CardStage) -> str:
    """A card stage as the learner's language says it."""
    from bertdrill.core.scheduling.state import CardStage

    match stage:
        case CardStage.NEW:
            return _("new")
        case CardStage.LEARNING:
            return _("learning")
        case CardStage.YOUNG:
            return _("young")
        case CardStage.MATURE:
            return _("mature")
        case CardStage.SUSPENDED:
            return _("suspended")
        case CardStage.REMOVED:
            return _("removed")
        case unreachable:
            assert_never(unreachable)


def draw_leeches(figures: Figures, width: int) -> None:
    from bertdrill.app import progress
    from bertdrill.core.scheduling.state import LEECH_LAPSES

    leeches = figures.leeches
    if not leeches:
        out.print(Text.assemble((_("Leeches"), "bold"), _("  none (a leech is a card that lapsed {lapses} times)").format(
            lapses=LEECH_LAPSES)))
    else:
        out.print(heading(_("Leeches: {count}").format(count=number(len(leeches))),
                          _("{lapses} lapses or more; rewrite them, or suspend them").format(lapses=LEECH_LAPSES)))
        for state in leeches[:progress.LEECHES_SHOWN]:
            lapses = state.schedule.lapses
            out.print(_card_line(figures, state, ngettext("{count} lapse", "{count} lapses", lapses).format(
                count=f"{lapses:>3}"), width))
        if len(leeches) > progress.LEECHES_SHOWN:
            out.print(Text(_("  and {count} more (bertdrill stats --json lists all)").format(
                count=number(len(leeches) - progress.LEECHES_SHOWN)), style="dim"))
    out.print()
    if not figures.hardest:
        out.print(Text.assemble((_("Hardest cards"), "bold"), _("  none below the starting EF {ef}, leeches aside").format(
            ef=decimal(2.5, 2))))
        return
    out.print(heading(_("Hardest cards"), _("lowest EF first, leeches aside")))
    for state in figures.hardest:
        out.print(_card_line(figures, state, _("EF {ef}").format(ef=decimal(state.schedule.ef, 2)), width))


def _card_line(figures: Figures, state: CardState, figure: str, width: int) -> Text:
    """``  figure  card-id  prompt``, the prompt cut to fit the width (lesson text: never markup)."""
    start = f"  {figure}  {state.card_id}"
    if state.suspended:
        start += _(" (suspended)")
    prompt = figures.prompts.get(state.card_id, "")
    room = width - cell_len(start) - 2
    line = Text(start)
    if prompt and room >= 10:
        shown = prompt if cell_len(prompt) <= room else set_cell_size(prompt, room - 1) + "…"
        line.append("  " + shown, style="dim")
    return line

