"""The ``operator`` target: the custom resource its operator consumes (and the
definitions declared beside it that it carries, e.g. a Trainer runtime)."""

from __future__ import annotations

from trainjobs.plan import JobPlan
from trainjobs.targets.base import Rendered, TargetPlugin, TargetSource

__all__ = ["OperatorTarget"]


class OperatorTarget(TargetPlugin):
    name = "operator"
    description = "the custom resource its operator consumes, defaults made explicit"

    def render(self, source: TargetSource, plan: JobPlan) -> Rendered:
        # Definitions declared beside the job (a Trainer runtime) come with the first
        # job that uses them, so two jobs sharing one never emit it twice.
        carried = source.definition_manifests(plan.resource)
        return [*carried, source.operator_manifest(plan.resource)], []
