"""Kubeflow Trainer v2 (v2.3.0): a job as a TrainJob and the ClusterTrainingRuntime it uses.

The ``trainer`` target. A framework converts its job into a :class:`TrainerPlan` — the
runtime's ML policy and replicated jobs (the pod templates, with the trainer container
named ``node``) and the node count — and this module writes the two objects
(kubeflow-operators.md §7):

* a ClusterTrainingRuntime ``<namespace>-<job>`` holding *how* the job runs: the ML
  policy, the JobSet template with the job's own pod templates (volumes, placement,
  service account, the container's image, command, env and resources), and the gang
  policy when the job asks for one (``trainjobs.gang``);
* a TrainJob ``<job>`` holding *how much*: ``runtimeRef``, ``trainer.numNodes`` (and
  ``numProcPerNode``), ``suspend`` and ``activeDeadlineSeconds`` from ``runPolicy``.

The Trainer controller then makes a JobSet and injects the rendezvous env
(``PET_*``, MPI hostfile) itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from trainjobs.frameworks.base import JobResource, KindRef, Manifest, PodTemplate, deep_copy
from trainjobs.k8s.names import shorten

__all__ = [
    "ANCESTOR_LABEL",
    "FRAMEWORK_LABEL",
    "NODE_CONTAINER",
    "RUNTIME_KIND",
    "TRAINER_PORT",
    "TRAINJOB_KIND",
    "ReplicatedJob",
    "TrainerPlan",
    "as_node",
    "runtime_name",
    "trainer_manifests",
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
VOLCANO_QUEUE_ANNOTATION: Final = "scheduling.volcano.sh/queue-name"


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


def runtime_name(job: JobResource) -> str:
    """``<namespace>-<job>``: unique in the cluster, as a ClusterTrainingRuntime must be."""
    return shorten(f"{job.namespace}-{job.name}", 253)


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


def _pod_group_policy(gang: str | None, policy: Mapping[str, Any]) -> dict[str, Any] | None:
    if gang == "volcano":
        return {"volcano": {}}
    if gang == "scheduler-plugins":
        timeout = policy.get("scheduleTimeoutSeconds")
        return {"coscheduling": {} if timeout is None else {"scheduleTimeoutSeconds": timeout}}
    return None


def trainer_manifests(
    job: JobResource,
    plan: TrainerPlan,
    *,
    gang: str | None = None,
    scheduling_policy: Mapping[str, Any] | None = None,
    suspend: bool | None = None,
    active_deadline_seconds: int | None = None,
    backoff_limit: int | None = None,
) -> list[Manifest]:
    """The ClusterTrainingRuntime and the TrainJob for ``job`` (defaulted).

    ``backoff_limit`` (``runPolicy.backoffLimit``) becomes each replicated Job's
    ``backoffLimit``: pod failures a node Job tolerates, where the v1 operators counted
    restarts over the whole job.
    """
    policy = scheduling_policy or {}
    replicated = []
    for rjob in plan.jobs:
        job_template: dict[str, Any] = {}
        if rjob.trainer:
            job_template["metadata"] = {"labels": {ANCESTOR_LABEL: "trainer"}}
        job_spec: dict[str, Any] = {} if backoff_limit is None else {"backoffLimit": backoff_limit}
        job_template["spec"] = {**job_spec, "template": deep_copy(rjob.template)}
        entry: dict[str, Any] = {"name": rjob.name}
        if rjob.depends_on:
            entry["dependsOn"] = [{"name": d, "status": "Ready"} for d in rjob.depends_on]
        entry["template"] = job_template
        replicated.append(entry)
    template: dict[str, Any] = {}
    if gang == "volcano" and policy.get("queue"):
        template["metadata"] = {"annotations": {VOLCANO_QUEUE_ANNOTATION: policy["queue"]}}
    template["spec"] = {**deep_copy(plan.jobset_spec), "replicatedJobs": replicated}
    runtime_spec: dict[str, Any] = {"mlPolicy": deep_copy(plan.ml_policy)}
    group_policy = _pod_group_policy(gang, policy)
    if group_policy is not None:
        runtime_spec["podGroupPolicy"] = group_policy
    runtime_spec["template"] = template
    runtime = {
        "apiVersion": API_VERSION,
        "kind": RUNTIME_KIND.kind,
        "metadata": {"name": runtime_name(job), "labels": {FRAMEWORK_LABEL: plan.framework}},
        "spec": runtime_spec,
    }
    metadata: dict[str, Any] = {"name": job.name, "namespace": job.namespace}
    if job.metadata.labels:
        metadata["labels"] = dict(job.metadata.labels)
    if job.metadata.annotations:
        metadata["annotations"] = dict(job.metadata.annotations)
    trainer: dict[str, Any] = {"numNodes": plan.num_nodes}
    if plan.num_proc_per_node is not None:
        trainer["numProcPerNode"] = plan.num_proc_per_node
    spec: dict[str, Any] = {
        "runtimeRef": {"name": runtime_name(job), "apiGroup": API_GROUP, "kind": RUNTIME_KIND.kind},
        "trainer": trainer,
    }
    if suspend:
        spec["suspend"] = True
    if active_deadline_seconds:
        spec["activeDeadlineSeconds"] = active_deadline_seconds
    trainjob = {
        "apiVersion": API_VERSION,
        "kind": TRAINJOB_KIND.kind,
        "metadata": metadata,
        "spec": spec,
    }
    return [runtime, trainjob]
