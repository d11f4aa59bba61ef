"""The command line: one typer app, one module per command group.

Errors become messages and exit codes in one place, :class:`.base.BertdrillGroup`.
"""

from __future__ import annotations

from .base import app

# Importing a command module registers its commands on `app`.
from . import export, lessons, practice, review, sheet  # noqa: E402,F401
from . import stats  # noqa: E402,F401

__all__ = ["app", "run"]


def run() -> None:
    """The console script's entry point."""
    app(prog_name="bertdrill")
