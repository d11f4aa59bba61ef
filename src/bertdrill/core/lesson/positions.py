"""Where tables and keys start in a lesson's TOML text, so errors can name a line."""

from __future__ import annotations

import re

_PART = r"""(?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)"""  # a bare, "basic" or 'literal' key
_DOTTED = rf"{_PART}(?:\s*\.\s*{_PART})*"
_HEADER = re.compile(rf"^\s*(\[\[?)\s*({_DOTTED})\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(rf"^\s*({_DOTTED})\s*=")
TOML_POSITION = re.compile(r"\(at line (\d+), column \d+\)|\(at end of document\)")
"""Where tomllib says a syntax error is, in its message."""


# Everything in TOML that can hide a header, a key, a quote or a `#` from a line scan: strings of the four kinds
# (multi-line ones first, so `"""` is not read as an empty string and a quote) and comments. Read left to right,
# so a `'''` inside an ordinary string is part of that string, as tomllib reads it. A multi-line string may end
# with one or two more quotes of its kind (`""""x""""`), which belong to it.
_HIDING = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""(?:"{1,2})?'
    r"|'''(?:[^']|'(?!''))*'''(?:'{1,2})?"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'[^'\n]*'"
    r"|#[^\n]*",
    re.DOTALL,
)


class Lines:
    """Where tables and keys start in the file, so errors can name a line.

    tomllib gives values, not positions, so this light scan of the text
    records the line of every header and of every ``key =`` under it.
    Items are named ``item#0``, ``item#1``, ... in file order. Lines that
    begin inside a multi-line string are text, not structure: the strings
    are found by one pass over the whole text, as a TOML reader sees them.
    """

    def __init__(self, text: str):
        self.tables: dict[str, int] = {}
        self.items: list[int] = []
        self.keys: dict[tuple[str, str], int] = {}
        current = ""
        inside = _inside_multiline(text)
        # Lines end at "\n" only, as tomllib counts them (splitlines() would also split at U+2028 in a string).
        for number, line in enumerate(text.split("\n"), start=1):
            if number in inside:
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

    def key(self, table: str, key: str, default: int | None = None) -> int | None:
        """The line of ``key`` in ``table``: its ``key =`` line, else the first header of a table it names
        (``[items]``, ``[lesson.extra]``, ``[[items]]``), else the table's own header."""
        found = self.keys.get((table, key))
        if found is not None:
            return found
        below = f"{table}.{key}" if table else key
        headers = [number for name, number in self.tables.items() if name == below or name.startswith(below + ".")]
        return min(headers) if headers else self.tables.get(table, default)

    def item(self, index: int) -> int:
        return self.items[index] if index < len(self.items) else 1


def _inside_multiline(text: str) -> set[int]:
    """The numbers of the lines that begin inside a multi-line string (its second line onwards)."""
    inside: set[int] = set()
    if '"""' not in text and "'''" not in text:  # the usual lesson: nothing can span lines
        return inside
    line, counted = 1, 0  # the line number at offset `counted`: counted on as the strings are met, once
    for found in _HIDING.finditer(text):
        if found.group().startswith(('"""', "'''")):
            line += text.count("\n", counted, found.start())
            spans = found.group().count("\n")
            inside.update(range(line + 1, line + 1 + spans))
            line, counted = line + spans, found.end()
    return inside


def _plain(dotted: str) -> str:
    """A TOML key as tomllib reads it, parts joined by dots: ``params."big\\n"`` -> ``params.big`` + newline."""
    if '"' not in dotted and "'" not in dotted:  # the usual case, without asking tomllib
        return ".".join(part.strip() for part in dotted.split("."))
    import tomllib  # here: only a quoted key needs it, and only a lesson being parsed has one

    try:
        parsed = tomllib.loads(f"{dotted} = 0")
    except tomllib.TOMLDecodeError:
        return dotted.strip()
    parts = []
    while isinstance(parsed, dict) and parsed:
        name, parsed = next(iter(parsed.items()))
        parts.append(name)
    return ".".join(parts)
