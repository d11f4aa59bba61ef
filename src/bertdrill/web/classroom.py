"""The class server: ``bertdrill serve --db postgresql://...``: members log in, learners review, teachers read the class.

The same review pages as a learner's own server (:mod:`.review`, over the same :class:`~bertdrill.app.session.Session`,
grading, diagnosis and scheduler); what differs is whose sittings a request reaches. A login (name and password,
checked against the member's scrypt hash) gives the browser a random token in an HttpOnly cookie; each request
finds its member from the token, and that member's desk holds the store *acting as them*: every transaction it
runs first takes the learner's (or teacher's) database role and names the member, and the database's
row-level-security policies, not this code, keep each learner to their own rows.

Logins are rate-limited (per name and per client address, :class:`Throttle`). Teachers get the dashboard
(``/teacher``, and ``/teacher/learners.csv`` for a gradebook); learners are refused there (403).
"""

from __future__ import annotations

import csv
import io
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bertdrill.app.session import LeechAction, Limits
from bertdrill.app.variants import FreshNumbers, learners_typed
from bertdrill.cli.base import number
from bertdrill.core import i18n
from bertdrill.core.cards import Card, compile_lesson
from bertdrill.core.diagnosis import Diagnoser
from bertdrill.core.errors import BertdrillError, StoreError
from bertdrill.core.i18n import _, ngettext
from bertdrill.core.lesson import Lesson, VariantMode, parse
from bertdrill.core.scheduling.state import study_day
from bertdrill.web import class_charts, pages
from bertdrill.web.desk import Desk, Sittings
from bertdrill.web.pages import check_csrf, field, read_form, render, speaking

if TYPE_CHECKING:
    from bertdrill.adapters.store import PostgresStore
    from bertdrill.adapters.store.members import Member
    from bertdrill.ports import ExamAsked, ExamPlanned, ReviewStore, Scheduler, SchedulerAsked, Switched

LOGIN_COOKIE = "bertdrill_login"
LOGIN_DAYS = 30
NAME_LIMIT = 200
PASSWORD_LIMIT = 1024
HARDEST_SHOWN = 20  # cards on the dashboard, hardest first
REFRESH_SECONDS = 30.0  # how often the server looks for lessons published since
LOGIN_CACHE_SECONDS = 2.0  # a login token's member is read from the database again after this long


class Redirect(Exception):  # noqa: N818 - not an error: where the browser goes instead
    """Send the browser elsewhere (303): to the login page, or a teacher to the dashboard."""

    def __init__(self, location: str):
        super().__init__(location)
        self.location = location


@dataclass
class Throttle:
    """At most ``per_name`` failed logins for one name, and ``per_address`` failed logins from one address, in
    ``window`` seconds; beyond that, 429 until the oldest failure leaves the window. Logins that succeed do not
    count: a school's learners all come from one address (its router's), at nine o'clock."""

    per_name: int = 5
    per_address: int = 30
    window: float = 300.0
    clock: Callable[[], float] = time.monotonic
    _names: dict[str, deque[float]] = dataclass_field(default_factory=dict)
    _addresses: dict[str, deque[float]] = dataclass_field(default_factory=dict)
    _lock: threading.Lock = dataclass_field(default_factory=threading.Lock)

    def _recent(self, table: dict[str, deque[float]], key: str) -> deque[float]:
        now = self.clock()
        found = table.setdefault(key, deque())
        while found and now - found[0] > self.window:
            found.popleft()
        if len(table) > 10_000:  # forget keys with nothing recent, so guessing names cannot fill memory
            for stale in [k for k, v in table.items() if not v or now - v[-1] > self.window][:5_000]:
                del table[stale]
            table.setdefault(key, found)
        return found

    @staticmethod
    def _name(typed: str) -> str:
        """A login's name as the class matches it (``AYŞE`` is ``Ayşe``), so guesses in other cases count alike."""
        from bertdrill.adapters.store.members import name_key

        try:
            return name_key(typed)
        except StoreError:  # not a name a member can have: counted as typed
            return typed

    def wait(self, name: str, address: str) -> float:
        """Seconds until a login for ``name`` (as typed) from ``address`` may be tried (0: now)."""
        with self._lock:
            now = self.clock()
            waits = [self.window - (now - queue[0]) for queue, most in (
                (self._recent(self._names, self._name(name)), self.per_name),
                (self._recent(self._addresses, address), self.per_address)) if len(queue) >= most]
            return max(1.0, max(waits)) if waits else 0.0

    def failed(self, name: str, address: str) -> None:
        with self._lock:
            self._recent(self._names, self._name(name)).append(self.clock())
            self._recent(self._addresses, address).append(self.clock())


class ClassServer:
    """The class's lessons (as the teacher published them, read again when a new version is published), one desk
    per member who came, and the logins."""

    def __init__(self, store: PostgresStore, *, clock: Callable[[], datetime],
                 limits: Limits = Limits(), leech_action: LeechAction = LeechAction.SUSPEND,
                 scheduler: Callable[[ReviewStore], Scheduler] | None = None, throttle: Throttle | None = None,
                 login_cache: float = LOGIN_CACHE_SECONDS, monotonic: Callable[[], float] = time.monotonic,
                 numbers: VariantMode | None = None):
        self.store = store
        self.numbers = numbers  # fresh numbers for every member (None: each lesson's own [variants] mode)
        self.clock = clock
        self.limits = limits
        self.leech_action = leech_action
        self.scheduler = scheduler
        self.throttle = throttle or Throttle()
        self._desks: dict[int, Sittings] = {}
        self._logins: dict[str, tuple[Member, float]] = {}  # token -> (member, when read)
        self.login_cache = login_cache
        self.monotonic = monotonic
        self._lock = threading.Lock()
        self.versions: dict[str, int] = {}
        self.switched: list[Callable[[int], None]] = []  # told the member id after a switch of their scheduler
        self._checked = float("-inf")
        self.refresh(force=True)  # the lessons as the teacher published them

    def _use(self, lessons: list[Lesson]) -> None:
        if not lessons:
            raise StoreError(_("{where} has no lessons published: the teacher runs bertdrill class init").format(
                where=self.store.where))
        self.lessons = lessons
        self.cards: list[Card] = [card for lesson in lessons for card in compile_lesson(lesson)]
        self.by_id = {card.id: card for card in self.cards}
        self.diagnosers = {lesson.id: Diagnoser.for_lesson(lesson) for lesson in lessons}
        self.replay = FreshNumbers(lessons)  # the numbers a logged answer was asked with, for the teacher's pages
        shared = [code for code in lessons[0].languages if all(code in lesson.languages for lesson in lessons)]
        self.languages = shared or list(lessons[0].languages)

    def diagnosed(self, card: Card, typed: str, variant: str | None) -> tuple[str, str | None]:
        """:meth:`FreshNumbers.diagnosed` of a logged wrong answer, in the language spoken."""
        return self.replay.diagnosed(card, typed, variant, self.diagnosers, i18n.language())

    def refresh(self, *, force: bool = False) -> bool:
        """Serve the lessons as published now, if the teacher published a new version since we last looked (at most
        every :data:`REFRESH_SECONDS`); every learner's sitting then starts anew on the new texts. True if changed."""
        now = time.monotonic()
        if not force and now - self._checked < REFRESH_SECONDS:
            return False
        self._checked = now
        gate = self.store.gate()
        versions = gate.published_versions()
        if versions == self.versions:
            return False
        published = gate.published_lessons()
        self.published = published  # their texts, for the terminal's client (bertdrill.web.api)
        self._use([parse(lesson.source, f"{lesson.path} (published version {lesson.version})")
                   for lesson in published])
        self.versions = {lesson.lesson_id: lesson.version for lesson in published}
        with self._lock:
            self._desks.clear()
        return True

    # ----------------------------------------------------------------- who is asking

    def member(self, request: Request) -> Member | None:
        """The member the request's login cookie belongs to (None: not logged in, expired, archived)."""
        if "member" in request.state._state:
            found: Member | None = request.state.member
            return found
        found = self.token_member(request.cookies.get(LOGIN_COOKIE))
        request.state.member = found
        return found

    def _logged_in(self, token: str) -> Member | None:
        """The token's member, read again at most every :attr:`login_cache` seconds (an answer is four requests
        in a row; an archived member or a reset password is refused at most that long after)."""
        now = self.monotonic()
        with self._lock:
            kept = self._logins.get(token)
            if kept is not None and now - kept[1] < self.login_cache:
                return kept[0]
        found = self.store.gate().logged_in(token)
        with self._lock:
            if found is None:
                self._logins.pop(token, None)
            else:
                self._logins[token] = (found, now)
                if len(self._logins) > 10_000:  # forget the oldest half: a cache, not a session store
                    for old in sorted(self._logins, key=lambda key: self._logins[key][1])[:5_000]:
                        del self._logins[old]
        return found

    def token_member(self, token: str | None) -> Member | None:
        """The member a login token (a cookie's, or the terminal's bearer token) belongs to; None for any other."""
        return self._logged_in(token) if token and len(token) <= 128 else None

    def forget_login(self, token: str) -> None:
        with self._lock:
            self._logins.pop(token, None)

    def required(self, request: Request) -> Member:
        member = self.member(request)
        if member is None:
            raise Redirect("/login")
        return member

    def sittings(self, request: Request) -> Sittings:
        """The requesting learner's sittings (their desk is made, and their schedules synced, on first use)."""
        member = self.required(request)
        if member.is_teacher:
            raise Redirect("/teacher")
        return self.sittings_of(member)

    def sittings_of(self, member: Member) -> Sittings:
        """A learner's sittings and desk, made on their first request (in a browser or from their terminal)."""
        self.refresh()
        with self._lock:
            found = self._desks.get(member.id)
        if found is not None:
            return found
        store = self.store.acting_as(member)
        store.schedule_every_card()  # their schedule rows; the cards themselves are the teacher's to sync
        desk = Desk(store=store, cards=self.cards, lessons=[lesson.id for lesson in self.lessons],
                    diagnosers=self.diagnosers, languages=self.languages, clock=self.clock, limits=self.limits,
                    leech_action=self.leech_action, scheduler=self.scheduler, numbers=self.numbers,
                    varying={lesson.id: lesson for lesson in self.lessons if lesson.variant_space is not None},
                    in_class=True)
        with self._lock:
            return self._desks.setdefault(member.id, Sittings(desk, switched=lambda: self._tell_switched(member.id)))

    def switch_scheduler(self, member: Member, asked: SchedulerAsked) -> Switched:
        """Switch a learner's scheduler, acting as them (:meth:`Sittings.switch_scheduler`, under their desk's
        lock: their pages wait, their open sittings start again, :attr:`switched` is told whose it was)."""
        from bertdrill.cli.base import scheduler_of

        return self.sittings_of(member).switch_scheduler(asked, scheduler_of)

    def plan_exam(self, member: Member, asked: ExamAsked) -> ExamPlanned:
        """Set (or end) a learner's exam plan, acting as them, at the class's daily limits (:meth:`Sittings.plan_exam`)."""
        from bertdrill.cli.base import scheduler_of

        return self.sittings_of(member).plan_exam(asked, scheduler_of)

    def own_sittings(self, request: Request) -> Sittings:
        """The requesting learner's sittings, for the forms that change their own scheduler: 403 for a teacher."""
        member = self.required(request)
        if member.is_teacher:
            raise HTTPException(403, _("this form is a learner's own: a teacher has no scheduler of their own here"))
        return self.sittings_of(member)

    def _tell_switched(self, member_id: int) -> None:
        for tell in self.switched:
            tell(member_id)

    def forget(self, member_id: int) -> None:
        with self._lock:
            self._desks.pop(member_id, None)

    def database_failed(self, exc: BertdrillError) -> bool:
        """Whether ``exc`` is the database failing (it names the database, as every failure the store reports does),
        rather than a refusal of what was asked (a card answered again since the answer to undo)."""
        return self.store.where in str(exc)

    def told(self, exc: BertdrillError) -> str:
        """What a member, or anyone at the login page, reads of a failure. A message that names the class's database
        (its address and the server's role, then PostgreSQL's own words, which name the role again) is the teacher's:
        it goes to the server's log, and the reader learns only that the database failed. Every other message (a
        refusal: a card answered again since) is the reader's, as it was."""
        message = str(exc)
        if not self.database_failed(exc):
            return message
        print(message, file=sys.stderr, flush=True)  # the log of the teacher's `bertdrill serve`
        return _("the class's database did not answer, or refused the request: try again in a moment, and if it goes "
                 "on, tell the teacher (the class server's log says why)")

    def teacher(self, request: Request) -> Member:
        member = self.required(request)
        if not member.is_teacher:
            raise HTTPException(403, _("this page is the teacher's: a learner reviews at /review"))
        return member


def client_address(request: Request) -> str:
    return request.client.host if request.client else "-"


def login_cookie(request: Request) -> dict[str, Any]:
    return {**pages.cookie_options(request), "max_age": LOGIN_DAYS * 24 * 3600}


class ClassPages:
    """Login, logout, one's own password, and the teacher's dashboard."""

    def __init__(self, server: ClassServer):
        self.server = server

    # ----------------------------------------------------------------- login and logout

    async def home(self, request: Request) -> Response:
        member = await run_in_threadpool(self.server.member, request)
        where = "/login" if member is None else "/teacher" if member.is_teacher else "/review"
        return RedirectResponse(where, status_code=303)

    async def login_form(self, request: Request) -> Response:
        with speaking(pages.page_language(request, self.server.languages)):
            return render(request, "login.html", name="", failed=False)

    async def login(self, request: Request) -> Response:
        form = await read_form(request)
        return await run_in_threadpool(self._login, request, form)

    def _login(self, request: Request, form: FormData) -> Response:
        with speaking(pages.page_language(request, self.server.languages)):
            check_csrf(request, form)
            name = field(form, "name", limit=NAME_LIMIT, too_long=413)
            password = field(form, "password", limit=PASSWORD_LIMIT, too_long=413)
            wait = self.server.throttle.wait(name, client_address(request))
            if wait:
                refused = render(request, "login.html", 429, name=name, failed=False, wait=round(wait))
                refused.headers["Retry-After"] = str(round(wait))
                return refused
            found = self.server.store.gate().log_in(name, password)
            if found is None:
                self.server.throttle.failed(name, client_address(request))
                return render(request, "login.html", 401, name=name, failed=True)
            member, token = found
            response = RedirectResponse("/teacher" if member.is_teacher else "/review", status_code=303)
            response.set_cookie(LOGIN_COOKIE, token, **login_cookie(request))
            return response

    async def logout(self, request: Request) -> Response:
        form = await read_form(request)
        check_csrf(request, form)
        token = request.cookies.get(LOGIN_COOKIE)
        if token:
            self.server.forget_login(token)
            await run_in_threadpool(self.server.store.gate().log_out, token)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(LOGIN_COOKIE, path="/")
        return response

    # ----------------------------------------------------------------- one's own password

    async def password_form(self, request: Request) -> Response:
        return await run_in_threadpool(self._password_page, request, None, 200)

    def _password_page(self, request: Request, notice: str | None, status: int) -> Response:
        member = self.server.required(request)
        with speaking(pages.page_language(request, self.server.languages)):
            return render(request, "password.html", status, member=member, notices=[notice] if notice else [])

    async def password(self, request: Request) -> Response:
        form = await read_form(request)
        return await run_in_threadpool(self._password, request, form)

    def _password(self, request: Request, form: FormData) -> Response:
        from bertdrill.adapters.store.members import PASSWORD_MAX, PASSWORD_MIN

        member = self.server.required(request)
        check_csrf(request, form)
        old = field(form, "old", limit=PASSWORD_LIMIT, too_long=413)
        new = field(form, "new", limit=PASSWORD_LIMIT, too_long=413)
        again = field(form, "again", limit=PASSWORD_LIMIT, too_long=413)
        with speaking(pages.page_language(request, self.server.languages)):
            if new != again:
                return self._password_page(request, _("The two new passwords differ."), 400)
            if not PASSWORD_MIN <= len(new) <= PASSWORD_MAX:
                return self._password_page(request, _("A password has {least} to {most} characters.").format(
                    least=PASSWORD_MIN, most=PASSWORD_MAX), 400)
            # a guess at the current password counts as a failed login does: a browser left logged in is no way
            # around the login's limit (and each guess costs the server a hash)
            address = client_address(request)
            wait = self.server.throttle.wait(member.name, address)
            if wait:
                refused = self._password_page(request, ngettext(
                    "Too many attempts: try again in {seconds} second.", "Too many attempts: try again in {seconds} "
                    "seconds.", round(wait)).format(seconds=number(round(wait))), 429)
                refused.headers["Retry-After"] = str(round(wait))
                return refused
            token = request.cookies.get(LOGIN_COOKIE) or ""
            if not self.server.store.acting_as(member).change_own_password(member, old, new, token):
                self.server.throttle.failed(member.name, address)
                return self._password_page(request, _("That is not your current password."), 403)
            return self._password_page(request, _("Password changed; your other logins have ended."), 200)

    # ----------------------------------------------------------------- the teacher's dashboard

    async def dashboard(self, request: Request) -> Response:
        return await run_in_threadpool(self._dashboard, request)

    def _dashboard(self, request: Request) -> Response:
        teacher = self.server.teacher(request)
        store = self.server.store.acting_as(teacher)
        today = study_day(self.server.clock(), self.server.limits.rollover_hour)
        with ThreadPoolExecutor(max_workers=2) as beside:  # the big reads at once, each on its connection
            wrong_answers = beside.submit(store.wrong_answers)
            activity = beside.submit(store.class_activity, today - timedelta(days=class_charts.ACTIVITY_DAYS - 1), today)
            report = store.class_report(today)
            wrong = wrong_answers.result()
        with speaking(pages.page_language(request, self.server.languages)):
            charts = class_charts.dashboard_charts(store, report, activity.result())
            hardest = []
            for summary in report.cards[:HARDEST_SHOWN]:
                card = self.server.by_id.get(summary.card_id)
                if card is None:
                    continue
                answers = [(answer, *self.server.diagnosed(card, answer.typed, answer.variant))
                           for answer in wrong.get(card.id, [])]
                hardest.append((summary, card, answers))
            return render(request, "teacher.html", member=teacher, report=report, hardest=hardest,
                          total=len([card for card in self.server.cards if card.kind.reviewed]),
                          learners_typed=learners_typed, percent=_percent,
                          learner_ids=class_charts.learner_pages(store), **charts)

    async def learners_csv(self, request: Request) -> Response:
        return await run_in_threadpool(self._learners_csv, request)

    def _learners_csv(self, request: Request) -> Response:
        teacher = self.server.teacher(request)
        today = study_day(self.server.clock(), self.server.limits.rollover_hour)
        report = self.server.store.acting_as(teacher).class_report(today)
        total = len([card for card in self.server.cards if card.kind.reviewed])
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["learner", "learned", "cards", "due", "answered_7_days", "retention_30_days", "streak",
                         "last_active_utc"])
        for row in report.learners:
            writer.writerow([spreadsheet_safe(row.learner), row.learned, total, row.due, row.answered_week,
                             "" if row.retention is None else f"{row.retention:.3f}", row.streak,
                             row.last_active.strftime("%Y-%m-%d %H:%M") if row.last_active else ""])
        return Response(buffer.getvalue(), media_type="text/csv; charset=utf-8", headers={
            "Content-Disposition": f'attachment; filename="class-{today}.csv"'})


class MemberPages:
    """The teacher's page of members: add, rename, reset a password, archive (as the CLI's ``class`` commands)."""

    def __init__(self, server: ClassServer):
        self.server = server

    async def page(self, request: Request) -> Response:
        return await run_in_threadpool(self._page, request, [], 200)

    def _page(self, request: Request, notices: list[str], status: int) -> Response:
        teacher = self.server.teacher(request)
        found = self.server.store.acting_as(teacher).class_members(archived=True)
        with speaking(pages.page_language(request, self.server.languages)):
            return render(request, "members.html", status, member=teacher, notices=notices,
                          current=[m for m in found if not m.archived], archived=[m for m in found if m.archived])

    async def act(self, request: Request) -> Response:
        form = await read_form(request)
        return await run_in_threadpool(self._act, request, form, request.path_params["action"])

    def _act(self, request: Request, form: FormData, action: str) -> Response:
        from bertdrill.adapters.store.members import MemberRole, name_key, new_password

        teacher = self.server.teacher(request)
        check_csrf(request, form)
        store = self.server.store.acting_as(teacher)
        name = field(form, "name", limit=NAME_LIMIT, too_long=413)
        with speaking(pages.page_language(request, self.server.languages)):
            try:
                match action:
                    case "add":
                        role = MemberRole.TEACHER if form.get("role") == "teacher" else MemberRole.LEARNER
                        given = form.get("password")
                        password = given if isinstance(given, str) and given else new_password()
                        added = store.add_member(name, password, role)
                        notices = [_("Added {name} to the class.").format(name=added.name)]
                        if password != given:
                            notices.append(_("Their password, shown only now: {password}").format(password=password))
                    case "rename":
                        renamed = store.rename_member(name, field(form, "new_name", limit=NAME_LIMIT, too_long=413))
                        notices = [_("Renamed: {old} is now {new}; they log in with the new name.").format(
                            old=name, new=renamed.name)]
                    case "reset":
                        password = new_password()
                        reset = store.reset_password(name, password)
                        notices = [_("New password for {name}; they are logged out everywhere.").format(
                            name=reset.name), _("Their password, shown only now: {password}").format(password=password)]
                    case "archive":
                        if name_key(name) == name_key(teacher.name):  # the page offers no such button: a class's one
                            # teacher would lock the class's pages to everyone, from a form of their own
                            return self._page(request, [_("You cannot archive yourself here: another teacher can, "
                                                          "or the class's owner with bertdrill class archive.")], 409)
                        archived = store.archive_member(name)
                        self.server.forget(archived.id)
                        notices = [_("Archived {name}: logged out and unable to log in; their history is kept, and "
                                     "the report leaves them out.").format(name=archived.name)]
                    case _:
                        raise HTTPException(404, _("the members page has no action {action!r}").format(action=action))
            except StoreError as exc:
                return self._page(request, [str(exc)], 409)
        return self._page(request, notices, 200)


def spreadsheet_safe(text: str) -> str:
    """A cell a spreadsheet shows as text: a name starting with = + - @ (a formula to Excel) gets a quote first."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _percent(share: float | None) -> str:
    from bertdrill.core.languages import written_percent

    return "–" if share is None else written_percent(share, 0, i18n.language())
