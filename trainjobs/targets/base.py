"""The target contract: one job's plan in, the objects of one output shape out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.kinds import KindRef
from trainjobs.plan import JobPlan
from trainjobs.plan.expansion import Expansion
from trainjobs.targets.names import Target

if TYPE_CHECKING:
    from trainjobs.plan.jobset import JobSetPlan
    from trainjobs.plan.trainer import TrainerPlan

__all__ = ["Rendered", "TargetPlugin", "TargetSource"]

Rendered = tuple[list[Manifest], list[Finding]]
"""What a target makes of one job: its objects, and findings for what it cannot express."""


class TargetSource(Protocol):
    """What a target asks of the job's framework beyond the plan: what its operator
    creates. Every ``Framework`` is one; targets name no framework module (the layers
    keep ``targets`` below ``frameworks``)."""

    @property
    def kind(self) -> KindRef:
        """The custom resource kind the framework reads."""
        ...

    @property
    def targets(self) -> tuple[str, ...]:
        """The targets the framework renders to."""
        ...

    def operator_manifest(self, job: Any, /) -> Manifest:
        """The custom resource the operator consumes."""
        ...

    def definition_manifests(self, job: Any, /) -> list[Manifest]:
        """The declared definitions the operator target emits with the job."""
        ...

    def expansion(self, job: Any, /) -> Expansion:
        """What the operator would create for the job (the ``pods`` target)."""
        ...

    def pods_findings(self, job: Any, /) -> list[Finding]:
        """What the ``pods`` target cannot do as the operator would."""
        ...

    def trainer_plan(self, job: Any, /) -> tuple[TrainerPlan | None, list[Finding]]:
        """The job for Kubeflow Trainer v2 (the ``trainer`` target)."""
        ...

    def jobset(self, job: Any, /) -> tuple[JobSetPlan | None, list[Finding]]:
        """What the Trainer controller creates (the ``jobset`` target), or None and
        findings saying why it cannot."""
        ...


class TargetPlugin(ABC):
    """Turns one job's plan (defaulted, every capability applied) into manifests.

    A target is the only place that knows its output's shape; it reads the plan and
    asks the job's framework only what its operator creates (:class:`TargetSource`).
    """

    name: ClassVar[Target]
    description: ClassVar[str]
    takes_over: ClassVar[bool] = False
    """True when the target declares objects a controller of another target makes,
    under the names that controller gives them (``render.switch``); default False."""

    @abstractmethod
    def render(self, source: TargetSource, plan: JobPlan) -> Rendered:
        """The objects, and findings for what the target cannot express; paths relative
        to the job."""
