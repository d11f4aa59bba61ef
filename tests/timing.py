"""Timing a call in tests that bound the cost of hostile input."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def cpu_seconds(call: Callable[[], object]) -> float:
    """This process's CPU time for ``call()``, with the garbage collector held off.

    CPU time, so other work on a shared machine does not count; the collector held off, so a pause
    for the whole test session's garbage is not charged to the call. No collection beforehand either:
    with a test session's heap (Hypothesis's included) one full collection costs more than most calls,
    and a property timed this way 300 times spent most of its minute collecting. Exceptions propagate.
    """
    gc.disable()
    began = time.process_time()
    try:
        call()
    finally:
        elapsed = time.process_time() - began
        gc.enable()
    return elapsed
