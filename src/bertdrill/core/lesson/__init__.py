"""Lessons: the model (:mod:`.model`), and the parser that turns TOML text into a verified :class:`Lesson`.

A lesson file holds everything once: ids, parameter sets, formulas and
answers, with each human text given per language. Parsing (:mod:`.parse`,
:mod:`.items`, :mod:`.claims`) checks the shape; :mod:`.verify` then proves
every number the lesson states against its formula. Both report problems as
:class:`~bertdrill.core.errors.LessonError` with the line they come from
(:mod:`.positions`), so an author sees ``decks/bert.toml:42: ...``.
"""

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
from bertdrill.core.lesson.parse import parse
from bertdrill.core.lesson.variants import Variant, VariantMode, VariantSpace
from bertdrill.core.lesson.verify import variant_errors

__all__ = [
    "BLANK", "BlankItem", "ChoiceItem", "Claim", "FactItem", "Item", "ItemBase", "Lesson", "MatchItem",
    "NumericItem", "Pair", "ParamSet", "PracticeItem", "SheetSettings", "Text", "Variant", "VariantMode", "VariantSpace", "filled_expression", "item_texts", "own_set",
    "parse", "variant_errors",
]
