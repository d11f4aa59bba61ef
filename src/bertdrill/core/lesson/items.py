"""Reading one ``[[item]]`` table into the item dataclass of its kind."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, TypedDict, assert_never

from bertdrill.core.i18n import _
from bertdrill.core.kinds import Kind
from bertdrill.core.lesson.claims import read_claims
from bertdrill.core.lesson.model import (
    BLANK,
    BlankItem,
    ChoiceItem,
    Claim,
    FactItem,
    Item,
    MatchItem,
    NumericItem,
    Pair,
    PracticeItem,
    Text,
)
from bertdrill.core.lesson.reading import FieldReader, Skip

MAX_OPTIONS = 10
KIND_NAMES = tuple(kind.value for kind in Kind)
_KIND_BY_NAME = {kind.value: kind for kind in Kind}  # a dict lookup: Kind(name) costs a few µs per item
COMMON_FIELDS = frozenset({"id", "kind", "explanation", "source", "tags", "claims", "accept", "points"})
MAX_POINTS = 100


def fields(kind: Kind) -> frozenset[str]:
    """The fields an item of ``kind`` may have, besides the common ones."""
    match kind:
        case Kind.FACT:
            return frozenset({"question", "answer", "parts"})
        case Kind.CHOICE:
            return frozenset({"prompt", "options", "answer"})
        case Kind.BLANK:
            return frozenset({"prompt", "text", "answer", "checks"})
        case Kind.NUMERIC:
            return frozenset({"prompt", "formula", "params", "stated", "tolerance", "variants"})
        case Kind.MATCH:
            return frozenset({"prompt", "params", "pairs"})
        case Kind.PRACTICE:
            return frozenset({"prompt", "params", "starter", "solution", "expected"})
        case _:
            assert_never(kind)


class Common(TypedDict):
    """The fields every kind of item has (:class:`~bertdrill.core.lesson.model.ItemBase`), as read: typed, so
    mypy checks them against each item's dataclass where they are passed on."""

    id: str
    line: int
    prompt: Text
    explanation: Text
    source: Text
    tags: tuple[str, ...]
    accept: Mapping[str, tuple[str, ...]]
    claims: tuple[Claim, ...]
    points: int | None


def read_item(parser: FieldReader, data: object, table: str, line: int) -> Item:
    """One item; raises the parser's ``Skip`` after recording what is wrong with it."""
    if not isinstance(data, dict):
        raise parser.fail(line, _('an item must be a table'))
    if "id" not in data:
        raise parser.fail(line, _('item has no id'))
    item_id = parser.ident(data["id"], parser.lines.key(table, "id", line), _('item id'))
    raw_kind = data.get("kind")
    if raw_kind not in KIND_NAMES:  # a tuple: the value may be a list, which no set holds
        raise parser.fail(parser.lines.key(table, "kind", line),
                          _('item {item_id!r}: unknown kind {raw_kind!r} (expected one of: {names})').format(item_id=item_id, raw_kind=raw_kind, names=', '.join(KIND_NAMES)))
    kind = _KIND_BY_NAME[raw_kind]
    allowed = fields(kind) | COMMON_FIELDS
    for key in data:
        if key not in allowed:
            raise parser.fail(parser.lines.key(table, key, line),
                              _('item {item_id!r}: unknown field {key!r} for a {kind} item').format(item_id=item_id, key=key, kind=kind))
    reader = ItemReader(parser, data, table, line, item_id)
    common = Common(
        id=item_id, line=line,
        prompt=reader.text("question" if kind is Kind.FACT else "prompt", required=True),
        explanation=reader.text("explanation"),
        source=reader.text("source"),
        tags=parser.tags(data, table),
        accept=reader.accept(),
        claims=read_claims(reader),
        points=reader.points(),
    )
    match kind:
        case Kind.FACT:
            return reader.fact(common)
        case Kind.CHOICE:
            return reader.choice(common)
        case Kind.BLANK:
            return reader.blank(common)
        case Kind.NUMERIC:
            return reader.numeric(common)
        case Kind.MATCH:
            return reader.match(common)
        case Kind.PRACTICE:
            return reader.practice(common)
        case _:
            assert_never(kind)


class ItemReader:
    """Reads one item's fields, reporting errors at the field's line."""

    def __init__(self, parser: FieldReader, data: dict[str, Any], table: str, line: int, item_id: str):
        self.p = parser
        self.data = data
        self.table = table
        self.line = line
        self.id = item_id

    def at(self, key: str) -> int | None:
        return self.p.lines.key(self.table, key, self.line)

    def fail(self, key: str, message: str) -> Skip:
        return self.p.fail(self.at(key), _('item {id!r}: {message}').format(id=self.id, message=message))

    def require(self, key: str) -> object:
        if key not in self.data:
            raise self.p.fail(self.line, _('item {id!r}: a {kind} item needs {key!r}').format(id=self.id, kind=self.data['kind'], key=key))
        return self.data[key]

    def text(self, key: str, *, required: bool = False) -> dict[str, str]:
        return self.p.text(self.data, key, self.table, required=required)

    def code(self, key: str) -> dict[str, str]:
        """Code, given once for every language or per language (English identifiers in English)."""
        self.require(key)
        return self.text(key, required=True)

    def string(self, key: str) -> str:
        return self.p.plain(self.require(key), self.at(key), _('item {id!r}: {key!r}').format(id=self.id, key=key))

    def accept(self) -> dict[str, tuple[str, ...]]:
        value = self.data.get("accept", {})
        if isinstance(value, list):
            value = {language: value for language in self.p.languages}
        if not isinstance(value, dict) or not all(
            isinstance(v, list) and all(isinstance(s, str) for s in v) for v in value.values()
        ):
            raise self.fail("accept", _('accept must be a list of texts, or a table of lists per language'))
        return {language: tuple(self.p.visible(t, self.at("accept"), _('an accepted answer')) for t in texts)
                for language, texts in value.items()}

    def points(self) -> int | None:
        """What the item is worth on a sheet, when the lesson says (a whole number of points)."""
        if "points" not in self.data:
            return None
        value = self.data["points"]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_POINTS:
            raise self.fail("points", _('points must be a whole number from 1 to {MAX_POINTS}, not {value!r}').format(MAX_POINTS=MAX_POINTS, value=value))
        return value

    def set_list(self, *, single: bool) -> tuple[str, ...]:
        value = self.require("params")
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise self.fail("params", _('params must name a parameter set, or list several'))
        if single and len(names) != 1:
            raise self.fail("params", _('params must name exactly one parameter set'))
        return tuple(names)

    # -- kinds

    def fact(self, common: Common) -> FactItem:
        return FactItem(**common, answer=self.text("answer", required=True), parts=self.parts())

    def parts(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        """``parts``: a list of parts (each a wording or a list of wordings), once or per language."""
        value = self.data.get("parts", {})
        if isinstance(value, list):
            value = {language: value for language in self.p.languages}
        rule = _("parts must be a list of parts (a text, or a list of texts any one of which counts), "
                 "or a table of such lists per language")
        if not isinstance(value, dict):
            raise self.fail("parts", rule)
        parts: dict[str, tuple[tuple[str, ...], ...]] = {}
        for language, listed in value.items():
            if language not in self.p.languages:
                raise self.fail("parts", _("parts for {language!r}, which is not a lesson language").format(
                    language=language))
            if not isinstance(listed, list) or not listed:
                raise self.fail("parts", rule)
            wordings = [[part] if isinstance(part, str) else part for part in listed]
            if not all(isinstance(w, list) and w and all(isinstance(t, str) and t.strip() for t in w)
                       for w in wordings):
                raise self.fail("parts", rule)
            parts[language] = tuple(tuple(self.p.visible(t, self.at("parts"), _("a part of the answer")) for t in w)
                                    for w in wordings)
        return parts

    def choice(self, common: Common) -> ChoiceItem:
        raw = self.require("options")
        if isinstance(raw, list):
            raw = {language: raw for language in self.p.languages}
        if not isinstance(raw, dict):
            raise self.fail("options", _('options must be a table of lists per language'))
        options: dict[str, tuple[str, ...]] = {}
        for language in self.p.languages:
            texts = raw.get(language)
            if texts is None:
                raise self.fail("options", _('options have no {language!r} list').format(language=language))
            if not isinstance(texts, list) or not all(isinstance(t, str) and t.strip() for t in texts):
                raise self.fail("options", _('{language!r} options must be a list of non-empty texts').format(language=language))
            if not 2 <= len(texts) <= MAX_OPTIONS:
                raise self.fail("options", _('a choice needs 2 to {MAX_OPTIONS} options, not {count}').format(MAX_OPTIONS=MAX_OPTIONS, count=len(texts)))
            options[language] = tuple(self.p.visible(t, self.at("options"), _('an option ({language})').format(language=language)) for t in texts)
        counts = {len(texts) for texts in options.values()}
        if len(counts) > 1:
            raise self.fail("options", _('every language must list the same number of options'))
        answer = self.require("answer")
        count = counts.pop()
        if isinstance(answer, bool) or not isinstance(answer, int) or not 1 <= answer <= count:
            raise self.fail("answer", _('answer must be the number of the correct option, 1 to {count} (got {answer!r})').format(count=count, answer=answer))
        return ChoiceItem(**common, options=options, correct=answer - 1,
                          answer={lang: options[lang][answer - 1] for lang in self.p.languages})

    def blank(self, common: Common) -> BlankItem:
        text = self.code("text")
        for language, code in text.items():
            if code.count(BLANK) != 1:
                raise self.fail("text", _("a blank's text must contain {BLANK!r} exactly once ({language})").format(BLANK=BLANK, language=language))
        fill = self.require("answer")
        if isinstance(fill, bool) or not isinstance(fill, (str, int)):
            raise self.fail("answer", _("a blank's answer must be text or a whole number"))
        checks = self.string("checks")
        return BlankItem(**common, text=text, fill=str(fill), checks=checks,
                         answer={lang: str(fill) for lang in self.p.languages})

    def numeric(self, common: Common) -> NumericItem:
        expr = self.string("formula")
        sets = self.set_list(single=False)
        stated_raw = self.data.get("stated", {})
        if not isinstance(stated_raw, dict):
            raise self.fail("stated", _('stated must be a table of numbers by parameter set'))
        stated = {name: self.p.number(value, self.at("stated"), _('item {id!r}: stated {name!r}').format(id=self.id, name=name))
                  for name, value in stated_raw.items()}
        tolerance = self.p.number(self.data.get("tolerance", 0), self.at("tolerance"), _('item {id!r}: tolerance').format(id=self.id))
        if not 0 <= tolerance < 1:
            raise self.fail("tolerance", _('tolerance is a share of the answer, from 0 up to (not including) 1'))
        varies = self.data.get("variants", True)
        if not isinstance(varies, bool):
            raise self.fail("variants", _("variants must be true (fresh numbers from [variants] allowed) or false"))
        return NumericItem(**common, formula=expr, sets=sets, stated=stated, tolerance=Fraction(tolerance),
                           varies=varies)

    def match(self, common: Common) -> MatchItem:
        (set_name,) = self.set_list(single=True)
        raw = self.require("pairs")
        if not isinstance(raw, list) or len(raw) < 2:
            raise self.fail("pairs", _('a matching table needs at least two pairs'))
        pairs: list[Pair] = []
        for pair in raw:
            if not isinstance(pair, dict) or "id" not in pair or "term" not in pair:
                raise self.fail("pairs", _('each pair needs an id and a term, and a meaning or a value'))
            pair_id = self.p.ident(pair["id"], self.at("pairs"), _('item {id!r}: pair id').format(id=self.id))
            if ("meaning" in pair) == ("value" in pair):
                raise self.fail("pairs", _('pair {pair_id!r} needs either a meaning text or a value formula').format(pair_id=pair_id))
            if pair_id in {p.id for p in pairs}:
                raise self.fail("pairs", _('duplicate pair id {pair_id!r}').format(pair_id=pair_id))
            term = self.p.text(pair, "term", self.table, required=True)
            meaning = self.p.text(pair, "meaning", self.table) if "meaning" in pair else None
            value = str(pair["value"]) if "value" in pair else None
            question = self.p.text(pair, "question", self.table) if "question" in pair else {}
            pairs.append(Pair(pair_id, term, meaning, value, self.at("pairs") or self.line, question))
        return MatchItem(**common, set_name=set_name, pairs=tuple(pairs))

    def practice(self, common: Common) -> PracticeItem:
        (set_name,) = self.set_list(single=True)
        starter = self.code("starter")
        solution = self.code("solution")
        raw = self.require("expected")
        if not isinstance(raw, list) or not raw or not all(
            isinstance(line, list) and line and all(isinstance(e, str) for e in line) for line in raw
        ):
            raise self.fail("expected", _('expected must be a list of output lines, each a list of formulas'))
        return PracticeItem(**common, set_name=set_name, starter=starter, solution=solution,
                            expected=tuple(tuple(line) for line in raw))
