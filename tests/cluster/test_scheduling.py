"""Proof 3: fits = schedules. kwok nodes made from GpuNodePools, the real kube-scheduler.

Each case declares a pool and a job (pods target). The pool's nodes are created as
its provider would make them — a static pool's existing nodes carry the pool's labels
(and GPU feature discovery's product label), a Karpenter pool's nodes the NodePool
template's labels, the values its requirements pin and ``karpenter.sh/nodepool`` —
with the pool's taints and ``nvidia.com/gpu``, cpu and memory as capacity, ``maxNodes``
of them. kwok runs them; the real scheduler places the job's Pods. A job ``check``
says fits must be bound entirely; one it refuses must leave a Pod Pending for the
reason it gave.

A job ``check`` refuses cannot be rendered, so its Pods come from the same job on a
*roomier twin* of the pool (same provider, GPU, labels and taints; only the sizes
differ): placement (selector, tolerations) depends on neither size.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from tests.cluster.control_plane import KWOK_ANNOTATION, ControlPlane
from tests.cluster.kube import apply, poll
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.platform.pools.gputypes import gpu_type
from trainjobs.spec import parse_documents

pytestmark = pytest.mark.cluster

Doc = dict[str, Any]


def _pool(name: str, provider: str, gpus: int, max_nodes: int, **extra: Any) -> Doc:
    spec: Doc = {
        "provider": provider,
        "gpu": "a100-80gb" if provider == "karpenter" else "t4",
        "gpusPerNode": gpus,
        "cpu": 94 if provider == "karpenter" else 46,
        "memory": "1100Gi" if provider == "karpenter" else "180Gi",
        "maxNodes": max_nodes,
        **extra,
    }
    if provider == "karpenter":
        spec.setdefault("karpenter", {"clusterName": "test", "role": "KarpenterNodeRole-test"})
    return {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "GpuNodePool",
        "metadata": {"name": name},
        "spec": spec,
    }


def _tfjob(name: str, namespace: str, workers: int, gpus: int, pool: str | None) -> Doc:
    job: Doc = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": workers,
                    "restartPolicy": "OnFailure",
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "tensorflow",
                                    "image": "tensorflow/tensorflow:2.15.0-gpu",
                                    "resources": {
                                        "requests": {"cpu": "8", "memory": "64Gi"},
                                        "limits": {"memory": "64Gi", "nvidia.com/gpu": gpus},
                                    },
                                }
                            ]
                        }
                    },
                }
            }
        },
        "trainjobs": {"target": "pods"},
    }
    if pool:
        job["trainjobs"]["nodePool"] = pool
    return job


@dataclass(frozen=True)
class Case:
    """A pool, a job, what check says and what the scheduler must do."""

    id: str
    pool: Doc
    job: Doc
    refused_by: str | None
    """The check's finding code (error or warning), or None when it says the job fits."""
    pending_reason: str | None
    """What the scheduler's Unschedulable message must say for the Pending pods."""
    bound: int
    """How many of the job's Pods the scheduler binds."""
    twin: Doc | None = None
    """The roomier pool the refused job is rendered on."""


def _cases() -> list[Case]:
    static = _pool(
        "sched-t4",
        "static",
        4,
        2,
        labels={"gpu-pool": "sched-t4"},
        static={"gpuFeatureDiscovery": True},
    )
    karpenter = _pool("sched-a100", "karpenter", 8, 2)
    small = _pool("sched-small", "static", 4, 2, labels={"gpu-pool": "sched-small"})
    return [
        Case(
            "static-fits", static, _tfjob("fits", "sched-static", 3, 2, "sched-t4"), None, None, 3
        ),
        Case(
            "karpenter-fits",
            karpenter,
            _tfjob("fits", "sched-karpenter", 4, 4, "sched-a100"),
            None,
            None,
            4,
        ),
        Case(
            "gpus-per-node",
            small,
            _tfjob("too-big", "sched-gpus", 1, 8, "sched-small"),
            "schedule.gpus_per_node",
            "Insufficient nvidia.com/gpu",
            0,
            twin=_resized(small, gpusPerNode=8),
        ),
        Case(
            "max-nodes",
            small,
            _tfjob("too-many", "sched-gang", 4, 4, "sched-small"),
            "schedule.gang",
            "Insufficient nvidia.com/gpu",
            2,
            twin=_resized(small, maxNodes=4),
        ),
        Case(
            "untolerated-taint",
            small,
            _tfjob("no-pool", "sched-taint", 1, 1, None),
            "schedule.unplaced_gpu",
            "untolerated taint",
            0,
        ),
    ]


def _resized(pool: Doc, **sizes: Any) -> Doc:
    twin = copy.deepcopy(pool)
    twin["spec"].update(sizes)
    return twin


def _codes(docs: list[Doc]) -> tuple[list[str], list[Doc]]:
    """The codes check reports (errors and warnings) and, when it renders, the manifests."""
    try:
        rendering = run(parse_documents(copy.deepcopy(docs), source="<scheduling>"))
    except SpecError as exc:
        return [f.code for f in exc.findings], []
    return [f.code for f in rendering.findings], list(rendering.manifests)


def _nodes(pool: Doc, manifests: list[Doc]) -> list[Doc]:
    """The Nodes the pool's provider would run, as kwok Nodes."""
    spec = pool["spec"]
    name = pool["metadata"]["name"]
    labels: dict[str, str] = {}
    if spec["provider"] == "static":
        labels.update(spec.get("labels", {}))
        if (spec.get("static") or {}).get("gpuFeatureDiscovery"):
            # GPU feature discovery labels each node with its GPU's product name.
            labels["nvidia.com/gpu.product"] = gpu_type(spec["gpu"]).product
    else:
        (node_pool,) = [
            m for m in manifests if m["kind"] == "NodePool" and m["metadata"]["name"] == name
        ]
        template = node_pool["spec"]["template"]
        labels.update(template.get("metadata", {}).get("labels", {}))
        # Karpenter labels a node with its NodePool and with the well-known labels of
        # the instance type it launched, which satisfies every `In` requirement.
        labels["karpenter.sh/nodepool"] = name
        for req in template["spec"].get("requirements", []):
            if req["operator"] == "In":
                labels[req["key"]] = req["values"][0]
    taints = [
        {k: v for k, v in t.items() if v is not None}
        for t in (
            spec.get("taints")
            or [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
        )
    ]
    capacity = {
        "cpu": str(spec["cpu"]),
        "memory": str(spec["memory"]),
        "nvidia.com/gpu": str(spec["gpusPerNode"]),
        "pods": "110",
    }
    nodes = []
    for i in range(spec["maxNodes"]):
        node_name = f"{name}-{i}"
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": node_name,
                    "annotations": {KWOK_ANNOTATION: "fake"},
                    "labels": {**labels, "kubernetes.io/hostname": node_name, "type": "kwok"},
                },
                "spec": {"taints": taints},
                "status": {"capacity": capacity, "allocatable": capacity},
            }
        )
    return nodes


def _placed(cluster: ControlPlane, namespace: str, count: int) -> list[Doc] | None:
    """The job's Pods once each is bound or marked Unschedulable by the scheduler."""
    pods = cluster.client.items(f"/api/v1/namespaces/{namespace}/pods")
    if len(pods) < count:
        return None
    for pod in pods:
        if pod["spec"].get("nodeName"):
            continue
        conditions = pod.get("status", {}).get("conditions", [])
        if not any(
            c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable" for c in conditions
        ):
            return None
    return pods


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.id)
def test_scheduler_agrees_with_check(cluster: ControlPlane, case: Case) -> None:
    """The real scheduler binds what check says fits and strands what it refuses, and why.

    Catches check saying a job fits a pool whose nodes cannot hold it (GPUs per node,
    cpu, memory, the nodes a job needs at once against maxNodes), placement that does
    not reach the nodes (a selector label the provider does not set, a taint not
    tolerated), and check refusing what the cluster would run.
    """
    namespace = case.job["metadata"]["namespace"]
    codes, manifests = _codes([case.pool, case.job])
    if case.refused_by is None:
        assert manifests, f"check refuses a job meant to fit: {codes}"
        assert not [c for c in codes if c.startswith("schedule.")], codes
    else:
        assert case.refused_by in codes, f"check did not say {case.refused_by}: {codes}"
        if not manifests:
            assert case.twin is not None
            twin_codes, manifests = _codes([case.twin, case.job])
            assert manifests, f"the roomier twin pool must fit: {twin_codes}"
    pods = [m for m in manifests if m["kind"] in ("Pod", "Service")]
    pool_manifests = [m for m in manifests if m["kind"] == "NodePool"]
    nodes = _nodes(case.pool, pool_manifests)
    cluster.ensure_namespace(namespace)
    try:
        for node in nodes:
            cluster.client.create("/api/v1/nodes", node)
        result = apply(cluster, pods, dry_run=False)
        assert result.ok, str(result)
        count = sum(1 for m in pods if m["kind"] == "Pod")
        placed = poll(
            "the scheduler to bind or refuse every pod",
            lambda: _placed(cluster, namespace, count),
            30,
        )
        bound = [p for p in placed if p["spec"].get("nodeName")]
        pending = [p for p in placed if not p["spec"].get("nodeName")]
        assert len(bound) == case.bound, _describe(placed)
        for pod in bound:
            assert pod["spec"]["nodeName"] in {n["metadata"]["name"] for n in nodes}
        if case.pending_reason is None:
            assert not pending, _describe(placed)
        else:
            assert pending, _describe(placed)
            for pod in pending:
                message = _unschedulable(pod)
                assert case.pending_reason in message, _describe(placed)
    finally:
        # No kubelet finishes a graceful delete of a pod on a node about to go.
        cluster.kubectl(
            "delete", "pods", "--all", "-n", namespace, "--grace-period=0", "--force", check=False
        )
        cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
        for node in nodes:
            cluster.client.delete(f"/api/v1/nodes/{node['metadata']['name']}")


def _unschedulable(pod: Doc) -> str:
    for c in pod.get("status", {}).get("conditions", []):
        if c["type"] == "PodScheduled":
            return str(c.get("message", ""))
    return ""


def _describe(pods: list[Doc]) -> str:
    return "\n".join(
        f"{p['metadata']['name']}: node={p['spec'].get('nodeName')} {_unschedulable(p)}"
        for p in pods
    )
