"""Letters people type without their marks: Turkish on a US keyboard (``cift yonlu`` for ``çift yönlü``), so
grading can accept it with a spelling note instead of calling it wrong, and number words read ``dort`` as
``dört``.

Below both :mod:`bertdrill.core.textmatch` and :mod:`bertdrill.core.number_words` (which each need it), so
neither imports the other's caller. Per-language data (the plain-letter spellings) is in
:mod:`bertdrill.core.languages`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

from bertdrill.core.languages import base
from bertdrill.core.languages import language as language_of


def fold_letters(text: str, language: str) -> str:
    """``text`` as typed on a US keyboard in ``language``: ``çift yönlü`` -> ``cift yonlu`` in Turkish.

    The language's ``plain_letters`` say which letters lose their marks; other languages keep them.
    """
    letters = language_of(base(language)).plain_letters
    if not letters:
        return text
    return unicodedata.normalize("NFC", text).translate(_table(base(language), letters))


def folds_letters(language: str) -> bool:
    """Whether people often type ``language`` without some of its letters (Turkish on a US keyboard)."""
    return bool(language_of(base(language)).plain_letters)


_tables: dict[str, dict[int, str]] = {}


def _table(code: str, letters: Mapping[str, str]) -> dict[int, str]:
    if code not in _tables:
        _tables[code] = str.maketrans(dict(letters))
    return _tables[code]
