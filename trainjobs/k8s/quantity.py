"""Kubernetes resource quantities (``500m``, ``4Gi``, ``1e3``) as exact numbers."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

__all__ = ["QuantityError", "format_quantity", "parse_quantity"]

_SUFFIXES: dict[str, Fraction] = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
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


def parse_quantity(value: str | int | float) -> Fraction:
    """The exact value of a quantity: ``parse_quantity("500m") == Fraction(1, 2)``."""
    if isinstance(value, bool):
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
