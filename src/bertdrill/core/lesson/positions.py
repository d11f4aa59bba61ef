"""Where tables and keys start in a lesson's TOML text, so errors can name a line."""

from __future__ import annotations

import re
import tomllib

_PART = r"""(?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)"""  # a bare, "basic" or 'literal' key
_DOTTED = rf"{_PART}(?:\s*\.\s*{_PART})*"
_HEADER = re.compile(rf"^\s*(\[\[?)\s*({_DOTTED})\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(rf"^\s*({_DOTTED})\s*=")
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
                name = _plain(header.group(2))
                if header.group(1) == "[[" and name == "item":
                    self.items.append(number)
                    current = f"item#{len(self.items) - 1}"
                else:
                    current = name
                    self.tables.setdefault(name, number)
                continue
            key = _KEY.match(line)
            if key:
                self.keys.setdefault((current, _plain(key.group(1))), number)
            for quote in ('"""', "'''"):
                if line.count(quote) % 2 == 1:
                    in_multiline = quote

    def key(self, table: str, key: str, default: int | None = None) -> int | None:
        return self.keys.get((table, key), self.tables.get(table, default))

    def item(self, index: int) -> int:
        return self.items[index] if index < len(self.items) else 1


def _plain(dotted: str) -> str:
    """A TOML key as tomllib reads it, parts joined by dots: ``params."big\\n"`` -> ``params.big`` + newline."""
    if '"' not in dotted and "'" not in dotted:  # the usual case, without asking tomllib
        return ".".join(part.strip() for part in dotted.split("."))
    try:
        parsed = tomllib.loads(f"{dotted} = 0")
    except tomllib.TOMLDecodeError:
        return dotted.strip()
    parts = []
    while isinstance(parsed, dict) and parsed:
        name, parsed = next(iter(parsed.items()))
        parts.append(name)
    return ".".join(parts)
