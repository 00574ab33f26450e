"""A job as trainjobs sees it: the upstream custom resource plus trainjobs' own options.

The options live *beside* the upstream object under the key ``trainjobs`` —
never inside ``spec`` — so any TFJob or PyTorchJob file is valid input as it is::

    apiVersion: kubeflow.org/v1
    kind: TFJob
    metadata: {name: mnist}
    spec: {...}
    trainjobs:
      target: pods
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from trainjobs.frameworks.base import Framework, JobResource, K8sModel
from trainjobs.frameworks.registry import REGISTRY

__all__ = ["OPTIONS_KEY", "TARGETS", "JobEntry", "JobOptions", "Target"]

Target = Literal["operator", "pods"]
TARGETS: tuple[Target, ...] = ("operator", "pods")
OPTIONS_KEY = "trainjobs"
"""The key beside apiVersion/kind/metadata/spec that holds a job's trainjobs options."""


class JobOptions(K8sModel):
    """trainjobs' own choices for one job."""

    target: Target | None = Field(
        default=None,
        description=(
            "operator: emit the custom resource for its operator. pods: emit the Pods and "
            "Services the operator would create, no operator needed. Default: the stack's "
            "target, else operator."
        ),
    )


@dataclass(frozen=True)
class JobEntry:
    """One job ready to render.

    Attributes:
        job: the upstream custom resource, as the user wrote it.
        framework: the plugin that knows its kind.
        options: trainjobs' options for it.
        path: where it sits in the input (``jobs[0]``), prefix of every finding.
        source: the file it came from, or ``""`` for the Python API.
    """

    job: JobResource
    framework: Framework
    options: JobOptions = field(default_factory=JobOptions)
    path: str = "jobs[0]"
    source: str = ""

    @classmethod
    def of(
        cls,
        job: JobResource,
        *,
        target: Target | None = None,
        path: str = "jobs[0]",
    ) -> JobEntry:
        """Wrap a typed job from the Python API: ``JobEntry.of(tfjob, target="pods")``."""
        framework = REGISTRY.by_kind(job.api_version, job.kind)
        if framework is None:
            raise ValueError(f"no framework handles {job.api_version} {job.kind}")
        return cls(job=job, framework=framework, options=JobOptions(target=target), path=path)

    def target(self, default: Target = "operator") -> Target:
        return self.options.target or default
