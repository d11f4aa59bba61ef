"""``bertdrill serve``: review in the browser, on this machine.

On a learner's own database (SQLite) it is a review page with no login, so it listens on the loopback
address only. The page is :mod:`bertdrill.web` (the ``bertdrill[web]`` extra: Starlette, Jinja2, uvicorn),
imported here and nowhere else.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bertdrill.cli.base import (
    DbOption,
    FilesOption,
    LangOption,
    LearnerOption,
    LessonOption,
    LimitOption,
    NewOption,
    RolloverOption,
    app,
    out,
)
from bertdrill.cli.review import LeechChoice, LeechOption, NumbersChoice, NumbersOption
from bertdrill.core.errors import BertdrillError, os_reason
from bertdrill.core.hosts import is_loopback
from bertdrill.core.i18n import _
from bertdrill.core.limits import DEFAULT_NEW, DEFAULT_REVIEWS, DEFAULT_ROLLOVER

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from bertdrill.web.desk import Desk

DEFAULT_PORT = 8000
HostOption = Annotated[str, typer.Option("--host", help="Address to listen on (a learner's own server: loopback only).")]
PortOption = Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0: any free port).")]


@app.command()
def serve(
    db: DbOption = None,
    host: HostOption = "127.0.0.1",
    port: PortOption = DEFAULT_PORT,
    lesson_id: LessonOption = None,
    lang: LangOption = "",
    new: NewOption = DEFAULT_NEW,
    limit: LimitOption = DEFAULT_REVIEWS,
    learner: LearnerOption = None,
    paths: FilesOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
    leech_action: LeechOption = LeechChoice.suspend,
    numbers: NumbersOption = NumbersChoice.lesson,
) -> None:
    """Review in the browser: a page on this machine, with the same cards, grading and schedule as `review`.

    Open the address it prints. Keys on the page: type and Enter, 0-5 to grade, u undo, b bury, s suspend.
    Ctrl-C stops the server; every answer is saved when it is graded.
    """
    local_app, run = _web_modules()
    from bertdrill.adapters.store import database_url, postgresql

    if postgresql.is_postgres(database_url(db)):
        _serve_class(db, host, port, new, limit, rollover_hour, leech_action, numbers)
        return
    if not is_loopback(host):
        raise BertdrillError(_("{host} is not a loopback address: a review page with no login listens on "
                               "127.0.0.1 (or ::1) only").format(host=host))
    desk = _desk(db, paths, lesson_id, learner, new, limit, rollover_hour, leech_action, numbers)
    with desk.store:
        listener = _listen(host, port)
        address = f"http://{host if ':' not in host else f'[{host}]'}:{listener.getsockname()[1]}/"
        out.print(_("Reviewing in the browser at {address} (Ctrl-C stops the server).").format(address=address))
        out.file.flush()
        run(local_app(desk), listener)


def _serve_class(db: str | None, host: str, port: int, new: int, limit: int, rollover_hour: int,
                 leech_action: LeechChoice, numbers: NumbersChoice) -> None:
    """The class server: the lessons as the teacher published them, logins, one desk per member."""
    from bertdrill.adapters.store import PostgresStore
    from bertdrill.app.session import LeechAction, Limits
    from bertdrill.cli.base import chosen_scheduler, clock
    from bertdrill.core.lesson import VariantMode
    _web_modules()
    from bertdrill.web.app import class_app
    from bertdrill.web.classroom import ClassServer
    from bertdrill.web.server import run

    with PostgresStore.serving(db) as store:
        server = ClassServer(store, clock=clock(), limits=Limits(new, limit, rollover_hour),
                             leech_action=LeechAction(leech_action.value), scheduler=chosen_scheduler,
                             numbers=None if numbers is NumbersChoice.lesson else VariantMode(numbers.value))
        listener = _listen(host, port)
        address = f"http://{host if ':' not in host else f'[{host}]'}:{listener.getsockname()[1]}/"
        out.print(_("The class server of {where} is at {address} (Ctrl-C stops it); put a reverse proxy with TLS "
                    "in front of it for anything but this machine.").format(where=store.where, address=address))
        out.file.flush()
        run(class_app(server), listener, proxied=True)


def _web_modules() -> tuple[Callable[[Desk], ASGIApp], Callable[[ASGIApp, socket.socket], None]]:
    """bertdrill.web's entry points, or a clear error naming the extra to install."""
    try:
        from bertdrill.web.app import local_app
        from bertdrill.web.server import run
    except ImportError as exc:
        if exc.name not in _WEB_PACKAGES:
            raise
        raise BertdrillError(_("the browser interface needs {package}: pip install 'bertdrill[web]'").format(
            package=exc.name)) from None
    return local_app, run


_WEB_PACKAGES = {"starlette", "jinja2", "uvicorn"}


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so a port in use is a clear error (and --port 0 picks one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP said, not left 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on connections whose
    # socket says TCP, and with it on, a response's body waits for the client's delayed ACK of its headers (40 ms)
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise BertdrillError(_("cannot listen on {host} port {port}: {reason}").format(
            host=host, port=port, reason=os_reason(exc))) from None
    listener.listen(128)
    return listener


def _desk(db: str | None, paths: list[Path] | None, lesson_id: str | None, learner: str | None, new: int, limit: int,
          rollover_hour: int, leech_action: LeechChoice, numbers: NumbersChoice = NumbersChoice.lesson) -> Desk:
    from bertdrill.app.session import LeechAction, Limits
    from bertdrill.cli.base import chosen_scheduler, clock, load, open_store
    from bertdrill.core.diagnosis import Diagnoser
    from bertdrill.core.lesson import VariantMode
    from bertdrill.web.desk import Desk

    loaded = load(paths)
    store, cards, lessons = open_store(db, paths, lesson_id, None, loaded=loaded, learner=learner)
    chosen = [lesson for lesson in loaded if lesson.id in lessons]
    languages = [code for code in chosen[0].languages if all(code in lesson.languages for lesson in chosen)]
    return Desk(store=store, cards=cards, lessons=lessons, languages=languages or list(chosen[0].languages),
                diagnosers={lesson.id: Diagnoser.for_lesson(lesson) for lesson in loaded}, clock=clock(),
                limits=Limits(new, limit, rollover_hour), leech_action=LeechAction(leech_action.value),
                scheduler=chosen_scheduler, varying={lesson.id: lesson for lesson in chosen if lesson.variant_space},
                numbers=None if numbers is NumbersChoice.lesson else VariantMode(numbers.value))
