"""Numbers as people write them, per language: round-number words, approximate claims, grouping.

Neutral ground for the lesson parser (claims such as ``~110M``) and for grading
(typed answers such as ``110 milyon``): both read numbers through this module.
"""

from __future__ import annotations

import re
from fractions import Fraction

from bertdrill.core import formula
from bertdrill.core.formula import Number
from bertdrill.core.i18n import _
from bertdrill.core.languages import decimal_mark, scale_words, thousands_separator

SCALES = scale_words()
"""Words and suffixes for round numbers in every language of the table: shared by claims and typed answers."""
MAX_STATED_DIGITS = 30
"""A claim states a rounded number: more digits than this is a mistake, and would make rounding costly."""
_APPROX = re.compile(r"\A~?\s*(\d+(?:[.,]\d+)?)(?:\s*/\s*(\d+))?\s*([A-Za-z]+)?\Z")


def format_number(value: Number, language: str) -> str:
    """A number as shown to a reader of ``language``: 23,837,184 in English, 23.837.184 in Turkish."""
    return formula.format_number(value, grouping=thousands_separator(language), decimal=decimal_mark(language))


def parse_approx(stated: str) -> tuple[Fraction, int]:
    """``"~110M"`` -> (110000000, 2 significant figures); ``"2/3"`` -> (2/3, 2)."""
    match = _APPROX.match(stated.strip())
    if not match:
        raise ValueError(_('cannot read {stated!r} as a number such as 110M, 23 million, 0.67 or 2/3').format(stated=stated))
    mantissa, denominator, scale = match.groups()
    count = sum(ch.isdigit() for ch in mantissa + (denominator or ""))
    if count > MAX_STATED_DIGITS:
        raise ValueError(_("a stated number has at most {most} digits, not {count:,}").format(
            most=MAX_STATED_DIGITS, count=count))
    if denominator and int(denominator) == 0:
        raise ValueError(_("{stated!r} divides by zero").format(stated=stated))
    if denominator:
        return Fraction(mantissa.replace(",", ".")) / int(denominator), 2
    mantissa = mantissa.replace(",", ".")
    factor = 1
    if scale:
        if scale.lower() not in SCALES:
            raise ValueError(_('unknown scale {scale!r} in {stated!r}').format(scale=scale, stated=stated))
        factor = SCALES[scale.lower()]
    digits = mantissa.replace(".", "").lstrip("0")
    significant = len(digits if "." in mantissa else digits.rstrip("0")) or 1
    return Fraction(mantissa) * factor, significant


def round_significant(value: Number, digits: int) -> Fraction:
    """Round to ``digits`` significant figures, exactly."""
    value = Fraction(value)
    if value == 0:
        return value
    step = Fraction(10) ** (formula.decimal_exponent(value) - digits + 1)
    return round(value / step) * step
