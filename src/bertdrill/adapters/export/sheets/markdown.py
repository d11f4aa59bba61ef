"""Quiz sheets as Markdown (CommonMark with GitHub tables), for teachers who edit before printing.

Lesson text is escaped so that it stays text: no raw HTML, links, emphasis or
headings can come out of a lesson. Code goes into fenced blocks, with a fence
longer than any backtick run inside.
"""

from __future__ import annotations

import re
from typing import assert_never

from bertdrill.adapters.export.sheets.model import Question, Sheet, Version, heading, letter, short_text, tolerance
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson import BLANK

BLANK_LINE = "_" * 12  # every blank is this wide, whatever the answer's length
ANSWER_LINE = "_" * 40
BOX = "☐"  # a box to tick or fill: GitHub's "- [ ]" shows as brackets in other renderers
WORK_LINES = 3
WORK_LINE = "\u00a0" + ANSWER_LINE
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


def _escape_line_start(match: re.Match[str]) -> str:
    indent, marker = match.group(1), match.group(2)
    return indent + (f"{marker}\\" if marker[0].isdigit() else f"\\{marker}")


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
    name = escape(version.student) if version.student else "_" * 30
    head = (f"# {escape(sheet.title)} — {escape(labels.version)} {version.letter}\n\n"
            f"{escape(labels.name)}: {name}  {escape(labels.student_id)}: {'_' * 14}\\\n"
            f"{escape(labels.class_name)}: {'_' * 14}  {escape(labels.date)}: {'_' * 14}\n\n"
            + (f"{escape(sheet.instructions)}\n\n" if sheet.instructions else "")
            + f"{_summary(sheet, version)}\n\n{_score_table(sheet, version)}{_legend(sheet)}\n\n---")
    return "\n\n".join([head] + [_question(sheet, question) for question in version.questions])


def _score_table(sheet: Sheet, version: Version) -> str:
    labels = sheet.labels
    numbers = [str(q.number) for q in version.questions] + [escape(labels.total)]
    worth = [str(q.points) for q in version.questions] + [str(version.points)]
    rows = [[escape(labels.question), *numbers], ["---"] + [":-:"] * len(numbers),
            [escape(labels.points_title), *worth], [escape(labels.score)] + [" "] * len(numbers)]
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def _legend(sheet: Sheet) -> str:
    if not sheet.legend:
        return ""
    lines = [f"`{row.name}`" + (f" {escape(row.meaning)}" if row.meaning else "") + ": "
             + ", ".join(f"{escape(title)} `{value}`" for title, value in row.values) for row in sheet.legend]
    return f"\n\n**{escape(sheet.labels.given)}**\\\n" + "\\\n".join(lines)


def _question(sheet: Sheet, question: Question) -> str:
    line = f"**{question.number}.** {escape(question.prompt)} *({escape(sheet.labels.points(question.points))})*"
    body = _body(sheet, question)
    return f"{line}\n\n{body}" if body else line


def _choice_body(sheet: Sheet, question: Question) -> str:
    return "\n".join(f"- {BOX} **{letter(i)}** {escape(choice)}" for i, choice in enumerate(question.choices))


def _blank_body(sheet: Sheet, question: Question) -> str:
    before, _, after = question.code.partition(BLANK)
    return fenced(before + BLANK_LINE + after)


def _numeric_body(sheet: Sheet, question: Question) -> str:
    labels = sheet.labels
    # A line of underscores alone is a thematic break in CommonMark (and it interrupts the paragraph,
    # leaving the line break before it a stray "\"): each ruled line starts with a no-break space,
    # which CommonMark does not count as indentation, so the line stays text.
    work = "\\\n".join([f"{escape(labels.work)}:"] + [WORK_LINE] * WORK_LINES)
    return f"{work}\n\n{escape(labels.answer)}: {ANSWER_LINE}"


def _fact_body(sheet: Sheet, question: Question) -> str:
    return f"{escape(sheet.labels.answer)}: {ANSWER_LINE}"


def _match_body(sheet: Sheet, question: Question) -> str:
    """The rows with a box each, then the lettered column on one line: no table, so no empty header."""
    rows = "\\\n".join(f"{i}\\. {escape(term)} {BOX}" for i, term in enumerate(question.rows, start=1))
    column = " · ".join(f"**{letter(i)}** {escape(choice)}" for i, choice in enumerate(question.choices))
    return f"*{escape(sheet.labels.match_hint)}*\n\n{rows}\n\n{column}"


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
    head = (f"## {escape(labels.key)} — {escape(heading(version, labels))}\n\n"
            f"{escape(sheet.title)} · {_summary(sheet, version)} · {escape(labels.seed)} {sheet.seed}")
    return "\n\n".join([head] + [_key_entry(sheet, question) for question in version.questions])


def _key_entry(sheet: Sheet, question: Question) -> str:
    points = f"*({escape(sheet.labels.points(question.points))})*"
    answer, block = _key_answer(question)
    entry = f"**{question.number}.** {escape(short_text(question.prompt))}\\\n{answer} {points}"
    if question.accept:
        entry += f"\\\n{escape(sheet.labels.accepted)}: " + "; ".join(escape(a) for a in question.accept)
    if question.tolerance:
        entry += f"\\\n{escape(sheet.labels.tolerance)} {escape(tolerance(question, sheet.language))}"
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
            pairs = ", ".join(f"**{row}. {escape(term)} → {letter(index)}** ({escape(question.choices[index])})"
                              for row, (term, index) in enumerate(zip(question.rows, question.correct), start=1))
            return pairs, ""
        case Kind.BLANK:
            before, _, after = question.code.partition(BLANK)
            return f"**{escape(question.answer)}**", fenced(before + question.answer + after)
        case Kind.NUMERIC:
            return f"**{escape(question.answer)}** ({escape(question.set_title)})", ""
        case Kind.PRACTICE:
            first = question.answer.splitlines()[0] if question.answer else ""
            return f"**{escape(first)}**", fenced(question.answer) + "\n\n" + fenced(question.solution, "python")
        case Kind.FACT:
            return f"**{escape(question.answer)}**", ""
        case _:
            assert_never(question.kind)
