"""What every page shares: templates, the language and theme of a request, CSRF, security headers, errors.

Templates are Jinja2 with autoescaping on: lesson text, typed answers and names are escaped wherever they
are shown, and no page carries inline script or style (the Content-Security-Policy forbids both), so a
lesson that says ``<script>`` shows those characters. Messages go through the same gettext catalogs as the
terminal (``_`` in the templates; ``scripts/catalogs.py`` reads them too), in the language the learner chose,
else the best one ``Accept-Language`` offers, for this request only (:func:`bertdrill.core.i18n.speaking`).
"""

from __future__ import annotations

import gettext
import hmac
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse

from bertdrill.adapters.catalogs import known_languages, translation
from bertdrill.core import i18n, languages
from bertdrill.core.i18n import _, ngettext

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
LANGUAGE_COOKIE = "bertdrill_lang"
THEME_COOKIE = "bertdrill_theme"
CSRF_COOKIE = "bertdrill_csrf"
YEAR = 365 * 24 * 3600
FOREIGN_FETCHES = ("cross-site", "same-site")  # Sec-Fetch-Site of a request another site's page made
MAX_FORM_BYTES = 64 * 1024  # a form bigger than this is refused before it is parsed (413)
MAX_ANSWER_CHARS = 4096  # as the terminal cuts a line (cli.review.MAX_LINE_BYTES)
FIRST_DAY, LAST_DAY = date(1970, 1, 1), date(9000, 12, 31)  # a day asked about, or planned for: far enough from
# date's ends that a read's arithmetic (a forecast's 400 days on, a history's weeks back, an interval past an
# exam) never overflows

CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = {  # on every response (see bertdrill.web.app)
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",  # a page shows someone's reviews: never kept by a shared cache
}


class Theme(StrEnum):
    AUTO = "auto"  # the browser's preference (prefers-color-scheme)
    LIGHT = "light"
    DARK = "dark"


def _number(value: int) -> str:
    return languages.written_count(value, i18n.language())


@cache
def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.globals.update(_=_, ngettext=ngettext, number=_number, language_name=languages.name)
    return env


def page_language(request: Request, offered: Sequence[str]) -> str:
    """The learner's choice (a cookie), else the first of ``Accept-Language`` offered, else English or the first."""
    usable = [code for code in offered if code in _shipped_languages()] or list(offered)
    chosen = request.cookies.get(LANGUAGE_COOKIE)
    if chosen in usable:
        return chosen
    for code in accepted_languages(request.headers.get("accept-language", "")):
        if code in usable:
            return code
    return i18n.ENGLISH if i18n.ENGLISH in usable else usable[0]


@cache
def _shipped_languages() -> frozenset[str]:
    """The catalogs in the package, looked for once: a glob of the locale folder on every request was 4 % of the
    class server's time per answer (the package does not change under a running server)."""
    return known_languages()


def accepted_languages(header: str) -> list[str]:
    """Language codes of an Accept-Language header, most wanted first (``tr-TR,tr;q=0.9,en;q=0.8``)."""
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate(header.split(",")[:32]):
        tag, _sep, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                continue
        code = i18n.language_code(tag)
        if code and quality > 0:
            ranked.append((-quality, position, code))
    return [code for _q, _p, code in sorted(ranked)]


@contextmanager
def speaking(language: str) -> Iterator[None]:
    with i18n.speaking(_catalog(language), language):
        yield


@cache
def _catalog(language: str) -> gettext.NullTranslations:
    return translation(language)


def theme(request: Request) -> Theme:
    try:
        return Theme(request.cookies.get(THEME_COOKIE, Theme.AUTO))
    except ValueError:
        return Theme.AUTO


def render(request: Request, template: str, status_code: int = 200, /, **context: Any) -> HTMLResponse:
    """The page, in the request's language and theme (call it inside :func:`speaking`)."""
    token = csrf_token(request)
    context.setdefault("member", request.state._state.get("member"))  # the class server's logged-in member
    html = environment().get_template(template).render(
        request=request, lang=i18n.language(), theme=theme(request).value, csrf=token,
        languages=getattr(request.state, "languages", ()), themes=list(Theme), **context)
    response = HTMLResponse(html, status_code=status_code)
    if request.cookies.get(CSRF_COOKIE) != token:
        response.set_cookie(CSRF_COOKIE, token, **cookie_options(request))
    return response


def csrf_token(request: Request) -> str:
    """The token every form of this browser carries: a random value also kept in an HttpOnly cookie.

    Another site can make the browser post a form here, but can neither read the cookie nor guess the
    value, so :func:`check_csrf` refuses its post (double submit; the cookie is SameSite=Lax besides).
    """
    token = request.cookies.get(CSRF_COOKIE)
    if token and 16 <= len(token) <= 64:
        return token
    if "csrf" not in request.state._state:
        request.state.csrf = secrets.token_urlsafe(24)
    return str(request.state.csrf)


async def read_form(request: Request) -> FormData:
    """The posted form, refused with 413 when too big and 400 when it is not a form at all, or sends a field twice."""
    declared = request.headers.get("content-length")
    if declared is not None and whole(declared, MAX_FORM_BYTES) is None:
        raise HTTPException(413, _("the form is larger than {size} kB").format(size=_number(MAX_FORM_BYTES // 1024)))
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise HTTPException(413, _("the form is larger than {size} kB").format(size=_number(MAX_FORM_BYTES // 1024)))
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise HTTPException(400, _("the request is not a form the page sends"))
    from urllib.parse import parse_qsl

    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=64)
    except (UnicodeDecodeError, ValueError):
        raise HTTPException(400, _("the form cannot be read (not UTF-8, or too many fields)")) from None
    if any("\x00" in name or "\x00" in value for name, value in pairs):  # PostgreSQL's text cannot hold one
        raise HTTPException(400, _("a form's text cannot hold a NUL character"))
    names = [name for name, _value in pairs]
    if (twice := next((name for name in names if names.count(name) > 1), None)) is not None:
        # no page's form sends a field twice: which one counts would be the reader's guess (FormData takes the last)
        raise HTTPException(400, _("the form sends the field {name!r} more than once").format(name=twice))
    fields: list[tuple[str, str | UploadFile]] = list(pairs)
    return FormData(fields)


def whole(text: str | None, most: int) -> int | None:
    """``text`` as a whole number from 0 to ``most``, in ASCII digits; None for anything else. ``str.isdigit`` alone
    lets through what ``int`` refuses (``²``) or reads as another script's digits (``٣``), and ``int`` refuses
    more than 4,300 digits: each was a 500 where a number was read from a request."""
    if text is None or not (text.isascii() and text.isdigit()) or len(text) > len(str(most)):
        return None
    value = int(text)
    return value if value <= most else None


def field(form: FormData, name: str, *, limit: int = 200, too_long: int = 400) -> str:
    """One text field of a form: 400 when missing or repeated, ``too_long`` when longer than ``limit`` characters."""
    values = form.getlist(name)
    if len(values) != 1 or not isinstance(values[0], str):
        raise HTTPException(400, _("the form needs exactly one field {name!r}").format(name=name))
    if len(values[0]) > limit:
        raise HTTPException(too_long, _("the field {name!r} is longer than {limit} characters").format(
            name=name, limit=_number(limit)))
    return values[0]


def check_csrf(request: Request, form: FormData) -> None:
    """403 unless the form carries the token of this browser's cookie (another site cannot know it), and 403 for a
    form the browser says another site sent (``Sec-Fetch-Site``, which a page cannot set: a second lock, should a
    sibling site of the school's ever plant a cookie of its own)."""
    if request.headers.get("sec-fetch-site") in FOREIGN_FETCHES:
        raise HTTPException(403, _("the form was sent from another site: open this server's own page and send it there"))
    given = form.get("csrf")
    expected = request.cookies.get(CSRF_COOKIE)
    if not isinstance(given, str) or not expected or not hmac.compare_digest(given.encode(), expected.encode()):
        raise HTTPException(403, _("the form's security token is missing or out of date: reload the page"))


def error_page(request: Request, status_code: int, detail: str, offered: Sequence[str]) -> HTMLResponse:
    """A clear page for a refused request (4xx), in the learner's language."""
    with speaking(page_language(request, offered)):
        return render(request, "error.html", status_code, status=status_code, detail=error_words(status_code),
                      reason=detail)


def error_words(status_code: int) -> str:
    """What a refusal's status means to the reader; the reason itself is said beside it."""
    match status_code:
        case 400:
            return _("This request is not one the page sends.")
        case 403:
            return _("This is not open to you, or the form has expired: see why below.")
        case 404:
            return _("There is no such page.")
        case 405:
            return _("This page does not take that kind of request.")
        case 409:
            return _("This cannot be done now: it was changed in the meantime (another tab?), or see why below.")
        case 413:
            return _("That is too long for this page (an answer has at most {limit} characters).").format(
                limit=_number(MAX_ANSWER_CHARS))
        case _:
            return _("The request could not be served.")


def cookie_options(request: Request) -> dict[str, Any]:
    """HttpOnly and SameSite=Lax always; Secure when the page was reached over TLS (directly or via a proxy)."""
    return {"httponly": True, "samesite": "lax", "secure": request.url.scheme == "https", "path": "/"}


def preference_cookie(request: Request) -> dict[str, Any]:
    return {**cookie_options(request), "max_age": YEAR}
