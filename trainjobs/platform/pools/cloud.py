"""The ``gke``, ``eks`` and ``aks`` providers as typed data.

A cloud node pool is not a Kubernetes object, so it is not in a render's manifests.
The kind describes it here, in each cloud's own terms but without its SDK;
``components.cloud_pools`` turns a request into the pulumi-gcp, pulumi-aws or
pulumi-azure-native resource inside the GpuNodePool component.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from trainjobs.platform.pools.placement import node_labels
from trainjobs.platform.pools.spec import GpuNodePool, Taint

__all__ = [
    "AksAgentPoolRequest",
    "CloudPoolRequest",
    "CloudTaint",
    "EksNodeGroupRequest",
    "GkeNodePoolRequest",
    "cloud_pool",
]

# GKE and EKS spell taint effects in upper snake case.
_EFFECTS = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}


@dataclass(frozen=True)
class CloudTaint:
    """A taint as GKE and EKS take it: ``effect`` is NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE."""

    key: str
    value: str
    effect: str


def _cloud_taints(taints: list[Taint]) -> tuple[CloudTaint, ...]:
    return tuple(CloudTaint(t.key, t.value or "", _EFFECTS[t.effect]) for t in taints)


@dataclass(frozen=True)
class GkeNodePoolRequest:
    """A GKE node pool with guest accelerators and GKE-installed drivers.

    Attributes:
        name: node pool name (the GpuNodePool's).
        cluster, location, project: where it goes (project None: the provider's).
        machine_type: the machine type.
        accelerator: the GKE accelerator type (``nvidia-a100-80gb``).
        accelerator_count: GPUs per node.
        driver_version: ``DEFAULT`` or ``LATEST``.
        min_nodes, max_nodes: autoscaling bounds (per zone, as GKE counts them).
        spot: spot VMs instead of on-demand.
        disk_size_gb: boot disk.
        labels: node labels; taints: node taints.
    """

    name: str
    cluster: str
    location: str
    project: str | None
    machine_type: str
    accelerator: str
    accelerator_count: int
    driver_version: str
    min_nodes: int
    max_nodes: int
    spot: bool
    disk_size_gb: int
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[CloudTaint, ...] = ()


@dataclass(frozen=True)
class EksNodeGroupRequest:
    """An EKS managed node group on a GPU AMI type.

    Attributes:
        name: node group name; cluster_name, node_role_arn, subnet_ids: where and as whom.
        instance_types: EC2 instance types; ami_type: e.g. ``AL2023_x86_64_NVIDIA``.
        capacity_type: ``ON_DEMAND`` or ``SPOT``.
        min_nodes, max_nodes, desired_nodes: scaling config.
        disk_size: root disk in GiB; labels, taints: node labels and taints.
    """

    name: str
    cluster_name: str
    node_role_arn: str
    subnet_ids: tuple[str, ...]
    instance_types: tuple[str, ...]
    ami_type: str
    capacity_type: str
    min_nodes: int
    max_nodes: int
    desired_nodes: int
    disk_size: int
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[CloudTaint, ...] = ()


@dataclass(frozen=True)
class AksAgentPoolRequest:
    """An AKS user agent pool with autoscaling and taints.

    Attributes:
        name: agent pool name (AKS allows lowercase letters and digits, at most 12).
        resource_group_name, cluster_name: the cluster.
        vm_size: VM size; spot: Spot priority instead of Regular.
        min_nodes, max_nodes: autoscaling bounds.
        os_disk_size_gb: OS disk; labels: node labels; taints: ``key=value:Effect`` strings.
    """

    name: str
    resource_group_name: str
    cluster_name: str
    vm_size: str
    spot: bool
    min_nodes: int
    max_nodes: int
    os_disk_size_gb: int
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[str, ...] = ()


CloudPoolRequest = GkeNodePoolRequest | EksNodeGroupRequest | AksAgentPoolRequest
"""What a cloud provider must create for a pool."""


def aks_pool_name(name: str) -> str:
    """The AKS agent pool name of a pool: lowercase letters and digits only, at most 12."""
    return "".join(c for c in name.lower() if c.isalnum())[:12]


def cloud_pool(pool: GpuNodePool) -> CloudPoolRequest | None:
    """The cloud node pool of a gke/eks/aks pool; None for karpenter and static pools."""
    spec = pool.spec
    labels = node_labels(pool)
    spot = spec.capacity_type == "spot"
    if spec.provider == "gke" and spec.gke is not None:
        gke = spec.gke
        accelerator = spec.gpu_type.gke_accelerator
        assert accelerator is not None, "validated: the GPU exists on GKE"
        return GkeNodePoolRequest(
            name=pool.name,
            cluster=gke.cluster,
            location=gke.location,
            project=gke.project,
            machine_type=gke.machine_type,
            accelerator=accelerator,
            accelerator_count=spec.gpus_per_node,
            driver_version=gke.driver_version,
            min_nodes=spec.min_nodes,
            max_nodes=spec.max_nodes,
            spot=spot,
            disk_size_gb=gke.disk_size_gb,
            labels=labels,
            taints=_cloud_taints(spec.taints),
        )
    if spec.provider == "eks" and spec.eks is not None:
        eks = spec.eks
        return EksNodeGroupRequest(
            name=pool.name,
            cluster_name=eks.cluster_name,
            node_role_arn=eks.node_role_arn,
            subnet_ids=tuple(eks.subnet_ids),
            instance_types=tuple(eks.instance_types),
            ami_type=eks.ami_type,
            capacity_type="SPOT" if spot else "ON_DEMAND",
            min_nodes=spec.min_nodes,
            max_nodes=spec.max_nodes,
            desired_nodes=spec.min_nodes,
            disk_size=eks.disk_size,
            labels=labels,
            taints=_cloud_taints(spec.taints),
        )
    if spec.provider == "aks" and spec.aks is not None:
        aks = spec.aks
        return AksAgentPoolRequest(
            name=aks_pool_name(pool.name),
            resource_group_name=aks.resource_group_name,
            cluster_name=aks.cluster_name,
            vm_size=aks.vm_size,
            spot=spot,
            min_nodes=spec.min_nodes,
            max_nodes=spec.max_nodes,
            os_disk_size_gb=aks.os_disk_size_gb,
            labels=labels,
            taints=tuple(t.text() for t in spec.taints),
        )
    return None
