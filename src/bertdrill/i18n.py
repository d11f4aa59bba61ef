"""Interface messages through the standard library's gettext.

Every message a learner or teacher reads goes through ``_`` (or ``ngettext`` where a number
decides the form), so a catalog can translate it. Until the CLI installs a language with
:func:`use`, messages come back as written (English).
"""

from __future__ import annotations

import gettext

_translation: gettext.NullTranslations = gettext.NullTranslations()


def _(message: str) -> str:
    return _translation.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return _translation.ngettext(singular, plural, n)


def install(translation: gettext.NullTranslations) -> None:
    """Use this catalog for every later message (the CLI calls it once, from --lang or the locale)."""
    global _translation
    _translation = translation
