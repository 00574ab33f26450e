"""The instance shape catalog and the pool check it drives (issue 16, item 11).

Catalog values: AWS https://aws.amazon.com/ec2/instance-types/p5/ (p5.48xlarge: 8 H100,
192 vCPU, 2048 GiB), .../p4/ (p4de.24xlarge: 8 A100 80GB, 96 vCPU, 1152 GiB),
GCP https://cloud.google.com/compute/docs/accelerator-optimized-machines (a2-ultragpu-4g:
4 A100 80GB, 48 vCPU, 680 GB), Azure https://learn.microsoft.com/azure/virtual-machines/
sizes/gpu-accelerated/nca100v4-series (Standard_NC96ads_A100_v4: 4 A100 80GB, 96 vCPU,
880 GiB).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.platform.pools.docs import pool_doc
from trainjobs.platform.pools.gputypes import GPU_TYPES
from trainjobs.platform.pools.kind import KIND as POOLS
from trainjobs.platform.pools.shapes import SHAPES, family_shapes, shape
from trainjobs.platform.pools.spec import GpuNodePool


def _errors(doc: dict[str, Any]) -> list[str]:
    pool = GpuNodePool.model_validate(doc)
    return [f.render() for f in POOLS.validate(pool) if f.code == "pool.shape"]


def test_catalog_rows() -> None:
    p5 = shape("p5.48xlarge")
    assert p5 is not None
    assert (p5.cloud, p5.family, p5.gpus, p5.gpu, p5.gpu_memory_gib, p5.vcpus, p5.memory_gib) == (
        "aws",
        "p5",
        8,
        "h100-80gb",
        80,
        192,
        2048,
    )
    assert [s.name for s in family_shapes("aws", ("p5",))] == ["p5.48xlarge"]
    assert {s.gpus for s in family_shapes("aws", ("g5",))} == {1, 4, 8}
    assert shape("a3-highgpu-8g") is not None
    assert shape("Standard_ND96isr_H100_v5") is not None
    assert shape("m5.large") is None
    # Every family a GPU type maps Karpenter to is in the catalog, except g4dn (T4).
    for gpu in GPU_TYPES.values():
        for family in gpu.ec2_families:
            if family != "g4dn":
                assert family_shapes("aws", (family,)), family


def test_catalog_shapes_are_whole_and_positive() -> None:
    for s in SHAPES.values():
        assert s.gpus >= 1 and s.vcpus >= 4 and s.memory_gib >= 16 and s.gpu_memory_gib >= 16


def test_a_karpenter_pool_of_4_h100_per_node_is_unsatisfiable() -> None:
    doc = pool_doc("h100", gpu="h100-80gb", gpusPerNode=4, cpu=90, memory="1000Gi")
    assert _errors(doc) == [
        "error: spec.gpusPerNode: no p5 instance has 4 h100-80gb GPUs per node (p5.48xlarge "
        "has 8): Karpenter can never launch a node for this pool (got 4); fix: set "
        "gpusPerNode to 8"
    ]
    assert _errors({**doc, "spec": {**doc["spec"], "gpusPerNode": 8}}) == []


def test_a_karpenter_pool_larger_than_its_family_is_unsatisfiable() -> None:
    doc = pool_doc("h100", gpu="h100-80gb", gpusPerNode=8, cpu=200, memory="1000Gi")
    assert _errors(doc) == [
        "error: spec.cpu: the pool asks 200 CPU and 1000Gi per node; the largest p5 instance "
        "with 8 GPUs, p5.48xlarge, has 192 vCPUs and 2048Gi: Karpenter can never launch a "
        "node for this pool (got [200, '1000Gi']); fix: lower cpu and memory to at most 192 "
        "and 2048Gi (less the node's reserve)"
    ]


@pytest.mark.parametrize(
    ("provider", "settings", "path", "facts"),
    [
        (
            "gke",
            {"machineType": "a2-ultragpu-4g"},
            "spec.gke.machineType",
            "a2-ultragpu-4g has 4 a100-80gb GPUs, 48 vCPUs and 680Gi memory",
        ),
        (
            "eks",
            {"instanceTypes": ["p4de.24xlarge"]},
            "spec.eks.instanceTypes[0]",
            "p4de.24xlarge has 8 a100-80gb GPUs, 96 vCPUs and 1152Gi memory",
        ),
        (
            "aks",
            {"vmSize": "Standard_NC96ads_A100_v4"},
            "spec.aks.vmSize",
            "Standard_NC96ads_A100_v4 has 4 a100-80gb GPUs, 96 vCPUs and 880Gi memory",
        ),
    ],
)
def test_a_named_machine_must_have_the_pools_shape(
    provider: str, settings: dict[str, Any], path: str, facts: str
) -> None:
    doc = pool_doc(provider=provider)
    assert _errors(doc) == []
    doc["spec"][provider].update(settings)
    doc["spec"].update(gpu="h100-80gb", gpusPerNode=2)
    (error,) = _errors(doc)
    assert error.startswith(
        f"error: {path}: {facts}, but the pool's gpu is h100-80gb and gpusPerNode is 2"
    )


def test_a_machine_outside_the_catalog_is_not_judged() -> None:
    doc = pool_doc(provider="eks")
    doc["spec"]["eks"]["instanceTypes"] = ["p6-b200.48xlarge"]
    assert _errors(doc) == []
