"""A Moodle XML reader that decides everything the way Moodle's importer does.

The rules follow Moodle's ``question/format/xml/format.php`` (``qformat_xml``) and, for cloze
questions, ``qtype_multianswer_extract_question`` in ``question/type/multianswer/questiontype.php``,
step by step:

- the file is ``<quiz>`` with ``<question type="...">`` children; ``category`` is a pseudo-question
  that sets the category of the questions after it (``<category><text>$course$/a/b</text>``);
- ``getpath(..., istext)`` trims what it reads (PHP's ``trim``); a missing ``<name>`` is an error;
- a text's format comes from its ``format`` attribute: ``moodle_auto_format``, ``html``,
  ``plain_text``, ``wiki_like``, ``markdown``; anything else (or none) is ``html``, and general
  feedback defaults to the question text's format;
- ``defaultgrade`` defaults to 1, ``penalty`` to 0.3333333;
- multichoice: ``single`` defaults to true, ``shuffleanswers`` to *false* (``trans_single``:
  "false", "0" and "" are false, anything else true), ``answernumbering`` to abc; each answer's
  ``fraction`` attribute is a percentage;
- shortanswer: ``usecase`` (0 ignores case); answers are plain text;
- numerical: each answer's ``<tolerance>`` (default 0), units optional (``showunits`` 3 = none);
- matching: ``shuffleanswers`` defaults to *true*; each subquestion has a text and an answer;
- calculated, calculatedsimple, calculatedmulti (``import_calculated``): each answer's formula text
  (``*`` when empty) with its ``tolerance``, ``tolerancetype``, ``correctanswerformat`` and
  ``correctanswerlength``, which the importer reads without a default (a missing one is a PHP error
  here); the ``dataset_definitions``, each with ``status``, ``name``, ``type``, ``distribution``,
  ``minimum``, ``maximum``, ``decimals``, ``itemcount`` and its ``dataset_items`` (``number``,
  ``value``); saving refuses any formula ``qtype_calculated_find_formula_errors`` rejects, in the
  answers and in the texts' ``{=...}`` (``validate_question_data``). :meth:`MoodleQuestion.item`
  is ``qtype_calculated_dataset_loader::get_values``: one value per dataset for an item number,
  from 1 to the smallest ``itemcount``;
- ``idnumber`` (read by every type but cloze) and ``tags/tag/text``;
- cloze: the question text's ``{1:SHORTANSWER:=a~=b}``, ``{2:NUMERICAL:=42:0}``,
  ``{1:MULTICHOICE:...}`` parts become subquestions, read with Moodle's own regular expressions.

The question types' own checks that refuse a question when it is saved are applied too (a
multichoice with fewer than two answers or no answer worth 100 %, a short answer or numerical
question with no full-marks answer, a matching question with fewer than two pairs).

It is written from those rules for the tests, not taken from bertdrill, so it catches an
exporter that only agrees with itself.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field

from moodle_calculated import find_formula_errors, find_formula_errors_in_text

PHP_WHITESPACE = " \t\n\r\0\x0b"
FORMATS = {"moodle_auto_format": "moodle", "html": "html", "plain_text": "plain", "wiki_like": "wiki",
           "markdown": "markdown"}


class MoodleXmlError(Exception):
    """Moodle would refuse this file or this question."""


@dataclass
class Text:
    text: str
    format: str = "html"


@dataclass
class Answer:
    text: str
    fraction: float
    feedback: str = ""
    tolerance: str = "0"  # numerical
    format: str = "plain"
    tolerance_type: str = "2"  # calculated: 1 relative, 2 nominal, 3 geometric
    answer_format: str = "1"  # calculated: 1 decimals, 2 significant figures
    answer_length: str = "2"


@dataclass
class Dataset:
    """A calculated question's wildcard: its definition and its items (item number -> value, as text)."""

    name: str
    status: str
    type: str
    distribution: str
    minimum: str
    maximum: str
    decimals: str
    itemcount: int
    items: dict[int, str] = field(default_factory=dict)


@dataclass
class Subquestion:  # cloze parts and matching pairs
    qtype: str
    answers: list[Answer] = field(default_factory=list)
    usecase: int = 0
    mark: float = 1.0


@dataclass
class MoodleQuestion:
    qtype: str
    category: str
    name: str
    text: Text
    general_feedback: Text
    default_mark: float
    answers: list[Answer] = field(default_factory=list)
    single: bool = True
    shuffle: bool = False
    usecase: int = 0
    show_units: int = 3
    pairs: list[tuple[Text, str]] = field(default_factory=list)  # matching: (subquestion, its answer)
    parts: list[Subquestion] = field(default_factory=list)  # cloze
    tags: list[str] = field(default_factory=list)
    idnumber: str | None = None
    datasets: list[Dataset] = field(default_factory=list)  # calculated

    def items(self) -> int:
        """``get_number_of_items``: how many variants Moodle can ask (the smallest itemcount)."""
        return min(dataset.itemcount for dataset in self.datasets)

    def item(self, number: int) -> dict[str, str]:
        """``get_values(number)``: each wildcard's value for one item number (1 to :meth:`items`)."""
        if not 1 <= number <= self.items():
            raise MoodleXmlError(f"cannotgetdsfordependent: item {number} of {self.name}")
        return {dataset.name: dataset.items[number] for dataset in self.datasets if number in dataset.items}


def read(xml_text: str) -> list[MoodleQuestion]:
    """Every question in a Moodle XML file, as Moodle imports it."""
    try:
        root = ElementTree.fromstring(xml_text.encode("utf-8"))
    except ElementTree.ParseError as exc:
        raise MoodleXmlError(f"not well-formed XML: {exc}") from None
    if root.tag != "quiz":
        raise MoodleXmlError(f"the root element is <{root.tag}>, not <quiz>")
    category = ""
    questions = []
    for element in root.findall("question"):
        qtype = element.get("type", "")
        if qtype == "category":
            category = _trim(_text_of(element.find("category")))
            continue
        questions.append(_question(element, qtype, category))
    return questions


def _trim(text: str) -> str:
    return text.strip(PHP_WHITESPACE)


def _text_of(element: ElementTree.Element | None) -> str:
    """``<x><text>...</text></x>``: the text child's content, untrimmed ('' when absent)."""
    if element is None:
        return ""
    child = element.find("text")
    return (child.text or "") if child is not None else ""


def _child(element: ElementTree.Element, tag: str, default: str) -> str:
    found = element.find(tag)
    return _trim(found.text or "") if found is not None else default


def _format(element: ElementTree.Element | None, default: str) -> str:
    name = _trim(element.get("format", default)) if element is not None else default
    return FORMATS.get(name, "html")


def _formatted(element: ElementTree.Element | None, default_format: str = "html") -> Text:
    return Text(_trim(_text_of(element)), _format(element, default_format))


def _trans_single(value: str) -> bool:
    value = _trim(value)
    return not (value == "false" or value in ("", "0"))


def _question(element: ElementTree.Element, qtype: str, category: str) -> MoodleQuestion:
    name_element = element.find("name")
    if qtype in ("cloze", "multianswer"):
        return _cloze(element, category)
    if name_element is None or name_element.find("text") is None:
        raise MoodleXmlError("xmlimportnoname: a question has no <name>")
    text = _formatted(element.find("questiontext"))
    defaults = {"moodle": "moodle_auto_format", "html": "html", "plain": "plain_text", "wiki": "wiki_like",
                "markdown": "markdown"}
    feedback = _formatted(element.find("generalfeedback"), defaults[text.format])
    question = MoodleQuestion(
        qtype=qtype, category=category, name=_clean_name(_trim(_text_of(name_element))), text=text,
        general_feedback=feedback, default_mark=float(_child(element, "defaultgrade", "1")),
        tags=[_trim(_text_of(tag)) for tag in element.findall("tags/tag")],
        idnumber=_trim(element.findtext("idnumber") or "") or None,
    )
    if qtype == "multichoice":
        question.single = _trans_single(_child(element, "single", "true"))
        question.shuffle = _trans_single(_child(element, "shuffleanswers", "false"))
        question.answers = [_answer(answer, formatted=True, default_format=defaults[text.format])
                            for answer in element.findall("answer")]
        _check_multichoice(question)
    elif qtype == "shortanswer":
        question.usecase = int(_child(element, "usecase", "0") or 0)
        question.answers = [_answer(answer) for answer in element.findall("answer")]
        _check_full_marks(question)
    elif qtype == "numerical":
        question.answers = [_answer(answer) for answer in element.findall("answer")]
        for answer, xml_answer in zip(question.answers, element.findall("answer")):
            answer.tolerance = _child(xml_answer, "tolerance", "0")
        units = element.findall("units/unit")
        question.show_units = int(_child(element, "showunits", "3" if not units else "0"))
        _check_full_marks(question)
    elif qtype in ("matching", "match"):
        question.qtype = "matching"
        question.shuffle = _trans_single(_child(element, "shuffleanswers", "1"))
        question.pairs = [(_formatted(sub, defaults[text.format]), _trim(_text_of(sub.find("answer"))))
                          for sub in element.findall("subquestion")]
        if sum(1 for sub, answer in question.pairs if sub.text and answer) < 2:
            raise MoodleXmlError(f"{question.name}: a matching question needs two pairs or more")
    elif qtype in ("calculated", "calculatedsimple", "calculatedmulti"):
        _calculated(element, question)
    elif qtype in ("essay", "description", "truefalse"):
        pass
    else:
        raise MoodleXmlError(f"xmltypeunsupported: {qtype!r}")
    return question


def _required(element: ElementTree.Element, tag: str) -> str:
    """``$answer['#'][tag][0]['#']``: the importer reads it without a default."""
    found = element.find(tag)
    if found is None:
        raise MoodleXmlError(f"PHP warning: undefined index {tag!r} in <{element.tag}>")
    return found.text or ""


def _calculated(element: ElementTree.Element, question: MoodleQuestion) -> None:
    for xml_answer in element.findall("answer"):
        answer = _answer(xml_answer, formatted=True, default_format=question.text.format)
        answer.text = answer.text or "*"
        answer.tolerance = _required(xml_answer, "tolerance")
        answer.tolerance_type = _required(xml_answer, "tolerancetype")
        answer.answer_format = _required(xml_answer, "correctanswerformat")
        answer.answer_length = _required(xml_answer, "correctanswerlength")
        question.answers.append(answer)
    definitions = element.find("dataset_definitions")
    if definitions is None or not definitions.findall("dataset_definition"):
        raise MoodleXmlError(f"{question.name}: PHP warning: no dataset_definitions")
    for definition in definitions.findall("dataset_definition"):
        def text(tag: str, where: ElementTree.Element = definition) -> str:
            found = where.find(tag)
            if found is None:
                raise MoodleXmlError(f"{question.name}: PHP warning: a dataset_definition without <{tag}>")
            return _trim(_text_of(found))
        dataset = Dataset(name=text("name"), status=text("status"), type=_required(definition, "type"),
                          distribution=text("distribution"), minimum=text("minimum"), maximum=text("maximum"),
                          decimals=text("decimals"), itemcount=int(_required(definition, "itemcount")))
        for item in definition.findall("dataset_items/dataset_item"):
            dataset.items[int(_required(item, "number"))] = _required(item, "value")
        question.datasets.append(dataset)
    # validate_question_data: Moodle refuses to save a bad formula anywhere (on import too).
    for where in (question.text.text, question.general_feedback.text):
        if (error := find_formula_errors_in_text(where)) is not None:
            raise MoodleXmlError(f"{question.name}: {error}")
    for answer in question.answers:
        if (error := find_formula_errors(answer.text)) is not None:
            raise MoodleXmlError(f"{question.name}: {error} in {answer.text!r}")
        if (error := find_formula_errors_in_text(answer.feedback)) is not None:
            raise MoodleXmlError(f"{question.name}: {error}")
    _check_full_marks(question)


def _answer(element: ElementTree.Element, formatted: bool = False, default_format: str = "html") -> Answer:
    fraction = float(element.get("fraction", "0")) / 100
    feedback = _trim(_text_of(element.find("feedback")))
    if formatted:
        return Answer(_trim(_text_of(element)), fraction, feedback, format=_format(element, default_format))
    return Answer(_trim(_text_of(element)), fraction, feedback)


def _check_multichoice(question: MoodleQuestion) -> None:
    filled = [answer for answer in question.answers if _trim(answer.text)]
    if len(filled) < 2:
        raise MoodleXmlError(f"{question.name}: notenoughanswers (a multichoice needs two answers or more)")
    if question.single and max(answer.fraction for answer in filled) != 1:
        raise MoodleXmlError(f"{question.name}: fractionsnomax (one answer must be worth 100 %)")


def _check_full_marks(question: MoodleQuestion) -> None:
    filled = [answer for answer in question.answers if _trim(answer.text)]
    if not filled or max(answer.fraction for answer in filled) != 1:
        raise MoodleXmlError(f"{question.name}: fractionsnomax (one answer must be worth 100 %)")


def _clean_name(name: str) -> str:
    return re.sub(r"<[^>]*>", "", name).strip()[:255]


# --- cloze (multianswer), with Moodle's regular expressions ------------------------------------

_FRACTION = r"=|%(-?[0-9]+(?:[.,][0-9]*)?)%"
_ANSWER = r".+?(?<!\\)(?<!&)(?<!&amp;)(?=[~#}]|$)"  # PCRE's (?<!\\|&|&amp;), split for Python
_FEEDBACK = r".*?(?<!\\)(?=[~}]|$)"
_ALTERNATIVE = f"({_FRACTION})?({_ANSWER})(#({_FEEDBACK}))?"
_NUMBER = r"-?(([0-9]+[.,]?[0-9]*|[.,][0-9]+)([eE][-+]?[0-9]+)?)"
_NUMERICAL_ALTERNATIVE = re.compile(f"^({_NUMBER})(:{_NUMBER})?$", re.S)
_TYPES = ("(NUMERICAL|NM)|(MULTICHOICE|MC)|(MULTICHOICE_V|MCV)|(MULTICHOICE_H|MCH)|"
          "(SHORTANSWER|SA|MW)|(SHORTANSWER_C|SAC|MWC)|"
          "(MULTICHOICE_S|MCS)|(MULTICHOICE_VS|MCVS)|(MULTICHOICE_HS|MCHS)|"
          "(MULTIRESPONSE|MR)|(MULTIRESPONSE_H|MRH)|(MULTIRESPONSE_S|MRS)|(MULTIRESPONSE_HS|MRHS)")
_PART = re.compile(r"\{([0-9]*):(" + _TYPES + "):(" + _ALTERNATIVE + "(~" + _ALTERNATIVE + ")*)\\}", re.S)
_PART_ALTERNATIVES = 16  # group numbers as Moodle names them
_GROUP_NUMERICAL, _GROUP_SHORTANSWER, _GROUP_SHORTANSWER_C = 3, 7, 8


def _cloze(element: ElementTree.Element, category: str) -> MoodleQuestion:
    text = _formatted(element.find("questiontext"))
    name_element = element.find("name")
    name = _clean_name(_trim(_text_of(name_element))) if name_element is not None else text.text[:50]
    remaining = text.text
    parts = []
    position = 1
    while (found := _PART.search(remaining)) is not None:
        part = _cloze_part(found)
        parts.append(part)
        remaining = remaining.replace(found.group(0), f"{{#{position}}}", 1)
        position += 1
    if not parts:
        raise MoodleXmlError(f"{name}: invalidmultianswerquestion (no subquestions found)")
    for index, part in enumerate(parts, start=1):
        filled = [answer for answer in part.answers if _trim(answer.text)]
        if not filled or max(answer.fraction for answer in filled) != 1:
            raise MoodleXmlError(f"{name}: subquestion {index} has no answer worth 100 %")
    feedback = _formatted(element.find("generalfeedback"), "html")
    return MoodleQuestion(qtype="multianswer", category=category, name=name, text=Text(remaining, text.format),
                          general_feedback=feedback, default_mark=sum(part.mark for part in parts), parts=parts)


def _cloze_part(found: re.Match[str]) -> Subquestion:
    mark = float(found.group(1)) if found.group(1) else 1.0
    if found.group(_GROUP_NUMERICAL):
        part = Subquestion("numerical", mark=mark)
    elif found.group(_GROUP_SHORTANSWER):
        part = Subquestion("shortanswer", mark=mark)
    elif found.group(_GROUP_SHORTANSWER_C):
        part = Subquestion("shortanswer", usecase=1, mark=mark)
    else:
        part = Subquestion("multichoice", mark=mark)
    remaining = found.group(_PART_ALTERNATIVES)
    alternative = re.compile("~?" + _ALTERNATIVE, re.S)
    while (alt := alternative.search(remaining)) is not None:
        if alt.group(1) == "=":
            fraction = 1.0
        elif alt.group(2):
            fraction = 0.01 * float(alt.group(2).replace(",", "."))
        else:
            fraction = 0.0
        feedback = alt.group(5) or ""
        answer_text = alt.group(3)
        numeric = _NUMERICAL_ALTERNATIVE.match(answer_text) if part.qtype == "numerical" else None
        if numeric:
            part.answers.append(Answer(numeric.group(1), fraction, feedback, tolerance=numeric.group(6) or "0"))
        else:
            answer_text = html.unescape(answer_text).replace("\\}", "}").replace("\\#", "#")
            part.answers.append(Answer(answer_text, fraction, feedback))
        remaining = remaining.split(alt.group(0), 1)[1]
    return part
