"""The cache of verified lessons: an unchanged lesson is read from it; anything else is read from its file."""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bertdrill.adapters import lessons as lesson_files
from bertdrill.adapters.export.files import Replace, write_atomic
from bertdrill.adapters.lessons import CACHE_FORMAT, LessonCache, index_of, read_index, read_lesson
from bertdrill.core import lesson as lesson_package
from bertdrill.core.cards import compile_lesson
from bertdrill.core.errors import LessonErrors
from bertdrill.core.kinds import interleave_by_kind
from bertdrill.core.lesson import parse, stored

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "decks" / "bert-basics.toml"
LESSONS = [SHIPPED, REPO / "tests" / "lessons" / "minimal.toml", REPO / "tests" / "lessons" / "hostile.toml"]


@pytest.fixture
def cache(tmp_path) -> LessonCache:
    return LessonCache(tmp_path / "cache", functools.partial(write_atomic, replace=Replace.ANY))


def entries(cache: LessonCache) -> list[Path]:
    return sorted(path for path in cache.folder.glob("*.json") if path.name != lesson_files.DIGESTS)


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
    monkeypatch.setattr(lesson_package, "parse", lambda text, path: pytest.fail("parsed again"))
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


def later(cache: LessonCache) -> LessonCache:
    """The cache as a command reading its lessons ten seconds after they were written sees them (the digest memo
    notes only a file last changed well before it was read)."""
    cache.clock = lambda: time.time_ns() + 10_000_000_000
    return cache


def wrong_bytes() -> bytes:
    """The shipped lesson with one stated figure changed: the same size, a lesson that fails its check."""
    text = SHIPPED.read_bytes()
    wrong = text.replace(b"stated = { bert-base = 23837184", b"stated = { bert-base = 23837185", 1)
    assert wrong != text and len(wrong) == len(text)
    return wrong


def rewrite_in_place(path: Path, data: bytes) -> None:
    """New bytes of the same size into the same file (same inode), its mtime set back to the old one."""
    before = path.stat()
    with path.open("r+b") as file:
        file.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


def test_an_unchanged_lesson_is_not_read_again(cache, tmp_path, monkeypatch):
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    first = read_index(lesson_path, later(cache))
    assert cache.known(lesson_path) == hashlib.sha256(SHIPPED.read_bytes()).digest()
    monkeypatch.setattr(lesson_files, "_read", lambda path: pytest.fail("read again"))
    fresh = later(LessonCache(cache.folder, cache.write))  # the next command: the memo read from its file
    assert read_index(lesson_path, fresh) == first
    assert read_lesson(lesson_path, fresh) == first.lesson()


def test_a_file_rewritten_in_the_same_tick_is_read_again(cache, tmp_path):
    """Read and rewritten at once (same size, same mtime; a coarse clock gives the same ctime too): the file was
    too new to be noted, so the new bytes are read and refused."""
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    read_index(lesson_path, cache)
    assert cache.known(lesson_path) is None and not (cache.folder / lesson_files.DIGESTS).exists()
    rewrite_in_place(lesson_path, wrong_bytes())
    with pytest.raises(LessonErrors, match="23837185"):
        read_index(lesson_path, LessonCache(cache.folder, cache.write))


def test_a_noted_file_rewritten_with_its_size_and_mtime_is_read_again(cache, tmp_path):
    """The change moves the file's ctime, which no program sets back: the noted digest is not trusted."""
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    read_index(lesson_path, later(cache))
    assert cache.known(lesson_path) is not None
    time.sleep(0.02)  # past the filesystem's timestamp tick, as any later edit is
    rewrite_in_place(lesson_path, wrong_bytes())
    fresh = later(LessonCache(cache.folder, cache.write))
    assert fresh.known(lesson_path) is None
    with pytest.raises(LessonErrors, match="23837185"):
        read_index(lesson_path, fresh)


@pytest.mark.parametrize("memo", [b"not json", b"[]", b'{"x": [1, 2]}', b'{"x": [1, 2, 3, 4, 5, "zz"]}'])
def test_a_damaged_digest_memo_is_ignored(cache, tmp_path, memo):
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    cache.folder.mkdir(mode=0o700)
    (cache.folder / lesson_files.DIGESTS).write_bytes(memo)
    assert cache.known(lesson_path) is None
    assert read_index(lesson_path, later(cache)).id == "bert-basics"
    assert later(LessonCache(cache.folder, cache.write)).known(lesson_path) is not None  # noted again, whole


def split(entry: Path) -> tuple[bytes, list[list[object]], dict[str, bytes]]:
    """An entry's format line, its table of sections and each section's bytes."""
    content = entry.read_bytes()
    head, table, rest = content.split(b"\n", 2)
    rows = json.loads(table)
    sections, offset = {}, 0
    for name, length, _check in rows:
        sections[name] = rest[offset:offset + length]
        offset += length
    return head, rows, sections


def sealed(entry: Path, head: bytes, sections: dict[str, bytes]) -> bytes:
    """An entry of these sections with checksums that fit: only a forger writes these."""
    table = json.dumps([[name, len(content), LessonCache._check(entry, name.encode(), content).decode()]
                        for name, content in sections.items()]).encode()
    return head + b"\n" + table + b"\n" + b"".join(sections.values())


def damage(entry: Path) -> list[bytes]:
    content = entry.read_bytes()
    head, rows, sections = split(entry)
    table = content.split(b"\n", 2)[1]
    flipped = sections["items"].replace(b"23837184", b"23837185", 1)
    assert flipped != sections["items"]
    forged_head = json.loads(sections["head"])
    forged_head[0][0] = 7  # the lesson's id as a number
    forged_rows = json.loads(sections["index"])
    forged_rows[0][3] = 7  # a card's kind that is not a text
    deep = b"[" * 100_000
    swapped = dict(sections, head=sections["toc"], toc=sections["head"])
    return [
        content[: len(content) // 2],  # cut short by a crash or a full disk
        content.replace(sections["items"], flipped),  # one number changed: the checksum no longer fits
        b"garbage",
        b"",
        head[:-1] + b"0" + content[len(head):],  # another format (its number changed)
        sealed(entry, head, dict(sections, head=json.dumps(forged_head).encode())),
        sealed(entry, head, dict(sections, index=json.dumps(forged_rows).encode())),
        sealed(entry, head, dict.fromkeys(sections, b"[1, 2]")),
        sealed(entry, head, dict.fromkeys(sections, deep)),
        head + b"\n" + table + b"\n" + b"".join(swapped.values()),  # two sections swapped, checksums kept
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
    lesson_damaged, summary_damaged = case != 6, case not in (1, 5, 6, 9)  # each section has its own checksum
    assert (cache.get(data, str(lesson_path)) is None) == lesson_damaged
    assert (cache.index(data, str(lesson_path)) is None) == summary_damaged
    assert read_lesson(lesson_path, cache) == good  # parsed and verified from the file
    if lesson_damaged:
        assert entry.read_bytes() == intact  # and kept again, whole
    entry.write_bytes(damage(entry)[case])
    index = read_index(lesson_path, cache)  # a section found damaged after the summary was read: the file is read
    assert index == index_of(good)
    assert index.new_order() == index_of(good).new_order()
    assert index.cards_of([card.id for card in compile_lesson(good)]) == {card.id: card for card in compile_lesson(good)}
    assert index.lesson() == good


def test_the_order_of_new_cards_is_kept_and_a_forged_one_refused(cache, tmp_path):
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    good = read_lesson(lesson_path, cache)
    interleaved = tuple(card.id for card in interleave_by_kind(card for card in compile_lesson(good) if card.kind.reviewed))
    assert interleaved != tuple(card.id for card in compile_lesson(good) if card.kind.reviewed)  # the order is its own
    assert read_index(lesson_path, cache).new_order() == interleaved
    (entry,) = entries(cache)
    head, _rows, sections = split(entry)
    for forged in ([*interleaved[1:], interleaved[1]],  # one card twice, one left out
                   [*interleaved[:-1], "other-lesson/card"],  # another lesson's card
                   list(interleaved[:-1]),  # one short
                   [*interleaved[:-1], 7]):  # not an id
        entry.write_bytes(sealed(entry, head, dict(sections, order=json.dumps(forged).encode())))
        index = read_index(lesson_path, cache)  # the summary is intact: the order is found wrong when read
        assert index.new_order() == interleaved  # read from the file instead


def test_a_lesson_that_changes_while_it_is_read_is_refused(cache, tmp_path):
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    read_lesson(lesson_path, cache)
    index = read_index(lesson_path, cache)
    (entry,) = entries(cache)
    entry.write_bytes(damage(entry)[1])  # one item (embedding-params) no longer reads back
    lesson_path.write_bytes(SHIPPED.read_bytes() + b"\n# edited\n")
    assert index.cards_of(["bert-basics/bert-definition"])  # an intact item is read alone, checked by its own digest
    with pytest.raises(LessonErrors, match="changed while bertdrill was reading it"):
        index.cards_of(["bert-basics/embedding-params@bert-base"])


def test_a_few_items_are_read_alone(cache, tmp_path, monkeypatch):
    """A review's few cards read their items by the table of items (each checked by its own digest): neither the
    whole items section nor the cards' rows."""
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    good = read_lesson(lesson_path, cache)
    whole = {card.id: card for card in compile_lesson(good)}
    read = LessonCache.read_section

    def sections_but_items(self, entry, name, sections):
        assert name not in (b"items", b"index"), f"the whole {name.decode()} section read"
        return read(self, entry, name, sections)

    monkeypatch.setattr(LessonCache, "read_section", sections_but_items)
    chosen = ["bert-basics/embedding-params@bert-large", "bert-basics/bert-definition", "bert-basics/no-such-item"]
    index = read_index(lesson_path, cache)
    assert index.cards_of(chosen) == {card_id: whole[card_id] for card_id in chosen[:2]}
    assert [item.id for item in index.built().items] == [item.id for item in good.items
                                                         if item.id in ("bert-definition", "embedding-params")]


def records(table: bytes) -> list[tuple[bytes, int, int, bytes]]:
    return list(lesson_files.TOC_RECORD.iter_unpack(table))


def table_of(found: list[tuple[bytes, int, int, bytes]]) -> bytes:
    return b"".join(lesson_files.TOC_RECORD.pack(*record) for record in found)


def forged_tables(table: bytes) -> list[bytes]:
    """Tables of items a forger sealed (checksums that fit): each points some item's id at the wrong bytes."""
    found = records(table)
    first, second = found[0], found[1]
    wrong_digest = [(first[0], first[1], first[2], bytes(16)), *found[1:]]
    other_item = [(first[0], second[1], second[2], second[3]), *found[1:]]  # another item's bytes, their own digest
    outside = [(first[0], first[1], 1 << 31, first[3]), *found[1:]]  # beyond the items section
    return [table_of(wrong_digest), table_of(other_item), table_of(outside), table[:-1], table_of(found[1:])]


@pytest.mark.parametrize("case", range(5))
def test_a_forged_table_of_items_is_refused(cache, tmp_path, monkeypatch, case):
    """An item read alone is the one its id names, with the bytes that were written, or the lesson file is read;
    the whole lesson's items must fill the items section (the last case drops an item's record: a few items read
    alone cannot tell, as an id of no item is left out, so only the whole lesson finds it)."""
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    good = read_lesson(lesson_path, cache)
    whole = {card.id: card for card in compile_lesson(good)}
    (entry,) = entries(cache)
    head, _rows, sections = split(entry)
    entry.write_bytes(sealed(entry, head, dict(sections, toc=forged_tables(sections["toc"])[case])))
    parsed: list[str] = []

    def counted(text, path):
        parsed.append(path)
        return parse(text, path)

    monkeypatch.setattr(lesson_package, "parse", counted)
    if case < 4:
        assert read_index(lesson_path, cache).cards_of(whole) == whole
        assert parsed  # the forgery was found, and the lesson read from its file
        entry.write_bytes(sealed(entry, head, dict(sections, toc=forged_tables(sections["toc"])[case])))
        parsed.clear()
    assert read_lesson(lesson_path, cache) == good  # the whole items section is intact in the first case: kept
    assert bool(parsed) == (case > 0)


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


def test_a_lesson_read_whole_from_its_index_is_freed_when_the_command_is_done_with_it(cache, tmp_path):
    """`check` reads one lesson whole at a time from its index: the whole lesson shared its head's memo, which the
    index keeps, so every item by id, every parameter set's values and every variant's lesson stayed alive after
    the lesson was dropped (the 1M store's eight lessons: 239 MB, 130 once each is freed)."""
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    read_index(lesson_path, later(cache))
    index = read_index(lesson_path, later(LessonCache(cache.folder, cache.write)))
    whole = index.lesson()
    first = whole.items[0]
    first_id = first.id
    assert whole.item(first_id) is first  # the memo of items by id, built
    assert whole.allowed_variants() and whole.with_variant(whole.allowed_variants()[0])  # and of variants
    held = weakref.ref(first)
    del whole, first
    gc.collect()
    assert held() is None
    assert index.lesson().item(first_id).id == first_id  # read whole again, from the cache


def test_a_cache_that_cannot_be_written_never_fails_a_read(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    assert read_lesson(lesson_path, LessonCache(blocked / "cache", functools.partial(write_atomic, replace=Replace.ANY))).id == "bert-basics"


def test_a_lesson_the_cache_folder_cannot_take_is_kept_in_a_spare_folder_not_held_by_its_index(tmp_path, monkeypatch):
    """A cache folder that cannot be made (here: under a file) left each index holding its lesson whole: ten
    lessons of 10,000 items in one `check` peaked at 350 MB, 170 MB when each is read back from an entry."""
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    spare_parent = tmp_path / "tmp"
    spare_parent.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spare_parent))
    parsed: list[weakref.ref[Any]] = []
    real_parse = lesson_package.parse

    def watched(text: str, name: str) -> Any:
        lesson = real_parse(text, name)
        parsed.append(weakref.ref(lesson))
        return lesson

    monkeypatch.setattr(lesson_package, "parse", watched)
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    cache = LessonCache(blocked / "cache", functools.partial(write_atomic, replace=Replace.ANY))
    index = read_index(lesson_path, cache)
    gc.collect()
    assert len(parsed) == 1 and parsed[0]() is None  # the index does not hold the lesson it was made from
    (spare,) = spare_parent.iterdir()
    assert spare.name.startswith("bertdrill-lessons-") and len(list(spare.glob("*.json"))) == 1
    assert index.lesson() == real_parse(SHIPPED.read_text(encoding="utf-8"), str(lesson_path))  # read from there
    assert read_lesson(lesson_path, cache) == index.lesson() and len(parsed) == 1  # the same process: not parsed again


def test_the_spare_folder_is_removed_when_the_command_ends(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    spare_parent = tmp_path / "tmp"
    spare_parent.mkdir()
    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    done = subprocess.run([sys.executable, "-m", "bertdrill", "check", str(lesson_path)], capture_output=True,
                          text=True, env={**os.environ, "TMPDIR": str(spare_parent), "NO_COLOR": "1",
                                          "BERTDRILL_CACHE": str(blocked / "cache"), "BERTDRILL_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "bert-basics" in done.stdout
    assert list(spare_parent.iterdir()) == []


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
    monkeypatch.setattr(lesson_package, "parse", lambda text, path: pytest.fail("parsed again"))
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


@pytest.mark.parametrize("path", LESSONS, ids=lambda path: path.name)
def test_the_cards_of_a_few_items_are_the_whole_lessons(cache, path, tmp_path):
    """A command showing few cards reads only their items (review, stats): each card is the one the whole
    lesson compiles, and the lesson they are read in allows the whole lesson's variants."""
    lesson = parse(path.read_text(encoding="utf-8"), str(path))
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    read_lesson(copy, cache)
    whole = {card.id: card for card in compile_lesson(replace(lesson, path=str(copy)))}
    chosen = list(whole)[::3] + ["nothing/such", f"{lesson.id}/no-such-item"]
    index = cache.index(copy.read_bytes(), str(copy))
    assert index is not None
    found = index.cards_of(chosen)
    assert found == {card_id: whole[card_id] for card_id in chosen if card_id in whole}
    part = index.built()
    assert {item.id for item in part.items} == {card.item_id for card in found.values()}
    assert part.asked_expressions() == lesson.asked_expressions()
    assert part.allowed_variants() == lesson.allowed_variants()
    assert index.lesson() == replace(lesson, path=str(copy))


def test_status_reads_no_card_of_an_unchanged_lesson(cli, tmp_path, monkeypatch):
    """The store syncs by the lessons' digests: status reads each entry's summary, no card row."""
    lesson_path = tmp_path / "bert.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    db = str(tmp_path / "review.db")
    assert cli("review", "--file", str(lesson_path), "--db", db, input=":quit\n").exit_code == 0  # synced
    monkeypatch.setattr(lesson_files, "_rows_from_json", lambda data, lesson_id: pytest.fail("rows read"))
    monkeypatch.setattr(stored, "decode_item", lambda data: pytest.fail("an item read"))
    status = cli("status", "--file", str(lesson_path), "--db", db)
    assert status.exit_code == 0 and "0 of 32 cards" in status.output


def test_a_lesson_just_verified_is_not_held_by_its_index(cache, tmp_path, monkeypatch):
    """A first status over a folder of lessons kept each whole parsed lesson alive in its index (578 MB for
    eight of 14,000 cards): once in the cache, the index reads its entry back, and the lesson is freed."""
    import gc
    import weakref

    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    parsed: list[weakref.ref[Any]] = []

    def watched(text: str, path: str):
        lesson = parse(text, path)
        parsed.append(weakref.ref(lesson))
        return lesson

    monkeypatch.setattr(lesson_package, "parse", watched)
    index = read_index(lesson_path, cache)
    gc.collect()
    assert len(parsed) == 1 and parsed[0]() is None
    assert index.cards == index_of(parse(SHIPPED.read_text(encoding="utf-8"), str(lesson_path))).cards
    first = compile_lesson(read_lesson(lesson_path, cache))[0]
    assert index.cards_of([first.id]) == {first.id: first}  # and it builds cards from the entry


def test_a_lesson_from_the_cache_loads_neither_the_parser_nor_the_verifier(cache, tmp_path):
    """`status` and `stats` read every lesson from the cache: the parser's and the verifier's modules (3 ms of their
    start) load only when a lesson is read from its file, and then the package's `parse` is the parser, not the
    module of that name its import binds there."""
    import subprocess
    import sys

    lesson_path = tmp_path / "lesson.toml"
    lesson_path.write_bytes(SHIPPED.read_bytes())
    read_index(lesson_path, cache)  # kept in the cache
    code = ("import sys\n"
            "from bertdrill.adapters.export.files import Replace, write_atomic\n"
            "from pathlib import Path\n"
            "from bertdrill.adapters.lessons import LessonCache, read_index\n"
            "cache = LessonCache(Path(sys.argv[2]), lambda path, data: write_atomic(path, data, replace=Replace.ANY))\n"
            "parser = ('bertdrill.core.lesson.parse', 'bertdrill.core.lesson.verify', 'bertdrill.core.lesson.items')\n"
            "cached = read_index(Path(sys.argv[1]), cache)\n"
            "print(cached.count, *(name in sys.modules for name in parser))\n"
            "open(sys.argv[1], 'a').write('\\n')  # changed: read from the file, parsed and verified\n"
            "from bertdrill.core.lesson import parse\n"
            "print(read_index(Path(sys.argv[1]), cache).count, *(name in sys.modules for name in parser), callable(parse))\n")
    result = subprocess.run([sys.executable, "-c", code, str(lesson_path), str(cache.folder)], capture_output=True,
                            text=True, check=True)
    cached, parsed = (line.split() for line in result.stdout.splitlines())
    assert cached == ["33", "False", "False", "False"], result.stdout  # bert-basics' 33 cards, from the cache
    assert parsed == ["33", "True", "True", "True", "True"], result.stdout


def test_a_check_of_an_edited_lesson_reads_neither_its_entry_back_nor_compiles_it_twice(cache, tmp_path, monkeypatch):
    """`check` of one edited lesson wrote its entry, read it back whole and compiled its cards again (0.28 s of
    3.1 for 10,000 items): the last lesson verified stays at hand, with its cards, for its own index. One lesson
    at most: another parsed, or another index read whole, lets it go, so a folder of edited lessons is never held
    at once."""
    first_path, second_path = tmp_path / "a.toml", tmp_path / "b.toml"
    text = SHIPPED.read_text(encoding="utf-8")
    first_path.write_text(text, encoding="utf-8")
    second_path.write_text(text.replace('id = "bert-basics"', 'id = "bert-again"', 1), encoding="utf-8")
    parsed: list[weakref.ref[Any]] = []
    compiled: list[str] = []
    real_parse = lesson_package.parse

    def watched(text: str, name: str) -> Any:
        lesson = real_parse(text, name)
        parsed.append(weakref.ref(lesson))
        return lesson

    from bertdrill.core import cards as cards_module

    def counted(lesson: Any) -> Any:
        compiled.append(lesson.id)
        return compile_lesson(lesson)

    monkeypatch.setattr(lesson_package, "parse", watched)
    monkeypatch.setattr(cards_module, "compile_lesson", counted)
    monkeypatch.setattr(lesson_files._Kept, "lesson", lambda self: pytest.fail("read back from its entry"))
    first, second = lesson_files.load_indexes([first_path, second_path], cache=cache, handover=True)
    gc.collect()
    assert parsed[0]() is None and parsed[1]() is not None  # the first let go before the second was parsed
    assert compiled == ["bert-basics", "bert-again"]  # once each, for their entries
    lesson, cards = second.whole()
    assert lesson is parsed[1]() and [card.id for card in cards] == [card.id for card in compile_lesson(lesson)]
    assert compiled == ["bert-basics", "bert-again"] and second.lesson() is lesson  # not compiled again
    monkeypatch.undo()
    assert first.lesson().id == "bert-basics"  # another index read whole, from its entry ...
    del lesson, cards
    gc.collect()
    assert parsed[1]() is None  # ... lets the one at hand go
    assert second.whole()[0] == real_parse(second_path.read_text(encoding="utf-8"), str(second_path))  # read back
