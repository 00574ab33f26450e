"""The karpenter provider: a NodePool and EC2NodeClass that pass their upstream CRDs."""

from __future__ import annotations

from tests.platform.pools.docs import pool
from trainjobs.check import crd_schema
from trainjobs.platform.pools.karpenter import ec2_node_class, node_pool


def test_node_pool_asks_for_the_gpu_and_never_disrupts_running_work() -> None:
    manifest = node_pool(pool(capacityType="spot", labels={"team": "vision"}))
    spec = manifest["spec"]
    template = spec["template"]
    assert template["metadata"]["labels"] == {"trainjobs.dev/node-pool": "a100", "team": "vision"}
    assert {r["key"]: (r["operator"], r["values"]) for r in template["spec"]["requirements"]} == {
        "karpenter.k8s.aws/instance-family": ("In", ["p4de"]),
        "karpenter.k8s.aws/instance-gpu-name": ("In", ["a100"]),
        "karpenter.k8s.aws/instance-gpu-count": ("In", ["8"]),
        "karpenter.k8s.aws/instance-cpu": ("Gt", ["45"]),
        "karpenter.k8s.aws/instance-memory": ("Gt", ["511999"]),
        "karpenter.sh/capacity-type": ("In", ["spot"]),
        "kubernetes.io/arch": ("In", ["amd64"]),
        "kubernetes.io/os": ("In", ["linux"]),
    }
    assert template["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]
    assert template["spec"]["expireAfter"] == "Never"
    assert spec["disruption"] == {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": "10m",
        "budgets": [{"nodes": "0", "reasons": ["Drifted"]}],
    }
    assert spec["limits"] == {"nvidia.com/gpu": 16, "cpu": "92", "memory": "1024000Mi"}


def test_node_class_finds_the_cluster_by_its_discovery_tag() -> None:
    spec = ec2_node_class(pool())["spec"]
    assert spec["role"] == "NodeRole"
    assert spec["amiSelectorTerms"] == [{"alias": "al2023@latest"}]
    tag = [{"tags": {"karpenter.sh/discovery": "training"}}]
    assert spec["subnetSelectorTerms"] == tag == spec["securityGroupSelectorTerms"]
    assert spec["blockDeviceMappings"][0]["ebs"]["volumeSize"] == "200Gi"


def test_both_objects_pass_the_vendored_crds() -> None:
    for manifest in (node_pool(pool()), ec2_node_class(pool())):
        assert crd_schema.problems(manifest) == []


def test_the_crds_catch_a_bad_field() -> None:
    manifest = node_pool(pool())
    manifest["spec"]["disruption"]["consolidationPolicy"] = "Always"
    problems = crd_schema.problems(manifest)
    assert problems is not None
    assert [p[0] for p in problems] == ["spec.disruption.consolidationPolicy"]
