"""GpuNodePool and GpuQueue components under Pulumi mocks: cloud pools register inside the
pool component with the inputs the kind describes; jobs wait for their pool and queue."""

from __future__ import annotations

import sys
from typing import Any

import pulumi
import pytest

from tests.platform.pools.docs import pool_doc, tfjob
from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import GpuNodePool, GpuQueue, TrainingJob
from trainjobs.components.cloud_pools import MissingProviderError
from trainjobs.spec import parse_documents


def _spec(provider: str, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = pool_doc(provider=provider, **extra)["spec"]
    return spec


def _one(resources: list[Registered], type_: str) -> Registered:
    (found,) = [r for r in resources if r.type == type_]
    return found


def test_gke_node_pool_has_guest_accelerators_and_driver_installation() -> None:
    resources = run_program(lambda: GpuNodePool("a100", _spec("gke", capacityType="spot")))
    node_pool = _one(resources, "gcp:container/nodePool:NodePool")
    assert node_pool.parent.endswith("trainjobs:index:GpuNodePool::a100")
    assert node_pool.inputs == {
        "name": "a100",
        "cluster": "ml",
        "location": "us-central1",
        "initialNodeCount": 0,
        "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 2, "locationPolicy": "ANY"},
        "nodeConfig": {
            "machineType": "a2-ultragpu-4g",
            "diskSizeGb": 200,
            "spot": True,
            "labels": {"trainjobs.dev/node-pool": "a100"},
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
            "guestAccelerators": [
                {
                    "type": "nvidia-a100-80gb",
                    "count": 4,
                    "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
                }
            ],
            "oauthScopes": ["https://www.googleapis.com/auth/cloud-platform"],
        },
    }


def test_eks_node_group_uses_a_gpu_ami_type() -> None:
    resources = run_program(lambda: GpuNodePool("a100", _spec("eks", minNodes=1)))
    group = _one(resources, "aws:eks/nodeGroup:NodeGroup")
    assert group.parent.endswith("trainjobs:index:GpuNodePool::a100")
    assert group.inputs == {
        "nodeGroupName": "a100",
        "clusterName": "ml",
        "nodeRoleArn": "arn:aws:iam::123456789012:role/nodes",
        "subnetIds": ["subnet-1"],
        "instanceTypes": ["p4de.24xlarge"],
        "amiType": "AL2023_x86_64_NVIDIA",
        "capacityType": "ON_DEMAND",
        "diskSize": 200,
        "labels": {"trainjobs.dev/node-pool": "a100"},
        "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
        "scalingConfig": {"minSize": 1, "maxSize": 2, "desiredSize": 1},
    }


def test_aks_agent_pool_has_taints_and_autoscaling() -> None:
    resources = run_program(lambda: GpuNodePool("a100", _spec("aks", capacityType="spot")))
    agent_pool = _one(resources, "azure-native:containerservice:AgentPool")
    assert agent_pool.parent.endswith("trainjobs:index:GpuNodePool::a100")
    inputs = dict(agent_pool.inputs)
    assert inputs == {
        "agentPoolName": "a100",
        "resourceGroupName": "ml-rg",
        "resourceName": "ml",
        "mode": "User",
        "osType": "Linux",
        "vmSize": "Standard_NC96ads_A100_v4",
        "osDiskSizeGB": 200,
        "enableAutoScaling": True,
        "count": 0,
        "minCount": 0,
        "maxCount": 2,
        "nodeLabels": {"trainjobs.dev/node-pool": "a100"},
        "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"],
        "scaleSetPriority": "Spot",
        "scaleSetEvictionPolicy": "Delete",
        "spotMaxPrice": -1,
    }


def test_a_missing_cloud_sdk_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes the import fail as if the package were not installed.
    monkeypatch.setitem(sys.modules, "pulumi_gcp", None)
    with pytest.raises(MissingProviderError) as err:
        run_program(lambda: GpuNodePool("a100", _spec("gke")))
    assert str(err.value) == (
        "GpuNodePool 'a100' uses provider 'gke', which needs the pulumi-gcp package; "
        "install it with: pip install 'trainjobs[gke]'"
    )


def test_karpenter_pool_registers_its_objects_and_no_cloud_pool() -> None:
    resources = run_program(lambda: GpuNodePool("a100", _spec("karpenter")))
    types = sorted(r.type for r in resources)
    assert types == [
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
        "kubernetes:karpenter.sh/v1:NodePool",
        "trainjobs:index:GpuNodePool",
    ]
    assert sorted(r.inputs["kind"] for r in resources if r.custom) == ["EC2NodeClass", "NodePool"]


def test_a_job_on_a_pool_and_queue_waits_for_both_and_is_placed() -> None:
    job = parse_documents([tfjob(options={})]).jobs[0].job

    def program_() -> None:
        pool = GpuNodePool("a100", _spec("karpenter"))
        queue = GpuQueue("team-a", {"nodePool": "a100", "namespaces": ["training"]}, uses=[pool])
        TrainingJob("tf", job, node_pool=pool, queue=queue)

    resources = run_program(program_)
    kinds = sorted(r.inputs.get("kind", "") for r in resources if r.custom)
    assert kinds == [
        "ClusterQueue",
        "EC2NodeClass",
        "LocalQueue",
        "NodePool",
        "ResourceFlavor",
        "TFJob",
    ]
    component = _one(resources, "trainjobs:index:TrainingJob")
    deps = sorted(d.rsplit("::", 1)[1] for d in component.options["dependencies"])
    assert deps == ["a100", "a100", "a100", "team-a", "training/team-a"]
    (tf,) = [r for r in resources if r.inputs.get("kind") == "TFJob"]
    assert tf.inputs["metadata"]["labels"] == {
        "kueue.x-k8s.io/queue-name": "team-a",
        "trainjobs.dev/stack": "trainjobs.test",
    }
    template = tf.inputs["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    assert template["spec"]["nodeSelector"]["trainjobs.dev/node-pool"] == "a100"


def test_a_missing_cloud_sdk_names_a_pool_named_by_an_output_as_an_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pulumi_gcp", None)

    def program() -> None:
        doc = pool_doc(provider="gke")
        doc["metadata"]["name"] = pulumi.Output.from_input("a100")
        GpuNodePool("a100", doc)

    with pytest.raises(MissingProviderError) as err:
        run_program(program)
    assert str(err.value) == (
        "GpuNodePool '<Pulumi Input #1>' uses provider 'gke', which needs the pulumi-gcp "
        "package; install it with: pip install 'trainjobs[gke]'"
    )
