"""Export lessons as an Anki package (``.apkg``) with genanki.

Every card kind has its own note type, named ``bertdrill …``. Their ids,
field lists and template names are frozen below: Anki matches an imported
note type to the one already in a collection by id and field list, so changing
a field list would make Anki add a second note type and skip every update.
To change a list, add a new note type with a new id and name instead.

Identity: a note's GUID is ``genanki.guid_for(lesson id, card key, language)``
(the card key is language-free; the language is in it because ``--lang all``
puts both languages in one package as separate notes). Deck ids come from the
lesson id and language. Neither ever depends on the text, so a fixed typo
updates the note it belongs to.

Modification times decide what a re-import changes. Under Anki's default
import options ("update notes: if newer", "update note types: if newer") an
incoming note replaces the one in the collection only when its modification
time is later. So:

- notes carry the modification time of their lesson file (never later than
  the export), so re-exporting an unchanged lesson changes nothing, and
  saving the lesson file makes every note of that lesson newer than the
  collection's copy;
- note types carry :data:`TEMPLATES_REVISED`, the time their templates and
  CSS last changed, so a user's own styling survives until bertdrill ships
  new templates.

A note the user edited inside Anki after the lesson file was saved is newer
than the export, so Anki keeps the user's version.
"""

from __future__ import annotations

import functools
import hashlib
import html
import itertools
import json
import os
import sqlite3
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, NamedTuple, Protocol, assert_never

import genanki

from bertdrill.adapters.export.files import Input, Replace, check_writable, write_atomic
from bertdrill.adapters.export.marks import zip_comment
from bertdrill.core import collector, formula
from bertdrill.core.cards import (
    BlankCard,
    Card,
    ChoiceCard,
    FactCard,
    MatchCard,
    NumericCard,
    PracticeCard,
    compile_lesson,
)
from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import N_, _
from bertdrill.core.kinds import Kind
from bertdrill.core.languages import LANGUAGES
from bertdrill.core.languages import name as language_name
from bertdrill.core.lesson import Lesson

# When the templates, the CSS or the script below last changed (UTC seconds). Bump it with every
# change to them, so collections that have the older note types take the new ones on the next import.
TEMPLATES_REVISED = 1_796_097_600  # 2026-12-01 04:00 UTC: the labels in Turkish

class ExportError(BertdrillError):
    """The package cannot be built or written."""


# --- note types ------------------------------------------------------------------------------

# Words the templates print around the fields. A note type serves every language of a collection
# (a deck per language, one note type), so a template carries each word in every language bertdrill
# has a catalog for, and the CSS shows the one the card's ``lang::`` tag names.
LABEL_EXPECTED_OUTPUT = N_("Expected output")
LABEL_SOLUTION = N_("Solution")
LABEL_TYPE_NUMBER = N_("Type the number in digits; separators are optional.")
Translations = Mapping[str, Callable[[str], str]]
"""How each language says a message (``{"en": str, "tr": catalog.gettext}``): the interface passes every
catalog's, from the catalogs adapter, so this module reads no catalog of its own."""
ENGLISH_ONLY: Translations = {"en": str}


def _label(message: str, say_in: Translations) -> str:
    """The message in every language, each shown only on cards of its language (see :func:`_label_css`)."""
    return "".join(f'<span class="l10n" lang="{language}">{html.escape(say(message))}</span>'
                   for language, say in say_in.items())


def _label_css(say_in: Translations) -> str:
    rules = [".l10n { display: none; }", '.l10n[lang="en"] { display: inline; }']
    for language in say_in:
        if language != "en":
            card = f'[data-tags~="lang::{language}"]'
            rules.append(f'{card} .l10n[lang="en"] {{ display: none; }} {card} .l10n[lang="{language}"] '
                         "{ display: inline; }")
    return "\n".join(rules) + "\n"


CSS = """\
.card {
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, sans-serif;
  font-size: 20px;
  line-height: 1.5;
  color: #1f2328;
  background-color: #ffffff;
  text-align: left;
  max-width: 42em;
  margin: 0 auto;
  padding: 0.5em 1em;
  overflow-wrap: break-word;
}
.card.nightMode { color: #e6edf3; background-color: #0d1117; }
hr#answer { border: none; border-top: 1px solid #d1d9e0; margin: 1em 0; }
.nightMode hr#answer { border-top-color: #3d444d; }
.prompt { font-weight: 600; }
.context { color: #59636e; font-size: 0.85em; margin-bottom: 0.4em; }
.hint { color: #59636e; font-size: 0.8em; margin: 0.5em 0; }
.answer { font-size: 1.1em; }
.term { font-size: 1.3em; margin-top: 0.3em; }
.label { color: #59636e; font-size: 0.75em; font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em;
  margin: 1em 0 0.3em 0; }
.explanation { color: #59636e; font-size: 0.9em; margin-top: 1em; }
.source { color: #59636e; font-size: 0.7em; margin-top: 1.5em; }
.nightMode .context, .nightMode .explanation, .nightMode .source, .nightMode .hint, .nightMode .label {
  color: #9198a1;
}
pre, code, kbd, input#typeans, .typeans {
  font-family: ui-monospace, "SF Mono", "Cascadia Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace;
}
/* Code wraps instead of scrolling sideways: on a phone a scrolled line hides its end (the 3072 in
   "d, f = ..., 768, 3072"), and nobody scrolls a card. */
pre {
  white-space: pre-wrap;
  overflow-wrap: anywhere;
  font-size: 0.8em;
  line-height: 1.45;
  background-color: #f6f8fa;
  border: 1px solid #d1d9e0;
  border-radius: 6px;
  padding: 0.75em 1em;
  margin: 0.3em 0;
}
.nightMode pre { background-color: #161b22; border-color: #3d444d; }
pre.output { border-left: 4px solid #1a7f37; }
.nightMode pre.output { border-left-color: #3fb950; }
.cloze { font-weight: 700; color: #0550ae; }
.nightMode .cloze { color: #79c0ff; }
ol.options { padding-left: 2em; }
ol.options li { margin: 0.25em 0; }
.letter { font-weight: 700; }
/* The box to type in: Anki sets its font inline from the field's settings, hence !important. */
input#typeans {
  font-size: 1em !important;
  font-family: ui-monospace, "SF Mono", "Cascadia Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace !important;
  width: 100%;
  box-sizing: border-box;
  padding: 0.35em 0.6em;
  color: #1f2328;
  background-color: #ffffff;
  border: 1px solid #8c959f;
  border-radius: 6px;
}
.nightMode input#typeans { color: #e6edf3; background-color: #0d1117; border-color: #3d444d; }
code#typeans { font-size: 1em; }
.expected-number { font-family: ui-monospace, "SF Mono", "Cascadia Mono", Menlo, Consolas, "DejaVu Sans Mono",
  monospace; margin-top: 0.4em; }
"""


def _number_formats() -> dict[str, tuple[str, str]]:
    """Each language's thousands separator and decimal mark, for the number script."""
    return {code: (language.thousands, language.decimal) for code, language in LANGUAGES.items()}


# Runs on both sides of a numeric card. On the front it rewrites what was typed into plain digits
# just before Anki reads it (Enter, the Show Answer button through getTypedAnswer, leaving the box),
# so Anki's character-by-character comparison sees 23837184 whether the learner typed 23,837,184,
# 23 837 184 or, in Turkish, 23.837.184. Text that is not a number is left as typed. On the back it
# shows the expected number with the card language's separators.
NUMBER_SCRIPT = """\
(function () {
  "use strict";
  var FORMATS = __FORMATS__;
  function language() {
    var card = document.querySelector(".bertdrill-number");
    var tags = card ? card.getAttribute("data-tags") || "" : "";
    var found = / lang::([A-Za-z_-]+) /.exec(tags);
    return found && FORMATS[found[1]] ? found[1] : "en";
  }
  function plain(text, decimal) {
    var t = text.replace(/[\\s\\u00a0\\u202f\\u2009_'\\u2019]/g, "").replace(/^\\u2212/, "-");
    if (!/^[-+]?[0-9.,]*[0-9][0-9.,]*$/.test(t)) return text;
    var sign = t.charAt(0) === "-" ? "-" : "";
    t = t.replace(/^[-+]/, "");
    var dots = t.split(".").length - 1, commas = t.split(",").length - 1, mark = null;
    if (dots && commas) {
      mark = t.lastIndexOf(".") > t.lastIndexOf(",") ? "." : ",";
    } else if (dots + commas === 1) {
      mark = dots ? "." : ",";
      /* 23,837 is grouped unless the language writes decimals with that mark. */
      if (mark !== decimal && /^[0-9]{1,3}[.,][0-9]{3}$/.test(t)) mark = null;
    }
    var whole = t, fraction = "";
    if (mark) {
      whole = t.slice(0, t.lastIndexOf(mark));
      fraction = t.slice(t.lastIndexOf(mark) + 1);
      if (/[.,]/.test(fraction)) return text;
    }
    return sign + whole.replace(/[.,]/g, "") + (mark ? "." + fraction : "");
  }
  function grouped(text, format) {
    var found = /^(-?)([0-9]+)(?:[.]([0-9]+))?$/.exec(text.trim());
    if (!found) return text;
    var whole = found[2].length > 4 ? found[2].replace(/\\B(?=([0-9]{3})+$)/g, format[0]) : found[2];
    return found[1] + whole + (found[3] ? format[1] + found[3] : "");
  }
  function normalise() {
    var box = document.getElementById("typeans");
    if (box && box.tagName === "INPUT" && document.querySelector(".bertdrill-number")) {
      var value = plain(box.value, FORMATS[language()][1]);
      if (value !== box.value) box.value = value;
    }
  }
  var box = document.getElementById("typeans");
  if (box && box.tagName === "INPUT") {
    box.addEventListener("keydown", function (event) { if (event.key === "Enter") normalise(); }, true);
    box.addEventListener("change", normalise);
    box.addEventListener("blur", normalise);
  }
  var read = window.getTypedAnswer;
  if (typeof read === "function" && !read.bertdrill) {
    var wrapped = function () { normalise(); return read.apply(this, arguments); };
    wrapped.bertdrill = true;
    window.getTypedAnswer = wrapped;
  }
  var shown = document.querySelectorAll(".expected-number");
  for (var i = 0; i < shown.length; i++) shown[i].textContent = grouped(shown[i].textContent, FORMATS[language()]);
})();
""".replace("__FORMATS__", json.dumps(_number_formats(), sort_keys=True))

_BACK_NOTES = """
{{#Explanation}}<div class="explanation">{{Explanation}}</div>{{/Explanation}}
{{#Source}}<div class="source">{{Source}}</div>{{/Source}}"""


class _Model(genanki.Model):  # type: ignore[misc]  # genanki has no types: its Model is Any to mypy
    """A note type whose modification time is :data:`TEMPLATES_REVISED`, not the export's."""

    def to_json(self, timestamp: float, deck_id: int) -> dict[str, object]:
        data: dict[str, object] = super().to_json(timestamp, deck_id)
        data["mod"] = TEMPLATES_REVISED
        return data

    def __repr__(self) -> str:
        return f"<note type {self.name!r} {self.model_id}>"


def _model(model_id: int, kind: Kind, fields: list[str], template: str, front: str, back: str, css: str,
           model_type: int = genanki.Model.FRONT_BACK) -> _Model:
    return _Model(model_id, f"bertdrill {kind}", fields=[{"name": name} for name in fields],
                  templates=[{"name": template, "qfmt": front, "afmt": back}],
                  css=css, model_type=model_type)


def _card(kind: str, body: str) -> str:
    """A side of a card: its kind and tags on the wrapper (the CSS picks labels by the ``lang::`` tag)."""
    return f'<div class="bertdrill bertdrill-{kind}" data-tags=" {{{{Tags}}}} ">\n{body}\n</div>'


def _number_front(say_in: Translations) -> str:
    return ('<div class="prompt">{{Question}}</div>\n'
            f'<div class="hint">{_label(LABEL_TYPE_NUMBER, say_in)}</div>\n{{{{type:Answer}}}}')



_NUMBER_BACK = ('<div class="prompt">{{Question}}</div>\n<hr id="answer">\n{{type:Answer}}\n'
                '<div class="answer expected-number">{{Answer}}</div>' + _BACK_NOTES)
def _practice_back(say_in: Translations) -> str:
    return (f'{{{{FrontSide}}}}\n<hr id="answer">\n<div class="label">{_label(LABEL_EXPECTED_OUTPUT, say_in)}</div>\n'
            '<pre class="output">{{Expected Output}}</pre>\n'
            f'{{{{#Solution}}}}<div class="label">{_label(LABEL_SOLUTION, say_in)}</div>\n'
            '<pre class="code solution">{{Solution}}</pre>{{/Solution}}' + _BACK_NOTES)


def note_types(say_in: Translations = ENGLISH_ONLY) -> dict[Kind, _Model]:
    """The note type of every kind, its labels in each language of ``say_in`` (ids never depend on them)."""
    css = CSS + _label_css(say_in)
    return {kind: _note_type(kind, say_in, css) for kind in Kind}


def _note_type(kind: Kind, say_in: Translations, css: str) -> _Model:
    # Ids chosen once with random.randrange(1 << 30, 1 << 31). Never change an id, a field list or a
    # template name: Anki would treat the note type as a different one and stop updating its notes.
    match kind:
        case Kind.FACT:
            return _model(
                1165273184, kind, ["Question", "Answer", "Explanation", "Source"], "Recall",
                '<div class="prompt">{{Question}}</div>',
                '{{FrontSide}}\n<hr id="answer">\n<div class="answer">{{Answer}}</div>' + _BACK_NOTES,
                css=css,
            )
        case Kind.CHOICE:
            return _model(
                2136876611, kind, ["Question", "Options", "Answer", "Explanation", "Source"], "Choose",
                '<div class="prompt">{{Question}}</div>\n{{Options}}',
                '{{FrontSide}}\n<hr id="answer">\n<div class="answer">{{Answer}}</div>' + _BACK_NOTES,
                css=css,
            )
        case Kind.BLANK:
            return _model(
                1650602056, kind, ["Text", "Prompt", "Back Extra", "Source"], "Cloze",
                '{{#Prompt}}<div class="prompt">{{Prompt}}</div>{{/Prompt}}\n<pre class="code">{{cloze:Text}}</pre>',
                '{{#Prompt}}<div class="prompt">{{Prompt}}</div>{{/Prompt}}\n<pre class="code">{{cloze:Text}}</pre>\n'
                '{{#Back Extra}}<div class="explanation">{{Back Extra}}</div>{{/Back Extra}}\n'
                '{{#Source}}<div class="source">{{Source}}</div>{{/Source}}',
                model_type=genanki.Model.CLOZE,
                css=css,
            )
        case Kind.NUMERIC:
            return _model(
                2067266769, kind, ["Question", "Answer", "Explanation", "Source"], "Type the number",
                _card("number", _number_front(say_in)) + f"\n<script>\n{NUMBER_SCRIPT}</script>",
                _card("number", _NUMBER_BACK) + f"\n<script>\n{NUMBER_SCRIPT}</script>",
                css=css,
            )
        case Kind.MATCH:
            return _model(
                1398046890, kind, ["Term", "Meaning", "Table", "Explanation", "Source"], "Match",
                # A question, not a fragment: the table's instruction, then the term and what it asks for.
                '{{#Table}}<div class="context">{{Table}}</div>{{/Table}}\n<div class="prompt term">{{Term}} → ?</div>',
                '{{FrontSide}}\n<hr id="answer">\n<div class="answer">{{Meaning}}</div>' + _BACK_NOTES,
                css=css,
            )
        case Kind.PRACTICE:
            return _model(
                1862286196, kind, ["Prompt", "Starter", "Expected Output", "Solution", "Explanation", "Source"],
                "Practice",
                _card("practice", '<div class="prompt">{{Prompt}}</div>\n'
                                  '{{#Starter}}<pre class="code">{{Starter}}</pre>{{/Starter}}'),
                _card("practice", _practice_back(say_in)),
                css=css,
            )
        case _:
            assert_never(kind)


# --- text to fields --------------------------------------------------------------------------

def prose(text: str) -> str:
    """Lesson text as HTML: escaped, so ``<script>`` shows as text; line breaks kept."""
    return _inert(html.escape(text.strip(), quote=False)).replace("\n", "<br>")


def code(text: str) -> str:
    """Code for a ``<pre>`` block: escaped, with its line breaks and indentation as they are."""
    return _inert(html.escape(text.strip("\n"), quote=False))


def _inert(escaped: str) -> str:
    """Escaped HTML with Anki's own markup made text: ``[sound:x.mp3]`` and ``[anki:tts]`` are read from a
    field's HTML as it is (and play a file from the collection), so their bracket becomes a character
    reference, which shows as ``[`` and matches nothing."""
    return escaped.replace("[", "&#91;")


def _cloze_text(text: str) -> str:
    """Escaped text that Anki's cloze parser leaves alone: braces become character references."""
    return code(text).replace("{", "&#123;").replace("}", "&#125;")


def cloze(card: BlankCard, language: str) -> str:
    """The blank's code in ``language`` with its one blank as ``{{c1::answer}}``."""
    before, after = card.code[language].split("____", 1)
    # A ':' in the answer could read as the start of a cloze hint ("{{c1::a::hint}}").
    answer = _cloze_text(card.fill).replace(":", "&#58;")
    return f"{_cloze_text(before)}{{{{c1::{answer}}}}}{_cloze_text(after)}"


def _options(card: ChoiceCard, language: str) -> str:
    items = "".join(f"<li>{prose(option)}</li>" for option in card.options[language])
    return f'<ol class="options" type="A">{items}</ol>'


def _letter(index: int) -> str:
    return chr(ord("A") + index)


def fields(card: Card, language: str, source: str) -> list[str]:
    """The note fields of one card in one language, in its note type's order."""
    prompt = prose(card.prompt[language])
    explanation = prose(card.explanation.get(language, ""))
    match card:
        case FactCard():
            return [prompt, prose(card.answer[language]), explanation, source]
        case NumericCard():
            # What the learner types and Anki compares character by character: digits, no separators.
            return [prompt, formula.format_number(card.value), explanation, source]
        case MatchCard():
            return [prose(card.term[language]), prose(card.answer[language]), prompt, explanation, source]
        case ChoiceCard():
            correct = f'<span class="letter">{_letter(card.correct)}.</span> {prose(card.answer[language])}'
            return [prompt, _options(card, language), correct, explanation, source]
        case BlankCard():
            return [cloze(card, language), prompt, explanation, source]
        case PracticeCard():
            output = code("\n".join(card.expected_output))
            return [prompt, code(card.code[language]), output, code(card.solution[language]), explanation, source]
        case _:
            assert_never(card)


def tags(card: Card, lesson: Lesson, language: str) -> list[str]:
    """Lesson id, kind, language, the lesson's tags and the item's; tables as ``table::<id>``."""
    return list(_tags(lesson.id, card.kind, language, lesson.tags, card.tags))


@functools.lru_cache(maxsize=1024)  # most cards share their tags with many others
def _tags(lesson_id: str, kind: Kind, language: str, lesson_tags: tuple[str, ...],
          card_tags: tuple[str, ...]) -> tuple[str, ...]:
    found = [lesson_id, f"kind::{kind}", f"lang::{language}", *lesson_tags]
    found += [f"table::{tag.removeprefix('table:')}" if tag.startswith("table:") else tag for tag in card_tags]
    return tuple(dict.fromkeys(found))


# --- notes and decks -------------------------------------------------------------------------

class Note(NamedTuple):
    """One note as it goes into the package; every bertdrill note type makes exactly one card."""

    guid: str
    model: genanki.Model
    fields: list[str]
    tags: list[str]
    deck_id: int
    modified: int  # seconds; see the module doc


class LessonDeck(NamedTuple):
    """A lesson's deck in one language (with the note types its notes use) and its notes, in lesson order."""

    deck: genanki.Deck
    notes: list[Note]


@dataclass
class Package:
    """The decks (with the note types their notes use) and the notes, in lesson order."""

    decks: list[genanki.Deck] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


@dataclass
class Written:
    """What a written package holds: its decks, in lesson order, and its notes by kind (``{"fact": 11, ...}``).
    The notes themselves are let go as they are written."""

    decks: list[genanki.Deck] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)

    def add(self, part: LessonDeck) -> None:
        self.decks.append(part.deck)
        self.kinds.update(note.model.name.removeprefix("bertdrill ") for note in part.notes)

    @property
    def count(self) -> int:
        """How many notes (and cards: one each)."""
        return self.kinds.total()


def guid(card: Card, language: str) -> str:
    return guid_for(card.lesson_id, card.key, language)


def guid_for(*parts: str) -> str:
    """``genanki.guid_for(*parts)``, computed the same way in fewer steps (a tenth of a large export went to its
    byte-by-byte loop): the first 8 bytes of the SHA-256 of the parts joined by ``__``, in Anki's base 91."""
    digest = hashlib.sha256("__".join(parts).encode()).digest()
    number = int.from_bytes(digest[:8], "big")
    digits = []
    while number:
        number, digit = divmod(number, 91)
        digits.append(_BASE91[digit])
    return "".join(reversed(digits))


_BASE91 = "".join(genanki.util.BASE91_TABLE)


def stable_id(*parts: str) -> int:
    """An id in genanki's recommended range, derived from names so it never changes."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return (1 << 30) + int.from_bytes(digest[:8], "big") % (1 << 30)


def deck_name(lesson: Lesson, language: str, nested: bool) -> str:
    """``bertdrill::What is BERT?``, or ``bertdrill::What is BERT?::Türkçe`` for one of several languages."""
    if not nested:
        return f"bertdrill::{_deck_part(lesson.title[language])}"
    title = _deck_part(lesson.title[lesson.languages[0]])
    return f"bertdrill::{title}::{language_name(language)}"


def _deck_part(text: str) -> str:
    # '::' would start another level of the deck hierarchy.
    return " ".join(text.replace("::", ":").split()) or "untitled"


def build(lessons: Sequence[Lesson], language: str, modified: Mapping[str, int],
          track: Callable[[Sequence[Card]], Iterable[Card]] = iter, say_in: Translations = ENGLISH_ONLY) -> Package:
    """The package for ``language`` ("en", "tr", ...) or ``"all"``, every note in memory (:func:`export`
    writes each deck's notes as they are made instead)."""
    package = Package()
    for part in lesson_decks(lessons, language, modified, track, say_in):
        package.decks.append(part.deck)
        package.notes.extend(part.notes)
    return package


def lesson_decks(lessons: Sequence[Lesson], language: str, modified: Mapping[str, int],
                 track: Callable[[Sequence[Card]], Iterable[Card]] = iter,
                 say_in: Translations = ENGLISH_ONLY) -> Iterator[LessonDeck]:
    """The decks for ``language`` ("en", "tr", ...) or ``"all"``, one per lesson and language, each made when it is
    asked for: a lesson and its cards are let go before the next lesson is read (``lessons`` may read each one
    when its turn comes, as the CLI's do)."""
    models = note_types(say_in)
    for lesson in lessons:
        if language != "all" and language not in lesson.languages:
            raise ExportError(_("lesson {lesson!r} has no {language!r} texts (its languages: {languages}); try --lang all")
                              .format(lesson=lesson.id, language=language, languages=", ".join(lesson.languages)))
        cards = compile_lesson(lesson)
        for lang in lesson.languages if language == "all" else (language,):
            deck = genanki.Deck(stable_id("bertdrill deck", lesson.id, lang), deck_name(lesson, lang, language == "all"),
                                description=prose(lesson.summary.get(lang, "")))
            notes = _notes(lesson, lang, track(cards), deck.deck_id, modified[lesson.id], models)
            for model in {id(note.model): note.model for note in notes}.values():
                deck.add_model(model)
            yield LessonDeck(deck, notes)
            del notes  # else held while the next deck's are made
        # Else held by the loop while the next lesson is read: 20 MB of a large lesson beside the next.
        del lesson, cards


def _notes(lesson: Lesson, language: str, cards: Iterable[Card], deck_id: int, modified: int,
           models: Mapping[Kind, _Model]) -> list[Note]:
    source = prose(lesson.source.get(language, ""))
    notes = []
    for card in cards:
        values = fields(card, language, prose(card.cited[language]) if card.cited else source)
        if not values[0]:
            raise ExportError(_("{file}:{line}: item {item!r} has an empty {language!r} text; Anki would make no card "
                                "from it").format(file=lesson.path, line=card.line, item=card.item_id, language=language))
        notes.append(Note(guid(card, language), models[card.kind], values, tags(card, lesson, language),
                          deck_id, modified))
    return notes


# --- writing ---------------------------------------------------------------------------------

class Filed(Protocol):
    """A lesson, or what stands for one (its index): its id and the file it came from."""

    @property
    def id(self) -> str: ...

    @property
    def path(self) -> str: ...


def lesson_times(lessons: Sequence[Filed], now: float | None = None) -> dict[str, int]:
    """Each lesson's modification time: its file's, never later than ``now``.

    A lesson that is not a file (parsed from text) is as new as ``now``.
    """
    now = time.time() if now is None else now
    times = {}
    for lesson in lessons:
        try:
            times[lesson.id] = int(min(os.stat(lesson.path).st_mtime, now))
        except OSError:
            times[lesson.id] = int(now)
    return times


def write_package(decks: Iterable[LessonDeck], target: BinaryIO, timestamp: float) -> Written:
    """Write an ``.apkg`` of the decks to an open binary file, each deck's notes as the deck comes (see
    :func:`lesson_decks`): held together, a 100,000-note export's notes were most of its memory.

    genanki writes the collection: its tables, settings, note types and decks. The note and
    card rows go in with one ``executemany`` per deck, where genanki would run one INSERT per row;
    with that, exporting a lesson costs about what genanki alone takes to write the same notes.
    The database is built in a temporary folder of its own, removed after (``genanki.Package.write_to_file``
    leaves its temporary database behind). New note and card ids count up from ``timestamp`` in milliseconds, as
    Anki's own ids do.
    """
    import tempfile

    # The collection is built in a temporary file, then copied into the archive a block at a time: one built in
    # memory was held twice (the database, then its serialized bytes; 42 MB each for 100,000 notes)
    with tempfile.TemporaryDirectory(prefix="bertdrill-anki-") as folder:
        return _write_package(decks, target, timestamp, Path(folder) / "collection.anki2")


def _write_package(decks: Iterable[LessonDeck], target: BinaryIO, timestamp: float, collection: Path) -> Written:
    first = int(timestamp * 1000)
    written = Written()
    db = sqlite3.connect(collection)
    try:
        cursor = db.cursor()
        cursor.execute("PRAGMA journal_mode = OFF")  # a temporary database, never rolled back
        cursor.execute("PRAGMA synchronous = OFF")  # nor kept after a crash: the package is written atomically
        # genanki's tables and settings now, its decks and note types once every deck has come (genanki's
        # Package.write_to_db writes the one, then the other: the same collection).
        genanki.Package([]).write_to_db(cursor, timestamp, iter(()))
        # Build the indexes once after the rows, not row by row, as SQLite's bulk loads do.
        indexes = cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' "
                                 "AND tbl_name IN ('notes', 'cards') AND sql IS NOT NULL").fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        for part in decks:
            _insert(cursor, part.notes, first, written.count)
            written.add(part)
            del part  # else held while the next deck is made
        ids = itertools.count(first + 2 * written.count)  # after the notes' and cards' (see _note_rows)
        for deck in written.decks:
            deck.write_to_db(cursor, timestamp, ids)
        for _, sql in indexes:
            cursor.execute(sql)
        db.commit()
    finally:
        db.close()
    # Stored, not compressed, as genanki stores its packages: compressing would add a fifth to
    # the time it takes to write a large one. Anki reads both.
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        archive.comment = zip_comment()  # bertdrill's mark: a later export replaces this file (Anki ignores it)
        archive.write(collection, "collection.anki2")
        archive.writestr("media", "{}")
    return written


def _insert(cursor: sqlite3.Cursor, notes: Sequence[Note], first: int, before: int) -> None:
    """A deck's notes and their cards, after ``before`` notes of the decks before it."""
    # Columns as genanki writes them: usn -1, no checksum, flags or data.
    cursor.executemany("INSERT INTO notes VALUES (?, ?, ?, ?, -1, ?, ?, ?, 0, 0, '')", _note_rows(notes, first, before))
    # A new card (type 0, queue 0) of ordinal 0: the one template, or the one cloze c1. Its
    # `due` is its place in the package, so Anki shows new cards in lesson order.
    cursor.executemany("INSERT INTO cards VALUES (?, ?, ?, 0, ?, -1, 0, 0, ?, 0, 0, 0, 0, 0, 0, 0, 0, '')",
                       _card_rows(notes, first, before))


def _note_rows(notes: Sequence[Note], first: int, before: int) -> Iterator[tuple[int, str, int, int, str, str, str]]:
    """The notes table's rows, made as SQLite reads them (listed, their joined fields were a second copy of every
    note's text). The package's note ``n`` (from 0) has id ``first + 2n``, its card the next, as one counter
    handing out both would give them."""
    for position, note in enumerate(notes, start=before):
        yield (first + 2 * position, note.guid, note.model.model_id, note.modified, f" {' '.join(note.tags)} ",
               "\x1f".join(note.fields), note.fields[0])


def _card_rows(notes: Sequence[Note], first: int, before: int) -> Iterator[tuple[int, int, int, int, int]]:
    """The cards table's rows: each note's one card, its id after its note's, its ``due`` its place from 1."""
    for position, note in enumerate(notes, start=before):
        yield first + 2 * position + 1, first + 2 * position, note.deck_id, note.modified, position + 1


def check_target(path: Path, *, replace: Replace, inputs: Iterable[Input] = ()) -> None:
    """Fail early, before any work, on an output path that cannot become an Anki package (or is an input, or a
    file ``replace`` does not let it replace)."""
    check_writable(path, replace=replace, example="lessons.apkg", inputs=inputs)
    if path.suffix.lower() != ".apkg":
        raise ExportError(_("{path}: Anki imports packages named *.apkg; try {example}").format(
            path=path, example=path.with_suffix(".apkg")))


def export(lessons: Sequence[Lesson], path: Path, language: str = "en", *,
           modified: Mapping[str, int] | None = None,
           track: Callable[[Sequence[Card]], Iterable[Card]] = iter, say_in: Translations = ENGLISH_ONLY,
           inputs: Iterable[Input] = (), replace: Replace = Replace.OURS) -> Written:
    """Write the lessons as an Anki package at ``path``, a lesson at a time; return what it holds.

    ``modified`` maps lesson ids to note modification times (default: :func:`lesson_times`).
    ``track`` wraps each deck's cards as they become notes (the CLI passes a progress bar).
    ``say_in`` gives the templates' few words in every language a collection may hold. ``inputs``: the
    files the command reads, never replaced; ``replace``: which existing file it may replace (only one bertdrill
    wrote, unless ``--force``; see :mod:`bertdrill.adapters.export.files`).
    """
    path = Path(path)
    inputs = list(inputs)
    check_target(path, replace=replace, inputs=inputs)
    if not lessons:
        raise ExportError(_("no lessons to export"))
    modified = dict(modified) if modified is not None else lesson_times(lessons)
    decks = lesson_decks(lessons, language, modified, track, say_in)
    now = time.time()
    written = Written()

    def write(target: BinaryIO) -> None:
        nonlocal written
        written = write_package(decks, target, now)

    with collector.paused():
        write_atomic(path, write, replace=replace, example="lessons.apkg", inputs=inputs)
    return written
