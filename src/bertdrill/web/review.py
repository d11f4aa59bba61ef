"""The review pages: one card at a time, answered with a plain form, graded, saved at once.

The flow is the terminal's (:class:`bertdrill.cli.review.Review`), one page per step, each step a form that
works with JavaScript off (and redirects after posting, so a reload never answers twice):

1. the question (``GET /review``): the card, its options, a text field; posting it (``/review/answer``) grades
   the typed answer with :func:`bertdrill.core.grading.grade` and the lesson's diagnoser;
2. the verdict, on the same address: ✓/✗ in words, the diff or the diagnosis, the answer, the explanation and
   one button per grade with when the card comes back (the scheduler's preview); posting a grade
   (``/review/grade``) records it through the session, committed before the next card shows;
3. undo, bury and suspend act on the session as the terminal's ``u``, ``b``, ``s`` do.

Every form names the card it was drawn for: a form from a stale tab (the card was answered since) is refused
with 409, so a double post never records an answer twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bertdrill.cli.review import (
    GRADE_WORDS,
    clean,
    due_words,
    entry_word,
    graded_by_the_learner,
    grades_legend,
    kind_name,
    options,
    phrased,
    saved_message,
)
from bertdrill.core import i18n
from bertdrill.core.errors import StoreError
from bertdrill.core.grading import grade
from bertdrill.core.i18n import _, ngettext
from bertdrill.core.scheduling.state import GRADES, Grade, NextStates
from bertdrill.web import pages
from bertdrill.web.desk import Desk, Pending, Sitting, Sittings
from bertdrill.web.pages import check_csrf, field, read_form, render, speaking

if TYPE_CHECKING:
    from bertdrill.app.session import Session

SITTING_COOKIE = "bertdrill_sitting"
LETTERS = "abcdefghij"  # choice options, as grading reads them (cli.review.LETTERS)


@dataclass(frozen=True)
class GradeButton:
    grade: int
    words: str
    when: str | None  # when the card comes back; None for a re-drill (the schedule stays)
    suggested: bool


class ReviewPages:
    """The review routes over the sittings of whoever the request is from (``place``)."""

    def __init__(self, place: Callable[[Request], Sittings], told: Callable[[StoreError], str] = str):
        self.place = place
        self.told = told  # what the learner reads of a store's refusal (the class server keeps its database's name)

    # ----------------------------------------------------------------- pages

    async def show(self, request: Request) -> Response:
        return await run_in_threadpool(self._show, request)  # the store blocks: never on the event loop

    def _show(self, request: Request) -> Response:
        sittings = self.place(request)
        desk = sittings.desk
        with desk.lock, speaking(pages.page_language(request, desk.languages)):
            sitting = sittings.find(request.cookies.get(SITTING_COOKIE)) or sittings.start()
            response = self._page(request, desk, sitting)
        response.set_cookie(SITTING_COOKIE, sitting.id, **pages.cookie_options(request))
        return response

    def _page(self, request: Request, desk: Desk, sitting: Sitting) -> Response:
        session = sitting.session
        entry = session.current
        pending = sitting.pending if entry and sitting.pending and sitting.pending.card_id == entry.card.id else None
        if pending is None:
            # the card as it is asked: show() gives it its fresh numbers (and starts the time to answer)
            entry = session.show()
        notices = sitting.take_notices()
        if entry is None:
            return render(request, "done.html", sitting=sitting, notices=notices, summary=session.summary(),
                          can_undo=session.can_undo, minutes_seconds=divmod(round(session.summary().seconds), 60))
        language = i18n.language()
        card = entry.card
        offered = options(card, language)
        context: dict[str, Any] = {
            "sitting": sitting, "notices": notices, "entry": entry, "card": card, "kind": kind_name(card.kind),
            "self_graded": graded_by_the_learner(card),
            "entry_words": entry_word(entry.kind), "question": phrased(card, language) or card.question(language),
            "options": [(index, LETTERS[index - 1], option) for index, option in enumerate(offered, start=1)],
            "position": session.position, "can_undo": session.can_undo, "legend": grades_legend(),
            "pending": pending, "max_answer": pages.MAX_ANSWER_CHARS,
        }
        if pending is None:
            return render(request, "question.html", **context)
        verdict = pending.verdict
        context.update(
            verdict=verdict, expected=verdict.expected if verdict else card.answer[language],
            explanation=card.explanation.get(language), cited=card.cited.get(language) if card.cited else None,
            # free text the learner judges gets no suggested grade, so a right paraphrase is never a 1
            buttons=self._buttons(session, verdict.suggested if verdict and not verdict.judge else None))
        return render(request, "answer.html", **context)

    def _buttons(self, session: Session, suggested: int | None) -> list[GradeButton]:
        states = session.preview()
        today = session.study_day(session.clock())
        return [GradeButton(value, _(GRADE_WORDS[value]), _due(states, value, today), value == suggested)
                for value in GRADES]

    # ----------------------------------------------------------------- actions

    async def answer(self, request: Request) -> Response:
        form = await read_form(request)
        return await run_in_threadpool(self._act, request, form, lambda desk, sitting: self._grade_typed(desk, sitting, form))

    async def grade(self, request: Request) -> Response:
        form = await read_form(request)
        return await run_in_threadpool(self._act, request, form, lambda desk, sitting: self._record(desk, sitting, form))

    async def undo(self, request: Request) -> Response:
        form = await read_form(request)
        return await run_in_threadpool(self._act, request, form, self._undo, current=False)

    async def bury(self, request: Request) -> Response:
        form = await read_form(request)
        return await run_in_threadpool(self._act, request, form, lambda desk, sitting: self._set_aside(desk, sitting, bury=True))

    async def suspend(self, request: Request) -> Response:
        form = await read_form(request)
        return await run_in_threadpool(self._act, request, form, lambda desk, sitting: self._set_aside(desk, sitting, bury=False))

    async def again(self, request: Request) -> Response:
        """A new queue in the same sitting: cards due since, re-drills still to do, new cards left for today."""
        form = await read_form(request)
        return await run_in_threadpool(self._act, request, form, self._again, current=False)

    def _again(self, desk: Desk, sitting: Sitting) -> None:
        sitting.session = desk.session()
        sitting.pending = None

    def _act(self, request: Request, form: FormData, action: Callable[[Desk, Sitting], None], *, current: bool = True) -> Response:
        """Run ``action`` on the request's sitting, after the CSRF token and (``current``) the card are checked."""
        sittings = self.place(request)
        desk = sittings.desk
        with desk.lock, speaking(pages.page_language(request, desk.languages)):
            sitting = sittings.find(request.cookies.get(SITTING_COOKIE))
            if sitting is None:
                raise HTTPException(403, _("no review open in this browser: reload the page"))
            check_csrf(request, form)
            if current:
                entry = sitting.session.current
                if entry is None or field(form, "card") != entry.card.id:
                    raise HTTPException(409, _("this form is for a card that is no longer the current one"))
            action(desk, sitting)
        return RedirectResponse("/review", status_code=303)

    def _grade_typed(self, desk: Desk, sitting: Sitting, form: FormData) -> None:
        entry = sitting.session.current
        assert entry is not None
        option = form.get("option")
        typed = field(form, "option", limit=8) if option is not None else field(
            form, "answer", limit=pages.MAX_ANSWER_CHARS, too_long=413)
        typed = clean(typed)
        card = entry.card
        if graded_by_the_learner(card) and not typed.strip():
            sitting.pending = Pending(card.id, None, None)  # shown, to grade oneself, as Enter does in the terminal
            return
        # a card asked with fresh numbers is graded, and a wrong number explained, on the variant's numbers
        verdict = grade(card, typed, i18n.language(), diagnoser=desk.diagnoser(sitting.session, card))
        if verdict.retry:  # an option that does not exist: say so, grade nothing
            sitting.notices.append(verdict.feedback)
            return
        sitting.pending = Pending(card.id, typed, verdict)

    def _record(self, desk: Desk, sitting: Sitting, form: FormData) -> None:
        entry = sitting.session.current
        assert entry is not None
        pending = sitting.pending
        if pending is None or pending.card_id != entry.card.id:
            raise HTTPException(409, _("answer the card before grading it"))
        chosen = pages.whole(field(form, "grade", limit=1), max(GRADES))
        if chosen is None or chosen not in GRADES:
            raise HTTPException(400, _("a grade is a whole number from 0 to 5"))
        if desk.in_class:  # as the class's terminal review records it (bertdrill.app.served)
            from bertdrill.app.served import recorded_grade

            chosen = recorded_grade(chosen, pending.verdict, graded_by_the_learner(entry.card))
        outcome = sitting.session.answer(chosen, pending.typed)
        sitting.pending = None
        sitting.notices.append(saved_message(outcome, sitting.session.day))
        if outcome.suspended:
            sitting.notices.append(_("Leech: {card} has lapsed {lapses} times and is suspended: rewrite it "
                                     "(undo takes this back).").format(card=entry.card.id, lapses=outcome.after.lapses))
        elif outcome.became_leech:
            sitting.notices.append(ngettext(
                "Leech: {card} has lapsed {lapses} time, now tagged a leech.",
                "Leech: {card} has lapsed {lapses} times, now tagged a leech.",
                outcome.after.lapses).format(card=entry.card.id, lapses=outcome.after.lapses))

    def _undo(self, desk: Desk, sitting: Sitting) -> None:
        sitting.pending = None
        try:
            back = sitting.session.undo()
        except StoreError as exc:  # another tab answered the card since: both answers stay
            sitting.notices.append(_("Not undone: {reason}.").format(reason=self.told(exc)))
            return
        sitting.notices.append(_("Undone: {card} is back as it was.").format(card=back.card.id) if back
                               else _("Nothing to undo."))

    def _set_aside(self, desk: Desk, sitting: Sitting, *, bury: bool) -> None:
        sitting.pending = None
        if bury:
            entry = sitting.session.bury()
            sitting.notices.append(_("Buried {card} until tomorrow.").format(card=entry.card.id))
        else:
            entry = sitting.session.suspend()
            sitting.notices.append(_("Suspended {card}: it will not be shown again (undo takes this back).").format(
                card=entry.card.id))


def _due(states: NextStates | None, grade: Grade, today: date) -> str | None:
    """When the card comes back after ``grade``, in words (None for a re-drill: it keeps its schedule)."""
    if states is None:
        return None
    due = states.after(grade).due
    return due_words(due, today) if due is not None else None
