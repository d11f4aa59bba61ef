"""The learner's saved login to a class server: where it is kept, and reading and writing it.

Apart from :mod:`.client` and its HTTP, because every ``bertdrill review`` and ``status`` reads it first (a learner
logged in to a class reviews there): start-up loads this module alone, not the client's requests and store.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bertdrill.core.errors import StoreError, os_reason
from bertdrill.core.i18n import _

LOGIN_FILE = "login.json"


@dataclass(frozen=True)
class Login:
    """A login to a class server: its address, the member's name, and the token (never the password)."""

    server: str  # https://class.example.org (no trailing slash)
    name: str
    token: str


def login_path(environ: Mapping[str, str] = os.environ) -> Path:
    """Where the login is kept: ``$BERTDRILL_HOME/login.json``, else the user's config folder (XDG)."""
    if home := environ.get("BERTDRILL_HOME"):
        return Path(home) / LOGIN_FILE
    import platformdirs

    return Path(platformdirs.user_config_dir("bertdrill", appauthor=False)) / LOGIN_FILE


def login_bytes(login: Login) -> bytes:
    return json.dumps({"server": login.server, "name": login.name, "token": login.token}, ensure_ascii=False,
                      indent=2).encode("utf-8") + b"\n"


def saved_login(path: Path) -> Login | None:
    """The login kept at ``path``; None when there is none. A file that is not one is an error naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):  # no file there; a home that is a file is told by its user
        return None
    except (OSError, ValueError) as exc:
        raise StoreError(_("{path}: not a bertdrill login ({reason}); remove it, or run bertdrill logout").format(
            path=path, reason=os_reason(exc) if isinstance(exc, OSError) else exc)) from None
    if not isinstance(data, dict) or not all(isinstance(data.get(key), str) for key in ("server", "name", "token")):
        raise StoreError(_("{path}: not a bertdrill login; remove it, or run bertdrill logout").format(path=path))
    return Login(data["server"], data["name"], data["token"])
