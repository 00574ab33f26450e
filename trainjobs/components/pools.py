"""Typed components for GPU node pools and the queues on them."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from trainjobs.components.cloud_pools import register_cloud_pool
from trainjobs.components.platform import PlatformComponent
from trainjobs.platform.pools.kind import KIND as POOL_KIND

__all__ = ["GpuNodePool", "GpuQueue"]


class GpuNodePool(PlatformComponent):
    """GPU nodes as code: a Karpenter NodePool + EC2NodeClass, a GKE node pool, an EKS node
    group, an AKS agent pool, or existing nodes with the NVIDIA device plugin.

    ``spec`` is a ``trainjobs.platform.pools.GpuNodePoolSpec`` (or its fields as a dict).
    Jobs given ``node_pool=<this>`` get its node selector, tolerations and GPU limits on
    their GPU replicas, and every render checks they fit. The cloud pool (gke, eks, aks)
    is registered inside this component (``cloud_pool``); its SDK is an optional extra.
    Output ``outputs.nodeSelector``.
    """

    kind = "GpuNodePool"
    cloud_pool: pulumi.CustomResource | None = None
    queues: list[GpuQueue]
    """The queue components made on this pool so far, in order."""

    def register_extra(self) -> None:
        self.queues = []
        # The component is made for GpuNodePool documents only: their kind's own plugin.
        request = POOL_KIND.cloud_pool(self.entry.resource)
        if request is not None:
            self.cloud_pool = register_cloud_pool(request, self, self.inputs, self.prefix)


class GpuQueue(PlatformComponent):
    """A GPU quota on a node pool: Kueue ResourceFlavor, ClusterQueue and LocalQueues.

    ``spec`` is a ``trainjobs.platform.queue.GpuQueueSpec``; pass the pool as
    ``uses=[pool]``. Jobs given ``queue=<this>`` get Kueue's queue label and are checked
    against the quota. Output ``outputs.localQueue``. Queues on one pool share its
    ResourceFlavor, as in a stack: the first queue made on it creates it, the others are
    created after that queue.
    """

    kind = "GpuQueue"

    def shares_with(self, uses: Sequence[PlatformComponent]) -> list[PlatformComponent]:
        # The first queue on a pool renders its ResourceFlavor; the others name it.
        pools = [u for u in uses if isinstance(u, GpuNodePool)]
        return [q for pool in pools for q in pool.queues if q not in uses]

    def register_extra(self) -> None:
        for pool in self.uses:
            if isinstance(pool, GpuNodePool):
                pool.queues.append(self)
