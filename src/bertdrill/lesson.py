"""The lesson model and its parser: TOML text in, a verified :class:`Lesson` out.

A lesson file holds everything once: ids, parameter sets, formulas and
answers, with each human text given per language. Parsing checks the shape;
:func:`verify` then proves every number the lesson states against its formula.
Both report problems as :class:`~bertdrill.errors.LessonError` with the line
they come from, so an author sees ``decks/bert.toml:42: ...``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction

from . import formula
from .errors import FormulaError, LessonError, LessonErrors
from .formula import Formula, Number
from .i18n import _

KINDS = ("fact", "choice", "blank", "numeric", "match", "practice")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")
LANGUAGE_PATTERN = re.compile(r"^[a-z]{2,3}$")
BLANK = "____"
MAX_OPTIONS = 10
MAX_TEXT = 20_000

Text = Mapping[str, str]  # language code -> text
# Control characters (Unicode Cc) other than newline and tab: in a terminal or a document they act
# (ESC starts a sequence that recolours, retitles or clears a terminal) instead of being read.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(?:@([a-z0-9][a-z0-9_-]*))?\}")


def grouping(language: str) -> str:
    """The thousands separator people expect: 23,837,184 in English, 23.837.184 in Turkish."""
    return "." if language in {"tr", "de", "es", "it", "pt", "nl", "id"} else ","


def item_texts(item: Item) -> Iterator[tuple[str, str, str]]:
    """Every human text of an item as (field, language, text), for rendering checks."""
    for field_name in ("prompt", "answer", "explanation"):
        for language, text in getattr(item, field_name).items():
            yield field_name, language, text
    for language, options in item.options.items():
        for text in options:
            yield "options", language, text
    for pair in item.pairs:
        for language, text in pair.term.items():
            yield "pairs", language, text
        for language, text in (pair.meaning or {}).items():
            yield "pairs", language, text


@dataclass(frozen=True)
class ParamSet:
    name: str
    title: str
    values: Mapping[str, Number]
    line: int


@dataclass(frozen=True)
class Claim:
    """A number the lesson states in prose: exact, or approximate by significant figures."""

    value: str  # a formula expression, usually a formula's name
    set: str
    stated: str  # "110M", "~23 million", "2/3", "0.666"
    digits: int | None
    line: int


@dataclass(frozen=True)
class Pair:
    id: str
    term: Text
    meaning: Text | None  # a text meaning, or None when `value` gives it
    value: str | None  # a formula expression over the table's parameter set
    line: int


@dataclass(frozen=True)
class Item:
    """One teachable thing. Fields not used by its kind keep their defaults."""

    id: str
    kind: str
    line: int
    prompt: Text
    answer: Text = field(default_factory=dict)
    explanation: Text = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    accept: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    claims: tuple[Claim, ...] = ()
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # choice
    correct: int = 0  # choice: 0-based index of the right option
    text: str = ""  # blank: code with ____; practice: starter code
    fill: str = ""  # blank: what goes in the blank
    checks: str = ""  # blank: the formula the filled text must equal
    formula: str = ""  # numeric
    sets: tuple[str, ...] = ()  # numeric: one card per set; match/practice: one set
    stated: Mapping[str, Number] = field(default_factory=dict)  # numeric
    tolerance: Fraction = Fraction(0)  # numeric: relative tolerance
    pairs: tuple[Pair, ...] = ()  # match
    solution: str = ""  # practice
    expected: tuple[tuple[str, ...], ...] = ()  # practice: output lines as expressions


@dataclass(frozen=True)
class Lesson:
    id: str
    path: str
    languages: tuple[str, ...]
    title: Text
    summary: Text
    source: Text
    tags: tuple[str, ...]
    params: Mapping[str, ParamSet]
    formulas: Mapping[str, Formula]
    items: tuple[Item, ...]
    formula_lines: Mapping[str, int] = field(default_factory=dict)
    verified: int = 0  # how many stated numbers were proven against their formulas

    _resolved: dict = field(default_factory=dict, compare=False, repr=False)  # memo for values()/evaluate()

    def evaluate(self, expr: str, set_name: str) -> Number:
        """An expression's value over one parameter set (memoised: lessons repeat ``total`` a lot)."""
        key = (expr, set_name)
        if key not in self._resolved:
            self._resolved[key] = formula.evaluate(expr, self.values(set_name))
        return self._resolved[key]

    def values(self, set_name: str) -> Mapping[str, Number]:
        """Every parameter and formula value of one parameter set (computed once)."""
        if set_name not in self._resolved:
            self._resolved[set_name] = formula.resolve(self.params[set_name].values, self.formulas)
        return self._resolved[set_name]

    def render(self, text: str, language: str, set_name: str | None = None) -> str:
        """Fill a text's placeholders: ``{set}``, ``{d}`` (the item's set) or ``{total@bert-large}``.

        Numbers in prose come from the formulas, so they can never disagree
        with them. ``{{`` and ``}}`` stand for literal braces.
        """
        if "{" not in text and "}" not in text:
            return text  # most texts have no placeholders: skip the regular expression
        def fill(match: re.Match) -> str:
            name, explicit = match.group(1), match.group(2)
            if name is None:
                return match.group(0)[0]
            where = explicit or set_name
            if where is None:
                example = next(iter(self.params), "SET")
                raise FormulaError(f"placeholder {{{name}}} needs a parameter set, as in {{{name}@{example}}}")
            if where not in self.params:
                raise FormulaError(formula.unknown_name_message(where, self.params).replace("name", "parameter set", 1))
            if name == "set":
                return self.params[where].title
            values = self.values(where)
            if name not in values:
                raise FormulaError(f"placeholder: {formula.unknown_name_message(name, values)}")
            return formula.format_number(values[name], grouping=grouping(language))

        return PLACEHOLDER.sub(fill, text)

    def item(self, item_id: str) -> Item:
        return next(item for item in self.items if item.id == item_id)


# --- locating lines -------------------------------------------------------------------------

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"']+)\s*=")


class _Lines:
    """Where tables and keys start in the file, so errors can name a line.

    tomllib gives values, not positions, so this light scan of the text
    records the line of every header and of every ``key =`` under it.
    """

    def __init__(self, text: str):
        self.tables: dict[str, int] = {}
        self.items: list[int] = []
        self.keys: dict[tuple[str, str], int] = {}
        current = ""
        in_multiline = None
        for number, line in enumerate(text.splitlines(), start=1):
            if in_multiline:
                if line.count(in_multiline) % 2 == 1:
                    in_multiline = None
                continue
            header = _HEADER.match(line)
            if header:
                name = header.group(2).strip()
                if header.group(1) == "[[" and name == "item":
                    self.items.append(number)
                    current = f"item#{len(self.items) - 1}"
                else:
                    current = name
                    self.tables.setdefault(name, number)
                continue
            key = _KEY.match(line)
            if key:
                self.keys.setdefault((current, key.group(1).strip("\"'")), number)
            for quote in ('"""', "'''"):
                if line.count(quote) % 2 == 1:
                    in_multiline = quote

    def key(self, table: str, key: str, default: int | None = None) -> int | None:
        return self.keys.get((table, key), self.tables.get(table, default))

    def item(self, index: int) -> int:
        return self.items[index] if index < len(self.items) else 1


# --- parsing --------------------------------------------------------------------------------

_TOML_POSITION = re.compile(r"\(at line (\d+), column \d+\)|\(at end of document\)")


def parse(text: str, path: str = "<lesson>") -> Lesson:
    """Parse and verify a lesson; raise :class:`LessonErrors` listing every problem."""
    if not text.strip():
        raise LessonErrors([LessonError(path, 1, "empty file: a lesson needs a [lesson] table")])
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _TOML_POSITION.search(message)
        line = int(match.group(1)) if match and match.group(1) else len(text.splitlines()) or 1
        message = _TOML_POSITION.sub("", message).strip()
        raise LessonErrors([LessonError(path, line, f"TOML syntax error: {message}")]) from None
    parser = _Parser(path, _Lines(text))
    lesson = parser.lesson(data)
    verified = verify(lesson, parser.lines, parser.errors) if not parser.errors else 0
    if parser.errors:
        raise LessonErrors(parser.errors)
    return replace(lesson, verified=verified)


class _Skip(Exception):
    """Stop parsing the current item; its error is already recorded."""


class _Parser:
    def __init__(self, path: str, lines: _Lines):
        self.path = path
        self.lines = lines
        self.errors: list[LessonError] = []
        self.languages: tuple[str, ...] = ()

    def fail(self, line: int | None, message: str) -> _Skip:
        self.errors.append(LessonError(self.path, line, message))
        return _Skip()

    # -- top level

    def lesson(self, data: dict) -> Lesson | None:
        known = {"lesson", "params", "formulas", "item"}
        for key in data:
            if key not in known:
                self.fail(self.lines.key("", key, 1), f"unknown table [{key}] (expected one of: {', '.join(sorted(known))})")
        header = data.get("lesson")
        if not isinstance(header, dict):
            self.fail(1, "missing [lesson] table with id, languages and title")
            return None
        try:
            lesson_id = self.ident(header.get("id"), self.lines.key("lesson", "id"), "lesson id")
            self.languages = self.language_list(header.get("languages"))
            title = self.text(header, "title", "lesson", required=True)
            summary = self.text(header, "summary", "lesson")
            source = self.text(header, "source", "lesson")
            tags = self.tags(header, "lesson")
        except _Skip:
            return None
        params = self.param_sets(data.get("params", {}))
        formulas, formula_lines = self.formula_table(data.get("formulas", {}))
        items = self.item_list(data.get("item", []))
        return Lesson(lesson_id, self.path, self.languages, title, summary, source, tags,
                      params, formulas, items, formula_lines)

    def language_list(self, value: object) -> tuple[str, ...]:
        line = self.lines.key("lesson", "languages")
        if not isinstance(value, list) or not value:
            raise self.fail(line, "lesson languages must be a non-empty list such as [\"en\", \"tr\"]")
        for language in value:
            if not isinstance(language, str) or not LANGUAGE_PATTERN.match(language):
                raise self.fail(line, f"language {language!r} is not a language code such as \"en\"")
        if len(set(value)) != len(value):
            raise self.fail(line, "a language is listed twice")
        return tuple(value)

    def param_sets(self, table: object) -> dict[str, ParamSet]:
        if not isinstance(table, dict):
            self.fail(self.lines.key("", "params", 1), "[params] must hold named parameter sets, such as [params.bert-base]")
            return {}
        sets: dict[str, ParamSet] = {}
        for name, values in table.items():
            where = f"params.{name}"
            line = self.lines.tables.get(where, 1)
            try:
                self.ident(name, line, "parameter set name")
                if not isinstance(values, dict):
                    raise self.fail(line, f"parameter set {name!r} must be a table of numbers")
                numbers: dict[str, Number] = {}
                title = name
                for key, value in values.items():
                    key_line = self.lines.key(where, key, line)
                    if key == "title":
                        title = self.plain(value, key_line, f"title of parameter set {name!r}")
                        continue
                    if not NAME_PATTERN.match(key):
                        raise self.fail(key_line, f"parameter name {key!r} is not a valid name")
                    numbers[key] = self.number(value, key_line, f"parameter {key!r} of {name!r}")
                sets[name] = ParamSet(name, title, numbers, line)
            except _Skip:
                continue
        names = [frozenset(s.values) for s in sets.values()]
        if names and any(n != names[0] for n in names):
            first = next(iter(sets.values()))
            for other in sets.values():
                if frozenset(other.values) != names[0]:
                    missing = sorted(names[0] ^ frozenset(other.values))
                    self.fail(other.line, f"parameter set {other.name!r} and {first.name!r} differ in: {', '.join(missing)}")
        return sets

    def formula_table(self, table: object) -> tuple[dict[str, Formula], dict[str, int]]:
        formulas: dict[str, Formula] = {}
        lines: dict[str, int] = {}
        if not isinstance(table, dict):
            self.fail(self.lines.key("", "formulas", 1), "[formulas] must map names to formula text")
            return formulas, lines
        for name, source in table.items():
            line = self.lines.key("formulas", name, 1)
            lines[name] = line
            if not NAME_PATTERN.match(name):
                self.fail(line, f"formula name {name!r} is not a valid name")
                continue
            try:
                formulas[name] = formula.parse(source)
            except FormulaError as exc:
                self.fail(line, f"formula {name!r}: {exc}")
        return formulas, lines

    def item_list(self, raw: object) -> tuple[Item, ...]:
        if not isinstance(raw, list):
            self.fail(self.lines.key("", "item", 1), "items are written as [[item]] tables")
            return ()
        items: list[Item] = []
        seen: dict[str, int] = {}
        for index, data in enumerate(raw):
            line = self.lines.item(index)
            try:
                item = self.item(data, f"item#{index}", line)
            except _Skip:
                continue
            if item.id in seen:
                self.fail(self.lines.key(f"item#{index}", "id", line),
                          f"duplicate item id {item.id!r} (first used on line {seen[item.id]})")
                continue
            seen[item.id] = item.line
            items.append(item)
        return tuple(items)

    # -- one item

    def item(self, data: object, table: str, line: int) -> Item:
        if not isinstance(data, dict):
            raise self.fail(line, "an item must be a table")
        if "id" not in data:
            raise self.fail(line, "item has no id")
        item_id = self.ident(data["id"], self.lines.key(table, "id", line), "item id")
        kind = data.get("kind")
        if kind not in KINDS:
            raise self.fail(self.lines.key(table, "kind", line),
                            f"item {item_id!r}: unknown kind {kind!r} (expected one of: {', '.join(KINDS)})")
        allowed = _FIELDS[kind] | {"id", "kind", "explanation", "tags", "claims", "accept"}
        for key in data:
            if key not in allowed:
                raise self.fail(self.lines.key(table, key, line),
                                f"item {item_id!r}: unknown field {key!r} for a {kind} item")
        ctx = _ItemContext(self, data, table, line, item_id)
        common = dict(
            id=item_id, kind=kind, line=line,
            prompt=ctx.text("question" if kind == "fact" else "prompt", required=True),
            explanation=ctx.text("explanation"),
            tags=self.tags(data, table),
            accept=ctx.accept(),
            claims=ctx.claims(),
        )
        return getattr(ctx, kind)(common)

    # -- values

    def ident(self, value: object, line: int | None, what: str) -> str:
        if not isinstance(value, str) or not ID_PATTERN.match(value):
            raise self.fail(line, f"{what} {value!r} must be lower-case letters, digits, '-' or '_' (at most 64)")
        return value

    def plain(self, value: object, line: int | None, what: str) -> str:
        if not isinstance(value, str):
            raise self.fail(line, f"{what} must be text, not {type(value).__name__}")
        if len(value) > MAX_TEXT:
            raise self.fail(line, f"{what} is too long ({len(value):,} characters)")
        return self.visible(value, line, what)

    def visible(self, value: str, line: int | None, what: str) -> str:
        """Lesson text is shown in terminals and documents: no control characters (but newline and tab)."""
        if found := CONTROL.search(value):
            raise self.fail(line, f"{what} holds the control character U+{ord(found.group()):04X}, which would act "
                                  "instead of being shown in a terminal or a document; remove it")
        return value

    def number(self, value: object, line: int | None, what: str) -> Number:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(line, f"{what} must be a number, not {type(value).__name__}")
        try:
            result = formula.evaluate(str(value), {})
        except FormulaError as exc:
            raise self.fail(line, f"{what}: {exc}") from None
        return result

    def text(self, data: dict, key: str, table: str, *, required: bool = False) -> dict[str, str]:
        """A human text: a table with one entry per lesson language, or one language-free string."""
        line = self.lines.key(table, key, self.lines.tables.get(table))
        if key not in data:
            if required:
                raise self.fail(line, f"{_what(table, data)}: missing {key!r}")
            return {}
        value = data[key]
        if isinstance(value, str):
            return {language: self.plain(value, line, key) for language in self.languages}
        if not isinstance(value, dict):
            raise self.fail(line, f"{_what(table, data)}: {key!r} must be text or a table of texts per language")
        for language in self.languages:
            if language not in value:
                raise self.fail(line, f"{_what(table, data)}: {key!r} has no {language!r} text")
        for language in value:
            if language not in self.languages:
                raise self.fail(line, f"{_what(table, data)}: {key!r} has text for {language!r}, which is not a lesson language")
        return {language: self.plain(value[language], line, f"{key} ({language})") for language in self.languages}

    def tags(self, data: dict, table: str) -> tuple[str, ...]:
        value = data.get("tags", [])
        line = self.lines.key(table, "tags")
        if not isinstance(value, list) or not all(isinstance(t, str) and t and t.isprintable() and " " not in t
                                                  for t in value):
            raise self.fail(line, "tags must be a list of words without spaces")
        return tuple(value)


def _what(table: str, data: dict) -> str:
    if table.startswith("item#") and isinstance(data.get("id"), str):
        return f"item {data['id']!r}"
    return f"[{table}]" if table else "lesson"


_FIELDS = {
    "fact": {"question", "answer"},
    "choice": {"prompt", "options", "answer"},
    "blank": {"prompt", "text", "answer", "checks"},
    "numeric": {"prompt", "formula", "params", "stated", "tolerance"},
    "match": {"prompt", "params", "pairs"},
    "practice": {"prompt", "params", "starter", "solution", "expected"},
}


class _ItemContext:
    """Reads one item's fields, reporting errors at the field's line."""

    def __init__(self, parser: _Parser, data: dict, table: str, line: int, item_id: str):
        self.p = parser
        self.data = data
        self.table = table
        self.line = line
        self.id = item_id

    def at(self, key: str) -> int:
        return self.p.lines.key(self.table, key, self.line)

    def fail(self, key: str, message: str) -> _Skip:
        return self.p.fail(self.at(key), f"item {self.id!r}: {message}")

    def require(self, key: str) -> object:
        if key not in self.data:
            raise self.p.fail(self.line, f"item {self.id!r}: a {self.data['kind']} item needs {key!r}")
        return self.data[key]

    def text(self, key: str, *, required: bool = False) -> dict[str, str]:
        return self.p.text(self.data, key, self.table, required=required)

    def string(self, key: str) -> str:
        return self.p.plain(self.require(key), self.at(key), f"item {self.id!r}: {key!r}")

    def accept(self) -> dict[str, tuple[str, ...]]:
        value = self.data.get("accept", {})
        if isinstance(value, list):
            value = {language: value for language in self.p.languages}
        if not isinstance(value, dict) or not all(
            isinstance(v, list) and all(isinstance(s, str) for s in v) for v in value.values()
        ):
            raise self.fail("accept", "accept must be a list of texts, or a table of lists per language")
        return {language: tuple(self.p.visible(t, self.at("accept"), "an accepted answer") for t in texts)
                for language, texts in value.items()}

    def claims(self) -> tuple[Claim, ...]:
        raw = self.data.get("claims", [])
        line = self.at("claims")
        if not isinstance(raw, list):
            raise self.fail("claims", "claims must be a list of { value, params, stated } tables")
        claims = []
        for claim in raw:
            if not isinstance(claim, dict) or not {"value", "params", "stated"} <= set(claim):
                raise self.fail("claims", "each claim needs value, params and stated, "
                                          "e.g. { value = \"total\", params = \"bert-base\", stated = \"~110M\" }")
            unknown = set(claim) - {"value", "params", "stated", "digits"}
            if unknown:
                raise self.fail("claims", f"unknown claim field {sorted(unknown)[0]!r}")
            digits = claim.get("digits")
            if digits is not None and (not isinstance(digits, int) or isinstance(digits, bool) or not 1 <= digits <= 15):
                raise self.fail("claims", "claim digits must be a whole number from 1 to 15")
            claims.append(Claim(str(claim["value"]), str(claim["params"]), str(claim["stated"]), digits, line))
        return tuple(claims)

    def set_list(self, *, single: bool) -> tuple[str, ...]:
        value = self.require("params")
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise self.fail("params", "params must name a parameter set, or list several")
        if single and len(names) != 1:
            raise self.fail("params", "params must name exactly one parameter set")
        return tuple(names)

    # -- kinds

    def fact(self, common: dict) -> Item:
        return Item(**common, answer=self.text("answer", required=True))

    def choice(self, common: dict) -> Item:
        raw = self.require("options")
        if isinstance(raw, list):
            raw = {language: raw for language in self.p.languages}
        if not isinstance(raw, dict):
            raise self.fail("options", "options must be a table of lists per language")
        options: dict[str, tuple[str, ...]] = {}
        for language in self.p.languages:
            texts = raw.get(language)
            if texts is None:
                raise self.fail("options", f"options have no {language!r} list")
            if not isinstance(texts, list) or not all(isinstance(t, str) and t.strip() for t in texts):
                raise self.fail("options", f"{language!r} options must be a list of non-empty texts")
            if not 2 <= len(texts) <= MAX_OPTIONS:
                raise self.fail("options", f"a choice needs 2 to {MAX_OPTIONS} options, not {len(texts)}")
            options[language] = tuple(self.p.visible(t, self.at("options"), f"an option ({language})") for t in texts)
        counts = {len(texts) for texts in options.values()}
        if len(counts) > 1:
            raise self.fail("options", "every language must list the same number of options")
        answer = self.require("answer")
        count = counts.pop()
        if isinstance(answer, bool) or not isinstance(answer, int) or not 1 <= answer <= count:
            raise self.fail("answer", f"answer must be the number of the correct option, 1 to {count} (got {answer!r})")
        return Item(**common, options=options, correct=answer - 1,
                    answer={lang: options[lang][answer - 1] for lang in self.p.languages})

    def blank(self, common: dict) -> Item:
        text = self.string("text")
        if text.count(BLANK) != 1:
            raise self.fail("text", f"a blank's text must contain {BLANK!r} exactly once")
        fill = self.require("answer")
        if isinstance(fill, bool) or not isinstance(fill, (str, int)):
            raise self.fail("answer", "a blank's answer must be text or a whole number")
        checks = self.string("checks")
        return Item(**common, text=text, fill=str(fill), checks=checks,
                    answer={lang: str(fill) for lang in self.p.languages})

    def numeric(self, common: dict) -> Item:
        expr = self.string("formula")
        sets = self.set_list(single=False)
        stated_raw = self.data.get("stated", {})
        if not isinstance(stated_raw, dict):
            raise self.fail("stated", "stated must be a table of numbers by parameter set")
        stated = {name: self.p.number(value, self.at("stated"), f"item {self.id!r}: stated {name!r}")
                  for name, value in stated_raw.items()}
        tolerance = self.p.number(self.data.get("tolerance", 0), self.at("tolerance"), f"item {self.id!r}: tolerance")
        if not 0 <= tolerance < 1:
            raise self.fail("tolerance", "tolerance is a share of the answer, from 0 up to (not including) 1")
        return Item(**common, formula=expr, sets=sets, stated=stated, tolerance=Fraction(tolerance))

    def match(self, common: dict) -> Item:
        sets = self.set_list(single=True)
        raw = self.require("pairs")
        if not isinstance(raw, list) or len(raw) < 2:
            raise self.fail("pairs", "a matching table needs at least two pairs")
        pairs: list[Pair] = []
        for pair in raw:
            if not isinstance(pair, dict) or "id" not in pair or "term" not in pair:
                raise self.fail("pairs", "each pair needs an id and a term, and a meaning or a value")
            pair_id = self.p.ident(pair["id"], self.at("pairs"), f"item {self.id!r}: pair id")
            if ("meaning" in pair) == ("value" in pair):
                raise self.fail("pairs", f"pair {pair_id!r} needs either a meaning text or a value formula")
            if pair_id in {p.id for p in pairs}:
                raise self.fail("pairs", f"duplicate pair id {pair_id!r}")
            term = self.p.text(pair, "term", self.table, required=True)
            meaning = self.p.text(pair, "meaning", self.table) if "meaning" in pair else None
            value = str(pair["value"]) if "value" in pair else None
            pairs.append(Pair(pair_id, term, meaning, value, self.at("pairs")))
        return Item(**common, sets=sets, pairs=tuple(pairs))

    def practice(self, common: dict) -> Item:
        sets = self.set_list(single=True)
        starter = self.string("starter")
        solution = self.string("solution")
        raw = self.require("expected")
        if not isinstance(raw, list) or not raw or not all(
            isinstance(line, list) and line and all(isinstance(e, str) for e in line) for line in raw
        ):
            raise self.fail("expected", "expected must be a list of output lines, each a list of formulas")
        return Item(**common, sets=sets, text=starter, solution=solution,
                    expected=tuple(tuple(line) for line in raw))


# --- verification ---------------------------------------------------------------------------

SCALES = {
    "k": 10**3, "thousand": 10**3, "bin": 10**3,
    "m": 10**6, "mn": 10**6, "million": 10**6, "milyon": 10**6,
    "b": 10**9, "bn": 10**9, "billion": 10**9, "milyar": 10**9,
}
"""Words and suffixes for round numbers, in English and Turkish: shared by claims and typed answers."""
MAX_STATED_DIGITS = 30
"""A claim states a rounded number: more digits than this is a mistake, and would make rounding costly."""
_APPROX = re.compile(r"^~?\s*(\d+(?:[.,]\d+)?)(?:\s*/\s*(\d+))?\s*([A-Za-z]+)?$")


def parse_approx(stated: str) -> tuple[Fraction, int]:
    """``"~110M"`` -> (110000000, 2 significant figures); ``"2/3"`` -> (2/3, 2)."""
    match = _APPROX.match(stated.strip())
    if not match:
        raise ValueError(f"cannot read {stated!r} as a number such as 110M, 23 million, 0.67 or 2/3")
    mantissa, denominator, scale = match.groups()
    count = sum(ch.isdigit() for ch in mantissa + (denominator or ""))
    if count > MAX_STATED_DIGITS:
        raise ValueError(_("a stated number has at most {most} digits, not {count:,}").format(
            most=MAX_STATED_DIGITS, count=count))
    if denominator and int(denominator) == 0:
        raise ValueError(_("{stated!r} divides by zero").format(stated=stated))
    if denominator:
        return Fraction(mantissa.replace(",", ".")) / int(denominator), 2
    mantissa = mantissa.replace(",", ".")
    factor = 1
    if scale:
        if scale.lower() not in SCALES:
            raise ValueError(f"unknown scale {scale!r} in {stated!r}")
        factor = SCALES[scale.lower()]
    digits = mantissa.replace(".", "").lstrip("0")
    significant = len(digits if "." in mantissa else digits.rstrip("0")) or 1
    return Fraction(mantissa) * factor, significant


def round_significant(value: Number, digits: int) -> Fraction:
    """Round to ``digits`` significant figures, exactly."""
    value = Fraction(value)
    if value == 0:
        return value
    step = Fraction(10) ** (formula.decimal_exponent(value) - digits + 1)
    return round(value / step) * step


def filled_expression(text: str, fill: str) -> str:
    """The blank's text with the blank filled, right of its last '=' (``dikkat = 4 * ...`` -> ``4 * ...``)."""
    filled = text.replace(BLANK, f"({fill})")
    return filled.rsplit("=", 1)[-1].strip()


def verify(lesson: Lesson, lines: _Lines, errors: list[LessonError]) -> int:
    """Check every stated number against its formula; return how many claims were verified."""
    verifier = _Verifier(lesson, lines, errors)
    verifier.run()
    return verifier.count


class _Verifier:
    def __init__(self, lesson: Lesson, lines: _Lines, errors: list[LessonError]):
        self.lesson = lesson
        self.lines = lines
        self.errors = errors
        self.count = 0
        self.values: dict[str, dict[str, Number]] = {}

    def fail(self, line: int | None, message: str) -> None:
        self.errors.append(LessonError(self.lesson.path, line, message))

    def run(self) -> None:
        names = set(self.lesson.formulas) | {n for s in self.lesson.params.values() for n in s.values}
        try:
            formula.order(self.lesson.formulas, names)
            for name in self.lesson.params:
                try:
                    self.values[name] = self.lesson.values(name)
                except FormulaError as exc:
                    raise FormulaError(f"{exc} (with parameter set {name!r})", formula=exc.formula) from None
        except FormulaError as exc:
            line = self.lesson.formula_lines.get(exc.formula or "", self.lines.tables.get("formulas"))
            self.fail(line, str(exc))
            return
        tables = {line: f"item#{index}" for index, line in enumerate(self.lines.items)}
        for item in self.lesson.items:
            table = tables.get(item.line, "")
            check = getattr(self, item.kind, None)
            try:
                self.placeholders(item, table)
                for claim in item.claims:
                    self.claim(item, claim)
                if check:
                    check(item, table)
            except _Stop:
                continue

    def placeholders(self, item: Item, table: str) -> None:
        own_set = item.sets[0] if item.sets else None
        for field_name, language, text in item_texts(item):
            try:
                self.lesson.render(text, language, own_set)
            except FormulaError as exc:
                self.fail(self.at(table, field_name, item), f"item {item.id!r}: {field_name} ({language}): {exc}")
                raise _Stop from None

    def at(self, table: str, key: str, item: Item) -> int:
        return self.lines.key(table, key, item.line) or item.line

    def evaluate(self, expr: str, set_name: str, line: int, item: Item) -> Number:
        if set_name not in self.values:
            known = formula.unknown_name_message(set_name, self.values).replace("name", "parameter set", 1)
            self.fail(line, f"item {item.id!r}: {known}")
            raise _Stop
        try:
            return self.lesson.evaluate(expr, set_name)
        except FormulaError as exc:
            self.fail(line, f"item {item.id!r}: {exc} in {expr!r}")
            raise _Stop from None

    def claim(self, item: Item, claim: Claim) -> None:
        actual = self.evaluate(claim.value, claim.set, claim.line, item)
        try:
            stated, digits = parse_approx(claim.stated)
        except ValueError as exc:
            self.fail(claim.line, f"item {item.id!r}: {exc}")
            raise _Stop from None
        digits = claim.digits or digits
        if round_significant(actual, digits) != round_significant(stated, digits):
            self.fail(claim.line, f"item {item.id!r}: claim {claim.stated!r} does not round to "
                                  f"{claim.value} = {formula.format_number(actual, grouping=',')} "
                                  f"for {claim.set} ({digits} significant figures)")
            raise _Stop
        self.count += 1

    def blank(self, item: Item, table: str) -> None:
        filled = filled_expression(item.text, item.fill)
        for set_name in self.lesson.params:
            want = self.evaluate(item.checks, set_name, self.at(table, "checks", item), item)
            got = self.evaluate(filled, set_name, self.at(table, "answer", item), item)
            if got != want:
                self.fail(self.at(table, "answer", item),
                          f"item {item.id!r}: the filled text {filled!r} gives {formula.format_number(got)} "
                          f"for {set_name}, but {item.checks!r} gives {formula.format_number(want)}")
                raise _Stop
            self.count += 1

    def numeric(self, item: Item, table: str) -> None:
        for set_name in item.sets:
            self.evaluate(item.formula, set_name, self.at(table, "params", item), item)
        for set_name, stated in item.stated.items():
            if set_name not in item.sets:
                self.fail(self.at(table, "stated", item),
                          f"item {item.id!r}: stated names {set_name!r}, which is not in its params")
                raise _Stop
            actual = self.evaluate(item.formula, set_name, self.at(table, "formula", item), item)
            if actual != stated:
                self.fail(self.at(table, "stated", item),
                          f"item {item.id!r}: stated {formula.format_number(stated)} for {set_name}, "
                          f"but {item.formula!r} gives {formula.format_number(actual)}")
                raise _Stop
            self.count += 1

    def match(self, item: Item, table: str) -> None:
        for pair in item.pairs:
            if pair.value is not None:
                self.evaluate(pair.value, item.sets[0], pair.line, item)
                self.count += 1

    def practice(self, item: Item, table: str) -> None:
        for line in item.expected:
            for expr in line:
                self.evaluate(expr, item.sets[0], self.at(table, "expected", item), item)
                self.count += 1


class _Stop(Exception):
    """Stop checking the current item; its error is recorded."""
