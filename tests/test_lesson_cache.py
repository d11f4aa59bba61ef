"""The cache of verified lessons: an unchanged lesson is read from it; anything else is read from its file."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from bertdrill.adapters import lessons as lesson_files
from bertdrill.adapters.export.files import write_atomic
from bertdrill.adapters.lessons import CACHE_FORMAT, LessonCache, index_of, read_index, read_lesson
from bertdrill.core.cards import compile_lesson
from bertdrill.core.errors import LessonErrors
from bertdrill.core.lesson import parse, stored

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "decks" / "bert-basics.toml"
LESSONS = [SHIPPED, REPO / "tests" / "lessons" / "minimal.toml", REPO / "tests" / "lessons" / "hostile.toml"]


@pytest.fixture
def cache(tmp_path) -> LessonCache:
    return LessonCache(tmp_path / "cache", write_atomic)


def entries(cache: LessonCache) -> list[Path]:
    return sorted(cache.folder.glob("*.json"))


@pytest.mark.parametrize("path", LESSONS, ids=lambda path: path.name)
def test_a_stored_lesson_is_the_lesson_and_gives_the_same_cards(path):
    lesson = parse(path.read_text(encoding="utf-8"), str(path))
    again = stored.decode(stored.encode(lesson), str(path))
    assert again == lesson
    assert again.verified == lesson.verified and again.formula_lines == lesson.formula_lines
    assert compile_lesson(again) == compile_lesson(lesson)
    assert [card.fingerprint for card in compile_lesson(again)] == [card.fingerprint for card in compile_lesson(lesson)]


def test_an_unchanged_lesson_is_not_parsed_again(cache, tmp_path, monkeypatch):
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    first = read_lesson(lesson_path, cache)
    assert len(entries(cache)) == 1
    assert not [path for path in tmp_path.iterdir() if path.name not in ("lesson.toml", "cache")]  # not beside it
    monkeypatch.setattr(lesson_files, "parse", lambda text, path: pytest.fail("parsed again"))
    moved = tmp_path / "elsewhere.toml"
    lesson_path.rename(moved)  # the key is the content, not the name or the file's time
    second = read_lesson(moved, cache)
    assert second == replace(first, path=str(moved))


def test_a_changed_lesson_is_verified_again(cache, tmp_path):
    lesson_path = tmp_path / "lesson.toml"
    text = SHIPPED.read_text(encoding="utf-8")
    lesson_path.write_text(text, encoding="utf-8")
    read_lesson(lesson_path, cache)
    stat = lesson_path.stat()
    wrong = text.replace("stated = { bert-base = 23837184", "stated = { bert-base = 23837185", 1)
    assert wrong != text
    lesson_path.write_text(wrong, encoding="utf-8")
    os.utime(lesson_path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same time: only the bytes differ
    with pytest.raises(LessonErrors, match="23837185"):
        read_lesson(lesson_path, cache)
    assert len(entries(cache)) == 1  # a lesson with errors is never kept


def damage(entry: Path) -> list[bytes]:
    content = entry.read_bytes()
    head, checks, index, payload = content.split(b"\n", 3)
    index_check, lesson_check = checks.split(b" ")

    def sealed(new_index: bytes, new_payload: bytes) -> bytes:  # checksums that fit: only a forger writes these
        return (head + b"\n" + LessonCache._check(entry, b"index", new_index) + b" "
                + LessonCache._check(entry, b"lesson", new_payload) + b"\n" + new_index + b"\n" + new_payload)

    flipped = payload.replace(b"23837184", b"23837185", 1)
    assert flipped != payload
    forged = json.loads(payload)
    forged[9][0][1][1] = True  # an item's line number as a boolean
    forged_rows = json.loads(index)
    forged_rows[2][0][3] = 7  # a card's kind that is not a text
    deep = b"[" * 100_000
    return [
        content[: len(content) // 2],  # cut short by a crash or a full disk
        head + b"\n" + checks + b"\n" + index + b"\n" + flipped,  # one number changed: the checksum no longer fits
        b"garbage",
        b"",
        head.replace(b"3", b"0") + b"\n" + checks + b"\n" + index + b"\n" + payload,  # another format
        sealed(index, json.dumps(forged).encode()),
        sealed(json.dumps(forged_rows).encode(), payload),
        sealed(b"[1, 2]", b"[1, 2]"),
        sealed(deep, deep),
        head + b"\n" + lesson_check + b" " + index_check + b"\n" + payload + b"\n" + index,  # sections swapped
    ]


@pytest.mark.parametrize("case", range(10))
def test_a_damaged_entry_is_ignored_and_rebuilt(cache, tmp_path, case):
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    good = read_lesson(lesson_path, cache)
    (entry,) = entries(cache)
    intact = entry.read_bytes()
    entry.write_bytes(damage(entry)[case])
    data = lesson_path.read_bytes()
    lesson_damaged, index_damaged = case != 6, case not in (0, 1, 5)  # each section has its own checksum
    assert (cache.get(data, str(lesson_path)) is None) == lesson_damaged
    assert (cache.index(data, str(lesson_path)) is None) == index_damaged
    assert read_lesson(lesson_path, cache) == good  # parsed and verified from the file
    if lesson_damaged:
        assert entry.read_bytes() == intact  # and kept again, whole
    entry.write_bytes(damage(entry)[case])
    assert read_index(lesson_path, cache) == index_of(good)


def test_an_entry_under_another_lessons_name_is_refused(cache, tmp_path):
    one, other = tmp_path / "one.toml", tmp_path / "other.toml"
    one.write_bytes(SHIPPED.read_bytes())
    other.write_bytes((REPO / "tests" / "lessons" / "minimal.toml").read_bytes())
    read_lesson(one, cache)
    cache.entry(other.read_bytes()).write_bytes(cache.entry(one.read_bytes()).read_bytes())
    assert read_lesson(other, cache).id == parse(other.read_text(encoding="utf-8"), str(other)).id != "bert-basics"


def test_a_folder_others_can_write_to_is_not_used(cache, tmp_path):
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    read_lesson(lesson_path, cache)
    cache.folder.chmod(0o777)
    assert cache.get(lesson_path.read_bytes(), str(lesson_path)) is None
    (entry,) = entries(cache)
    entry.unlink()
    read_lesson(lesson_path, cache)
    assert entries(cache) == []  # nothing written there either


def test_a_cache_that_cannot_be_written_never_fails_a_read(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    assert read_lesson(lesson_path, LessonCache(blocked / "cache", write_atomic)).id == "bert-basics"


def test_writers_at_once_leave_one_whole_entry(cache, tmp_path):
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    data = lesson_path.read_bytes()
    lesson = parse(data.decode(), str(lesson_path))
    threads = [threading.Thread(target=cache.put, args=(data, lesson)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [path.name for path in cache.folder.iterdir()] == [cache.entry(data).name]  # no temporary left
    assert cache.get(data, str(lesson_path)) == lesson


def test_old_entries_are_pruned(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(lesson_files, "CACHE_ENTRIES", 3)
    text = (REPO / "tests" / "lessons" / "minimal.toml").read_text(encoding="utf-8")
    for number in range(5):
        path = tmp_path / f"lesson-{number}.toml"
        path.write_text(text + f"\n# edit {number}\n", encoding="utf-8")
        read_lesson(path, cache)
        os.utime(cache.entry(path.read_bytes()), (number, number))
    assert len(entries(cache)) == 3
    assert cache.entry((tmp_path / "lesson-4.toml").read_bytes()).exists()


def test_the_cli_keeps_lessons_in_the_cache_folder_and_finds_them(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("BERTDRILL_CACHE", str(tmp_path / "mine"))
    lesson_path = tmp_path / "lessons" / "bert.toml"
    lesson_path.parent.mkdir()
    lesson_path.write_bytes(SHIPPED.read_bytes())
    first = cli("check", str(lesson_path))
    assert first.exit_code == 0, first.output
    assert len(list((tmp_path / "mine").glob("*.json"))) == 1
    assert [path.name for path in lesson_path.parent.iterdir()] == ["bert.toml"]
    monkeypatch.setattr(lesson_files, "parse", lambda text, path: pytest.fail("parsed again"))
    again = cli("check", str(lesson_path))
    assert again.exit_code == 0 and again.output == first.output
    monkeypatch.setattr(stored, "decode", lambda data, path: pytest.fail("status needs no lesson, only its cards"))
    status = cli("status", "--file", str(lesson_path))
    assert status.exit_code == 0 and "0 of 32 cards" in status.output  # the practice card is not reviewed


def test_the_entry_format_is_named_in_its_first_line(cache, tmp_path):
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    read_lesson(lesson_path, cache)
    (entry,) = entries(cache)
    assert entry.read_bytes().startswith(CACHE_FORMAT)
    assert cache.folder.stat().st_mode & 0o777 == 0o700  # private: the entries say what the user studies


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("BERTDRILL_CACHE", str(tmp_path / "chosen"))
    assert lesson_files.cache_folder() == tmp_path / "chosen"
    monkeypatch.delenv("BERTDRILL_CACHE")
    assert lesson_files.cache_folder() == tmp_path / "home" / "cache"
    monkeypatch.delenv("BERTDRILL_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    assert lesson_files.cache_folder() == tmp_path / "xdg-cache" / "bertdrill" / "lessons"


@pytest.mark.parametrize("path", LESSONS, ids=lambda path: path.name)
def test_an_index_holds_the_cards_a_store_syncs(cache, path, tmp_path):
    lesson = parse(path.read_text(encoding="utf-8"), str(path))
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    read_lesson(copy, cache)
    index = cache.index(copy.read_bytes(), str(copy))
    assert index is not None and index == index_of(replace(lesson, path=str(copy)))
    assert (index.id, index.languages) == (lesson.id, lesson.languages)
    assert [tuple(row) for row in index.cards] == [
        (card.id, card.lesson_id, card.item_id, card.kind, card.fingerprint) for card in compile_lesson(lesson)]
