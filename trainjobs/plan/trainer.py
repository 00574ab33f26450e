"""Kubeflow Trainer v2 (v2.3.0) vocabulary: what a framework states so that its job can
run as a TrainJob (the ``trainer`` target), and the names the Trainer uses
(kubeflow-operators.md §7)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from trainjobs.k8s.data import PodTemplate, deep_copy
from trainjobs.k8s.kinds import KindRef
from trainjobs.plan.gang import QUEUE_ANNOTATION

__all__ = [
    "ANCESTOR_LABEL",
    "API_GROUP",
    "API_VERSION",
    "FRAMEWORK_LABEL",
    "NODE_CONTAINER",
    "RUNTIME_KIND",
    "TRAINER_PORT",
    "TRAINJOB_KIND",
    "VOLCANO_QUEUE_ANNOTATION",
    "ReplicatedJob",
    "TrainerPlan",
    "as_node",
]

API_GROUP: Final = "trainer.kubeflow.org"
API_VERSION: Final = f"{API_GROUP}/v1alpha1"
TRAINJOB_KIND = KindRef(API_VERSION, "TrainJob", "trainjobs")
RUNTIME_KIND = KindRef(API_VERSION, "ClusterTrainingRuntime", "clustertrainingruntimes")
ANCESTOR_LABEL: Final = f"{API_GROUP}/trainjob-ancestor-step"
FRAMEWORK_LABEL: Final = f"{API_GROUP}/framework"
NODE_CONTAINER: Final = "node"
"""The container of the trainer job the controller configures."""
TRAINER_PORT: Final = 29500
"""The rendezvous port the controller injects (PET_MASTER_PORT, JAX coordinator …)."""
VOLCANO_QUEUE_ANNOTATION: Final = QUEUE_ANNOTATION


@dataclass(frozen=True)
class ReplicatedJob:
    """One replicated job of the runtime's JobSet template.

    Attributes:
        name: ``node``, ``launcher`` …
        template: the pod template its pods are made from.
        trainer: whether it carries the ancestor label ``trainer`` (the controller puts
            ``trainer.*`` into its ``node`` container).
        depends_on: replicated jobs that must be Ready first (JobSet ``dependsOn``).
    """

    name: str
    template: PodTemplate
    trainer: bool = False
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class TrainerPlan:
    """A job converted for Trainer v2 by its framework.

    Attributes:
        framework: the runtime's ``trainer.kubeflow.org/framework`` label (``torch`` …).
        ml_policy: ``spec.mlPolicy`` of the runtime, ``numNodes`` included.
        jobs: the replicated jobs of the JobSet template.
        num_nodes: ``trainer.numNodes`` of the TrainJob.
        num_proc_per_node: ``trainer.numProcPerNode``; None leaves the runtime's choice.
        jobset_spec: further JobSet spec fields (``network``, ``successPolicy``).
    """

    framework: str
    ml_policy: Mapping[str, Any]
    jobs: Sequence[ReplicatedJob]
    num_nodes: int
    num_proc_per_node: int | None = None
    jobset_spec: Mapping[str, Any] = field(default_factory=dict)


def as_node(template: Mapping[str, Any], container: str, drop_port: str = "") -> PodTemplate:
    """A pod template whose container ``container`` is renamed ``node`` (what the
    controller configures), without the port named ``drop_port`` (a v1 operator's
    rendezvous port, which Trainer replaces with its own)."""
    out = deep_copy(template)
    for entry in (out.get("spec") or {}).get("containers") or []:
        if entry.get("name") != container:
            continue
        entry["name"] = NODE_CONTAINER
        ports = [p for p in entry.get("ports") or [] if p.get("name") != drop_port]
        if ports:
            entry["ports"] = ports
        else:
            entry.pop("ports", None)
    return out
