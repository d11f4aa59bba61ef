"""Read lesson files: the shipped lessons, or paths a user names.

The only part of the lesson pipeline that touches files. It turns every way a
file can be unreadable into a :class:`LessonError` with the path, so the
parser itself stays a pure function of text.

A :class:`LessonCache` keeps each verified lesson, keyed by a hash of the file's bytes and of the code
that verified it, so a lesson that has not changed is not parsed and verified again.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import sys
import time
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable
from functools import cache
from importlib import resources
from itertools import chain
from operator import itemgetter, le
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple, TypeVar

from bertdrill import __version__
from bertdrill.core import collector
from bertdrill.core.digests import cards_digest
from bertdrill.core.errors import BertdrillError, LessonError, LessonErrors, os_reason
from bertdrill.core.i18n import _
from bertdrill.core.kinds import Kind, interleave_by_kind
from bertdrill.core.lesson import Item, Lesson, stored

if TYPE_CHECKING:
    from bertdrill.core.cards import Card

MAX_FILE_BYTES = 5_000_000


def shipped_paths() -> list[Path]:
    """The lesson files that ship inside the package (``decks/*.toml`` in the repository)."""
    folder = resources.files("bertdrill.decks")
    return sorted(Path(str(entry)) for entry in folder.iterdir() if entry.name.endswith(".toml"))


def expand(paths: list[Path]) -> list[Path]:
    """Lesson files from the given paths; a directory stands for the ``*.toml`` files in it."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(path.glob("*.toml"))
            if not inside:
                raise LessonErrors([LessonError(str(path), None, _("is a directory with no .toml lesson files"))])
            found.extend(inside)
        else:
            found.append(path)
    return found


def read_lesson(path: Path, cache: LessonCache | None = None) -> Lesson:
    """Read, parse and verify one lesson file; with a ``cache``, a file verified before is read from it."""
    if cache is None:
        return _verified(_read(path), str(path), None)
    if (key := cache.known(path)) is not None and (kept := cache.get_named(key, str(path))) is not None:
        return kept
    data, key = cache.read(path)
    if (kept := cache.get_named(key, str(path))) is not None:
        return kept
    return _verified(data, str(path), cache)


def read_index(path: Path, cache: LessonCache | None = None, handover: Handover | None = None) -> LessonIndex:
    """One lesson file's :class:`LessonIndex`: from the cache when the file was verified before, else
    the file is read, parsed and verified (and kept in the cache) as :func:`read_lesson` does. With a
    ``handover``, a lesson just verified stays at hand with its cards until another is read whole."""
    if cache is None:
        return index_of(_verified(_read(path), str(path), None))
    if (key := cache.known(path)) is not None and (kept := cache.index_named(key, str(path))) is not None:
        return kept
    data, key = cache.read(path)
    if (kept := cache.index_named(key, str(path))) is not None:
        return kept
    if handover is not None:
        handover.let_go()  # before the next is parsed: two lessons are never at hand together
    parsed = _Parsed(_verified(data, str(path), None))
    cache.put(data, parsed)
    # Kept now, it is read back from its entry as an unchanged lesson is: a folder of lessons verified at once
    # is not held whole (eight lessons of 14,000 cards: 578 MB for a status after an upgrade); one the cache
    # folder could not take, from a spare folder
    index = cache.index_named(key, str(path)) or cache.spared(data, parsed, str(path))
    if index is None:
        return _index(parsed)
    if handover is not None:
        handover.hold(index, parsed)
    return index


def _read(path: Path) -> bytes:
    """A lesson file's bytes, with every way reading it can fail as a LessonError."""
    name = str(path)
    try:
        if path.is_dir():
            raise LessonErrors([LessonError(name, None, _("is a directory, not a lesson file"))])
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise LessonErrors([LessonError(name, None, _("file too large ({size:,} bytes; at most {most:,})").format(
                size=size, most=MAX_FILE_BYTES))])
        data = path.read_bytes()
    except FileNotFoundError:
        raise LessonErrors([LessonError(name, None, _("no such file"))]) from None
    except PermissionError:
        raise LessonErrors([LessonError(name, None, _("permission denied"))]) from None
    except OSError as exc:
        raise LessonErrors([LessonError(name, None, _("cannot read: {reason}").format(reason=os_reason(exc)))]) from None
    return data


def source_text(path: str) -> str:
    """A lesson file's text, as :func:`read_lesson` parsed it (for ``class init``, which publishes it)."""
    return _read(Path(path)).decode("utf-8").removeprefix("\ufeff")


def _verified(data: bytes, name: str, cache: LessonCache | None) -> Lesson:
    """Parse and verify a lesson file's bytes (the cache knows only bytes that were UTF-8 text)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise LessonErrors([LessonError(name, line, _("not UTF-8 text (byte 0x{byte:02x}); save the file as UTF-8").format(
            byte=data[exc.start]))]) from None
    from bertdrill.core.lesson import parse  # a lesson from the cache is not parsed: the parser loads here

    lesson = parse(text.removeprefix("\ufeff"), name)
    if cache is not None:
        cache.put(data, lesson)
    return lesson


def load_lessons(paths: list[Path] | None = None, *, track: Callable[[list[Path]], Iterable[Path]] = iter,
                 cache: LessonCache | None = None) -> list[Lesson]:
    """The named lessons, or the shipped ones; every problem in every file is reported together.

    ``track`` wraps the list of files as they are read (the CLI passes a progress bar); ``cache``
    keeps verified lessons between runs (:class:`LessonCache`).
    """
    return _load_all(paths, lambda path: read_lesson(path, cache), track)


def load_indexes(paths: list[Path] | None = None, *, track: Callable[[list[Path]], Iterable[Path]] = iter,
                 cache: LessonCache | None = None, handover: bool = False) -> list[LessonIndex]:
    """What :func:`load_lessons` gives, as each lesson's :class:`LessonIndex`: for the commands that count
    and sync cards but show none (``status``), so an unchanged lesson is not even rebuilt from the cache.

    ``handover``: for a command that reads every lesson whole (``check``), the last lesson verified is not read
    back from its entry, nor its cards compiled again, unless another lesson is read whole first
    (:class:`Handover`)."""
    if not handover:
        return _load_all(paths, lambda path: read_index(path, cache), track)
    slot = Handover()

    def read(path: Path) -> LessonIndex:
        index = read_index(path, cache, slot)
        index.handover = slot
        return index
    return _load_all(paths, read, track)


Loaded = TypeVar("Loaded", Lesson, "LessonIndex")


def _load_all(paths: list[Path] | None, read: Callable[[Path], Loaded],
              track: Callable[[list[Path]], Iterable[Path]]) -> list[Loaded]:
    files = expand(paths) if paths else shipped_paths()
    lessons: list[Loaded] = []
    errors: list[LessonError] = []
    for path in track(files):
        try:
            lessons.append(read(path))
        except LessonErrors as exc:
            errors.extend(exc.errors)
    if errors:
        raise LessonErrors(errors)
    seen: dict[str, str] = {}
    for lesson in lessons:
        if lesson.id in seen:
            errors.append(LessonError(lesson.path, 1, _("lesson id {lesson!r} is also used by {other}").format(
                lesson=lesson.id, other=seen[lesson.id])))
        seen[lesson.id] = lesson.path
    if errors:
        raise LessonErrors(errors)
    return lessons


def find_lesson(lessons: list[Loaded], lesson_id: str) -> Loaded:
    """The lesson with this id (or file stem), with the known ids in the message when absent."""
    for lesson in lessons:
        if lesson.id == lesson_id or Path(lesson.path).stem == lesson_id:
            return lesson
    known = ", ".join(lesson.id for lesson in lessons) or "none"
    raise LessonErrors([LessonError(lesson_id, None, _("no lesson with this id (known: {known})").format(known=known))])


def all_cards(lessons: list[Lesson]) -> list[Card]:
    from bertdrill.core.cards import compile_lesson

    return [card for lesson in lessons for card in compile_lesson(lesson)]


class CardRow(NamedTuple):
    """What a store keeps of a card (:class:`bertdrill.ports.SyncCard`): enough to sync and count it."""

    id: str
    lesson_id: str
    item_id: str
    kind: Kind
    fingerprint: str


class LessonIndex:
    """A verified lesson as the commands that show few of its cards need it (``status``, ``stats``, ``review``).

    Its id, file and languages, the digest of its cards (:func:`bertdrill.core.digests.cards_digest`: what a
    store compares to know that nothing needs syncing) and how many cards it has, a review's included. The
    rest is read when first asked for: the cards as rows (:attr:`cards`), the lesson itself
    (:meth:`lesson`), or the lesson holding only the items of some cards (:meth:`cards_of`), each from its
    own section of the cache entry; a lesson just read from its file has them all at hand.
    """

    def __init__(self, id: str, path: str, languages: tuple[str, ...], digest: str, count: int, reviewed: int,
                 source: _Parsed | _Kept):
        self.id, self.path, self.languages, self.digest = id, path, languages, digest
        self.count = count  # cards
        self.reviewed = reviewed  # cards a review shows (practice cards are checked, never reviewed)
        self._source = source
        self.handover: Handover | None = None  # where a lesson just verified may wait for it (:class:`Handover`)

    @property
    def cards(self) -> tuple[CardRow, ...]:
        """Every card as a row, in lesson order."""
        return self._use(lambda source: source.rows())

    def lesson(self) -> Lesson:
        """The whole lesson."""
        at_hand = self._at_hand()
        return at_hand.lesson() if at_hand is not None else self._use(lambda source: source.lesson())

    def whole(self) -> tuple[Lesson, tuple[Card, ...]]:
        """The whole lesson and every card of it, in lesson order: as verifying it made them, when they are
        still at hand, else read and compiled."""
        at_hand = self._at_hand()
        if at_hand is not None:
            return at_hand.lesson(), at_hand.compiled()
        from bertdrill.core.cards import compile_lesson

        lesson = self._use(lambda source: source.lesson())
        return lesson, tuple(compile_lesson(lesson))

    def _at_hand(self) -> _Parsed | None:
        """The lesson verified for this index, still held; asking for any other lesson whole lets it go."""
        return self.handover.taken(self) if self.handover is not None else None

    def new_order(self) -> tuple[str, ...]:
        """The ids of the cards a review shows, in the order new cards come (interleaved by kind: :func:`new_order`),
        from a section of their own in the cache entry: a review's first card reads neither the rows nor their
        digest for it (100 ms for a lesson of 14,000 cards)."""
        return self._use(lambda source: source.new_order())

    def cards_of(self, card_ids: Iterable[str]) -> dict[str, Card]:
        """The cards of this lesson with these ids (unknown ids are left out), each as the whole lesson
        compiles it; only their items are read."""
        from bertdrill.core.cards import compile_lesson, item_id_of  # the cards module loads when a card is built

        wanted = set(card_ids)
        if not wanted:
            return {}
        lesson = self._use(lambda source: source.part({item_id_of(card_id) for card_id in wanted}))
        return {card.id: card for card in compile_lesson(lesson) if card.id in wanted}

    def head(self) -> Lesson:
        """The lesson without its items (a lesson just read from its file: with them), knowing what they ask:
        its parameter sets, formulas, variants and texts (:meth:`bertdrill.core.lesson.Lesson.part`)."""
        return self._use(lambda source: source.head())

    def item(self, item_id: str) -> Item:
        """The lesson's item with this id, read alone (a KeyError if it has none)."""
        return self._use(lambda source: source.part((item_id,))).item(item_id)

    def built(self) -> Lesson:
        """The lesson holding every item read so far (by :meth:`cards_of`): what grading and fresh numbers
        need of the cards shown (:meth:`bertdrill.core.lesson.Lesson.part`)."""
        return self._use(lambda source: source.built())

    def _use(self, read: Callable[[_Parsed | _Kept], T]) -> T:
        try:
            return read(self._source)
        except _Damaged:  # the entry broke after its summary was read: the lesson is read from its file after all
            assert isinstance(self._source, _Kept)
            self._source = self._source.reparsed()
            return read(self._source)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LessonIndex):
            return NotImplemented
        return (self.id, self.path, self.languages, self.digest, self.count, self.reviewed, self.cards) == (
            other.id, other.path, other.languages, other.digest, other.count, other.reviewed, other.cards)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LessonIndex({self.id!r}, {self.path!r}, {self.count} cards)"


T = TypeVar("T")


def index_of(lesson: Lesson) -> LessonIndex:
    """The index of a lesson at hand."""
    return _index(_Parsed(lesson))


def _index(source: _Parsed) -> LessonIndex:
    lesson, rows = source.lesson(), source.rows()
    return LessonIndex(lesson.id, lesson.path, lesson.languages, _digest(rows), len(rows),
                       sum(row.kind.reviewed for row in rows), source)


def new_order(rows: Iterable[CardRow]) -> tuple[str, ...]:
    """The ids of the cards a review shows among ``rows``, in the order new cards come: interleaved by kind."""
    return tuple(row.id for row in interleave_by_kind(row for row in rows if row.kind.reviewed))


def _digest(rows: Iterable[CardRow]) -> str:
    return cards_digest((row.id, row.item_id, row.kind, row.fingerprint) for row in rows)


class _Parsed:
    """A lesson at hand (just parsed and verified, or read whole): everything is there already."""

    def __init__(self, lesson: Lesson):
        self._lesson = lesson
        self._cards: tuple[Card, ...] | None = None
        self._rows: tuple[CardRow, ...] | None = None

    def compiled(self) -> tuple[Card, ...]:
        if self._cards is None:
            from bertdrill.core.cards import compile_lesson

            self._cards = tuple(compile_lesson(self._lesson))
        return self._cards

    def rows(self) -> tuple[CardRow, ...]:
        if self._rows is None:
            self._rows = tuple(CardRow(card.id, card.lesson_id, card.item_id, card.kind, card.fingerprint)
                               for card in self.compiled())
        return self._rows

    def lesson(self) -> Lesson:
        return self._lesson

    def new_order(self) -> tuple[str, ...]:
        return new_order(self.rows())

    def part(self, item_ids: Collection[str]) -> Lesson:
        return self._lesson  # its cards are the same; compiling a few more costs less than picking

    def head(self) -> Lesson:
        return self._lesson

    def built(self) -> Lesson:
        return self._lesson


class Handover:
    """One lesson just verified, with its cards, kept for the index it was verified for (:func:`load_indexes`):
    a ``check`` of one edited lesson neither reads it back from the entry just written nor compiles its cards
    again (0.28 s of 3.1 for 10,000 items). One at most, shared by the indexes of one loading: it is let go when
    another lesson is parsed, or when another of them is asked for its lesson whole, so a folder of edited
    lessons is never held at once (ten of 10,000 items: 350 MB)."""

    def __init__(self) -> None:
        self._index: LessonIndex | None = None
        self._parsed: _Parsed | None = None

    def hold(self, index: LessonIndex, parsed: _Parsed) -> None:
        self._index, self._parsed = index, parsed

    def taken(self, index: LessonIndex) -> _Parsed | None:
        """What is held for ``index``; None (and nothing held any more) when it is another's."""
        if self._index is not index:
            self.let_go()
        return self._parsed

    def let_go(self) -> None:
        self._index = self._parsed = None


class _Damaged(Exception):
    """A section of a cache entry did not read back (cut, changed, swapped): the lesson is read from its file."""


class _Kept:
    """A lesson in the cache, read a section at a time, each checked against its checksum when read."""

    def __init__(self, cache: LessonCache, key: bytes, path: str, sections: dict[bytes, tuple[int, int, bytes]],
                 summary: tuple[str, tuple[str, ...], str, int, int]):
        self.cache, self.path, self.sections, self.summary = cache, path, sections, summary
        self.key = key  # the sha256 of the file's bytes, to be sure a reparse reads the same
        self._rows: tuple[CardRow, ...] | None = None
        self._head: Lesson | None = None
        self._toc: bytes | None = None
        self._items: dict[str, tuple[int, Item]] = {}  # each item read so far, after where it starts (lesson order)
        self._absent: set[str] = set()  # ids asked for that are no item of the lesson
        self._built: Lesson | None = None

    def section(self, name: bytes) -> bytes:
        found = self.cache.read_section(self.cache.entry_named(self.key), name, self.sections)
        if found is None:
            raise _Damaged(name)
        return found

    def rows(self) -> tuple[CardRow, ...]:
        if self._rows is None:
            lesson_id, _languages, digest, count, _reviewed = self.summary
            try:
                rows = _rows_from_json(self.section(b"index"), lesson_id)
            except ValueError:
                raise _Damaged(b"index") from None
            if len(rows) != count or _digest(rows) != digest:
                raise _Damaged(b"index")
            self._rows = rows
        return self._rows

    def new_order(self) -> tuple[str, ...]:
        """The order section: as many ids as the summary counts reviewed cards, each of this lesson, none twice."""
        lesson_id, _languages, _digest, _count, reviewed = self.summary
        try:
            found = json.loads(self.section(b"order"))
            if type(found) is not list or len(found) != reviewed or set(map(type, found)) - {str} \
                    or len(set(found)) != reviewed or {card_id.partition("/")[0] for card_id in found} - {lesson_id}:
                raise ValueError("not a lesson's order of new cards")
        except (ValueError, RecursionError):
            raise _Damaged(b"order") from None
        return tuple(found)

    def head(self) -> Lesson:
        if self._head is None:
            try:
                head = stored.decode_head(self.section(b"head"), self.path)
            except stored.Unreadable:
                raise _Damaged(b"head") from None
            if head.id != self.summary[0] or head.languages != self.summary[1]:
                raise _Damaged(b"head")
            self._head = head
        return self._head

    def toc(self) -> bytes:
        """The table of items (:data:`TOC_RECORD` each, in the order of their keys), checked whole: 32 bytes an item."""
        if self._toc is None:
            found = self.section(b"toc")
            if len(found) % TOC_RECORD.size:
                raise _Damaged(b"toc")
            self._toc = found
        return self._toc

    def part(self, item_ids: Collection[str]) -> Lesson:
        missing = [item_id for item_id in item_ids if item_id not in self._items and item_id not in self._absent]
        if missing:
            self._read_items(missing)
            self._built = None
        return self.head().part(_in_lesson_order(self._items[item_id] for item_id in item_ids if item_id in self._items))

    def _read_items(self, item_ids: list[str]) -> None:
        """Read these items alone, each checked against its digest in the table: not the whole items section."""
        toc = self.toc()
        wanted = [(item_id, record) for item_id in item_ids for record in _records_of(toc, _item_key(item_id))]
        found = self.cache.read_pieces(self.cache.entry_named(self.key), b"items", self.sections,
                                       [(start, end) for _item_id, (_key, start, end, _digest) in wanted])
        if found is None:
            raise _Damaged(b"items")
        for (item_id, (_key, start, _end, digest)), content in zip(wanted, found, strict=True):
            if _item_digest(content) != digest:
                raise _Damaged(b"items")
            try:
                item = stored.decode_item(content)
            except stored.Unreadable:
                raise _Damaged(b"items") from None
            if item.id == item_id:  # else another item whose id's key is the same (two ids' 64-bit keys clash)
                self._items[item_id] = (start, item)
        if any(item_id not in self._items for item_id, _record in wanted):
            raise _Damaged(b"toc")  # a key of no item with that id: the lesson file says what is there
        self._absent.update(item_id for item_id in item_ids if item_id not in self._items)

    def built(self) -> Lesson:
        if self._built is None:
            self._built = self.head().part(_in_lesson_order(self._items.values()))
        return self._built

    def lesson(self) -> Lesson:
        """Every item, from the whole items section (one checksum), cut where the table says each starts and ends."""
        with collector.paused():  # a record per item, none of them garbage
            places = sorted((start, end) for _key, start, end, _digest in TOC_RECORD.iter_unpack(self.toc()))
        items = self.section(b"items")
        starts, ends = [start for start, _end in places], [0, *(end for _start, end in places)]
        if starts != ends[:-1] or ends[-1] != len(items) or not all(map(le, starts, ends[1:])):
            raise _Damaged(b"toc")  # the pieces must tile the section: every byte in one item, in order
        try:
            found = tuple(stored.decode_item(items[start:end]) for start, end in places)
        except stored.Unreadable:
            raise _Damaged(b"items") from None
        if len({item.id for item in found}) != len(found):  # an item twice
            raise _Damaged(b"items")
        # a memo of its own (what its items ask, known already): the head's, which the index keeps, would hold
        # every item by id and every variant's lesson after the command is done with this lesson
        return self.head().part(found)

    def reparsed(self) -> _Parsed:
        """The lesson read from its file again, when its entry failed after its summary was trusted; an error
        if the file is no longer the one whose summary was read (it changed while the command ran)."""
        data = _read(Path(self.path))
        if hashlib.sha256(data).digest() != self.key:
            raise LessonErrors([LessonError(self.path, None, _("changed while bertdrill was reading it; run the "
                                                                 "command again"))])
        return _Parsed(_verified(data, self.path, self.cache))


TOC_RECORD = struct.Struct("<8sII16s")  # an item's key (_item_key), where its bytes start and end, their digest


def _item_key(item_id: str) -> bytes:
    """What the table of items is ordered by, to find an item by its id without reading every id: a hash."""
    return hashlib.sha256(item_id.encode()).digest()[:8]


def _item_digest(content: bytes) -> bytes:
    """An item's own checksum, kept in the table of items, which the section's checksum covers: an item read
    alone is checked without reading the whole items section."""
    return hashlib.sha256(content).digest()[:16]


def _toc(items: Iterable[tuple[str, bytes]]) -> bytes:
    """The table of the ``(id, encoded)`` items, written one after the other in the items section."""
    records, end = [], 0
    for item_id, encoded in items:
        records.append((_item_key(item_id), end, end + len(encoded), _item_digest(encoded)))
        end += len(encoded)
    return b"".join(TOC_RECORD.pack(*record) for record in sorted(records))


def _records_of(toc: bytes, key: bytes) -> list[tuple[bytes, int, int, bytes]]:
    """The table's records with this key (one, unless two ids' keys clash; none for an id of no item), found by
    bisection: a review's few items are looked up without reading the 14,000 others' records."""
    size = TOC_RECORD.size
    first = bisect_left(range(len(toc) // size), key, key=lambda index: toc[index * size:index * size + len(key)])
    found = []
    for offset in range(first * size, len(toc), size):
        if toc[offset:offset + len(key)] != key:
            break
        found.append(TOC_RECORD.unpack_from(toc, offset))
    return found


def _in_lesson_order(items: Iterable[tuple[int, Item]]) -> tuple[Item, ...]:
    """Items read by their places (where each starts in the items section), in the order of the lesson."""
    return tuple(item for _start, item in sorted(items, key=itemgetter(0)))


def _piece(file: BinaryIO, offset: int, length: int) -> bytes:
    file.seek(offset)
    return file.read(length)


def _stat_key(status: os.stat_result) -> list[int | str]:
    """What a digest memo row holds of a file's stat: any change to the file moves one of them."""
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]


_KINDS = {kind.value: kind for kind in Kind}  # a dict lookup: Kind(name) costs microseconds, on 100,000 rows


def _rows_json(rows: tuple[CardRow, ...]) -> bytes:
    return json.dumps([list(row) for row in rows], ensure_ascii=False, separators=(",", ":")).encode()


def _rows_from_json(data: bytes, lesson_id: str) -> tuple[CardRow, ...]:
    """The rows :func:`_rows_json` wrote, of lesson ``lesson_id``; ValueError for anything else. Checked a column
    at a time, in C: a status of 100,000 cards read them, and a check per value in Python was most of that."""
    try:
        cards = json.loads(data)
        if type(cards) is not list or set(map(type, cards)) - {list} or set(map(len, cards)) - {5} \
                or set(map(type, chain.from_iterable(cards))) - {str} or {card[1] for card in cards} - {lesson_id} \
                or {card[3] for card in cards} - _KINDS.keys():
            raise ValueError("not a lesson's cards")
        for card in cards:
            card[3] = _KINDS[card[3]]
    except (TypeError, RecursionError) as exc:
        raise ValueError(str(exc)) from None
    with collector.paused():  # 100,000 rows, none of them garbage: collecting while they are made would walk them all again
        return tuple(map(CardRow._make, cards))


def _summary_from_json(data: bytes) -> tuple[str, tuple[str, ...], str, int, int]:
    """The summary an entry starts with: the lesson's id, languages, digest, cards and reviewed cards."""
    found = json.loads(data)
    if type(found) is not list or len(found) != 5:
        raise ValueError("not a lesson's summary")
    lesson_id, languages, digest, count, reviewed = found
    if type(lesson_id) is not str or type(languages) is not list or set(map(type, languages)) - {str} \
            or type(digest) is not str or type(count) is not int or type(reviewed) is not int \
            or not 0 <= reviewed <= count:
        raise ValueError("not a lesson's summary")
    return lesson_id, tuple(languages), digest, count, reviewed


# --------------------------------------------------------------------------- the cache of verified lessons

CACHE_FORMAT = b"bertdrill lesson cache 6\n"
SECTIONS = (b"summary", b"index", b"order", b"toc", b"head", b"items")
CACHE_ENTRIES = 200  # entries kept: each edit of a lesson makes a new one, so the oldest go
STALE_TEMPORARY = 3600  # seconds after which a writer's leftover temporary file is its crash's, not its work
MAX_ENTRY_BYTES = 4 * MAX_FILE_BYTES  # an entry is about its lesson's size: a bigger file is not ours
MAX_TABLE_BYTES = 1024  # the line that says where each section is
DIGESTS = "digests.json"  # the digest memo: each lesson file's sha256 by its stat (LessonCache.known)
RACY_NS = 2_000_000_000  # a file changed this close to its reading could change again in the same timestamp tick


def cache_folder() -> Path:
    """``BERTDRILL_CACHE``, else ``BERTDRILL_HOME/cache``, else the platform's user cache folder
    (``~/.cache/bertdrill/lessons`` on Linux). Never a lesson's own folder."""
    if folder := os.environ.get("BERTDRILL_CACHE"):
        return Path(folder)
    if home := os.environ.get("BERTDRILL_HOME"):
        return Path(home) / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("bertdrill", appauthor=False)) / "lessons"


@cache
def verifier_digest() -> bytes:
    """What a cached lesson depends on besides its text: the format, bertdrill's version, the Python
    version (tomllib), the model's fields, and the source of the core that parsed and verified it, so
    an edited verifier (a fix, a new check) never accepts what it would now refuse."""
    digest = hashlib.sha256(CACHE_FORMAT + f"{__version__} {sys.version_info[:2]} {stored.SCHEMA}".encode())
    core = Path(stored.__file__).resolve().parent.parent
    for source in sorted(core.rglob("*.py")):
        digest.update(str(source.relative_to(core)).encode() + b"\0" + source.read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.digest()


class LessonCache:
    """Verified lessons kept in a folder of the user's, one file per lesson text.

    An entry's name is the hash of the lesson's bytes and of :func:`verifier_digest`, so only the
    very bytes that were verified, by the very code that verified them, find it. Its first line names
    the format; its second says where each section is, with a hash of the entry's name, the section's
    name and its content: a damaged, cut or swapped section is ignored (the lesson is read from its
    file and the entry rebuilt), never trusted. The sections, each read only by a command that needs it:

    - ``summary``: the lesson's id, languages, its cards' digest and counts (``status`` reads no more);
    - ``index``: the cards as rows (:class:`CardRow`), for a store that must sync them;
    - ``order``: the ids of the cards a review shows, in the order new cards come (:func:`new_order`);
    - ``toc``, ``head``, ``items``: the table of items (each one's key, place and own digest:
      :data:`TOC_RECORD`), the lesson without its items, and each item, so a command showing a few cards reads
      and checks their items alone (:meth:`LessonIndex.cards_of`).

    The content is JSON (:mod:`bertdrill.core.lesson.stored`): reading it runs no code. The folder must
    be the user's own and writable by nobody else, or it is not used at all (an entry planted there could
    claim a lesson verified). Every entry is written whole through the one atomic writer (``write``, the
    CLI passes :func:`bertdrill.adapters.export.files.write_atomic`), so processes writing at once leave
    one good entry. The cache never makes a command fail: when it cannot be read or written the lesson is
    simply read from its file. An index of a lesson the folder cannot take (not writable, not the user's, a full
    disk) reads it from a spare folder of the process's own (:meth:`spared`) rather than holding it whole: ten
    lessons of 10,000 items held at once peaked at 350 MB in a ``check``, 170 MB when each is read back.
    """

    def __init__(self, folder: Path, write: Callable[[Path, bytes], None]):
        self.folder = folder
        self.write = write
        self.clock = time.time_ns  # the moment a file is read, against the file's own times
        self._memo: dict[str, list[int | str]] | None = None
        self._spare_cache: LessonCache | None = None

    def known(self, path: Path) -> bytes | None:
        """The sha256 of a lesson file's bytes without reading them: the digest memo's, when the file's
        device, inode, size, mtime and ctime are all as they were when it was read and hashed. Only a file
        last changed well before that reading (:data:`RACY_NS`) was noted, as git's index guards against
        "racy" files: a file written again in the same timestamp tick could keep its size and times, while
        any change after the reading moves its ctime, which no program can set back. So only the very bytes
        that were verified still find their entry."""
        try:
            status = os.stat(path)
        except OSError:
            return None
        row = self._digests().get(os.path.abspath(path))
        return bytes.fromhex(str(row[5])) if row is not None and row[:5] == _stat_key(status) else None

    def read(self, path: Path) -> tuple[bytes, bytes]:
        """A lesson file's bytes and their sha256, noted in the digest memo if the file was last changed long
        enough before this reading. Its stat is taken first: a change while it is read moves the ctime off
        the noted one."""
        since = self.clock()
        try:
            status: os.stat_result | None = os.stat(path)
        except OSError:
            status = None
        data = _read(path)
        key = hashlib.sha256(data).digest()
        if status is not None and stat.S_ISREG(status.st_mode) \
                and max(status.st_mtime_ns, status.st_ctime_ns) < since - RACY_NS:
            self._note(os.path.abspath(path), [*_stat_key(status), key.hex()])
        return data, key

    def _digests(self) -> dict[str, list[int | str]]:
        """The digest memo, read once; rows of any other shape are left out, a memo that cannot be read is empty."""
        if self._memo is None:
            self._memo = {}
            try:
                found = json.loads((self.folder / DIGESTS).read_bytes()) if self._trusted_folder() else {}
            except (OSError, ValueError, RecursionError):
                found = {}
            for name, row in found.items() if type(found) is dict else ():
                if type(row) is list and len(row) == 6 and all(type(value) is int for value in row[:5]) \
                        and type(row[5]) is str and len(row[5]) == 64 and not set(row[5]) - set("0123456789abcdef"):
                    self._memo[name] = row
        return self._memo

    def _note(self, name: str, row: list[int | str]) -> None:
        memo = self._digests()
        if memo.get(name) == row:
            return
        memo.pop(name, None)
        memo[name] = row  # the newest last: the oldest go first
        kept = dict(list(memo.items())[-CACHE_ENTRIES:])
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if self._trusted_folder():
                self.write(self.folder / DIGESTS, json.dumps(kept, ensure_ascii=False, separators=(",", ":")).encode())
        except (OSError, BertdrillError):
            return

    def entry(self, data: bytes) -> Path:
        return self.entry_named(hashlib.sha256(data).digest())

    def entry_named(self, key: bytes) -> Path:
        """The entry of the lesson file whose bytes hash (sha256) to ``key``."""
        return self.folder / (hashlib.sha256(verifier_digest() + key).hexdigest() + ".json")

    def get(self, data: bytes, path: str) -> Lesson | None:
        """The lesson verified from exactly these bytes, or None."""
        return self.get_named(hashlib.sha256(data).digest(), path)

    def get_named(self, key: bytes, path: str) -> Lesson | None:
        """The lesson verified from the bytes whose sha256 is ``key``, or None."""
        index = self.index_named(key, path)
        if index is None:
            return None
        try:
            return index._source.lesson()
        except _Damaged:
            return None

    def index(self, data: bytes, path: str) -> LessonIndex | None:
        """The :class:`LessonIndex` of the lesson verified from exactly these bytes, or None. Only the
        entry's summary is read now."""
        return self.index_named(hashlib.sha256(data).digest(), path)

    def index_named(self, key: bytes, path: str) -> LessonIndex | None:
        """:meth:`index` of the bytes whose sha256 is ``key``, from this folder or, for a lesson it could not
        take, from the spare one."""
        entry = self.entry_named(key)
        sections = self._sections(entry)
        if sections is None:
            return None if self._spare_cache is None else self._spare_cache.index_named(key, path)
        summary = self.read_section(entry, b"summary", sections)
        try:
            found = None if summary is None else _summary_from_json(summary)
        except (ValueError, RecursionError):
            found = None
        if found is None:
            return None
        lesson_id, languages, digest, count, reviewed = found
        return LessonIndex(lesson_id, path, languages, digest, count, reviewed,
                           _Kept(self, key, path, sections, found))

    def spared(self, data: bytes, lesson: Lesson | _Parsed, path: str) -> LessonIndex | None:
        """The index of a lesson just verified that this folder could not take, kept in the spare folder; None
        when that cannot take it either."""
        spare = self._spare()
        if spare is None or not spare.put(data, lesson):
            return None
        return spare.index(data, path)

    def _spare(self) -> LessonCache | None:
        """A folder of this process's own for the lessons the user's folder cannot take, made when the first
        one comes (mode 0700 in the system's temporary folder) and removed when the process ends; None when it
        cannot be made."""
        if self._spare_cache is None:
            import atexit  # here: a command whose cache takes its lessons needs none of these
            import shutil
            import tempfile

            try:
                folder = Path(tempfile.mkdtemp(prefix="bertdrill-lessons-"))
            except OSError:
                return None
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            self._spare_cache = LessonCache(folder, self.write)
        return self._spare_cache

    def put(self, data: bytes, lesson: Lesson | _Parsed) -> bool:
        """Keep a lesson just verified from ``data`` (or at hand, with the cards compiled of it already); False
        when the folder cannot take it (it is left alone)."""
        entry = self.entry(data)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self._trusted_folder():
                return False
            index = _index(lesson if isinstance(lesson, _Parsed) else _Parsed(lesson))
            lesson = index.lesson()
            rows = index.cards
            summary = json.dumps([lesson.id, list(lesson.languages), index.digest, index.count, index.reviewed],
                                 ensure_ascii=False, separators=(",", ":")).encode()
            items = [(item.id, stored.encode_item(item)) for item in lesson.items]
            contents = {b"summary": summary, b"index": _rows_json(rows),
                        b"order": json.dumps(new_order(rows), ensure_ascii=False, separators=(",", ":")).encode(),
                        b"toc": _toc(items), b"head": stored.encode_head(lesson),
                        b"items": b"".join(encoded for _item_id, encoded in items)}
            table = json.dumps([[name.decode(), len(contents[name]), self._check(entry, name, contents[name]).decode()]
                                for name in SECTIONS], separators=(",", ":")).encode()
            self.write(entry, CACHE_FORMAT + table + b"\n" + b"".join(contents[name] for name in SECTIONS))
            self._prune()
        except (OSError, BertdrillError, ValueError):  # ValueError: a number too long for JSON
            return False
        return True

    def _sections(self, entry: Path) -> dict[bytes, tuple[int, int, bytes]] | None:
        """Where each section of an entry is (offset, length, checksum), if its first two lines say so and its
        size is theirs."""
        try:
            if not self._trusted_folder():
                return None
            with entry.open("rb") as file:
                size = os.fstat(file.fileno()).st_size
                head = file.readline(len(CACHE_FORMAT))
                table = file.readline(MAX_TABLE_BYTES)
        except OSError:
            return None
        if head != CACHE_FORMAT or not table.endswith(b"\n") or size > MAX_ENTRY_BYTES:
            return None
        try:
            found = json.loads(table)
        except ValueError:
            return None
        if type(found) is not list or [row[0] if type(row) is list and row else None for row in found] != \
                [name.decode() for name in SECTIONS] or any(
                    len(row) != 3 or type(row[1]) is not int or row[1] < 0 or type(row[2]) is not str for row in found):
            return None
        sections, offset = {}, len(head) + len(table)
        for name, length, check in found:
            sections[name.encode()] = (offset, length, check.encode())
            offset += length
        return sections if offset == size else None

    def read_section(self, entry: Path, name: bytes, sections: dict[bytes, tuple[int, int, bytes]]) -> bytes | None:
        """One section of an entry, if its checksum holds: each is of the entry's name, the section's name and
        its bytes, so a section is good only in its own place of its own entry."""
        offset, length, check = sections[name]
        try:
            if not self._trusted_folder():
                return None
            with entry.open("rb") as file:
                file.seek(offset)
                content = file.read(length)
        except OSError:
            return None
        return content if len(content) == length and self._check(entry, name, content) == check else None

    def read_pieces(self, entry: Path, name: bytes, sections: dict[bytes, tuple[int, int, bytes]],
                    pieces: list[tuple[int, int]]) -> list[bytes] | None:
        """Pieces (start, end) of one section of an entry, without its checksum: the caller checks each (an item
        against its digest in the table of items, whose own checksum held). None when the entry cannot be read
        or a piece is not inside the section."""
        offset, length, _check = sections[name]
        if any(not 0 <= start <= end <= length for start, end in pieces):
            return None
        try:
            if not self._trusted_folder():
                return None
            with entry.open("rb") as file:
                found = [_piece(file, offset + start, end - start) for start, end in pieces]
        except OSError:
            return None
        return found if all(len(piece) == end - start for piece, (start, end) in zip(found, pieces, strict=True)) \
            else None

    @staticmethod
    def _check(entry: Path, section: bytes, content: bytes) -> bytes:
        digest = hashlib.sha256(entry.name.encode() + b"\0" + section + b"\0")
        digest.update(content)  # not a copy of the content joined to its prefix (a whole lesson's items: 2.5 MB)
        return digest.hexdigest().encode()

    def _trusted_folder(self) -> bool:
        """The folder is ours and nobody else may write in it (where the system has owners)."""
        if not hasattr(os, "getuid"):
            return self.folder.is_dir()
        status = self.folder.stat()
        return (stat.S_ISDIR(status.st_mode) and status.st_uid == os.getuid()
                and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH))

    def _prune(self) -> None:
        """Keep the newest :data:`CACHE_ENTRIES` entries, and drop temporary files a crashed writer left."""
        entries, now = [], time.time()
        for found in os.scandir(self.folder):
            if found.name.endswith(".json") and len(found.name) == 69:
                entries.append((found.stat().st_mtime, found.path))
            elif found.name.endswith(".tmp") and now - found.stat().st_mtime > STALE_TEMPORARY:
                Path(found.path).unlink(missing_ok=True)
        for _mtime, old in sorted(entries, reverse=True)[CACHE_ENTRIES:]:
            Path(old).unlink(missing_ok=True)
