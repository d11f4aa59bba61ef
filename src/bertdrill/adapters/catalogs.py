"""The translation catalogs that ship inside the package: ``locale/<lang>/LC_MESSAGES/bertdrill.mo``.

The ``.po`` files beside them are the sources translators edit; the ``.mo`` files are compiled
from them with ``python scripts/catalogs.py`` and committed, so a plain ``pip install .`` and an
editable install both find them without a build step (``tests/test_i18n.py`` fails when a ``.mo``
is older than its ``.po``). Adding a language is adding a folder here: see docs/translating.md.
"""

from __future__ import annotations

import gettext
from collections.abc import Callable
from pathlib import Path

from bertdrill.core import i18n

DOMAIN = "bertdrill"
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"  # bertdrill/locale: data beside the layers


def known_languages(locale_dir: Path | None = None) -> frozenset[str]:
    """The languages with a compiled catalog, English (the messages as written) included."""
    locale_dir = locale_dir or LOCALE_DIR
    found = {path.parent.parent.name for path in locale_dir.glob(f"*/LC_MESSAGES/{DOMAIN}.mo")}
    return frozenset(found | {i18n.ENGLISH})


def translation(language: str, locale_dir: Path | None = None) -> gettext.NullTranslations:
    """The catalog for ``language``; messages as written (English) when there is none."""
    return gettext.translation(DOMAIN, localedir=locale_dir or LOCALE_DIR, languages=[language], fallback=True)


def translations(locale_dir: Path | None = None) -> dict[str, Callable[[str], str]]:
    """How every language with a catalog says a message, English (the messages as written) first: for
    outputs that carry every language at once, such as the labels of Anki's note types."""
    languages = sorted(known_languages(locale_dir), key=lambda language: (language != i18n.ENGLISH, language))
    return {language: translation(language, locale_dir).gettext for language in languages}


def use(language: str, locale_dir: Path | None = None) -> None:
    """Speak ``language`` from now on (every later ``_()`` goes through its catalog)."""
    i18n.install(translation(language, locale_dir), language)
