"""Timing a call in tests that bound the cost of hostile input."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def cpu_seconds(call: Callable[[], object]) -> float:
    """This process's CPU time for ``call()``, with the garbage collector held off.

    CPU time, so other work on a shared machine does not count; no collection, so a pause
    for the whole test session's garbage is not charged to the call. Exceptions propagate.
    """
    gc.collect()
    gc.disable()
    began = time.process_time()
    try:
        call()
    finally:
        elapsed = time.process_time() - began
        gc.enable()
    return elapsed
