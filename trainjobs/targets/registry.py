"""The target registry: every target plugin, listed once, and the one entry point."""

from __future__ import annotations

from trainjobs.errors import Finding
from trainjobs.plan import JobPlan
from trainjobs.targets.base import Rendered, TargetPlugin, TargetSource
from trainjobs.targets.jobset import JobSetTarget
from trainjobs.targets.names import Target
from trainjobs.targets.operator import OperatorTarget
from trainjobs.targets.pods import PodsTarget
from trainjobs.targets.trainer import TrainerTarget

__all__ = ["PLUGINS", "expand"]

PLUGINS: dict[str, TargetPlugin] = {
    t.name: t for t in (OperatorTarget(), PodsTarget(), TrainerTarget(), JobSetTarget())
}
"""Each target of ``targets.names`` by its name."""


def expand(source: TargetSource, plan: JobPlan, target: Target) -> Rendered:
    """Manifests of the job of ``plan`` on ``target``, or a finding when its framework
    (``source``) lacks that target."""
    if target not in source.targets or target not in PLUGINS:
        supported = ", ".join(t for t in source.targets if t in PLUGINS)
        return [], [
            Finding(
                code="target.unsupported",
                path="trainjobs.target",
                message=f"{source.kind.kind} cannot be rendered to target {target!r}",
                value=target,
                hint=f"use one of: {supported}",
            )
        ]
    return PLUGINS[target].render(source, plan)
