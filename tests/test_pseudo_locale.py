"""A pseudo-locale proves the interface is translated: every message wrapped in ⟦ ⟧, every lesson text in « ».

The catalog for the made-up language ``qps`` (ISO 639's range for local use) is built from the messages
the code uses, each wrapped in markers; the lesson gets ``qps`` texts, each wrapped in other markers.
A scripted review, status, stats, a practice check and a failing check then print no letters outside
the markers, but for what is neither a message nor a lesson text: card ids, paths, code, the typed answers.
An English word left in the output is a message that does not go through gettext.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from bertdrill.adapters import catalogs

REPO = Path(__file__).resolve().parent.parent
PSEUDO = "qps"
CODE_FIELDS = {"text", "starter", "solution"}  # lesson code: kept as it is, so the lesson still checks


def _tool():
    spec = importlib.util.spec_from_file_location("catalogs_tool", REPO / "scripts" / "catalogs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def pseudo_catalog(locale_dir: Path) -> None:
    tool = _tool()
    from babel.messages.catalog import Catalog

    catalog = Catalog(locale="en", domain="bertdrill")
    for message in tool.template():
        if not message.id:
            continue
        string = tuple(f"⟦{form}⟧" for form in message.id) if isinstance(message.id, tuple) else f"⟦{message.id}⟧"
        catalog.add(message.id, string, context=message.context)
    folder = locale_dir / PSEUDO / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "bertdrill.mo").write_bytes(tool.mo_bytes(catalog))


def _toml(value, key: str = "") -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v, k)}" for k, v in value.items()) + " }"


def _pseudo_texts(value, key: str = ""):
    """Every per-language text gains a ``qps`` one: the English text in « » (code copied as it is)."""
    if isinstance(value, dict):
        value = {k: _pseudo_texts(v, k) for k, v in value.items()}
        if "en" in value and "tr" in value:
            english = value["en"]
            if key in CODE_FIELDS:
                value[PSEUDO] = english
            elif isinstance(english, list):
                value[PSEUDO] = [f"«{text}»" for text in english]
            else:
                value[PSEUDO] = f"«{english}»"
        return value
    if isinstance(value, list):
        return [_pseudo_texts(v, key) for v in value]
    return value


def pseudo_lesson(path: Path) -> dict[str, Any]:  # a TOML document, as tomllib reads one
    data: dict[str, Any] = _pseudo_texts(tomllib.loads((REPO / "decks" / "bert-basics.toml").read_text(encoding="utf-8")))
    data["lesson"]["languages"].append(PSEUDO)
    lines = ["[lesson]"] + [f"{json.dumps(k)} = {_toml(v, k)}" for k, v in data["lesson"].items()]
    for name, values in data["params"].items():
        lines += ["", f"[params.{json.dumps(name)}]"] + [f"{json.dumps(k)} = {_toml(v)}" for k, v in values.items()]
    lines += ["", "[formulas]"] + [f"{json.dumps(k)} = {_toml(v)}" for k, v in data["formulas"].items()]
    for item in data["item"]:
        lines += ["", "[[item]]"] + [f"{json.dumps(k)} = {_toml(v, k)}" for k, v in item.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data


def untranslated(output: str, *, allowed: list[str]) -> list[str]:
    """The words left once messages (⟦ ⟧), lesson texts (« ») and what is neither are taken out."""
    text = output
    while True:  # messages nest (a message formatted into another): take the innermost first
        # a lesson text cut to fit the screen ends in … instead of »
        shorter = re.sub(r"⟦[^⟦⟧]*⟧|«[^«»]*»|«[^«»\n]*…", " ", text)
        if shorter == text:
            break
        text = shorter
    for known in sorted(allowed, key=len, reverse=True):
        text = text.replace(known, " ")
    text = re.sub(r"bert-basics/[\w@#.-]+|\S*/\S*", " ", text)  # card ids and paths
    return re.findall(r"[^\W\d_]{2,}", text)


@pytest.fixture
def pseudo(tmp_path, monkeypatch):
    locale_dir = tmp_path / "locale"
    pseudo_catalog(locale_dir)
    monkeypatch.setattr(catalogs, "LOCALE_DIR", locale_dir)
    lesson = tmp_path / "lesson.toml"
    data = pseudo_lesson(lesson)
    code = [text for item in data["item"] for field in CODE_FIELDS if field in item
            for text in ([item[field]] if isinstance(item[field], str) else item[field].values())]
    code_lines = [line.strip() for text in code for line in text.replace("____", "\n").splitlines() if line.strip()]
    return lesson, code_lines


def test_the_pseudo_catalog_wraps_every_message(pseudo):
    from bertdrill.core.i18n import _, ngettext, pgettext

    catalogs.use(PSEUDO)
    assert _("Not a message of the code") == "Not a message of the code"  # as written
    assert _("Nothing to review now.") == "⟦Nothing to review now.⟧"
    assert ngettext("{count} card", "{count} cards", 3) == "⟦{count} cards⟧"
    assert pgettext("month", "Dec") == "⟦Dec⟧"
    assert untranslated("⟦Saved: ⟦next review ⟦tomorrow⟧⟧⟧ «What is BERT?» bert-basics/x@y", allowed=[]) == []
    assert untranslated("⟦Saved⟧ Session over", allowed=[]) == ["Session", "over"]  # it can fail


def test_a_pseudo_session_shows_only_translated_messages(cli, pseudo, tmp_path, monkeypatch):
    lesson, code = pseudo
    monkeypatch.setenv("BERTDRILL_LANG", PSEUDO)
    files = ("--file", str(lesson))
    # Facts graded, a wrong number (diagnosed), a wrong blank, a choice that does not exist, undo and bury.
    typed = ["123", "7", "z", ":undo", ":bury"]
    answers = "4\n123\n\n7\n1\n\nz\n\n:undo\n:bury\n"
    review = cli("review", "--new", "8", *files, input=answers)
    assert review.exit_code == 0, review.stderr
    status = cli("status", *files)
    stats = cli("stats", *files)
    script = tmp_path / "model.py"
    script.write_text("print(1)\n", encoding="utf-8")
    practice = cli("practice", "check", str(script), *files)
    assert practice.exit_code == 1
    broken = tmp_path / "broken.toml"
    broken.write_text(lesson.read_text(encoding="utf-8").replace("round(ffn / layer, 3)", "round(ffn / layer, 2)"),
                      encoding="utf-8")
    check = cli("check", "--run-solutions", str(broken))
    assert check.exit_code == 1
    allowed = code + typed + ["BERT-base", "BERT-large", "Enter", "EF", "Ctrl-C", "Ctrl-D"]
    for result in (review, status, stats, practice, check):
        output = result.stdout + result.stderr
        assert "⟦" in output
        assert untranslated(output, allowed=allowed) == [], (untranslated(output, allowed=allowed), output)
