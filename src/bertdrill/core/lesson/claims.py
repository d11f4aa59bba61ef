"""Numbers a lesson states in prose (``claims = [{ value = "total", params = "bert-base", stated = "~110M" }]``)."""

from __future__ import annotations

from bertdrill.core import formula
from bertdrill.core.formula import Number
from bertdrill.core.i18n import _
from bertdrill.core.lesson.model import Claim
from bertdrill.core.lesson.reading import ItemFields
from bertdrill.core.numbers import parse_approx, round_significant

CLAIM_FIELDS = frozenset({"value", "params", "stated", "digits"})


def read_claims(reader: ItemFields) -> tuple[Claim, ...]:
    """An item's claims, checked for shape (their numbers are checked by :func:`claim_error`)."""
    raw = reader.data.get("claims", [])
    line = reader.at("claims") or reader.line
    if not isinstance(raw, list):
        raise reader.fail("claims", _('claims must be a list of { value, params, stated } tables'))
    claims = []
    for claim in raw:
        if not isinstance(claim, dict) or not {"value", "params", "stated"} <= set(claim):
            raise reader.fail("claims", _('each claim needs value, params and stated, e.g. { value = "total", params = "bert-base", stated = "~110M" }'))
        unknown = set(claim) - CLAIM_FIELDS
        if unknown:
            raise reader.fail("claims", _('unknown claim field {field!r}').format(field=sorted(unknown)[0]))
        digits = claim.get("digits")
        if digits is not None and (not isinstance(digits, int) or isinstance(digits, bool) or not 1 <= digits <= 15):
            raise reader.fail("claims", _('claim digits must be a whole number from 1 to 15'))
        claims.append(Claim(str(claim["value"]), str(claim["params"]), str(claim["stated"]), digits, line))
    return tuple(claims)


def claim_error(claim: Claim, actual: Number) -> str | None:
    """Why ``claim`` does not state ``actual`` (its formula's value), or None when it does.

    Raises ValueError when the stated text is not a number at all.
    """
    stated, digits = parse_approx(claim.stated)
    digits = claim.digits or digits
    if round_significant(actual, digits) != round_significant(stated, digits):
        return _("claim {stated!r} does not round to {value} = {actual} for {set} ({digits} significant figures)").format(
            stated=claim.stated, value=claim.value, actual=formula.format_number(actual, grouping=","), set=claim.set,
            digits=digits)
    return None
