"""Quiz sheets as one self-contained HTML file: inline print CSS, no scripts, no network.

Every lesson text goes through :func:`html.escape`; a Content-Security-Policy
forbids scripts and remote resources anyway, so a sheet opened in a browser
can never run anything or fetch anything.
"""

from __future__ import annotations

from html import escape
from importlib import resources
from typing import assert_never

from bertdrill import __version__
from bertdrill.adapters.export.sheets.model import Question, Sheet, Version, heading, letter, short_text, tolerance
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson import BLANK

ANSWER_LINES = {Kind.FACT: 3, Kind.NUMERIC: 3, Kind.PRACTICE: 10}
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
    """Each section's running footer as a named page with its words written out.

    Margin boxes read no ``string()``: Chromium leaves them empty, so a browser's Print would lose
    the footer from page 2 on. A named page per version and per key prints in Chromium and
    WeasyPrint alike. Page numbers run through the file; a PDF lays out each version on its own,
    so there they count from 1 for each version (and ``--split`` does the same for every format).
    """
    labels = sheet.labels
    title = _css_string(sheet.title)
    page = f'{_css_string(labels.page + " ")} counter(page) {_css_string(" " + labels.of + " ")} counter(pages)'
    rules = []
    for version in sheet.versions:
        for section, label in ((f"version-{version.letter}", heading(version, labels)),
                               (f"key-{version.letter}", f"{labels.key} · {heading(version, labels)}")):
            rules.append(f"#{section} {{ page: {section}; }} @page {section} {{ @bottom-left {{ content: {title}; }} "
                         f"@bottom-right {{ content: {_css_string(label + '  ·  ')} {page}; }} }}")
    return "\n".join(rules)


def _css_string(text: str) -> str:
    """A CSS string: backslashes, quotes and line breaks escaped; nothing in it can end the rule."""
    escaped = "".join(f"\\{ord(character):06x}" if character in '\\"\n\r\f<>' else character for character in text)
    return f'"{escaped}"'


# --- a version's sheet -----------------------------------------------------------------------

def _sheet(sheet: Sheet, version: Version) -> str:
    labels = sheet.labels
    fields = "".join(f'<td class="label">{escape(label)}:</td><td class="fill {css}">{escape(filled)}</td>'
                     for label, css, filled in ((labels.name, "name", version.student),
                                                (labels.student_id, "student-id", "")))
    fields_2 = "".join(f'<td class="label">{escape(label)}:</td><td class="fill {css}"></td>'
                       for label, css in ((labels.class_name, "class"), (labels.date, "date")))
    instructions = f'<p class="instructions">{escape(sheet.instructions)}</p>' if sheet.instructions else ""
    head = f"""<header class="sheet-head">
<div class="title-row"><h1 class="sheet-title">{escape(sheet.title)}</h1><div class="version-tag version-label">{escape(labels.version)} {escape(version.letter)}</div></div>
<table class="student"><tr>{fields}</tr><tr>{fields_2}</tr></table>
{instructions}
<p class="summary">{_summary(sheet, version)}</p>
{_score_table(sheet, version)}
{_legend(sheet)}
</header>"""
    questions = "\n".join(_question(sheet, version, question) for question in version.questions)
    return f'<section class="sheet" id="version-{version.letter}">\n{head}\n{questions}\n</section>'


SCORE_COLUMNS = 20  # questions per row of the score table: about 8 mm each on A4


def _score_table(sheet: Sheet, version: Version) -> str:
    """A row per question for the teacher to mark: its number, what it is worth, what it scored."""
    labels = sheet.labels
    questions = list(version.questions)
    parts = []
    for start in range(0, len(questions), SCORE_COLUMNS):
        chunk = questions[start:start + SCORE_COLUMNS]
        last = start + SCORE_COLUMNS >= len(questions)
        total = (f'<th class="total">{escape(labels.total)}</th>', f'<td class="total">{version.points}</td>',
                 '<td class="total mark"></td>') if last else ("", "", "")
        parts.append(
            f'<tr><th>{escape(labels.question)}</th>{"".join(f"<th>{q.number}</th>" for q in chunk)}{total[0]}</tr>'
            f'<tr><th>{escape(labels.points_title)}</th>{"".join(f"<td>{q.points}</td>" for q in chunk)}{total[1]}</tr>'
            f'<tr><th>{escape(labels.score)}</th>{"".join("<td class=mark></td>" for _ in chunk)}{total[2]}</tr>')
    # the widths sheet.css gives its columns, padding included: the labels' 20 mm, 7 mm a question, 13 mm the total
    width = 20 + 7 * min(len(questions), SCORE_COLUMNS) + 13
    return f'<table class="score-table" style="width: {width}mm">{"".join(parts)}</table>'


def _legend(sheet: Sheet) -> str:
    """--given: each parameter with what it stands for and its value in every set asked about."""
    if not sheet.legend:
        return ""
    rows = "".join(
        f'<tr><td class="mono name">{escape(row.name)}</td><td>{escape(row.meaning)}</td>'
        + "".join(f'<td class="set">{escape(title)}</td><td class="mono value">{escape(value)}</td>'
                  for title, value in row.values) + "</tr>"
        for row in sheet.legend)
    return f'<div class="legend"><p class="legend-title">{escape(sheet.labels.given)}</p><table>{rows}</table></div>'


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
    # Lines to work on, then the box for the number.
    labels = sheet.labels
    return (f'<p class="work-label">{escape(labels.work)}:</p>{_lines(ANSWER_LINES[Kind.NUMERIC])}'
            f'<p class="answer-cell">{escape(labels.answer)}: <span class="answer-box"></span></p>')


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
        f'<tr><td class="num">{q.number}.</td><td><div class="key-question">{escape(short_text(q.prompt))}</div>'
        f'{_key_answer(q)}{_also(sheet, q)}{_why(q)}</td><td class="pts">{q.points}</td></tr>'
        for q in version.questions
    )
    return f"""<section class="key" id="key-{version.letter}">
<h2 class="version-label">{escape(labels.key)} · {escape(heading(version, labels))}</h2>
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
    """The answer, in one style for every kind; code and output below it where there is some."""
    match question.kind:
        case Kind.CHOICE:
            right = question.correct[0]
            return f'<div class="key-answer">{letter(right)} · {escape(question.choices[right])}</div>'
        case Kind.MATCH:
            lines = "".join(
                f"<div>{row_number}. {escape(term)} → {letter(index)} ({escape(question.choices[index])})</div>"
                for row_number, (term, index) in enumerate(zip(question.rows, question.correct), start=1)
            )
            return f'<div class="key-answer">{lines}</div>'
        case Kind.BLANK:
            before, _, after = question.code.partition(BLANK)
            return (f'<div class="key-answer">{escape(question.answer)}</div>'
                    f'<pre class="code">{escape(before)}<b>{escape(question.answer)}</b>{escape(after)}</pre>')
        case Kind.NUMERIC:
            return (f'<div class="key-answer">{escape(question.answer)}'
                    f' <span class="key-note">({escape(question.set_title)})</span></div>')
        case Kind.PRACTICE:
            return (f'<div class="key-answer">{escape(question.answer.splitlines()[0] if question.answer else "")}</div>'
                    f'<pre class="code">{escape(question.answer)}</pre><pre class="code">{escape(question.solution)}</pre>')
        case Kind.FACT:
            return f'<div class="key-answer">{escape(question.answer)}</div>'
        case _:
            assert_never(question.kind)


def _also(sheet: Sheet, question: Question) -> str:
    """What else the key accepts: the lesson's accepted answers, a numeric tolerance."""
    notes = []
    if question.accept:
        notes.append(f"{escape(sheet.labels.accepted)}: " + "; ".join(escape(a) for a in question.accept))
    if question.tolerance:
        notes.append(f"{escape(sheet.labels.tolerance)} {escape(tolerance(question, sheet.language))}")
    return "".join(f'<div class="key-also">{note}</div>' for note in notes)


def _why(question: Question) -> str:
    return f'<div class="why">{escape(question.explanation)}</div>' if question.explanation else ""
