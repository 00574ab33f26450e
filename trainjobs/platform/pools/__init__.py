"""GPU node pools: the GpuNodePool kind, its GPU type table, providers, placement and
the schedulability rules ``check`` runs over every render.

The names below are read from their modules on first use (``trainjobs._lazy``): the
placement checks of every render import ``pools.placement``, which runs this file,
and need neither the cloud providers nor the kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainjobs._lazy import lazy_exports

if TYPE_CHECKING:
    from trainjobs.platform.pools.gputypes import GPU_TYPES, GpuType
    from trainjobs.platform.pools.kind import KIND, GpuNodePoolKind
    from trainjobs.platform.pools.placement import POOL_LABEL, Placement, placement_of
    from trainjobs.platform.pools.spec import GpuNodePool, GpuNodePoolSpec, Taint

_HOMES = {
    "GPU_TYPES": "trainjobs.platform.pools.gputypes",
    "GpuType": "trainjobs.platform.pools.gputypes",
    "KIND": "trainjobs.platform.pools.kind",
    "GpuNodePoolKind": "trainjobs.platform.pools.kind",
    "POOL_LABEL": "trainjobs.platform.pools.placement",
    "Placement": "trainjobs.platform.pools.placement",
    "placement_of": "trainjobs.platform.pools.placement",
    "GpuNodePool": "trainjobs.platform.pools.spec",
    "GpuNodePoolSpec": "trainjobs.platform.pools.spec",
    "Taint": "trainjobs.platform.pools.spec",
}

__all__ = [
    "GPU_TYPES",
    "KIND",
    "POOL_LABEL",
    "GpuNodePool",
    "GpuNodePoolKind",
    "GpuNodePoolSpec",
    "GpuType",
    "Placement",
    "Taint",
    "placement_of",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _HOMES)
