"""``bertdrill login`` and ``bertdrill logout``, and ``bertdrill review`` in a class, through its server.

A learner of a class logs in once (``bertdrill login https://class.example.org --name Ayşe``: the password is
asked hidden, and only the token the server gives back is kept, in ``login.json`` of the user's config folder
with mode 0600). From then on ``bertdrill review`` reviews the class's cards on the server, and the learner
never holds a database URL; ``--db`` reviews a database of one's own instead, and ``bertdrill logout`` ends
the login (on the server too).

The review is the terminal's (:func:`bertdrill.cli.review.class_review`) over the same session; its store is
:class:`bertdrill.adapters.remote.client.ClassStore`, the lessons are the ones the teacher published, the
study day, daily limits and leech rule are the class's, and every answer is recorded by the server.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bertdrill.cli.base import LangOption, app, out
from bertdrill.core import i18n
from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _

if TYPE_CHECKING:
    from bertdrill.adapters.remote.client import ClassInfo
    from bertdrill.adapters.remote.login import Login
    from bertdrill.core.lesson import Lesson


def saved() -> Login | None:
    """The learner's saved login, if they logged in to a class (an unreadable file is an error naming it)."""
    from bertdrill.adapters.remote.login import login_path, saved_login

    return saved_login(login_path())


@app.command()
def login(
    server: Annotated[str, typer.Argument(metavar="URL", help="The class server's address, as the teacher gave it.",
                                          show_default=False)],
    name: Annotated[str | None, typer.Option("--name", help="Your name in the class (asked if not given).",
                                             show_default=False)] = None,
    lang: LangOption = "",
) -> None:
    """Log in to a class server: from then on, `bertdrill review` reviews your cards in the class.

    The password is asked without showing it (read from standard input when that is not a terminal); only the
    login the server gives back is kept, in a file only you can read. `bertdrill logout` ends it.
    """
    from bertdrill.adapters.export.files import Replace, write_atomic
    from bertdrill.adapters.remote.client import log_in, server_address
    from bertdrill.adapters.remote.login import login_bytes, login_path

    address = server_address(server)
    member = name if name is not None else typer.prompt(_("Name"))
    password = _password(_("Password for {name}: ").format(name=member))
    found = log_in(address, member, password, language=i18n.language())
    path = login_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # bertdrill's own file in its own folder: a login there before is replaced by this one.
    write_atomic(path, login_bytes(found), replace=Replace.ANY, example="login.json", mode=0o600)
    out.print(_("Logged in to {server} as {name}. bertdrill review now reviews your cards in the class; "
                "bertdrill logout ends it.").format(server=found.server, name=found.name))


def _password(prompt: str) -> str:
    """The password, typed without echo in a terminal; else the first line of standard input (a script)."""
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(prompt)
    line = sys.stdin.readline()
    if not line:
        raise BertdrillError(_("no password given (standard input ended)"))
    return line.rstrip("\r\n")


@app.command()
def logout(lang: LangOption = "") -> None:
    """End your login to the class server (on the server too) and forget it here."""
    from bertdrill.adapters.remote.client import log_out
    from bertdrill.adapters.remote.login import login_path
    from bertdrill.core.errors import StoreError

    found = saved()
    if found is None:
        out.print(_("Not logged in to a class."))
        return
    try:
        log_out(found, language=i18n.language())
    except StoreError as exc:  # forgotten here all the same; the server ends the login when it expires
        out.print(_("The server was not told ({reason}); the login is forgotten here, and ends on the server when "
                    "it expires.").format(reason=str(exc)))
    Path(login_path()).unlink(missing_ok=True)
    out.print(_("Logged out of {server}.").format(server=found.server))


def server_clock(info: ClassInfo) -> Callable[[], datetime]:
    """The server's clock as it reads now, running on here: the study day is the server's, as it records it."""
    began = time.monotonic()
    return lambda: info.now + timedelta(seconds=time.monotonic() - began)


def class_lessons(info: ClassInfo) -> list[Lesson]:
    from bertdrill.core.lesson import parse

    return [parse(lesson.source, f"{lesson.path} (published version {lesson.version})") for lesson in info.lessons]
