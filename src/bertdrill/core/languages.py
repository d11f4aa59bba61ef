"""Everything bertdrill knows about a language, in one table: its name, how it writes numbers and its words.

Interface words (a sheet's labels included) are gettext messages, translated in the catalogs.

Other modules ask here (:func:`thousands_separator`, :func:`decimal_mark`, :func:`name`, ...)
instead of listing languages themselves, so adding a language is one entry.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bertdrill.core import i18n
from bertdrill.core.i18n import _, ngettext, pgettext


@dataclass(frozen=True)
class NumberWords:
    """How a language spells whole numbers, read by :mod:`bertdrill.core.number_words`."""

    units: Mapping[str, int]  # words below ten (and, in English, ten to nineteen)
    tens: Mapping[str, int]  # twenty, thirty ... (Turkish: on, yirmi ...)
    hundred: tuple[str, ...]
    scales: Mapping[str, int]  # thousand, million, billion
    zero: tuple[str, ...]
    fillers: tuple[str, ...] = ()  # words that add nothing: "and" in "one hundred and ten"
    one: tuple[str, ...] = ()  # articles that stand for one before a hundred or a scale: "a million"


@dataclass(frozen=True)
class SheetLabels:
    """The words a sheet prints around the lesson's texts, in the sheet's language."""

    version: str
    name: str
    date: str
    score: str
    key: str
    point: str
    points_plural: str
    points_title: str
    questions: str
    page: str
    given: str
    answer: str
    seed: str
    match_hint: str
    student_id: str
    class_name: str
    instructions: str  # the default line under the header, when the lesson and --instructions give none
    of: str  # "Page 2 of 3"
    question: str  # the score table's first column
    total: str
    accepted: str  # the key: other answers to accept
    tolerance: str  # the key: "within ±1%"
    work: str  # the room to work a number out

    def points(self, count: int) -> str:
        return f"{count} {self.point if count == 1 else self.points_plural}"


def sheet_labels() -> SheetLabels:
    """The words a sheet prints, in the interface's language (gettext: a sheet is printed in the language the
    interface speaks, which the interface installs; a language with no catalog gets the English words)."""
    return SheetLabels(
        version=pgettext("sheet", "Version"), name=pgettext("sheet", "Name"), date=pgettext("sheet", "Date"),
        score=pgettext("sheet", "Score"), key=pgettext("sheet", "Answer key"), point=pgettext("sheet", "point"),
        points_plural=pgettext("sheet", "points"), points_title=pgettext("sheet", "Points"),
        questions=pgettext("sheet", "questions"), page=pgettext("sheet", "Page"), given=pgettext("sheet", "Given"),
        answer=pgettext("sheet", "Answer"), seed=pgettext("sheet", "seed"),
        match_hint=_("Write the letter of the matching entry in each box."),
        student_id=pgettext("sheet", "Student ID"), class_name=pgettext("sheet", "Class"),
        instructions=_("Answer every question. For each number, show your working."),
        # Translators: "Page 2 of 3" on a sheet's footer (Turkish writes "Sayfa 2 / 3").
        of=pgettext("sheet", "of"), question=pgettext("sheet", "Question"), total=pgettext("sheet", "Total"),
        accepted=pgettext("sheet", "Also accepted"),
        # Translators: the answer key's tolerance of a number, "within ±1%".
        tolerance=pgettext("sheet", "within"), work=pgettext("sheet", "Working"))


@dataclass(frozen=True)
class Language:
    code: str  # "en", "tr": as lessons name it
    name: str  # the language's own name, for deck and sheet titles
    thousands: str = ","  # 23,837,184
    decimal: str = "."  # 1.5
    turkic_case: bool = False  # dotted and dotless i: "İ" folds to "i", "I" to "ı"
    number_words: NumberWords | None = None  # "four", "dört", "one hundred and ten million"
    articles: frozenset[str] = frozenset()  # words a choice text may add or leave out: "a", "the"
    # Letters people type without their marks on a US keyboard ("cift yonlu" for "çift yönlü"):
    # accepted with a spelling note.
    plain_letters: Mapping[str, str] = field(default_factory=dict)
    # Words a typed number may carry: a unit after it ("109482240 parameters", "12 katman") and a
    # hedge before or after it ("about 110 million", "110 milyon civarında"), which makes it approximate.
    units: frozenset[str] = frozenset()
    # Little words a free-text answer may add or leave out: never a part of what it must say.
    stopwords: frozenset[str] = frozenset()
    hedges: tuple[str, ...] = ()  # longest first: "yaklaşık olarak" before "yaklaşık"
    # The words that end a list ("Q, K, V and output"): a list names how many things it lists.
    conjunctions: tuple[str, ...] = ()
    # A language that builds words by adding suffixes ("kodlayıcılarından": of the encoders): a typed word that
    # begins with a wanted word says it. Its stem-final consonants may soften before a suffix ("kitap",
    # "kitabı"), written as they are after Turkish letters are folded away ("k" to "g" for "ğ").
    suffixing: bool = False
    softened: Mapping[str, str] = field(default_factory=dict)


_ENGLISH_NUMBERS = NumberWords(
    units={"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
           "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
           "seventeen": 17, "eighteen": 18, "nineteen": 19},
    tens={"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
          "ninety": 90},
    hundred=("hundred",),
    scales={"thousand": 10**3, "million": 10**6, "billion": 10**9},
    zero=("zero", "nought", "nil"),
    fillers=("and",),
    one=("a", "an"),
)
_TURKISH_NUMBERS = NumberWords(
    units={"bir": 1, "iki": 2, "üç": 3, "dört": 4, "beş": 5, "altı": 6, "yedi": 7, "sekiz": 8, "dokuz": 9},
    tens={"on": 10, "yirmi": 20, "otuz": 30, "kırk": 40, "elli": 50, "altmış": 60, "yetmiş": 70, "seksen": 80,
          "doksan": 90},
    hundred=("yüz",),
    scales={"bin": 10**3, "milyon": 10**6, "milyar": 10**9},
    zero=("sıfır",),
)
_ENGLISH_UNITS = frozenset({
    "parameter", "parameters", "param", "params", "weight", "weights", "layer", "layers", "head", "heads",
    "dimension", "dimensions", "dim", "dims", "token", "tokens", "position", "positions", "entry", "entries",
    "vector", "vectors", "value", "values", "word", "words", "segment", "segments", "type", "types",
    "unit", "units", "neuron", "neurons", "block", "blocks", "matrix", "matrices", "projection", "projections",
    "task", "tasks", "sentence", "sentences"})
_ENGLISH_STOPWORDS = frozenset({
    "a", "an", "the", "of", "on", "to", "in", "into", "is", "are", "was", "it", "its", "as", "at", "by", "for",
    "from", "with", "and", "or", "that", "this", "which", "be", "been", "it's", "there", "their", "them",
    "they", "so", "also", "very"})
_TURKISH_STOPWORDS = frozenset({
    "ve", "ile", "bir", "bu", "şu", "o", "için", "da", "de", "ya", "hem", "olarak", "gibi", "ki", "mi", "mı",
    "çok", "daha", "en", "her"})
_ENGLISH_HEDGES = ("approximately", "approx.", "approx", "about", "around", "roughly", "circa", "ca.", "nearly",
                   "almost", "some", "~", "≈")
_TURKISH_UNITS = frozenset({
    "parametre", "parametreler", "parametredir", "param", "ağırlık", "ağırlıklar", "katman", "katmanlı",
    "katmanlar", "baş", "başlı", "başlar", "boyut", "boyutlu", "boyutlar", "token", "tokenlar", "konum",
    "konumlar", "girdi", "girdiler", "vektör", "vektörler", "değer", "kelime", "kelimeler", "segment",
    "tane", "adet", "blok", "bloklar", "matris", "matrisler", "projeksiyon", "görev", "cümle"})
_TURKISH_HEDGES = ("yaklaşık olarak", "aşağı yukarı", "yaklaşık", "kabaca", "takriben", "civarında", "civarı",
                   "kadar", "~", "≈")
_TURKISH_LETTERS = {"ç": "c", "ğ": "g", "ı": "i", "ö": "o", "ş": "s", "ü": "u", "â": "a", "î": "i", "û": "u",
                    "Ç": "C", "Ğ": "G", "İ": "I", "Ö": "O", "Ş": "S", "Ü": "U", "Â": "A", "Î": "I", "Û": "U"}


LANGUAGES: dict[str, Language] = {language.code: language for language in (
    Language("en", "English", number_words=_ENGLISH_NUMBERS, articles=frozenset({"a", "an", "the"}),
             units=_ENGLISH_UNITS, hedges=_ENGLISH_HEDGES, stopwords=_ENGLISH_STOPWORDS,
             conjunctions=("and", "or", "plus")),
    # Turkish has no articles ("bir" is also the number one)
    Language("tr", "Türkçe", ".", ",", turkic_case=True, number_words=_TURKISH_NUMBERS,
             plain_letters=_TURKISH_LETTERS, units=_TURKISH_UNITS, hedges=_TURKISH_HEDGES,
             stopwords=_TURKISH_STOPWORDS, conjunctions=("ve", "veya", "ya da", "ile", "artı"),
             suffixing=True, softened={"p": "b", "t": "d", "k": "g"}),
    Language("az", "Azərbaycanca", ".", ",", turkic_case=True),  # folds the Turkish way; numbers as CLDR writes them
    Language("de", "Deutsch", ".", ","),
    Language("es", "Español", ".", ","),
    Language("it", "Italiano", ".", ","),
    Language("pt", "Português", ".", ","),
    Language("nl", "Nederlands", ".", ","),
    Language("id", "Bahasa Indonesia", ".", ","),
)}

SCALE_SUFFIXES = {"k": 10**3, "m": 10**6, "mn": 10**6, "b": 10**9, "bn": 10**9}
"""Round-number suffixes written the same in every language: 110M, 23k, 1.5bn."""


def scale_words() -> dict[str, int]:
    """Every scale word of every language that spells numbers ("million", "milyon"), and the suffixes."""
    words = dict(SCALE_SUFFIXES)
    for entry in LANGUAGES.values():
        if entry.number_words is not None:
            words.update(entry.number_words.scales)
    return words


_DEFAULT = Language("", "")  # a language not in the table writes numbers the English way


def language(code: str) -> Language:
    """The table's entry for ``code`` ("tr"), or English conventions for a code it does not list."""
    return LANGUAGES.get(code, _DEFAULT)


@functools.lru_cache(maxsize=256)  # every word a check reads asks it: "tr", "en" and a few regions
def base(code: str) -> str:
    """``tr`` for ``tr``, ``tr-TR`` or ``tr_TR``."""
    return code.split("-")[0].split("_")[0].lower()


def thousands_separator(code: str) -> str:
    """The thousands separator people expect: 23,837,184 in English, 23.837.184 in Turkish."""
    return language(code).thousands


def decimal_mark(code: str) -> str:
    """``.`` in English, ``,`` in Turkish."""
    return language(code).decimal


def written_count(value: int, code: str) -> str:
    """A count as a reader of ``code`` writes it: 1,234 in English, 1.234 in Turkish (the interfaces' one way)."""
    return f"{value:,}".replace(",", thousands_separator(code))


LISTED = 10
"""Names a message lists before it says how many more: a sheet of 100,000 items left out 42,849 questions."""


def listed(names: Sequence[str]) -> str:
    """Names for a message, in the interface's language: all of a few, or the first :data:`LISTED` and how many
    more."""
    shown = ", ".join(names[:LISTED])
    more = len(names) - LISTED
    if more <= 0:
        return shown
    return ngettext("{names} and {count} more", "{names} and {count} more", more).format(
        names=shown, count=written_count(more, i18n.language()))


def written_decimal(value: float, places: int, code: str) -> str:
    """A decimal as a reader of ``code`` writes it: 0.85 in English, 0,85 in Turkish. A value to type on a command
    line is written as typed (``--retention 0.85``), not with this."""
    return f"{value:.{places}f}".replace(".", decimal_mark(code))


def written_short(value: float, code: str) -> str:
    """A measure as short as it is exact (``:g``): 2.5 or 30 in English, 2,5 in Turkish; for seconds and bounds
    in messages, where a fixed number of places would print 30.00."""
    return f"{value:g}".replace(".", decimal_mark(code))


def written_percent(share: float, places: int, code: str) -> str:
    """A share (0.57) as a percentage a reader of ``code`` writes: 57% in English, %57 in Turkish; the sign's place
    is the catalog's (``{number}%``), the number is :func:`written_decimal`'s."""
    return _("{number}%").format(number=written_decimal(share * 100, places, code))


def turkic_case(code: str) -> bool:
    """Whether case folds the Turkish way; a region is ignored: "tr-TR" and "tr_TR" fold as "tr"."""
    return language(code.split("-")[0].split("_")[0].lower()).turkic_case


def conjunctions(code: str) -> tuple[str, ...]:
    """The words that end a list in ``code``: "and", "or"; "ve", "veya"."""
    return language(base(code)).conjunctions


def name(code: str) -> str:
    """The language's own name ("Türkçe"), or its code when the table does not know it."""
    return language(code).name or code
