"""Schedulability: per pod, per gang, and the placement contract, with numbers and fixes."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.platform.pools.docs import placement_findings, pool, pool_doc, tfjob
from trainjobs.plan import PodSet
from trainjobs.platform.pools.placement import placement_of
from trainjobs.platform.pools.resources import PodDemand
from trainjobs.platform.pools.schedulability import (
    BoundReplica,
    nodes_needed,
    replica_findings,
)


def _pool() -> dict[str, Any]:
    # Nodes of 4 A100 80GB: existing (static) nodes, as no EC2 size has 4 of them.
    return pool_doc(provider="static")


def test_the_brief_example_gpus_per_pod_against_gpus_per_node() -> None:
    assert placement_findings(_pool(), tfjob(workers=1, gpus=8)) == [
        'error: jobs[0].spec.tfReplicaSpecs.Worker: 8 GPUs per pod, but pool "a100" nodes '
        "have 4; fix: lower nvidia.com/gpu to 4 or use a pool with 8-GPU nodes"
    ]


def test_cpu_and_memory_per_pod_against_a_node() -> None:
    job = tfjob(workers=1)
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": 1, "cpu": "64", "memory": "600Gi"}
    }
    assert placement_findings(_pool(), job) == [
        'error: jobs[0].spec.tfReplicaSpecs.Worker: 64 CPU per pod, but pool "a100" nodes '
        "offer 46; fix: lower the cpu request to 46 or use larger nodes",
        'error: jobs[0].spec.tfReplicaSpecs.Worker: 600Gi memory per pod, but pool "a100" '
        "nodes offer 500Gi; fix: lower the memory request to 500Gi or use larger nodes",
    ]


def test_a_gang_larger_than_the_pool() -> None:
    assert placement_findings(_pool(), tfjob(workers=3)) == [
        "error: jobs[0].spec.tfReplicaSpecs.Worker.replicas: the job runs 3 pods with 12 GPUs "
        'at once on pool "a100", which packs them onto 3 nodes, but the pool has at most 2 '
        'nodes of 4 GPUs; fix: raise maxNodes of pool "a100" to 3, run fewer replicas, or set '
        "runPolicy.schedulingPolicy.minAvailable"
    ]
    # Two 2-GPU pods share a node: 4 of them fit on 2 nodes.
    assert placement_findings(_pool(), tfjob(workers=4, gpus=2)) == []


def test_min_available_shrinks_the_gang() -> None:
    job = tfjob(workers=3)
    job["trainjobs"]["gang"] = "volcano"  # who enforces minAvailable (else: advice)
    job["spec"]["runPolicy"] = {"schedulingPolicy": {"minAvailable": 2}}
    assert placement_findings(_pool(), job) == []
    job["spec"]["runPolicy"] = {"schedulingPolicy": {"minAvailable": 3}}
    assert placement_findings(_pool(), job)[0].startswith(
        "error: jobs[0].spec.tfReplicaSpecs.Worker.replicas: the gang runs 3 pods with 12 GPUs"
    )


def test_a_gpu_replica_outside_every_pool_is_warned_about() -> None:
    assert placement_findings(_pool(), tfjob(options={})) == [
        "warning: jobs[0].spec.tfReplicaSpecs.Worker: 4 GPUs per pod, but no node pool is "
        "named for it and it tolerates the taints of none of the stack's pools (a100); fix: "
        "add trainjobs.nodePool: {Worker: a100} to the job"
    ]
    tolerant = tfjob(options={}, tolerations=[{"operator": "Exists"}])
    assert placement_findings(_pool(), tolerant) == []


def test_a_template_that_lost_its_placement_is_reported() -> None:
    a100 = pool()
    template = {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    replica = BoundReplica(
        PodSet("Worker", "spec.x.Worker.template", template, 1),
        "jobs[0].spec.x.Worker",
        a100,
        placement_of(a100),
    )
    assert [f.render() for f in replica_findings(replica)] == [
        "error: jobs[0].spec.x.Worker.template.spec.nodeSelector: the pods do not select the "
        'labels of pool "a100" (got {}); fix: select trainjobs.dev/node-pool=a100, '
        "karpenter.k8s.aws/instance-gpu-name=a100",
        "error: jobs[0].spec.x.Worker.template.spec.tolerations: the pods do not tolerate taint "
        'nvidia.com/gpu=present:NoSchedule of pool "a100", so they never start there; fix: add '
        "a toleration for nvidia.com/gpu (NoSchedule)",
    ]


NODE = PodDemand(Fraction(8), Fraction(96), Fraction(2**40))


def test_nodes_needed_packs_first_fit_largest_first() -> None:
    pods = [PodDemand(Fraction(g)) for g in (5, 3, 3, 5)]
    assert nodes_needed(pods, NODE) == 2
    assert nodes_needed([PodDemand(Fraction(3))] * 4, NODE) == 2
    assert nodes_needed([PodDemand(Fraction(5))] * 3, NODE) == 3
    assert nodes_needed([], NODE) == 0


@given(gpus=st.integers(1, 8), count=st.integers(0, 40))
def test_pods_of_one_shape_need_exactly_ceil_count_over_per_node(gpus: int, count: int) -> None:
    per_node = 8 // gpus
    expected = -(-count // per_node)
    assert nodes_needed([PodDemand(Fraction(gpus))] * count, NODE) == expected


@given(st.lists(st.integers(1, 8), max_size=30))
def test_packing_never_beats_the_gpu_lower_bound(gpus: list[int]) -> None:
    need = nodes_needed([PodDemand(Fraction(g)) for g in gpus], NODE)
    assert need >= -(-sum(gpus) // 8)
    assert need <= len(gpus)


@pytest.mark.parametrize("gpus", [1, 2, 4])
def test_a_job_that_fits_has_no_findings(gpus: int) -> None:
    assert placement_findings(_pool(), tfjob(workers=8 // gpus, gpus=gpus)) == []
