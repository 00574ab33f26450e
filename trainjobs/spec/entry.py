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

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, field_validator

from trainjobs.errors import Finding, Rule
from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.model import JobResource, K8sModel
from trainjobs.platform.base import PlatformKind, PlatformResource, Reference
from trainjobs.platform.gang import GangMechanism
from trainjobs.targets.names import DEFAULT_TARGET, TARGETS, Target

__all__ = [
    "OPTIONS_KEY",
    "TARGETS",
    "DefinitionEntry",
    "JobEntry",
    "JobOptions",
    "PlatformEntry",
    "Registration",
    "Target",
    "Wait",
]

Wait = Literal["none", "running", "succeeded"]
Registration = Literal["objects", "pod-set"]
OPTIONS_KEY = "trainjobs"
"""The key beside apiVersion/kind/metadata/spec that holds a job's trainjobs options."""


class JobOptions(K8sModel):
    """trainjobs' own choices for one job."""

    target: Target | None = Field(
        default=None,
        description=(
            "operator: emit the custom resource for its operator. pods: emit the Pods and "
            "Services the operator would create, no operator needed. trainer: a Kubeflow "
            "Trainer v2 TrainJob and the ClusterTrainingRuntime it uses (PyTorch, MPI). "
            "Default: the stack's target, else operator."
        ),
    )
    backend: str | None = Field(
        default=None,
        description=(
            "Name of a backend in the stack (RedisBackend, NfsBackend …) the job's pods "
            "rendezvous through; 'namespace/name' picks among namespaces. Default none."
        ),
    )
    node_pool: str | dict[str, str] | None = Field(
        default=None,
        description=(
            "Node pool the job's GPU replicas run on: one pool name for all of them, or a "
            "map of replica type to pool (e.g. {Worker: a100, PS: cpu}). Default none."
        ),
    )
    queue: str | None = Field(
        default=None, description="Name of a queue in the stack the job is admitted through."
    )
    gang: GangMechanism | None = Field(
        default=None,
        description=(
            "Gang scheduling: volcano (a Volcano PodGroup, pods scheduled by 'volcano') or "
            "scheduler-plugins (a coscheduling PodGroup). On the pods target trainjobs "
            "creates the PodGroup; on the operator target the operator does, if installed "
            "with gang scheduling. Default: the mechanism of the stack's operator for this "
            "kind, else none; inputs come from spec.runPolicy.schedulingPolicy."
        ),
    )
    wait: Wait = Field(
        default="none",
        description=(
            "How long `pulumi up` waits for the job. none (default): until its objects "
            "exist — a pod may wait hours for a GPU node without failing the update. "
            "running: until its pods run (or its custom resource reports Running). "
            "succeeded: until its custom resource reports Succeeded (operator target)."
        ),
    )
    wait_timeout: str | None = Field(
        default=None,
        description="How long to wait when wait is running or succeeded, e.g. 90m; default 60m.",
    )
    network_policy: bool = Field(
        default=True,
        description=(
            "true (default): servers inside the job that answer without a password (the "
            "PaddlePaddle EDL master pod's etcd and task master) get a NetworkPolicy that "
            "admits only the job's own pods. false: none; any pod that can reach them may "
            "connect. Kinds with no such server ignore it."
        ),
    )
    registration: Registration = Field(
        default="objects",
        description=(
            "How `pulumi up` records the job's objects in Pulumi's state. objects "
            "(default): each object is its own Pulumi resource, applied by the Kubernetes "
            "provider. pod-set (pods target only): the job's Pods and Services are one "
            "resource, applied by server-side apply many at a time, and `pulumi preview "
            "--diff` lists the objects that change; far fewer engine steps for a big job."
        ),
    )
    ignore: list[str] | None = Field(
        default=None,
        description=(
            "Check rules silenced for this job: rule codes or dotted prefixes, e.g. "
            "[image.unpinned, pss.baseline.capabilities]; `trainjobs check --list-rules` "
            "lists them. The job's objects carry them in the annotation "
            "trainjobs.dev/ignore-checks, so the policy pack honours them too. Default none."
        ),
    )

    @field_validator("wait_timeout")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[1-9][0-9]*[smh]", value):
            raise ValueError("must be a whole number of s, m or h; fix: write e.g. 90m or 2h")
        return value


@dataclass(frozen=True)
class JobEntry:
    """One job ready to render.

    Attributes:
        job: the upstream custom resource, as the user wrote it.
        framework: the plugin that knows its kind.
        options: trainjobs' options for it.
        path: where it sits in the input (``jobs[0]``), prefix of every finding.
        source: the file it came from, or ``""`` for the Python API.
        after: ``namespace/name`` of the jobs that carry a definition this job uses (a
            Trainer runtime emitted with the first TrainJob that uses it): on the
            operator target this job is applied after them. Default none.
        option_sources: each option (as written, ``queue``) that the entry naming the
            job's file set beside its ``file:``, not the job itself, with the file
            holding that entry (the stack): a finding about the option names that
            file, where the user wrote it. Default none: every option is the job's own.
    """

    job: JobResource
    framework: Framework[Any]
    options: JobOptions = field(default_factory=JobOptions)
    path: str = "jobs[0]"
    source: str = ""
    after: tuple[str, ...] = ()
    option_sources: tuple[tuple[str, str], ...] = ()

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

    def source_of(self, path: str) -> str:
        """The file where the field at ``path`` (``jobs[0].trainjobs.queue``) was written:
        the stack for an option given beside ``file:``, else the job's own file."""
        for key, source in self.option_sources:
            option = f"{self.path}.{OPTIONS_KEY}.{key}"
            if path == option or path.startswith((f"{option}.", f"{option}[")):
                return source
        return self.source

    def target(self, default: Target = DEFAULT_TARGET) -> Target:
        return self.options.target or default

    def references(self) -> list[Reference]:
        """The platform resources the job's options name, with their input paths."""
        base = f"{self.path}.{OPTIONS_KEY}"
        refs: list[Reference] = []
        if self.options.backend is not None:
            refs.append(Reference("backend", self.options.backend, f"{base}.backend"))
        pools = self.options.node_pool
        if isinstance(pools, str):
            refs.append(Reference("nodePool", pools, f"{base}.nodePool"))
        elif pools:
            for role, pool in pools.items():
                refs.append(Reference("nodePool", pool, f"{base}.nodePool.{role}", (role,)))
        if self.options.queue is not None:
            refs.append(Reference("queue", self.options.queue, f"{base}.queue"))
        return refs


@dataclass(frozen=True)
class DefinitionEntry:
    """A document a job refers to by name, declared beside it (a Trainer runtime).

    Attributes:
        resource: its model, as the user wrote it.
        framework: the framework whose ``definition_kinds`` include its kind.
        path: where it sits in the input (``jobs[0]``), prefix of every finding.
        source: the file it came from, or ``""``.
    """

    resource: Any
    framework: Framework[Any]
    path: str
    source: str = ""

    def finding(self, rule: Rule, field: str, value: Any, **params: Any) -> Finding:
        """``rule`` at ``field`` of this document, in its file; ``{kind}`` is its kind."""
        at = rule.at(f"{self.path}.{field}", value, kind=self.resource.kind, **params)
        return at.located(self.source)


@dataclass(frozen=True)
class PlatformEntry:
    """One platform resource (backend, node pool, queue, operator) ready to render.

    Attributes:
        resource: the document, as the user wrote it.
        plugin: the platform kind that renders it.
        path: where it sits in the input (``backends[0]``), prefix of every finding.
        source: the file it came from, or ``""`` for the Python API.
    """

    resource: PlatformResource
    plugin: PlatformKind
    path: str
    source: str = ""

    @property
    def key(self) -> str:
        """``namespace/name`` (or ``name`` for cluster-wide kinds): unique per category."""
        namespace = self.plugin.namespace(self.resource)
        return f"{namespace}/{self.resource.name}" if namespace else self.resource.name
