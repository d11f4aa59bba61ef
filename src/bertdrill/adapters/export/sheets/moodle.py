"""Quiz questions as Moodle XML, the richer of Moodle's two import formats.

Like GIFT (see :mod:`.gift`), the file holds the sheet's questions once, in lesson order (a
numeric item once per parameter set): Moodle shuffles per attempt itself. Each lesson gets its own
category (``$course$/top/bertdrill/<title>``, in the sheet's language), and each question:

- choice: ``multichoice``, one right answer, answers shuffled by Moodle;
- numeric: ``numerical`` with the absolute tolerance and no units;
- match: ``matching``, one subquestion per row;
- fact: ``shortanswer`` with every accepted form when the lesson lists some, otherwise an
  ``essay`` whose grader information holds the model answer;
- blank: ``cloze``, the code with a ``{N:SHORTANSWER:=answer~=other}`` where the blank is;
- practice: ``essay``; the grader information holds the expected output and a solution.

Every question's ``defaultgrade`` is its points on the sheet (a cloze's, the mark of its blank),
and its general feedback is the lesson's explanation. Texts are HTML, escaped, so ``<script>`` in a
lesson reaches Moodle as text; the XML writer escapes what XML needs.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from fractions import Fraction
from html import escape
from typing import assert_never

from bertdrill import __version__
from bertdrill.adapters.export.sheets.gift import category, lesson_of
from bertdrill.adapters.export.sheets.model import Question, Sheet
from bertdrill.core import formula
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson import BLANK

PENALTY = "0.3333333"  # Moodle's default penalty for each wrong try in adaptive mode


def render(sheet: Sheet) -> str:
    quiz = ElementTree.Element("quiz")
    quiz.append(ElementTree.Comment(f" bertdrill {__version__}: {len(sheet.bank)} questions, language "
                                    f"{sheet.language}, seed {sheet.seed}. Moodle: Question bank > Import > "
                                    "Moodle XML format. "))
    lesson = None
    for question in sheet.bank:
        if lesson_of(question) != lesson:
            lesson = lesson_of(question)
            quiz.append(_category(category(sheet, lesson)))
        quiz.append(_question(sheet, question))
    ElementTree.indent(quiz)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(quiz, encoding="unicode") + "\n"


def _text(parent: ElementTree.Element, tag: str, text: str, text_format: str | None = None) -> ElementTree.Element:
    element = ElementTree.SubElement(parent, tag, {"format": text_format} if text_format else {})
    ElementTree.SubElement(element, "text").text = text
    return element


def _value(parent: ElementTree.Element, tag: str, value: str) -> None:
    ElementTree.SubElement(parent, tag).text = value


def _category(path: str) -> ElementTree.Element:
    element = ElementTree.Element("question", {"type": "category"})
    _text(element, "category", path)
    return element


def _html(text: str) -> str:
    return escape(text, quote=False).replace("\n", "<br>")


def _pre(code: str) -> str:
    return f"<pre>{escape(code.rstrip(chr(10)), quote=False)}</pre>"


def _question(sheet: Sheet, question: Question) -> ElementTree.Element:
    qtype = _type(question)
    element = ElementTree.Element("question", {"type": qtype})
    _text(element, "name", question.id)
    _text(element, "questiontext", _question_text(sheet, question), "html")
    _text(element, "generalfeedback", _html(question.explanation), "html")
    if qtype != "cloze":  # a cloze's grade is the sum of its blanks' marks
        _value(element, "defaultgrade", str(question.points))
    _value(element, "penalty", PENALTY)
    _value(element, "hidden", "0")
    match question.kind:
        case Kind.CHOICE:
            _choice(element, question)
        case Kind.NUMERIC:
            _numeric(element, question)
        case Kind.MATCH:
            _match(element, question)
        case Kind.FACT:
            if qtype == "shortanswer":
                _short_answer(element, _accepted(question))
            else:
                _text(element, "graderinfo", _html(question.answer), "html")
        case Kind.BLANK:
            pass  # the answers are in the question text
        case Kind.PRACTICE:
            _text(element, "graderinfo", _pre(question.answer) + _pre(question.solution), "html")
        case _:
            assert_never(question.kind)
    if qtype == "essay":
        _value(element, "responseformat", "monospaced" if question.kind == Kind.PRACTICE else "editor")
        _value(element, "responserequired", "1")
        _value(element, "responsefieldlines", "15" if question.kind == Kind.PRACTICE else "5")
    return element


def _type(question: Question) -> str:
    match question.kind:
        case Kind.CHOICE:
            return "multichoice"
        case Kind.NUMERIC:
            return "numerical"
        case Kind.MATCH:
            return "matching"
        case Kind.FACT:
            # A sentence typed word for word is rarely the lesson's: short answer only where the lesson
            # lists the short forms it accepts.
            return "shortanswer" if question.accept else "essay"
        case Kind.BLANK:
            return "cloze" if _cloze_safe(question) else "essay"
        case Kind.PRACTICE:
            return "essay"
        case _:
            assert_never(question.kind)


def _question_text(sheet: Sheet, question: Question) -> str:
    text = f"<p>{_html(question.prompt)}</p>"
    if question.kind == Kind.BLANK:
        before, _, after = question.code.partition(BLANK)
        if _cloze_safe(question):
            answers = "~".join(f"={_cloze_answer(answer)}" for answer in _accepted(question))
            blank = f"{{{question.points}:SHORTANSWER:{answers}}}"
            return text + f"<pre>{escape(before, quote=False)}{blank}{escape(after.rstrip(chr(10)), quote=False)}</pre>"
        return text + _pre(before + "____" + after)
    if question.kind == Kind.PRACTICE:
        return text + _pre(question.code)
    if question.kind == Kind.NUMERIC and sheet.legend:
        values = ", ".join(f"{row.name} = {value}" for row in sheet.legend for title, value in row.values
                           if title == question.set_title)
        if values:
            text += f"<p>{_html(f'{sheet.labels.given} ({question.set_title}): {values}')}</p>"
    return text


def _accepted(question: Question) -> list[str]:
    return list(dict.fromkeys([question.answer, *question.accept]))


def _cloze_safe(question: Question) -> bool:
    """Whether every accepted answer survives Moodle's cloze syntax: a ``~`` cannot be escaped there."""
    return all("~" not in answer and answer.strip() for answer in _accepted(question))


def _cloze_answer(answer: str) -> str:
    # Moodle decodes HTML entities in a cloze answer, then turns \} and \# back into } and #.
    return escape(answer, quote=False).replace("\\", "&#92;").replace("}", "\\}").replace("#", "\\#")


def _choice(element: ElementTree.Element, question: Question) -> None:
    _value(element, "single", "true")
    _value(element, "shuffleanswers", "true")
    _value(element, "answernumbering", "abc")
    for index, choice in enumerate(question.choices):
        answer = _text(element, "answer", _html(choice), "html")
        answer.set("fraction", "100" if index == question.correct[0] else "0")
        _text(answer, "feedback", "", "html")


def _numeric(element: ElementTree.Element, question: Question) -> None:
    exact = question.value if question.value is not None else 0  # a numeric question always has one
    answer = ElementTree.SubElement(element, "answer", {"fraction": "100"})
    ElementTree.SubElement(answer, "text").text = formula.format_number(exact)
    _value(answer, "tolerance", formula.format_number(abs(Fraction(exact)) * question.tolerance))
    _text(answer, "feedback", "", "html")
    _value(element, "showunits", "3")  # no units: the number alone


def _match(element: ElementTree.Element, question: Question) -> None:
    _value(element, "shuffleanswers", "true")
    for term, index in zip(question.rows, question.correct):
        sub = _text(element, "subquestion", _html(term), "html")
        _text(sub, "answer", question.choices[index])


def _short_answer(element: ElementTree.Element, answers: list[str]) -> None:
    _value(element, "usecase", "0")
    for text in answers:
        # Plain text compared with what is typed; "*" would be Moodle's wildcard.
        answer = _text(element, "answer", text.replace("*", "\\*"))
        answer.set("fraction", "100")
        _text(answer, "feedback", "", "html")
