"""GPU node pools: the GpuNodePool kind, its GPU type table, providers, placement and
the schedulability rules ``check`` runs over every render."""

from trainjobs.platform.pools.gputypes import GPU_TYPES, GpuType
from trainjobs.platform.pools.kind import KIND, GpuNodePoolKind
from trainjobs.platform.pools.placement import POOL_LABEL, Placement, placement_of
from trainjobs.platform.pools.spec import GpuNodePool, GpuNodePoolSpec, Taint

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
