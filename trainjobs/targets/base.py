"""The target contract and the two built-in targets."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from trainjobs.errors import Finding
from trainjobs.frameworks.base import JobResource, Manifest
from trainjobs.spec.entry import JobEntry, Target

__all__ = ["TARGETS", "OperatorTarget", "PodsTarget", "TargetPlugin", "expand"]


class TargetPlugin(ABC):
    """Turns one defaulted job into manifests."""

    name: ClassVar[Target]
    description: ClassVar[str]

    @abstractmethod
    def manifests(self, entry: JobEntry, job: JobResource) -> list[Manifest]:
        """The objects for ``job`` (already defaulted by its framework)."""


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


TARGETS: dict[str, TargetPlugin] = {t.name: t for t in (OperatorTarget(), PodsTarget())}


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
    return TARGETS[target].manifests(entry, job), []
