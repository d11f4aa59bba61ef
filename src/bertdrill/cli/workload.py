"""``bertdrill stats --workload``: what each desired retention would cost this learner over a year, and the one
with the most knowledge per minute (see :mod:`bertdrill.core.scheduling.workload`)."""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from bertdrill.cli.base import card_count, decimal, err, inputs, number, out
from bertdrill.core.i18n import _

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bertdrill.core.scheduling.workload import Habits, Workload
    from bertdrill.ports import ReviewStore

WIDTHS = (10, 14, 14, 13, 12)  # the table's columns


def show(store: ReviewStore, lessons: Collection[str] | None, today: date, *, as_json: bool, chart: Path | None,
         force: bool = False) -> None:
    from bertdrill.app.progress import workload
    from bertdrill.core.scheduling.workload import DAYS, RETENTIONS

    err.print(_("Simulating a year at {count} desired retentions with fsrs-rs...").format(count=len(RETENTIONS)))
    costs = workload(store, lessons, today)
    rows, best, current, habits = costs.rows, costs.best, costs.current, costs.habits
    if chart is not None:
        draw(chart, rows, best, force=force)
    if as_json:
        out.print_json(json.dumps({
            "parameters": "fitted" if costs.fitted else "default", "cards": habits.cards,
            "new_per_day": habits.new_per_day, "days": DAYS, "current_retention": current,
            "best_retention": best.retention,
            "retentions": [{"retention": row.retention, "reviews_per_day": round(row.reviews_per_day, 2),
                            "minutes_per_day": round(row.minutes_per_day, 2), "remembered": round(row.remembered, 1),
                            "remembered_per_minute": round(row.per_minute, 4)} for row in rows]}))
        return
    for line in lines(rows, best, current, habits, fitted=costs.fitted):
        out.print(line, markup=False)
    if chart is not None:
        out.print(_("Chart written to {path}.").format(path=chart), markup=False)


def lines(rows: Sequence[Workload], best: Workload, current: float | None, habits: Habits, *, fitted: bool) -> list[str]:
    from bertdrill.core.scheduling.workload import DAYS

    whose = _("your fitted FSRS parameters") if fitted else _("FSRS's default parameters (fit yours: "
                                                                 "bertdrill scheduler fsrs --fit)")
    shown = [_("What each desired retention costs: a year of {cards}, {new} new a day, simulated by fsrs-rs "
               "with {whose} and your own answer times.").format(cards=card_count(habits.cards),
                                                                  new=number(habits.new_per_day), whose=whose), ""]
    columns = (_("retention"), _("reviews/day"), _("minutes/day"), _("remembered"), _("per minute"))
    widths = [max(width, len(title) + 2) for title, width in zip(columns, WIDTHS)]  # room for longer words
    shown.append("".join(f"{title:>{width}}" for title, width in zip(columns, widths)))
    for row in rows:
        marks = [mark for mark, wanted in ((_("best"), row is best), (_("yours"), row.retention == current)) if wanted]
        cells = (decimal(row.retention, 2), decimal(row.reviews_per_day, 1), decimal(row.minutes_per_day, 1),
                 number(round(row.remembered)), decimal(row.per_minute, 2))
        shown.append(("".join(f"{cell:>{width}}" for cell, width in zip(cells, widths)) + "  " + ", ".join(marks))
                     .rstrip())
    shown += ["", _("remembered: cards you would recall if asked after {days} days (the sum of FSRS's predicted "
                    "recall); per minute: remembered for each minute spent over the year.").format(days=DAYS),
              _("Most knowledge per minute at desired retention {best}. Choose with: bertdrill scheduler fsrs "
                "--retention {best_plain}").format(best=decimal(best.retention, 2),
                                                    best_plain=f"{best.retention:.2f}"),
              _("The simulation starts every card as new (fsrs-rs's Python binding takes no existing cards), so "
                "for a deck you are far into it overstates the first weeks' learning.")]
    return shown


def check_chart(path: Path, paths: list[Path] | None, db: str | None, *, force: bool) -> None:
    """Refuse, before any work, a ``--chart`` file that cannot be written, is one of the command's inputs, or is
    a file bertdrill did not write (without ``--force``)."""
    from bertdrill.adapters.export.chart import check_chart_target

    check_chart_target(path, force=force, inputs=inputs(paths, db))


def draw(path: Path, rows: Sequence[Workload], best: Workload, *, force: bool = False) -> None:
    from bertdrill.adapters.export.chart import write_chart

    write_chart(path, chart_svg(rows, best), force=force)


def chart_svg(rows: Sequence[Workload], best: Workload, *, standalone: bool = True, width: int | None = None) -> str:
    """The workload chart in the learner's language: a file of its own (``standalone``) or a page's drawing."""
    from bertdrill.adapters.export.chart import WIDTH, ChartRow, ChartWords, workload_svg

    words = ChartWords(title=_("A year at each desired retention"), minutes=_("minutes per day"),
                       per_minute=_("cards remembered per minute"), best=_("best"),
                       axis=_("desired retention"))
    chart_rows = [ChartRow(row.retention, row.minutes_per_day, row.per_minute, decimal(row.retention, 2),
                           decimal(row.minutes_per_day, 1), decimal(row.per_minute, 2)) for row in rows]
    return workload_svg(chart_rows, words, best.retention, standalone=standalone, width=width or WIDTH)
