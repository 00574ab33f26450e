from __future__ import annotations

from fractions import Fraction

import pytest

from trainjobs.k8s.quantity import QuantityError, format_quantity, parse_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Fraction(1, 2)),
        ("2", Fraction(2)),
        (4, Fraction(4)),
        ("1Gi", Fraction(2**30)),
        ("1.5G", Fraction(1_500_000_000)),
        ("1e3", Fraction(1000)),
        (0.25, Fraction(1, 4)),
    ],
)
def test_parse(text: str | int | float, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "1.2.3", "4 GB", "one", "1Gb"])
def test_rejects(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_rejects_booleans() -> None:
    with pytest.raises(QuantityError):
        parse_quantity(True)


def test_format() -> None:
    assert format_quantity(Fraction(4)) == "4"
    assert format_quantity(Fraction(1, 2)) == "500m"
