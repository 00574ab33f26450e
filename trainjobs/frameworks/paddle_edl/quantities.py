"""Resource arithmetic EDL does: GPU names, millicores, "mega" units, rounding up.

Go's ``Quantity.Value()`` and ``ScaledValue`` round up to the next whole unit;
these functions do the same on exact fractions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from trainjobs.k8s.quantity import QuantityError, parse_quantity

__all__ = [
    "GPU_NAMES",
    "LEGACY_GPU",
    "NVIDIA_GPU",
    "BadQuantity",
    "ceil_int",
    "gpu_amount",
    "mega",
    "milli",
    "quantity",
    "with_current_gpu_name",
]

LEGACY_GPU = "alpha.kubernetes.io/nvidia-gpu"
"""The only GPU resource the EDL controller knew (removed from Kubernetes in 1.11)."""
NVIDIA_GPU = "nvidia.com/gpu"
"""Today's GPU resource (the NVIDIA device plugin's)."""
GPU_NAMES = (NVIDIA_GPU, LEGACY_GPU)


class BadQuantity(ValueError):
    """A value is not a Kubernetes quantity (or is not finite)."""


def quantity(value: Any) -> Fraction:
    """The exact value of a quantity from YAML (``2``, ``0.5``, ``"500m"``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise BadQuantity(f"{value!r} is not a quantity")
    try:
        return parse_quantity(value)
    except (QuantityError, ValueError, OverflowError, ArithmeticError) as exc:
        raise BadQuantity(str(exc)) from None


def ceil_int(value: Fraction) -> int:
    """Rounded up to a whole number, as Go's ``Quantity.Value()``."""
    return math.ceil(value)


def milli(value: Fraction) -> int:
    """In thousandths, rounded up (``ScaledValue(resource.Milli)``): ``1`` → 1000."""
    return math.ceil(value * 1000)


def mega(value: Fraction) -> int:
    """In units of 10^6, rounded up (``ScaledValue(resource.Mega)``): ``100Mi`` → 105."""
    return math.ceil(value / 10**6)


def gpu_amount(resources: Mapping[str, Any] | None) -> Fraction:
    """GPUs in a requests or limits map, under either resource name.

    The controller read only ``alpha.kubernetes.io/nvidia-gpu``; trainjobs reads
    ``nvidia.com/gpu`` as well (a documented deviation), so GPU jobs written for
    today's clusters behave as GPU jobs.
    """
    for name in GPU_NAMES:
        if resources and name in resources:
            return quantity(resources[name])
    return Fraction(0)


def with_current_gpu_name(resources: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a ResourceRequirements with ``alpha.kubernetes.io/nvidia-gpu`` renamed
    to ``nvidia.com/gpu`` in limits and requests (no current node offers the old name)."""
    out: dict[str, Any] = {}
    for key, value in resources.items():
        if key in ("limits", "requests") and isinstance(value, Mapping):
            out[key] = {(NVIDIA_GPU if k == LEGACY_GPU else k): v for k, v in value.items()}
        else:
            out[key] = value
    return out
