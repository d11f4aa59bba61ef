"""Quiz questions as Moodle GIFT, for a course's question bank.

An LMS shuffles questions and answers for every attempt itself, so the GIFT
file holds the sheet's questions once, in lesson order (a numeric item once
per parameter set), rather than the paper versions.

How each kind maps onto Moodle's question types (as Moodle's GIFT importer,
``qformat_gift::readquestion``, detects them):

- choice: multiple choice, ``{=right ~wrong ...}``;
- match: matching, ``{=term -> answer ...}``;
- numeric: numerical, ``{#=%100%value:tolerance}``, the tolerance absolute;
- blank: short answer in Moodle's missing-word form: the ``{=answer}`` stands
  where the blank is and Moodle prints ``_____`` there;
- fact: short answer when the lesson lists accepted answers, otherwise an
  essay whose general feedback (``####``) holds the model answer;
- practice: an essay; its general feedback holds the expected output and the
  sample solution.

Texts are written as ``[html]`` and HTML-escaped, so ``<script>`` in a lesson
reaches Moodle as text. Short-answer answers are plain text compared with what
the student types, so they are not HTML-escaped; their ``*`` is escaped as
Moodle's wildcard. Then GIFT's own specials ``~ = # { } :`` and ``\\`` get
a backslash, and line breaks become ``\\n``, so every question stays on one
block of lines that Moodle cannot misread.
"""

from __future__ import annotations

import re
from fractions import Fraction
from html import escape as html_escape
from typing import TYPE_CHECKING, assert_never

from bertdrill.adapters.export.sheets.model import Bank, Question, Sheet, Version
from bertdrill.core import formula
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson import BLANK

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

SHORT_TERM = 3  # words: a fact whose answer is this short is a term a list of strings can judge
_GIFT_SPECIALS = {"\\": "\\\\", "~": "\\~", "=": "\\=", "#": "\\#", "{": "\\{", "}": "\\}", ":": "\\:",
                  "\n": "\\n", "\r": ""}
# A field Moodle reads as text with a format must not start with "[" (it would be taken for a format
# such as [plain]); an answer must not start with "%" (it would be taken for a weight such as %50%).
_LEADING = {"[": "&#91;", "%": "&#37;"}


def escape(text: str) -> str:
    """GIFT's escaping, as Moodle's exporter writes it (``repchar``)."""
    return "".join(_GIFT_SPECIALS.get(char, char) for char in text)


def html(text: str) -> str:
    """A lesson text as an escaped HTML fragment, safe as the first thing in a GIFT field."""
    fragment = html_escape(text, quote=False).replace("\n", "<br>")
    if fragment[:1] in _LEADING:
        fragment = _LEADING[fragment[0]] + fragment[1:]
    return escape(fragment)


def code(text: str, *, open_: bool = True, close: bool = True) -> str:
    """Code as a ``<pre>`` block: line breaks and indentation kept; or one end of such a block."""
    if open_ and close:
        text = text.rstrip("\n")
    return escape(("<pre>" if open_ else "") + html_escape(text, quote=False) + ("</pre>" if close else ""))


def plain_answer(text: str) -> str:
    """A short answer's text: compared with the student's, so not HTML; ``*`` is Moodle's wildcard.

    Moodle would take a leading ``[plain]`` for a format and drop it; an explicit
    format in front keeps any leading ``[`` as text (an answer keeps only its text).
    """
    text = text.replace("*", "\\*")
    return escape(f"[plain]{text}" if text.startswith("[") else text)


def render(sheet: Sheet) -> str:
    """The bank as one text (:func:`chunks` joined)."""
    return "".join(chunks(sheet))


def chunks(sheet: Sheet) -> Iterator[str]:
    """The bank a piece at a time: its header, then each category's line and each question."""
    entries = entries_of(sheet)
    return _chunks(sheet, entries, len(entries))


def bank_chunks(bank: Bank) -> Iterator[str]:
    """A bank written a lesson at a time (:class:`~.model.Bank`): each lesson's questions are made when the
    questions before them are written."""
    return _chunks(bank.sheet, (entry for part in bank.parts for entry in entries_of(part())), bank.count)


def _chunks(sheet: Sheet, entries: Iterable[tuple[str, Question]], count: int) -> Iterator[str]:
    header = [
        f"// {count} questions, language {sheet.language}, seed {sheet.seed}.",  # under the mark's line
        "// Moodle: Question bank > Import > GIFT format. GIFT has no marks: Moodle gives each question 1;",
        "// each question's points are in its tag points-N (Moodle XML keeps them as the question's mark).",
    ]
    yield "\n".join(header)
    where = None
    for path, question in entries:
        if path != where:
            where = path
            yield f"\n\n$CATEGORY: {path}"
        yield "\n\n" + _question(sheet, question)
    yield "\n"


def entries_of(sheet: Sheet) -> list[tuple[str, Question]]:
    """Each question with its category: the bank's, or with ``--students`` each student's own questions
    in a category of their own (``.../<title>/<student>``)."""
    if sheet.versions and sheet.versions[0].student_number:
        return [(f"{category(sheet, lesson_of(question))}/{student_label(sheet, version)}", question)
                for version in sheet.versions for question in version.questions]
    return [(category(sheet, lesson_of(question)), question) for question in sheet.bank]


def student_label(sheet: Sheet, version: Version) -> str:
    """A student's category name: ``07 Ayşe Yılmaz``, or ``07`` for a student known by number; numbered so
    Moodle lists them in the roster's order. A ``/`` is written ``//``, as in any category path."""
    width = len(str(len(sheet.versions)))
    label = f"{version.student_number:0{width}d}" + (f" {version.student}" if version.student else "")
    return html_escape(" ".join(label.split()), quote=False).replace("/", "//")


def lesson_of(question: Question) -> str:
    return question.id.split("/", 1)[0]


def category(sheet: Sheet, lesson_id: str) -> str:
    """The lesson's category in the course's question bank: ``$course$/top/bertdrill/<title>``.

    Moodle splits a category path at ``/``; a ``/`` in the title is written ``//``. Moodle shows a
    category's name as HTML, so the title is escaped.
    """
    title = html_escape(" ".join(dict(sheet.categories).get(lesson_id, lesson_id).split()), quote=False)
    return "$course$/top/bertdrill/" + title.replace("/", "//")


def _question(sheet: Sheet, question: Question) -> str:
    # Moodle reads [id:...] and [tag:...] in a question's comment lines: its idnumber and tags.
    tags = "".join(f" [tag:{_token(tag)}]" for tag in (*question.tags, f"points-{question.points}"))
    comment = f"// {question.id}: {question.kind} [id:{_token(question.id)}]{tags}"
    head = f"::{escape(question.id)}::[html]{html(question.prompt)}{_given(sheet, question)}"
    if question.kind == Kind.BLANK and _short_answer(question):
        # Moodle's missing-word form: the answer stands where the blank is, and Moodle draws the blank.
        before, _, after = question.code.partition(BLANK)
        if re.fullmatch(r"\d{1,30}(?:\.\d{1,30})?", question.answer.strip()) and not question.accept:
            answers = f"#=%100%{question.answer.strip()}:0"  # a number: 4 and 4.0 are both right
        else:
            answers = " ".join(f"=%100%{plain_answer(answer)}" for answer in _accepted(question))
        blank = f"{{{answers}{_feedback(question)}}}"
        return f"{comment}\n{head}{code(before, close=False)}{blank}{code(after, open_=False)}"
    if question.kind in (Kind.BLANK, Kind.PRACTICE):
        head += code(question.code)
    return f"{comment}\n{head}{{\n{_answers(question)}{_general(question)}}}"


def _token(text: str) -> str:
    """Text inside Moodle's ``[id:...]`` or ``[tag:...]``: one line, a ``]`` escaped as ``\\]``."""
    return " ".join(text.split()).replace("]", "\\]").replace("<", "").replace(">", "")


def _given(sheet: Sheet, question: Question) -> str:
    """--given: the legend's values for the parameter set a numeric question asks about."""
    if question.kind != Kind.NUMERIC or not sheet.legend:
        return ""
    values = ", ".join(f"{row.name} = {value}" for row in sheet.legend for title, value in row.values
                       if title == question.set_title)
    return escape("<br>") + html(f"{sheet.labels.given} ({question.set_title}): {values}") if values else ""


def _short_answer(question: Question) -> bool:
    """Whether Moodle can take the question as short answer.

    An answer holding "->" would make Moodle read the question as matching, and
    GIFT has no escape for it; such a question becomes an essay instead.
    """
    if question.kind == Kind.FACT and (question.claim is not None or not question.accept
                                       or len(question.answer.split()) > SHORT_TERM):
        return False  # a number, or a sentence: Moodle compares a short answer's whole string
    return not any("->" in answer for answer in _accepted(question))


def _accepted(question: Question) -> list[str]:
    return list(dict.fromkeys([question.answer, *question.accept]))


def _choice(question: Question) -> str:
    right = question.correct[0]
    return "".join(f"\t{'=' if i == right else '~'}{html(choice)}\n" for i, choice in enumerate(question.choices))


def _match(question: Question) -> str:
    # Moodle reads a pair as text up to the first "->": HTML escaping turns any ">" in the term into "&gt;".
    return "".join(f"\t={html(term)} -> {html(question.choices[index])}\n"
                   for term, index in zip(question.rows, question.correct))


def _numeric(question: Question) -> str:
    exact = question.value if question.value is not None else 0  # a numeric question always has one
    value = formula.format_number(exact)
    tolerance = formula.format_number(abs(Fraction(exact)) * question.tolerance)
    return f"\t#\n\t=%100%{value}:{tolerance}\n"


def _fact(question: Question) -> str:
    if question.claim is not None:  # one number the formulas compute: graded as a number
        value, tolerance = question.claim
        return f"\t#\n\t=%100%{formula.format_number(value)}:{formula.format_number(tolerance)}\n"
    if not _short_answer(question):
        return ""  # an essay; the model answer goes into the general feedback
    return "".join(f"\t=%100%{plain_answer(answer)}\n" for answer in _accepted(question))


def _answers(question: Question) -> str:
    match question.kind:
        case Kind.CHOICE:
            return _choice(question)
        case Kind.MATCH:
            return _match(question)
        case Kind.NUMERIC:
            return _numeric(question)
        case Kind.FACT:
            return _fact(question)
        case Kind.BLANK | Kind.PRACTICE:
            return ""  # no answers: Moodle makes an essay, graded by the teacher
        case _:
            assert_never(question.kind)


def _general(question: Question) -> str:
    """General feedback, shown after an attempt: the explanation, and the model answer of an essay."""
    parts = []
    if question.kind in (Kind.FACT, Kind.BLANK) and not _short_answer(question):
        parts.append(html(question.answer))
    if question.kind == Kind.PRACTICE:
        parts.append(code(question.answer) + code(question.solution))
    if question.explanation:
        parts.append(html(question.explanation))
    if not parts:
        return ""
    return "\t####" + escape("<br>").join(parts) + "\n"


def _feedback(question: Question) -> str:
    return f" ####{html(question.explanation)}" if question.explanation else ""
