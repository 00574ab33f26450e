"""The cluster figures the EDL autoscaler decides on, from Node, Pod and Job objects.

The objects are what ``kubectl get nodes,pods,jobs -A -o yaml`` prints (a ``List``
or separate documents); :func:`cluster_resource` sums them as the controller's
``InquiryResource`` did. Without any Pod, :func:`simulated_pods` stands in the
jobs' own pods, placed on the first node (by name) with room, so a user can ask
"what would EDL do with this job on this capacity" before running anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from trainjobs.errors import Finding
from trainjobs.frameworks.paddle_edl.autoscaler import (
    ClusterResource,
    ElasticJob,
    NodeRoom,
    TrainerDemand,
    TrainerPods,
)
from trainjobs.frameworks.paddle_edl.framework import FRAMEWORK, LABEL_TRAINER, trainer_name
from trainjobs.frameworks.paddle_edl.model import TrainingJob
from trainjobs.frameworks.paddle_edl.quantities import (
    GPU_NAMES,
    BadQuantity,
    ceil_int,
    gpu_amount,
    mega,
    milli,
    quantity,
)
from trainjobs.k8s.data import Manifest
from trainjobs.plan.objects import BatchJobPlan, ReplicaSetPlan

__all__ = [
    "ClusterObject",
    "capacity_node",
    "cluster_objects",
    "cluster_resource",
    "elastic_job",
    "problems",
    "simulated_pods",
    "trainer_parallelism",
    "trainer_pods",
]

_DONE = ("Succeeded", "Failed")
_LISTS = re.compile(r"^(|Node|Pod|Job)List$")


@dataclass(frozen=True)
class ClusterObject:
    """One object of the cluster and where it was read (for findings)."""

    manifest: Manifest
    path: str
    source: str = ""

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind", ""))


def cluster_objects(docs: Sequence[Any], source: str = "") -> list[ClusterObject]:
    """Every object in some YAML documents, ``List`` items unpacked."""
    out: list[ClusterObject] = []
    for index, doc in enumerate(docs):
        if not isinstance(doc, Mapping):
            continue
        if _LISTS.match(str(doc.get("kind", ""))) and isinstance(doc.get("items"), list):
            for item_index, item in enumerate(doc["items"]):
                if isinstance(item, Mapping):
                    out.append(ClusterObject(dict(item), f"[{index}].items[{item_index}]", source))
        else:
            out.append(ClusterObject(dict(doc), f"[{index}]", source))
    return out


def capacity_node(text: str, index: int) -> tuple[Manifest | None, list[Finding]]:
    """A Node from ``cpu=8,memory=32Gi[,gpu=2][,name=n1]`` (one ``--capacity``)."""
    where = f"--capacity[{index}]"
    values: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in ("cpu", "memory", "gpu", "name"):
            return None, [
                Finding(
                    code="edl.capacity",
                    path=where,
                    message="expected key=value pairs of cpu, memory, gpu and name",
                    value=part,
                    hint="e.g. --capacity cpu=8,memory=32Gi,gpu=2",
                )
            ]
        values[key] = value
    missing = [k for k in ("cpu", "memory") if k not in values]
    if missing:
        return None, [
            Finding(
                code="edl.capacity",
                path=where,
                message=f"a node needs {' and '.join(missing)}",
                value=text,
                hint="e.g. --capacity cpu=8,memory=32Gi",
            )
        ]
    allocatable = {k: values[k] for k in ("cpu", "memory")}
    if "gpu" in values:
        allocatable[GPU_NAMES[0]] = values["gpu"]
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": values.get("name", f"capacity-{index}")},
        "status": {"allocatable": allocatable},
    }
    found = _quantity_findings(allocatable, where)
    # A node by hand is what the user says it has: less than nothing is a typo, and the
    # plan would run on a cluster smaller than empty.
    found += [
        Finding(
            code="edl.capacity",
            path=f"{where}[{name!r}]",
            message="a node's capacity cannot be negative",
            value=value,
            hint="give what the node has, e.g. cpu=8",
        )
        for name, value in allocatable.items()
        if not found and quantity(value) < 0
    ]
    return (None, found) if found else (node, [])


def _map_at(value: Any, path: str) -> Mapping[str, Any]:
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _quantity_findings(values: Mapping[str, Any], path: str, source: str = "") -> list[Finding]:
    findings = []
    for name, value in values.items():
        try:
            quantity(value)
        except BadQuantity:
            findings.append(
                Finding(
                    code="edl.cluster_quantity",
                    path=f"{path}[{name!r}]",
                    message="not a Kubernetes quantity",
                    value=value,
                    hint="write a quantity such as 8, 500m or 32Gi",
                    source=source,
                )
            )
    return findings


def _containers(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return []
    found = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    return [c for c in found if isinstance(c, Mapping)]


def _resource(container: Mapping[str, Any], part: str) -> Mapping[str, Any]:
    return _map_at(container, f"resources.{part}")


def _amount(values: Mapping[str, Any], name: str) -> Fraction:
    return quantity(values[name]) if name in values else Fraction(0)


def problems(objects: Iterable[ClusterObject]) -> list[Finding]:
    """Unreadable quantities in Node allocatables and Pod container resources."""
    findings: list[Finding] = []
    for obj in objects:
        if obj.kind == "Node":
            allocatable = _map_at(obj.manifest, "status.allocatable")
            findings += _quantity_findings(
                allocatable, f"{obj.path}.status.allocatable", obj.source
            )
        elif obj.kind == "Pod":
            for field in ("containers", "initContainers"):
                items = _map_at(obj.manifest, "spec").get(field)
                for i, container in enumerate(items if isinstance(items, list) else []):
                    for part in ("requests", "limits"):
                        where = f"{obj.path}.spec.{field}[{i}].resources.{part}"
                        values = (
                            _resource(container, part) if isinstance(container, Mapping) else {}
                        )
                        findings += _quantity_findings(values, where, obj.source)
    return findings


def cluster_resource(objects: Sequence[ClusterObject]) -> ClusterResource:
    """The autoscaler's figures from Node and Pod objects (other kinds are ignored)."""
    nodes = [o.manifest for o in objects if o.kind == "Node"]
    pods = [o.manifest for o in objects if o.kind == "Pod" and _phase(o.manifest) not in _DONE]
    cpu_idle: dict[str, int] = {}
    memory_free: dict[str, int] = {}
    cpu = memory = gpu = Fraction(0)
    for node in nodes:
        allocatable = _map_at(node, "status.allocatable")
        name = str((node.get("metadata") or {}).get("name", ""))
        cpu_idle[name] = milli(_amount(allocatable, "cpu"))
        memory_free[name] = mega(_amount(allocatable, "memory"))
        cpu += _amount(allocatable, "cpu")
        memory += _amount(allocatable, "memory")
        gpu += gpu_amount(allocatable)
    sums = {(part, name): Fraction(0) for part in ("requests", "limits") for name in "cmg"}
    for pod in pods:
        node_name = str((pod.get("spec") or {}).get("nodeName") or "")
        for container in _containers(pod):
            for part in ("requests", "limits"):
                values = _resource(container, part)
                sums[part, "c"] += _amount(values, "cpu")
                sums[part, "m"] += _amount(values, "memory")
                sums[part, "g"] += gpu_amount(values)
            if node_name in cpu_idle:
                requests = _resource(container, "requests")
                cpu_idle[node_name] -= milli(_amount(requests, "cpu"))
                memory_free[node_name] -= mega(_amount(requests, "memory"))
    return ClusterResource(
        cpu_total_milli=milli(cpu),
        memory_total_mega=mega(memory),
        gpu_total=ceil_int(gpu),
        cpu_request_milli=milli(sums["requests", "c"]),
        cpu_limit_milli=milli(sums["limits", "c"]),
        memory_request_mega=mega(sums["requests", "m"]),
        memory_limit_mega=mega(sums["limits", "m"]),
        gpu_request=ceil_int(sums["requests", "g"]),
        gpu_limit=ceil_int(sums["limits", "g"]),
        nodes={n: NodeRoom(cpu_idle[n], memory_free[n]) for n in sorted(cpu_idle)},
    )


def _phase(pod: Mapping[str, Any]) -> str:
    status = pod.get("status")
    return str(status.get("phase", "")) if isinstance(status, Mapping) else ""


def trainer_pods(objects: Sequence[ClusterObject], job: TrainingJob) -> TrainerPods:
    """The job's trainer pods (``paddle-job=<name>`` in its namespace) by phase."""
    total = running = pending = 0
    for obj in objects:
        meta = obj.manifest.get("metadata") or {}
        if obj.kind != "Pod" or meta.get("namespace", "default") != job.namespace:
            continue
        if (meta.get("labels") or {}).get(LABEL_TRAINER) != job.name:
            continue
        total += 1
        if meta.get("deletionTimestamp") is None:
            running += _phase(obj.manifest) == "Running"
            pending += _phase(obj.manifest) == "Pending"
    return TrainerPods(total, running, pending)


def trainer_parallelism(objects: Sequence[ClusterObject], job: TrainingJob) -> int | None:
    """``spec.parallelism`` of the job's trainer Job among the objects, if there is one."""
    for obj in objects:
        meta = obj.manifest.get("metadata") or {}
        if (
            obj.kind == "Job"
            and meta.get("name") == trainer_name(job)
            and meta.get("namespace", "default") == job.namespace
        ):
            value = (obj.manifest.get("spec") or {}).get("parallelism")
            return value if isinstance(value, int) else None
    return None


def elastic_job(job: TrainingJob, parallelism: int, pods: TrainerPods) -> ElasticJob:
    """The autoscaler's view of a (defaulted) TrainingJob."""
    trainer = job.spec.trainer
    requests = trainer.resources.requests if trainer.resources else None
    limits = trainer.resources.limits if trainer.resources else None
    demand = TrainerDemand(
        cpu_request=_amount(requests or {}, "cpu"),
        memory_request=_amount(requests or {}, "memory"),
        gpu_limit=gpu_amount(limits),
    )
    return ElasticJob(
        key=f"{job.namespace}/{job.name}",
        min_instance=trainer.min_instance,
        max_instance=trainer.max_instance or 0,
        parallelism=parallelism,
        trainer=demand,
        pods=pods,
    )


def simulated_pods(
    jobs: Sequence[tuple[TrainingJob, int]], nodes: Sequence[ClusterObject]
) -> list[ClusterObject]:
    """The pods the jobs would run (trainers at the given parallelism), each placed on
    the first node by name with room for its requests — Running there — or Pending."""
    room = cluster_resource(nodes).nodes
    cpu = {name: r.cpu_idle_milli for name, r in room.items()}
    memory = {name: r.memory_free_mega for name, r in room.items()}
    out: list[ClusterObject] = []
    for job, parallelism in jobs:
        for workload in FRAMEWORK.objects(job):
            if isinstance(workload, ReplicaSetPlan):
                count = int(workload.spec["replicas"])
            elif isinstance(workload, BatchJobPlan):
                count = parallelism
            else:
                continue
            spec, name = workload.spec, workload.name
            for index in range(count):
                pod: dict[str, Any] = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{name}-{index}",
                        "namespace": job.namespace,
                        "labels": dict(spec["template"]["metadata"]["labels"]),
                    },
                    "spec": dict(spec["template"]["spec"]),
                }
                requests = [_resource(c, "requests") for c in _containers(pod)]
                need_cpu = sum(milli(_amount(r, "cpu")) for r in requests)
                need_memory = sum(mega(_amount(r, "memory")) for r in requests)
                node = next((n for n in cpu if cpu[n] >= need_cpu and memory[n] >= need_memory), "")
                if node:
                    cpu[node] -= need_cpu
                    memory[node] -= need_memory
                    pod["spec"]["nodeName"] = node
                pod["status"] = {"phase": "Running" if node else "Pending"}
                out.append(ClusterObject(pod, f"(simulated) {job.namespace}/{name}-{index}"))
    return out
