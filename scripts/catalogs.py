"""Keep the translation catalogs in step with the code (needs Babel: ``pip install -e '.[test]'``).

    python scripts/catalogs.py            # add the code's new messages to every .po, drop unused ones,
                                          # compile every .mo; then translate what it lists as missing
    python scripts/catalogs.py --new fr   # start a catalog for a new language
    python scripts/catalogs.py --check    # change nothing; exit 1 and list what is missing or stale

Messages are found in ``src/bertdrill`` by Babel's extractor: the strings passed to ``_``,
``N_``, ``ngettext``, ``pgettext`` and ``npgettext``, in Python modules and in the web pages' templates. ``tests/test_i18n.py`` runs the same checks.
See docs/translating.md.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "bertdrill"
LOCALE_DIR = PACKAGE / "locale"
DOMAIN = "bertdrill"
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2), "npgettext": ((1, "c"), 2, 3)}
COMMENT_TAGS = ("Translators:",)
# Python modules, and the web pages' Jinja2 templates (their ``_()`` calls, by Jinja2's own extractor).
METHODS = [("web/templates/**.html", "jinja2.ext:babel_extract"), ("**.py", "python")]
# A date the catalogs' headers keep, so recompiling an unchanged catalog gives the same bytes.
FIXED_DATE = datetime(2026, 12, 1, tzinfo=UTC)


def template() -> Catalog:
    """Every message the code uses, with where it is used (file names, not lines: fewer merge conflicts)."""
    catalog = Catalog(domain=DOMAIN, project="bertdrill", creation_date=FIXED_DATE, fuzzy=False, version="1")
    found = extract_from_dir(PACKAGE, method_map=METHODS, keywords=KEYWORDS, comment_tags=COMMENT_TAGS,
                             strip_comment_tags=True)
    for filename, lineno, message, comments, context in found:
        where = (f"src/bertdrill/{filename}", lineno)
        catalog.add(message, None, [where], auto_comments=comments, context=context)
    return catalog


def po_paths() -> list[Path]:
    return sorted(LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def read(path: Path) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=path.parent.parent.name, domain=DOMAIN)


def po_bytes(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, sort_output=True, include_lineno=False, ignore_obsolete=True)
    return buffer.getvalue()


def mo_bytes(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    return buffer.getvalue()


Text = str | tuple[str, ...]  # a message's text: one string, or its singular and plural forms
Key = tuple[Text, str | None]


def key(message: Message) -> Key:
    """What names a message: its text (singular and plural) and its context."""
    text = _frozen(message.id)
    assert text is not None, message  # a message's id is never None (its string may be)
    return (text, message.context)


def _frozen(value: str | tuple[str, ...] | list[str] | None) -> Text | None:
    return tuple(value) if isinstance(value, list | tuple) else value


def problems(path: Path, catalog: Catalog, wanted: Catalog) -> Iterator[str]:
    """What keeps ``catalog`` from translating every message of ``wanted`` (messages written per line)."""
    have = {key(message): message for message in catalog if message.id}
    for message in wanted:
        if not message.id:
            continue
        found = have.get(key(message))
        shown = message.id if isinstance(message.id, str) else message.id[0]
        context = f" (context {message.context!r})" if message.context else ""
        if found is None:
            yield f"{path}: missing {shown!r}{context}"
        elif not translated(found):
            yield f"{path}: not translated {shown!r}{context}"


def translations(catalog: Catalog) -> dict[Key, Text | None]:
    """(message, context) -> translation, for what a compiled catalog holds: translated, not fuzzy."""
    # write_mo fills an untranslated plural with the English forms: that is no translation either.
    return {key(message): _frozen(message.string) for message in catalog
            if message.id and translated(message) and _frozen(message.string) != _frozen(message.id)}


def translated(message) -> bool:
    """Translated, every plural form of it, and not marked fuzzy (a guess gettext would not use)."""
    forms = message.string if isinstance(message.string, list | tuple) else [message.string]
    return not message.fuzzy and bool(forms) and all(forms)


def stale(path: Path, catalog: Catalog) -> list[str]:
    """A complaint when the ``.mo`` beside ``path`` does not hold exactly the ``.po``'s translations."""
    mo_path = path.with_suffix(".mo")
    if not (ROOT / mo_path).exists():
        return [f"{mo_path}: missing (run scripts/catalogs.py)"]
    with (ROOT / mo_path).open("rb") as file:
        compiled = read_mo(file)
    if translations(compiled) != translations(catalog):
        return [f"{mo_path}: not compiled from its .po (run scripts/catalogs.py)"]
    return []


def update(path: Path, wanted: Catalog) -> Catalog:
    catalog = read(path)
    catalog.update(wanted, no_fuzzy_matching=True, update_creation_date=False)
    catalog.revision_date = FIXED_DATE
    return catalog


def new(language: str) -> Path:
    path = LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"
    if path.exists():
        raise SystemExit(f"{path} exists already")
    path.parent.mkdir(parents=True)
    catalog = Catalog(locale=language, domain=DOMAIN, project="bertdrill", creation_date=FIXED_DATE,
                      revision_date=FIXED_DATE, fuzzy=False, version="1",
                      header_comment=f"# bertdrill's messages in {language}: see docs/translating.md.\n#")
    path.write_bytes(po_bytes(catalog))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--new", metavar="LANG", help="start a catalog for this language code (fr, pt, ...)")
    parser.add_argument("--check", action="store_true", help="change nothing; fail on anything missing or stale")
    args = parser.parse_args(argv)
    if args.new:
        print(f"wrote {new(args.new).relative_to(ROOT)}")
    wanted = template()
    missing: list[str] = []
    for path in po_paths():
        if args.check:
            catalog = read(path)
            missing += stale(path.relative_to(ROOT), catalog)
        else:
            catalog = update(path, wanted)
            path.write_bytes(po_bytes(catalog))
            path.with_suffix(".mo").write_bytes(mo_bytes(read(path)))
        missing += problems(path.relative_to(ROOT), catalog, wanted)
    print("\n".join(missing) if missing else f"{len(wanted)} messages; every catalog translates them all")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
