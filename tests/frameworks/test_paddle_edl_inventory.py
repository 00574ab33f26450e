"""Cluster figures from Node/Pod/Job objects, summed as the EDL controller's InquiryResource."""

from __future__ import annotations

from typing import Any

from tests.support.paths import EXAMPLES
from trainjobs.frameworks.paddle_edl import FRAMEWORK as EDL
from trainjobs.frameworks.paddle_edl import TrainingJob
from trainjobs.frameworks.paddle_edl.autoscaler import NodeRoom, TrainerPods
from trainjobs.frameworks.paddle_edl.inventory import (
    ClusterObject,
    capacity_node,
    cluster_objects,
    cluster_resource,
    elastic_job,
    problems,
    simulated_pods,
    trainer_parallelism,
    trainer_pods,
)
from trainjobs.k8s.yamlio import load_all


def node(name: str, **allocatable: Any) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": allocatable}}


def pod(
    name: str,
    phase: str,
    node_name: str = "",
    labels: dict[str, str] | None = None,
    namespace: str = "default",
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers or []}
    if init:
        spec["initContainers"] = init
    if node_name:
        spec["nodeName"] = node_name
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": spec,
        "status": {"phase": phase},
    }


def container(**requests: Any) -> dict[str, Any]:
    return {"name": "c", "resources": {"requests": requests, "limits": requests}}


def objects(*manifests: dict[str, Any]) -> list[ClusterObject]:
    return cluster_objects(list(manifests))


def example() -> TrainingJob:
    doc = load_all((EXAMPLES / "paddle-edl-fit-a-line" / "trainingjob.yaml").read_text())[0]
    job = EDL.default(TrainingJob.model_validate(doc))
    assert isinstance(job, TrainingJob)
    return job


def test_totals_requests_and_node_room() -> None:
    cluster = cluster_resource(
        objects(
            node("a", cpu="4", memory="8Gi", **{"nvidia.com/gpu": "2"}),
            node("b", cpu="3500m", memory="4Gi", **{"alpha.kubernetes.io/nvidia-gpu": 1}),
            pod("p1", "Running", "a", containers=[container(cpu="500m", memory="100Mi")]),
            pod("p2", "Pending", containers=[container(cpu=1, memory="1Gi")]),
            pod(
                "p3", "Running", "b", init=[container(cpu="250m")], containers=[container(cpu="1")]
            ),
            pod("done", "Succeeded", "a", containers=[container(cpu=3)]),
            pod("failed", "Failed", "b", containers=[container(cpu=3)]),
        )
    )
    assert (cluster.cpu_total_milli, cluster.memory_total_mega, cluster.gpu_total) == (
        7500,
        12885,
        3,
    )
    # Pending pods count in the sums; init containers count too; finished pods do not.
    assert cluster.cpu_request_milli == 2750
    assert cluster.memory_request_mega == 1179
    assert cluster.nodes == {"a": NodeRoom(3500, 8485), "b": NodeRoom(2250, 4295)}


def test_memory_is_counted_in_megabytes_rounded_up() -> None:
    cluster = cluster_resource(objects(node("a", cpu=1, memory="100Mi")))
    assert cluster.memory_total_mega == 105


def test_lists_are_unpacked() -> None:
    found = cluster_objects(
        [
            {"kind": "List", "items": [node("a", cpu=1, memory="1Gi"), pod("p", "Running")]},
            node("b"),
        ]
    )
    assert [(o.kind, o.path) for o in found] == [
        ("Node", "[0].items[0]"),
        ("Pod", "[0].items[1]"),
        ("Node", "[1]"),
    ]


def test_trainer_pods_and_parallelism_of_a_job() -> None:
    job = example()
    trainer = {"paddle-job": "example"}
    terminating = pod("t3", "Running", labels=trainer)
    terminating["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    cluster = objects(
        pod("t1", "Running", labels=trainer),
        pod("t2", "Pending", labels=trainer),
        terminating,
        pod("other-ns", "Running", labels=trainer, namespace="team-b"),
        pod("pserver", "Running", labels={"paddle-job-pserver": "example"}),
        {
            "kind": "Job",
            "metadata": {"name": "example-trainer", "namespace": "default"},
            "spec": {"parallelism": 5},
        },
    )
    assert trainer_pods(cluster, job) == TrainerPods(total=3, running=1, pending=1)
    assert trainer_parallelism(cluster, job) == 5
    assert trainer_parallelism(objects(), job) is None


def test_elastic_job_reads_the_trainer_requests_and_gpu_limit() -> None:
    job = example()
    elastic = elastic_job(job, 4, TrainerPods())
    assert (elastic.key, elastic.min_instance, elastic.max_instance, elastic.parallelism) == (
        "default/example",
        2,
        10,
        4,
    )
    assert (elastic.trainer.cpu_milli, elastic.trainer.memory_mega, elastic.trainer.gpus) == (
        200,
        210,
        0,
    )


def test_simulated_pods_fill_nodes_first_fit_by_name() -> None:
    job = example()
    nodes = objects(node("b", cpu="1", memory="4Gi"), node("a", cpu="1", memory="4Gi"))
    pods = simulated_pods([(job, 3)], nodes)
    placed = [
        (
            p.manifest["metadata"]["name"],
            p.manifest["spec"].get("nodeName"),
            p.manifest["status"]["phase"],
        )
        for p in pods
    ]
    # master 500m, pservers 500m each, trainers 200m each; 1 CPU per node.
    assert placed == [
        ("example-master-0", "a", "Running"),
        ("example-pserver-0", "a", "Running"),
        ("example-pserver-1", "b", "Running"),
        ("example-trainer-0", "b", "Running"),
        ("example-trainer-1", "b", "Running"),
        ("example-trainer-2", None, "Pending"),
    ]
    assert trainer_pods(pods, job) == TrainerPods(3, 2, 1)


def test_capacity_nodes() -> None:
    made, findings = capacity_node("cpu=8,memory=32Gi,gpu=2,name=big", 0)
    assert findings == []
    assert made == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "big"},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"}},
    }
    assert capacity_node("cpu=1,memory=1Gi", 3)[0] == node("capacity-3", cpu="1", memory="1Gi") | {
        "apiVersion": "v1"
    }


def test_bad_capacity_and_quantities_are_findings() -> None:
    assert [f.render() for f in capacity_node("cpu=8", 0)[1]] == [
        "error: --capacity[0]: a node needs memory (got 'cpu=8'); "
        "fix: e.g. --capacity cpu=8,memory=32Gi"
    ]
    assert [f.render() for f in capacity_node("cpu=-4,memory=8Gi,gpu=-1", 2)[1]] == [
        "error: --capacity[2]['cpu']: a node's capacity cannot be negative (got '-4'); "
        "fix: give what the node has, e.g. cpu=8",
        "error: --capacity[2]['nvidia.com/gpu']: a node's capacity cannot be negative "
        "(got '-1'); fix: give what the node has, e.g. cpu=8",
    ]
    assert [f.render() for f in capacity_node("cores=8,memory=1Gi", 1)[1]] == [
        "error: --capacity[1]: expected key=value pairs of cpu, memory, gpu and name "
        "(got 'cores=8'); fix: e.g. --capacity cpu=8,memory=32Gi,gpu=2"
    ]
    broken = cluster_objects(
        [
            node("a", cpu="many", memory="1Gi"),
            pod("p", "Running", containers=[container(memory="1Gb")]),
        ],
        "cluster.yaml",
    )
    fix = "fix: write a quantity such as 8, 500m or 32Gi"
    assert [f.render() for f in problems(broken)] == [
        f"error: cluster.yaml: [0].status.allocatable['cpu']: not a Kubernetes quantity "
        f"(got 'many'); {fix}",
        f"error: cluster.yaml: [1].spec.containers[0].resources.requests['memory']: "
        f"not a Kubernetes quantity (got '1Gb'); {fix}",
        f"error: cluster.yaml: [1].spec.containers[0].resources.limits['memory']: "
        f"not a Kubernetes quantity (got '1Gb'); {fix}",
    ]
