"""Quiz sheets as Markdown (CommonMark with GitHub tables), for teachers who edit before printing.

Lesson text is escaped so that it stays text: no raw HTML, links, emphasis or
headings can come out of a lesson. Code goes into fenced blocks, with a fence
longer than any backtick run inside.
"""

from __future__ import annotations

import re
from typing import assert_never

from .. import formula
from ..kinds import Kind
from ..lesson import BLANK
from .model import Question, Sheet, Version, letter

BLANK_LINE = "_" * 12  # every blank is this wide, whatever the answer's length
ANSWER_LINE = "_" * 40
PAGE_BREAK = '<div style="page-break-before: always"></div>'

_INLINE = re.compile(r"[\\`*\[\]<>|&~#!{}]")
_LONE_UNDERSCORE = re.compile(r"(?<!\w)_|_(?!\w)")  # d_model stays as it is; _x_ would be emphasis
_LINE_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))")


def escape(text: str) -> str:
    """Lesson text as literal Markdown text; line breaks kept as hard breaks."""
    text = _INLINE.sub(lambda m: "\\" + m.group(0), text)
    text = _LONE_UNDERSCORE.sub(r"\\_", text)
    lines = [_LINE_START.sub(_escape_line_start, line).lstrip() for line in text.split("\n")]
    return "\\\n".join(lines)


def _escape_line_start(match: re.Match) -> str:
    marker = match.group(2)
    return match.group(1) + (f"{marker}\\" if marker[0].isdigit() else f"\\{marker}")


def fenced(code: str, info: str = "text") -> str:
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{code.rstrip(chr(10))}\n{fence}"


def render(sheet: Sheet, *, sheets: bool = True, keys: bool = True) -> str:
    parts = []
    if sheets:
        parts += [_sheet(sheet, version) for version in sheet.versions]
    if keys:
        parts += [_key(sheet, version) for version in sheet.versions]
    return f"\n\n{PAGE_BREAK}\n\n".join(parts) + "\n"


def _summary(sheet: Sheet, version: Version) -> str:
    return f"{len(version.questions)} {escape(sheet.labels.questions)} · {escape(sheet.labels.points(version.points))}"


def _sheet(sheet: Sheet, version: Version) -> str:
    labels = sheet.labels
    head = (f"# {escape(sheet.title)} — {escape(labels.version)} {version.letter}\n\n"
            f"{escape(labels.name)}: {'_' * 30}  {escape(labels.date)}: {'_' * 14}  "
            f"{escape(labels.score)}: {'_' * 6} / {version.points}\n\n"
            f"{_summary(sheet, version)}\n\n---")
    return "\n\n".join([head] + [_question(sheet, question) for question in version.questions])


def _question(sheet: Sheet, question: Question) -> str:
    line = f"**{question.number}.** {escape(question.prompt)} *({escape(sheet.labels.points(question.points))})*"
    body = _body(sheet, question)
    return f"{line}\n\n{body}" if body else line


def _choice_body(sheet: Sheet, question: Question) -> str:
    return "\n".join(f"- [ ] **{letter(i)}** {escape(choice)}" for i, choice in enumerate(question.choices))


def _blank_body(sheet: Sheet, question: Question) -> str:
    before, _, after = question.code.partition(BLANK)
    return fenced(before + BLANK_LINE + after)


def _numeric_body(sheet: Sheet, question: Question) -> str:
    labels = sheet.labels
    lines = []
    if question.given:
        values = ", ".join(f"`{name} = {value}`" for name, value in question.given)
        lines.append(f"{escape(labels.given)} ({escape(question.set_title)}): {values}\n")
    lines.append(f"{escape(labels.answer)}: {ANSWER_LINE}")
    return "\n".join(lines)


def _fact_body(sheet: Sheet, question: Question) -> str:
    return f"{escape(sheet.labels.answer)}: {ANSWER_LINE}"


def _match_body(sheet: Sheet, question: Question) -> str:
    lines = [f"*{escape(sheet.labels.match_hint)}*", "", "|  |  |  |  |  |", "|--:|---|:-:|--:|---|"]
    for i in range(max(len(question.rows), len(question.choices))):
        left = f"{i + 1}. | {escape(question.rows[i])} | [ ]" if i < len(question.rows) else " | |"
        right = f"{letter(i)} | {escape(question.choices[i])}" if i < len(question.choices) else " |"
        lines.append(f"| {left} | {right} |")
    return "\n".join(lines)


def _practice_body(sheet: Sheet, question: Question) -> str:
    return fenced(question.code, "python")


def _body(sheet: Sheet, question: Question) -> str:
    match question.kind:
        case Kind.FACT:
            return _fact_body(sheet, question)
        case Kind.CHOICE:
            return _choice_body(sheet, question)
        case Kind.BLANK:
            return _blank_body(sheet, question)
        case Kind.NUMERIC:
            return _numeric_body(sheet, question)
        case Kind.MATCH:
            return _match_body(sheet, question)
        case Kind.PRACTICE:
            return _practice_body(sheet, question)
        case _:
            assert_never(question.kind)


def _key(sheet: Sheet, version: Version) -> str:
    labels = sheet.labels
    head = (f"## {escape(labels.key)} — {escape(labels.version)} {version.letter}\n\n"
            f"{escape(sheet.title)} · {_summary(sheet, version)} · {escape(labels.seed)} {sheet.seed}")
    return "\n\n".join([head] + [_key_entry(sheet, question) for question in version.questions])


def _key_entry(sheet: Sheet, question: Question) -> str:
    points = f"*({escape(sheet.labels.points(question.points))})*"
    answer, block = _key_answer(question)
    entry = f"**{question.number}.** {answer} {points}"
    if question.explanation:
        entry += f"\\\n*{escape(question.explanation)}*"
    return f"{entry}\n\n{block}" if block else entry


def _key_answer(question: Question) -> tuple[str, str]:
    """The answer on the entry's line, and a code block to follow it (or "")."""
    match question.kind:
        case Kind.CHOICE:
            right = question.correct[0]
            return f"**{letter(right)}** {escape(question.choices[right])}", ""
        case Kind.MATCH:
            pairs = ", ".join(f"{row}. {escape(term)} → **{letter(index)}** ({escape(question.choices[index])})"
                              for row, (term, index) in enumerate(zip(question.rows, question.correct), start=1))
            return pairs, ""
        case Kind.BLANK:
            before, _, after = question.code.partition(BLANK)
            return f"**{escape(question.answer)}**", fenced(before + question.answer + after)
        case Kind.NUMERIC:
            tolerance = f" ± {formula.format_number(question.tolerance * 100)}%" if question.tolerance else ""
            return f"**{escape(question.answer)}**{tolerance} ({escape(question.set_title)})", ""
        case Kind.PRACTICE:
            return "", fenced(question.answer) + "\n\n" + fenced(question.solution, "python")
        case Kind.FACT:
            return f"**{escape(question.answer)}**", ""
        case _:
            assert_never(question.kind)
