"""The target contract and the built-in targets: operator, pods, trainer."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from trainjobs.errors import Finding, Severity
from trainjobs.frameworks.base import JobResource, Manifest
from trainjobs.frameworks.trainer_v2 import trainer_manifests
from trainjobs.spec.entry import JobEntry, Target

__all__ = ["TARGETS", "OperatorTarget", "PodsTarget", "TargetPlugin", "TrainerTarget", "expand"]


class TargetPlugin(ABC):
    """Turns one defaulted job into manifests."""

    name: ClassVar[Target]
    description: ClassVar[str]

    @abstractmethod
    def manifests(self, entry: JobEntry, job: JobResource) -> list[Manifest]:
        """The objects for ``job`` (already defaulted by its framework)."""

    def render(self, entry: JobEntry, job: JobResource) -> tuple[list[Manifest], list[Finding]]:
        """The objects, and findings for what the target cannot express; paths relative
        to the job."""
        return self.manifests(entry, job), []


class OperatorTarget(TargetPlugin):
    name = "operator"
    description = "the custom resource its operator consumes, defaults made explicit"

    def manifests(self, entry: JobEntry, job: JobResource) -> list[Manifest]:
        return [entry.framework.operator_manifest(job)]


class PodsTarget(TargetPlugin):
    name = "pods"
    description = "the Pods and Services the operator would create; no operator needed"

    def manifests(self, entry: JobEntry, job: JobResource) -> list[Manifest]:
        return entry.framework.expand_pods(job)

    def render(self, entry: JobEntry, job: JobResource) -> tuple[list[Manifest], list[Finding]]:
        findings = entry.framework.pods_findings(job)
        if any(f.severity is Severity.ERROR for f in findings):
            return [], findings
        return self.manifests(entry, job), findings


class TrainerTarget(TargetPlugin):
    name = "trainer"
    description = "a Kubeflow Trainer v2 TrainJob and the ClusterTrainingRuntime it uses"

    def manifests(self, entry: JobEntry, job: JobResource) -> list[Manifest]:
        return self.render(entry, job)[0]

    def render(self, entry: JobEntry, job: JobResource) -> tuple[list[Manifest], list[Finding]]:
        framework = entry.framework
        plan, findings = framework.trainer_plan(job)
        if plan is None:
            return [], findings
        run_policy = getattr(getattr(job, "spec", None), "run_policy", None)
        objects = trainer_manifests(
            job,
            plan,
            gang=entry.options.gang,
            scheduling_policy=framework.scheduling_policy(job),
            suspend=getattr(run_policy, "suspend", None),
            active_deadline_seconds=getattr(run_policy, "active_deadline_seconds", None),
            backoff_limit=getattr(run_policy, "backoff_limit", None),
        )
        ttl = getattr(run_policy, "ttl_seconds_after_finished", None)
        if ttl is not None:
            findings = [
                *findings,
                Finding(
                    code="trainer.ttl",
                    path="spec.runPolicy.ttlSecondsAfterFinished",
                    message="a TrainJob is not deleted after it finishes; Trainer v2.3 has no "
                    "such setting",
                    value=ttl,
                    hint="remove ttlSecondsAfterFinished, or delete finished TrainJobs yourself",
                    severity=Severity.ADVICE,
                ),
            ]
        return objects, findings


TARGETS: dict[str, TargetPlugin] = {
    t.name: t for t in (OperatorTarget(), PodsTarget(), TrainerTarget())
}


def expand(
    entry: JobEntry, job: JobResource, target: Target
) -> tuple[list[Manifest], list[Finding]]:
    """Manifests of ``job`` on ``target``, or a finding when the framework lacks that target."""
    if target not in entry.framework.targets or target not in TARGETS:
        supported = ", ".join(t for t in entry.framework.targets if t in TARGETS)
        return [], [
            Finding(
                code="target.unsupported",
                path="trainjobs.target",
                message=f"{entry.framework.kind.kind} cannot be rendered to target {target!r}",
                value=target,
                hint=f"use one of: {supported}",
            )
        ]
    return TARGETS[target].render(entry, job)
