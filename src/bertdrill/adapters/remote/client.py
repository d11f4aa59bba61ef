"""A learner's terminal on the class server: logging in, the saved login, and the store that is the server.

:class:`ClassStore` is a :class:`bertdrill.ports.ReviewStore` (and :class:`~bertdrill.ports.CardManagement`, for
the review's suspensions) whose methods are requests to the server's JSON API, authorised by the bearer token a
login gave. The review session drives it as it drives a database; what an answer records is the server's to
decide (:mod:`bertdrill.app.served`): the client sends the card, what was typed, the grade chosen, the time it
took, and an id of its own making, so an answer sent again after a dropped connection is logged once.

Every request has a timeout; reads and answers are sent again while the server cannot be reached, for up to
:data:`RECONNECT_SECONDS`; anything else that fails is a :class:`~bertdrill.core.errors.StoreError` with a
message a learner can act on (the server down, the login ended, the card refused).
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlencode, urlsplit

from bertdrill.adapters.remote.login import Login
from bertdrill.adapters.remote.wire import WireError, decode, encode
from bertdrill.core.errors import StoreError, os_reason
from bertdrill.core.hosts import is_loopback
from bertdrill.core.i18n import _, language
from bertdrill.core.languages import written_short
from bertdrill.core.limits import DEFAULT_NEW, DEFAULT_REVIEWS
from bertdrill.core.scheduling.actions import CardAction
from bertdrill.core.scheduling.state import AnswerKind, CardStage, Schedule
from bertdrill.ports import (
    KEEP,
    Action,
    Answer,
    AnswerTimes,
    CardFigures,
    CardLog,
    CardManagement,
    CardState,
    DayCounts,
    ExamAsked,
    ExamPlanned,
    FittedSet,
    Keep,
    PublishedLesson,
    Retention,
    ReviewStore,
    Scheduler,
    SchedulerAsked,
    SchedulerChoice,
    Status,
    Switch,
    Switched,
    SyncCard,
    SyncLesson,
    SyncReport,
)

TIMEOUT_SECONDS = 10.0  # connecting, and each read of a reply: no request hangs
RECONNECT_SECONDS = 20.0  # how long a read or an answer is sent again while the server cannot be reached
MAX_REPLY_BYTES = 8 * 1024 * 1024  # the class's lessons are the biggest reply
CHOICE_SECONDS = 30.0  # how long the learner's scheduler choice is taken as read, for the previews
SWITCH_SECONDS = 600.0  # a switch replays the learner's whole log (and may fit FSRS first): its reply waits longer


@dataclass(frozen=True)
class ClassInfo:
    """What the server tells a learner's terminal when a review starts."""

    member: str
    now: datetime  # the server's clock: study days are the server's
    rollover_hour: int
    new: int  # the class's daily limits
    reviews: int
    leech_action: str
    languages: tuple[str, ...]
    lessons: tuple[PublishedLesson, ...]


# --------------------------------------------------------------------------- addresses and the saved login


def server_address(text: str) -> str:
    """The server's address as given (``https://host[:port][/prefix]``), checked: https, or http on this machine
    only (a token or a password sent in clear over a network is anyone's)."""
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise StoreError(_("{url!r} is not a class server's address such as https://class.example.org").format(
            url=text))
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise StoreError(_("{url} is plain http: a password and a login would cross the network in clear; use the "
                           "https address of the class server").format(url=text))
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


# --------------------------------------------------------------------------- requests


class Connection:
    """One kept-alive HTTP connection to the server, opened again when it drops."""

    def __init__(self, server: str, *, token: str | None = None, language: str = "en",
                 timeout: float | None = None, reconnect: float | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self.server = server_address(server)
        parts = urlsplit(self.server)
        self.secure = parts.scheme == "https"
        self.host, self.port, self.prefix = parts.hostname or "", parts.port, parts.path
        self.token = token
        self.language = language
        self.timeout = TIMEOUT_SECONDS if timeout is None else timeout
        self.reconnect = RECONNECT_SECONDS if reconnect is None else reconnect
        self.sleep = sleep
        self._http: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def _open(self) -> http.client.HTTPConnection:
        if self._http is None:
            if self.secure:
                self._http = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                                         context=ssl.create_default_context())
            else:
                self._http = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self._http

    def get(self, path: str, **query: Any) -> Any:
        shown = {key: json.dumps(value) if isinstance(value, list) else str(value)
                 for key, value in query.items() if value is not None}
        return self.call("GET", path + ("?" + urlencode(shown) if shown else ""), again=True)

    def post(self, path: str, body: Mapping[str, Any], *, again: bool = False) -> Any:
        """``again``: the request may be sent twice (it carries an id the server dedupes on)."""
        return self.call("POST", path, body, again=again)

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None, *, again: bool) -> Any:
        """The reply's JSON; a refused connection is tried again (nothing was sent), and so is any failure when
        ``again``, for up to :attr:`reconnect` seconds."""
        data = json.dumps(encode(body), ensure_ascii=False, allow_nan=False).encode("utf-8") if body is not None else None
        headers = {"Accept": "application/json", "Accept-Language": self.language, "User-Agent": "bertdrill"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        deadline = time.monotonic() + self.reconnect
        tries = 0
        while True:
            try:
                connection = self._open()
                connection.request(method, self.prefix + path, body=data, headers=headers)
                reply = connection.getresponse()
                status, text = reply.status, reply.read(MAX_REPLY_BYTES + 1)
                retry_after = reply.getheader("Retry-After")
                if reply.getheader("Connection", "").lower() == "close":
                    self.close()
                break
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                unsent = isinstance(exc, ConnectionRefusedError | socket.gaierror)
                if (again or unsent) and time.monotonic() < deadline and not isinstance(exc, socket.gaierror):
                    tries += 1
                    self.sleep(min(0.2 * 2 ** min(tries, 4), max(0.0, deadline - time.monotonic())))
                    continue
                raise StoreError(_("cannot reach the class server at {server}: {reason}").format(
                    server=self.server, reason=_reason(exc, self.timeout))) from None
        return self._reply(status, text, retry_after)

    def _reply(self, status: int, text: bytes, retry_after: str | None) -> Any:
        try:
            found = json.loads(text.decode("utf-8")) if len(text) <= MAX_REPLY_BYTES else None
        except ValueError:
            found = None
        message = found.get("error") if isinstance(found, dict) and isinstance(found.get("error"), str) else None
        if status == 401:
            raise StoreError(message or _("the class server at {server} did not accept your login").format(
                server=self.server))
        if status == 429:
            raise StoreError(_("too many failed logins: try again in {seconds} s").format(seconds=retry_after or "60"))
        if status >= 400:
            raise StoreError(_("the class server at {server} refused: {message}").format(
                server=self.server, message=message or f"HTTP {status}"))
        if found is None:
            raise StoreError(_("the class server at {server} sent a reply that is not bertdrill's").format(
                server=self.server))
        return found


def _reason(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError | socket.timeout):
        return _("no reply within {seconds} s").format(seconds=written_short(timeout, language()))
    if isinstance(exc, ConnectionRefusedError):
        return _("nothing listens there (is the server running?)")
    if isinstance(exc, socket.gaierror):
        return _("no such host")
    if isinstance(exc, ssl.SSLError):
        return _("its TLS certificate is not trusted ({reason})").format(reason=exc.reason or exc)
    if isinstance(exc, OSError):
        return os_reason(exc)
    return str(exc) or type(exc).__name__


def log_in(server: str, name: str, password: str, *, language: str = "en") -> Login:
    """Log in as ``name``; the login (the server's token, never the password). StoreError for a wrong password."""
    connection = Connection(server, language=language)
    try:
        found = connection.post("/api/login", {"name": name, "password": password})
    finally:
        connection.close()
    if not isinstance(found, dict) or not isinstance(found.get("token"), str) or not isinstance(found.get("name"), str):
        raise StoreError(_("the class server at {server} sent a reply that is not bertdrill's").format(
            server=connection.server))
    return Login(connection.server, found["name"], found["token"])


def log_out(login: Login, *, language: str = "en") -> None:
    """End the login on the server (its token is deleted there)."""
    connection = Connection(login.server, token=login.token, language=language)
    try:
        connection.post("/api/logout", {})
    finally:
        connection.close()


# --------------------------------------------------------------------------- the store


def _lessons(lessons: Collection[str] | None) -> list[str] | None:
    return sorted(lessons) if lessons is not None else None


def _decoded(kind: type[Any], data: Any, server: str) -> Any:
    try:
        return decode(kind, data)
    except WireError as exc:
        raise StoreError(_("the class server at {server} sent a reply that is not bertdrill's ({reason})").format(
            server=server, reason=exc)) from None


def _ids(data: Any, server: str) -> list[str]:
    found: list[str] = _decoded(list[str], data, server)
    return found


class ClassStore:
    """The learner's reviews in a class, through the server (see the module's docstring)."""

    def __init__(self, login: Login, *, language: str = "en", connection: Connection | None = None):
        self.login = login
        self.language = language  # the texts' language: the server grades typed answers again in it
        self.connection = connection or Connection(login.server, token=login.token, language=language)
        self._choice: tuple[SchedulerChoice, float] | None = None  # the scheduler choice, and when it was read

    @property
    def where(self) -> str:
        return _("the class at {server}, as {name}").format(server=self.login.server, name=self.login.name)

    def class_info(self) -> ClassInfo:
        found: ClassInfo = _decoded(ClassInfo, self.connection.get("/api/class"), self.login.server)
        return found

    # ----------------------------------------------------------------- the queue

    def due_ids(self, today: date, *, lessons: Collection[str] | None = None, limit: int = DEFAULT_REVIEWS) -> list[str]:
        return _ids(self.connection.get("/api/due", day=today, lessons=_lessons(lessons), limit=limit),
                    self.login.server)

    def new_ids(self, today: date, *, lessons: Collection[str] | None = None, limit: int = DEFAULT_NEW) -> list[str]:
        return _ids(self.connection.get("/api/new", day=today, lessons=_lessons(lessons), limit=limit),
                    self.login.server)

    def redrill_ids(self, today: date, *, lessons: Collection[str] | None = None) -> list[str]:
        return _ids(self.connection.get("/api/redrill", day=today, lessons=_lessons(lessons)), self.login.server)

    def day_counts(self, day: date, *, lessons: Collection[str] | None = None) -> DayCounts:
        found: DayCounts = _decoded(DayCounts, self.connection.get("/api/day-counts", day=day,
                                                                   lessons=_lessons(lessons)), self.login.server)
        return found

    def due_count(self, day: date, *, lessons: Collection[str] | None = None) -> int:
        found: int = _decoded(int, self.connection.get("/api/due-count", day=day, lessons=_lessons(lessons)),
                              self.login.server)
        return found

    def state(self, card_id: str) -> CardState:
        found: CardState = _decoded(CardState, self.connection.get("/api/state", card=card_id), self.login.server)
        return found

    def state_under_choice(self, card_id: str) -> tuple[CardState, SchedulerChoice]:
        return self.state(card_id), self.scheduler_choice()  # the choice as often as scheduler_choice reads it

    def scheduler_choice(self) -> SchedulerChoice:
        """The learner's choice, read again at most every :data:`CHOICE_SECONDS` (the session asks before every
        preview; the server schedules each answer under the choice it holds then, whatever this one says)."""
        now = time.monotonic()
        if self._choice is None or now - self._choice[1] >= CHOICE_SECONDS:
            found: SchedulerChoice = _decoded(SchedulerChoice, self.connection.get("/api/scheduler"),
                                              self.login.server)
            self._choice = (found, now)
        return self._choice[0]

    def status(self, today: date, *, lessons: Collection[str] | None = None) -> Status:
        found: Status = _decoded(Status, self.connection.get("/api/status", day=today, lessons=_lessons(lessons)),
                                 self.login.server)
        return found

    def forecast(self, today: date, days: int, *, lessons: Collection[str] | None = None) -> list[tuple[date, int]]:
        found: list[tuple[date, int]] = _decoded(list[tuple[date, int]], self.connection.get(
            "/api/forecast", day=today, days=days, lessons=_lessons(lessons)), self.login.server)
        return found

    # ----------------------------------------------------------------- writes: the server decides them

    def answer(self, card_id: str, *, grade: int, kind: AnswerKind, reviewed_at: datetime, study_day: date,
               reschedule: Callable[[Schedule], Schedule] | None = None, typed: str | None = None,
               duration_ms: int = 0, once_per_day: bool = False, variant: str | None = None,
               rescheduler: Callable[[SchedulerChoice], Callable[[Schedule], Schedule]] | None = None,
               request: str | None = None) -> Answer:
        """Send the answer; the server times, grades again and schedules it (``reviewed_at``, ``study_day`` and the
        schedulers passed are the session's, and not sent). Sent again under the same id if the reply is lost."""
        body = {"request": request or str(uuid.uuid4()), "card": card_id, "grade": grade, "typed": typed,
                "duration_ms": duration_ms, "cram": kind is AnswerKind.CRAM, "variant": variant,
                "language": self.language}
        found: Answer = _decoded(Answer, self.connection.post("/api/answers", body, again=True), self.login.server)
        return found

    def undo(self, review_id: int) -> CardState:
        found: CardState = _decoded(CardState, self.connection.post("/api/undo", {"answer": review_id}),
                                    self.login.server)
        return found

    def set_flags(self, card_id: str, *, suspended: bool | None = None,
                  buried_until: date | None | Keep = KEEP) -> CardState:
        bury = not isinstance(buried_until, Keep)
        body = {"card": card_id, "suspended": suspended, "bury": bury,
                "buried_until": None if isinstance(buried_until, Keep) else buried_until}
        found: CardState = _decoded(CardState, self.connection.post("/api/flags", body), self.login.server)
        return found

    def manage(self, card_id: str, action: CardAction, *, at: datetime, study_day: date,
               due: date | None = None) -> Action:
        if action is not CardAction.SUSPEND:
            raise StoreError(_("through the class server, a review only suspends cards"))
        found: Action = _decoded(Action, self.connection.post("/api/suspend", {"card": card_id}), self.login.server)
        return found

    def undo_action(self, action_id: int | None = None) -> Action:
        if action_id is None:
            raise StoreError(_("through the class server, a review undoes its own card actions only"))
        found: Action = _decoded(Action, self.connection.post("/api/undo-action", {"action": action_id}),
                                 self.login.server)
        return found

    # ----------------------------------------------------------------- not through the server

    def _elsewhere(self) -> StoreError:
        return StoreError(_("{where}: this is not done through the class server (the teacher's dashboard shows "
                            "the class's figures)").format(where=self.where))

    def actions(self, card_id: str | None = None) -> list[Action]:
        raise self._elsewhere()

    def answers(self, card_id: str | None = None, *, since: date | None = None) -> list[Answer]:
        raise self._elsewhere()

    def reviews_per_day(self, since: date, until: date, *, lessons: Collection[str] | None = None) -> Mapping[date, int]:
        raise self._elsewhere()

    def streaks(self, today: date, *, lessons: Collection[str] | None = None) -> tuple[int, int]:
        raise self._elsewhere()

    def retention(self, since: date | None = None, *, lessons: Collection[str] | None = None) -> Retention:
        raise self._elsewhere()

    def card_states(self, today: date, *, lessons: Collection[str] | None = None) -> dict[CardStage, int]:
        raise self._elsewhere()

    def answer_count(self, *, lessons: Collection[str] | None = None) -> int:
        raise self._elsewhere()

    def answer_times(self, *, lessons: Collection[str] | None = None) -> AnswerTimes:
        raise self._elsewhere()

    def average_ef(self, *, lessons: Collection[str] | None = None) -> float | None:
        raise self._elsewhere()

    def leeches(self, min_lapses: int = 8, *, lessons: Collection[str] | None = None) -> list[CardState]:
        raise self._elsewhere()

    def card_figures(self, today: date, *, lessons: Collection[str] | None = None) -> CardFigures:
        raise self._elsewhere()

    def hardest(self, limit: int = 10, *, lessons: Collection[str] | None = None) -> list[CardState]:
        raise self._elsewhere()

    def forecast_and_hardest(self, today: date, days: int, limit: int, *,
                             lessons: Collection[str] | None = None) -> tuple[list[tuple[date, int]], list[CardState]]:
        raise self._elsewhere()

    def switch_scheduler(self, choice: SchedulerChoice, scheduler: Scheduler, *,
                         track: Callable[[list[str]], Iterable[str]] = iter) -> Switch:
        raise self._elsewhere()

    def fitted_sets(self) -> list[FittedSet]:
        found: list[FittedSet] = _decoded(list[FittedSet], self.connection.get("/api/fitted-sets"), self.login.server)
        return found

    def choose(self, asked: SchedulerAsked) -> Switched:
        """Switch the learner's scheduler on the server (:func:`bertdrill.app.scheduling.switch`, run there as the
        learner, under their review's lock); what it did. Sent once: a fit sent twice would store two sets."""
        body = {"name": asked.name, "retention": asked.retention, "fit": asked.fit, "parameters": asked.parameters,
                "spread": asked.spread}
        switching = self._switching()
        try:
            found: Switched = _decoded(Switched, switching.post("/api/scheduler", body), self.login.server)
        finally:
            switching.close()
        self._choice = None  # the new choice, for the previews
        return found

    def plan_exam(self, asked: ExamAsked) -> ExamPlanned:
        """Set (or end) the learner's exam plan on the server (:func:`bertdrill.app.scheduling.plan_exam`, at the
        class's daily limits); what it did and asks."""
        body = {"day": asked.day, "target": asked.target, "lesson": asked.lesson}
        switching = self._switching()
        try:
            found: ExamPlanned = _decoded(ExamPlanned, switching.post("/api/exam", body), self.login.server)
        finally:
            switching.close()
        self._choice = None
        return found

    def _switching(self) -> Connection:
        """A connection whose replies may take as long as a replay of the learner's log (and a fit)."""
        return Connection(self.login.server, token=self.login.token, language=self.connection.language,
                          timeout=max(SWITCH_SECONDS, self.connection.timeout), reconnect=0)

    def card_logs(self, visit: Callable[[CardLog], None], *, lessons: Collection[str] | None = None,
                  track: Callable[[list[str]], Iterable[str]] = iter) -> int:
        raise self._elsewhere()

    def sync(self, cards: Sequence[SyncCard], *, now: datetime | None = None,
             track: Callable[[list[str]], Iterable[str]] = iter) -> SyncReport:
        """Nothing to do: the teacher publishes the class's lessons (``class init``), and the server syncs them."""
        return SyncReport()

    def sync_lessons(self, lessons: Sequence[SyncLesson], *, now: datetime | None = None,
                     track: Callable[[list[str]], Iterable[str]] = iter) -> SyncReport:
        return SyncReport()

    # ----------------------------------------------------------------- life

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


# mypy checks here that the client is every port a review session uses.
_store: type[ReviewStore] = ClassStore
_manages: type[CardManagement] = ClassStore
