"""gke, eks and aks pools as typed requests (the components turn them into resources)."""

from __future__ import annotations

from tests.platform.pools.docs import pool
from trainjobs.platform.pools.cloud import (
    AksAgentPoolRequest,
    CloudTaint,
    EksNodeGroupRequest,
    GkeNodePoolRequest,
    aks_pool_name,
    cloud_pool,
)

_TAINT = CloudTaint("nvidia.com/gpu", "present", "NO_SCHEDULE")
_LABELS = {"trainjobs.dev/node-pool": "a100"}


def test_gke_request() -> None:
    assert cloud_pool(pool(provider="gke", capacityType="spot", minNodes=1)) == GkeNodePoolRequest(
        name="a100",
        cluster="ml",
        location="us-central1",
        project=None,
        machine_type="a2-ultragpu-4g",
        accelerator="nvidia-a100-80gb",
        accelerator_count=4,
        driver_version="DEFAULT",
        min_nodes=1,
        max_nodes=2,
        spot=True,
        disk_size_gb=200,
        labels=_LABELS,
        taints=(_TAINT,),
    )


def test_eks_request() -> None:
    assert cloud_pool(pool(provider="eks")) == EksNodeGroupRequest(
        name="a100",
        cluster_name="ml",
        node_role_arn="arn:aws:iam::123456789012:role/nodes",
        subnet_ids=("subnet-1",),
        instance_types=("p4de.24xlarge",),
        ami_type="AL2023_x86_64_NVIDIA",
        capacity_type="ON_DEMAND",
        min_nodes=0,
        max_nodes=2,
        desired_nodes=0,
        disk_size=200,
        labels=_LABELS,
        taints=(_TAINT,),
    )


def test_aks_request() -> None:
    taints = [
        {"key": "sku", "value": "gpu", "effect": "NoExecute"},
        {"key": "x", "effect": "NoSchedule"},
    ]
    assert cloud_pool(pool("A100-pool", provider="aks", taints=taints)) == AksAgentPoolRequest(
        name="a100pool",
        resource_group_name="ml-rg",
        cluster_name="ml",
        vm_size="Standard_NC96ads_A100_v4",
        spot=False,
        min_nodes=0,
        max_nodes=2,
        os_disk_size_gb=200,
        labels={"trainjobs.dev/node-pool": "A100-pool"},
        taints=("sku=gpu:NoExecute", "x:NoSchedule"),
    )
    assert aks_pool_name("h100-training-pool") == "h100training"


def test_karpenter_and_static_pools_have_no_cloud_pool() -> None:
    assert cloud_pool(pool()) is None
    assert cloud_pool(pool(provider="static")) is None
