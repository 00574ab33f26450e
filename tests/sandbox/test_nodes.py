"""kwok nodes shaped like a stack's GpuNodePools: one case per pool kind, taints,
capacity and the number of nodes (static as declared, autoscaled at their max)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trainjobs.platform.pools.spec import GpuNodePool
from trainjobs.sandbox.kwok import KWOK_ANNOTATION
from trainjobs.sandbox.nodes import (
    DEFAULT_NODES,
    POOL_NODE_LABEL,
    default_nodes,
    pool_nodes,
    stack_nodes,
)

REPO = Path(__file__).resolve().parents[2]

SETTINGS: dict[str, dict[str, Any]] = {
    "static": {"labels": {"gpu-pool": "t4"}, "static": {"gpuFeatureDiscovery": True}},
    "karpenter": {"karpenter": {"clusterName": "c", "role": "r"}},
    "gke": {"gke": {"cluster": "c", "location": "us-central1", "machineType": "a2-highgpu-4g"}},
    "eks": {
        "eks": {
            "clusterName": "c",
            "nodeRoleArn": "arn",
            "subnetIds": ["s"],
            "instanceTypes": ["p4d.24xlarge"],
        }
    },
    "aks": {
        "aks": {"resourceGroupName": "g", "clusterName": "c", "vmSize": "Standard_NC24ads_A100_v4"}
    },
}
EXPECTED_LABELS = {
    "static": {"gpu-pool": "t4", "nvidia.com/gpu.product": "Tesla-T4"},
    "karpenter": {
        "trainjobs.dev/node-pool": "p",
        "karpenter.sh/nodepool": "p",
        "karpenter.sh/capacity-type": "on-demand",
        "karpenter.k8s.aws/instance-gpu-name": "a100",
    },
    "gke": {
        "trainjobs.dev/node-pool": "p",
        "cloud.google.com/gke-nodepool": "p",
        "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
        "node.kubernetes.io/instance-type": "a2-highgpu-4g",
    },
    "eks": {
        "trainjobs.dev/node-pool": "p",
        "eks.amazonaws.com/nodegroup": "p",
        "node.kubernetes.io/instance-type": "p4d.24xlarge",
    },
    "aks": {
        "trainjobs.dev/node-pool": "p",
        "kubernetes.azure.com/agentpool": "p",
        "node.kubernetes.io/instance-type": "Standard_NC24ads_A100_v4",
    },
}


def _pool(provider: str, **spec: Any) -> GpuNodePool:
    gpu = "t4" if provider == "static" else "a100-40gb"
    body = {
        "provider": provider,
        "gpu": gpu,
        "gpusPerNode": 4,
        "cpu": 46,
        "memory": "180Gi",
        "maxNodes": 3,
        "minNodes": 1,
        **SETTINGS[provider],
        **spec,
    }
    return GpuNodePool.model_validate(
        {
            "apiVersion": "trainjobs.dev/v1alpha1",
            "kind": "GpuNodePool",
            "metadata": {"name": "p"},
            "spec": body,
        }
    )


@pytest.mark.parametrize("provider", sorted(SETTINGS))
def test_each_pool_kind(provider: str) -> None:
    """Every pool kind: maxNodes nodes named after the pool, kwok's, with the labels its
    provider sets (what check's node selector asks for), the default GPU taint, and the
    pool's GPUs, cpu and memory as capacity and allocatable."""
    nodes = pool_nodes(_pool(provider))
    assert [n["metadata"]["name"] for n in nodes] == ["p-0", "p-1", "p-2"]
    for node in nodes:
        labels = node["metadata"]["labels"]
        for key, value in EXPECTED_LABELS[provider].items():
            assert labels.get(key) == value, (key, labels)
        assert labels[POOL_NODE_LABEL] == "p"
        assert node["metadata"]["annotations"] == {KWOK_ANNOTATION: "fake"}
        assert node["spec"]["taints"] == [
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
        ]
        capacity = {"cpu": "46", "memory": "180Gi", "nvidia.com/gpu": "4", "pods": "110"}
        assert node["status"] == {"capacity": capacity, "allocatable": capacity}


def test_a_static_pool_selects_only_what_it_declares() -> None:
    labels = pool_nodes(_pool("static"))[0]["metadata"]["labels"]
    assert "trainjobs.dev/node-pool" not in labels  # existing nodes: nobody added it


def test_taints_as_declared() -> None:
    taints = [
        {"key": "team", "value": "a", "effect": "NoExecute"},
        {"key": "spot", "effect": "NoSchedule"},
    ]
    nodes = pool_nodes(_pool("karpenter", taints=taints))
    assert nodes[0]["spec"]["taints"] == taints
    assert "spec" not in pool_nodes(_pool("karpenter", taints=[]))[0]


def test_nodes_of_a_stack() -> None:
    """stacks/Pulumi.gpu.yaml: 2 Karpenter A100 nodes of 8 GPUs, 3 static T4 nodes of 4."""
    nodes = stack_nodes(REPO / "stacks" / "Pulumi.gpu.yaml")
    shapes = [(n["metadata"]["name"], n["status"]["capacity"]["nvidia.com/gpu"]) for n in nodes]
    assert shapes == [("a100-0", "8"), ("a100-1", "8"), ("t4-0", "4"), ("t4-1", "4"), ("t4-2", "4")]


def test_a_stack_without_pools_gets_the_default_nodes() -> None:
    nodes = stack_nodes(REPO / "stacks" / "Pulumi.demo.yaml")
    assert nodes == default_nodes()
    assert len(nodes) == DEFAULT_NODES
    assert all("spec" not in n for n in nodes)  # untainted
