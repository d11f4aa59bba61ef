"""The ASGI application: routes, static files, security headers, and errors as pages.

:func:`local_app` is ``bertdrill serve`` on a learner's own database: one learner, no login, reachable only
as 127.0.0.1 / localhost (a Host check too, so a web page elsewhere cannot reach it by DNS rebinding).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from http import HTTPStatus

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bertdrill.core.errors import BertdrillError
from bertdrill.web import pages
from bertdrill.web.api import api_routes
from bertdrill.web.classroom import ClassPages, ClassServer, MemberPages, Redirect
from bertdrill.web.desk import Desk, Sittings
from bertdrill.web.review import ReviewPages
from bertdrill.web.stats import StatsPages
from bertdrill.web.teaching import TeachingPages

API_PREFIX = "/api/"
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]


class SecurityHeaders:
    """Adds :data:`pages.SECURITY_HEADERS` to every response, pages, redirects, errors and static files alike."""

    def __init__(self, app: ASGIApp, languages: Sequence[str], local: bool = False):
        self.app = app
        self.languages = tuple(languages)
        self.local = local  # a learner's own server: no login, so the pages' links are always shown
        self.headers = [(name.lower().encode(), value.encode()) for name, value in pages.SECURITY_HEADERS.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope.setdefault("state", {}).update(languages=self.languages, local=self.local)
        request = Request(scope)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = list(message.get("headers", []))
                chosen = {name.lower() for name, _value in given}  # a response's own policy wins (a printed sheet's)
                message["headers"] = [*given, *(pair for pair in self.headers if pair[0] not in chosen)]
            await send(message)

        # the whole request speaks its language: a refusal raised before a handler chose one (a form's check, the
        # router's 404) is in it too
        with pages.speaking(pages.page_language(request, self.languages)):
            await self.app(scope, receive, with_headers)


def build(desk_languages: Sequence[str], routes: Sequence[BaseRoute], *, hosts: Sequence[str] | None = None,
          local: bool = False,
          handlers: Mapping[type[Exception], Callable[[Request, Exception], Awaitable[Response]]] | None = None
          ) -> Starlette:
    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code >= 500:  # pragma: no cover - starlette raises only 4xx this way
            return PlainTextResponse("error", status_code=exc.status_code)
        # the router's own refusals (404, 405) carry the status's English phrase: the page's words say it instead
        reason = "" if exc.detail == HTTPStatus(exc.status_code).phrase else str(exc.detail)
        if request.url.path.startswith(API_PREFIX):  # the terminal's API answers in JSON, whatever refused it
            with pages.speaking(pages.page_language(request, desk_languages)):
                return JSONResponse({"error": reason or pages.error_words(exc.status_code)}, status_code=exc.status_code)
        return pages.error_page(request, exc.status_code, reason, desk_languages)

    async def failed(request: Request, exc: Exception) -> Response:
        """An anticipated failure (a busy or refused database) as a page with its message: 503, no traceback."""
        return pages.error_page(request, 503, str(exc), desk_languages)

    middleware = [Middleware(SecurityHeaders, languages=desk_languages, local=local)]
    if hosts is not None:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts)))
    return Starlette(routes=[*routes, Mount("/static", StaticFiles(directory=pages.STATIC), name="static")],
                     middleware=middleware, exception_handlers={HTTPException: refused, BertdrillError: failed,
                                                                **(handlers or {})})


def local_app(desk: Desk) -> Starlette:
    """One learner's review on their own database: no login."""
    sittings = Sittings(desk)
    review = ReviewPages(lambda request: sittings)
    routes = [
        Route("/", lambda request: RedirectResponse("/review", status_code=303)),
        *review_routes(review),
        *stats_routes(StatsPages(lambda request: sittings.desk, lambda request: sittings)),
        Route("/settings", settings, methods=["POST"]),
    ]
    return build(desk.languages, routes, hosts=LOOPBACK_HOSTS, local=True)


def class_app(server: ClassServer) -> Starlette:
    """The class server: members log in; learners review (their own rows only), teachers read the class."""
    review = ReviewPages(server.sittings, told=server.told)
    class_pages = ClassPages(server)
    member_pages = MemberPages(server)
    teaching = TeachingPages(server)

    async def elsewhere(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Redirect)
        return RedirectResponse(exc.location, status_code=303)

    async def failed(request: Request, exc: Exception) -> Response:
        """A failure, as :func:`build`'s handler shows it, but never naming the class's database (:meth:`ClassServer.told`),
        and in JSON under ``/api/``."""
        assert isinstance(exc, BertdrillError)
        told = server.told(exc)
        if request.url.path.startswith(API_PREFIX):
            return JSONResponse({"error": told}, status_code=503)
        return pages.error_page(request, 503, told, server.languages)

    routes = [
        Route("/", class_pages.home),
        Route("/login", class_pages.login_form),
        Route("/login", class_pages.login, methods=["POST"]),
        Route("/logout", class_pages.logout, methods=["POST"]),
        Route("/password", class_pages.password_form),
        Route("/password", class_pages.password, methods=["POST"]),
        Route("/teacher", class_pages.dashboard),
        Route("/teacher/learners.csv", class_pages.learners_csv),
        Route("/teacher/learners/{member:int}", teaching.learner),
        Route("/teacher/sheet", teaching.sheet),
        Route("/teacher/members", member_pages.page),
        Route("/teacher/members/{action:str}", member_pages.act, methods=["POST"]),
        *review_routes(review),
        *stats_routes(StatsPages(lambda request: server.sittings(request).desk, server.own_sittings)),
        Route("/settings", settings, methods=["POST"]),
        *api_routes(server),  # the terminal's review (bertdrill login, bertdrill review)
    ]
    return build(server.languages, routes, handlers={Redirect: elsewhere, BertdrillError: failed})


def stats_routes(stats: StatsPages) -> list[Route]:
    return [Route("/stats", stats.show), Route("/stats/scheduler", stats.switch, methods=["POST"]),
            Route("/stats/exam", stats.exam, methods=["POST"])]


def review_routes(review: ReviewPages) -> list[Route]:
    return [
        Route("/review", review.show),
        Route("/review/answer", review.answer, methods=["POST"]),
        Route("/review/grade", review.grade, methods=["POST"]),
        Route("/review/undo", review.undo, methods=["POST"]),
        Route("/review/bury", review.bury, methods=["POST"]),
        Route("/review/suspend", review.suspend, methods=["POST"]),
        Route("/review/again", review.again, methods=["POST"]),
    ]


RETURN_PATHS = ("/review", "/stats", "/teacher", "/teacher/members", "/password", "/login")  # where the settings form may send the browser back to


def returnable(path: str) -> bool:
    """A page of this server the settings form may send the browser back to (never another site's address)."""
    return path in RETURN_PATHS or re.fullmatch(r"/teacher/learners/[0-9]{1,10}", path) is not None


async def settings(request: Request) -> Response:
    """The language and theme chosen with the form in every page's header, kept in cookies for a year."""
    form = await pages.read_form(request)
    pages.check_csrf(request, form)
    back = form.get("back")
    response = RedirectResponse(back if isinstance(back, str) and returnable(back) else "/review", status_code=303)
    language = form.get("lang")
    if isinstance(language, str) and language in request.state.languages:
        response.set_cookie(pages.LANGUAGE_COOKIE, language, **pages.preference_cookie(request))
    theme = form.get("theme")
    if isinstance(theme, str) and theme in set(pages.Theme):
        response.set_cookie(pages.THEME_COOKIE, theme, **pages.preference_cookie(request))
    return response
