"""gke, eks and aks pools as the cloud SDK resource each asks for, as data
(the components register it)."""

from __future__ import annotations

from tests.platform.pools.docs import pool
from trainjobs.platform.pools.cloud import CloudPoolRequest, aks_pool_name, cloud_pool

_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
_LABELS = {"trainjobs.dev/node-pool": "a100"}


def test_gke_request() -> None:
    assert cloud_pool(pool(provider="gke", capacityType="spot", minNodes=1)) == CloudPoolRequest(
        provider="gke",
        resource_type="container.NodePool",
        name="a100",
        args={
            "name": "a100",
            "cluster": "ml",
            "location": "us-central1",
            "project": None,
            "initial_node_count": 1,
            "autoscaling": {
                "total_min_node_count": 1,
                "total_max_node_count": 2,
                "location_policy": "ANY",
            },
            "node_config": {
                "machine_type": "a2-ultragpu-4g",
                "disk_size_gb": 200,
                "spot": True,
                "labels": _LABELS,
                "taints": [_TAINT],
                "guest_accelerators": [
                    {
                        "type": "nvidia-a100-80gb",
                        "count": 4,
                        "gpu_driver_installation_config": {"gpu_driver_version": "DEFAULT"},
                    }
                ],
                "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
            },
        },
    )


def test_eks_request() -> None:
    assert cloud_pool(pool(provider="eks")) == CloudPoolRequest(
        provider="eks",
        resource_type="eks.NodeGroup",
        name="a100",
        args={
            "node_group_name": "a100",
            "cluster_name": "ml",
            "node_role_arn": "arn:aws:iam::123456789012:role/nodes",
            "subnet_ids": ["subnet-1"],
            "instance_types": ["p4de.24xlarge"],
            "ami_type": "AL2023_x86_64_NVIDIA",
            "capacity_type": "ON_DEMAND",
            "disk_size": 200,
            "labels": _LABELS,
            "taints": [_TAINT],
            "scaling_config": {"min_size": 0, "max_size": 2, "desired_size": 0},
        },
    )


def test_aks_request() -> None:
    taints = [
        {"key": "sku", "value": "gpu", "effect": "NoExecute"},
        {"key": "x", "effect": "NoSchedule"},
    ]
    assert cloud_pool(pool("A100-pool", provider="aks", taints=taints)) == CloudPoolRequest(
        provider="aks",
        resource_type="containerservice.AgentPool",
        name="a100pool",
        args={
            "agent_pool_name": "a100pool",
            "resource_group_name": "ml-rg",
            "resource_name_": "ml",
            "mode": "User",
            "os_type": "Linux",
            "vm_size": "Standard_NC96ads_A100_v4",
            "os_disk_size_gb": 200,
            "enable_auto_scaling": True,
            "count": 0,
            "min_count": 0,
            "max_count": 2,
            "node_labels": {"trainjobs.dev/node-pool": "A100-pool"},
            "node_taints": ["sku=gpu:NoExecute", "x:NoSchedule"],
            "scale_set_priority": "Regular",
        },
    )
    assert aks_pool_name("h100-training-pool") == "h100training"


def test_karpenter_and_static_pools_have_no_cloud_pool() -> None:
    assert cloud_pool(pool()) is None
    assert cloud_pool(pool(provider="static")) is None
