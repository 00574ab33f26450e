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

from collections.abc import Mapping
from typing import Any

from trainjobs.errors import Rule, Severity
from trainjobs.k8s.data import Manifest, deep_copy
from trainjobs.k8s.names import shorten
from trainjobs.plan import JobPlan
from trainjobs.plan.trainer import (
    ANCESTOR_LABEL,
    API_GROUP,
    API_VERSION,
    FRAMEWORK_LABEL,
    RUNTIME_KIND,
    TRAINJOB_KIND,
    VOLCANO_QUEUE_ANNOTATION,
    TrainerPlan,
)
from trainjobs.targets.base import Rendered, TargetPlugin, stated

__all__ = ["TrainerTarget", "runtime_name", "trainer_manifests"]


def runtime_name(plan: JobPlan) -> str:
    """``<namespace>-<job>``: unique in the cluster, as a ClusterTrainingRuntime must be."""
    return shorten(f"{plan.namespace}-{plan.name}", 253)


def _pod_group_policy(gang: str | None, policy: Mapping[str, Any]) -> dict[str, Any] | None:
    if gang == "volcano":
        return {"volcano": {}}
    if gang == "scheduler-plugins":
        timeout = policy.get("scheduleTimeoutSeconds")
        return {"coscheduling": {} if timeout is None else {"scheduleTimeoutSeconds": timeout}}
    return None


def trainer_manifests(
    plan: JobPlan, trainer: TrainerPlan, gang: str | None = None
) -> list[Manifest]:
    """The ClusterTrainingRuntime and the TrainJob for the job of ``plan``.

    ``backoff_limit`` (``runPolicy.backoffLimit``) becomes each replicated Job's
    ``backoffLimit``: pod failures a node Job tolerates, where the v1 operators counted
    restarts over the whole job.
    """
    policy = plan.scheduling_policy or {}
    backoff_limit = plan.run_policy.backoff_limit
    replicated = []
    for rjob in trainer.jobs:
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
    template["spec"] = {**deep_copy(trainer.jobset_spec), "replicatedJobs": replicated}
    runtime_spec: dict[str, Any] = {"mlPolicy": deep_copy(trainer.ml_policy)}
    group_policy = _pod_group_policy(gang, policy)
    if group_policy is not None:
        runtime_spec["podGroupPolicy"] = group_policy
    runtime_spec["template"] = template
    runtime = {
        "apiVersion": API_VERSION,
        "kind": RUNTIME_KIND.kind,
        "metadata": {"name": runtime_name(plan), "labels": {FRAMEWORK_LABEL: trainer.framework}},
        "spec": runtime_spec,
    }
    metadata: dict[str, Any] = {"name": plan.name, "namespace": plan.namespace}
    if plan.labels:
        metadata["labels"] = dict(plan.labels)
    if plan.annotations:
        metadata["annotations"] = dict(plan.annotations)
    nodes: dict[str, Any] = {"numNodes": trainer.num_nodes}
    if trainer.num_proc_per_node is not None:
        nodes["numProcPerNode"] = trainer.num_proc_per_node
    spec: dict[str, Any] = {
        "runtimeRef": {
            "name": runtime_name(plan),
            "apiGroup": API_GROUP,
            "kind": RUNTIME_KIND.kind,
        },
        "trainer": nodes,
    }
    if plan.run_policy.suspend:
        spec["suspend"] = True
    if plan.run_policy.active_deadline_seconds:
        spec["activeDeadlineSeconds"] = plan.run_policy.active_deadline_seconds
    trainjob = {
        "apiVersion": API_VERSION,
        "kind": TRAINJOB_KIND.kind,
        "metadata": metadata,
        "spec": spec,
    }
    return [runtime, trainjob]


TTL = Rule(
    "trainer.ttl",
    "a TrainJob is not deleted after it finishes; Trainer v2.3 has no such setting",
    hint="remove ttlSecondsAfterFinished, or delete finished TrainJobs yourself",
    severity=Severity.ADVICE,
)


class TrainerTarget(TargetPlugin):
    name = "trainer"
    description = "a Kubeflow Trainer v2 TrainJob and the ClusterTrainingRuntime it uses"

    def render(self, plan: JobPlan) -> Rendered:
        given = stated(plan, self.name)
        trainer, findings = given.trainer, list(given.findings)
        if trainer is None:
            return [], findings
        objects = trainer_manifests(plan, trainer, gang=plan.gang_mechanism)
        ttl = plan.run_policy.ttl_seconds_after_finished
        if ttl is not None:
            findings = [*findings, TTL.at("spec.runPolicy.ttlSecondsAfterFinished", ttl)]
        return objects, findings
