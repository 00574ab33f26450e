"""Capabilities a framework opts into beyond reading and planning its jobs.

A framework is its reader (``frameworks.base.Framework``: default, validate, plan, what
each target needs) plus the small capabilities it subclasses; a consumer asks
``isinstance(framework, Capability)`` and, where it has not opted in, applies the default
the capability's docstring states (``Definitions`` is the one held as an attribute:
``framework.definitions`` is None without it). The operator's rules a framework states
for a valid job (``Gang``, ``SuccessRule``, ``Addresses``; ``frameworks.base.operator_rules``
puts them on the plan as data) are declared in ``plan.operator_rules`` and re-exported
here. Trainer v2's runtime plugins are the model: one narrow interface
per concern.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import K8sModel
from trainjobs.plan.operator_rules import (
    Addresses,
    Gang,
    SuccessRule,
    run_policy_scheduling,
    training_operator_gang,
)

if TYPE_CHECKING:
    from trainjobs.plan.jobset import JobSetPlan
    from trainjobs.plan.trainer import TrainerPlan

__all__ = [
    "Addresses",
    "CarriesDefinitions",
    "Definitions",
    "Gang",
    "JobSetConversion",
    "SuccessRule",
    "TrainerConversion",
    "run_policy_scheduling",
    "training_operator_gang",
]


class Definitions(ABC):
    """Documents a framework's jobs refer to by name, which a job file or stack may
    declare beside them (Trainer v2's TrainingRuntime and ClusterTrainingRuntime). Their
    kinds are the framework's ``definition_kinds``; ``spec.load`` parses and checks each
    with this capability and hands them to the framework's :class:`CarriesDefinitions`.
    """

    @abstractmethod
    def model(self, kind: str) -> type[K8sModel]:
        """The model of the documents of ``kind``, one of the framework's
        ``definition_kinds``."""

    @abstractmethod
    def findings(self, definition: Any) -> list[Finding]:
        """The operator's rules for a declared definition, paths relative to its
        document."""

    @abstractmethod
    def uses(self, job: Any, definition: Any) -> bool:
        """Whether ``job`` refers to the declared ``definition``."""

    @abstractmethod
    def shipped(self) -> list[Manifest]:
        """The definitions the operator's own install ships (Trainer's built-in
        ClusterTrainingRuntimes), which an install of it in a stack renders."""


class CarriesDefinitions(ABC):
    """A framework whose jobs resolve references among definitions declared in the same
    render (Trainer runtimes), and whose operator target emits some of them beside the
    job. A framework with ``definition_kinds`` implements it; one without it resolves
    nothing declared and emits no definition (``spec.load``, ``Framework.target_input``).
    """

    @abstractmethod
    def with_definitions(self, definitions: Sequence[Any], carried: Sequence[Any] = ()) -> Self:
        """The framework that resolves a job's references among ``definitions`` (models
        of its ``definition_kinds`` declared in the same render) first, and whose
        operator target emits ``carried`` beside the job (each declared definition is
        carried by one job only)."""

    @abstractmethod
    def definition_manifests(self, job: Any) -> list[Manifest]:
        """The declared definitions the operator target emits with ``job`` (those
        :meth:`with_definitions` was given as carried)."""


class TrainerConversion(ABC):
    """A framework whose jobs convert to Kubeflow Trainer v2 (the ``trainer`` target).
    A framework listing ``trainer`` in its ``targets`` implements it; asking a framework
    without it for the ``trainer`` target is a programming error (``NotImplementedError``).
    """

    @abstractmethod
    def trainer_plan(self, job: Any) -> tuple[TrainerPlan | None, list[Finding]]:
        """The (defaulted) job for Kubeflow Trainer v2: its runtime's ML policy and pod
        templates, and the node count; or None and findings saying why it cannot be."""


class JobSetConversion(ABC):
    """A framework whose operator creates a JobSet (the ``jobset`` target, which the
    ``pods`` target then expands). A framework listing ``jobset`` in its ``targets``
    implements it; asking one without it is a programming error
    (``NotImplementedError``)."""

    @abstractmethod
    def jobset(self, job: Any) -> tuple[JobSetPlan | None, list[Finding]]:
        """What the (defaulted) job's operator creates on a JobSet cluster; or None and
        findings saying why it cannot be."""
