"""``bertdrill stats --calibration``: how well SM-2, FSRS and FSRS fitted to this learner predict their recall,
on reviews no fitted parameter saw (time-series splits)."""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from typing import TYPE_CHECKING

from bertdrill.cli.base import decimal, number, out, percent, progress
from bertdrill.core.i18n import _

if TYPE_CHECKING:
    from bertdrill.core.scheduling.calibration import Report, Score
    from bertdrill.ports import SchedulerSettings

def calibration_report(store: SchedulerSettings, lessons: Collection[str] | None) -> Report:
    """Score the schedulers out of sample on the learner's log, a progress bar over the cards read."""
    from bertdrill.app.progress import calibration

    return calibration(store, lessons, track=lambda cards: progress(cards, _("Reading the review log")))


def show(store: SchedulerSettings, lessons: Collection[str] | None, *, as_json: bool) -> None:
    report = calibration_report(store, lessons)
    if as_json:
        out.print_json(json.dumps(as_data(report), ensure_ascii=False))
        return
    for line in lines(report):
        out.print(line, markup=False)


def as_data(report: Report) -> dict[str, object]:
    from bertdrill.core.scheduling.calibration import MIN_REVIEWS, verdict

    def figure(value: float) -> float | None:
        return None if math.isnan(value) else round(value, 4)

    def score(each: Score) -> dict[str, object]:
        return {"name": each.name, "log_loss": figure(each.log_loss), "rmse_bins": figure(each.rmse_bins),
                "auc": figure(each.auc),
                "table": [{"from": row.low, "to": row.high, "reviews": row.count,
                           "predicted": round(row.predicted, 4), "observed": round(row.observed, 4)}
                          for row in each.table]}

    return {"reviews": report.reviews, "recalled": report.recalled,
            "recall": round(report.recall, 4) if report.recall is not None else None,
            "enough": report.enough, "min_reviews": MIN_REVIEWS,
            "schedulers": [score(each) for each in report.scores], "baseline": score(report.baseline),
            "best": report.best.name if report.best else None, "verdict": verdict(report)}


def lines(report: Report) -> list[str]:
    """The screen, as plain lines (no colour is needed to read it)."""
    from bertdrill.core.scheduling.calibration import TITLES, verdict

    shown = [_("Calibration: how well each scheduler predicts your recall"), ""]
    if not report.enough:
        return [*shown, verdict(report, _figure)]
    shown.append(_("{reviews} reviews scored (each the first answer of a day to a card also answered on an "
                   "earlier day); you recalled {recall} of them.").format(
        reviews=number(report.reviews), recall=_share(report.recall)))
    shown.append("")
    names = {**TITLES, "baseline": _("your average")}
    width = max(len(name) for name in names.values()) + 2
    shown.append(" " * width + f"{_('log loss'):>10}{_('RMSE (bins)'):>14}{_('AUC'):>8}")
    for each in sorted(report.scores, key=lambda each: each.log_loss) + [report.baseline]:
        shown.append(f"{names[each.name]:<{width}}{_figure(each.log_loss):>10}{_figure(each.rmse_bins):>14}"
                     f"{_figure(each.auc):>8}")
    shown.append(_("Lower is better for log loss and RMSE: log loss weighs every review; RMSE (bins) compares "
                   "average prediction and recall in groups of similar reviews. Higher is better for AUC: how "
                   "often a review you recalled was predicted above one you forgot (0.5: a coin)."))
    if any(each.name == "fsrs-fitted" for each in report.scores):
        shown.append(_("FSRS* is FSRS fitted to your log by fsrs-rs, out of sample: your reviews are cut by date "
                       "into six parts, and each part after the first is predicted by parameters fitted on the "
                       "parts before it. The first part only trains, so no model is scored on it."))
    for each in sorted(report.scores, key=lambda each: each.log_loss):
        shown += ["", _("{scheduler}: predicted against observed recall").format(scheduler=names[each.name])]
        shown.append(f"  {_('band'):<12}{_('predicted'):>10}{_('recalled'):>10}{_('reviews'):>10}")
        for row in each.table:
            band = percent(f"{decimal(row.low * 100, 0)}–{decimal(row.high * 100, 0)}")
            shown.append(f"  {band:<12}{_share(row.predicted):>10}{_share(row.observed):>10}{number(row.count):>10}")
    return [*shown, "", verdict(report, _figure)]


def _share(share: float | None) -> str:
    return "–" if share is None else percent(decimal(share * 100, 1))


def _figure(value: float) -> str:
    """A score (log loss, RMSE, AUC) as the reader writes it: 0.512 in English, 0,512 in Turkish."""
    return decimal(value, 3)
