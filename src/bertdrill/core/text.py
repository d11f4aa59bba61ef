"""Text from outside (typed answers, lesson files) made safe to compare, show and print.

One place for what counts as a control character: :func:`clean_text` removes
them from what a learner typed; :func:`show_controls` makes them visible symbols
in what is printed (lesson text, a script's output); the lesson parser refuses a
text in which :data:`CONTROL` finds one.
"""

from __future__ import annotations

import re
import unicodedata

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters (Unicode Cc) other than newline and tab: in a terminal or a document they act
(ESC starts a sequence that recolours, retitles or clears a terminal) instead of being read."""

_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves, bracketed paste
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM and APC strings
    r"|\x1b[ -/]*[0-~]?"  # every other escape, and a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # the 8-bit CSI
)
# C0 controls (but newline and tab) as their Control Pictures (ESC as ␛), DEL as ␡, C1 controls as U+FFFD.
_SYMBOLS = {code: 0x2400 + code for code in range(0x20) if chr(code) not in "\n\t"}
_SYMBOLS |= {0x7F: 0x2421} | {code: 0xFFFD for code in range(0x80, 0xA0)}
_NEWLINES = re.compile(r"\r\n?|[\x85\u2028\u2029]")


def clean_text(text: str) -> str:
    """Remove what a person cannot see or did not mean to type.

    Escape sequences go whole (``\\x1b[31m``, not just the ESC); other control
    characters, zero-width characters and bidirectional marks (Unicode
    categories Cc and Cf) go one by one. Newlines survive, tabs become spaces,
    and lone surrogates (undecodable bytes) become U+FFFD, so the result is
    always printable and encodable.
    """
    text = _NEWLINES.sub("\n", _ESCAPE.sub("", text))
    if text.isprintable():
        return text
    return "".join(_visible(ch) for ch in text)


def _visible(ch: str) -> str:
    if ch == "\n":
        return ch
    if ch == "\t":
        return " "
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf"):
        return ""
    return "\ufffd" if category == "Cs" else ch



def show_controls(text: str) -> str:
    """Control characters as visible symbols (``␛``), so printing text never drives the terminal."""
    return text.translate(_SYMBOLS)
