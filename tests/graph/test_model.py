"""The graph of a stack: units as clusters, replicas grouped, edges from depends_on."""

from __future__ import annotations

from tests.support.paths import STACKS
from trainjobs.check import run
from trainjobs.graph import Edge, Node, stack_graph
from trainjobs.render import render
from trainjobs.spec import load_path, parse_documents

REDIS = {
    "apiVersion": "trainjobs.dev/v1alpha1",
    "kind": "RedisBackend",
    "metadata": {"name": "rdzv", "namespace": "training"},
}
NFS = {
    "apiVersion": "trainjobs.dev/v1alpha1",
    "kind": "NfsBackend",
    "metadata": {"name": "data", "namespace": "training"},
    "spec": {"server": "nfs.example.com", "path": "/exports"},
}


def _tfjob(name: str, backend: str) -> dict[str, object]:
    container = {"name": "tensorflow", "image": "tf:1"}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": "training"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 3, "template": {"spec": {"containers": [container]}}}
            }
        },
        "trainjobs": {"backend": backend, "target": "pods"},
    }


def test_the_demo_stack() -> None:
    # kubeflow is a shared namespace: the stack reads it and draws no unit for it.
    graph = stack_graph(run(load_path(STACKS / "Pulumi.demo.yaml")), "stack demo")
    assert [(c.id, c.title, c.subtitle, c.compact) for c in graph.clusters] == [
        ("u0", "namespace training", "Namespace", True),
        ("u1", "job kubeflow/mnist", "TFJob, pods target", False),
        ("u2", "job training/pytorch-ddp", "PyTorchJob, pods target", False),
        ("u3", "job training/tf-benchmarks", "TFJob, operator target", True),
    ]
    assert graph.clusters[1].nodes == (
        Node("u1_n0", "Service", ("mnist-chief-0",)),
        Node("u1_n1", "Service", ("mnist-ps-0",)),
        Node("u1_n2", "Service", ("mnist-worker-0", "mnist-worker-1")),
        Node("u1_n3", "Pod", ("mnist-chief-0",)),
        Node("u1_n4", "Pod", ("mnist-ps-0",)),
        Node("u1_n5", "Pod", ("mnist-worker-0", "mnist-worker-1")),
    )
    assert graph.edges == (Edge("u0", "u2"), Edge("u0", "u3"))


def test_backends_come_before_the_jobs_that_use_them() -> None:
    stack = parse_documents(
        [REDIS, NFS, _tfjob("a", "rdzv"), _tfjob("b", "data"), _tfjob("c", "rdzv")]
    )
    graph = stack_graph(render(stack))
    titles = {c.id: c.title for c in graph.clusters}
    assert [(titles[e.source], titles[e.target]) for e in graph.edges] == [
        ("backend training/rdzv", "job training/a"),
        ("backend training/data", "job training/b"),
        ("backend training/rdzv", "job training/c"),
    ]
    nfs = next(c for c in graph.clusters if c.title == "backend training/data")
    assert (nfs.subtitle, nfs.nodes, nfs.compact) == ("NfsBackend", (), False)


def test_lines_of_a_node() -> None:
    assert Node("n", "Pod", ("a-0",)).lines == ("Pod", "a-0")
    assert Node("n", "Pod", ("a-0", "a-1", "a-2")).lines == ("3 Pods", "a-0 … a-2")


def test_the_gpu_stack_draws_its_node_pools_and_queue_before_the_jobs() -> None:
    graph = stack_graph(run(load_path(STACKS / "Pulumi.gpu.yaml")), "stack gpu")
    assert [(c.id, c.title, c.subtitle, c.compact) for c in graph.clusters] == [
        ("u0", "namespace training", "Namespace", True),
        ("u1", "nodePool a100", "GpuNodePool", False),
        ("u2", "nodePool t4", "GpuNodePool", False),
        ("u3", "queue team-a", "GpuQueue", False),
        ("u4", "job training/tf-benchmarks", "TFJob, operator target", True),
        ("u5", "job training/pytorch-ddp", "PyTorchJob, pods target", False),
    ]
    # A pool's one object is not the pool: the static pool shows its device plugin.
    assert graph.clusters[2].nodes == (Node("u2_n0", "DaemonSet", ("nvidia-device-plugin-t4",)),)
    assert [n.kind for n in graph.clusters[3].nodes] == [
        "ResourceFlavor",
        "ClusterQueue",
        "LocalQueue",
    ]
    titles = {c.id: c.title for c in graph.clusters}
    assert [(titles[e.source], titles[e.target]) for e in graph.edges] == [
        ("nodePool a100", "queue team-a"),
        ("namespace training", "queue team-a"),
        ("nodePool a100", "job training/tf-benchmarks"),
        ("queue team-a", "job training/tf-benchmarks"),
        ("namespace training", "job training/tf-benchmarks"),
        ("nodePool t4", "job training/pytorch-ddp"),
        ("namespace training", "job training/pytorch-ddp"),
    ]
