"""The platform contract: what a job runs on, declared beside the jobs.

A *platform kind* is one of trainjobs' own resource kinds — a backend (Redis, NFS),
a node pool, a queue, an operator install. Like a job, a platform resource is a
document with ``apiVersion`` (``trainjobs.dev/v1alpha1``), ``kind``, ``metadata``
and ``spec``, so one YAML file can hold jobs and what they need. Each kind is a
plugin: a pydantic model plus pure functions that validate it and render its
manifests; ``platform.registry`` lists them once.

Jobs refer to platform resources by name in their ``trainjobs:`` options
(``backend: redis``); the renderer resolves the reference, lets the resource act
on the job (:meth:`PlatformKind.apply_to_plan`) and records the dependency, so the
Pulumi components create the backend before the pods that use it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Generic, Literal

from pydantic import Field
from typing_extensions import TypeVar

from trainjobs.errors import Finding, Rule
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import DEFAULT_NAMESPACE, K8sModel, model_from_generic
from trainjobs.plan import BackendBinding, JobPlan

__all__ = [
    "API_VERSION",
    "CATEGORIES",
    "BackendKind",
    "Category",
    "CheckExemption",
    "DocT",
    "PlanEffect",
    "PlatformKind",
    "PlatformMeta",
    "PlatformResource",
    "Reference",
]

API_VERSION: Final = "trainjobs.dev/v1alpha1"
"""The apiVersion of every trainjobs platform kind."""

Category = Literal["backend", "nodePool", "queue", "operator"]
CATEGORIES: tuple[Category, ...] = ("backend", "nodePool", "queue", "operator")


class PlatformMeta(K8sModel):
    """Name and namespace of a platform resource."""

    name: str = Field(description="Name; jobs refer to the resource by it. Required.")
    namespace: str | None = Field(
        default=None,
        description=(
            "Namespace of the objects it creates; default per kind (backends: "
            f"{DEFAULT_NAMESPACE!r}; operators: their upstream namespace; node pools are "
            "cluster-wide)."
        ),
    )
    labels: dict[str, str] | None = Field(
        default=None, description="Extra labels put on every object it creates; default none."
    )


class PlatformResource(K8sModel):
    """A platform document: ``apiVersion``, ``kind``, ``metadata``, ``spec``.

    Subclasses narrow ``kind`` to a Literal and give ``spec`` its model.
    """

    api_version: Literal["trainjobs.dev/v1alpha1"] = API_VERSION
    kind: str
    metadata: PlatformMeta
    spec: Any

    @property
    def name(self) -> str:
        return self.metadata.name


@dataclass(frozen=True)
class Reference:
    """A reference from one resource to a platform resource, e.g. a job's backend.

    Attributes:
        category: what is referred to.
        name: its name (``redis``, or ``namespace/name`` to pick among namespaces).
        path: where the reference is written in the user's input, for findings.
        roles: for node pools, the replica types the reference applies to (empty: all).
        target: for a job's references, the target the job renders to (``operator`` or
            ``pods``), so a resource can act differently on each; empty otherwise.
        unresolved: values that stand for Pulumi Inputs not known yet (their placeholder
            tokens, ``StackSpec.unresolved``). A check that compares one of them with
            another value (a job's namespace with a queue's) cannot decide it and passes;
            the components check again once the values are known. Default none.
    """

    category: Category
    name: str
    path: str
    roles: tuple[str, ...] = ()
    target: str = ""
    unresolved: frozenset[str] = frozenset()

    def undecided(self, *values: str | None) -> bool:
        """Whether any of ``values`` is not known yet, so comparing them decides nothing."""
        return any(v in self.unresolved for v in values if v is not None)


@dataclass(frozen=True)
class CheckExemption:
    """A check rule one of a kind's objects breaks by design, and why.

    Attributes:
        code: the rule's code (``pss.baseline.host_path``; ``trainjobs check
            --list-rules`` lists them). Name single rules, not whole groups: the
            object stays checked by every other rule.
        reason: why the object cannot meet the rule (what it does on the node), in
            plain words for reviewers of the kind.
    """

    code: str
    reason: str


@dataclass(frozen=True)
class PlanEffect:
    """What a platform resource does to a job that refers to it.

    Attributes:
        plan: the job's plan, edited (env, placement, labels …).
        findings: problems found while applying (the job does not fit, …).
        manifests: objects rendered with the job because of the reference.
    """

    plan: JobPlan
    findings: Sequence[Finding] = ()
    manifests: Sequence[Manifest] = field(default=())


DocT = TypeVar("DocT", bound=PlatformResource, default=PlatformResource, covariant=True)
"""The document model of a kind (``PlatformKind[RedisBackend]``); a bare ``PlatformKind``
is a kind of any document."""


class PlatformKind(ABC, Generic[DocT]):
    """One platform kind: its model and how it renders. Pure: no I/O, no pulumi."""

    category: ClassVar[Category]
    """Which stack list it belongs to and how jobs refer to it."""
    model: type[DocT]
    """The pydantic model of the whole document; default the class's type argument
    (``DocT``), so ``class RedisBackendKind(BackendKind[RedisBackend])`` reads RedisBackends."""
    title: ClassVar[str]
    """One line for people, e.g. ``Redis service for rendezvous``."""
    default_namespace: ClassVar[str | None] = DEFAULT_NAMESPACE
    """Namespace of its objects when metadata names none; None for cluster-wide kinds."""
    local_entrypoint: ClassVar[tuple[str, ...]] = ()
    """The command its image runs when a container sets none (``redis-server``), for
    ``trainjobs run-local``, which runs commands on this machine and cannot read images.
    Default none: run-local then asks for a command."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        model_from_generic(cls, PlatformKind)

    @property
    def kind(self) -> str:
        """The document kind, e.g. ``RedisBackend``: what the model's ``kind`` Literal says."""
        return str(self.model.model_fields["kind"].default)

    def document(self, resource: PlatformResource) -> DocT:
        """``resource`` as this kind's model, with its typed ``spec``: the registry hands
        a kind only documents it parsed with its model."""
        if not isinstance(resource, self.model):
            raise TypeError(f"{self.kind} was handed a {resource.kind} document")
        return resource

    def namespace(self, resource: PlatformResource) -> str | None:
        """The namespace its objects go into (None: cluster-scoped)."""
        return resource.metadata.namespace or self.default_namespace

    def required_namespace(self, resource: PlatformResource) -> str:
        """:meth:`namespace` of a kind with a default namespace, which always has one."""
        namespace = self.namespace(resource)
        if namespace is None:
            # A bug in the kind, not in the user's input: it declares no default namespace.
            raise TypeError(f"{self.kind} is cluster-scoped: its objects have no namespace")
        return namespace

    def validate(self, resource: PlatformResource) -> list[Finding]:
        """Rules beyond the model's types; paths relative to the document."""
        return []

    @abstractmethod
    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        """The Kubernetes objects the resource consists of (may be none)."""

    def references(self, resource: PlatformResource) -> list[Reference]:
        """Other platform resources this one needs (a queue's node pool …)."""
        return []

    def manifests_in(
        self, resource: PlatformResource, platform: Sequence[PlatformResource]
    ) -> list[Manifest]:
        """The objects of ``resource`` in a stack whose platform resources are ``platform``
        (input order, ``resource`` among them).

        Default :meth:`manifests`. A kind whose objects depend on the resources it
        refers to (a queue's flavor takes its pool's labels) overrides this.
        """
        return self.manifests(resource)

    def outputs(self, resource: PlatformResource) -> dict[str, str]:
        """Values a user needs from outside (an address …); exported by the component."""
        return {}

    def await_timeout(self, resource: PlatformResource, manifest: Manifest) -> str:
        """How long ``pulumi up`` waits for one of its objects to become ready (``30m``);
        empty for the provider's default (10 minutes)."""
        return ""

    def check_exemptions(
        self, resource: PlatformResource, manifest: Manifest
    ) -> Sequence[CheckExemption]:
        """The check rules ``manifest`` (one of the resource's objects) breaks by design,
        each with its reason; default none.

        For platform components that legitimately need the node (a device plugin mounts
        the kubelet's directory). The render writes the codes into the object's
        ``trainjobs.dev/ignore-checks`` annotation, the same one a job's ``ignore``
        writes, so ``trainjobs check`` and the policy pack both honour them; every other
        rule still runs on the object.
        """
        return ()

    def apply_to_plan(
        self, resource: PlatformResource, plan: JobPlan, ref: Reference
    ) -> PlanEffect:
        """What the resource does to a (defaulted) job's plan that refers to it; default
        nothing."""
        return PlanEffect(plan)


UNBOUND = Rule(
    "backend.unbound",
    "{kind} exposes no pod templates to trainjobs and names no backend itself, so the "
    "backend would reach none of its pods",
    hint="remove trainjobs.backend; the job rendezvous by its own means",
)


class BackendKind(PlatformKind[DocT]):
    """A rendezvous backend: jobs that refer to it are bound to it through their framework."""

    category: ClassVar[Category] = "backend"

    @abstractmethod
    def binding(self, resource: PlatformResource) -> BackendBinding:
        """The env, volumes and mounts a job's pods need to reach the backend."""

    def job_problems(
        self, resource: PlatformResource, plan: JobPlan, ref: Reference
    ) -> list[Finding]:
        """Why the backend cannot serve this job (another namespace …); default none."""
        return []

    def apply_to_plan(
        self, resource: PlatformResource, plan: JobPlan, ref: Reference
    ) -> PlanEffect:
        problems = self.job_problems(resource, plan, ref)
        if problems:
            return PlanEffect(plan, problems)
        binding = self.binding(resource)
        bound = plan.with_backend(binding)
        if bound.pod_sets == plan.pod_sets and binding.type not in plan.carried_backends:
            # PaddlePaddle EDL: its pods come from objects its operator makes.
            return PlanEffect(plan, [UNBOUND.at(ref.path, ref.name, kind=plan.kind.kind)])
        return PlanEffect(bound)
