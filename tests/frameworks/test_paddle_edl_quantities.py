"""EDL's resource arithmetic: Go's rounding up, GPU names."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trainjobs.frameworks.paddle_edl.quantities import (
    BadQuantity,
    ceil_int,
    gpu_amount,
    mega,
    milli,
    quantity,
    with_current_gpu_name,
)


def test_upstream_conversions() -> None:
    # autoscaler_internal_test.go TestTrainerRequestLimit: 1k CPUs, 100Mi, 10 GPUs.
    assert milli(quantity("1k")) == 1_000_000
    assert mega(quantity("100Mi")) == 105
    assert ceil_int(quantity("10")) == 10


@pytest.mark.parametrize(
    ("text", "rounded"), [("200m", 1), ("1500m", 2), ("2", 2), (0.5, 1), (0, 0)]
)
def test_whole_units_round_up(text: str | float, rounded: int) -> None:
    assert ceil_int(quantity(text)) == rounded


@given(st.fractions(min_value=0, max_value=10**6, max_denominator=10**6))
def test_rounding_up_never_loses_anything(value: Fraction) -> None:
    assert milli(value) >= value * 1000 > milli(value) - 1
    assert mega(value) >= value / 10**6 > mega(value) - 1


@pytest.mark.parametrize("bad", ["lots", "1.2.3", True, None, [1], float("inf")])
def test_bad_quantities(bad: object) -> None:
    with pytest.raises(BadQuantity):
        quantity(bad)


def test_gpus_under_either_name() -> None:
    assert gpu_amount({"nvidia.com/gpu": 2}) == 2
    assert gpu_amount({"alpha.kubernetes.io/nvidia-gpu": "1"}) == 1
    assert gpu_amount({"cpu": 4}) == 0
    assert gpu_amount(None) == 0


def test_legacy_gpu_name_is_renamed_in_limits_and_requests_only() -> None:
    legacy = "alpha.kubernetes.io/nvidia-gpu"
    assert with_current_gpu_name(
        {"limits": {legacy: 1, "cpu": 2}, "requests": {legacy: 1}, "claims": [{"name": legacy}]}
    ) == {
        "limits": {"nvidia.com/gpu": 1, "cpu": 2},
        "requests": {"nvidia.com/gpu": 1},
        "claims": [{"name": legacy}],
    }
