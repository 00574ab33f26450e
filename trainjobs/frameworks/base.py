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
from typing import Any, ClassVar, Generic, TypeVar

from trainjobs.errors import Finding, Severity, Stage
from trainjobs.frameworks import pods_refusals
from trainjobs.frameworks.capabilities import (
    Addresses,
    CarriesDefinitions,
    Definitions,
    Gang,
    JobSetConversion,
    TrainerConversion,
    run_policy_scheduling,
)
from trainjobs.k8s.data import Manifest, PodTemplate
from trainjobs.k8s.kinds import KindRef
from trainjobs.k8s.model import JobResource, model_from_generic
from trainjobs.plan import (
    JobPlan,
    OperatorRules,
    PodSet,
    RunPolicyFacts,
    RunRules,
)
from trainjobs.plan.expansion import Expansion
from trainjobs.plan.listeners import Listener
from trainjobs.plan.target_input import TargetInput

__all__ = ["Framework", "JobT", "loading_stage", "operator_rules"]

GENERATED_DIR = "generated"
"""The folder under ``crds/`` of the CRDs ``trainjobs crds`` generates (``frameworks.crds``)."""


# The pydantic error types (``spec.<type>`` codes) a CRD's openAPIV3Schema refuses, and
# those of a value outside a closed set or a bound.
_SCHEMA_ERRORS = ("missing", "extra_forbidden", "_type", "_parsing")
_CLOSED_SETS = ("literal_error", "enum", "greater_than", "less_than")

_TARGET_CAPABILITIES: dict[str, type] = {
    "trainer": TrainerConversion,
    "jobset": JobSetConversion,
}
"""The capability a framework implements to list a target in its ``targets``."""

JobT = TypeVar("JobT", bound=JobResource)
"""The custom resource model a framework reads."""


class Framework(ABC, Generic[JobT]):
    """One training runtime's custom resource and its operator's behaviour.

    Class attributes describe the plugin; methods are pure functions of a job.
    """

    name: ClassVar[str]
    """Registry key, e.g. ``tensorflow``."""
    title: ClassVar[str]
    """Human name, e.g. ``TensorFlow (TFJob)``."""
    model: type[JobT]
    """The pydantic model of the full custom resource; default the class's type argument
    (``JobT``), so ``class TensorFlow(KubeflowV1Framework[TFJob])`` reads TFJobs."""
    kind: ClassVar[KindRef]
    """The custom resource this framework reads and, on the operator target, emits;
    default ``model.kind_ref()``, set for a kind with another plural or short names."""
    targets: ClassVar[tuple[str, ...]] = ("operator", "pods")
    """Targets this framework renders to."""
    legacy: ClassVar[bool] = False
    """True for runtimes whose operator is archived or removed upstream."""
    operator: ClassVar[str] = ""
    """The operator (and version) that consumes ``kind``, e.g. ``Training Operator v1.9.4``."""
    crd_file: ClassVar[str] = ""
    """The CRD under ``crds/`` that validates the operator target's output; default, for a
    generated one, ``generated/<plural>.<group>.yaml``."""
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
    webhook_rules: ClassVar[frozenset[str]] = frozenset()
    """Codes of this framework's findings that its operator's validating webhook
    enforces: a job breaking one is refused at apply (``trainjobs.check.stages``).
    Default none: the operator has no webhook."""
    controller_rules: ClassVar[frozenset[str]] = frozenset()
    """Codes only the operator's controller enforces: the job is stored, then fails or
    is ignored. Default none; a code in neither set is a rule of trainjobs itself."""
    schema_rules: ClassVar[frozenset[str]] = frozenset()
    """Codes the kind's CRD itself enforces beyond its field types (its
    ``x-kubernetes-validations`` rules, fields it does not declare): a job breaking one
    is refused at apply, before any webhook. Default none."""
    schema_enums: ClassVar[tuple[str, ...]] = ()
    """Fields (by the name their path ends in) whose closed set of values the kind's CRD
    enforces, by enum or validation rule; elsewhere a value outside a closed set is the
    controller's to refuse. Default none."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        model = model_from_generic(cls, Framework)
        if bool(cls.definition_kinds) != (cls.definitions is not None):
            raise TypeError(f"{cls.__name__}: definition_kinds and definitions go together")
        if bool(cls.definition_kinds) != issubclass(cls, CarriesDefinitions):
            raise TypeError(f"{cls.__name__}: definition_kinds needs CarriesDefinitions")
        for target, capability in _TARGET_CAPABILITIES.items():
            if target in cls.targets and not issubclass(cls, capability):
                raise TypeError(f"{cls.__name__}: the {target} target needs {capability.__name__}")
        if model is None:
            return
        if "kind" not in cls.__dict__:
            cls.kind = model.kind_ref()
        if cls.crd_generated and "crd_file" not in cls.__dict__:
            cls.crd_file = f"{GENERATED_DIR}/{cls.kind.crd_name}.yaml"

    reconciled_managed_by: ClassVar[str | None] = None
    """The ``runPolicy.managedBy`` value under which the operator runs a job itself
    (unset counts too); the pods target refuses any other. None: the operator never
    reads the field."""
    definition_kinds: ClassVar[tuple[KindRef, ...]] = ()
    """Kinds of the documents a job of this kind refers to by name and a job file or
    stack may declare beside it (Trainer v2's TrainingRuntime and
    ClusterTrainingRuntime); ``spec.load`` accepts them and hands them to
    ``CarriesDefinitions.with_definitions``. Default none."""
    definitions: ClassVar[Definitions | None] = None
    """The capability that parses, checks and ships those documents; set exactly when
    ``definition_kinds`` is. Default None."""
    listens_on_all_addresses: ClassVar[bool] = False
    """True when the runtime's servers bind their port on every address (TensorFlow's
    gRPC server binds ``0.0.0.0:<port>``), so replicas sharing one machine cannot share
    a port number. Default False: servers bind the replica's own address (gloo, MPI)
    or only one replica listens (a rendezvous master). ``run-local`` gives each
    replica a port of its own in ``host:port`` addresses when this is True."""
    job_roles: ClassVar[frozenset[str]] = frozenset()
    """The roles whose pods, on the ``pods`` target, a batch Job owns (as the operator
    makes them) where the rest are bare Pods: an MPIJob's ``Launcher``. Default none."""
    carried_backends: ClassVar[Mapping[str, frozenset[str]]] = {}
    """The backend types the custom resource names itself (Caffe2's ``backendSpecs``),
    each with the env names its controller then sets in the pods: a binding of such a
    type goes into the resource (:meth:`written`) and only its other env, volumes and
    mounts into the pod templates (``JobPlan.with_backend``). Default none."""
    listeners: ClassVar[tuple[Listener, ...]] = ()
    """Servers inside the job that only its own pods should reach and that have no
    password of their own (the EDL master pod's etcd); the render admits only the job's
    pods to them with a NetworkPolicy unless the job says ``networkPolicy: false``.
    Default none."""

    @abstractmethod
    def default(self, job: JobT) -> JobT:
        """The job with every default its operator applies made explicit."""

    @abstractmethod
    def validate(self, job: JobT) -> list[Finding]:
        """Findings for rules the operator's webhook or controller enforces.

        Receives the *defaulted* job; paths are relative to the job document
        (``spec.tfReplicaSpecs.Worker.replicas``).
        """

    @abstractmethod
    def pod_templates(self, job: JobT) -> Iterable[PodSet]:
        """Every pod template in the job, with its path, for the schema check."""

    @abstractmethod
    def with_templates(self, job: JobT, templates: Mapping[str, PodTemplate]) -> JobT:
        """The job with the pod templates of the given roles replaced.

        Cross-cutting features (node-pool placement, gang scheduling) rewrite
        templates through this, so they work for every framework and target.
        """

    @abstractmethod
    def expansion(self, job: JobT) -> Expansion:
        """What the operator would create for the (defaulted) job; the ``pods`` target
        builds the objects from it and the plan's pod templates."""

    def pods_findings(self, job: JobT) -> list[Finding]:
        """Findings of the ``pods`` target only: what it cannot do as the operator would.

        Errors refuse the job on that target. Default: a suspended run policy and a
        ``managedBy`` other than :attr:`reconciled_managed_by` (``frameworks.pods_refusals``).
        """
        return [
            *pods_refusals.suspended(job),
            *pods_refusals.managed_elsewhere(job, self.reconciled_managed_by),
        ]

    def written(self, job: JobT, plan: JobPlan) -> JobT:
        """The defaulted ``job`` with the finished ``plan`` written back in one step: its
        pod sets' templates that differ from the job's (:meth:`with_templates`) and its
        labels. The resource the ``operator`` target emits, validation and
        :meth:`target_input` read.

        Frameworks whose custom resource carries a backend itself (``carried_backends``)
        extend this to write ``plan.backends`` there.
        """
        before = {s.role: s.template for s in self.pod_templates(job)}
        changed = {
            s.role: dict(s.template) for s in plan.pod_sets if before.get(s.role) != s.template
        }
        out = self.with_templates(job, changed) if changed else job
        if dict(plan.labels) != dict(job.metadata.labels or {}):
            out = out.with_labels(plan.labels)
        return out

    def operator_manifest(self, job: JobT) -> Manifest:
        """The custom resource the operator consumes (the defaulted job)."""
        return job.to_manifest()

    def run_policy(self, job: JobT) -> RunPolicyFacts:
        """Suspend, deadlines and retries of the (defaulted) job; default: Kubeflow's
        ``spec.runPolicy`` (every Kubeflow kind and the MPIJob keep them there)."""
        policy = getattr(getattr(job, "spec", None), "run_policy", None)
        return RunPolicyFacts(
            suspend=getattr(policy, "suspend", None),
            active_deadline_seconds=getattr(policy, "active_deadline_seconds", None),
            backoff_limit=getattr(policy, "backoff_limit", None),
            ttl_seconds_after_finished=getattr(policy, "ttl_seconds_after_finished", None),
        )

    def run_rules(self, job: JobT) -> RunRules | None:
        """The (defaulted) job's replicas, restart rules and success policy.

        None (the default) means the framework does not describe them yet, and
        ``trainjobs run-local`` refuses the job with a message saying so.
        """
        return None

    def plan(self, job: JobT) -> JobPlan:
        """The typed plan of the (defaulted) job, which every capability, target and
        check reads; :meth:`written` turns the edited plan back into the resource."""
        if isinstance(self, Gang):
            scheduling = self.scheduling_policy(job)
        else:
            scheduling = run_policy_scheduling(job)
        return JobPlan(
            kind=self.kind,
            name=job.name,
            namespace=job.namespace,
            pod_sets=tuple(self.pod_templates(job)),
            scheduling_policy=scheduling,
            run_policy=self.run_policy(job),
            labels=dict(job.metadata.labels or {}),
            annotations=dict(job.metadata.annotations or {}),
            status_conditions=dict(self.status_conditions),
            listens_on_all_addresses=self.listens_on_all_addresses,
            job_roles=self.job_roles,
            targets=self.targets,
            carried_backends=dict(self.carried_backends),
        )

    def target_input(self, job: JobT, target: str) -> TargetInput:
        """What ``target`` needs of this framework for the (defaulted, edited) job, stated
        once as data: the custom resource (``operator``), what the operator would create
        (``pods``; nothing when :meth:`pods_findings` refuses it), the Trainer or JobSet
        form (``trainer``, ``jobset``). The target takes it from the plan."""
        if target == "operator":
            carried = self.definition_manifests(job) if isinstance(self, CarriesDefinitions) else []
            definitions = tuple(carried)
            return TargetInput(
                target, resource=self.operator_manifest(job), definitions=definitions
            )
        if target == "pods":
            findings = tuple(self.pods_findings(job))
            if any(f.severity is Severity.ERROR for f in findings):
                return TargetInput(target, findings)
            return TargetInput(target, findings, expansion=self.expansion(job))
        if target == "trainer":
            if not isinstance(self, TrainerConversion):
                raise NotImplementedError(f"{self.name} has no trainer target")
            trainer, found = self.trainer_plan(job)
            return TargetInput(target, tuple(found), trainer=trainer)
        if target == "jobset":
            if not isinstance(self, JobSetConversion):
                raise NotImplementedError(f"{self.name} has no jobset target")
            jobset, found = self.jobset(job)
            return TargetInput(target, tuple(found), jobset=jobset)
        raise ValueError(f"no target {target!r}")


def operator_rules(
    framework: Framework[Any], job: Any, plan: JobPlan, target: str = "operator"
) -> OperatorRules:
    """The operator's rules for the valid, written-back ``job`` of ``plan`` on ``target``,
    as data: each of the framework's capabilities (:class:`Gang`, :class:`Addresses`)
    where it has one, else the default its class states. On the ``trainer`` target the
    operator's addresses do not hold (Trainer v2 names its own pods): none."""
    stated: dict[str, Any] = {}
    if isinstance(framework, Gang):
        stated["gang"] = framework.gang_facts(job, plan.pod_sets)
    if isinstance(framework, Addresses) and target != "trainer":
        stated["addresses"] = framework.addresses(job)
    return OperatorRules(**stated)


def loading_stage(framework: Framework[Any], finding: Finding) -> tuple[Stage, str] | None:
    """Which part of a cluster refuses a finding from validating a job of the
    framework's kind against its model, and who (from the framework's
    ``schema_rules``, ``schema_enums`` and ``operator``); None when it is trainjobs' own
    rule.

    Unknown fields, wrong types and missing required fields are refused by the CRD's
    openAPIV3Schema (unknown fields by kubectl's strict field validation), as is a
    value outside a closed set in one of ``schema_enums``; elsewhere the CRD has no
    enum or bound, so the controller meets the value (the Training Operator copies
    a restartPolicy it does not know to the pods, which the API server refuses).
    """
    error = finding.code.removeprefix("spec.")
    if finding.code in framework.schema_rules or error.endswith(_SCHEMA_ERRORS):
        if error == "missing" and finding.path.endswith("metadata.name"):
            return Stage.API_SERVER, "object names"
        return Stage.CRD_SCHEMA, "openAPIV3Schema"
    if error.startswith(_CLOSED_SETS):
        if framework.schema_enums and finding.path.endswith(framework.schema_enums):
            return Stage.CRD_SCHEMA, "openAPIV3Schema"
        return Stage.CONTROLLER, framework.operator
    return None
