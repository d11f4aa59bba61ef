"""What kind of thing a card asks, as a type: code that depends on it uses ``match`` and ``assert_never``."""

from __future__ import annotations

from enum import StrEnum
from typing import assert_never


class Kind(StrEnum):
    FACT = "fact"  # a question and its answer
    CHOICE = "choice"  # options, one correct
    BLANK = "blank"  # code with a blank to fill
    NUMERIC = "numeric"  # a formula over a parameter set
    MATCH = "match"  # one row of a term/meaning table
    PRACTICE = "practice"  # the lesson's coding exercise

    @property
    def reviewed(self) -> bool:
        """Whether a review session shows it: practice is checked by ``bertdrill practice``, never reviewed."""
        match self:
            case Kind.FACT | Kind.CHOICE | Kind.BLANK | Kind.NUMERIC | Kind.MATCH:
                return True
            case Kind.PRACTICE:
                return False
            case unreachable:
                assert_never(unreachable)
