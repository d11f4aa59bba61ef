"""Everything bertdrill knows about a language, in one table: its name and how it writes numbers.

Other modules ask here (:func:`thousands_separator`, :func:`decimal_mark`, :func:`name`, ...)
instead of listing languages themselves, so adding a language is one entry.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    code: str  # "en", "tr": as lessons name it
    name: str  # the language's own name, for deck and sheet titles
    thousands: str = ","  # 23,837,184
    decimal: str = "."  # 1.5
    turkic_case: bool = False  # dotted and dotless i: "İ" folds to "i", "I" to "ı"


LANGUAGES: dict[str, Language] = {language.code: language for language in (
    Language("en", "English"),
    Language("tr", "Türkçe", ".", ",", turkic_case=True),
    Language("az", "Azərbaycanca", turkic_case=True),  # folds the Turkish way; numbers as in English
    Language("de", "Deutsch", ".", ","),
    Language("es", "Español", ".", ","),
    Language("it", "Italiano", ".", ","),
    Language("pt", "Português", ".", ","),
    Language("nl", "Nederlands", ".", ","),
    Language("id", "Bahasa Indonesia", ".", ","),
)}

_DEFAULT = Language("", "")  # a language not in the table writes numbers the English way


def language(code: str) -> Language:
    """The table's entry for ``code`` ("tr"), or English conventions for a code it does not list."""
    return LANGUAGES.get(code, _DEFAULT)


def thousands_separator(code: str) -> str:
    """The thousands separator people expect: 23,837,184 in English, 23.837.184 in Turkish."""
    return language(code).thousands


def decimal_mark(code: str) -> str:
    """``.`` in English, ``,`` in Turkish."""
    return language(code).decimal


def turkic_case(code: str) -> bool:
    """Whether case folds the Turkish way; a region is ignored: "tr-TR" and "tr_TR" fold as "tr"."""
    return language(code.split("-")[0].split("_")[0].lower()).turkic_case


def name(code: str) -> str:
    """The language's own name ("Türkçe"), or its code when the table does not know it."""
    return language(code).name or code
