"""The lesson parser: TOML text in, a verified :class:`~bertdrill.core.lesson.model.Lesson` out.

Parsing checks the shape (this module for the lesson's tables and values,
:mod:`.items` for each item); :func:`~.verify.verify` then proves every number.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Any

from bertdrill.core import formula
from bertdrill.core.errors import FormulaError, LessonError, LessonErrors
from bertdrill.core.formula import Formula, Number
from bertdrill.core.i18n import _
from bertdrill.core.lesson.items import read_item
from bertdrill.core.lesson.model import Item, Lesson, ParamSet, SheetSettings
from bertdrill.core.lesson.positions import TOML_POSITION, Lines
from bertdrill.core.lesson.reading import Skip
from bertdrill.core.lesson.variants import read_variants
from bertdrill.core.lesson.verify import verify
from bertdrill.core.text import CONTROL

ID_PATTERN = re.compile(r"\A[a-z0-9][a-z0-9_-]{0,63}\Z")  # \Z: "$" would let "mini\n" through
NAME_PATTERN = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]{0,31}\Z")
LANGUAGE_PATTERN = re.compile(r"\A[a-z]{2,3}\Z")
TAG_PATTERN = re.compile(r"\A[^\W_][\w:.-]{0,99}\Z")
"""A tag: letters (any script), digits and ``_ : . -``. It becomes an Anki tag, which Anki puts raw into the
card's ``data-tags`` attribute: a quote, ``<`` or ``&`` there would be markup, so they never get in."""
MAX_TEXT = 20_000
RESERVED_NAMES = frozenset({"set"})
"""Names bertdrill defines: ``{set}`` in a text is the parameter set's title, never a value."""
LESSON_KEYS = ("id", "languages", "title", "summary", "source", "tags")  # [lesson]'s fields


def parse(text: str, path: str = "<lesson>") -> Lesson:
    """Parse and verify a lesson; raise :class:`LessonErrors` listing every problem."""
    import tomllib  # here: a command whose lessons are all in the cache parses none (status, review)

    if not text.strip():
        raise LessonErrors([LessonError(path, 1, _('empty file: a lesson needs a [lesson] table'))])
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = TOML_POSITION.search(message)
        line = int(match.group(1)) if match and match.group(1) else len(text.splitlines()) or 1
        message = TOML_POSITION.sub("", message).strip()
        raise LessonErrors([LessonError(path, line, _('TOML syntax error: {message}').format(message=message))]) from None
    except RecursionError:  # tomllib reads nested arrays and inline tables recursively
        raise LessonErrors([LessonError(path, _deepest_line(text), _(
            "TOML nested too deeply: arrays or inline tables inside one another, hundreds of levels"))]) from None
    except ValueError:  # tomllib reads integers with int(), which refuses more than 4,300 digits
        line = _line_of(text, LONG_NUMBER.search(text))
        raise LessonErrors([LessonError(path, line, _("a number too long to read (thousands of digits)"))]) from None
    parser = Parser(path, Lines(text))
    lesson = parser.lesson(data)
    if lesson is None or parser.errors:
        raise LessonErrors(parser.errors)
    verified = verify(lesson, parser.lines, parser.errors)
    if parser.errors:
        raise LessonErrors(parser.errors)
    return replace(lesson, verified=verified)


LONG_NUMBER = re.compile(r"[0-9_]{4000,}")


def _line_of(text: str, match: re.Match[str] | None) -> int:
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _deepest_line(text: str) -> int:
    """The line where brackets first nest a hundred deep (strings are not told apart: a pointer, not a parse)."""
    depth = 0
    for number, line in enumerate(text.splitlines(), 1):
        for ch in line:
            depth += (ch in "[{") - (ch in "]}")
            if depth > 100:
                return number
    return 1


class Parser:
    def __init__(self, path: str, lines: Lines):
        self.path = path
        self.lines = lines
        self.errors: list[LessonError] = []
        self.languages: tuple[str, ...] = ()

    def fail(self, line: int | None, message: str) -> Skip:
        self.errors.append(LessonError(self.path, line, message))
        return Skip()

    # -- top level

    def lesson(self, data: dict[str, Any]) -> Lesson | None:
        known = {"lesson", "params", "formulas", "item", "sheet", "variants", "names"}
        for key in data:
            if key not in known:
                self.fail(self.lines.key("", key, 1), _('unknown table [{key}] (expected one of: {names})').format(key=key, names=', '.join(sorted(known))))
        header = data.get("lesson")
        if not isinstance(header, dict):
            self.fail(1, _('missing [lesson] table with id, languages and title'))
            return None
        self.header_keys(header)
        try:
            lesson_id = self.ident(header.get("id"), self.lines.key("lesson", "id"), _('lesson id'))
            self.languages = self.language_list(header.get("languages"))
            title = self.text(header, "title", "lesson", required=True)
            summary = self.text(header, "summary", "lesson")
            source = self.text(header, "source", "lesson")
            tags = self.tags(header, "lesson")
        except Skip:
            return None
        params = self.param_sets(data.get("params", {}))
        formulas, formula_lines = self.formula_table(data.get("formulas", {}), self.parameter_lines(params))
        items = self.item_list(data.get("item", []))
        sheet = self.sheet_settings(data.get("sheet", {}), params)
        names = self.name_table(data.get("names", {}), params, formulas)
        space = None
        if "variants" in data:
            try:
                space = read_variants(self, data["variants"], params)
            except Skip:
                pass
        return Lesson(lesson_id, self.path, self.languages, title, summary, source, tags,
                      params, formulas, items, formula_lines, sheet=sheet, variant_space=space, names=names)

    def header_keys(self, header: dict[str, Any]) -> None:
        """A key of ``[lesson]`` that is none of its fields (a typo such as ``titel``, a ``[lesson.extra]`` table) is
        an error on its own line: read silently, it would be a setting the author believes is in force."""
        for key in header:
            if key not in LESSON_KEYS:
                self.fail(self.lines.key("lesson", key, self.lines.tables.get("lesson", 1)),
                          _("[lesson]: unknown key {key!r} (expected one of: {names})").format(
                              key=key, names=", ".join(LESSON_KEYS)))

    def name_table(self, table: object, params: dict[str, ParamSet], formulas: dict[str, formula.Formula]
                   ) -> dict[str, dict[str, str]]:
        """``[names]``: what a formula, a parameter or a term (``"2 * d"``) is called, per language.

        Diagnosis says "total of BERT-base without every LayerNorm (2 * d)" in the learner's
        language with these; a name or term not in the table is shown as the lesson writes it.
        """
        line = self.lines.tables.get("names", 1)
        if not isinstance(table, dict):
            self.fail(line, _("[names] must map formula names, parameters or terms to texts"))
            return {}
        known = set(formulas) | {name for params_set in params.values() for name in params_set.values}
        names: dict[str, dict[str, str]] = {}
        for key in table:
            where = self.lines.key("names", key, line)
            try:
                parsed = formula.parse(key)
            except FormulaError as exc:
                self.fail(where, _("[names]: {key!r} is no formula name, parameter or term: {error}").format(
                    key=key, error=exc))
                continue
            if unknown := sorted(parsed.names - known):
                self.fail(where, _("[names]: {message}").format(message=formula.unknown_name_message(unknown[0], known)))
                continue
            try:
                names[ast.unparse(parsed.tree)] = self.text(table, key, "names", required=True)
            except Skip:
                continue
        return names

    def sheet_settings(self, table: object, params: dict[str, ParamSet]) -> SheetSettings:
        """``[sheet]``: ``instructions`` (a text) and ``legend`` (a text per parameter name)."""
        line = self.lines.tables.get("sheet", 1)
        if not isinstance(table, dict):
            self.fail(line, _('[sheet] must be a table with instructions and a legend'))
            return SheetSettings()
        for key in table:
            if key not in ("instructions", "legend"):
                self.fail(self.lines.key("sheet", key, line), _('[sheet]: unknown key {key!r} (expected instructions, legend)').format(key=key))
        try:
            instructions = self.text(table, "instructions", "sheet")
            raw_legend = table.get("legend", {})
            if not isinstance(raw_legend, dict):
                raise self.fail(self.lines.tables.get("sheet.legend", line),
                                _('[sheet.legend] must map parameter names to texts'))
            names = {name for params_set in params.values() for name in params_set.values}
            legend = {}
            for name in raw_legend:
                if name not in names:
                    raise self.fail(self.lines.key("sheet.legend", name, line),
                                    f"[sheet.legend]: {formula.unknown_name_message(name, names)}")
                legend[name] = self.text(raw_legend, name, "sheet.legend", required=True)
        except Skip:
            return SheetSettings()
        return SheetSettings(instructions, legend)

    def language_list(self, value: object) -> tuple[str, ...]:
        line = self.lines.key("lesson", "languages")
        if not isinstance(value, list) or not value:
            raise self.fail(line, _('lesson languages must be a non-empty list such as ["en", "tr"]'))
        for language in value:
            if not isinstance(language, str) or not LANGUAGE_PATTERN.match(language):
                raise self.fail(line, _('language {language!r} is not a language code such as "en"').format(language=language))
        if len(set(value)) != len(value):
            raise self.fail(line, _('a language is listed twice'))
        return tuple(value)

    def param_sets(self, table: object) -> dict[str, ParamSet]:
        if not isinstance(table, dict):
            self.fail(self.lines.key("", "params", 1), _('[params] must hold named parameter sets, such as [params.bert-base]'))
            return {}
        sets: dict[str, ParamSet] = {}
        for name, values in table.items():
            where = f"params.{name}"
            line = self.lines.tables.get(where, 1)
            try:
                self.ident(name, line, _('parameter set name'))
                if not isinstance(values, dict):
                    raise self.fail(line, _('parameter set {name!r} must be a table of numbers').format(name=name))
                numbers: dict[str, Number] = {}
                title = name
                for key, value in values.items():
                    key_line = self.lines.key(where, key, line)
                    if key == "title":
                        title = self.plain(value, key_line, _('title of parameter set {name!r}').format(name=name))
                        continue
                    if not NAME_PATTERN.match(key):
                        raise self.fail(key_line, _('parameter name {key!r} is not a valid name').format(key=key))
                    if key in RESERVED_NAMES:
                        raise self.fail(key_line, _("{name!r} is bertdrill's own name ({{set}} in a text is the set's "
                                                    "title); choose another").format(name=key))
                    numbers[key] = self.number(value, key_line, _('parameter {key!r} of {name!r}').format(key=key, name=name))
                sets[name] = ParamSet(name, title, numbers, line)
            except Skip:
                continue
        names = [frozenset(s.values) for s in sets.values()]
        if names and any(n != names[0] for n in names):
            first = next(iter(sets.values()))
            for other in sets.values():
                if frozenset(other.values) != names[0]:
                    missing = sorted(names[0] ^ frozenset(other.values))
                    self.fail(other.line, _('parameter set {name!r} and {name2!r} differ in: {names}').format(name=other.name, name2=first.name, names=', '.join(missing)))
        return sets

    def parameter_lines(self, sets: dict[str, ParamSet]) -> dict[str, int]:
        """Each parameter's name and the line of its first definition."""
        lines: dict[str, int] = {}
        for params in sets.values():
            for name in params.values:
                lines.setdefault(name, self.lines.key(f"params.{params.name}", name, params.line) or params.line)
        return lines

    def formula_table(self, table: object, parameters: dict[str, int]) -> tuple[dict[str, Formula], dict[str, int]]:
        """The formulas; a name is defined once: a formula named like a parameter would silently replace it."""
        formulas: dict[str, Formula] = {}
        lines: dict[str, int] = {}
        if not isinstance(table, dict):
            self.fail(self.lines.key("", "formulas", 1), _('[formulas] must map names to formula text'))
            return formulas, lines
        for name, source in table.items():
            line = self.lines.key("formulas", name, 1) or 1
            lines[name] = line
            if not NAME_PATTERN.match(name):
                self.fail(line, _('formula name {name!r} is not a valid name').format(name=name))
                continue
            if name in RESERVED_NAMES:
                self.fail(line, _("{name!r} is bertdrill's own name ({{set}} in a text is the set's "
                                  "title); choose another").format(name=name))
                continue
            if name in parameters:
                self.fail(line, _("formula {name!r} has the name of a parameter (line {first}): "
                                  "a name is defined once; rename one of them").format(name=name, first=parameters[name]))
                continue
            try:
                formulas[name] = formula.parse(source)
            except FormulaError as exc:
                self.fail(line, _('formula {name!r}: {exc}').format(name=name, exc=exc))
        return formulas, lines

    def item_list(self, raw: object) -> tuple[Item, ...]:
        if not isinstance(raw, list):
            self.fail(self.lines.key("", "item", 1), _('items are written as [[item]] tables'))
            return ()
        items: list[Item] = []
        seen: dict[str, int] = {}
        for index, data in enumerate(raw):
            line = self.lines.item(index)
            try:
                item = read_item(self, data, f"item#{index}", line)
            except Skip:
                continue
            if item.id in seen:
                self.fail(self.lines.key(f"item#{index}", "id", line),
                          _('duplicate item id {id!r} (first used on line {seen})').format(id=item.id, seen=seen[item.id]))
                continue
            seen[item.id] = item.line
            items.append(item)
        return tuple(items)

    # -- values

    def ident(self, value: object, line: int | None, what: str) -> str:
        if not isinstance(value, str) or not ID_PATTERN.match(value):
            raise self.fail(line, _("{what} {value!r} must be lower-case letters, digits, '-' or '_' (at most 64)").format(what=what, value=value))
        return value

    def plain(self, value: object, line: int | None, what: str) -> str:
        if not isinstance(value, str):
            raise self.fail(line, _('{what} must be text, not {kind}').format(what=what, kind=type(value).__name__))
        if len(value) > MAX_TEXT:
            raise self.fail(line, _('{what} is too long ({count:,} characters)').format(what=what, count=len(value)))
        return self.visible(value, line, what)

    def visible(self, value: str, line: int | None, what: str) -> str:
        """Lesson text is shown in terminals and documents: no control characters (but newline and tab)."""
        if found := CONTROL.search(value):
            raise self.fail(line, _('{what} holds the control character U+{code:04X}, which would act instead of being shown in a terminal or a document; remove it').format(what=what, code=ord(found.group())))
        return value

    def number(self, value: object, line: int | None, what: str) -> Number:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(line, _('{what} must be a number, not {kind}').format(what=what, kind=type(value).__name__))
        try:
            result = formula.evaluate(str(value), {})
        except FormulaError as exc:
            raise self.fail(line, f"{what}: {exc}") from None
        return result

    def text(self, data: dict[str, Any], key: str, table: str, *, required: bool = False) -> dict[str, str]:
        """A human text: a table with one entry per lesson language, or one language-free string."""
        line = self.lines.key(table, key, self.lines.tables.get(table))
        if key not in data:
            if required:
                raise self.fail(line, _('{what}: missing {key!r}').format(what=_what(table, data), key=key))
            return {}
        value = data[key]
        if isinstance(value, str):
            return {language: self.plain(value, line, key) for language in self.languages}
        if not isinstance(value, dict):
            raise self.fail(line, _('{what}: {key!r} must be text or a table of texts per language').format(what=_what(table, data), key=key))
        for language in self.languages:
            if language not in value:
                raise self.fail(line, _('{what}: {key!r} has no {language!r} text').format(what=_what(table, data), key=key, language=language))
        for language in value:
            if language not in self.languages:
                raise self.fail(line, _('{what}: {key!r} has text for {language!r}, which is not a lesson language').format(what=_what(table, data), key=key, language=language))
        return {language: self.plain(value[language], line, f"{key} ({language})") for language in self.languages}

    def tags(self, data: dict[str, Any], table: str) -> tuple[str, ...]:
        value = data.get("tags", [])
        line = self.lines.key(table, "tags")
        if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
            raise self.fail(line, _('tags must be a list of words without spaces'))
        for tag in value:
            if not TAG_PATTERN.match(tag):
                raise self.fail(line, _('tag {tag!r}: a tag is a word of letters, digits and _ : . - (no spaces, '
                                        'quotes or markup), at most 100 characters').format(tag=tag))
        return tuple(value)


def _what(table: str, data: dict[str, Any]) -> str:
    if table.startswith("item#") and isinstance(data.get("id"), str):
        return _('item {id!r}').format(id=data['id'])
    return f"[{table}]" if table else "lesson"
