"""The class server's JSON API: what a learner's terminal needs (``bertdrill login``, ``review``, ``scheduler``).

Exactly the review session's reads and writes, and the learner's own scheduler choice and exam plan (switched
by :mod:`bertdrill.app.scheduling`, as on a store of one's own), for the member a bearer token belongs to (``Authorization:
Bearer <token>``, the token a login here gave: kept only as its SHA-256, as the browser's are, ending after
30 days or at ``/api/logout``). Each request runs as that member under row-level security, like a page; the
writes go through :mod:`bertdrill.app.served`, which decides the answer's time, kind, grade and schedule on
the server. Teachers get 403 here: the API is a learner's review. Every reply is JSON; every error is
``{"error": "..."}`` in the learner's language with a 4xx (a 503 when the database fails), never a traceback.

=========================  ==========================================================
``POST /api/login``        ``{"name", "password"}`` -> ``{"token", "name"}`` (rate-limited as the page is)
``POST /api/logout``       ends the token's login
``GET /api/class``         the member, the server's clock, the class's limits, the lessons' texts
``GET /api/due`` ...       the queue: ``due``, ``new``, ``redrill``, ``day-counts``, ``due-count``,
                           ``forecast``, ``status`` (``day``, ``limit``, ``days``, ``lessons`` as a JSON list)
``GET /api/state``         ``?card=ID``: the learner's state of a card
``GET /api/scheduler``     the learner's scheduler choice (for the previews, and ``bertdrill scheduler``)
``GET /api/fitted-sets``   the learner's fitted FSRS parameter sets, newest first
``POST /api/scheduler``    ``{"name", "retention", "fit", "parameters", "spread"}`` (each may be null; ``fit``
                           false): switch the learner's scheduler (:mod:`bertdrill.app.scheduling`, under
                           their desk's lock) -> the choice before and after, cards, answers, due before/after;
                           400 for a bad request, 409 for too short a history to fit
``POST /api/exam``         ``{"day", "target", "lesson"}`` (``day`` null ends the plan; ``target``, ``lesson``
                           may be null): set the learner's exam plan (:func:`bertdrill.app.scheduling.plan_exam`,
                           at the class's limits) -> what it did, the reviews and days before it, the cards that
                           cannot make it; 400 for a bad request
``POST /api/answers``      an answer (``request``: the client's id; sent again, it is logged once)
``POST /api/undo``         ``{"answer": id}``: one of today's answers
``POST /api/flags``        ``{"card", "suspended", "bury", "buried_until"}``
``POST /api/suspend``      ``{"card"}``: logged as a card action
``POST /api/undo-action``  ``{"action": id}``
=========================  ==========================================================
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from datetime import date
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bertdrill.adapters.remote.wire import encode
from bertdrill.app import served
from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _
from bertdrill.core.scheduling.state import Grade, study_day
from bertdrill.ports import ExamAsked, SchedulerAsked
from bertdrill.web import pages
from bertdrill.web.classroom import NAME_LIMIT, PASSWORD_LIMIT, ClassServer, client_address
from bertdrill.web.pages import speaking
from bertdrill.web.stats import exam_day, switching

if TYPE_CHECKING:
    from bertdrill.adapters.store import PostgresStore
    from bertdrill.adapters.store.members import Member
    from bertdrill.ports import ExamPlanned, Switched

Named = TypeVar("Named", bound=StrEnum)
GRADE_VALUES = frozenset(int(grade) for grade in Grade)
MAX_BODY_BYTES = 64 * 1024  # an answer is a few hundred bytes; a typed answer is cut at 4,096 characters
REQUEST_ID_LIMIT = 64
Handler = Callable[[Request], Awaitable[Response]]


def api_routes(server: ClassServer) -> list[Route]:
    api = ClassApi(server)
    reads: dict[str, Callable[[PostgresStore, Request], Any]] = {
        "/api/due": lambda store, request: store.due_ids(_day(request), lessons=_lessons(request),
                                                         limit=_count(request, "limit")),
        "/api/new": lambda store, request: store.new_ids(_day(request), lessons=_lessons(request),
                                                         limit=_count(request, "limit")),
        "/api/redrill": lambda store, request: store.redrill_ids(_day(request), lessons=_lessons(request)),
        "/api/day-counts": lambda store, request: store.day_counts(_day(request), lessons=_lessons(request)),
        "/api/due-count": lambda store, request: store.due_count(_day(request), lessons=_lessons(request)),
        "/api/forecast": lambda store, request: store.forecast(_day(request), _count(request, "days", 400),
                                                               lessons=_lessons(request)),
        "/api/status": lambda store, request: store.status(_day(request), lessons=_lessons(request)),
        "/api/state": lambda store, request: store.state(api.card(request.query_params.get("card"))),
        "/api/scheduler": lambda store, request: store.scheduler_choice(),
        "/api/fitted-sets": lambda store, request: store.fitted_sets(),
    }
    return [
        Route("/api/login", api.login, methods=["POST"]),
        Route("/api/logout", api.logout, methods=["POST"]),
        Route("/api/class", api.learner(api.class_info)),
        *(Route(path, api.learner(lambda member, request, read=read: read(api.store(member), request)))
          for path, read in reads.items()),
        Route("/api/scheduler", api.learner(api.choose, body=True), methods=["POST"]),
        Route("/api/exam", api.learner(api.exam, body=True), methods=["POST"]),
        Route("/api/answers", api.learner(api.answer, body=True), methods=["POST"]),
        Route("/api/undo", api.learner(api.undo, body=True), methods=["POST"]),
        Route("/api/flags", api.learner(api.flags, body=True), methods=["POST"]),
        Route("/api/suspend", api.learner(api.suspend, body=True), methods=["POST"]),
        Route("/api/undo-action", api.learner(api.undo_action, body=True), methods=["POST"]),
    ]


class ClassApi:
    """The API's handlers, over the class server's logins, lessons and desks."""

    def __init__(self, server: ClassServer):
        self.server = server
        self._balances: dict[int, served.Balance] = {}  # each learner's, between their answers
        self._lock = threading.Lock()
        server.switched.append(self._forget_balance)  # a switch moves every due day: the load is read again

    def _forget_balance(self, member_id: int) -> None:
        with self._lock:
            self._balances.pop(member_id, None)

    # ----------------------------------------------------------------- around every request

    def learner(self, work: Callable[..., Any], *, body: bool = False) -> Handler:
        """A handler that finds the token's member (401 without one, 403 for a teacher), reads the JSON body when
        ``body``, runs ``work(member, request[, body])`` off the event loop and replies with its result as JSON."""

        async def handle(request: Request) -> Response:
            with speaking(pages.page_language(request, self.server.languages)):
                try:
                    data = await _json_body(request) if body else None
                    return await run_in_threadpool(self._as_learner, request, work, data)
                except HTTPException as exc:
                    return _error(exc.status_code, str(exc.detail))

        return handle

    def _as_learner(self, request: Request, work: Callable[..., Any], data: dict[str, Any] | None) -> Response:
        with speaking(pages.page_language(request, self.server.languages)):
            try:
                member = self.server.token_member(_bearer(request))
                if member is None:
                    raise HTTPException(401, _("your login has ended (expired, logged out, or your password was "
                                               "reset): log in again with bertdrill login"))
                if member.is_teacher:
                    raise HTTPException(403, _("the API is a learner's review; a teacher reads the class at /teacher"))
                found = work(member, request) if data is None else work(member, request, data)
                return JSONResponse(encode(found))
            except HTTPException as exc:
                return _error(exc.status_code, str(exc.detail))
            except served.Refused as exc:
                return _error(409, str(exc))
            except BertdrillError as exc:  # a refusal (409), or the database failed (503, never naming it); no traceback
                return _error(503 if self.server.database_failed(exc) else 409, self.server.told(exc))

    def store(self, member: Member) -> PostgresStore:
        """The member's store, acting as them (their desk is made, their schedules synced, on first use)."""
        self.server.sittings_of(member)
        return self.server.store.acting_as(member)

    def card(self, card_id: str | None) -> str:
        if not card_id or card_id not in self.server.by_id:
            raise HTTPException(404, _("no card {card!r} in this class").format(card=(card_id or "")[:200]))
        return card_id

    def recording(self, member: Member) -> served.Recording:
        from bertdrill.cli.base import scheduler_of

        store = self.store(member)
        now = self.server.clock()
        lessons = {lesson.id: lesson for lesson in self.server.lessons}
        with self._lock:
            balance = self._balances.setdefault(member.id, served.Balance(self.server.monotonic))
            if len(self._balances) > 10_000:  # a cache, not a record: forget the others
                self._balances = {member.id: balance}
        return served.Recording(store=store, managing=store, cards=self.server.by_id.get, lessons=lessons.get,
                                follow=scheduler_of, now=now, today=study_day(now, self.server.limits.rollover_hour),
                                balance=balance)

    # ----------------------------------------------------------------- login and logout

    async def login(self, request: Request) -> Response:
        with speaking(pages.page_language(request, self.server.languages)):
            try:
                data = await _json_body(request)
                name, password = _text(data, "name", NAME_LIMIT), _text(data, "password", PASSWORD_LIMIT)
            except HTTPException as exc:
                return _error(exc.status_code, str(exc.detail))
            return await run_in_threadpool(self._login, request, name, password)

    def _login(self, request: Request, name: str, password: str) -> Response:
        with speaking(pages.page_language(request, self.server.languages)):
            wait = self.server.throttle.wait(name, client_address(request))
            if wait:
                refused = _error(429, _("too many failed logins: try again in {seconds} s").format(seconds=round(wait)))
                refused.headers["Retry-After"] = str(round(wait))
                return refused
            try:
                found = self.server.store.gate().log_in(name, password)
            except BertdrillError as exc:
                return _error(503, self.server.told(exc))
            if found is None:
                self.server.throttle.failed(name, client_address(request))
                return _error(401, _("that name and password do not match a member of the class"))
            member, token = found
            if member.is_teacher:
                self.server.store.gate().log_out(token)
                return _error(403, _("the terminal reviews a learner's cards; a teacher reads the class at /teacher"))
            return JSONResponse({"token": token, "name": member.name})

    async def logout(self, request: Request) -> Response:
        token = _bearer(request)
        if token:
            self.server.forget_login(token)
            await run_in_threadpool(self.server.store.gate().log_out, token)
        return JSONResponse({})

    # ----------------------------------------------------------------- reads and writes

    def class_info(self, member: Member, request: Request) -> dict[str, Any]:
        self.server.refresh()
        limits = self.server.limits
        return {"member": member.name, "now": self.server.clock(), "rollover_hour": limits.rollover_hour,
                "new": limits.new, "reviews": limits.reviews, "leech_action": self.server.leech_action.value,
                "languages": list(self.server.languages),
                "lessons": [{"lesson_id": lesson.lesson_id, "version": lesson.version, "path": lesson.path,
                             "source": lesson.source, "published_at": lesson.published_at}
                            for lesson in self.server.published]}

    def answer(self, member: Member, request: Request, data: dict[str, Any]) -> Any:
        grade = data.get("grade")
        duration = data.get("duration_ms", 0)
        if not isinstance(grade, int) or isinstance(grade, bool) or not isinstance(duration, int):
            raise HTTPException(400, _("an answer has a whole-number grade and duration"))
        if grade not in GRADE_VALUES:  # the core's check would raise: a 500 instead of the reason
            raise HTTPException(400, _("a grade is a whole number from 0 to 5"))
        request_id = _text(data, "request", REQUEST_ID_LIMIT)
        if not request_id.replace("-", "").isalnum():
            raise HTTPException(400, _("an answer's request id is letters, digits and dashes"))
        typed = data.get("typed")
        if typed is not None and (not isinstance(typed, str) or len(typed) > pages.MAX_ANSWER_CHARS):
            raise HTTPException(413 if isinstance(typed, str) else 400, _("a typed answer is text of at most "
                                                                          "{limit} characters").format(
                                                                              limit=pages.MAX_ANSWER_CHARS))
        variant = data.get("variant")
        language = data.get("language")
        if variant is not None and not isinstance(variant, str) or language not in self.server.languages:
            raise HTTPException(400, _("an answer names a variant as text and one of the class's languages"))
        sent = served.Sent(card_id=self.card(data.get("card") if isinstance(data.get("card"), str) else None),
                           grade=grade, typed=typed, duration_ms=duration, request=request_id,
                           language=language, cram=data.get("cram") is True, variant=variant)
        from bertdrill.cli.review import graded_by_the_learner

        return served.record(self.recording(member), sent, learner_judges=graded_by_the_learner)

    def choose(self, member: Member, request: Request, data: dict[str, Any]) -> Switched:
        """``bertdrill scheduler`` through the server: the learner's switch, run as them."""
        asked = scheduler_asked(data)
        return switching(lambda: self.server.switch_scheduler(member, asked))

    def exam(self, member: Member, request: Request, data: dict[str, Any]) -> ExamPlanned:
        """``bertdrill review --exam`` through the server: the learner's exam plan, set as them."""
        asked = exam_asked(data)
        return switching(lambda: self.server.plan_exam(member, asked))

    def undo(self, member: Member, request: Request, data: dict[str, Any]) -> Any:
        return served.undo(self.recording(member), _whole(data, "answer"))

    def flags(self, member: Member, request: Request, data: dict[str, Any]) -> Any:
        suspended = data.get("suspended")
        buried = data.get("buried_until")
        if suspended is not None and not isinstance(suspended, bool) or not isinstance(data.get("bury"), bool):
            raise HTTPException(400, _("flags are true, false or null"))
        try:
            until = date.fromisoformat(buried) if isinstance(buried, str) else None
        except ValueError:
            raise HTTPException(400, _("{day!r} is not a day").format(day=buried)) from None
        return served.set_flags(self.recording(member), self.card(data.get("card")), suspended=suspended,
                                bury=data["bury"], buried_until=until)

    def suspend(self, member: Member, request: Request, data: dict[str, Any]) -> Any:
        return served.suspend(self.recording(member), self.card(data.get("card")))

    def undo_action(self, member: Member, request: Request, data: dict[str, Any]) -> Any:
        return served.undo_action(self.recording(member), _whole(data, "action"))


SCHEDULER_FIELDS = frozenset({"name", "retention", "fit", "parameters", "spread"})


def scheduler_asked(data: dict[str, Any]) -> SchedulerAsked:
    """What ``POST /api/scheduler`` asks for, each field checked (400 with the reason)."""
    from bertdrill.core.scheduling.fsrs import MAX_RETENTION, MIN_RETENTION
    from bertdrill.core.scheduling.registry import SchedulerName, Spreading

    unknown = sorted(set(data) - SCHEDULER_FIELDS)
    if unknown:
        raise HTTPException(400, _("a scheduler request has no field {field!r}").format(field=unknown[0]))
    retention, fit, parameters = data.get("retention"), data.get("fit", False), data.get("parameters")
    if retention is not None and (isinstance(retention, bool) or not isinstance(retention, int | float)):
        raise HTTPException(400, _("the desired retention is a number from {low} to {high}").format(
            low=f"{MIN_RETENTION:.2f}", high=f"{MAX_RETENTION:.2f}"))  # as the terminal's --retention is typed
    if not isinstance(fit, bool):
        raise HTTPException(400, _("fit is true or false"))
    if parameters is not None and (not isinstance(parameters, str) or len(parameters) > 20):
        raise HTTPException(400, _("parameters names a fitted set: its number, or default"))
    return SchedulerAsked(_member_of(SchedulerName, data.get("name"), "name"), retention, fit, parameters,
                          _member_of(Spreading, data.get("spread"), "spread"))


EXAM_FIELDS = frozenset({"day", "target", "lesson"})


def exam_asked(data: dict[str, Any]) -> ExamAsked:
    """What ``POST /api/exam`` asks for, each field checked (400 with the reason)."""
    unknown = sorted(set(data) - EXAM_FIELDS)
    if unknown:
        raise HTTPException(400, _("an exam request has no field {field!r}").format(field=unknown[0]))
    day, target, lesson = data.get("day"), data.get("target"), data.get("lesson")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int | float)):
        raise HTTPException(400, _("the exam's target is a number from 0.70 to 0.99"))
    if lesson is not None and (not isinstance(lesson, str) or not lesson or len(lesson) > 200):
        raise HTTPException(400, _("lesson names a lesson of the class by its id"))
    return ExamAsked(None if day is None else exam_day(day), target, lesson)




def _member_of(kind: type[Named], value: Any, name: str) -> Named | None:
    if value is None:
        return None
    if isinstance(value, str) and value in {each.value for each in kind}:
        return kind(value)
    raise HTTPException(400, _("{field} is one of {values}, or null").format(
        field=name, values=", ".join(each.value for each in kind)))


# --------------------------------------------------------------------------- reading requests


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _bearer(request: Request) -> str | None:
    scheme, _sep, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def _json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object: 413 past :data:`MAX_BODY_BYTES`, 400 when it is not JSON (or not an object)."""
    declared = request.headers.get("content-length")
    if declared is not None and pages.whole(declared, MAX_BODY_BYTES) is None:
        raise HTTPException(413, _("the request is too large"))
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise HTTPException(413, _("the request is too large"))
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise HTTPException(415, _("the API reads JSON (Content-Type: application/json)"))
    data = _json(body)
    if not isinstance(data, dict):
        raise HTTPException(400, _("the request is not a JSON object"))
    return data


def _json(text: str | bytes) -> Any:
    """Standard JSON, read whole: NaN and Infinity are not JSON, nesting too deep for the parser is refused as it
    is, not as a crash, and no text in it holds a NUL (PostgreSQL's text cannot: the database would refuse it
    later, as a failure). 400 with the reason for each."""
    try:
        found = json.loads(text, parse_constant=_not_a_json_number)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise HTTPException(400, _("the request is not JSON")) from None
    if _holds_nul(found):
        raise HTTPException(400, _("the request's text holds a NUL character"))
    return found


def _not_a_json_number(constant: str) -> None:
    raise ValueError(constant)


def _holds_nul(found: Any) -> bool:
    """Whether any key or string in the parsed JSON holds U+0000 (walked without recursion: it may be deep)."""
    waiting = [found]
    while waiting:
        each = waiting.pop()
        if isinstance(each, str):
            if "\x00" in each:
                return True
        elif isinstance(each, dict):
            waiting.extend(each.keys())
            waiting.extend(each.values())
        elif isinstance(each, list):
            waiting.extend(each)
    return False


def _text(data: dict[str, Any], name: str, limit: int) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value:
        raise HTTPException(400, _("the request needs the text {field!r}").format(field=name))
    if len(value) > limit:
        raise HTTPException(413, _("{field!r} is longer than {limit} characters").format(field=name, limit=limit))
    return value


def _whole(data: dict[str, Any], name: str) -> int:
    value = data.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise HTTPException(400, _("the request needs the whole number {field!r}").format(field=name))
    return value


def _day(request: Request) -> date:
    try:
        day = date.fromisoformat(request.query_params.get("day", ""))
    except ValueError:
        day = None
    if day is None or not pages.FIRST_DAY <= day <= pages.LAST_DAY:
        raise HTTPException(400, _("the request needs a day such as 2025-03-03"))
    return day


def _count(request: Request, name: str, most: int = 100_000) -> int:
    found = pages.whole(request.query_params.get(name, ""), most)
    if found is None:
        raise HTTPException(400, _("{field!r} is a whole number up to {most}").format(field=name, most=most))
    return found


def _lessons(request: Request) -> list[str] | None:
    """The lessons asked about (a JSON list of ids); None: every lesson."""
    text = request.query_params.get("lessons")
    if text is None:
        return None
    found = _json(text)
    if not isinstance(found, list) or not all(isinstance(each, str) for each in found) or len(found) > 1000:
        raise HTTPException(400, _("lessons are a JSON list of lesson ids"))
    return found
