"""The command line: one typer app, one module per command group.

Errors become messages and exit codes in one place, :class:`.base.BertdrillGroup`.
"""

from __future__ import annotations

# Importing a command module registers its commands on `app`.
from . import (  # noqa: E402,F401
    classroom,
    export,
    lessons,
    practice,
    review,
    scheduler,
    sheet,
    stats,  # noqa: E402,F401
)
from .base import app

__all__ = ["app", "run"]


def run() -> None:
    """The console script's entry point."""
    app(prog_name="bertdrill")
