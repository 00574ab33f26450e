"""The pods target's objects for one (defaulted) job, as tests read them."""

from __future__ import annotations

from typing import Any

from trainjobs.frameworks.base import Framework
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import JobResource
from trainjobs.targets.pods import pod_objects


def expand_pods(framework: Framework[Any], job: JobResource) -> list[Manifest]:
    """What the operator would create for the defaulted ``job``, as the ``pods``
    target renders it (without its refusals)."""
    return pod_objects(framework.expansion(job), framework.plan(job))
