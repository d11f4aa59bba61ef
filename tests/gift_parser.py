"""A GIFT reader that decides everything the way Moodle's importer does.

The rules follow Moodle's ``question/format/gift/format.php``
(``qformat_gift::readquestion``) and the question splitting of
``qformat_default::readquestions``, step by step, including their quirks:

- a question is a run of non-empty lines; a line that is empty *or "0"* after
  trimming ends it (PHP's ``empty()``); lines starting with ``//`` are comments;
- ``\\\\`` then ``\\: \\# \\= \\{ \\} \\~ \\n`` are replaced by placeholders
  before anything else is looked at, and turned back into characters in texts;
- ``::name::`` at the start is the name; the answer section runs from the
  first ``{`` to the first ``}``; text after it makes a missing-word question
  (``_____`` where the answers stood);
- the last ``####`` in the answers starts the general feedback;
- the type: no braces -> description; empty answers -> essay; answers starting
  with ``#`` -> numerical; containing ``~`` -> multichoice; ``=`` and ``->``
  -> match; ``T``/``TRUE``/``F``/``FALSE`` -> truefalse; else shortanswer;
- comment lines are kept for the question's ``[id:...]`` (its idnumber) and ``[tag:...]`` (its tags),
  as ``extract_idnumber_and_tags_from_comment`` reads them (a ``]`` inside escaped as ``\\]``);
- a text starting with ``[html]``, ``[plain]``, ``[markdown]`` or
  ``[moodle]`` sets its format; ``%50%`` at an answer's start is its weight.

It is written from those rules for the tests, not taken from bertdrill, so it
catches an exporter that only agrees with itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PHP_WHITESPACE = " \t\n\r\0\x0b"
_ESCAPES = [("\\:", "&&058;"), ("\\#", "&&035;"), ("\\=", "&&061;"), ("\\{", "&&123;"),
            ("\\}", "&&125;"), ("\\~", "&&126;"), ("\\n", "&&010")]
_PLACEHOLDERS = [("&&058;", ":"), ("&&035;", "#"), ("&&061;", "="), ("&&123;", "{"),
                 ("&&125;", "}"), ("&&126;", "~"), ("&&010", "\n")]
_WEIGHT = re.compile(r"^%-*([0-9]{1,2})\.?([0-9]*)%")
_FORMATS = {"moodle", "html", "plain", "markdown"}
_PHP_NUMERIC = re.compile(r"^[ \t\n\r\v\f]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?[ \t\n\r\v\f]*$")


class GiftError(Exception):
    """Moodle would refuse this question (it reports an error and skips it)."""


@dataclass
class Text:
    text: str
    format: str = "moodle"


@dataclass
class GiftQuestion:
    qtype: str
    name: str | None = None
    text: Text = field(default_factory=lambda: Text(""))
    general_feedback: Text = field(default_factory=lambda: Text(""))
    answers: list[str] = field(default_factory=list)  # multichoice, shortanswer, numerical
    fractions: list[float] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    tolerances: list[str] = field(default_factory=list)  # numerical
    subquestions: list[Text] = field(default_factory=list)  # match
    subanswers: list[str] = field(default_factory=list)
    single: bool = True  # multichoice
    category: str = ""
    idnumber: str = ""
    tags: list[str] = field(default_factory=list)


def read(content: str) -> list[GiftQuestion]:
    """Every question Moodle would import from a GIFT file, in order."""
    lines = content.split("\n")
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    questions: list[GiftQuestion] = []
    current: list[str] = []
    for line in lines + [""]:
        line = line.strip(PHP_WHITESPACE)
        if line in ("", "0"):  # PHP empty()
            if current:
                question = read_question(current)
                if question is not None:
                    questions.append(question)
                current = []
        else:
            current.append(line)
    return questions


def escaped_pre(text: str) -> str:
    text = text.replace("\\\\", "&&092;")
    for escaped, placeholder in _ESCAPES:
        text = text.replace(escaped, placeholder)
    return text.replace("&&092;", "\\")


def escaped_post(text: str) -> str:
    for placeholder, char in _PLACEHOLDERS:
        text = text.replace(placeholder, char)
    return text


def text_with_format(text: str, default: str = "moodle") -> Text:
    result = Text(text, default)
    if text.startswith("["):
        end = text.find("]")
        name = text[1:end] if end != -1 else text[1:-1]
        if name in _FORMATS:
            result = Text(text[end + 1:], name)
    return Text(escaped_post(result.text).strip(PHP_WHITESPACE), result.format)


_ID = re.compile(r"\[id:((?:\\]|[^\]\x00-\x1f\x7f])+)]")
_TAG = re.compile(r"\[tag:((?:\\]|[^\]<>`\x00-\x1f\x7f]|)+)]")


def extract_idnumber_and_tags(comment: str) -> tuple[str, list[str]]:
    found = _ID.search(comment)
    idnumber = found.group(1).strip().replace("\\]", "]") if found else ""
    return idnumber, [tag.strip().replace("\\]", "]") for tag in _TAG.findall(comment)]


def read_question(lines: list[str]) -> GiftQuestion | None:
    comments = "".join(line.strip(PHP_WHITESPACE) + "\n" for line in lines
                       if line.strip(PHP_WHITESPACE).startswith("//"))
    lines = [" " if line.strip(PHP_WHITESPACE).startswith("//") else line for line in lines]
    text = "\n".join(lines).strip(PHP_WHITESPACE)
    if not text:
        return None
    text = escaped_pre(text)
    if re.match(r"^\$CATEGORY:", text):
        return GiftQuestion(qtype="category", category=text[10:].strip(PHP_WHITESPACE))

    name = None
    if text.startswith("::"):
        text = text[2:]
        end = text.find("::")
        if end != -1:
            name = escaped_post(text[:end]).strip()
            text = text[end + 2:].strip(PHP_WHITESPACE)

    start, finish = text.find("{"), text.find("}")
    description = start == -1 and finish == -1
    if description:
        answertext, length = "", 0
    elif start == -1 or finish == -1:
        raise GiftError(f"unbalanced braces in {text!r}")
    elif finish < start:
        raise GiftError(f"'}}' before '{{' in {text!r}")
    else:
        length = finish - start
        answertext = text[start + 1:finish].strip(PHP_WHITESPACE)

    if description:
        question_text = text
    elif text.endswith("}"):
        question_text = text[:start] + text[start + length + 1:]
    else:  # missing word: a blank where the answers stood
        question_text = text[:start] + "_____" + text[start + length + 1:]

    separator = answertext.rfind("####")
    general = ""
    if separator != -1:
        general = answertext[separator + 4:]
        answertext = answertext[:separator].strip(PHP_WHITESPACE)

    question = GiftQuestion(qtype="", name=name)
    question.text = text_with_format(question_text)
    question.general_feedback = text_with_format(general, question.text.format)

    if description:
        question.qtype = "description"
    elif answertext == "":
        question.qtype = "essay"
    elif answertext[0] == "#":
        question.qtype = "numerical"
    elif "~" in answertext:
        question.qtype = "multichoice"
    elif "=" in answertext and "->" in answertext:
        question.qtype = "match"
    else:
        check = answertext
        if answertext.find("#") > 0:
            check = answertext[:answertext.find("#")].strip(PHP_WHITESPACE)
        question.qtype = "truefalse" if check in ("T", "TRUE", "F", "FALSE") else "shortanswer"

    question.idnumber, question.tags = extract_idnumber_and_tags(comments)
    reader = {"multichoice": _multichoice, "match": _match, "shortanswer": _shortanswer,
              "numerical": _numerical, "truefalse": _truefalse}.get(question.qtype)
    if reader:
        reader(question, answertext)
    return question


def _split(answertext: str, separator: str, minimum: int) -> list[str]:
    answers = answertext.split(separator)
    answers[0] = answers[0].strip(PHP_WHITESPACE)
    if answers[0] in ("", "0"):  # PHP empty()
        answers.pop(0)
    if len(answers) < minimum:
        raise GiftError(f"needs at least {minimum} answers: {answertext!r}")
    return answers


def _weight(answer: str) -> tuple[float, str]:
    answer = answer[1:]
    end = answer.find("%")
    return float(answer[:end]) / 100, answer[end + 1:]


def _comment(answer: str, text_format: str) -> tuple[Text, str]:
    bits = answer.split("#", 1)
    feedback = text_with_format(bits[1].strip(PHP_WHITESPACE), text_format).text if len(bits) > 1 else ""
    return text_with_format(bits[0].strip(PHP_WHITESPACE), text_format), feedback


def _multichoice(question: GiftQuestion, answertext: str) -> None:
    question.single = "=" in answertext
    for answer in _split(answertext.replace("=", "~="), "~", 2):
        answer = answer.strip(PHP_WHITESPACE)
        if answer[:1] == "=":
            weight, answer = 1.0, answer[1:]
        elif _WEIGHT.match(answer):
            weight, answer = _weight(answer)
        else:
            weight = 0.0
        text, feedback = _comment(answer, question.text.format)
        question.answers.append(text.text)
        question.feedback.append(feedback)
        question.fractions.append(weight)


def _match(question: GiftQuestion, answertext: str) -> None:
    for answer in _split(answertext, "=", 2):
        answer = answer.strip(PHP_WHITESPACE)
        marker = answer.find("->")
        if marker == -1:
            raise GiftError(f"a matching pair needs '->': {answer!r}")
        question.subquestions.append(text_with_format(answer[:marker], question.text.format))
        question.subanswers.append(escaped_post(answer[marker + 2:]).strip(PHP_WHITESPACE))


def _shortanswer(question: GiftQuestion, answertext: str) -> None:
    for answer in _split(answertext, "=", 1):
        answer = answer.strip(PHP_WHITESPACE)
        weight = 1.0
        if _WEIGHT.match(answer):
            weight, answer = _weight(answer)
        text, feedback = _comment(answer, question.text.format)
        question.answers.append(text.text)
        question.feedback.append(feedback)
        question.fractions.append(weight)


def _numerical(question: GiftQuestion, answertext: str) -> None:
    answertext = answertext[1:]
    wrong = ""
    if "~" in answertext:
        position = answertext.find("~")
        answertext, wrong = answertext[:position], answertext[position:]
    answers = answertext.split("=")
    answers[0] = answers[0].strip(PHP_WHITESPACE)
    if answers[0] in ("", "0"):
        answers.pop(0)
    if not answers:
        raise GiftError("a numerical question needs an answer")
    for answer in answers:
        answer = answer.strip(PHP_WHITESPACE)
        weight = 1.0
        if _WEIGHT.match(answer):
            weight, answer = _weight(answer)
        text, feedback = _comment(answer, question.text.format)
        answer = text.text
        if answer.find("..") > 0:
            low, high = answer.split("..", 1)
            value = (float(high) + float(low)) / 2
            ans, tolerance = repr(value), repr(float(high) - value)
        elif answer.find(":") > 0:
            marker = answer.find(":")
            ans, tolerance = answer[:marker].strip(PHP_WHITESPACE), answer[marker + 1:].strip(PHP_WHITESPACE)
        else:
            ans, tolerance = answer.strip(PHP_WHITESPACE), "0"
        if not _PHP_NUMERIC.match(ans):
            ans = "*"  # Moodle's `!(is_numeric($ans) || $ans = '*')` quietly turns it into "any answer"
        if not _PHP_NUMERIC.match(tolerance):
            raise GiftError(f"tolerance is not a number: {tolerance!r}")
        question.answers.append(ans)
        question.tolerances.append(tolerance)
        question.fractions.append(weight)
        question.feedback.append(feedback)
    if wrong:
        question.answers.append("*")
        question.tolerances.append("")
        question.fractions.append(0.0)
        question.feedback.append(_comment(wrong, question.text.format)[1])


def _truefalse(question: GiftQuestion, answertext: str) -> None:
    bits = answertext.split("#", 2)
    answer = text_with_format(bits[0].strip(PHP_WHITESPACE), question.text.format).text
    question.answers.append("true" if answer in ("T", "TRUE") else "false")
