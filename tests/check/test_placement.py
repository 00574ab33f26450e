"""The schedulability rule over a stack: each job against its pools and queue, at once."""

from __future__ import annotations

from tests.platform.pools.docs import placement_findings, pool_doc, tfjob


def test_each_replica_type_is_checked_against_its_own_pool() -> None:
    small = pool_doc("t4", gpu="t4", gpusPerNode=1, cpu=4, memory="16Gi", maxNodes=1)
    job = tfjob(workers=1, ps=True, options={"nodePool": {"Worker": "a100", "PS": "t4"}})
    ps = job["spec"]["tfReplicaSpecs"]["PS"]
    ps["replicas"] = 2
    ps["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "3"
    assert placement_findings(pool_doc(), small, job) == [
        "error: jobs[0].spec.tfReplicaSpecs.PS.replicas: the job runs 2 pods with 0 GPUs at "
        'once on pool "t4", which packs them onto 2 nodes, but the pool has at most 1 node of '
        '1 GPU; fix: raise maxNodes of pool "t4" to 2, run fewer replicas, or set '
        "runPolicy.schedulingPolicy.minAvailable"
    ]


def test_every_job_of_the_stack_is_checked_in_one_run() -> None:
    first = tfjob(workers=1, gpus=8)
    second = tfjob(workers=3)
    second["metadata"]["name"] = "tf2"
    assert [
        line.split(":", 2)[1].strip()
        # Existing nodes of 4 GPUs (no EC2 size has 4 A100 80GB).
        for line in placement_findings(pool_doc(provider="static"), first, second)
    ] == [
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
    assert placement_findings(pool_doc(), queue, fits) == []


def test_a_stack_without_pools_checks_nothing() -> None:
    assert placement_findings(tfjob(options={}, gpus=64)) == []


def test_static_pools_whose_device_plugins_share_nodes_are_warned_about() -> None:
    t4 = pool_doc("t4", provider="static", gpu="t4", labels={"gpu": "t4"})
    all_nodes = pool_doc("any", provider="static")
    own = pool_doc("l4", provider="static", gpu="l4", labels={"gpu": "l4"})
    assert placement_findings(t4, own) == []
    assert placement_findings(t4, all_nodes) == [
        "warning: nodePools[1].spec.labels: static pools 't4' and 'any' both run the NVIDIA "
        "device plugin, and a node that carries the labels of one carries those of the other; "
        "two plugins on one node compete for its GPUs (got {}); fix: give each static pool "
        "labels of its own, or set static.devicePlugin: false on one of them"
    ]
    quiet = pool_doc("any", provider="static", static={"devicePlugin": False})
    assert placement_findings(t4, quiet) == []
