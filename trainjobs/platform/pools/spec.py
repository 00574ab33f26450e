"""The GpuNodePool document: a group of GPU nodes, how they are provided, what they offer."""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from pydantic import Field

from trainjobs.k8s.model import K8sModel
from trainjobs.k8s.quantity import quantity_or_zero
from trainjobs.platform.base import PlatformResource
from trainjobs.platform.pools.gputypes import GpuType, gpu_type

__all__ = [
    "DEFAULT_TAINT",
    "DEVICE_PLUGIN_IMAGE",
    "AksSettings",
    "EksSettings",
    "GkeSettings",
    "GpuName",
    "GpuNodePool",
    "GpuNodePoolSpec",
    "KarpenterSettings",
    "Provider",
    "StaticSettings",
    "Taint",
]

GpuName = Literal["a100-40gb", "a100-80gb", "h100-80gb", "l4", "t4", "a10g"]
"""The normalised GPU names of ``gputypes.GPU_TYPES``."""
Provider = Literal["karpenter", "static", "gke", "eks", "aks"]

DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
"""The pinned NVIDIA device plugin image of static pools (k8s-device-plugin tag v0.20.0)."""


class Taint(K8sModel):
    """A node taint: pods that do not tolerate it stay off the pool's nodes."""

    key: str = Field(description="Taint key, e.g. nvidia.com/gpu. Required.")
    value: str | None = Field(default=None, description="Taint value; default none.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        description="NoSchedule, PreferNoSchedule or NoExecute. Required."
    )

    def text(self) -> str:
        """``key=value:Effect``, the way kubectl and AKS write taints."""
        value = f"={self.value}" if self.value is not None else ""
        return f"{self.key}{value}:{self.effect}"


DEFAULT_TAINT = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")
"""The taint GPU pools get unless they say otherwise (the one GKE puts on GPU nodes)."""


class KarpenterSettings(K8sModel):
    """How Karpenter launches the pool's nodes (the EC2NodeClass)."""

    cluster_name: str = Field(
        description=(
            "EKS cluster name; subnets and security groups are found by the tag "
            "karpenter.sh/discovery=<clusterName>. Required."
        )
    )
    role: str = Field(description="IAM role of the nodes (EC2NodeClass spec.role). Required.")
    ami_alias: str = Field(
        default="al2023@latest",
        description=(
            "EC2NodeClass AMI alias (family@version); Karpenter picks the NVIDIA variant for "
            "GPU instances. Default al2023@latest; pin a version (al2023@v20250505) in production."
        ),
    )
    volume_size: str = Field(
        default="200Gi",
        description="Root volume size; GPU images are large. Default 200Gi.",
    )
    consolidate_after: str = Field(
        default="10m",
        description=(
            "How long a node must be empty before Karpenter removes it. Default 10m. Busy "
            "nodes are never consolidated: the pool only consolidates empty nodes."
        ),
    )


class StaticSettings(K8sModel):
    """Existing GPU nodes: nothing is created but the NVIDIA device plugin."""

    device_plugin: bool = Field(
        default=True,
        description=(
            "Run the NVIDIA device plugin DaemonSet (kube-system) on the pool's nodes; false "
            "when the GPU Operator already runs one. Default true."
        ),
    )
    device_plugin_image: str = Field(
        default=DEVICE_PLUGIN_IMAGE,
        description=f"Device plugin image; default {DEVICE_PLUGIN_IMAGE}.",
    )
    gpu_feature_discovery: bool = Field(
        default=False,
        description=(
            "true when the nodes run NVIDIA GPU feature discovery (the GPU Operator does): "
            "jobs then also select nvidia.com/gpu.product. Default false."
        ),
    )


class GkeSettings(K8sModel):
    """A GKE node pool (pulumi-gcp container.NodePool)."""

    cluster: str = Field(description="GKE cluster name. Required.")
    location: str = Field(description="Cluster location (region or zone). Required.")
    project: str | None = Field(default=None, description="GCP project; default the provider's.")
    machine_type: str = Field(
        description="Machine type, e.g. a2-highgpu-4g; must match gpusPerNode, cpu, memory."
    )
    driver_version: Literal["DEFAULT", "LATEST"] = Field(
        default="DEFAULT",
        description="GPU driver GKE installs: DEFAULT or LATEST; default DEFAULT.",
    )
    disk_size_gb: int = Field(default=200, ge=10, description="Boot disk in GB; default 200.")


class EksSettings(K8sModel):
    """An EKS managed node group (pulumi-aws eks.NodeGroup)."""

    cluster_name: str = Field(description="EKS cluster name. Required.")
    node_role_arn: str = Field(description="IAM role ARN of the nodes. Required.")
    subnet_ids: list[str] = Field(min_length=1, description="Subnets of the nodes. Required.")
    instance_types: list[str] = Field(
        min_length=1,
        description="Instance types, e.g. [p4de.24xlarge]; must match gpusPerNode, cpu, memory.",
    )
    ami_type: str = Field(
        default="AL2023_x86_64_NVIDIA",
        description="EKS AMI type with the NVIDIA driver; default AL2023_x86_64_NVIDIA.",
    )
    disk_size: int = Field(default=200, ge=20, description="Root disk in GiB; default 200.")


class AksSettings(K8sModel):
    """An AKS agent pool (pulumi-azure-native containerservice.AgentPool)."""

    resource_group_name: str = Field(description="Resource group of the cluster. Required.")
    cluster_name: str = Field(description="AKS cluster name. Required.")
    vm_size: str = Field(
        description="VM size, e.g. Standard_NC24ads_A100_v4; must match gpusPerNode, cpu, memory."
    )
    os_disk_size_gb: int = Field(default=200, ge=30, description="OS disk in GB; default 200.")


class GpuNodePoolSpec(K8sModel):
    """``spec`` of a GpuNodePool."""

    provider: Provider = Field(
        description="karpenter, static (existing nodes), gke, eks or aks. Required."
    )
    gpu: GpuName = Field(description="GPU model: a100-40gb, a100-80gb, h100-80gb, l4, t4, a10g.")
    gpus_per_node: int = Field(ge=1, description="GPUs on each node. Required.")
    cpu: int | str = Field(
        description="CPU one node offers to pods (allocatable), e.g. 94 or '95500m'. Required."
    )
    memory: int | str = Field(
        description="Memory one node offers to pods (allocatable), e.g. '1100Gi'. Required."
    )
    min_nodes: int = Field(default=0, ge=0, description="Nodes kept running; default 0.")
    max_nodes: int = Field(ge=1, description="Most nodes the pool may have. Required.")
    capacity_type: Literal["on-demand", "spot"] = Field(
        default="on-demand", description="on-demand or spot; default on-demand."
    )
    taints: list[Taint] = Field(
        default_factory=lambda: [DEFAULT_TAINT],
        description="Node taints; default [nvidia.com/gpu=present:NoSchedule].",
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Extra node labels jobs select: set on the nodes a provider creates; for static "
            "pools, labels the existing nodes already carry. Default none."
        ),
    )
    karpenter: KarpenterSettings | None = Field(default=None, description="provider karpenter.")
    static: StaticSettings | None = Field(
        default=None, description="provider static; default all defaults."
    )
    gke: GkeSettings | None = Field(default=None, description="provider gke.")
    eks: EksSettings | None = Field(default=None, description="provider eks.")
    aks: AksSettings | None = Field(default=None, description="provider aks.")

    @property
    def gpu_type(self) -> GpuType:
        return gpu_type(self.gpu)

    @property
    def cpu_value(self) -> Fraction:
        """CPU per node as a number; 0 when unparsable (validation reports it)."""
        return quantity_or_zero(self.cpu)

    @property
    def memory_value(self) -> Fraction:
        """Memory per node in bytes; 0 when unparsable (validation reports it)."""
        return quantity_or_zero(self.memory)


class GpuNodePool(PlatformResource):
    """A GpuNodePool document."""

    kind: Literal["GpuNodePool"] = "GpuNodePool"
    spec: GpuNodePoolSpec
