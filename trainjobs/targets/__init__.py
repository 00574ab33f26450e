"""Targets: how a job's plan becomes Kubernetes objects.

``operator`` emits the custom resource its operator consumes; ``pods`` the Pods,
Services and Jobs the operator would have created, so no operator is needed;
``trainer`` a Kubeflow Trainer v2 TrainJob and its runtime; ``jobset`` the JobSet the
Trainer controller would make of a TrainJob. One module each.
"""

from __future__ import annotations

from typing import Any

from trainjobs.errors import Finding
from trainjobs.frameworks.base import Framework
from trainjobs.plan import JobPlan
from trainjobs.spec.entry import JobEntry, Target
from trainjobs.targets.base import Rendered, TargetPlugin
from trainjobs.targets.jobset import JobSetTarget
from trainjobs.targets.operator import OperatorTarget
from trainjobs.targets.pods import PodsTarget
from trainjobs.targets.trainer import TrainerTarget

__all__ = ["TARGETS", "TargetPlugin", "expand"]

TARGETS: dict[str, TargetPlugin] = {
    t.name: t for t in (OperatorTarget(), PodsTarget(), TrainerTarget(), JobSetTarget())
}


def expand(entry: JobEntry, framework: Framework[Any], plan: JobPlan, target: Target) -> Rendered:
    """Manifests of the job of ``plan`` on ``target``, or a finding when its framework
    lacks that target."""
    if target not in framework.targets or target not in TARGETS:
        supported = ", ".join(t for t in framework.targets if t in TARGETS)
        return [], [
            Finding(
                code="target.unsupported",
                path="trainjobs.target",
                message=f"{framework.kind.kind} cannot be rendered to target {target!r}",
                value=target,
                hint=f"use one of: {supported}",
            )
        ]
    return TARGETS[target].render(entry, framework, plan)
