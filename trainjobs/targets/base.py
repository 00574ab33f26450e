"""The target contract: one job's plan in, the objects of one output shape out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from trainjobs.errors import Finding
from trainjobs.frameworks.base import Framework
from trainjobs.k8s.data import Manifest
from trainjobs.plan import JobPlan
from trainjobs.spec.entry import JobEntry, Target

__all__ = ["Rendered", "TargetPlugin"]

Rendered = tuple[list[Manifest], list[Finding]]
"""What a target makes of one job: its objects, and findings for what it cannot express."""


class TargetPlugin(ABC):
    """Turns one job's plan (defaulted, every capability applied) into manifests.

    A target is the only place that knows its output's shape; it reads the plan and
    asks the job's framework only what its operator creates (``expansion``).
    """

    name: ClassVar[Target]
    description: ClassVar[str]

    @abstractmethod
    def render(self, entry: JobEntry, framework: Framework[Any], plan: JobPlan) -> Rendered:
        """The objects, and findings for what the target cannot express; paths relative
        to the job."""
