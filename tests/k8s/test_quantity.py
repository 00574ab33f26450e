from __future__ import annotations

from fractions import Fraction

import pytest

from trainjobs.k8s.quantity import (
    QuantityError,
    canonical_quantity,
    format_like,
    format_quantity,
    parse_quantity,
    quantity_or_zero,
)


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
        ("3n", Fraction(3, 10**9)),
        ("7u", Fraction(7, 10**6)),
        ("2k", Fraction(2000)),
        ("1E", Fraction(10**18)),
        ("1Ki", Fraction(1024)),
        ("1Ei", Fraction(2**60)),
    ],
)
def test_parse(text: str | int | float, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "1.2.3", "4 GB", "one", "1Gb"])
def test_rejects(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize("value", [True, None, [1], {"a": 1}])
def test_rejects_what_is_not_a_number_or_text(value: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(value)


@pytest.mark.parametrize(
    ("value", "expected"), [("500m", Fraction(1, 2)), (None, 0), ("4 GB", 0), ([1], 0)]
)
def test_quantity_or_zero_counts_a_bad_value_as_nothing(value: object, expected: Fraction) -> None:
    assert quantity_or_zero(value) == expected


def test_format() -> None:
    assert format_quantity(Fraction(4)) == "4"
    assert format_quantity(Fraction(1, 2)) == "500m"


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        # What kube-apiserver 1.36 stores in a Pod for each spelling (measured, and checked
        # again by tests/cluster/pulumi_up/test_quantity_spelling.py).
        ("1", "1"),
        (1, "1"),
        (1.0, "1"),
        ("1000m", "1"),
        ("500m", "500m"),
        (0.5, "500m"),
        ("0.5", "500m"),
        ("1000", "1k"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        (1073741824, "1073741824"),
        ("0.5Ki", "512"),
        ("1536Mi", "1536Mi"),
        ("1e3", "1e3"),
        ("1.5e3", "1500"),
        ("1e-7", "1e-3"),
        (1e-7, "1e-3"),
        ("0.0000000001", "1m"),
        ("1500u", "2m"),
        ("0", "0"),
        ("0Gi", "0"),
    ],
)
def test_canonical_quantity_is_the_api_servers_text(value: object, stored: str) -> None:
    assert canonical_quantity(value) == stored


def test_canonical_quantity_refuses_what_is_no_quantity() -> None:
    with pytest.raises(QuantityError):
        canonical_quantity("4 cores")


def test_quantities_print_as_go_does() -> None:
    assert format_like(Fraction(12 * 2**30), "3Gi") == "12Gi"
    assert format_like(Fraction(3, 2) * 2**30, "1536Mi") == "1536Mi"
    assert format_like(Fraction(8000), "4000") == "8k"
    assert format_like(Fraction(1, 2), 0.5) == "500m"
    assert format_like(Fraction(2), 2) == "2"
