"""Where tables and keys start in a lesson's TOML text, so errors can name a line."""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"']+)\s*=")
TOML_POSITION = re.compile(r"\(at line (\d+), column \d+\)|\(at end of document\)")
"""Where tomllib says a syntax error is, in its message."""


class Lines:
    """Where tables and keys start in the file, so errors can name a line.

    tomllib gives values, not positions, so this light scan of the text
    records the line of every header and of every ``key =`` under it.
    Items are named ``item#0``, ``item#1``, ... in file order.
    """

    def __init__(self, text: str):
        self.tables: dict[str, int] = {}
        self.items: list[int] = []
        self.keys: dict[tuple[str, str], int] = {}
        current = ""
        in_multiline = None
        for number, line in enumerate(text.splitlines(), start=1):
            if in_multiline:
                if line.count(in_multiline) % 2 == 1:
                    in_multiline = None
                continue
            header = _HEADER.match(line)
            if header:
                name = header.group(2).strip()
                if header.group(1) == "[[" and name == "item":
                    self.items.append(number)
                    current = f"item#{len(self.items) - 1}"
                else:
                    current = name
                    self.tables.setdefault(name, number)
                continue
            key = _KEY.match(line)
            if key:
                self.keys.setdefault((current, key.group(1).strip("\"'")), number)
            for quote in ('"""', "'''"):
                if line.count(quote) % 2 == 1:
                    in_multiline = quote

    def key(self, table: str, key: str, default: int | None = None) -> int | None:
        return self.keys.get((table, key), self.tables.get(table, default))

    def item(self, index: int) -> int:
        return self.items[index] if index < len(self.items) else 1
