"""Which language bertdrill speaks, and catalogs that translate every message the code uses."""

from __future__ import annotations

import gettext
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from bertdrill.adapters import catalogs
from bertdrill.core import i18n
from bertdrill.core.i18n import choose_language, language_code

REPO = Path(__file__).resolve().parent.parent
KNOWN = frozenset({"en", "tr"})


def load_tool():
    """scripts/catalogs.py, the translators' tool: the tests check what it checks."""
    spec = importlib.util.spec_from_file_location("catalogs_tool", REPO / "scripts" / "catalogs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- choosing the language


@pytest.mark.parametrize(("text", "code"), [
    ("tr", "tr"), ("TR", "tr"), ("tr-TR", "tr"), ("tr_TR.UTF-8", "tr"), ("de_DE@euro", "de"), ("fil", "fil"),
    ("C", None), ("POSIX", None), ("C.UTF-8", None), ("", None), ("tr TR", None), ("t", None), ("turkish", None),
])
def test_language_code_reads_codes_and_locale_names(text, code):
    assert language_code(text) == code


@pytest.mark.parametrize(("option", "environ", "chosen"), [
    (None, {}, "en"),
    ("tr", {"BERTDRILL_LANG": "en", "LANG": "en_US.UTF-8"}, "tr"),  # --lang first
    (None, {"BERTDRILL_LANG": "tr", "LC_ALL": "en_US.UTF-8"}, "tr"),  # then $BERTDRILL_LANG
    (None, {"LANG": "tr_TR.UTF-8"}, "tr"),  # then the locale
    (None, {"LC_MESSAGES": "tr_TR.UTF-8", "LANG": "en_GB.UTF-8"}, "tr"),
    (None, {"LC_ALL": "en_GB.UTF-8", "LC_MESSAGES": "tr_TR.UTF-8"}, "en"),  # LC_ALL over LC_MESSAGES
    (None, {"LC_ALL": "C", "LANG": "tr_TR.UTF-8"}, "en"),  # LC_ALL=C: no preference, and it decides
    (None, {"LC_ALL": "", "LANG": "tr_TR.UTF-8"}, "tr"),  # an empty variable is not set
    (None, {"LANG": "de_DE.UTF-8"}, "en"),  # a locale language without a catalog: English, not an error
    ("de", {}, "de"),  # an explicit choice is taken as given (a lesson without it then says so)
    (None, {"BERTDRILL_LANG": "pt_BR"}, "pt"),
])
def test_choose_language_in_order(option, environ, chosen):
    assert choose_language(option, environ, KNOWN) == chosen


@pytest.mark.parametrize("bad", ["d!", "turkish", "C"])
def test_an_explicit_choice_that_names_no_language_is_refused(bad):
    with pytest.raises(ValueError):
        choose_language(bad, {}, KNOWN)
    with pytest.raises(ValueError):
        choose_language(None, {"BERTDRILL_LANG": bad}, KNOWN)


def test_the_shipped_catalogs_are_found():
    assert {"en", "tr"} <= catalogs.known_languages()
    assert isinstance(catalogs.translation("tr"), gettext.GNUTranslations)
    assert type(catalogs.translation("xx")) is gettext.NullTranslations  # no catalog: messages as written


def test_a_language_is_a_folder_of_data(tmp_path):
    """Adding a language needs no code: a compiled catalog in the locale folder is enough."""
    tool = load_tool()
    from babel.messages.catalog import Catalog

    catalog = Catalog(locale="fr", domain="bertdrill")
    catalog.add("Session over", "Séance terminée")
    (tmp_path / "fr" / "LC_MESSAGES").mkdir(parents=True)
    (tmp_path / "fr" / "LC_MESSAGES" / "bertdrill.mo").write_bytes(tool.mo_bytes(catalog))
    assert catalogs.known_languages(tmp_path) == {"en", "fr"}
    assert choose_language(None, {"LANG": "fr_FR.UTF-8"}, catalogs.known_languages(tmp_path)) == "fr"
    catalogs.use("fr", tmp_path)
    assert i18n._("Session over") == "Séance terminée"
    assert i18n._("Saved") == "Saved"  # not translated yet: English


def test_turkish_uses_one_form_after_a_number():
    """'3 kart', never '3 kartlar': the Turkish catalog has one plural form."""
    translation = catalogs.translation("tr")
    assert isinstance(translation, gettext.GNUTranslations)  # a catalog was found, not the English fallback
    plural = translation.plural  # type: ignore[attr-defined]  # set from the catalog's Plural-Forms; typeshed omits it
    assert plural(1) == plural(2) == plural(0) == 0
    tool = load_tool()
    catalog = tool.read(REPO / "src/bertdrill/locale/tr/LC_MESSAGES/bertdrill.po")
    assert catalog.num_plurals == 1


def test_a_long_list_of_names_says_how_many_more_in_each_language():
    """A sheet of 100,000 items left out 42,849 questions and printed every id: a message lists ten."""
    from bertdrill.core.languages import LISTED, listed

    names = [f"lesson/item-{index}" for index in range(1, 1236)]
    assert listed(names[:LISTED]) == ", ".join(names[:LISTED])
    catalogs.use("en")
    assert listed(names) == ", ".join(names[:LISTED]) + " and 1,225 more"
    catalogs.use("tr")
    try:
        assert listed(names) == ", ".join(names[:LISTED]) + " ve 1.225 tane daha"
    finally:
        catalogs.use("en")


# --------------------------------------------------------------------------- the catalogs against the code


def test_every_catalog_translates_every_message_the_code_uses():
    """Fails when code adds or changes a message a catalog lacks: run scripts/catalogs.py, then translate."""
    tool = load_tool()
    wanted = tool.template()
    assert len(wanted) > 1, "the extractor found no messages: is src/bertdrill still where it was?"
    complaints = [complaint for path in tool.po_paths()
                  for complaint in tool.problems(path.relative_to(REPO), tool.read(path), wanted)]
    assert complaints == [], "\n".join(complaints)


def test_every_compiled_catalog_is_compiled_from_its_po():
    tool = load_tool()
    paths = tool.po_paths()
    assert paths, "no catalog found"
    complaints = [complaint for path in paths for complaint in tool.stale(path.relative_to(REPO), tool.read(path))]
    assert complaints == [], "\n".join(complaints)


def test_the_checks_fail_on_a_missing_or_stale_message(tmp_path):
    """The two tests above can fail: a message the catalog lacks, and a .po edited but not compiled."""
    tool = load_tool()
    from babel.messages.catalog import Catalog

    wanted = Catalog()
    wanted.add("Session over")
    wanted.add(("{count} card", "{count} cards"))
    have = Catalog(locale="tr")
    have.add("Session over", "Oturum bitti")
    assert [line.split(": ", 1)[1] for line in tool.problems(Path("tr.po"), have, wanted)] == [
        "missing '{count} card'"]
    have.add(("{count} card", "{count} cards"), ("", ""))
    assert [line.split(": ", 1)[1] for line in tool.problems(Path("tr.po"), have, wanted)] == [
        "not translated '{count} card'"]

    monkey_root = tmp_path
    po = monkey_root / "tr.po"
    po.write_bytes(tool.po_bytes(have))
    po.with_suffix(".mo").write_bytes(tool.mo_bytes(have))
    tool.ROOT = monkey_root
    assert tool.stale(Path("tr.po"), have) == []
    have.add("Saved", "Kaydedildi")
    assert tool.stale(Path("tr.po"), have) == ["tr.mo: not compiled from its .po (run scripts/catalogs.py)"]


# --------------------------------------------------------------------------- the command line


def test_every_command_takes_lang():
    import typer.main

    from bertdrill.cli import app

    def leaves(command, path=()):
        subcommands = getattr(command, "commands", None)
        if subcommands is None:
            yield " ".join(path), command
            return
        for name, sub in subcommands.items():
            yield from leaves(sub, (*path, name))

    found = dict(leaves(typer.main.get_command(app)))
    assert {"review", "status", "stats", "check", "practice check", "export anki"} <= set(found)
    lacking = [name for name, command in found.items()
               if not any("--lang" in param.opts for param in command.params)]
    assert lacking == []


@pytest.mark.parametrize(("environ", "args", "said"), [
    ({}, ("--lang", "tr"), "Şimdi zamanı gelen"),
    ({"BERTDRILL_LANG": "tr"}, (), "Şimdi zamanı gelen"),
    ({"LANG": "tr_TR.UTF-8"}, (), "Şimdi zamanı gelen"),
    ({"LC_ALL": "en_US.UTF-8", "LANG": "tr_TR.UTF-8"}, (), "Due now"),
    ({"LANG": "tr_TR.UTF-8"}, ("--lang", "en"), "Due now"),
    ({"LANG": "de_DE.UTF-8"}, (), "Due now"),  # no German catalog: English, not an error
])
def test_the_language_comes_from_lang_then_the_environment(cli, monkeypatch, environ, args, said):
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    result = cli("status", *args)
    assert result.exit_code == 0, result.stderr
    assert said in result.stdout


def test_a_language_that_is_no_code_is_a_usage_error(cli, monkeypatch):
    result = cli("status", "--lang", "türkçe")
    assert result.exit_code == 2 and "'türkçe' is not a language code such as en or tr" in result.stderr
    monkeypatch.setenv("BERTDRILL_LANG", "C")
    assert cli("status").exit_code == 2


# --------------------------------------------------------------------------- golden screens, both languages

GOLDEN = REPO / "tests" / "golden" / "languages"
# Facts graded, a number answered (the Turkish way in Turkish), a choice, a wrong blank, then quit.
SESSION = "4\n{total}\n\n4\n\n5\n\n:quit\n"
TOTALS = {"en": "109,482,240", "tr": "109.482.240"}


@pytest.mark.parametrize("language", ["en", "tr"])
def test_golden_screens_in_each_language(cli, monkeypatch, tmp_path, language):
    """A scripted review, then status and stats, pinned in English and in Turkish. In Turkish nothing is
    English but card ids, code and numbers; the English lesson shows no Turkish code."""
    import os

    from bertdrill.cli.base import LazyConsole, out

    monkeypatch.setenv("BERTDRILL_NOW", "2025-03-03T09:00:00+03:00")
    assert isinstance(out, LazyConsole)  # typed as the Console it stands for
    monkeypatch.setattr(out.get(), "width", 100)
    script = tmp_path / "model.py"
    script.write_text("print(23837184, 7087872, 590592)\nprint(109482240)\nprint(0.67)\n", encoding="utf-8")
    screens = {
        "review": cli("review", "--lang", language, "--new", "5", input=SESSION.format(total=TOTALS[language])),
        "status": cli("status", "--lang", language),
        "stats": cli("stats", "--lang", language, "--days", "7"),
        "practice": cli("practice", "check", "--lang", language, str(script)),
    }
    for name, result in screens.items():
        assert result.exit_code in (0, 1), result.stderr
        text = result.stdout
        text = "\n".join(line for line in text.splitlines() if "bertdrill.db" not in line) + "\n"  # the temporary path
        # The session's length is wall time (BERTDRILL_NOW's clock runs on): on a loaded machine it is not 0 s.
        text = re.sub(r"(\d+ min )?\d+ (s|sn)\. ", r"0 \2. ", text) if name == "review" else text
        golden = GOLDEN / f"{name}-{language}.txt"
        if os.environ.get("BERTDRILL_UPDATE_GOLDEN"):
            golden.parent.mkdir(parents=True, exist_ok=True)
            golden.write_text(text, encoding="utf-8")
        assert text == golden.read_text(encoding="utf-8"), f"{golden.name} changed; rerun with BERTDRILL_UPDATE_GOLDEN=1"
    if language == "en":
        assert "dikkat" not in screens["review"].stdout and "attention = ____" in screens["review"].stdout


def test_an_install_ships_every_package_and_the_compiled_catalogs():
    """`pip install .` installs what pyproject lists: a package left out (bertdrill.core.lesson once was) or
    catalogs not matched by package-data would be missing from a real install, though not from this tree."""
    import fnmatch
    import tomllib

    setup = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    source = REPO / "src"
    found = {".".join(path.parent.relative_to(source).parts) for path in (source / "bertdrill").rglob("__init__.py")}
    assert found | {"bertdrill.decks"} == set(setup["packages"])
    shipped = [str(path.relative_to(source / "bertdrill")) for path in (source / "bertdrill" / "locale").rglob("*.mo")]
    assert shipped and all(any(fnmatch.fnmatch(name, pattern) for pattern in setup["package-data"]["bertdrill"])
                           for name in shipped)


def test_the_language_table_writes_numbers_as_cldr_does():
    """Every row's thousands separator and decimal mark is CLDR's (through Babel), so a hand-typed row cannot
    drift (the Azerbaijani row once wrote numbers the English way)."""
    from babel.numbers import get_decimal_symbol, get_group_symbol

    from bertdrill.core.languages import LANGUAGES

    rows = {code: (entry.thousands, entry.decimal) for code, entry in LANGUAGES.items()}
    assert rows == {code: (get_group_symbol(code), get_decimal_symbol(code)) for code in LANGUAGES}


def test_anki_labels_and_sheet_words_come_from_the_catalogs():
    """One mechanism: the Anki templates' words and a sheet's labels are gettext messages, so a catalog that
    translates them is all a new language needs (no table of sheet words, no loader of Anki's own)."""
    from bertdrill.adapters.export.anki import LABEL_TYPE_NUMBER, note_types
    from bertdrill.core.kinds import Kind
    from bertdrill.core.languages import sheet_labels

    said = catalogs.translations()
    assert list(said) == ["en", *sorted(set(catalogs.known_languages()) - {"en"})]
    front = note_types(said)[Kind.NUMERIC].templates[0]["qfmt"]
    for language, say in said.items():
        assert f'<span class="l10n" lang="{language}">{say(LABEL_TYPE_NUMBER)}</span>' in front
    catalogs.use("tr")
    assert (sheet_labels().key, sheet_labels().of) == ("Cevap anahtarı", "/")
    catalogs.use("en")
    assert (sheet_labels().key, sheet_labels().of) == ("Answer key", "of")


@pytest.mark.parametrize("args, said", [
    (["status", "--db", "{folder}"], "Hata: {folder} bir klasör, veritabanı dosyası değil\n"),
    (["check", "{broken}/formula-cycle.toml"],
     "{broken}/formula-cycle.toml:19: formül döngüsü: attention -> total -> layer -> attention\n"),
    (["check", "{broken}/attribute-access.toml"],
     "{broken}/attribute-access.toml:23: 'share' formülü: formüllerde öznitelik erişimi kullanılamaz\n"),
    (["check", "{broken}/bad-item-id.toml"], "{broken}/bad-item-id.toml:"),
    (["params", "--set", "d=dd"], "Hata: bilinmeyen ad 'dd'\n"),
], ids=["store", "formula-cycle", "formula-construct", "lesson-parser", "typed-formula"])
def test_the_store_the_formula_engine_and_the_lesson_parser_speak_turkish(cli, tmp_path, args, said):
    """Issue 19: these messages were English under --lang tr."""
    broken = Path(__file__).parent / "lessons" / "broken"
    fill = {"folder": str(tmp_path), "broken": str(broken)}
    result = cli(*[arg.format(**fill) for arg in args], "--lang", "tr")
    assert result.exit_code == 1
    assert result.stderr.startswith(said.format(**fill)), result.stderr
    if "bad-item-id" in args[-1]:
        assert "öğe" in result.stderr or "küçük harf" in result.stderr, result.stderr


def _english_only(tmp_path: Path) -> Path:
    """tests/lessons/minimal.toml with its Turkish texts taken out: a lesson in English only."""
    import re

    text = (Path(__file__).parent / "lessons" / "minimal.toml").read_text(encoding="utf-8")
    text = text.replace('languages = ["en", "tr"]', 'languages = ["en"]')
    text = re.sub(r',\s*tr = ("(?:[^"\\]|\\.)*"|\[[^\]]*\])', "", text)
    path = tmp_path / "english.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("command", [
    ["check", "{lesson}"], ["cards", "-f", "{lesson}"], ["status", "-f", "{lesson}"], ["stats", "-f", "{lesson}"],
    ["review", "-f", "{lesson}", "--new", "1"], ["sheet", "{lesson}", "-o", "{out}/quiz.md"],
    ["export", "anki", "{lesson}", "-o", "{out}/deck.apkg"], ["params", "-f", "{lesson}"],
], ids=lambda command: " ".join(command[:2]))
def test_a_turkish_locale_is_a_preference_an_english_lesson_still_opens(cli, monkeypatch, tmp_path, command):
    """Issue 23: with LANG=tr_TR.UTF-8 and no --lang, every command failed on an English-only lesson ("dersinde
    'tr' metinleri yok"). The locale is a preference: the lesson's texts come in English, the messages in Turkish."""
    monkeypatch.setenv("LANG", "tr_TR.UTF-8")
    lesson = _english_only(tmp_path)
    result = cli(*[part.format(lesson=lesson, out=tmp_path) for part in command], input=":quit\n")
    assert result.exit_code == 0, result.stderr
    assert "metinleri yok" not in result.stderr


def test_an_asked_for_language_a_lesson_lacks_is_still_an_error(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("BERTDRILL_LANG", "tr")
    result = cli("cards", "-f", str(_english_only(tmp_path)))
    assert result.exit_code == 1
    assert "mini dersinde 'tr' metinleri yok (olanlar: en); --lang en kullan" in result.stderr


def test_review_in_a_turkish_locale_shows_the_english_texts_and_turkish_messages(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("LANG", "tr_TR.UTF-8")
    result = cli("review", "-f", str(_english_only(tmp_path)), "--new", "1", input=":quit\n")
    assert "What is it?" in result.stdout and "Tekrar: 1 kart" in result.stdout, result.stdout


def test_an_ascii_terminal_gets_question_marks_not_a_crash(tmp_path):
    """Issue 23: LC_ALL=C without Python's UTF-8 mode made stdout ASCII, and `check` crashed on its first ✓."""
    import os
    import subprocess

    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "BERTDRILL_HOME": str(tmp_path)}
    env.pop("PYTHONIOENCODING", None)
    for command in (["check"], ["cards", "--lang", "tr"]):
        result = subprocess.run([sys.executable, "-m", "bertdrill", *command], capture_output=True, env=env)
        assert result.returncode == 0, result.stderr
        assert b"unexpected" not in result.stderr
        result.stdout.decode("ascii")  # what reached the terminal is ASCII: "?" where a letter could not go
        assert command != ["check"] or result.stdout.startswith(b"? bert-basics")
