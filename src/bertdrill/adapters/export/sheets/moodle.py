"""Quiz questions as Moodle XML, the richer of Moodle's two import formats.

Like GIFT (see :mod:`.gift`), the file holds the sheet's questions once, in lesson order (a
numeric item once per parameter set): Moodle shuffles per attempt itself. Each lesson gets its own
category (``$course$/top/bertdrill/<title>``, in the sheet's language), and each question:

- choice: ``multichoice``, one right answer, answers shuffled by Moodle;
- numeric: ``calculatedsimple`` when the lesson lets the item vary (see :mod:`.calculated`): its
  formula in Moodle's syntax over wildcards such as ``{d}``, and a dataset of up to 100 of the
  lesson's variants, so each student gets fresh numbers and Moodle grades them; otherwise
  ``numerical`` with the absolute tolerance and no units, once per parameter set;
- match: ``matching``, one subquestion per row;
- fact: ``numerical`` when its answer is one number the formulas compute (``~23 million``: the exact
  value with the claim's tolerance, so ``23,440,896``, ``23440896`` and ``23000000`` are right);
  ``cloze`` with a ``NUMERICAL`` part per number when the answer states several (a model's
  settings); ``shortanswer`` when the answer is itself a short term that a list of strings can judge;
  otherwise an ``essay`` whose grader information holds the model answer (a sentence typed word for
  word is rarely the lesson's: Moodle's short answer compares whole strings);
- blank: ``cloze``, the code with a ``{N:SHORTANSWER:=answer~=other}`` (``NUMERICAL`` for a number)
  where the blank is;
- practice: ``essay``; the grader information holds the expected output and a solution.

Every question's ``defaultgrade`` is its points on the sheet (a cloze's, the marks of its parts),
its general feedback the lesson's explanation, its ``idnumber`` its card's id and its tags the
item's. Texts are HTML, escaped, so ``<script>`` in a lesson reaches Moodle as text; the XML writer
escapes what XML needs.

With ``--students`` the file holds one category per student (``.../<title>/<student>``), each
with the student's own questions: the numbers of their paper, as numerical questions.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from fractions import Fraction
from html import escape
from typing import TYPE_CHECKING, Any, assert_never

from bertdrill.adapters.export.sheets.calculated import Calculated, Segment, moodle_number
from bertdrill.adapters.export.sheets.gift import category, lesson_of, student_label
from bertdrill.adapters.export.sheets.model import Bank, Question, Sheet
from bertdrill.core import formula
from bertdrill.core.formula import Number
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson import BLANK

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

PENALTY = "0.3333333"  # Moodle's default penalty for each wrong try in adaptive mode
SHORT_TERM = 3  # words: a fact whose answer is this short is a term a list of strings can judge


def render(sheet: Sheet) -> str:
    """The bank as one text (:func:`chunks` joined)."""
    return "".join(chunks(sheet))


def chunks(sheet: Sheet) -> Iterator[str]:
    """The bank as one ``<quiz>``, a piece at a time: its XML declaration's line, then each question, indented
    as :func:`ElementTree.indent` would indent the whole.

    Each question is built, indented and written on its own: a tree of the whole bank held 100,000
    questions' elements at once (4.8 GB for the benchmark's lessons, whose bank is 750 MB of XML).
    """
    entries = _entries(sheet)
    return _chunks(sheet, entries, len(entries))


def bank_chunks(bank: Bank) -> Iterator[str]:
    """:func:`chunks` of a bank written a lesson at a time (:class:`~.model.Bank`): each lesson's questions are
    made when the questions before them are written."""
    return _chunks(bank.sheet, (entry for part in bank.parts for entry in _entries(part())), bank.count)


def _chunks(sheet: Sheet, entries: Iterable[tuple[str, Question, Calculated | None]], count: int) -> Iterator[str]:
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    yield "<quiz>"
    for element in _elements(sheet, entries, count):
        ElementTree.indent(element, level=1)
        yield "\n  " + ElementTree.tostring(element, encoding="unicode")
    yield "\n</quiz>\n"


def _elements(sheet: Sheet, entries: Iterable[tuple[str, Question, Calculated | None]],
              count: int) -> Iterator[ElementTree.Element[Any]]:
    """The quiz's children in order: a comment, then each category followed by its questions."""
    yield ElementTree.Comment(f" {count} questions, language "  # the mark's line says by whom
                              f"{sheet.language}, seed {sheet.seed}. Moodle: Question bank > Import > "
                              "Moodle XML format. ")
    where = None
    for path, question, calculated in entries:
        if path != where:
            where = path
            yield _category(path)
        yield _question(sheet, question) if calculated is None else _calculated(sheet, question, calculated)


def count(sheet: Sheet) -> int:
    """How many questions :func:`render` writes."""
    return len(_entries(sheet))


def _entries(sheet: Sheet) -> list[tuple[str, Question, Calculated | None]]:
    """Each question with its category, and its calculated form where it has one.

    A bank asks a numeric item that may vary once, as a calculated question, instead of once per
    parameter set. A sheet per student holds each student's own questions in a category of their own.
    """
    if sheet.versions and sheet.versions[0].student_number:
        return [(f"{category(sheet, lesson_of(question))}/{student_label(sheet, version)}", question, None)
                for version in sheet.versions for question in version.questions]
    calculated = {question.item_key: question for question in sheet.calculated}
    entries: list[tuple[str, Question, Calculated | None]] = []
    done: set[str] = set()
    for question in sheet.bank:
        key = question.id.split("@", 1)[0]
        if question.kind is Kind.NUMERIC and key in calculated:
            if key in done:
                continue
            done.add(key)
            entries.append((category(sheet, lesson_of(question)), question, calculated[key]))
        else:
            entries.append((category(sheet, lesson_of(question)), question, None))
    return entries


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


def _header(element: ElementTree.Element, question: Question, text: str, feedback: str, grade: int | None) -> None:
    """What every question has: name, text, general feedback, grade, penalty, idnumber and tags."""
    _text(element, "name", question.id)
    _text(element, "questiontext", text, "html")
    _text(element, "generalfeedback", feedback, "html")
    if grade is not None:  # a cloze's grade is the sum of its parts' marks
        _value(element, "defaultgrade", str(grade))
    _value(element, "penalty", PENALTY)
    _value(element, "hidden", "0")
    _value(element, "idnumber", question.id)  # Moodle keeps an idnumber once per category
    if question.tags:
        tags = ElementTree.SubElement(element, "tags")
        for tag in question.tags:
            _text(tags, "tag", tag)


def _question(sheet: Sheet, question: Question) -> ElementTree.Element:
    qtype = _type(question)
    element = ElementTree.Element("question", {"type": qtype})
    _header(element, question, _question_text(sheet, question), _html(question.explanation),
            None if qtype == "cloze" else question.points)
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
            elif qtype == "numerical" and question.claim is not None:
                _number_answer(element, *question.claim)
            elif qtype == "essay":
                _text(element, "graderinfo", _html(question.answer), "html")
        case Kind.BLANK:
            if qtype == "essay":
                _text(element, "graderinfo", _html(question.answer), "html")
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
            if question.claim is not None:
                return "numerical"  # one number: graded as a number, however it is grouped
            if question.numbers:
                return "cloze"  # several numbers: a numerical part each
            # Moodle compares a short answer's whole string: fair only for a term typed whole.
            short = len(question.answer.split()) <= SHORT_TERM
            return "shortanswer" if short and _cloze_safe(question) else "essay"
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
            return text + f"<pre>{escape(before, quote=False)}{_blank(question)}" \
                          f"{escape(after.rstrip(chr(10)), quote=False)}</pre>"
        return text + _pre(before + "____" + after)
    if question.kind == Kind.FACT and question.numbers and question.claim is None:
        parts = sum(1 for _text, value in question.numbers if value is not None)
        marks = _marks(question.points, parts)
        pieces = []
        for (piece, value), mark in zip(question.numbers, _spread(question.numbers, marks)):
            pieces.append(_html(piece) if value is None else f"{{{mark}:NUMERICAL:={_number(value)}:0}}")
        return text + f"<p>{''.join(pieces)}</p>"
    if question.kind == Kind.PRACTICE:
        return text + _pre(question.code)
    if question.kind == Kind.NUMERIC and sheet.legend:
        values = ", ".join(f"{row.name} = {value}" for row in sheet.legend for title, value in row.values
                           if title == question.set_title)
        if values:
            text += f"<p>{_html(f'{sheet.labels.given} ({question.set_title}): {values}')}</p>"
    return text


def _marks(points: int, parts: int) -> list[int]:
    """The question's points over its cloze parts, whole marks, the first parts taking what is left over."""
    share, extra = divmod(max(points, parts), parts)
    return [share + (1 if index < extra else 0) for index in range(parts)]


def _spread(pieces: tuple[tuple[str, object], ...], marks: list[int]) -> list[int]:
    """Each piece's mark (0 for text), in order."""
    found = iter(marks)
    return [next(found) if value is not None else 0 for _text, value in pieces]


def _blank(question: Question) -> str:
    """The blank as a cloze part: numerical when the fill is a number (``4`` and ``4.0`` are both right)."""
    fill = question.answer.strip()
    if re.fullmatch(r"\d{1,30}(?:\.\d{1,30})?", fill) and not question.accept:
        return f"{{{question.points}:NUMERICAL:={_number(Fraction(fill))}:0}}"
    answers = "~".join(f"={_cloze_answer(answer)}" for answer in _accepted(question))
    return f"{{{question.points}:SHORTANSWER:{answers}}}"


def _number(value: object) -> str:
    assert isinstance(value, (int, Fraction))
    return formula.format_number(value)


def _calculated(sheet: Sheet, question: Question, calculated: Calculated) -> ElementTree.Element:
    """A numeric item as ``calculatedsimple``: the formula over wildcards, one private dataset per wildcard."""
    element = ElementTree.Element("question", {"type": "calculatedsimple"})
    named = replace(question, id=calculated.item_key)
    _header(element, named, f"<p>{_markup(calculated.text)}</p>", _markup(calculated.feedback), question.points)
    for tag, value in (("synchronize", "0"), ("single", "0"), ("answernumbering", "abc"), ("shuffleanswers", "0")):
        _value(element, tag, value)
    for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
        _text(element, tag, "", "html")
    whole = all(isinstance(value, int) for value in calculated.answers)
    answer = ElementTree.SubElement(element, "answer", {"fraction": "100"})
    ElementTree.SubElement(answer, "text").text = calculated.formula
    relative = calculated.tolerance > 0
    _value(answer, "tolerance", formula.format_number(calculated.tolerance) if relative else "0")
    _value(answer, "tolerancetype", "1" if relative else "2")  # 1 relative, 2 nominal (absolute)
    _value(answer, "correctanswerformat", "1")  # decimals
    _value(answer, "correctanswerlength", "0" if whole else "3")
    _text(answer, "feedback", "", "html")
    for tag, value in (("unitgradingtype", "0"), ("unitpenalty", "0.1000000"), ("showunits", "3"),
                       ("unitsleft", "0")):
        _value(element, tag, value)
    definitions = ElementTree.SubElement(element, "dataset_definitions")
    for name in calculated.wildcards:
        values = calculated.dataset(name)
        definition = ElementTree.SubElement(definitions, "dataset_definition")
        _text(definition, "status", "private")
        _text(definition, "name", name)
        _value(definition, "type", "calculatedsimple")
        _text(definition, "distribution", "uniform")
        _text(definition, "minimum", _dataset_value(min(values)))
        _text(definition, "maximum", _dataset_value(max(values)))
        _text(definition, "decimals", "0" if all(isinstance(value, int) for value in values) else "3")
        _value(definition, "itemcount", str(len(values)))
        items = ElementTree.SubElement(definition, "dataset_items")
        for number, shown in enumerate(values, start=1):
            item = ElementTree.SubElement(items, "dataset_item")
            _value(item, "number", str(number))
            _value(item, "value", _dataset_value(shown))
        _value(definition, "number_of_items", str(len(values)))
    return element


def _dataset_value(value: object) -> str:
    assert isinstance(value, (int, Fraction))
    text = moodle_number(value)
    assert text is not None, "calculated() keeps only variants whose values are decimals"
    return text


def _markup(segments: tuple[Segment, ...]) -> str:
    """A text for a calculated question: its words HTML-escaped with every brace an entity (Moodle would
    read ``{x}`` as a wildcard and ``{=...}`` as a formula), its wildcards and formulas as they are."""
    return "".join(markup if is_markup else _html(markup).replace("{", "&#123;").replace("}", "&#125;")
                   for is_markup, markup in segments)


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
    _number_answer(element, exact, abs(Fraction(exact)) * question.tolerance)


def _number_answer(element: ElementTree.Element, exact: Number, tolerance: Fraction) -> None:
    answer = ElementTree.SubElement(element, "answer", {"fraction": "100"})
    ElementTree.SubElement(answer, "text").text = formula.format_number(exact)
    _value(answer, "tolerance", formula.format_number(tolerance))
    _text(answer, "feedback", "", "html")
    _value(element, "showunits", "3")  # no units: the number alone


def _match(element: ElementTree.Element, question: Question) -> None:
    _value(element, "shuffleanswers", "true")
    for term, index in zip(question.rows, question.correct):
        sub = _text(element, "subquestion", _html(term), "html")
        _text(sub, "answer", question.choices[index])
    for index, decoy in enumerate(question.choices):  # a column's decoys: Moodle's answers without a question
        if index not in question.correct:
            _text(_text(element, "subquestion", "", "html"), "answer", decoy)


def _short_answer(element: ElementTree.Element, answers: list[str]) -> None:
    _value(element, "usecase", "0")
    for text in answers:
        # Plain text compared with what is typed; "*" would be Moodle's wildcard.
        answer = _text(element, "answer", text.replace("*", "\\*"))
        answer.set("fraction", "100")
        _text(answer, "feedback", "", "html")
