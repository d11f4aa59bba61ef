"""Pausing Python's cycle collector while a command makes many objects that hold no cycles."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused(*, freeze: bool = False) -> Iterator[None]:
    """Pause Python's cycle collector while making many small objects that hold no cycles.

    The collector runs after every few hundred new objects and, every so often, walks
    everything alive, the parsed lessons included, so parsing, checking or exporting a large
    lesson would set it off again and again for nothing (a ninth of ``check``'s CPU time on
    10,000 items). Mercurial's ``util.nogc`` does the same when it reads large files.

    With ``freeze``, what is alive on leaving is frozen (:func:`gc.freeze`) before the collector runs again: its
    first run would walk everything made meanwhile (0.07 s after ``check``'s leaks), for a command that is
    about to end. A long-running process must not: a cycle made meanwhile would never be collected.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()
