"""The schedulability rule over a stack: each job against its pools and queue, at once."""

from __future__ import annotations

from typing import Any

from tests.platform.pools.docs import pool_doc, tfjob
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.spec import parse_documents


def _rendered(*docs: dict[str, Any]) -> list[str]:
    try:
        return [f.render() for f in run(parse_documents(list(docs))).findings]
    except SpecError as err:
        return [f.render() for f in err.findings]


def test_each_replica_type_is_checked_against_its_own_pool() -> None:
    small = pool_doc("t4", gpu="t4", gpusPerNode=1, cpu=4, memory="16Gi", maxNodes=1)
    job = tfjob(workers=1, ps=True, options={"nodePool": {"Worker": "a100", "PS": "t4"}})
    ps = job["spec"]["tfReplicaSpecs"]["PS"]
    ps["replicas"] = 2
    ps["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "3"
    assert _rendered(pool_doc(), small, job) == [
        "error: jobs[0].spec.tfReplicaSpecs.PS.replicas: the job runs 2 pods with 0 GPUs at "
        'once on pool "t4", which packs them onto 2 nodes, but the pool has at most 1 node of '
        '1 GPU; fix: raise maxNodes of pool "t4" to 2, run fewer replicas, or set '
        "runPolicy.schedulingPolicy.minAvailable"
    ]


def test_every_job_of_the_stack_is_checked_in_one_run() -> None:
    first = tfjob(workers=1, gpus=8)
    second = tfjob(workers=3)
    second["metadata"]["name"] = "tf2"
    assert [line.split(":", 2)[1].strip() for line in _rendered(pool_doc(), first, second)] == [
        "jobs[0].spec.tfReplicaSpecs.Worker",
        "jobs[1].spec.tfReplicaSpecs.Worker.replicas",
    ]


def test_a_queue_without_a_gpu_quota_takes_the_pools_capacity() -> None:
    queue = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "GpuQueue",
        "metadata": {"name": "q"},
        "spec": {"nodePool": "a100", "namespaces": ["training"]},
    }
    fits = tfjob(workers=2, options={"nodePool": "a100", "queue": "q"})
    assert _rendered(pool_doc(), queue, fits) == []


def test_a_stack_without_pools_checks_nothing() -> None:
    assert _rendered(tfjob(options={}, gpus=64)) == []
