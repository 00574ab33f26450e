"""Kubernetes resource quantities (``500m``, ``4Gi``, ``1e3``) as exact numbers.

:func:`canonical_quantity` spells one as the API server stores it in a built-in
object (a Pod's ``resources``): ``1000m`` and ``1`` are both stored as ``"1"``, but
``1Gi`` and ``1073741824`` stay apart.

Two ways to read one, named for what they do with a bad value: :func:`parse_quantity`
refuses it (``QuantityError``), for code that reports it; :func:`quantity_or_zero`
counts it as nothing, for arithmetic over input a schema check has already judged.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache
from typing import Any

__all__ = [
    "QuantityError",
    "canonical_quantity",
    "format_like",
    "format_quantity",
    "parse_quantity",
    "quantity_or_none",
    "quantity_or_zero",
]

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
    return _parse_text(value)


# A stack repeats a few dozen quantity texts across thousands of pods; a Fraction is
# immutable, so each text is parsed once (refusals are not kept: they raise each time).
@lru_cache(maxsize=4096)
def _parse_text(value: str) -> Fraction:
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


def quantity_or_none(value: Any) -> Fraction | None:
    """A quantity's value; None when it is not one (the schema check says so)."""
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError):
        return None


def format_like(value: Fraction, sample: Any) -> str:
    """``value`` printed as Go's ``resource.Quantity`` prints a sum whose first term was
    ``sample``: binary suffixes if ``sample`` had one and the value is a whole number of
    KiB, else the largest decimal suffix that keeps the number whole."""
    binary = isinstance(sample, str) and sample.strip().endswith("i")
    if binary and value.denominator == 1 and value >= 1024:
        for prefix in reversed("KMGTPE"):
            size = _SUFFIXES[f"{prefix}i"]
            if value % size == 0:
                return f"{value // size}{prefix}i"
    if value == 0:
        return "0"
    for suffix in reversed(_DECIMAL):  # E … n: the largest first
        scaled = value / _SUFFIXES[suffix]
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    return f"{int(value * 10**9) + 1}n"  # Go rounds sub-nano amounts up


def quantity_or_zero(value: Any) -> Fraction:
    """A quantity's value; 0 for a missing or malformed one (the schema check reports those)."""
    try:
        return parse_quantity(value)
    except QuantityError:
        return Fraction(0)


_DECIMAL_SUFFIX = {3 * power: suffix for suffix, power in _DECIMAL.items()}
"""The decimal suffix of each power of ten that is a multiple of three (``-9`` → ``n``)."""
_GO_EXPONENT_FORM = (Fraction(1, 10**6), Fraction(10**21))
"""A number outside [1e-6, 1e21) reaches the API server in exponent form (``1e-07``): Go's
JSON encoder writes a float64 so, and the Pulumi Python SDK sends every number as one."""


def canonical_quantity(value: Any) -> str:
    """The text the Kubernetes API server stores for a quantity in a built-in object
    (apimachinery ``Quantity.String()``); ``QuantityError`` for anything else.

    The value is rounded up (away from zero) to milli-units, as kube-apiserver 1.36
    stores it (``1e-7`` → ``1e-3``, ``1500u`` → ``2m``; measured by
    tests/cluster/pulumi_up/test_quantity_spelling.py). Its format is kept: a binary
    suffix (``Ki`` … ``Ei``) stays binary when the value is a whole number of at least
    1024 (``1024Mi`` → ``1Gi``, ``0.5Ki`` → ``512``), an exponent stays an exponent
    (``1e3``), anything else is decimal with the largest suffix that keeps the number
    whole (``1000m`` → ``1``, ``0.5`` → ``500m``, ``1073741824`` stays as it is).
    """
    amount = parse_quantity(value)
    if amount == 0:
        return "0"
    millis = math.ceil(abs(amount) * 1000) * (1 if amount > 0 else -1)
    if isinstance(value, str):
        match = _QUANTITY.match(value.strip())
        suffix = (match.group(2) if match else None) or ""
        number = match.group(1) if match else ""
        form = "binary" if suffix.endswith("i") else "exponent" if "e" in number.lower() else "si"
    else:
        low, high = _GO_EXPONENT_FORM
        form = "si" if low <= abs(amount) < high else "exponent"
    if form == "binary" and abs(amount) >= 1024 and millis % 1000 == 0:
        whole, power = millis // 1000, 0
        while whole % 1024 == 0 and power < 6:
            whole, power = whole // 1024, power + 1
        return f"{whole}{'KMGTPE'[power - 1] + 'i' if power else ''}"
    mantissa, exponent = millis, -3
    while mantissa % 1000 == 0:
        mantissa, exponent = mantissa // 1000, exponent + 3
    if form == "exponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    # Beyond E (1e18) there is no suffix: the rest stays in the number.
    while exponent > 18:
        mantissa, exponent = mantissa * 1000, exponent - 3
    return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"
