"""Lessons: the model (:mod:`.model`), and the parser that turns TOML text into a verified :class:`Lesson`.

A lesson file holds everything once: ids, parameter sets, formulas and
answers, with each human text given per language. Parsing (:mod:`.parse`,
:mod:`.items`, :mod:`.claims`) checks the shape; :mod:`.verify` then proves
every number the lesson states against its formula. Both report problems as
:class:`~bertdrill.core.errors.LessonError` with the line they come from
(:mod:`.positions`), so an author sees ``decks/bert.toml:42: ...``.
"""

from typing import TYPE_CHECKING, Any

from bertdrill.core.lesson.model import (
    BLANK,
    BlankItem,
    ChoiceItem,
    Claim,
    FactItem,
    Item,
    ItemBase,
    Lesson,
    MatchItem,
    NumericItem,
    Pair,
    ParamSet,
    PracticeItem,
    SheetSettings,
    Text,
    filled_expression,
    item_texts,
    own_set,
)
from bertdrill.core.lesson.variants import Variant, VariantMode, VariantSpace

if TYPE_CHECKING:
    from bertdrill.core.lesson.parse import parse
    from bertdrill.core.lesson.verify import variant_errors

__all__ = [
    "BLANK", "BlankItem", "ChoiceItem", "Claim", "FactItem", "Item", "ItemBase", "Lesson", "MatchItem",
    "NumericItem", "Pair", "ParamSet", "PracticeItem", "SheetSettings", "Text", "Variant", "VariantMode", "VariantSpace", "filled_expression", "item_texts", "own_set",
    "parse", "variant_errors",
]


def __getattr__(name: str) -> Any:
    """The parser and the verifier, imported when first asked for: a lesson read from the cache is neither parsed
    nor verified, and ``status`` and ``stats`` read every lesson from it (their modules: 3 ms of each start)."""
    if name == "parse":
        from bertdrill.core.lesson.parse import parse

        return _bound(name, parse)
    if name == "variant_errors":
        from bertdrill.core.lesson.verify import variant_errors

        return _bound(name, variant_errors)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _bound(name: str, function: Any) -> Any:
    """``function`` as this package's ``name`` from now on: found without asking :func:`__getattr__` again, and for
    ``parse`` not the module of that name, which its import has just bound here."""
    globals()[name] = function
    return function
