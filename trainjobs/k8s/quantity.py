"""Kubernetes resource quantities (``500m``, ``4Gi``, ``1e3``) as exact numbers.

Two ways to read one, named for what they do with a bad value: :func:`parse_quantity`
refuses it (``QuantityError``), for code that reports it; :func:`quantity_or_zero`
counts it as nothing, for arithmetic over input a schema check has already judged.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

__all__ = ["QuantityError", "format_quantity", "parse_quantity", "quantity_or_zero"]

_DECIMAL = {"n": -3, "u": -2, "m": -1, "": 0, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
"""Each decimal suffix's power of 1000; a binary one (``Ki`` … ``Ei``) is a power of 1024."""
_SUFFIXES: dict[str, Fraction] = {
    **{s: Fraction(1000) ** power for s, power in _DECIMAL.items()},
    **{f"{s}i": Fraction(1024) ** power for power, s in enumerate("KMGTPE", 1)},
}
_QUANTITY = re.compile(
    r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$"
)


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


_MAX_EXPONENT = 40
"""Powers of ten beyond this are refused before they are computed: ``1e999999999``
would otherwise build a billion-digit number. Kubernetes' largest suffix is E (1e18)."""
_MAX_TEXT = 64
"""The longest quantity text: Kubernetes' own limit on the digits is far below."""


def parse_quantity(value: Any) -> Fraction:
    """The exact value of a quantity: ``parse_quantity("500m") == Fraction(1, 2)``;
    ``QuantityError`` for anything else (a malformed text, a bool, a list, None …)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{value} is not a quantity; write a finite number, e.g. '4'")
        if abs(value) >= 10.0**_MAX_EXPONENT:
            raise QuantityError(f"{value:g} is out of range for a quantity")
        return Fraction(Decimal(repr(value)))
    if len(value) > _MAX_TEXT:
        raise QuantityError(f"a quantity is at most {_MAX_TEXT} characters")
    match = _QUANTITY.match(value.strip())
    if not match:
        raise QuantityError(f"{value!r} is not a Kubernetes quantity (e.g. '4', '500m', '16Gi')")
    number, suffix = match.group(1), match.group(2) or ""
    try:
        decimal = Decimal(number)
    except InvalidOperation as exc:
        raise QuantityError(f"{value!r} is not a Kubernetes quantity") from exc
    if not decimal.is_finite() or (decimal and abs(decimal.adjusted()) > _MAX_EXPONENT):
        raise QuantityError(f"{value!r} is out of range for a quantity")
    base = Fraction(decimal)
    return base * _SUFFIXES[suffix]


def format_quantity(value: Fraction) -> str:
    """A readable text for an exact quantity: whole numbers plainly, else milli-units."""
    if value.denominator == 1:
        return str(value.numerator)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    return str(float(value))


def quantity_or_zero(value: Any) -> Fraction:
    """A quantity's value; 0 for a missing or malformed one (the schema check reports those)."""
    try:
        return parse_quantity(value)
    except QuantityError:
        return Fraction(0)
