"""The target contract: one job's plan in, the objects of one output shape out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.plan import JobPlan
from trainjobs.plan.target_input import TargetInput
from trainjobs.targets.names import Target

__all__ = ["Rendered", "TargetPlugin", "stated"]

Rendered = tuple[list[Manifest], list[Finding]]
"""What a target makes of one job: its objects, and findings for what it cannot express."""


def stated(plan: JobPlan, target: str) -> TargetInput:
    """What the job's framework stated for ``target`` (``JobPlan.target_input``)."""
    found = plan.target_input
    if found is None or found.target != target:
        said = "nothing" if found is None else f"the {found.target} target's input"
        raise ValueError(f"the plan of {plan.kind.kind} {plan.name} carries {said}, not {target}'s")
    return found


class TargetPlugin(ABC):
    """Turns one job's plan (defaulted, every capability applied, the framework's
    :class:`TargetInput` for this target on it) into manifests.

    A target is the only place that knows its output's shape; it reads the plan alone
    and imports no framework (``.importlinter``).
    """

    name: ClassVar[Target]
    description: ClassVar[str]
    takes_over: ClassVar[bool] = False
    """True when the target declares objects a controller of another target makes,
    under the names that controller gives them (``render.switch``); default False."""

    @abstractmethod
    def render(self, plan: JobPlan) -> Rendered:
        """The objects, and findings for what the target cannot express; paths relative
        to the job."""
