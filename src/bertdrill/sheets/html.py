"""Quiz sheets as one self-contained HTML file: inline print CSS, no scripts, no network.

Every lesson text goes through :func:`html.escape`; a Content-Security-Policy
forbids scripts and remote resources anyway, so a sheet opened in a browser
can never run anything or fetch anything.
"""

from __future__ import annotations

from html import escape
from importlib import resources
from typing import assert_never

from .. import __version__, formula
from ..kinds import Kind
from ..lesson import BLANK
from .model import Question, Sheet, Version, letter

ANSWER_LINES = {Kind.FACT: 3, Kind.PRACTICE: 10}
SHORT_OPTION = 30  # options this short are set in two columns


def render(sheet: Sheet, *, sheets: bool = True, keys: bool = True) -> str:
    """The whole document: every version's sheet, then every version's answer key, each on new pages."""
    sections = []
    if sheets:
        sections += [_sheet(sheet, version) for version in sheet.versions]
    if keys:
        sections += [_key(sheet, version) for version in sheet.versions]
    title = sheet.title if sheets else f"{sheet.title} · {sheet.labels.key}"
    return _document(sheet, title, "\n".join(sections))


def stylesheet() -> str:
    return resources.files(__package__).joinpath("sheet.css").read_text(encoding="utf-8")


def _document(sheet: Sheet, title: str, body: str) -> str:
    return f"""<!DOCTYPE html>
<html lang="{escape(sheet.language)}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="bertdrill {escape(__version__)}">
<title>{escape(title)}</title>
<style>
{stylesheet()}
{_page_rules(sheet)}
</style>
</head>
<body>
{body}
</body>
</html>
"""


def _page_rules(sheet: Sheet) -> str:
    """The footer's word for "page", and page numbers that start at 1 for each version and each key."""
    rules = [f'@page {{ @bottom-right {{ content: string(version-label) "  ·  " {_css_string(sheet.labels.page)} " " counter(page); }} }}']
    for version in sheet.versions:
        for section in (f"version-{version.letter}", f"key-{version.letter}"):  # the sections' ids
            rules.append(f"#{section} {{ page: {section}; }} @page :nth(1 of {section}) {{ counter-reset: page 1; }}")
    return "\n".join(rules)


def _css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


# --- a version's sheet -----------------------------------------------------------------------

def _sheet(sheet: Sheet, version: Version) -> str:
    labels = sheet.labels
    head = f"""<header class="sheet-head">
<div class="title-row"><h1 class="sheet-title">{escape(sheet.title)}</h1><div class="version-tag version-label">{escape(labels.version)} {version.letter}</div></div>
<table class="student"><tr><td class="label">{escape(labels.name)}:</td><td class="fill name"></td><td class="label">{escape(labels.date)}:</td><td class="fill date"></td><td class="label">{escape(labels.score)}:</td><td class="fill score"></td><td class="label">/ {version.points}</td></tr></table>
<p class="summary">{_summary(sheet, version)}</p>
</header>"""
    questions = "\n".join(_question(sheet, version, question) for question in version.questions)
    return f'<section class="sheet" id="version-{version.letter}">\n{head}\n{questions}\n</section>'


def _summary(sheet: Sheet, version: Version) -> str:
    labels = sheet.labels
    return f"{len(version.questions)} {escape(labels.questions)} · {escape(labels.points(version.points))}"


def _question(sheet: Sheet, version: Version, question: Question) -> str:
    body = _body(sheet, question)
    return f"""<div class="question q-{question.kind}" id="{version.letter}-{question.number}">
<p class="q-line"><span class="q-num">{question.number}.</span><span class="q-text">{escape(question.prompt)}</span><span class="q-points">{escape(sheet.labels.points(question.points))}</span></p>
<div class="q-body">{body}</div>
</div>"""


def _choice_body(sheet: Sheet, question: Question) -> str:
    """Options as a table (robust in browsers and WeasyPrint alike), short ones two to a row."""
    per_row = 2 if max(len(choice) for choice in question.choices) <= SHORT_OPTION else 1
    cells = [f'<td class="tick"><span class="box"></span></td><td class="letter">{letter(i)}</td>'
             f'<td class="option">{escape(choice)}</td>' for i, choice in enumerate(question.choices)]
    rows = "".join("<tr>" + "".join(cells[start:start + per_row]) + "</tr>" for start in range(0, len(cells), per_row))
    return f'<table class="choices">{rows}</table>'


def _blank_body(sheet: Sheet, question: Question) -> str:
    before, _, after = question.code.partition(BLANK)
    return f'<pre class="code">{escape(before)}<span class="blank"></span>{escape(after)}</pre>'


def _numeric_body(sheet: Sheet, question: Question) -> str:
    labels = sheet.labels
    given = ""
    if question.given:
        values = ", ".join(f'<span class="mono">{escape(name)} = {escape(value)}</span>' for name, value in question.given)
        given = f'<p class="given">{escape(labels.given)} ({escape(question.set_title)}): {values}</p>'
    # Room to work on the left, the box for the number on the right.
    return (f'{given}<table class="numeric"><tr><td class="work"></td>'
            f'<td class="answer-cell">{escape(labels.answer)}: <span class="answer-box"></span></td></tr></table>')


def _fact_body(sheet: Sheet, question: Question) -> str:
    return _lines(ANSWER_LINES[Kind.FACT])


def _match_body(sheet: Sheet, question: Question) -> str:
    rows = []
    for i in range(max(len(question.rows), len(question.choices))):
        left = '<td class="num"></td><td class="term"></td><td></td>'
        if i < len(question.rows):
            left = (f'<td class="num">{i + 1}.</td><td class="term">{escape(question.rows[i])}</td>'
                    f'<td><span class="box"></span></td>')
        right = '<td class="letter"></td><td></td>'
        if i < len(question.choices):
            right = f'<td class="letter">{letter(i)}</td><td>{escape(question.choices[i])}</td>'
        rows.append(f'<tr>{left}<td class="gap"></td>{right}</tr>')
    return f'<p class="hint">{escape(sheet.labels.match_hint)}</p><table class="match">{"".join(rows)}</table>'


def _practice_body(sheet: Sheet, question: Question) -> str:
    return f'<pre class="code">{escape(question.code)}</pre>{_lines(ANSWER_LINES[Kind.PRACTICE])}'


def _lines(count: int) -> str:
    return '<div class="lines">' + '<div class="line"></div>' * count + "</div>"


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


# --- a version's answer key ------------------------------------------------------------------

def _key(sheet: Sheet, version: Version) -> str:
    labels = sheet.labels
    rows = "\n".join(
        f'<tr><td class="num">{q.number}.</td><td>{_key_answer(q)}{_why(q)}</td><td class="pts">{q.points}</td></tr>'
        for q in version.questions
    )
    return f"""<section class="key" id="key-{version.letter}">
<h2 class="version-label">{escape(labels.key)} · {escape(labels.version)} {version.letter}</h2>
<p class="summary sheet-title">{escape(sheet.title)}</p>
<p class="summary">{_summary(sheet, version)} · {escape(labels.seed)} {sheet.seed}</p>
<table class="key-table">
<thead><tr><th class="num">#</th><th>{escape(labels.answer)}</th><th class="pts">{escape(labels.points_title)}</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
</section>"""


def _key_answer(question: Question) -> str:
    match question.kind:
        case Kind.CHOICE:
            right = question.correct[0]
            return f'<div class="key-answer">{letter(right)} · {escape(question.choices[right])}</div>'
        case Kind.MATCH:
            lines = "".join(
                f"<div>{row_number}. {escape(term)} → <b>{letter(index)}</b> ({escape(question.choices[index])})</div>"
                for row_number, (term, index) in enumerate(zip(question.rows, question.correct), start=1)
            )
            return f'<div class="key-answer">{lines}</div>'
        case Kind.BLANK:
            before, _, after = question.code.partition(BLANK)
            return (f'<div class="key-answer mono">{escape(question.answer)}</div>'
                    f'<pre class="code">{escape(before)}<b>{escape(question.answer)}</b>{escape(after)}</pre>')
        case Kind.NUMERIC:
            return f'<div class="key-answer">{escape(question.answer)}{_tolerance(question)} <span class="why">({escape(question.set_title)})</span></div>'
        case Kind.PRACTICE:
            return (f'<pre class="code key-answer">{escape(question.answer)}</pre>'
                    f'<pre class="code">{escape(question.solution)}</pre>')
        case Kind.FACT:
            return f'<div class="key-answer">{escape(question.answer)}</div>'
        case _:
            assert_never(question.kind)


def _tolerance(question: Question) -> str:
    if not question.tolerance:
        return ""
    return f" ± {formula.format_number(question.tolerance * 100)}%"


def _why(question: Question) -> str:
    return f'<div class="why">{escape(question.explanation)}</div>' if question.explanation else ""
