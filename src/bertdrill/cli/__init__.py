"""The command line: one typer app, one module per command group.

Every anticipated failure is a :class:`BertdrillError`; :func:`main` is the one
place that turns it into ``Error: ...`` (or ``file:line: ...`` lines for
lessons) on stderr and exit code 1, so no command shows a traceback.
"""

from __future__ import annotations

import sys
import traceback

from ..errors import BertdrillError, LessonErrors
from .app import app, debug, err

# Importing a command module registers its commands on `app`.
from . import lessons  # noqa: E402,F401

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code instead of raising (used by the console script)."""
    from rich.markup import escape

    try:
        app(args=argv, prog_name="bertdrill")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except LessonErrors as exc:
        for error in exc.errors:
            err.print(escape(str(error)))
        return 1
    except BertdrillError as exc:
        err.print(f"Error: {escape(str(exc))}")
        return 1
    except KeyboardInterrupt:
        err.print("Interrupted.")
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if debug["on"]:
            traceback.print_exc()
        else:
            err.print(f"Error: unexpected {type(exc).__name__}: {escape(str(exc))} (run with --debug for details)")
        return 1
    return 0


def run() -> None:
    sys.exit(main())
