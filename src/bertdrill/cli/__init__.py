"""The command line: one typer app, one module per command group.

Errors become messages and exit codes in one place, :class:`.base.BertdrillGroup`.
"""

from __future__ import annotations

# Importing a command module registers its commands on `app`.
from bertdrill.cli import (
    classroom,  # noqa: F401
    export,  # noqa: F401
    lessons,  # noqa: F401
    practice,  # noqa: F401
    review,  # noqa: F401
    scheduler,  # noqa: F401
    sheet,  # noqa: F401
    stats,  # noqa: F401
)
from bertdrill.cli.base import app

__all__ = ["app", "run"]


def run() -> None:
    """The console script's entry point."""
    app(prog_name="bertdrill")
