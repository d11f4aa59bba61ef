"""The teacher's dashboard charts (``/teacher``): the class's answers per study day and each learner's retention,
as SVG (:mod:`bertdrill.adapters.export.chart`), and what the dashboard links to (each learner's page, the sheet's
form). The pages it links to are :mod:`.teaching`'s."""

from __future__ import annotations

import secrets
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from bertdrill.cli.base import number
from bertdrill.core.i18n import _, ngettext

if TYPE_CHECKING:
    from bertdrill.adapters.store import ClassReport, PostgresStore

ACTIVITY_DAYS = 30  # the dashboard's chart of answers per day
RETENTION_SHOWN = 30  # learners on the dashboard's retention chart, lowest retention first
SHEET_ITEMS = 10  # items on the sheet of the hardest, unless the teacher asks for another number
SHEET_MOST = 50
SEED_MOST = 10**9


def dashboard_charts(store: PostgresStore, report: ClassReport, activity: dict[date, tuple[int, int]]
                     ) -> dict[str, Any]:
    """The dashboard's charts (``activity``: :meth:`PostgresStore.class_activity` of the last
    :data:`ACTIVITY_DAYS` days) and each learner's page, by name (the report names its learners)."""
    from bertdrill.adapters.export.chart import Bar, Share, bars_svg, shares_svg
    from bertdrill.core import stats as figures

    today = report.today
    bars = []
    for offset in range(ACTIVITY_DAYS - 1, -1, -1):
        day = today - timedelta(days=offset)
        answers, learners = activity.get(day, (0, 0))
        bars.append(Bar(label=str(day.day), value=answers, shown=number(answers), marked=day == today,
                        under=figures.month_names()[day.month - 1] if day.day == 1 or offset == ACTIVITY_DAYS - 1
                        else "", tip=_("{day}: {answers} from {learners}").format(
                            day=day.isoformat(), answers=ngettext("{count} answer", "{count} answers", answers)
                            .format(count=number(answers)), learners=ngettext(
                                "{count} learner", "{count} learners", learners).format(count=number(learners)))))
    lowest = sorted((row for row in report.learners if row.retention is not None),
                    key=lambda row: (row.retention, row.learner))[:RETENTION_SHOWN]
    shares = [Share(row.learner, row.retention, _percent(row.retention) + " · " + _("{passed} of {total}").format(
        passed=number(row.passed), total=number(row.reviews))) for row in lowest]
    target = figures.RETENTION_TARGET
    return {
        "activity_chart": Markup(bars_svg(bars, _("Answers per day, last {days} days").format(  # noqa: S704 - escaped
            days=ACTIVITY_DAYS), width=420)),
        "retention_chart": Markup(shares_svg(shares, _("Retention per learner, lowest first"), target=target,  # noqa: S704
                                             target_words=_("target {percent}").format(percent=_percent(target)),
                                             width=420)) if shares else None,
        "activity_days": ACTIVITY_DAYS, "retention_shown": RETENTION_SHOWN,
        "sheet_items": SHEET_ITEMS, "sheet_most": SHEET_MOST, "sheet_seed": secrets.randbelow(SEED_MOST),
    }


def learner_pages(store: PostgresStore) -> dict[str, int]:
    """Each current learner's page id, by the name the report shows."""
    return {member.name: member.id for member in store.class_members() if not member.is_teacher}


def _percent(share: float | None) -> str:
    from bertdrill.cli.base import decimal, percent

    return "–" if share is None else percent(decimal(share * 100, 0))
