"""The ``gke``, ``eks`` and ``aks`` providers as typed data.

A cloud node pool is not a Kubernetes object, so it is not in a render's manifests.
The kind describes it here, in each cloud's own terms but without its SDK;
``components.cloud_pools`` turns a request into the pulumi-gcp, pulumi-aws or
pulumi-azure-native resource inside the GpuNodePool component.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from trainjobs.platform.pools.placement import node_labels
from trainjobs.platform.pools.spec import AksSettings, EksSettings, GkeSettings, GpuNodePool, Taint

__all__ = [
    "CloudPoolRequest",
    "aks_pool_name",
    "cloud_pool",
]

CloudProvider = Literal["gke", "eks", "aks"]

# GKE and EKS spell taint effects in upper snake case.
_EFFECTS = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}


@dataclass(frozen=True)
class CloudPoolRequest:
    """The one cloud resource a gke, eks or aks pool is, in its SDK's own terms.

    Attributes:
        provider: ``gke`` (pulumi-gcp), ``eks`` (pulumi-aws) or ``aks``
            (pulumi-azure-native): the SDK to register it with.
        resource_type: the resource class in that SDK, module-relative
            (``container.NodePool``, ``eks.NodeGroup``, ``containerservice.AgentPool``).
        name: the pool's name in the cloud (AKS's is shortened, see ``aks_pool_name``).
        args: the resource's keyword arguments exactly as the SDK takes them; nested
            input types are dicts with the SDK's snake_case keys, which every SDK accepts
            in place of its ``…Args`` classes. Kept as data so that what a pool asks of
            the cloud is decided and tested here, without the SDKs.
    """

    provider: CloudProvider
    resource_type: str
    name: str
    args: Mapping[str, Any]


def _cloud_taints(taints: list[Taint]) -> list[dict[str, str]]:
    return [{"key": t.key, "value": t.value or "", "effect": _EFFECTS[t.effect]} for t in taints]


def aks_pool_name(name: str) -> str:
    """The AKS agent pool name of a pool: lowercase letters and digits only, at most 12."""
    return "".join(c for c in name.lower() if c.isalnum())[:12]


def _gke(pool: GpuNodePool, gke: GkeSettings) -> CloudPoolRequest:
    spec = pool.spec
    accelerator = spec.gpu_type.gke_accelerator
    assert accelerator is not None, "validated: the GPU exists on GKE"
    node_config = {
        "machine_type": gke.machine_type,
        "disk_size_gb": gke.disk_size_gb,
        "spot": spec.capacity_type == "spot",
        "labels": node_labels(pool),
        "taints": _cloud_taints(spec.taints),
        "guest_accelerators": [
            {
                "type": accelerator,
                "count": spec.gpus_per_node,
                "gpu_driver_installation_config": {"gpu_driver_version": gke.driver_version},
            }
        ],
        "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
    }
    args = {
        "name": pool.name,
        "cluster": gke.cluster,
        "location": gke.location,
        "project": gke.project,
        "initial_node_count": spec.min_nodes,
        # GKE counts per zone unless the bounds are totals; these are the pool's totals.
        "autoscaling": {
            "total_min_node_count": spec.min_nodes,
            "total_max_node_count": spec.max_nodes,
            "location_policy": "ANY",
        },
        "node_config": node_config,
    }
    return CloudPoolRequest("gke", "container.NodePool", pool.name, args)


def _eks(pool: GpuNodePool, eks: EksSettings) -> CloudPoolRequest:
    spec = pool.spec
    args = {
        "node_group_name": pool.name,
        "cluster_name": eks.cluster_name,
        "node_role_arn": eks.node_role_arn,
        "subnet_ids": list(eks.subnet_ids),
        "instance_types": list(eks.instance_types),
        "ami_type": eks.ami_type,
        "capacity_type": "SPOT" if spec.capacity_type == "spot" else "ON_DEMAND",
        "disk_size": eks.disk_size,
        "labels": node_labels(pool),
        "taints": _cloud_taints(spec.taints),
        "scaling_config": {
            "min_size": spec.min_nodes,
            "max_size": spec.max_nodes,
            "desired_size": spec.min_nodes,
        },
    }
    return CloudPoolRequest("eks", "eks.NodeGroup", pool.name, args)


def _aks(pool: GpuNodePool, aks: AksSettings) -> CloudPoolRequest:
    spec = pool.spec
    name = aks_pool_name(pool.name)
    priority: dict[str, Any] = (
        {"scale_set_priority": "Spot", "scale_set_eviction_policy": "Delete", "spot_max_price": -1}
        if spec.capacity_type == "spot"
        else {"scale_set_priority": "Regular"}
    )
    args = {
        "agent_pool_name": name,
        "resource_group_name": aks.resource_group_name,
        "resource_name_": aks.cluster_name,
        "mode": "User",
        "os_type": "Linux",
        "vm_size": aks.vm_size,
        "os_disk_size_gb": aks.os_disk_size_gb,
        "enable_auto_scaling": True,
        "count": spec.min_nodes,
        "min_count": spec.min_nodes,
        "max_count": spec.max_nodes,
        "node_labels": node_labels(pool),
        "node_taints": [t.text() for t in spec.taints],
        **priority,
    }
    return CloudPoolRequest("aks", "containerservice.AgentPool", name, args)


def cloud_pool(pool: GpuNodePool) -> CloudPoolRequest | None:
    """The cloud node pool of a gke/eks/aks pool; None for karpenter and static pools."""
    spec = pool.spec
    if spec.provider == "gke" and spec.gke is not None:
        return _gke(pool, spec.gke)
    if spec.provider == "eks" and spec.eks is not None:
        return _eks(pool, spec.eks)
    if spec.provider == "aks" and spec.aks is not None:
        return _aks(pool, spec.aks)
    return None
