"""The sandbox's kwok nodes: a default set, or nodes shaped like a stack's GpuNodePools.

A pool's nodes are made as its provider would make them: a static pool's existing nodes
carry the labels the pool says they carry (and GPU feature discovery's product label); a
created pool's nodes carry the pool label, its extra labels and the provider's GPU label
(Karpenter's instance GPU name, GKE's accelerator) and node-pool label, and the instance
type when the pool names one. Every node has the pool's taints and offers the pool's
``gpusPerNode`` (as ``nvidia.com/gpu``), ``cpu`` and ``memory`` as capacity and
allocatable. Static pools get their declared nodes (``maxNodes``); autoscaled pools
(karpenter, gke, eks, aks) are at their largest (``maxNodes``), so the scheduler sees
every node the cloud could give the stack.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainjobs.platform.pools.placement import node_labels, node_selector
from trainjobs.platform.pools.spec import GpuNodePool
from trainjobs.sandbox.kwok import kwok_node

__all__ = [
    "DEFAULT_NODES",
    "DEFAULT_NODE_CAPACITY",
    "POOL_NODE_LABEL",
    "default_nodes",
    "pool_nodes",
    "stack_pools",
]

GPU = "nvidia.com/gpu"
DEFAULT_NODES = 4
"""Nodes of a sandbox started without ``--nodes-from``."""
DEFAULT_NODE_CAPACITY = {"cpu": "32", "memory": "256Gi", GPU: "8", "pods": "110"}
"""What each default node offers: room for the demo stack's jobs with some to spare."""
POOL_NODE_LABEL = "trainjobs.dev/sandbox-pool"
"""Every sandbox node names the pool it stands for (``default`` without ``--nodes-from``)."""

_PROVIDER_LABELS = {
    "karpenter": "karpenter.sh/nodepool",
    "gke": "cloud.google.com/gke-nodepool",
    "eks": "eks.amazonaws.com/nodegroup",
    "aks": "kubernetes.azure.com/agentpool",
}
"""The label each provider puts on a node with the name of its node pool."""


def default_nodes(count: int = DEFAULT_NODES) -> list[dict[str, Any]]:
    """``count`` untainted nodes of :data:`DEFAULT_NODE_CAPACITY`: ``sandbox-0`` …"""
    return [
        kwok_node(f"sandbox-{i}", DEFAULT_NODE_CAPACITY, labels={POOL_NODE_LABEL: "default"})
        for i in range(count)
    ]


def _instance_type(pool: GpuNodePool) -> str | None:
    spec = pool.spec
    if spec.gke is not None:
        return spec.gke.machine_type
    if spec.eks is not None:
        return spec.eks.instance_types[0]
    if spec.aks is not None:
        return spec.aks.vm_size
    return None


def pool_nodes(pool: GpuNodePool) -> list[dict[str, Any]]:
    """The kwok Nodes standing for ``pool`` (see the module doc)."""
    spec = pool.spec
    labels = dict(node_selector(pool))
    if spec.provider != "static":
        labels.update(node_labels(pool))
        labels[_PROVIDER_LABELS[spec.provider]] = pool.name
        if spec.provider == "karpenter":
            labels["karpenter.sh/capacity-type"] = spec.capacity_type
    instance_type = _instance_type(pool)
    if instance_type is not None:
        labels["node.kubernetes.io/instance-type"] = instance_type
    labels[POOL_NODE_LABEL] = pool.name
    capacity = {"cpu": str(spec.cpu), "memory": str(spec.memory), GPU: str(spec.gpus_per_node)}
    taints = [t.model_dump(by_alias=True, exclude_none=True) for t in spec.taints]
    return [
        kwok_node(f"{pool.name}-{i}", capacity, labels=labels, taints=taints)
        for i in range(spec.max_nodes)
    ]


def stack_pools(stack: str | Path) -> list[GpuNodePool]:
    """The GpuNodePools a stack file declares (SpecError when it does not load)."""
    from trainjobs.spec import load_path

    loaded = load_path(stack)
    return [p.resource for p in loaded.platform if isinstance(p.resource, GpuNodePool)]


def stack_nodes(stack: str | Path) -> list[dict[str, Any]]:
    """The nodes of every pool of the stack; the default nodes when it declares none."""
    pools = stack_pools(stack)
    if not pools:
        return default_nodes()
    return [node for pool in pools for node in pool_nodes(pool)]
