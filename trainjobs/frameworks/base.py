"""The framework plugin contract.

A framework knows one training runtime's custom resource (its pydantic model),
the defaults and validation its operator applies, and how that operator expands
a job into plain Kubernetes objects. Everything here is pure: no I/O, no pulumi.

Plugins subclass :class:`Framework` (or the shared Kubeflow v1 engine in
``kubeflow_v1``) and are listed once in ``frameworks.registry``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from trainjobs.errors import Finding
from trainjobs.frameworks import pods_refusals
from trainjobs.frameworks.lifecycle import Lifecycle, SuccessPolicy
from trainjobs.k8s.structural import kubernetes_type

if TYPE_CHECKING:
    from trainjobs.frameworks.trainer_v2 import TrainerPlan

__all__ = [
    "DEFAULT_NAMESPACE",
    "BackendBinding",
    "Framework",
    "GangFacts",
    "GangMember",
    "JobResource",
    "K8sModel",
    "KindRef",
    "Manifest",
    "ObjectMeta",
    "PodTemplate",
    "TemplateRef",
    "deep_copy",
    "drop_nulls",
    "with_backend",
]

Manifest = dict[str, Any]
"""One plain Kubernetes object (``apiVersion``, ``kind``, ``metadata`` …)."""

PodTemplate = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.PodTemplateSpec")]
"""A core/v1 PodTemplateSpec as plain data; checked against the Kubernetes schema, and
written with the Kubernetes schema into generated CRDs."""

DEFAULT_NAMESPACE = "default"
"""Namespace of a job whose metadata names none; made explicit in every render."""


class K8sModel(BaseModel):
    """Base of every upstream API model: camelCase on the wire, snake_case in Python.

    Unknown fields are rejected so a misspelt field is reported, not ignored.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        # Kubernetes rejects "2" where it wants 2, so trainjobs does too.
        strict=True,
    )

    def to_manifest(self) -> Manifest:
        """The model as plain data in upstream spelling, unset fields left out."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


_SERVER_FIELDS = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "ownerReferences",
    "finalizers",
)


class ObjectMeta(K8sModel):
    """The metadata of a job. Only what a user sets is kept.

    Fields the API server fills in (uid, resourceVersion, managedFields …) are
    accepted, so ``kubectl get -o yaml`` output is valid input, and dropped.
    """

    name: str = Field(description="Job name; names every object rendered from it. Required.")
    namespace: str | None = Field(
        default=None, description=f"Namespace; default {DEFAULT_NAMESPACE!r}."
    )
    labels: dict[str, str] | None = Field(default=None, description="Labels of the job object.")
    annotations: dict[str, str] | None = Field(
        default=None, description="Annotations of the job object."
    )
    uid: Any = Field(default=None, exclude=True)
    resource_version: Any = Field(default=None, exclude=True)
    generation: Any = Field(default=None, exclude=True)
    creation_timestamp: Any = Field(default=None, exclude=True)
    deletion_timestamp: Any = Field(default=None, exclude=True)
    deletion_grace_period_seconds: Any = Field(default=None, exclude=True)
    managed_fields: Any = Field(default=None, exclude=True)
    self_link: Any = Field(default=None, exclude=True)
    owner_references: Any = Field(default=None, exclude=True)
    finalizers: Any = Field(default=None, exclude=True)

    @property
    def ns(self) -> str:
        """The namespace, defaulted."""
        return self.namespace or DEFAULT_NAMESPACE


class JobResource(K8sModel):
    """A training job custom resource: apiVersion, kind, metadata, spec.

    ``status`` is accepted (so exported objects are valid input) and dropped.
    """

    api_version: str
    kind: str
    metadata: ObjectMeta
    status: Any = Field(default=None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _unset_nulls(cls, data: Any) -> Any:
        # `command:` with no value is null in YAML; the API server prunes a null
        # field of a custom resource before defaulting (nullable is false in every
        # Kubeflow CRD), so to the operator it is an unset field.
        return drop_nulls(data) if isinstance(data, Mapping) else data

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.ns


@dataclass(frozen=True)
class KindRef:
    """An API kind: ``kubeflow.org/v1`` ``TFJob`` with plural ``tfjobs``."""

    api_version: str
    kind: str
    plural: str
    short_names: tuple[str, ...] = ()
    """Short names (``kubectl get tj``) a generated CRD declares; default none."""

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @property
    def crd_name(self) -> str:
        """The CustomResourceDefinition name, e.g. ``tfjobs.kubeflow.org``."""
        return f"{self.plural}.{self.group}"


@dataclass(frozen=True)
class BackendBinding:
    """What a job's pods need to reach a rendezvous backend (a Redis service, an NFS share …).

    A backend in the stack produces it; :meth:`Framework.bind_backend` applies it to a
    job. The generic application appends ``env`` and ``volume_mounts`` to every
    container and ``volumes`` to every pod template; frameworks whose custom resource
    names the backend itself (Caffe2's ``backendSpecs``) override that.

    Attributes:
        type: ``redis``, ``nfs`` or ``etcd``.
        name: the backend's name in the stack, for messages.
        host: the address pods use (``redis.training.svc``); empty for file backends.
        port: the port pods use; 0 for file backends.
        path: where a shared file system is mounted in the containers; empty otherwise.
        env: env entries every container gets (``REDIS_HOST`` …), secrets as secretKeyRef.
        volumes: pod volumes the backend needs (the NFS share).
        volume_mounts: container mounts of those volumes.
    """

    type: str
    name: str
    host: str = ""
    port: int = 0
    path: str = ""
    env: tuple[Mapping[str, Any], ...] = ()
    volumes: tuple[Mapping[str, Any], ...] = ()
    volume_mounts: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class TemplateRef:
    """One pod template of a job.

    Attributes:
        role: the replica type it belongs to (``Worker``, ``Launcher`` …); the key
            :meth:`Framework.with_templates` takes.
        path: where it sits in the user's job (``spec.tfReplicaSpecs.Worker.template``).
        template: the PodTemplateSpec.
        replicas: how many pods are made from it.
    """

    role: str
    path: str
    template: Mapping[str, Any]
    replicas: int = 1


@dataclass(frozen=True)
class GangMember:
    """One replica type of a gang: its pods join the job's PodGroup.

    Attributes:
        role: the replica type (``Worker``, ``Launcher`` …), as in :class:`TemplateRef`.
        pods: how many pods it contributes.
        task: the Volcano task name its pods are annotated with (``volcano.sh/task-spec``);
            empty when the operator sets none.
    """

    role: str
    pods: int
    task: str = ""


@dataclass(frozen=True)
class GangFacts:
    """What a framework's operator does when it gang-schedules a job (kubeflow-operators.md §5).

    The generic gang mechanism (``frameworks.gang``) builds the PodGroup and decorates
    the pods from these facts alone, so no framework carries its own copy of it.

    Attributes:
        members: the replica types whose pods join the gang, in the order their pods
            count towards the computed ``minResources``.
        min_member: ``minMember`` when ``schedulingPolicy.minAvailable`` is unset.
        replace_scheduler_name: True when the operator overwrites a template's own
            ``schedulerName`` (MPI Operator); False when it keeps it (Training Operator).
        default_queue: the Volcano queue when ``schedulingPolicy.queue`` is unset (the
            Training Operator says ``default``); empty: none.
        queue_annotation: True when the job's annotation ``scheduling.volcano.sh/queue-name``
            names the Volcano queue before the default (MPI Operator).
        priority_roles: roles whose template ``priorityClassName`` becomes the PodGroup's
            when ``schedulingPolicy.priorityClass`` is unset, first found wins.
        default_timeout: ``scheduleTimeoutSeconds`` of a scheduler-plugins PodGroup when the
            policy sets none; None: left out.
        started_late: roles the operator creates only once the other pods are Ready
            (the MPI launcher with ``WaitForWorkersReady``); a gang that waits for them
            would never start.
        unsupported: why the job cannot be gang-scheduled at all; empty: it can.
    """

    members: tuple[GangMember, ...]
    min_member: int
    replace_scheduler_name: bool = False
    default_queue: str = "default"
    queue_annotation: bool = False
    priority_roles: tuple[str, ...] = ()
    default_timeout: int | None = None
    started_late: tuple[str, ...] = ()
    unsupported: str = ""

    @property
    def pods(self) -> int:
        """Every pod of the job."""
        return sum(m.pods for m in self.members)


class Framework(ABC):
    """One training runtime's custom resource and its operator's behaviour.

    Class attributes describe the plugin; methods are pure functions of a job.
    """

    name: ClassVar[str]
    """Registry key, e.g. ``tensorflow``."""
    title: ClassVar[str]
    """Human name, e.g. ``TensorFlow (TFJob)``."""
    kind: ClassVar[KindRef]
    """The custom resource this framework reads and, on the operator target, emits."""
    model: ClassVar[type[JobResource]]
    """The pydantic model of the full custom resource."""
    targets: ClassVar[tuple[str, ...]] = ("operator", "pods")
    """Targets this framework renders to."""
    legacy: ClassVar[bool] = False
    """True for runtimes whose operator is archived or removed upstream."""
    operator: ClassVar[str] = ""
    """The operator (and version) that consumes ``kind``, e.g. ``Training Operator v1.9.4``."""
    crd_file: ClassVar[str] = ""
    """The CRD under ``crds/`` that validates the operator target's output."""
    crd_generated: ClassVar[bool] = False
    """True when ``crd_file`` is generated from ``model`` (``trainjobs crds``) because the
    upstream CRD had no schema; False when it is a vendored upstream copy."""
    status_subresource: ClassVar[bool] = False
    """True when the operator writes status through the ``status`` subresource, which a
    generated CRD then serves; False when it updates the whole object (or never writes it)."""
    reports_mounts: ClassVar[bool] = False
    """True when the framework's own rules report a volumeMount naming no volume (the
    archived operators' frameworks, ``_seed.mount_findings``); the generic Pod check then
    leaves mounts to them. Default False."""
    status_conditions: ClassVar[dict[str, str]] = {"running": "Running", "succeeded": "Succeeded"}
    """The condition types the operator sets on the custom resource when the job runs and
    when it has succeeded (``trainjobs: {wait: …}`` waits for them); empty when it sets none."""
    success_rule: ClassVar[str] = ""
    """When a job of this kind counts as succeeded, for users of the ``pods`` target."""
    restart_policies: ClassVar[tuple[str, ...]] = ("Always", "OnFailure", "Never", "ExitCode")
    """The replica ``restartPolicy`` values the operator accepts; default the four of
    Kubeflow's common ReplicaSpec. The ``restart.framework`` check rule reads it."""
    reconciled_managed_by: ClassVar[str | None] = None
    """The ``runPolicy.managedBy`` value under which the operator runs a job itself
    (unset counts too); the pods target refuses any other. None: the operator never
    reads the field."""
    listens_on_all_addresses: ClassVar[bool] = False
    """True when the runtime's servers bind their port on every address (TensorFlow's
    gRPC server binds ``0.0.0.0:<port>``), so replicas sharing one machine cannot share
    a port number. Default False: servers bind the replica's own address (gloo, MPI)
    or only one replica listens (a rendezvous master). ``run-local`` gives each
    replica a port of its own in ``host:port`` addresses when this is True."""

    @abstractmethod
    def default(self, job: JobResource) -> JobResource:
        """The job with every default its operator applies made explicit."""

    @abstractmethod
    def validate(self, job: JobResource) -> list[Finding]:
        """Findings for rules the operator's webhook or controller enforces.

        Receives the *defaulted* job; paths are relative to the job document
        (``spec.tfReplicaSpecs.Worker.replicas``).
        """

    @abstractmethod
    def pod_templates(self, job: JobResource) -> Iterable[TemplateRef]:
        """Every pod template in the job, with its path, for the schema check."""

    @abstractmethod
    def with_templates(self, job: JobResource, templates: Mapping[str, PodTemplate]) -> JobResource:
        """The job with the pod templates of the given roles replaced.

        Cross-cutting features (node-pool placement, gang scheduling) rewrite
        templates through this, so they work for every framework and target.
        """

    @abstractmethod
    def expand_pods(self, job: JobResource) -> list[Manifest]:
        """The objects the operator would create for the (defaulted) job."""

    def pods_findings(self, job: JobResource) -> list[Finding]:
        """Findings of the ``pods`` target only: what it cannot do as the operator would.

        Errors refuse the job on that target. Default: a suspended run policy and a
        ``managedBy`` other than :attr:`reconciled_managed_by` (``frameworks.pods_refusals``).
        """
        return [
            *pods_refusals.suspended(job),
            *pods_refusals.managed_elsewhere(job, self.reconciled_managed_by),
        ]

    def bind_backend(self, job: JobResource, binding: BackendBinding) -> JobResource:
        """The job with a backend's env, volumes and mounts added to every pod template.

        Frameworks whose custom resource carries the backend's address itself
        override this and set those fields instead.
        """
        templates = {
            ref.role: with_backend(ref.template, binding) for ref in self.pod_templates(job)
        }
        return self.with_templates(job, templates)

    def operator_manifest(self, job: JobResource) -> Manifest:
        """The custom resource the operator consumes (the defaulted job)."""
        return job.to_manifest()

    def trainer_plan(self, job: JobResource) -> tuple[TrainerPlan | None, list[Finding]]:
        """The (defaulted) job for Kubeflow Trainer v2, the ``trainer`` target: its
        runtime's ML policy and pod templates, and the node count; or None and findings
        saying why it cannot be. Frameworks listing ``trainer`` in ``targets`` override it.
        """
        raise NotImplementedError(f"{self.name} has no trainer target")

    def scheduling_policy(self, job: JobResource) -> dict[str, Any] | None:
        """``spec.runPolicy.schedulingPolicy`` as plain data, or None when unset.

        Every Kubeflow kind keeps it there; a framework whose custom resource has no
        gang inputs returns None.
        """
        run_policy = getattr(getattr(job, "spec", None), "run_policy", None)
        policy = getattr(run_policy, "scheduling_policy", None)
        return policy.to_manifest() if isinstance(policy, K8sModel) else None

    def gang_facts(self, job: JobResource) -> GangFacts:
        """How the operator gang-schedules the (defaulted) job.

        Default, the Training Operator's rule (§5.1): every replica type joins, named
        by its lowercase type; ``minMember`` is the sum of all replicas.
        """
        members = tuple(
            GangMember(ref.role, ref.replicas, ref.role.lower()) for ref in self.pod_templates(job)
        )
        return GangFacts(members, sum(m.pods for m in members))

    def success_policy(self, job: JobResource) -> SuccessPolicy:
        """Which replicas decide that the (defaulted) job succeeded.

        The default, every replica succeeds, is what a plain Kubernetes Job does;
        frameworks whose operator decides on a chief, master, launcher or worker 0
        override it.
        """
        return SuccessPolicy()

    def lifecycle(self, job: JobResource) -> Lifecycle | None:
        """The (defaulted) job's replicas, restart rules and success policy.

        None (the default) means the framework does not describe them yet, and
        ``trainjobs run-local`` refuses the job with a message saying so.
        """
        return None

    def addresses(self, job: JobResource) -> dict[str, str]:
        """Addresses a user needs from outside, e.g. ``{"master": "mnist-master-0:23456"}``."""
        return {}


def with_backend(
    template: Mapping[str, Any], binding: BackendBinding, env: bool = True
) -> PodTemplate:
    """A copy of ``template`` with the binding's volumes, mounts and (unless ``env`` is
    false) env appended, after what the user wrote, to every container."""
    out = deep_copy(template)
    spec = out.setdefault("spec", {})
    if binding.volumes:
        spec["volumes"] = [*(spec.get("volumes") or []), *map(deep_copy, binding.volumes)]
    for container in spec.get("containers") or []:
        if not isinstance(container, dict):
            continue  # not a container: the schema check names it at its path
        if env and binding.env:
            container["env"] = [*(container.get("env") or []), *map(deep_copy, binding.env)]
        if binding.volume_mounts:
            mounts = map(deep_copy, binding.volume_mounts)
            container["volumeMounts"] = [*(container.get("volumeMounts") or []), *mounts]
    return out


def deep_copy(value: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy, so expansions never alias the user's input.

    Manifests are plain JSON-like data (dicts, lists, scalars), so a copier that
    knows only those is several times faster than ``copy.deepcopy`` — and the
    expansion copies a template once per replica.
    """
    return {k: v if type(v) in _SCALARS else _copy_json(v) for k, v in value.items()}


_SCALARS = frozenset({str, int, float, bool, type(None)})


def drop_nulls(value: Any) -> Any:
    """``value`` without the null fields of its mappings, at every depth.

    The API server prunes a null field of a custom resource whose schema does
    not say ``nullable: true`` before defaulting and validation, so ``args:
    null`` and a bare ``command:`` mean "unset". Items of lists stay, nulls too
    (the schema then rejects a null item, as the server does).
    """
    if isinstance(value, Mapping):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(item) for item in value]
    return value


def _copy_json(value: Any) -> Any:
    # Exact type tests, and no call for a scalar: most of a template is scalars,
    # and this runs once per replica.
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _SCALARS else _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _SCALARS else _copy_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: v if type(v) in _SCALARS else _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _SCALARS else _copy_json(v) for v in value]
    return value
