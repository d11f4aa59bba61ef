"""Interface messages through the standard library's gettext, and which language to speak.

Every message a learner or teacher reads goes through ``_`` (or ``ngettext`` where a number
decides the form, ``pgettext`` where a short word needs its context, such as a month's name),
so a catalog can translate it. Until the CLI installs a language with :func:`install`,
messages come back as written (English).

This module reads no files and no environment: the catalogs are found by
:mod:`bertdrill.adapters.catalogs`, and :func:`choose_language` is given the environment it reads.
"""

from __future__ import annotations

import gettext
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

ENGLISH = "en"  # the language the messages are written in: it needs no catalog
# A language code as lessons write them (ISO 639-1 or -3), optionally with a region or an encoding,
# as locales and people write them: tr, TR, tr-TR, tr_TR.UTF-8, tr_TR@euro.
_CODE = re.compile(r"\A([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]+)*(?:\.[A-Za-z0-9_-]+)?(?:@[A-Za-z0-9_-]+)?\Z")
_LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")  # POSIX precedence for messages

_Speech = tuple[gettext.NullTranslations, str]
_installed: _Speech = (gettext.NullTranslations(), ENGLISH)
# A web request speaks its learner's language (:func:`speaking`) while other requests speak theirs.
_speaking: ContextVar[_Speech | None] = ContextVar("bertdrill_speaking", default=None)


def _current() -> _Speech:
    return _speaking.get() or _installed


def _(message: str) -> str:
    return _current()[0].gettext(message)


def N_(message: str) -> str:  # noqa: N802 - the name gettext's tools look for
    """Mark a message for the catalogs where it is defined (a table of constants); ``_()`` it where shown."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    return _current()[0].ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """A message that needs its context to be translated right (``pgettext("month", "May")``)."""
    return _current()[0].pgettext(context, message)


def install(translation: gettext.NullTranslations, language: str = ENGLISH) -> None:
    """Use this catalog for every later message (the CLI calls it once, from --lang or the locale)."""
    global _installed
    _installed = (translation, language)


@contextmanager
def speaking(translation: gettext.NullTranslations, language: str) -> Iterator[None]:
    """Use this catalog for the messages of the current context only (one web request), then the installed one."""
    token = _speaking.set((translation, language))
    try:
        yield
    finally:
        _speaking.reset(token)


def language() -> str:
    """The language messages are in now: numbers in them are written its way (23.837.184)."""
    return _current()[1]


def language_code(text: str) -> str | None:
    """The language part of a code or locale name, lower case (``tr_TR.UTF-8`` -> ``tr``).

    None for what names no language: ``C``, ``POSIX``, ``C.UTF-8``, an empty or malformed value.
    """
    match = _CODE.match(text.strip())
    if not match or match[1].upper() in {"C", "POSIX"}:
        return None
    return match[1].lower()


def choose_language(option: str | None, environ: Mapping[str, str], known: frozenset[str]) -> str:
    """The language to speak: ``--lang``, else ``$BERTDRILL_LANG``, else the locale, else English.

    ``--lang`` and ``$BERTDRILL_LANG`` are the learner's explicit choice and are taken as given (a lesson
    without that language then says so). The locale is a hint: it counts only for a language
    bertdrill has a catalog for (``known``), so a learner whose system speaks German gets English
    rather than an error from every English lesson.
    """
    for explicit in (option, environ.get("BERTDRILL_LANG")):
        if explicit:
            code = language_code(explicit)
            if code is None:
                raise ValueError(explicit)
            return code
    for variable in _LOCALE_VARIABLES:
        value = environ.get(variable)
        if value:  # the first one set decides, as for the C library: LC_ALL=C means no preference
            code = language_code(value)
            return code if code in known else ENGLISH
    return ENGLISH
