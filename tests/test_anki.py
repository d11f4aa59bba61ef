"""The Anki export, checked by the real Anki library importing it.

`anki` (PyPI) is Anki's own engine: the tests open a fresh collection in a
temporary folder and import our packages with Anki's default import options,
as File > Import does.
"""

from __future__ import annotations

import html
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import genanki
import pytest
from anki.collection import Collection
from anki.import_export_pb2 import (
    ImportAnkiPackageOptions,
    ImportAnkiPackageRequest,
    ImportAnkiPackageUpdateCondition,
)
from anki.notes import Note
from hypothesis import given, settings
from hypothesis import strategies as st

from bertdrill.adapters.export import anki as bertdrill_anki
from bertdrill.adapters.export.files import Replace, write_atomic
from bertdrill.core.cards import BlankCard, compile_lesson
from bertdrill.core.errors import BertdrillError
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson import parse

SHIPPED_KINDS = {"fact": 12, "choice": 1, "blank": 1, "numeric": 14, "match": 4, "practice": 1}


# --- helpers ---------------------------------------------------------------------------------

@pytest.fixture
def collection(tmp_path):
    col = Collection(str(tmp_path / "collection.anki2"))
    yield col
    col.close()


def import_package(col: Collection, path: Path):
    """Import as Anki's File > Import does, with its default options; return the import log."""
    request = ImportAnkiPackageRequest(package_path=str(path), options=ImportAnkiPackageOptions())
    log = col.import_anki_package(request).log
    col.models._clear_cache()  # the Python layer caches note types; the import changed them underneath
    return log


def counts(log) -> dict[str, int]:
    return {name: len(getattr(log, name)) for name in
            ("new", "updated", "duplicate", "conflicting", "first_field_match", "missing_notetype",
             "missing_deck", "empty_first_field")}


def clean(new: int = 0, updated: int = 0, duplicate: int = 0) -> dict[str, int]:
    """An import log with nothing to warn about."""
    return dict(new=new, updated=updated, duplicate=duplicate, conflicting=0, first_field_match=0,
                missing_notetype=0, missing_deck=0, empty_first_field=0)


def notes_by_guid(col: Collection) -> dict[str, Note]:
    return {note.guid: note for note in (col.get_note(nid) for nid in col.find_notes(""))}


def guid(key: str, language: str = "en", lesson_id: str = "bert-basics") -> str:
    value: str = genanki.guid_for(lesson_id, key, language)  # genanki is untyped
    return value


def visible(rendered: str) -> str:
    """What a person sees: the card's HTML without its style, tags and character references."""
    text = re.sub(r"<style>.*?</style>", "", rendered, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    return " ".join(html.unescape(text).split())


def without_style(rendered: str) -> str:
    return re.sub(r"<style>.*?</style>", "", rendered, flags=re.S)


def card_of(col: Collection, note_guid: str):
    note = notes_by_guid(col)[note_guid]
    (card,) = note.cards()
    return card


def save(path: Path, text: str, when: float) -> Path:
    """Write a lesson file as if its author saved it at ``when``."""
    path.write_text(text, encoding="utf-8")
    os.utime(path, (when, when))
    return path


def export(cli, *args: str):
    result = cli("export", "anki", *args)
    assert result.exit_code == 0, result.stderr
    return result


# --- note types, identity, text --------------------------------------------------------------

def test_note_types_are_frozen():
    # Changing any of these breaks updates for everyone who imported an earlier export:
    # add a new note type with a new id and name instead.
    frozen = {
        "fact": (1165273184, "bertdrill fact", ["Question", "Answer", "Explanation", "Source"], "Recall"),
        "choice": (2136876611, "bertdrill choice", ["Question", "Options", "Answer", "Explanation", "Source"],
                   "Choose"),
        "blank": (1650602056, "bertdrill blank", ["Text", "Prompt", "Back Extra", "Source"], "Cloze"),
        "numeric": (2067266769, "bertdrill numeric", ["Question", "Answer", "Explanation", "Source"],
                    "Type the number"),
        "match": (1398046890, "bertdrill match", ["Term", "Meaning", "Table", "Explanation", "Source"], "Match"),
        "practice": (1862286196, "bertdrill practice",
                     ["Prompt", "Starter", "Expected Output", "Solution", "Explanation", "Source"], "Practice"),
    }
    actual = {kind: (m.model_id, m.name, [f["name"] for f in m.fields], m.templates[0]["name"])
              for kind, m in bertdrill_anki.note_types().items()}
    assert actual == frozen
    assert bertdrill_anki.note_types()[Kind.BLANK].model_type == genanki.Model.CLOZE
    assert all(len(m.templates) == 1 for m in bertdrill_anki.note_types().values())


def test_guids_come_from_card_ids_not_text(lesson_text):
    original = parse(lesson_text, "a.toml")
    edited = parse(lesson_text.replace("Each word sees", "Every token sees"), "b.toml")
    package = bertdrill_anki.build([original], "all", {"bert-basics": 1})
    assert [n.guid for n in package.notes] == [
        guid(card.key, language) for language in ("en", "tr") for card in compile_lesson(original)
    ]
    assert [n.guid for n in bertdrill_anki.build([edited], "all", {"bert-basics": 1}).notes] == \
        [n.guid for n in package.notes]
    assert len(set(n.guid for n in package.notes)) == 66


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=4))
def test_guids_are_genankis_own(parts):
    """The export's own guid function gives genanki's GUID for any parts, so no note changes identity."""
    assert bertdrill_anki.guid_for(*parts) == genanki.guid_for(*parts)


def test_decks_are_stable_per_lesson_and_language(lesson_text):
    lesson = parse(lesson_text, "a.toml")
    one = bertdrill_anki.build([lesson], "tr", {"bert-basics": 1})
    both = bertdrill_anki.build([lesson], "all", {"bert-basics": 2})
    assert [d.name for d in one.decks] == ["bertdrill::BERT nedir?"]
    assert [d.name for d in both.decks] == ["bertdrill::What is BERT?::English", "bertdrill::What is BERT?::Türkçe"]
    assert one.decks[0].deck_id == both.decks[1].deck_id == bertdrill_anki.stable_id("bertdrill deck", "bert-basics", "tr")
    assert both.decks[0].deck_id != both.decks[1].deck_id


def test_text_is_escaped_and_cloze_syntax_in_lesson_text_is_inert():
    assert bertdrill_anki.prose(" <b>x</b> & y\nz ") == "&lt;b&gt;x&lt;/b&gt; &amp; y<br>z"
    assert bertdrill_anki.code("\n  if a < b:\n    pass\n") == "  if a &lt; b:\n    pass"
    lesson = parse(_lesson(blank_text="{{c2::x}} = ____ * d", blank_answer="2"), "l.toml")
    (card,) = [c for c in compile_lesson(lesson) if isinstance(c, BlankCard)]
    assert bertdrill_anki.cloze(card, "en") == "&#123;&#123;c2::x&#125;&#125; = {{c1::2}} * d"


def test_tags_name_lesson_kind_language_and_table(lesson_text):
    lesson = parse(lesson_text, "a.toml")
    notes = {n.guid: n for n in bertdrill_anki.build([lesson], "tr", {"bert-basics": 1}).notes}
    assert notes[guid("bert-base-match#layers", "tr")].tags == [
        "bert-basics", "kind::match", "lang::tr", "bert", "transformers", "nlp", "lesson-question",
        "table::bert-base-match"]
    assert notes[guid("total-params@bert-large", "tr")].tags == [
        "bert-basics", "kind::numeric", "lang::tr", "bert", "transformers", "nlp", "parameters"]


# --- the command -----------------------------------------------------------------------------

def test_export_shipped_lesson(cli, tmp_path):
    out = tmp_path / "bert.apkg"
    result = export(cli, "-o", str(out))
    assert result.stdout == (
        f"Wrote {out}: 33 notes (1 blank, 1 choice, 12 fact, 4 match, 14 numeric, 1 practice), "
        "one card each, in 1 deck:\n  bertdrill::What is BERT?\n")
    assert zipfile.ZipFile(out).namelist() == ["collection.anki2", "media"]
    assert [p.name for p in tmp_path.iterdir() if p.name != "home"] == ["bert.apkg"]  # no temporary file left
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def test_directory_as_output_is_refused(cli, tmp_path):
    result = cli("export", "anki", "-o", str(tmp_path))
    assert result.exit_code == 1
    assert result.stderr == (f"Error: cannot write {tmp_path}: it is a folder; "
                             f"give a file name such as {tmp_path / 'lessons.apkg'}\n")


@pytest.mark.parametrize("where, message", [
    ("missing/out.apkg", "the folder {dir}/missing does not exist"),
    ("file.txt/out.apkg", "{dir}/file.txt is not a folder"),
])
def test_unwritable_output_is_refused(cli, tmp_path, where, message):
    (tmp_path / "file.txt").write_text("not a folder")
    result = cli("export", "anki", "-o", str(tmp_path / where))
    assert result.exit_code == 1
    assert result.stderr == f"Error: cannot write {tmp_path / where}: {message.format(dir=tmp_path)}\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home") == ["file.txt"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_read_only_folder_is_refused(cli, tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = cli("export", "anki", "-o", str(folder / "out.apkg"))
    finally:
        folder.chmod(0o755)
    assert result.exit_code == 1
    assert result.stderr == f"Error: cannot write {folder / 'out.apkg'}: permission denied for the folder {folder}\n"
    assert list(folder.iterdir()) == []


def test_output_must_be_an_apkg(cli, tmp_path):
    result = cli("export", "anki", "-o", str(tmp_path / "bert.zip"))
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {tmp_path / 'bert.zip'}: Anki imports packages named *.apkg; "
                             f"try {tmp_path / 'bert.apkg'}\n")


def test_language_the_lesson_lacks(cli, tmp_path):
    lesson = save(tmp_path / "l.toml", _lesson(), time.time())
    result = cli("export", "anki", str(lesson), "-o", str(tmp_path / "l.apkg"), "--lang", "tr")
    assert result.exit_code == 1
    assert cli("export", "anki", str(lesson), "-o", str(tmp_path / "l.apkg"), "--lang", "de").stderr == (
        "Error: lesson 'tiny' has no 'de' texts (its languages: en); try --lang all\n")
    assert result.stderr == "Hata: 'tiny' dersinde 'tr' metinleri yok (dilleri: en); --lang all dene\n"  # in Turkish
    assert not (tmp_path / "l.apkg").exists()


def test_package_has_the_collection_genanki_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where genanki leaves its temporary database
    def schema(package: Path) -> list[tuple[str, str, str | None]]:
        database = tmp_path / f"{package.stem}.anki2"
        database.write_bytes(zipfile.ZipFile(package).read("collection.anki2"))
        with sqlite3.connect(database) as db:
            rows: list[tuple[str, str, str | None]] = db.execute(
                "SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
            return rows

    lesson = parse(_lesson(), "tiny.toml")
    bertdrill_anki.export([lesson], tmp_path / "ours.apkg")
    deck = genanki.Deck(1, "tiny")
    deck.add_note(genanki.Note(model=genanki.BASIC_MODEL, fields=["q", "a"]))
    genanki.Package(deck).write_to_file(str(tmp_path / "theirs.apkg"))
    assert schema(tmp_path / "ours.apkg") == schema(tmp_path / "theirs.apkg")  # every table and index


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "bert.apkg"
    target.write_bytes(b"the previous export")

    def fails_halfway(stream):
        stream.write(b"half a package")
        raise OSError(28, "No space left on device")

    with pytest.raises(BertdrillError, match="cannot write .*bert.apkg: the disk is full"):
        write_atomic(target, fails_halfway, replace=Replace.ANY)
    assert target.read_bytes() == b"the previous export"
    assert [p.name for p in tmp_path.iterdir()] == ["bert.apkg"]


def test_an_export_writes_each_lesson_s_notes_before_reading_the_next(tmp_path):
    """issue 25: no command above 200 MB on the 1M-answer store. `export anki` of its eight lessons held every note
    until the package was written, and the note rows beside them (212 MB; 117 now, genanki alone 137). Here four
    lessons of 7,000 cards peaked 27 MB above one of them; 4 now: each lesson's notes are written before the next is
    read."""
    if (benchmarks := str(Path(__file__).resolve().parent.parent / "benchmarks")) not in sys.path:
        sys.path.insert(0, benchmarks)
    from lessons import generated_lesson

    lessons = [generated_lesson(5_000, f"big-{at}") for at in range(4)]  # 7,000 cards each
    one, four = tmp_path / "one", tmp_path / "four"
    one.mkdir()
    four.mkdir()
    (one / "big-0.toml").write_text(lessons[0], encoding="utf-8")
    for at, text in enumerate(lessons):
        (four / f"big-{at}.toml").write_text(text, encoding="utf-8")
    env = {**os.environ, "BERTDRILL_HOME": str(tmp_path / "home"), "BERTDRILL_CACHE": str(tmp_path / "cache"),
           "NO_COLOR": "1"}

    def peak(lessons: Path, notes: str) -> int:
        # the peak from here on: a child's counts from its fork, so it would start at pytest's own (clear_refs: 5)
        script = ("import pathlib, sys; pathlib.Path('/proc/self/clear_refs').write_text('5')\n"
                  "from bertdrill.cli import run; sys.argv = ['bertdrill', 'export', 'anki', *sys.argv[1:]]\ntry:\n"
                  "    run()\nfinally:\n    print(next(line for line in pathlib.Path('/proc/self/status')"
                  ".read_text().splitlines() if line.startswith('VmHWM')), file=sys.stderr)")
        ended = subprocess.run([sys.executable, "-c", script, str(lessons), "-o", str(tmp_path / "out.apkg"),
                                "--force"], env=env, capture_output=True, text=True, timeout=300)
        assert f"Wrote {tmp_path / 'out.apkg'}: {notes} notes" in ended.stdout, ended.stderr
        return int(ended.stderr.split()[-2]) * 1024

    peak(four, "28,000")  # the lessons verified into the cache: that peak is not the export's
    alone, together = peak(one, "7,000"), peak(four, "28,000")
    assert together - alone < 12_000_000, (together, alone)


def test_help_does_not_import_genanki():
    code = "import sys; from bertdrill.cli import app; print('genanki' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


# --- the real Anki client --------------------------------------------------------------------

def test_default_import_options_update_notes_if_newer(collection):
    # What File > Import starts with in a fresh profile: the defaults this suite imports with.
    presets = collection._backend.get_import_anki_package_presets()
    assert presets == ImportAnkiPackageOptions()
    newer = ImportAnkiPackageUpdateCondition.IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_IF_NEWER
    assert presets.update_notes == presets.update_notetypes == newer
    assert not presets.merge_notetypes


def test_anki_imports_the_shipped_lesson(cli, tmp_path, collection):
    export(cli, "-o", str(tmp_path / "bert.apkg"))
    log = import_package(collection, tmp_path / "bert.apkg")
    assert counts(log) == clean(new=33)

    names = sorted(d.name for d in collection.decks.all_names_and_ids())
    assert names == ["Default", "bertdrill", "bertdrill::What is BERT?"]
    for kind, number in SHIPPED_KINDS.items():
        assert len(collection.find_notes(f'"note:bertdrill {kind}"')) == number, kind
        assert len(collection.find_cards(f'"note:bertdrill {kind}" "deck:bertdrill::What is BERT?"')) == number, kind

    notes = notes_by_guid(collection)
    fact = notes[guid("bidirectional")]
    assert dict(fact.items()) == {
        "Question": 'What does "bidirectional" mean in BERT?',
        "Answer": "Each word sees the context both to its left and to its right.",
        "Explanation": "There is no causal mask: every position attends to the whole input, on both sides.",
        "Source": "Machine Learning course, expert section, lesson 17/44: What is BERT?",
    }
    assert sorted(fact.tags) == ["bert", "bert-basics", "definition", "kind::fact", "lang::en", "nlp", "transformers"]
    assert sorted(notes[guid("bert-base-match#vocabulary")].tags) == [
        "bert", "bert-basics", "kind::match", "lang::en", "lesson-question", "nlp", "table::bert-base-match",
        "transformers"]

    # The cloze hides the answer on the front and shows it on the back, in monospace code.
    blank = card_of(collection, guid("attention-projections"))
    assert "attention = [...] * (d * d + d)" in visible(blank.question())  # English code in the English deck
    assert "attention = 4 * (d * d + d)" not in visible(blank.question())
    assert "attention = 4 * (d * d + d)" in visible(blank.answer())
    assert '<pre class="code">' in without_style(blank.question())
    assert "font-family: ui-monospace" in blank.question()

    # The numeric card asks to type the verified number, and Anki accepts it typed plainly.
    numeric = card_of(collection, guid("embedding-params@bert-base"))
    assert numeric.note()["Answer"] == "23837184"
    assert "[[type:Answer]]" in numeric.question()
    assert "typeBad" not in collection.compare_answer("23837184", "23837184")
    assert "typeBad" in collection.compare_answer("23837184", "23837185")

    choice = card_of(collection, guid("bert-vs-gpt"))
    assert "A bidirectional encoder; no causal mask" in visible(choice.question())
    assert "D. A bidirectional encoder; no causal mask" in visible(choice.answer())
    assert "<script" not in choice.answer()  # no JavaScript needed

    match = card_of(collection, guid("bert-base-match#ffn-size"))
    assert visible(match.question()) == "Match the BERT-base settings. FFN size → ?"  # a question, not a fragment
    assert visible(match.answer()).endswith(  # the answer, then the table's explanation
        "→ ? 3,072 BERT-base: n = 12 layers, d_model = 768, FFN size f = 3,072, vocabulary V = 30,522. "
        "Machine Learning course, expert section, lesson 17/44: What is BERT?")

    practice = card_of(collection, guid("count-bert-base"))
    assert "# write here" in visible(practice.question())
    assert "23837184 7087872 590592 109482240 0.666" in visible(practice.answer())
    assert "23837184" not in visible(practice.question())

    # New cards come in lesson order.
    first = collection.db.list("select n.guid from cards c join notes n on n.id = c.nid order by c.due limit 3")
    assert first == [guid("bert-definition"), guid("bert-acronym"), guid("bidirectional")]


def test_both_languages_in_their_own_subdecks(cli, tmp_path, collection):
    export(cli, "-o", str(tmp_path / "bert.apkg"), "--lang", "all")
    assert counts(import_package(collection, tmp_path / "bert.apkg")) == clean(new=66)

    for deck in ("bertdrill::What is BERT?::English", "bertdrill::What is BERT?::Türkçe"):
        assert len(collection.find_cards(f'"deck:{deck}"')) == 33
    notes = notes_by_guid(collection)
    turkish = notes[guid("bert-definition", "tr")]
    assert turkish["Question"] == "BERT nedir?"
    assert turkish["Explanation"] == "BERT, transformer tabanlı, çift yönlü bir dil anlama modelidir."
    assert "lang::tr" in turkish.tags
    assert notes[guid("bert-base-match#vocabulary", "tr")]["Meaning"] == "30.522"
    assert notes[guid("bert-base-match#vocabulary", "en")]["Meaning"] == "30,522"
    assert notes[guid("embedding-params@bert-large", "tr")]["Question"] == (
        "BERT-large gömme katmanında (kelime + konum + segment + LayerNorm) kaç parametre vardır?")
    card = card_of(collection, guid("bert-definition", "tr"))
    assert collection.decks.name(card.did) == "bertdrill::What is BERT?::Türkçe"
    assert "Yalnızca transformer encoder bloklarından oluşan" in visible(card.answer())


def test_reimporting_an_edited_lesson_updates_notes_in_place(cli, tmp_path, lesson_text, collection):
    lesson = tmp_path / "bert-basics.toml"
    saved = int(time.time()) - 3600
    save(lesson, lesson_text, saved)
    export(cli, str(lesson), "-o", str(tmp_path / "v1.apkg"))
    assert counts(import_package(collection, tmp_path / "v1.apkg")) == clean(new=33)
    before = {g: (note.id, note.card_ids()) for g, note in notes_by_guid(collection).items()}

    reviewed = card_of(collection, guid("bidirectional"))
    reviewed.start_timer()
    collection.sched.answerCard(reviewed, 3)
    reviewed.load()
    assert reviewed.reps == 1

    # The same lesson again: nothing is newer, nothing changes.
    export(cli, str(lesson), "-o", str(tmp_path / "again.apkg"))
    assert counts(import_package(collection, tmp_path / "again.apkg")) == clean(duplicate=33)

    # The author fixes two texts and saves the lesson a minute later.
    edited = (lesson_text
              .replace("Each word sees the context both to its left and to its right.",
                       "Every token sees the whole sentence, left and right.")
              .replace("How many parameters are in {set}'s embeddings", "How many weights are in {set}'s embeddings"))
    assert edited.count("Every token") == 1 and edited.count("How many weights") == 1
    save(lesson, edited, saved + 60)
    export(cli, str(lesson), "-o", str(tmp_path / "v2.apkg"))
    assert counts(import_package(collection, tmp_path / "v2.apkg")) == clean(updated=33)

    after = notes_by_guid(collection)
    assert {g: (note.id, note.card_ids()) for g, note in after.items()} == before  # same notes, same cards
    assert collection.note_count() == 33 and collection.card_count() == 33
    assert after[guid("bidirectional")]["Answer"] == "Every token sees the whole sentence, left and right."
    assert after[guid("embedding-params@bert-large")]["Question"] == (
        "How many weights are in BERT-large's embeddings (word + position + segment + LayerNorm)?")
    assert after[guid("bidirectional")].mod == saved + 60
    reviewed.load()
    assert reviewed.reps == 1  # review history kept


def test_a_note_edited_in_anki_after_the_lesson_was_saved_is_kept(cli, tmp_path, lesson_text, collection):
    lesson = tmp_path / "bert-basics.toml"
    saved = int(time.time()) - 7200
    save(lesson, lesson_text, saved)
    export(cli, str(lesson), "-o", str(tmp_path / "v1.apkg"))
    import_package(collection, tmp_path / "v1.apkg")

    mine = notes_by_guid(collection)[guid("bidirectional")]
    mine["Answer"] = "My own words."
    collection.update_note(mine)

    # The author's fix was saved an hour ago: before the learner's edit, after the first export.
    edited = lesson_text.replace("As a masked language model on unlabelled text.",
                                 "As a masked language model, on unlabelled text.")
    save(lesson, edited.replace("Each word sees", "Every word sees"), saved + 3600)
    export(cli, str(lesson), "-o", str(tmp_path / "v2.apkg"))
    assert counts(import_package(collection, tmp_path / "v2.apkg")) == clean(updated=32, duplicate=1)

    notes = notes_by_guid(collection)
    assert notes[guid("bidirectional")]["Answer"] == "My own words."
    assert notes[guid("pre-training")]["Answer"] == "As a masked language model, on unlabelled text."


def test_hostile_html_shows_as_text(cli, tmp_path, collection):
    lesson = save(tmp_path / "hostile.toml", HOSTILE, time.time())
    export(cli, str(lesson), "-o", str(tmp_path / "hostile.apkg"))
    assert counts(import_package(collection, tmp_path / "hostile.apkg")) == clean(new=3)

    fact = card_of(collection, guid("script", lesson_id="hostile"))
    for side in (fact.question(), fact.answer()):
        assert "<script" not in without_style(side) and "<img" not in without_style(side)
        assert "&lt;script&gt;alert('q')&lt;/script&gt; What now?" in side
    assert "<img src=x onerror=alert(1)> & more" in visible(fact.answer())
    assert "<a href=javascript:alert(0)>source</a>" in visible(fact.answer())

    choice = card_of(collection, guid("choose", lesson_id="hostile"))
    assert "<img" not in without_style(choice.question()) and "<i>" not in without_style(choice.question())
    assert "Pick <i>one</i> <img src=x onerror=alert(2)> plain" == visible(choice.question())

    # Cloze syntax in the code makes no second card and shows as written.
    cloze_note = notes_by_guid(collection)[guid("cloze", lesson_id="hostile")]
    (cloze,) = cloze_note.cards()
    assert "<svg" not in without_style(cloze.question())
    assert visible(cloze.question()) == "<svg onload=alert(3)> {{c2::x}} <b>y</b> = [...] * d"
    assert "{{c2::x}} <b>y</b> = 2 * d" in visible(cloze.answer())

    (deck,) = [d for d in collection.decks.all_names_and_ids() if d.name.startswith("bertdrill::")]
    assert deck.name == "bertdrill::<b>Evil</b> : lesson"  # a deck name is text; '::' cannot add a level
    assert collection.decks.get(deck.id)["desc"] == "&lt;script&gt;alert('summary')&lt;/script&gt;"


# --- lessons made for the tests --------------------------------------------------------------

def _lesson(blank_text: str = "x = ____ * d", blank_answer: str = "2") -> str:
    return f"""
[lesson]
id = "tiny"
languages = ["en"]
title = "Tiny"

[params.p]
d = 2

[formulas]
double = "2 * d"

[[item]]
id = "blank"
kind = "blank"
prompt = "Fill it."
text = "{blank_text}"
answer = "{blank_answer}"
checks = "double"
"""


HOSTILE = """
[lesson]
id = "hostile"
languages = ["en"]
title = "<b>Evil</b> :: lesson"
summary = "<script>alert('summary')</script>"
source = "<a href=javascript:alert(0)>source</a>"

[params.p]
d = 2

[formulas]
double = "2 * d"

[[item]]
id = "script"
kind = "fact"
question = "<script>alert('q')</script> What now?"
answer = "<img src=x onerror=alert(1)> & more"

[[item]]
id = "choose"
kind = "choice"
prompt = "Pick <i>one</i>"
options = ["<img src=x onerror=alert(2)>", "plain"]
answer = 2

[[item]]
id = "cloze"
kind = "blank"
prompt = "<svg onload=alert(3)>"
text = "{{c2::x}} <b>y</b> = ____ * d"
answer = "2"
checks = "double"
"""
