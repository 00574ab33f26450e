"""Typed components for GPU node pools and the queues on them."""

from __future__ import annotations

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

    def register_extra(self) -> None:
        # The component is made for GpuNodePool documents only: their kind's own plugin.
        request = POOL_KIND.cloud_pool(self.entry.resource)
        if request is not None:
            self.cloud_pool = register_cloud_pool(request, self, self.inputs, self.prefix)


class GpuQueue(PlatformComponent):
    """A GPU quota on a node pool: Kueue ResourceFlavor, ClusterQueue and LocalQueues.

    ``spec`` is a ``trainjobs.platform.queue.GpuQueueSpec``; pass the pool as
    ``uses=[pool]``. Jobs given ``queue=<this>`` get Kueue's queue label and are checked
    against the quota. Output ``outputs.localQueue``.
    """

    kind = "GpuQueue"
