"""A learner's stats page (``GET /stats``): the figures of ``bertdrill stats`` as SVG charts drawn on the server.

The same figures as the terminal's (:mod:`bertdrill.app.progress`): the heatmap, streaks, the forecast,
retention, card states, leeches and hardest cards; what each desired retention would cost this learner (the
workload table and chart of ``stats --workload``, fsrs-rs's simulator with their own parameters and answer
times); and how well each scheduler predicts their recall (``stats --calibration``). The charts are drawn by
:mod:`bertdrill.adapters.export.chart`, coloured by the page's style sheet, so they follow its theme.

On a learner's own server the page reads their database; on the class server, the logged-in learner's rows
only (their desk's store acts as them; a teacher is sent to the dashboard). The page takes no parameter, so
no id in a URL can reach anyone else's figures. The teacher's page of one learner
(:mod:`bertdrill.web.teaching`) draws the same charts from the teacher's view of that learner.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from bertdrill.adapters.store.schema import MATURE_DAYS
from bertdrill.cli.base import decimal, number, percent
from bertdrill.cli.stats import stage_word
from bertdrill.core.i18n import _, ngettext
from bertdrill.core.scheduling.registry import registered
from bertdrill.core.scheduling.state import study_day
from bertdrill.ports import ExamAsked, SchedulerAsked
from bertdrill.web import pages
from bertdrill.web.desk import Desk, Sittings
from bertdrill.web.pages import render, speaking

if TYPE_CHECKING:
    from bertdrill.app.progress import Costs, Figures
    from bertdrill.core.cards import Card
    from bertdrill.core.scheduling.calibration import Report
    from bertdrill.ports import ReviewStore, SchedulerChoice

FORECAST_DAYS = 14
KEPT_REPORTS = 256  # calibration reports kept, one per learner and log size (a fit takes a while)


Done = TypeVar("Done")


class StatsPages:
    """The stats page of whoever the request is from (``place`` gives their desk), and its forms that switch the
    learner's own scheduler and set their exam plan (``own`` gives their sittings: 403 for a teacher, before
    anything of the form is read)."""

    def __init__(self, place: Callable[[Request], Desk], own: Callable[[Request], Sittings]):
        self.place = place
        self.own = own
        self.calibrations = Calibrations()

    async def show(self, request: Request) -> Response:
        return await run_in_threadpool(self._show, request)  # the store blocks: never on the event loop

    def _show(self, request: Request, notices: Sequence[str] = (), status: int = 200,
              asked: FormData | None = None) -> Response:
        desk = self.place(request)
        with desk.lock, speaking(pages.page_language(request, desk.languages)):
            today = study_day(desk.clock(), desk.limits.rollover_hour)
            by_id = {card.id: card for card in desk.cards}
            context = progress(desk.store, by_id, today) | scheduler_form(desk.store, desk.lessons, today, asked)
            if context["figures"].answers:
                context |= costs(desk.store, today) | self.calibrations.view(desk.store, context["figures"].answers)
            return render(request, "stats.html", status, notices=list(notices), **context)

    async def switch(self, request: Request) -> Response:
        """``POST /stats/scheduler``: the form's switch, then the page with what it did (or why it could not)."""
        from bertdrill.cli.base import scheduler_of
        from bertdrill.cli.scheduler import switched_lines

        form = await pages.read_form(request)
        return await run_in_threadpool(self._act, request, form, lambda sittings: switched_lines(
            sittings.switch_scheduler(asked_by(form), scheduler_of), undo_by_form))

    async def exam(self, request: Request) -> Response:
        """``POST /stats/exam``: the form's exam plan set (or ended), then the page with what it asks."""
        from bertdrill.cli.base import scheduler_of
        from bertdrill.cli.exam import cannot_lines, planned_lines

        def plan(sittings: Sittings) -> list[str]:
            planned = sittings.plan_exam(exam_asked_by(form), scheduler_of)
            return planned_lines(planned) + cannot_lines(planned) or [_("No exam plan was set: nothing to change.")]

        form = await pages.read_form(request)
        return await run_in_threadpool(self._act, request, form, plan)

    def _act(self, request: Request, form: FormData, act: Callable[[Sittings], list[str]]) -> Response:
        with speaking(pages.page_language(request, request.state.languages)):
            pages.check_csrf(request, form)
            sittings = self.own(request)
            try:
                lines = switching(lambda: act(sittings))
            except HTTPException as exc:
                if exc.status_code not in (400, 409):
                    raise
                return self._show(request, [str(exc.detail)], exc.status_code, asked=form)  # the form as sent
            return self._show(request, lines)


def undo_by_form(before: SchedulerChoice, _after: SchedulerChoice) -> str:
    """How to go back, on the page: its form (a terminal command is no use to a browser's learner)."""
    from bertdrill.cli.scheduler import describe

    return _("To undo, switch back to {scheduler} with the form below.").format(scheduler=describe(before))


def switching(run: Callable[[], Done]) -> Done:
    """``run``'s switch (or exam plan); what cannot be done is an HTTPException with its message: 400 for options that ask
    for no choice (a retention out of range, a set that does not exist), 409 for a history too short to fit
    (nothing changed: FSRS keeps its default parameters). The class server's API and its page alike."""
    from bertdrill.app.scheduling import ChoiceError
    from bertdrill.core.scheduling.fitted import NotEnoughHistory
    from bertdrill.core.scheduling.fsrs import RetentionError

    try:
        return run()
    except (ChoiceError, RetentionError) as exc:
        raise HTTPException(400, str(exc)) from None
    except NotEnoughHistory as exc:
        raise HTTPException(409, str(exc)) from None


def asked_by(form: FormData) -> SchedulerAsked:
    """What the scheduler form asks for: FSRS's fields count only with FSRS chosen (400 for a field that is not
    one the form sends)."""
    from bertdrill.core.scheduling.registry import SchedulerName, Spreading

    name, spread = form.get("scheduler"), form.get("spread")
    if name not in set(SchedulerName) or spread not in set(Spreading):
        raise HTTPException(400, _("choose a scheduler and how its intervals are spread"))
    chosen, spreading = SchedulerName(str(name)), Spreading(str(spread))
    if not registered(chosen).has_retention:
        return SchedulerAsked(chosen, spread=spreading)
    retention = typed_retention(form.get("retention"))
    parameters = form.get("parameters")
    fit = parameters == "fit"
    kept = None if fit or not isinstance(parameters, str) or parameters in ("", "keep") else parameters[:20]
    return SchedulerAsked(chosen, retention, fit, kept, spreading)


def typed_retention(text: object) -> float:
    """The form's desired retention as typed in the page's language (``0,85`` from a Turkish browser as ``0.85``);
    400 for anything but a number in range, saying the range as the page writes it (0,70 in Turkish)."""
    from bertdrill.core.scheduling.fsrs import MAX_RETENTION, MIN_RETENTION

    try:
        retention = float(text.strip().replace(",", ".")) if isinstance(text, str) and len(text) < 20 else None
    except ValueError:
        retention = None
    if retention is None or not MIN_RETENTION <= retention <= MAX_RETENTION:  # NaN is in no range
        raise HTTPException(400, _("the desired retention is a number from {low} to {high}").format(
            low=decimal(MIN_RETENTION, 2), high=decimal(MAX_RETENTION, 2)))
    return retention


def exam_day(value: object) -> date:
    """An exam day as the form or the API sends it (``2027-01-15``); 400 for anything else, and for a day past
    :data:`pages.LAST_DAY` (planning up to year 9999 overflowed the calendar: a 500)."""
    try:
        day = date.fromisoformat(value) if isinstance(value, str) and len(value) <= 10 else None
    except ValueError:
        day = None
    if day is None:
        raise HTTPException(400, _("the exam's day is a date such as 2027-01-15"))
    if day > pages.LAST_DAY:
        raise HTTPException(400, _("the exam's day is at the latest {day}").format(day=pages.LAST_DAY.isoformat()))
    return day


def exam_asked_by(form: FormData) -> ExamAsked:
    """What the exam form asks for: its day (``plan`` ``off``: the plan ended), target and lesson (400 for a
    field that is not one the form sends)."""
    lesson = form.get("lesson")
    chosen = lesson if isinstance(lesson, str) and lesson and len(lesson) <= 200 else None
    if form.get("plan") == "off":
        return ExamAsked(None, lesson=chosen)
    day, target = form.get("day"), form.get("target")
    planned = exam_day(day)
    try:
        wanted = float(target.strip().replace(",", ".")) if isinstance(target, str) and len(target) < 20 else None
    except ValueError:
        wanted = None
    if wanted is None:
        from bertdrill.app.scheduling import MAX_TARGET, MIN_TARGET

        raise HTTPException(400, _("the exam's target is a number from {low} to {high}").format(
            low=decimal(MIN_TARGET, 2), high=decimal(MAX_TARGET, 2)))
    return ExamAsked(planned, wanted, chosen)


def scheduler_form(store: ReviewStore, lessons: Sequence[str], today: date,
                   asked: FormData | None = None) -> dict[str, Any]:
    """What the scheduler and exam forms show: the choice in use, described; the learner's fitted sets; the
    exam plans, every lesson's and each lesson's own. After a refusal (``asked``: the form as sent), each field
    shows what was sent, so the learner corrects it instead of choosing everything again."""
    from bertdrill.app.scheduling import MAX_TARGET, MIN_TARGET
    from bertdrill.cli.scheduler import describe, fitted_line, spread_words
    from bertdrill.core.scheduling.exam import DEFAULT_EXAM_TARGET
    from bertdrill.core.scheduling.fsrs import DEFAULT_RETENTION, MAX_RETENTION, MIN_RETENTION
    from bertdrill.core.scheduling.registry import DEFAULT_SPREADING, Spreading

    choice = store.scheduler_choice()
    shown = {"scheduler": choice.name.value, "retention": f"{choice.retention or DEFAULT_RETENTION:.2f}",
             "parameters": "keep", "spread": (choice.spread or DEFAULT_SPREADING).value,
             "day": (choice.exam or today + timedelta(days=30)).isoformat(),
             "target": f"{choice.exam_target or DEFAULT_EXAM_TARGET:.2f}", "lesson": ""}
    if asked is not None:
        shown |= {name: value for name, value in asked.items() if name in shown and isinstance(value, str)}
    return {"choice": choice, "choice_words": describe(choice), "shown": shown, "fitted_sets": [
                (each.number, fitted_line(each)) for each in store.fitted_sets()],
            "retention_range": (f"{MIN_RETENTION:.2f}", f"{MAX_RETENTION:.2f}"),
            "spreads": [(each.value, spread_words(each)) for each in Spreading], "exam_lessons": lessons,
            "lesson_exams": [(each.lesson, each.exam.isoformat(), each.target) for each in choice.lesson_exams],
            "exam_first": (today + timedelta(days=1)).isoformat(),
            "exam_target": choice.exam_target or DEFAULT_EXAM_TARGET,
            "exam_range": (f"{MIN_TARGET:.2f}", f"{MAX_TARGET:.2f}")}


def progress(store: ReviewStore, by_id: Mapping[str, Card], today: date) -> dict[str, Any]:
    """The figures and charts of the page's first part (the teacher's page of a learner shows them too)."""
    from bertdrill.app.progress import gather
    from bertdrill.core.i18n import language

    spoken = language()
    figures = gather(store, today, FORECAST_DAYS, None, lambda ids: {
        card_id: " ".join(by_id[card_id].question(spoken).split()) for card_id in ids if card_id in by_id})
    return {"figures": figures, "heatmap_chart": heatmap_chart(figures), "forecast_chart": forecast_chart(figures),
            "retention_chart": retention_chart(figures), "states": [
                (stage_word(stage), number(count)) for stage, count in figures.states.items()],
            "streak_words": streak_words(figures), "ef": (decimal(figures.average_ef, 2)
                                                          if figures.average_ef is not None else None),
            "decimal": decimal, "mature_days": MATURE_DAYS}


def heatmap_chart(figures: Figures) -> Markup:
    from bertdrill.adapters.export.chart import heatmap_days, heatmap_svg
    from bertdrill.core import stats

    heat = figures.heatmap
    tips = [_("{day}: {answers}").format(day=day.isoformat(), answers=ngettext(
        "{count} answer", "{count} answers", heat.counts.get(day, 0)).format(count=number(heat.counts.get(day, 0))))
        for day in heatmap_days(heat)]
    legend = [_("none") if level == 0 else number(low) if low == high else f"{number(low)}–{number(high)}"
              for level, low, high in heat.legend()]
    title = ngettext("Reviews, last {weeks} week", "Reviews, last {weeks} weeks", heat.weeks).format(
        weeks=number(heat.weeks))
    return Markup(heatmap_svg(heat, title, stats.weekday_names(), tips, legend))  # noqa: S704 - built escaped


def forecast_chart(figures: Figures) -> Markup:
    from bertdrill.adapters.export.chart import Bar, bars_svg
    from bertdrill.core import stats

    weekdays = stats.weekday_names()
    bars = [Bar(label=str(day.day), under=weekdays[day.weekday()], value=count, shown=number(count),
                tip=f"{weekdays[day.weekday()]} {stats.short_date(day).strip()}: {number(count)}",
                marked=day == figures.today) for day, count in figures.forecast]
    return Markup(bars_svg(bars, due_title(len(figures.forecast))))  # noqa: S704 - built escaped


def due_title(days: int) -> str:
    return ngettext("Due in the next {days} day", "Due in the next {days} days", days).format(days=number(days))


def retention_chart(figures: Figures) -> Markup:
    from bertdrill.adapters.export.chart import Share, shares_svg
    from bertdrill.core import stats

    retention = figures.retention
    rows = [Share(name, share, percent(decimal(share * 100, 1)) + " · " + _("{passed} of {total}").format(
                passed=number(passed), total=number(total)) if share is not None else _("no reviews yet"))
            for name, share, passed, total in (
                (_("young"), retention.young, retention.young_passed, retention.young_total),
                (_("mature"), retention.mature, retention.mature_passed, retention.mature_total))]
    target = stats.RETENTION_TARGET
    return Markup(shares_svg(rows, _("Retention"), target=target,  # noqa: S704 - built escaped
                             target_words=_("target {percent}").format(percent=percent(decimal(target * 100, 0)))))


def streak_words(figures: Figures) -> str:
    from bertdrill.cli.base import day_count

    current, longest = figures.streak
    return _("  {current} now · longest {longest}").format(current=day_count(current), longest=day_count(longest)).strip()


def costs(store: ReviewStore, today: date) -> dict[str, Any]:
    """The workload table and chart (``stats --workload``), for this learner."""
    from bertdrill.app.progress import workload
    from bertdrill.cli.workload import chart_svg

    found: Costs = workload(store, None, today)
    return {"costs": found, "workload_chart": Markup(chart_svg(  # noqa: S704 - built escaped
        found.rows, found.best, standalone=False, width=480))}


class Calibrations:
    """Calibration reports, kept per learner and number of answers (fitting FSRS five times takes a while;
    a new answer makes a new report)."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, int], Report] = OrderedDict()
        self._lock = threading.Lock()

    def report(self, store: ReviewStore, answers: int) -> Report:
        from bertdrill.app.progress import calibration

        key = (store.where + "\0" + str(getattr(store, "learner", "")), answers)
        with self._lock:
            found = self._kept.get(key)
        if found is None:
            found = calibration(store, None)
            with self._lock:
                self._kept[key] = found
                while len(self._kept) > KEPT_REPORTS:
                    self._kept.popitem(last=False)
        return found

    def view(self, store: ReviewStore, answers: int) -> dict[str, Any]:
        from bertdrill.adapters.export.chart import THIN_BAND, Series, calibration_svg
        from bertdrill.core.scheduling.calibration import TITLES, verdict

        report = self.report(store, answers)
        names = {**TITLES, "baseline": _("your average")}
        scores = sorted(report.scores, key=lambda each: each.log_loss)
        chart = None
        if report.enough:
            chart = Markup(calibration_svg(  # noqa: S704 - built escaped
                [Series(names[each.name], [(row.predicted, row.observed, row.count) for row in each.table])
                 for each in scores], _("Predicted against observed recall"), _("predicted"), _("recalled")))
        return {"calibration": report, "calibration_chart": chart, "calibration_names": names, "thin_band": THIN_BAND,
                "calibration_scores": [*scores, report.baseline] if report.enough else [],
                "calibration_verdict": verdict(report, lambda value: decimal(value, 3))}

