"""The ``operator`` target: the custom resource its operator consumes (and the
definitions declared beside it that it carries, e.g. a Trainer runtime)."""

from __future__ import annotations

from trainjobs.plan import JobPlan
from trainjobs.targets.base import Rendered, TargetPlugin, stated

__all__ = ["OperatorTarget"]


class OperatorTarget(TargetPlugin):
    name = "operator"
    description = "the custom resource its operator consumes, defaults made explicit"

    def render(self, plan: JobPlan) -> Rendered:
        # Definitions declared beside the job (a Trainer runtime) come with the first
        # job that uses them, so two jobs sharing one never emit it twice.
        given = stated(plan, self.name)
        if given.resource is None:
            return [], list(given.findings)
        return [*given.definitions, given.resource], list(given.findings)
