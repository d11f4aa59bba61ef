"""A lesson's cards summed up in one digest: what a store compares to know that nothing needs syncing.

The lesson cache keeps each lesson's digest beside its cards, so a command whose lessons have not
changed syncs a store of 100,000 cards by comparing a few digests, without reading a card.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def cards_digest(rows: Iterable[tuple[str, str, str, str]]) -> str:
    """One hash of a lesson's cards in order, each given as (id, item id, kind, fingerprint): equal digests
    mean the same cards, in the same order, with the same texts."""
    joined = "\x1e".join("\x1f".join(row) for row in rows)
    return "v1:" + hashlib.sha256(joined.encode()).hexdigest()
