"""The platform jobs run on: backends, node pools, queues and operators, as typed kinds."""

from trainjobs.platform.base import (
    API_VERSION,
    CATEGORIES,
    BackendKind,
    Category,
    PlanEffect,
    PlatformKind,
    PlatformMeta,
    PlatformResource,
    Reference,
)
from trainjobs.platform.registry import PLATFORM, PlatformRegistry

__all__ = [
    "API_VERSION",
    "CATEGORIES",
    "PLATFORM",
    "BackendKind",
    "Category",
    "PlanEffect",
    "PlatformKind",
    "PlatformMeta",
    "PlatformRegistry",
    "PlatformResource",
    "Reference",
]
