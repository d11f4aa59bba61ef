"""Markup through every field (issue 23): a lesson field that reaches HTML is escaped for the place it lands
in, or refused by ``check``. Proved with the real Anki library where Anki renders it."""

from __future__ import annotations

from pathlib import Path

import pytest

anki_collection = pytest.importorskip("anki.collection")

from anki.import_export_pb2 import ImportAnkiPackageOptions, ImportAnkiPackageRequest  # noqa: E402

LESSON = '''[lesson]
id = "markup"
languages = ["en"]
title = {{ en = "Markup" }}
tags = [{lesson_tags}]

[[item]]
id = "q"
kind = "fact"
tags = [{item_tags}]
question = {{ en = "{question}" }}
answer = {{ en = "{answer}" }}
'''

NUMERIC = '''
[params.s]
title = "S"
d = 8

[formulas]
width = "d * 2"

[[item]]
id = "n"
kind = "numeric"
tags = ["table:sizes", "sürüm-2"]
prompt = { en = "Width of {set}?" }
formula = "width"
params = ["s"]
'''


def lesson(tmp_path: Path, *, lesson_tags: str = '"ok"', item_tags: str = '"fine"', question: str = "What?",
           answer: str = "That.") -> Path:
    path = tmp_path / "markup.toml"
    path.write_text(LESSON.format(lesson_tags=lesson_tags, item_tags=item_tags, question=question, answer=answer),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("tag", ['x\\"onmouseover=\\"alert(1)', "a<b", "x&amp;y", "it's", "<img src=x onerror=alert(1)>",
                                 "back`tick", "{{Front}}", "_lead"])
@pytest.mark.parametrize("where", ["item", "lesson"])
def test_a_tag_that_would_be_markup_is_refused_with_its_line(cli, tmp_path, tag, where):
    path = lesson(tmp_path, **{f"{where}_tags": f'"{tag}"'})
    result = cli("check", str(path))
    assert result.exit_code == 1
    line = 10 if where == "item" else 5
    assert f"markup.toml:{line}: tag " in result.output and "no spaces, quotes or markup" in result.output


@pytest.mark.parametrize("tag", ["nlp", "table:sizes", "bert::base", "v1.2", "sürüm-2", "katman_sayısı"])
def test_ordinary_tags_stay_welcome(cli, tmp_path, tag):
    assert cli("check", str(lesson(tmp_path, item_tags=f'"{tag}"'))).exit_code == 0


def imported(cli, tmp_path: Path, path: Path, search: str = "note:bertdrill*"):
    package = tmp_path / "markup.apkg"
    assert cli("export", "anki", str(path), "-o", str(package)).exit_code == 0
    col = anki_collection.Collection(str(tmp_path / "collection.anki2"))
    col.import_anki_package(ImportAnkiPackageRequest(package_path=str(package), options=ImportAnkiPackageOptions()))
    (card_id,) = col.find_cards(search)
    return col, col.get_card(card_id)


def test_anki_media_markup_in_a_field_is_shown_not_played(cli, tmp_path):
    path = lesson(tmp_path, question="Play [sound:evil.mp3] or [anki:tts lang=en_US]hi[/anki:tts]?",
                  answer="<img src=x onerror=alert(1)> [sound:other.mp3]")
    col, card = imported(cli, tmp_path, path)
    try:
        question, answer = card.question(), card.answer()
        assert card.question_av_tags() == [] and card.answer_av_tags() == []  # before: two sounds and a TTS
        assert "[sound:" not in question and "&#91;sound:evil.mp3]" in question
        assert "<img" not in answer and "&lt;img src=x onerror=alert(1)&gt;" in answer
    finally:
        col.close()


def test_tags_reach_the_cards_attribute_as_words(cli, tmp_path):
    path = lesson(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + NUMERIC, encoding="utf-8")
    col, card = imported(cli, tmp_path, path, '"note:bertdrill numeric"')
    try:
        rendered = card.question()
        start = rendered.index('data-tags="') + len('data-tags="')
        attribute = rendered[start:rendered.index('"', start)]
        assert set(attribute.split()) >= {"markup", "kind::numeric", "lang::en", "ok", "table::sizes", "sürüm-2"}
    finally:
        col.close()
