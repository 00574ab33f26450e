"""What a render produces: objects, grouped into units that depend on each other."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import JobResource
from trainjobs.plan import JobPlan
from trainjobs.platform.base import Category
from trainjobs.render.lifecycle import DEFAULT as DEFAULT_LIFECYCLE
from trainjobs.render.lifecycle import Lifecycle
from trainjobs.spec.entry import JobEntry, Target

__all__ = ["RenderedJob", "RenderedObject", "RenderedUnit", "Rendering", "UnitCategory", "UnitRef"]

UnitCategory = Category | Literal["job", "namespace"]


@dataclass(frozen=True)
class RenderedObject:
    """One manifest and where it came from.

    Attributes:
        manifest: the plain Kubernetes object.
        origin: the path of the job or platform resource in the input that produced
            it (``jobs[0]``, ``backends[1]``).
        source: the input file.
        job: the name of the job (or platform resource) it belongs to.
        lifecycle: how long ``pulumi up`` waits for it (applied by the components).
    """

    manifest: Manifest
    origin: str
    source: str = ""
    job: str = ""
    lifecycle: Lifecycle = DEFAULT_LIFECYCLE

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """(apiVersion group, kind, namespace, name): what must be unique in a stack."""
        meta = self.manifest.get("metadata") or {}
        group = str(self.manifest.get("apiVersion", "")).rpartition("/")[0]
        return (
            group,
            str(self.manifest.get("kind")),
            str(meta.get("namespace", "")),
            str(meta.get("name")),
        )

    @property
    def title(self) -> str:
        """``Kind namespace/name`` for messages."""
        _, kind, ns, name = self.identity
        return f"{kind} {ns + '/' if ns else ''}{name}"


@dataclass(frozen=True, order=True)
class UnitRef:
    """Names one unit of a stack: ``job training/mnist``, ``backend training/redis`` …"""

    category: UnitCategory
    name: str

    def __str__(self) -> str:
        return f"{self.category} {self.name}"


@dataclass(frozen=True, kw_only=True)
class RenderedUnit:
    """One thing a stack declares — a job, a backend, a node pool, a queue, an operator,
    a namespace — with its objects and the units it must come after.

    Attributes:
        ref: which unit this is.
        kind: the document kind (``TFJob``, ``RedisBackend`` …; ``Namespace``).
        objects: its objects, in apply order.
        depends_on: units whose objects must exist before this unit's are applied.
        outputs: values a user needs from outside (addresses …).
        origin: its path in the input.
        source: the input file.
    """

    ref: UnitRef
    kind: str
    objects: tuple[RenderedObject, ...]
    depends_on: tuple[UnitRef, ...] = ()
    outputs: Mapping[str, str] = field(default_factory=dict)
    origin: str = ""
    source: str = ""


@dataclass(frozen=True, kw_only=True)
class RenderedJob(RenderedUnit):
    """A job's unit, with its defaulted spec and target.

    Attributes:
        entry: the job as the stack declares it.
        defaulted: the defaulted custom resource, before any capability's edit
            (``Framework.default``); a plan is written back into it.
        job: the defaulted custom resource with the finished plan written back
            (``Framework.written``): what the ``operator`` target emits.
        plan: the job's finished plan, its operator's rules stated.
        target: the target it was rendered to.
    """

    entry: JobEntry
    defaulted: JobResource
    job: JobResource
    plan: JobPlan
    target: Target

    @property
    def addresses(self) -> dict[str, str]:
        return dict(self.outputs)


@dataclass(frozen=True)
class Rendering:
    """The result of rendering a stack.

    Attributes:
        units: every unit, each after the units it depends on (input order otherwise).
        objects: every object, in apply order.
        findings: warnings and advice (errors raise SpecError instead).
        k8s_version: the Kubernetes version the objects were checked against.
    """

    units: tuple[RenderedUnit, ...]
    objects: tuple[RenderedObject, ...]
    findings: tuple[Finding, ...] = field(default=())
    k8s_version: str = ""

    @property
    def jobs(self) -> tuple[RenderedJob, ...]:
        return tuple(u for u in self.units if isinstance(u, RenderedJob))

    @property
    def manifests(self) -> list[Manifest]:
        return [o.manifest for o in self.objects]
