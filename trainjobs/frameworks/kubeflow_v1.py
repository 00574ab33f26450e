"""The shared Training Operator v1 engine.

Every kubeflow.org/v1 kind (TFJob, PyTorchJob, XGBoostJob, PaddleJob, JAXJob,
MXJob) has the same shape — a map of replica specs plus a run policy — and the
same expansion: one Pod and one headless Service per replica, named
``<job>-<type>-<index>``, with four labels, the defaulted port and the
framework's rendezvous env appended. Plugins subclass :class:`KubeflowV1Framework`
and supply only what differs: replica types, default container and port,
restart policy, which pod is the master, and the env.

Facts: the reference's kubeflow-operators.md §1 to §4 and §8 (Training Operator v1.9.4).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property, partial
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import Field

from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks._container_rules import (
    PINNED_IMAGE_HINT,
    default_container_findings,
    image_findings,
    no_containers,
    template_restart_policy,
)
from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.capabilities import SuccessRule
from trainjobs.k8s.data import PodTemplate, deep_copy
from trainjobs.k8s.model import JobResource, K8sModel
from trainjobs.k8s.names import LABEL_MAX, dns1035_label_problem
from trainjobs.k8s.pods import containers
from trainjobs.plan import PodSet, Replica, ReplicaRestartPolicy, RunRules
from trainjobs.plan.expansion import Expansion, PodPlan, ServicePlan
from trainjobs.plan.objects import ObjectPlan

__all__ = [
    "LABEL_JOB_NAME",
    "LABEL_JOB_ROLE",
    "LABEL_OPERATOR_NAME",
    "LABEL_REPLICA_INDEX",
    "LABEL_REPLICA_TYPE",
    "MANAGED_BY_OPERATOR",
    "MANAGED_BY_VALUES",
    "KubeflowV1Framework",
    "LegacyRunPolicy",
    "ReplicaJob",
    "ReplicaSpec",
    "RunPolicy",
    "SchedulingPolicy",
    "V1Job",
    "V1JobSpec",
    "env_field_ref",
    "env_var",
    "go_json",
    "replica_name",
]

LABEL_OPERATOR_NAME = "training.kubeflow.org/operator-name"
LABEL_JOB_NAME = "training.kubeflow.org/job-name"
LABEL_REPLICA_TYPE = "training.kubeflow.org/replica-type"
LABEL_REPLICA_INDEX = "training.kubeflow.org/replica-index"
LABEL_JOB_ROLE = "training.kubeflow.org/job-role"

MANAGED_BY_OPERATOR = "kubeflow.org/training-operator"
"""``runPolicy.managedBy`` of jobs the Training Operator runs itself (also when unset)."""
MANAGED_BY_VALUES = (MANAGED_BY_OPERATOR, "kueue.x-k8s.io/multikueue")
"""The only ``runPolicy.managedBy`` values the v1.9 webhooks accept."""

# The rules every v1 kind's webhook (or controller) applies, declared once; ``{kind}`` is
# the job's kind.
NAME = Rule(
    "name.dns1035",
    "the job name {problem}",
    hint="rename the job; every pod and service is named after it",
)
NO_REPLICAS = Rule(
    "spec.replicas.empty",
    "{kind} needs at least one replica type",
    hint="add e.g. {example} with a pod template",
)
REPLICA_TYPE = Rule(
    "spec.replica_type",
    "{kind} has no replica type {rtype!r}",
    hint="use one of {known}",
)
NAME_TOO_LONG = Rule(
    "name.too_long",
    "the Service and Pod name {longest!r} has {length} characters; a DNS-1035 label has at "
    f"most {LABEL_MAX}, so the operator cannot create it",
    hint="shorten the job name to at most {most} characters",
)
PORT_NAMES = Rule(
    "service.port_names",
    "container {container!r} has several ports and one without a name; the replica's Service "
    "gets them all, and the API server refuses a Service with several ports unless every one "
    "is named",
    hint="name every port of container {container!r}, e.g. "
    "{{name: port-{port}, containerPort: {port}}}",
)
MANAGED_BY_IGNORED = Rule(
    "run_policy.managed_by_ignored",
    "the {kind} controller ignores managedBy and runs the job itself",
    hint="remove managedBy, or run the job with the controller it names only",
    severity=Severity.WARNING,
)
MANAGED_BY = Rule(
    "run_policy.managed_by",
    f"the webhook accepts only {' or '.join(MANAGED_BY_VALUES)}",
    hint=f"remove managedBy (default {MANAGED_BY_OPERATOR}) or use one of these",
)


class ReplicaSpec(K8sModel):
    """One replica type of a job (``Worker``, ``PS`` …)."""

    replicas: int | None = Field(
        default=None, ge=0, description="Number of pods of this type; default 1."
    )
    template: PodTemplate = Field(description="The pod template (core/v1 PodTemplateSpec).")
    restart_policy: ReplicaRestartPolicy | None = Field(
        default=None,
        description=(
            "Always, OnFailure, Never or ExitCode (retry exit codes >= 128); "
            "default per framework. Overrides template.spec.restartPolicy."
        ),
    )


class SchedulingPolicy(K8sModel):
    """Gang-scheduling inputs (``runPolicy.schedulingPolicy``)."""

    min_available: int | None = Field(
        default=None, ge=0, description="Pods that must start together; default all replicas."
    )
    queue: str | None = Field(default=None, description="Volcano queue; default 'default'.")
    min_resources: dict[str, int | str] | None = Field(
        default=None, description="Resources the gang needs; default computed from requests."
    )
    priority_class: str | None = Field(default=None, description="PriorityClass of the gang.")
    schedule_timeout_seconds: int | None = Field(
        default=None, ge=0, description="How long the gang may wait to be scheduled."
    )


class LegacyRunPolicy(K8sModel):
    """``spec.runPolicy`` as Training Operator v1.8.1 has it (MXJob): no ``managedBy``."""

    clean_pod_policy: Literal["All", "Running", "None"] | None = Field(
        default=None, description="Pods deleted once the job finishes; default None."
    )
    ttl_seconds_after_finished: int | None = Field(
        default=None, ge=0, description="Delete the job this long after it finished; unset = keep."
    )
    active_deadline_seconds: int | None = Field(
        default=None, ge=0, description="Fail the job after running this long; unset = no limit."
    )
    backoff_limit: int | None = Field(
        default=None, ge=0, description="Restarts before the job fails; unset = no limit."
    )
    scheduling_policy: SchedulingPolicy | None = Field(
        default=None, description="Gang scheduling; unset = none."
    )
    suspend: bool | None = Field(
        default=None, description="True stops the job's pods; default false."
    )


class RunPolicy(LegacyRunPolicy):
    """How the operator runs and cleans up the job (``spec.runPolicy``, v1.9)."""

    managed_by: str | None = Field(
        default=None,
        description=(
            f"Controller that owns the job: {MANAGED_BY_OPERATOR} (default) or "
            "kueue.x-k8s.io/multikueue."
        ),
    )


class V1JobSpec(K8sModel):
    """``spec`` of a Training Operator v1.9 kind: its run policy first, then the kind's
    replica map and options, which subclasses declare."""

    run_policy: RunPolicy | None = Field(default=None, description="Run and clean-up policy.")


class ReplicaJob(JobResource):
    """A job of this engine: a map of replica types in ``spec``, whatever its group.
    Subclasses give ``apiVersion`` and ``kind`` their Literals and ``spec`` its model."""

    replica_field: ClassVar[str]
    """Python name of the replica map field of ``spec``, e.g. ``tf_replica_specs``: the one
    field its model types ``dict[str, ReplicaSpec]``."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        field = cls.model_fields.get("spec")
        spec = None if field is None else field.annotation
        if isinstance(spec, type) and issubclass(spec, K8sModel):  # not a base's ``Any``
            cls.replica_field = _replica_field(spec)

    @property
    def replica_specs(self) -> dict[str, ReplicaSpec]:
        specs: dict[str, ReplicaSpec] = getattr(self.spec, self.replica_field)  # type: ignore[attr-defined]
        return specs

    def replicas(self, rtype: str) -> int:
        spec = self.replica_specs.get(rtype)
        return 0 if spec is None or spec.replicas is None else spec.replicas

    @property
    def pod_count(self) -> int:
        """The pods of every replica type together (0 for an unset count)."""
        return sum(self.replicas(rtype) for rtype in self.replica_specs)

    @property
    def run_policy(self) -> LegacyRunPolicy | None:
        """``spec.runPolicy``, None when unset."""
        policy: LegacyRunPolicy | None = self.spec.run_policy  # type: ignore[attr-defined]
        return policy


class V1Job(ReplicaJob):
    """A kubeflow.org/v1 job (the Training Operator's kinds)."""

    api_version: Literal["kubeflow.org/v1"] = "kubeflow.org/v1"


def replica_name(job: str, rtype: str, index: int) -> str:
    """``<job>-<type>-<index>``: the name of a replica's Pod and Service, never shortened.

    It is also the replica's hostname in TF_CONFIG, MASTER_ADDR …, so it must be
    exactly the operator's (``GenGeneralName``, training-operator
    pkg/controller.v1/common/util.go). A name longer than a DNS-1035 label is
    refused by validation (``name.too_long``), as the operator's Service create fails.
    """
    return f"{job}-{rtype.lower()}-{index}".replace("/", "-")


def env_var(name: str, value: str) -> dict[str, Any]:
    """A plain ``{name, value}`` env entry."""
    return {"name": name, "value": value}


def env_field_ref(name: str, field_path: str) -> dict[str, Any]:
    """An env entry read from the pod itself, e.g. ``status.podIP``."""
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}


# Go's encoding/json escapes these so the output is safe inside HTML.
_GO_JSON_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def go_json(value: Any) -> str:
    """Compact JSON byte-equal to Go's ``json.Marshal`` of the same value.

    Keys keep the order given (a Go struct's field order; build Go maps with
    sorted keys), no spaces, non-ASCII as UTF-8, and ``<``, ``>``, ``&``,
    U+2028 and U+2029 escaped as ``\\u003c`` … like Go does.
    """
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).translate(_GO_JSON_ESCAPES)


# Training Operator v1.9.4 pkg/webhooks/webhooks.go SupportedSchemeWebhook: TF, PyTorch,
# XGBoost, Paddle and JAX get a validating webhook; MPIJob v1 gets `scaffold` (none).
# Each webhook (pkg/webhooks/<kind>/*_webhook.go) checks the name (NameIsDNS1035Label),
# that every replica has containers, each with an image, one named as the kind's
# default container, and (not TFJob) that the replica types are the kind's own.
V1_WEBHOOK_RULES = frozenset(
    {
        "name.dns1035",
        "spec.replica_type",
        "template.containers",
        "template.image",
        "template.default_container",
    }
)
# util.ValidateRunPolicy (pkg/common/util/webhooks.go): managedBy is one of two values;
# called by the TF, PyTorch, XGBoost and Paddle webhooks, not the JAX one.
RUN_POLICY_WEBHOOK_RULES = frozenset({"run_policy.managed_by"})
# Rules of every Training Operator kind that its controller, not a webhook, acts on.
V1_CONTROLLER_RULES = frozenset(
    {
        # An empty replica map: every CRD requires the key (a missing one is the CRD
        # schema's, at load), and the webhooks refuse only a nil map, so `{}` is stored
        # and the operator has nothing to run (proven in tests/cluster/test_accepted.py).
        "spec.replicas.empty",
        # ctl/common/job_controller.go ManagedByExternalController: the job is skipped.
        "run_policy.managed_by_ignored",
        # The Paddle controller never reads elasticPolicy (no env, no HPA), and takes
        # min/max from a Worker spec that is missing (a nil dereference).
        "paddle.elastic_ignored",
        "paddle.elastic_needs_worker",
        # core/pod.go SetRestartPolicy: the replica's policy replaces the template's;
        # a value the operator does not know is copied to the pods, which the API
        # server then refuses (no enum in the CRD, no webhook rule).
        "template.restart_policy",
        "restart.framework",
    }
)

V1JobT = TypeVar("V1JobT", bound=ReplicaJob)
"""The kind a framework of this engine reads."""


class KubeflowV1Framework(Framework[V1JobT], SuccessRule):
    """Shared engine for the Training Operator v1 kinds.

    Subclasses set the class attributes and override :meth:`cluster_env`
    (and, where the operator does more, :meth:`init_containers`,
    :meth:`is_master`, :meth:`extra_objects`, :meth:`default_spec`,
    :meth:`validate_spec`).
    """

    replica_types: ClassVar[tuple[str, ...]]
    """Canonical replica types in expansion order, e.g. ``("Chief", "PS", "Worker")``."""
    check_replica_types: ClassVar[bool] = True
    """Whether the webhook rejects keys outside ``replica_types`` (TFJob does not)."""
    camel_case_types: ClassVar[tuple[str, ...] | None] = None
    """Types whose keys defaulting renames to CamelCase (``worker`` → ``Worker``);
    None means every one of ``replica_types``."""
    run_policy_model: ClassVar[type[LegacyRunPolicy]] = RunPolicy
    """The model of ``spec.runPolicy`` for this kind's operator version."""
    webhook_checks_managed_by: ClassVar[bool] = True
    """Whether the webhook rejects a ``runPolicy.managedBy`` outside ``MANAGED_BY_VALUES``.

    The JAXJob webhook does not, and its controller ignores the field altogether.
    """
    reconciled_managed_by: ClassVar[str | None] = MANAGED_BY_OPERATOR
    webhook_rules: ClassVar[frozenset[str]] = V1_WEBHOOK_RULES | RUN_POLICY_WEBHOOK_RULES
    controller_rules: ClassVar[frozenset[str]] = V1_CONTROLLER_RULES
    default_container: ClassVar[str]
    """The container the operator puts its env and port into; default :attr:`name`."""
    default_port_name: ClassVar[str]
    """The name of the port the operator looks up on :attr:`default_container` (and
    adds when it is missing); default ``<kind lowercased>-port``, e.g. ``tfjob-port``."""
    default_port: ClassVar[int]
    default_restart_policy: ClassVar[ReplicaRestartPolicy]
    operator_name: ClassVar[str]
    """Value of the ``training.kubeflow.org/operator-name`` label; default
    ``<kind lowercased>-controller``, e.g. ``tfjob-controller``."""
    env_into: ClassVar[Literal["default", "all"]] = "all"
    """Which containers get the env: the default container only, or every container."""
    release: ClassVar[str] = "v1.9.4"
    """The Training Operator release this kind follows; names :attr:`operator` and the
    release's CRD of the kind, :attr:`crd_file`, unless the class states them."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "model" not in cls.__dict__:
            return
        # The operator's per-kind constants follow the kind's name (TFJob: DefaultPortName
        # tfjob-port, controller tfjob-controller): a kind states them only where it differs.
        lowered = cls.kind.kind.lower()
        cls.default_container = cls.__dict__.get("default_container", cls.name)
        cls.default_port_name = cls.__dict__.get("default_port_name", f"{lowered}-port")
        cls.operator_name = cls.__dict__.get("operator_name", f"{lowered}-controller")
        if "operator" not in cls.__dict__:
            cls.operator = f"Training Operator {cls.release}"
        if "crd_file" not in cls.__dict__:  # nor generated (Framework named it then)
            plural, group = cls.kind.plural, cls.kind.group
            cls.crd_file = f"training-operator-{cls.release}/{group}_{plural}.yaml"

    # ----- hooks -----------------------------------------------------------

    def cluster_env(self, job: V1JobT, rtype: str, index: int) -> list[dict[str, Any]]:
        """The env the operator appends for replica ``rtype``/``index``: new entries on
        every call (the engine puts them into the pod without copying)."""
        return []

    def cluster_envs(self, job: V1JobT) -> Callable[[str, int], list[dict[str, Any]]]:
        """The env of each replica of ``job`` (type, index) → entries; by default
        :meth:`cluster_env` per pod. A framework whose env holds a large part every pod
        shares (TF_CONFIG's cluster) overrides this to build that part once per job."""
        return partial(self.cluster_env, job)

    def init_containers(self, job: V1JobT, rtype: str, index: int) -> list[dict[str, Any]]:
        """Init containers the operator appends to the pod."""
        return []

    def is_master(self, job: V1JobT, rtype: str, index: int) -> bool:
        """Whether the pod gets the ``job-role: master`` label."""
        return False

    def extra_objects(self, job: V1JobT) -> list[ObjectPlan]:
        """Objects other than pods and services, as plans (``plan.objects``); default none."""
        return []

    def default_spec(self, job: V1JobT) -> V1JobT:
        """Kind-specific defaults beyond the common ones."""
        return job

    def validate_spec(self, job: V1JobT) -> list[Finding]:
        """Kind-specific webhook rules beyond the common ones."""
        return []

    # ----- helpers for plugins --------------------------------------------

    def pod_name(self, job: V1JobT, rtype: str, index: int) -> str:
        """``<job>-<type>-<index>``, the name of a replica's pod and service."""
        return replica_name(job.name, rtype, index)

    def first_pod_address(self, job: V1JobT, name: str, *rtypes: str) -> dict[str, str]:
        """``{name: "<pod 0>:<port>"}`` for the first of ``rtypes`` the job has (the port
        its replica's, else :attr:`default_port`); empty when it has none of them. The
        common shape of :meth:`addresses`."""
        for rtype in rtypes:
            if rtype in job.replica_specs:
                port = self.port_of(job, rtype, self.default_port)
                return {name: f"{self.pod_name(job, rtype, 0)}:{port}"}
        return {}

    def port_of(self, job: V1JobT, rtype: str, default: int | None = None) -> int | None:
        """The default container's port named ``default_port_name`` of replica ``rtype``."""
        spec = job.replica_specs.get(rtype)
        if spec is None:
            return default
        for container in containers(spec.template):
            if container.get("name") == self.default_container:
                for port in container.get("ports") or []:
                    if port.get("name") == self.default_port_name:
                        value = port.get("containerPort")
                        return int(value) if value is not None else default
        return default

    @cached_property
    def replica_alias(self) -> str:
        """The wire name of the replica map, e.g. ``tfReplicaSpecs``."""
        spec_model = self.model.model_fields["spec"].annotation
        return _alias_of(spec_model, self.model.replica_field)

    def ordered_types(self, job: V1JobT) -> list[str]:
        """Replica types present in the job, canonical ones first in their order."""
        present = list(job.replica_specs)
        known = [t for t in self.replica_types if t in present]
        return known + sorted(t for t in present if t not in self.replica_types)

    # ----- Framework -------------------------------------------------------

    def default(self, job: V1JobT) -> V1JobT:
        specs: dict[str, ReplicaSpec] = {}
        renamed = self.replica_types if self.camel_case_types is None else self.camel_case_types
        canonical = {t.lower(): t for t in renamed}
        for key, spec in job.replica_specs.items():
            specs[canonical.get(key.lower(), key)] = self._default_replica(spec)
        run_policy = job.run_policy or self.run_policy_model()
        if run_policy.clean_pod_policy is None:
            run_policy = run_policy.model_copy(update={"clean_pod_policy": "None"})
        spec_update = {self.model.replica_field: specs, "run_policy": run_policy}
        metadata = job.metadata.model_copy(update={"namespace": job.metadata.ns})
        defaulted = job.model_copy(
            update={
                "metadata": metadata,
                "spec": job.spec.model_copy(update=spec_update),  # type: ignore[attr-defined]
            }
        )
        return self.default_spec(defaulted)

    def _default_replica(self, spec: ReplicaSpec) -> ReplicaSpec:
        template = deep_copy(spec.template)
        found = containers(template)
        target = next(
            (c for c in found if c.get("name") == self.default_container),
            found[0] if found else None,
        )
        if target is not None:
            ports = target.setdefault("ports", [])
            if not any(p.get("name") == self.default_port_name for p in ports):
                ports.append({"name": self.default_port_name, "containerPort": self.default_port})
        return spec.model_copy(
            update={
                "replicas": 1 if spec.replicas is None else spec.replicas,
                "restart_policy": spec.restart_policy or self.default_restart_policy,
                "template": template,
            }
        )

    def validate(self, job: V1JobT) -> list[Finding]:
        findings: list[Finding] = []
        problem = dns1035_label_problem(job.name)
        if problem:
            findings.append(NAME.at("metadata.name", job.name, problem=problem))
        else:
            findings.extend(self._replica_name_findings(job))
        alias = self.replica_alias
        if not job.replica_specs:
            example = "Worker" if "Worker" in self.replica_types else self.replica_types[-1]
            example = f"{alias}.{example}"
            findings.append(NO_REPLICAS.at(f"spec.{alias}", kind=self.kind.kind, example=example))
        for rtype, spec in job.replica_specs.items():
            base = f"spec.{alias}.{rtype}"
            if self.check_replica_types and rtype not in self.replica_types:
                known = ", ".join(self.replica_types)
                findings.append(
                    REPLICA_TYPE.at(base, rtype, kind=self.kind.kind, rtype=rtype, known=known)
                )
            findings.extend(self._validate_template(spec, f"{base}.template"))
            findings.extend(self._port_name_findings(spec, f"{base}.template"))
        findings.extend(self._validate_managed_by(job))
        findings.extend(self.validate_spec(job))
        return findings

    def _replica_name_findings(self, job: V1JobT) -> list[Finding]:
        """The longest Pod/Service name (last index of each type) must fit a DNS-1035 label.

        The operator names the Service ``GenGeneralName(job, type, index)`` with no
        shortening (training-operator pkg/controller.v1/common/service.go), and the
        API server refuses a Service name over 63 characters, so the job never runs.
        """
        longest = [
            self.pod_name(job, rtype, count - 1)
            for rtype in self.ordered_types(job)
            for count in (job.replicas(rtype),)
            if count > 0
        ]
        too_long = max(longest, key=len, default="")
        if len(too_long) <= LABEL_MAX:
            return []
        room = LABEL_MAX - (len(too_long) - len(job.name))
        facts = {"longest": too_long, "length": len(too_long), "most": room}
        return [NAME_TOO_LONG.at("metadata.name", job.name, **facts)]

    def _service_ports(self, spec: ReplicaSpec) -> dict[str, Any]:
        """The replica Service's ports: the default container's, by name, the last of a
        name winning (the operator collects them in a map, core/service.go
        GetPortsFromJob); in first-seen order where Go's map order is random."""
        ports: dict[str, Any] = {}
        for container in containers(spec.template):
            if container.get("name") == self.default_container:
                for port in container.get("ports") or []:
                    ports[str(port.get("name") or "")] = port.get("containerPort")
                break
        return ports

    def _port_name_findings(self, spec: ReplicaSpec, path: str) -> list[Finding]:
        ports = self._service_ports(spec)
        if len(ports) < 2 or "" not in ports:
            return []
        numbers = [p for name, p in ports.items() if not name]
        container = self.default_container
        return [
            PORT_NAMES.at(f"{path}.spec.containers", numbers, container=container, port=numbers[0])
        ]

    def _validate_managed_by(self, job: V1JobT) -> list[Finding]:
        # None as well for a kind whose run policy has no managedBy (MXJob).
        managed_by = getattr(job.run_policy, "managed_by", None)
        if managed_by is None:
            return []
        path = "spec.runPolicy.managedBy"
        if not self.webhook_checks_managed_by:
            if managed_by == MANAGED_BY_OPERATOR:
                return []
            return [MANAGED_BY_IGNORED.at(path, managed_by, kind=self.kind.kind)]
        if managed_by in MANAGED_BY_VALUES:
            return []
        return [MANAGED_BY.at(path, managed_by)]

    def _validate_template(self, spec: ReplicaSpec, path: str) -> list[Finding]:
        found = containers(spec.template)
        if not found:
            return [no_containers(path, f"add a container named {self.default_container!r}")]
        why = "the operator reads ports and exit codes from that container"
        findings = default_container_findings(found, path, self.default_container, why)
        findings += image_findings(found, path, PINNED_IMAGE_HINT)
        return findings + template_restart_policy(spec.template, path)

    def pod_templates(self, job: V1JobT) -> Iterable[PodSet]:
        alias = self.replica_alias
        for rtype, spec in job.replica_specs.items():
            replicas = 1 if spec.replicas is None else spec.replicas
            yield PodSet(rtype, f"spec.{alias}.{rtype}.template", spec.template, replicas)

    def with_templates(self, job: V1JobT, templates: Mapping[str, PodTemplate]) -> V1JobT:
        specs = {
            rtype: spec.model_copy(update={"template": dict(templates[rtype])})
            if rtype in templates
            else spec
            for rtype, spec in job.replica_specs.items()
        }
        spec_update = {self.model.replica_field: specs}
        return job.model_copy(update={"spec": job.spec.model_copy(update=spec_update)})  # type: ignore[attr-defined]

    def run_rules(self, job: V1JobT) -> RunRules:
        replicas = tuple(
            Replica(
                role=rtype,
                index=index,
                workload=self.pod_name(job, rtype, index),
                restart_policy=spec.restart_policy or self.default_restart_policy,
                container=self.default_container,
            )
            for rtype in self.ordered_types(job)
            for spec in (job.replica_specs[rtype],)
            for index in range(spec.replicas or 0)
        )
        return self.run_rules_of(job, replicas)

    def run_rules_of(self, job: V1JobT, replicas: tuple[Replica, ...]) -> RunRules:
        """Run rules for ``replicas`` of ``job``: its success policy and its run policy's
        backoffLimit and activeDeadlineSeconds (unset: no limit)."""
        policy = self.run_policy(job)
        return RunRules(
            replicas=replicas,
            success=self.success_policy(job),
            backoff_limit=policy.backoff_limit,
            active_deadline_seconds=policy.active_deadline_seconds,
        )

    def labels(self, job: V1JobT, rtype: str, index: int) -> dict[str, str]:
        """The four labels every pod and service of a replica carries."""
        return {
            LABEL_OPERATOR_NAME: self.operator_name,
            LABEL_JOB_NAME: job.name.replace("/", "-"),
            LABEL_REPLICA_TYPE: rtype.lower(),
            LABEL_REPLICA_INDEX: str(index),
        }

    def expansion(self, job: V1JobT) -> Expansion:
        envs = self.cluster_envs(job)
        services: list[ServicePlan] = []
        pods: list[PodPlan] = []
        for rtype in self.ordered_types(job):
            spec = job.replica_specs[rtype]
            ports = tuple(self._service_ports(spec).items())
            policy = spec.restart_policy or self.default_restart_policy
            for index in range(spec.replicas or 0):
                name = self.pod_name(job, rtype, index)
                labels = self.labels(job, rtype, index)
                services.append(ServicePlan(name, labels, labels, ports))
                own = dict(labels)
                if self.is_master(job, rtype, index):
                    own[LABEL_JOB_ROLE] = "master"
                pods.append(
                    PodPlan(
                        role=rtype,
                        name=name,
                        labels=own,
                        env=envs(rtype, index),
                        env_into=None if self.env_into == "all" else self.default_container,
                        init_containers=self.init_containers(job, rtype, index),
                        restart_policy="Never" if policy == "ExitCode" else policy,
                    )
                )
        return Expansion(services, pods, self.extra_objects(job))


def _replica_field(spec_model: Any) -> str:
    """The one field of ``spec_model`` typed ``dict[str, ReplicaSpec]``."""
    fields = spec_model.model_fields.items()
    (name,) = (name for name, info in fields if info.annotation == dict[str, ReplicaSpec])
    return str(name)


def _alias_of(model: Any, field_name: str) -> str:
    """The wire name of ``field_name`` on ``model`` (``tf_replica_specs`` → ``tfReplicaSpecs``)."""
    info = model.model_fields[field_name]
    return str(info.alias or field_name)
