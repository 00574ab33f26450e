"""The platform jobs run on: backends, node pools, queues and operators, as typed kinds.

The names below are read from their modules on first use (``trainjobs._lazy``):
importing one platform module (an operator's contract, for a job's gang rules) runs
this file, and the registry is cheap only because it imports a kind's module when
that kind is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainjobs._lazy import lazy_exports

if TYPE_CHECKING:
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
    from trainjobs.platform.registry import PLATFORM, PlatformPlugin, PlatformRegistry

_BASE = "trainjobs.platform.base"
_HOMES = {
    "API_VERSION": _BASE,
    "CATEGORIES": _BASE,
    "BackendKind": _BASE,
    "Category": _BASE,
    "PlanEffect": _BASE,
    "PlatformKind": _BASE,
    "PlatformMeta": _BASE,
    "PlatformResource": _BASE,
    "Reference": _BASE,
    "PLATFORM": "trainjobs.platform.registry",
    "PlatformPlugin": "trainjobs.platform.registry",
    "PlatformRegistry": "trainjobs.platform.registry",
}

__all__ = [
    "API_VERSION",
    "CATEGORIES",
    "PLATFORM",
    "BackendKind",
    "Category",
    "PlanEffect",
    "PlatformKind",
    "PlatformMeta",
    "PlatformPlugin",
    "PlatformRegistry",
    "PlatformResource",
    "Reference",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _HOMES)
