"""The Anki cards as a learner sees them: rendered by the real Anki library, drawn by Chromium.

Anki's desktop reviewer is a Chromium web view. These tests import our package into a real
collection (the ``anki`` library), take each card's HTML as Anki renders it, and put it in a page
the way Anki's reviewer does (``aqt/reviewer.py``): the ``[[type:Answer]]`` placeholder becomes
the reviewer's input box on the front and the real ``compare_answer`` output on the back, the body
gets the ``card`` class, and ``nightMode`` in dark mode. Then headless Chromium types into it,
measures it at a phone's 400 px and a desktop's 900 px, and saves screenshots.
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

import genanki
import pytest
from anki.collection import Collection
from anki.import_export_pb2 import ImportAnkiPackageOptions, ImportAnkiPackageRequest
from chromium import measure, requires_chromium, screenshot

from bertdrill.adapters import catalogs
from bertdrill.adapters.export import anki as bertdrill_anki
from bertdrill.adapters.lessons import read_lesson

pytestmark = requires_chromium

SHIPPED = Path(__file__).resolve().parent.parent / "decks" / "bert-basics.toml"
TYPE_PATTERN = r"\[\[type:(.+?)\]\]"
# What Anki's reviewer defines before it shows a card: the function it calls to read the typed answer.
REVIEWER_SCRIPT = ('<script>function getTypedAnswer() { var box = document.getElementById("typeans");'
                   " return box ? box.value : null; }</script>")


@pytest.fixture(scope="module")
def collections(tmp_path_factory):
    """A collection per language with the shipped lesson imported, as File > Import does."""
    lesson = read_lesson(SHIPPED)
    found = {}
    for language in ("en", "tr"):
        folder = tmp_path_factory.mktemp(f"anki-{language}")
        package = folder / "bert.apkg"
        bertdrill_anki.export([lesson], package, language, say_in=catalogs.translations())
        col = Collection(str(folder / "collection.anki2"))
        col.import_anki_package(ImportAnkiPackageRequest(package_path=str(package),
                                                         options=ImportAnkiPackageOptions()))
        col.models._clear_cache()
        found[language] = col
    yield found
    for col in found.values():
        col.close()


def card(col: Collection, key: str, language: str):
    note_guid = genanki.guid_for("bert-basics", key, language)
    (note,) = [note for note in map(col.get_note, col.find_notes("")) if note.guid == note_guid]
    (found,) = note.cards()
    return found


def reviewer_page(col: Collection, found, side: str, typed: str = "", dark: bool = False) -> str:
    """The card's side in a page as Anki's reviewer builds it (aqt/reviewer.py)."""
    html = found.question() if side == "front" else found.answer()
    note = found.note()
    field = re.search(TYPE_PATTERN, html)
    if field:
        settings = next(f for f in found.note_type()["flds"] if f["name"] == field.group(1))
        font, size = settings["font"], settings["size"]
        if side == "front":
            box = (f'<center><input type=text id=typeans onkeypress="_typeAnsPress();" '
                   f"style=\"font-family: '{font}'; font-size: {size}px;\"></center>")
        else:
            compared = col.compare_answer(note[field.group(1)], typed, True)
            box = f"<div style=\"font-family: '{font}'; font-size: {size}px\">{compared}</div>"
        html = re.sub(TYPE_PATTERN, lambda _: box, html)
    body_class = "card card1" + (" nightMode night_mode" if dark else "")
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">{REVIEWER_SCRIPT}</head>'
            f'<body class="{body_class}"><div id="qa">{html}</div></body></html>')


# What a learner types, and what Anki then compares with the note's Answer field.
TYPE_NUMBER = """
var box = document.getElementById("typeans");
var results = {};
var typed = %s;
for (var i = 0; i < typed.length; i++) {
  box.value = typed[i];
  box.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", code: "Enter", bubbles: true}));
  var afterEnter = box.value;
  box.value = typed[i];
  var read = window.getTypedAnswer();  /* the Show Answer button: Anki calls getTypedAnswer() */
  results[typed[i]] = [afterEnter, read];
}
return results;
"""


@pytest.mark.parametrize(("language", "typed"), [
    ("en", ["23,837,184", "23 837 184", "23837184", "23_837_184", " 23,837,184 "]),
    ("tr", ["23.837.184", "23 837 184", "23837184"]),
])
def test_numbers_typed_with_separators_are_right(collections, language, typed):
    col = collections[language]
    numeric = card(col, "embedding-params@bert-base", language)
    assert numeric.note()["Answer"] == "23837184"
    page = reviewer_page(col, numeric, "front")
    results = measure(page, TYPE_NUMBER % typed_json(typed), width=400)
    for text in typed:
        after_enter, read = results[text]
        assert after_enter == read == "23837184", (text, results[text])
        compared = col.compare_answer("23837184", read, True)
        assert "typeBad" not in compared and "typeMissed" not in compared, compared


def test_a_wrong_number_or_words_stay_as_typed_and_are_marked_wrong(collections):
    col = collections["en"]
    page = reviewer_page(col, card(col, "embedding-params@bert-base", "en"), "front")
    typed = ["23,837,185", "about 23M", "23.837"]
    results = measure(page, TYPE_NUMBER % typed_json(typed), width=400)
    assert results["23,837,185"][1] == "23837185"
    assert results["about 23M"][1] == "about 23M"  # not a number: left alone
    assert results["23.837"][1] == "23.837"  # in English a single dot is a decimal point
    for text in typed:
        assert "typeBad" in col.compare_answer("23837184", results[text][1], True) or \
            "typeMissed" in col.compare_answer("23837184", results[text][1], True)


def test_the_script_leaves_other_note_types_typed_answers_alone(collections):
    col = collections["en"]
    page = reviewer_page(col, card(col, "embedding-params@bert-base", "en"), "front")
    # Anki keeps its web view between cards: after our card, a user's own note type with a typed
    # answer must keep what was typed, even if it looks like a number.
    script = """
    document.getElementById("qa").innerHTML = '<input type=text id=typeans>';
    var box = document.getElementById("typeans");
    box.value = "1,234";
    return window.getTypedAnswer();
    """
    assert measure(page, script, width=400) == "1,234"


def test_the_front_says_what_to_type_and_the_back_shows_the_number_grouped(collections):
    for language, grouped in (("en", "23,837,184"), ("tr", "23.837.184")):
        col = collections[language]
        numeric = card(col, "embedding-params@bert-base", language)
        hint = measure(reviewer_page(col, numeric, "front"), 'return document.querySelector(".hint").innerText;',
                       width=400)
        assert hint == catalogs.translations().get(language, str)(bertdrill_anki.LABEL_TYPE_NUMBER)
        shown = measure(reviewer_page(col, numeric, "back", typed="23837184"),
                        'return document.querySelector(".expected-number").innerText;', width=400)
        assert shown == grouped


def typed_json(values: list[str]) -> str:
    return json.dumps(values)


# --- layout: phone and desktop, light and dark -----------------------------------------------

OVERFLOW = """
var pres = Array.prototype.slice.call(document.querySelectorAll("pre"));
return {
  page: [document.documentElement.scrollWidth, window.innerWidth],
  pres: pres.map(function (pre) { return [pre.scrollWidth, pre.clientWidth]; }),
  text: document.body.innerText
};
"""


@pytest.mark.parametrize("width", [400, 900])
def test_practice_code_wraps_instead_of_hiding_its_end(collections, width):
    col = collections["en"]
    practice = card(col, "count-bert-base", "en")
    for side in ("front", "back"):
        found = measure(reviewer_page(col, practice, side), OVERFLOW, width=width)
        page_width, window_width = found["page"]
        assert page_width <= window_width, f"{side} scrolls sideways at {width} px"
        for scroll, client in found["pres"]:
            assert scroll <= client, f"a code block on the {side} scrolls sideways at {width} px"
        assert "3072" in found["text"]


def test_practice_back_labels_its_two_boxes(collections):
    col = collections["en"]
    found = measure(reviewer_page(col, card(col, "count-bert-base", "en"), "back"), OVERFLOW, width=400)
    text = found["text"]
    assert text.index("EXPECTED OUTPUT") < text.index("23837184") < text.index("SOLUTION") < text.index("embeddings =")


STYLE = """
var box = document.getElementById("typeans");
var style = getComputedStyle(box);
return [style.fontFamily, style.backgroundColor, style.color, box.getBoundingClientRect().width,
        getComputedStyle(document.body).backgroundColor];
"""


def luminance(colour: str) -> float:
    red, green, blue = (int(part) for part in re.findall(r"\d+", colour)[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


@pytest.mark.parametrize("dark", [False, True])
def test_the_answer_box_is_monospace_and_follows_dark_mode(collections, dark):
    col = collections["en"]
    page = reviewer_page(col, card(col, "embedding-params@bert-base", "en"), "front", dark=dark)
    family, background, colour, width, body = measure(page, STYLE, width=400, dark=dark)
    assert "monospace" in family and "Liberation Sans" not in family
    assert width > 300  # the box spans the card, not Anki's default 20 characters
    if dark:
        assert luminance(background) < 0.2 and luminance(colour) > 0.7 and luminance(body) < 0.2
    else:
        assert luminance(background) > 0.9 and luminance(colour) < 0.3


def test_match_cards_ask_a_question(collections):
    col = collections["en"]
    text = measure(reviewer_page(col, card(col, "bert-base-match#ffn-size", "en"), "front"),
                   "return document.body.innerText;", width=400)
    assert text.split() == "Match the BERT-base settings. FFN size → ?".split()


SHOTS = [("embedding-params@bert-base", "numeric"), ("count-bert-base", "practice"),
         ("bert-base-match#ffn-size", "match"), ("attention-projections", "blank"), ("bert-vs-gpt", "choice")]


@pytest.mark.parametrize("dark", [False, True])
@pytest.mark.parametrize("width", [400, 900])
def test_screenshots_of_every_kind(collections, tmp_path, width, dark):
    """One screenshot per width and mode with every kind's front and back stacked, to look at (kept
    in pytest's temporary folder); in dark mode every card is dark all over."""
    from PIL import Image, ImageStat

    col = collections["en"]
    pages = [reviewer_page(col, card(col, key, "en"), side, typed="23837184", dark=dark)
             for key in SHOT_KEYS for side in ("front", "back")]
    frames = "".join(f'<iframe srcdoc="{escape(page, quote=True)}" style="display:block;width:100%;'
                     f'height:{SHOT_HEIGHT}px;border:0;border-bottom:{SHOT_GAP}px solid #888"></iframe>'
                     for page in pages)
    height = len(pages) * (SHOT_HEIGHT + SHOT_GAP)
    png = screenshot(f'<!DOCTYPE html><html><body style="margin:0">{frames}</body></html>',
                     tmp_path / f"cards-{width}-{'dark' if dark else 'light'}.png", width=width, height=height,
                     dark=dark)
    with Image.open(png) as image:
        assert image.size == (width, height)
        for index in range(len(pages)):
            top = index * (SHOT_HEIGHT + SHOT_GAP)
            mean = ImageStat.Stat(image.crop((0, top, width, top + SHOT_HEIGHT)).convert("L")).mean[0]
            assert (mean < 80) if dark else (mean > 170), (png, index, mean)


SHOT_KEYS = ["embedding-params@bert-base", "count-bert-base", "bert-base-match#ffn-size", "attention-projections",
             "bert-vs-gpt"]
SHOT_HEIGHT, SHOT_GAP = 560, 6
