"""Capabilities a framework opts into beyond reading and planning its jobs.

A framework is its reader (``frameworks.base.Framework``: default, validate, plan, what
each target needs) plus the small capabilities it names; a consumer asks the framework
for one and finds None where it has not opted in. Trainer v2's runtime plugins are the
model: one narrow interface per concern.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import K8sModel

__all__ = ["Definitions"]


class Definitions(ABC):
    """Documents a framework's jobs refer to by name, which a job file or stack may
    declare beside them (Trainer v2's TrainingRuntime and ClusterTrainingRuntime). Their
    kinds are the framework's ``definition_kinds``; ``spec.load`` parses and checks each
    with this capability and hands them to ``Framework.with_definitions``.
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
