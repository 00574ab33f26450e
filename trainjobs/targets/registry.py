"""The target registry: every target plugin, listed once, and the one entry point."""

from __future__ import annotations

from trainjobs.errors import Finding
from trainjobs.plan import JobPlan
from trainjobs.targets.base import Rendered, TargetPlugin
from trainjobs.targets.jobset import JobSetTarget
from trainjobs.targets.names import Target
from trainjobs.targets.operator import OperatorTarget
from trainjobs.targets.pods import PodsTarget
from trainjobs.targets.trainer import TrainerTarget

__all__ = ["PLUGINS", "expand", "supports"]

PLUGINS: dict[str, TargetPlugin] = {
    t.name: t for t in (OperatorTarget(), PodsTarget(), TrainerTarget(), JobSetTarget())
}
"""Each target of ``targets.names`` by its name."""


def expand(plan: JobPlan, target: Target) -> Rendered:
    """Manifests of the job of ``plan`` on ``target`` (what its framework stated for
    that target on the plan), or a finding when its framework lacks that target."""
    if not supports(plan, target):
        supported = ", ".join(t for t in plan.targets if t in PLUGINS)
        return [], [
            Finding(
                code="target.unsupported",
                path="trainjobs.target",
                message=f"{plan.kind.kind} cannot be rendered to target {target!r}",
                value=target,
                hint=f"use one of: {supported}",
            )
        ]
    return PLUGINS[target].render(plan)


def supports(plan: JobPlan, target: str) -> bool:
    """Whether the job of ``plan`` renders to ``target``: its framework lists it."""
    return target in plan.targets and target in PLUGINS
