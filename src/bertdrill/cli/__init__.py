"""The command line: one typer app, one module per command group.

Errors become messages and exit codes in one place, :class:`.base.BertdrillGroup`.
"""

from __future__ import annotations

import gc
import sys

# Importing a command module registers its commands on `app`.
from bertdrill.cli import (
    cards,  # noqa: F401
    classroom,  # noqa: F401
    export,  # noqa: F401
    lessons,  # noqa: F401
    practice,  # noqa: F401
    remote,  # noqa: F401
    review,  # noqa: F401
    scheduler,  # noqa: F401
    serve,  # noqa: F401
    sheet,  # noqa: F401
    stats,  # noqa: F401
)
from bertdrill.cli.base import app

__all__ = ["app", "run"]


def run() -> None:
    """The console script's entry point."""
    _readable_on_any_terminal()
    try:
        app(prog_name="bertdrill")
    finally:
        _ending()


def _ending() -> None:
    """The process is about to end: what is alive is frozen out of the cycle collector (:func:`gc.freeze`), so the
    interpreter's shutdown no longer walks it all, collecting and freeing every module, class and row one by one,
    for the operating system to take back at once anyway. That walk cost ``status`` on a store of 100,000 cards
    0.14 s of its 0.7 s of CPU (``python -c "import sqlmodel"`` pays 0.15 s for its own). Every file and store is
    closed before (``with``): nothing waits for the collector to be closed, and what a finalizer would do at
    shutdown Python never promised (its docs: ``__del__`` may not be called for objects alive at exit)."""
    gc.freeze()


def _readable_on_any_terminal() -> None:
    """On a stream that cannot encode bertdrill's text (``LC_ALL=C`` without Python's UTF-8 mode: ASCII), print
    what it can and ``?`` for the rest, rather than fail on the first ✓ or Turkish letter."""
    for stream in (sys.stdout, sys.stderr):
        try:
            "✓ıİ€".encode(stream.encoding or "ascii")
        except (UnicodeEncodeError, LookupError):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(errors="replace")
