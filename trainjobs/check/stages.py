"""Which part of a real cluster would refuse what each finding reports (:class:`Stage`).

``kubectl apply`` of a job passes, in order, the API server's own validation and the
CRD schema, the validating admission webhooks and Pod Security admission (for Pods);
what passes is stored, and the operator's controller acts on it later. A user needs to
know which: a webhook or schema refusal fails the apply at once, a controller rule
lets the job be created and fail (or be ignored) afterwards.

Findings are attributed here, by their code and, for a job's own rules, by the kind
and operator of the job they belong to (a framework knows its operator); the tables
below name the upstream code each attribution reproduces. A code no table names is a
rule of trainjobs itself: nothing on the cluster refuses it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from trainjobs.errors import Finding, Stage
from trainjobs.frameworks.base import Framework
from trainjobs.spec.entry import JobEntry, Target

__all__ = ["WEBHOOK_RULES", "attribute", "stage_of"]

# Training Operator v1.9.4 pkg/webhooks/webhooks.go SupportedSchemeWebhook: TF, PyTorch,
# XGBoost, Paddle and JAX get a validating webhook; MPIJob v1 gets `scaffold` (none).
# Each webhook (pkg/webhooks/<kind>/*_webhook.go) checks the name (NameIsDNS1035Label),
# that every replica has containers, each with an image, one named as the kind's
# default container, and (not TFJob) that the replica types are the kind's own.
_V1_COMMON = frozenset(
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
_RUN_POLICY = frozenset({"run_policy.managed_by"})

WEBHOOK_RULES: dict[tuple[str, str], frozenset[str]] = {
    # tfjob_webhook.go validateTFReplicaSpecs: "must not have more than 1 Chief or Master".
    ("kubeflow.org/v1", "TFJob"): _V1_COMMON | _RUN_POLICY | {"tfjob.chief_and_master"},
    # pytorchjob_webhook.go validateSpec (elasticPolicy needs a Worker, nProcPerNode
    # deprecated: a warning, forbidden beside spec.nprocPerNode) and
    # validatePyTorchReplicaSpecs (Master replicas must be 1, Worker at least 1).
    ("kubeflow.org/v1", "PyTorchJob"): _V1_COMMON
    | _RUN_POLICY
    | {
        "pytorch.master_replicas",
        "pytorch.worker_replicas",
        "pytorch.elastic_needs_worker",
        "pytorch.nproc_twice",
        "pytorch.nproc_deprecated",
    },
    # xgboostjob_webhook.go validateXGBReplicaSpecs: a Master must be present, replicas 1.
    ("kubeflow.org/v1", "XGBoostJob"): _V1_COMMON
    | _RUN_POLICY
    | {"xgboost.master_missing", "xgboost.master_replicas"},
    ("kubeflow.org/v1", "PaddleJob"): _V1_COMMON | _RUN_POLICY,
    ("kubeflow.org/v1", "JAXJob"): _V1_COMMON,
    # Training Operator v1.8.1 pkg/webhooks/mxnet/mxnet_webhook.go returns only the
    # deprecation warning; the MXJob rules are its controller's (below).
    ("kubeflow.org/v1", "MXJob"): frozenset({"mxjob.deprecated"}),
}
"""(apiVersion, kind) → the finding codes its operator's validating webhook enforces."""

_CONTROLLER_RULES: dict[tuple[str, str], frozenset[str]] = {
    # MPIJob v1 has no webhook: Training Operator pkg/controller.v1/mpi/
    # mpijob_controller.go Reconcile calls ValidateV1MpiJobSpec (pkg/apis/kubeflow.org/v1/
    # mpi_validation.go: replica types, containers with image and name, one Launcher)
    # and fails the job.
    ("kubeflow.org/v1", "MPIJob"): frozenset(
        {
            "mpi.launcher_missing",
            "mpi.launcher_replicas",
            "mpi.replica_type",
            "template.containers",
            "template.image",
            "template.name",
        }
    ),
    # MPI Operator v0.8.0 has no webhook: pkg/controller/mpi_job_controller.go syncHandler
    # runs validation.ValidateMPIJob (pkg/apis/kubeflow/validation/validation.go: the
    # worker host name is a DNS-1035 label, one Launcher, Worker replicas >= 1,
    # restartPolicy, containers, managedBy) and records a ValidationError event.
    ("kubeflow.org/v2beta1", "MPIJob"): frozenset(
        {
            "name.dns1035",
            "mpi.launcher_missing",
            "mpi.launcher_replicas",
            "mpi.worker_replicas",
            "mpi.restart_policy",
            "restart.framework",
            "mpi.managed_by",
            "template.containers",
        }
    ),
    # Training Operator v1.8.1 pkg/apis/kubeflow.org/v1/mxnet_validation.go, called by
    # the MXJob controller: DNS-1035 name, a container named mxnet, one Scheduler.
    ("kubeflow.org/v1", "MXJob"): frozenset(
        {
            "name.dns1035",
            "template.containers",
            "template.image",
            "template.default_container",
            "mxjob.scheduler_replicas",
        }
    ),
}
"""(apiVersion, kind) → codes only the operator's controller enforces (no webhook)."""

# Rules of every Training Operator kind that its controller, not a webhook, acts on.
_V1_CONTROLLER = frozenset(
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

# Findings about objects the operator creates itself: the API server refuses them when
# the controller creates them (core/service.go, core/pod.go), after the job was stored.
_CREATED_BY_OPERATOR = {
    "name.too_long": ("Service and Pod names", "them"),
    "service.port_names": ("Service validation", "the Services"),
}

_API_SERVER = {
    "schema.k8s": "OpenAPI schema of the kind",
    "name.invalid": "object names",
    "namespace.invalid": "object names",
    "label.invalid": "label and annotation validation",
    "annotation.invalid": "label and annotation validation",
    "pod.invalid": "Pod validation",
    "api.invalid": "Pod validation",
    "quantity.invalid": "resource quantities",
    "template.mount_path": "Pod validation",
    "template.volume_mount": "Pod validation",
    # Extended resources: requests must equal limits (core validation).
    "gpu.limits": "Pod validation",
    "restart.workload": "workload validation",
    # A custom resource whose version no CRD serves: "no matches for kind".
    "crd.version_missing": "no CRD serves this version",
}

_SCHEDULER = {
    # A gang larger than the pods that can start together never starts: Volcano and
    # scheduler-plugins keep every member Pending.
    "gang.min_available": "gang scheduler",
    "gang.deadlock": "gang scheduler",
    "pool.shape": "node autoscaler",
    "queue.quota": "Kueue never admits the job",
}

# What the loader's validation of a job's custom resource reports (spec.<pydantic error>
# type). Unknown fields, wrong types and missing required fields are refused by the
# CRD's openAPIV3Schema (unknown fields by kubectl's strict field validation). A value
# outside a closed set or a bound is not: the Training Operator CRDs have no enum and
# no minimum (a restartPolicy the operator does not know is copied to the pods, which
# the API server refuses), the MPI Operator v0.8 CRD an enum for mpiImplementation only.
_SCHEMA_ERRORS = ("missing", "extra_forbidden", "_type", "_parsing")
_CLOSED_SETS = ("literal_error", "enum", "greater_than", "less_than")
_CRD_ENUMS = ("mpiImplementation",)


def _loaded(finding: Finding, operator: str) -> tuple[Stage, str] | None:
    """The stage of a loader finding about a job's custom resource, else None."""
    code, path = finding.code, finding.path
    if not code.startswith("spec.") or not path.startswith("jobs[") or ".trainjobs" in path:
        return None
    error = code.removeprefix("spec.")
    if error == "missing" and path.endswith("metadata.name"):
        return Stage.API_SERVER, "object names"
    if error.endswith(_SCHEMA_ERRORS):
        return Stage.CRD_SCHEMA, "openAPIV3Schema"
    if error.startswith(_CLOSED_SETS):
        if path.endswith(_CRD_ENUMS):
            return Stage.CRD_SCHEMA, "openAPIV3Schema"
        return Stage.CONTROLLER, operator
    return None


# A pod's containers (and init containers) are a list map keyed by name in every
# upstream CRD's embedded PodTemplateSpec (x-kubernetes-list-map-keys: [name]): two of
# one name are refused with the custom resource, not when its pods are created.
_DUPLICATE_CONTAINER = re.compile(r"\.(containers|initContainers)\[\d+\]\.name$")


def _upstream_crd(framework: Framework[Any] | None) -> bool:
    """Whether the job's CRD is its operator's own (full PodTemplateSpec schema, with
    quantity patterns and list-map keys), not one trainjobs generated for a seed kind."""
    return framework is not None and bool(framework.crd_file) and not framework.crd_generated


def _crd_refuses(finding: Finding, framework: Framework[Any] | None) -> bool:
    """A Pod rule the operator's CRD already enforces on the job's templates."""
    if not _upstream_crd(framework):
        return False
    if finding.code == "quantity.invalid":
        return True
    duplicate = _DUPLICATE_CONTAINER.search(finding.path)
    return (
        finding.code == "pod.invalid"
        and duplicate is not None
        and finding.message.startswith("two containers")
        and f".{duplicate.group(1)}[" in finding.message
    )


def _pod_level(target: Target | None) -> str:
    # On the trainer target, too, the pods are made later (TrainJob → JobSet → Jobs).
    return "when the operator creates the pods" if target in ("operator", "trainer") else ""


def _with(what: str, when: str) -> str:
    return f"{what}, {when}" if when else what


def stage_of(
    finding: Finding, framework: Framework[Any] | None = None, target: Target | None = None
) -> tuple[Stage, str]:
    """The stage that refuses ``finding`` on a real cluster, and who it is.

    ``framework`` and ``target`` are those of the job the finding belongs to (None for
    a stack-level finding): a job's own rules are its operator's webhook's or
    controller's, and a Pod rule of a job on the operator target bites only when the
    operator creates the pods (the job itself is accepted).
    """
    code = finding.code
    if code.startswith("pss."):
        # The namespace's enforce label; on the operator target the job is accepted and
        # the operator's pods are the ones refused.
        return Stage.POD_SECURITY, _with(code.split(".")[1], _pod_level(target))
    if code == "schema.crd":
        return Stage.CRD_SCHEMA, "openAPIV3Schema"
    if code == "schema.pod_template":
        # Every Kubeflow CRD embeds the full PodTemplateSpec schema.
        if target == "operator":
            return Stage.CRD_SCHEMA, "openAPIV3Schema"
        return Stage.API_SERVER, "OpenAPI schema of Pod"
    if code.startswith("schedule."):
        return Stage.SCHEDULER, "scheduler"
    if code in _SCHEDULER:
        return Stage.SCHEDULER, _SCHEDULER[code]
    kind = (framework.kind.api_version, framework.kind.kind) if framework else None
    operator = framework.operator if framework else ""
    if kind is not None:
        stage = None
        if code in WEBHOOK_RULES.get(kind, ()):
            stage = Stage.WEBHOOK
        elif code in _CONTROLLER_RULES.get(kind, ()) or (
            kind[0] == "kubeflow.org/v1" and code in _V1_CONTROLLER
        ):
            stage = Stage.CONTROLLER
        if stage is not None and target not in (None, "operator"):
            if code == "name.dns1035" and target == "pods":
                # The pods target creates the Pods and Services named after the job.
                return Stage.API_SERVER, "Service and Pod names"
            # No operator sees the job on the pods or trainer target: trainjobs holds
            # the job to the operator's rule, which no part of the cluster checks.
            who = "webhook" if stage is Stage.WEBHOOK else "controller"
            return Stage.TRAINJOBS, f"{operator} {who} rule, kept without the operator"
        if stage is not None:
            return stage, operator
        if code in _CREATED_BY_OPERATOR:
            what, objects = _CREATED_BY_OPERATOR[code]
            when = f"when the operator creates {objects}" if target == "operator" else ""
            return Stage.API_SERVER, _with(what, when)
    loaded = _loaded(finding, operator)
    if loaded is not None:
        return loaded
    if code in _API_SERVER:
        if target == "operator" and _crd_refuses(finding, framework):
            return Stage.CRD_SCHEMA, "openAPIV3Schema"
        what = _API_SERVER[code]
        in_template = ".template." in finding.path
        if what.startswith("Pod") or in_template or code in ("quantity.invalid", "gpu.limits"):
            return Stage.API_SERVER, _with(what, _pod_level(target))
        return Stage.API_SERVER, what
    return Stage.TRAINJOBS, ""


def _owner(path: str, entries: Sequence[JobEntry]) -> JobEntry | None:
    """The job whose path ``path`` starts with (``jobs[0]``, ``jobs[0].spec…``)."""
    best: JobEntry | None = None
    for entry in entries:
        prefix = entry.path
        inside = path == prefix or path.startswith((f"{prefix}.", f"{prefix}[", f"{prefix} "))
        if inside and (best is None or len(prefix) > len(best.path)):
            best = entry
    return best


def attribute(
    findings: Iterable[Finding],
    entries: Sequence[JobEntry] = (),
    target: Target | None = None,
    default_target: Target = "operator",
) -> list[Finding]:
    """``findings``, each with its stage (one already set is kept).

    ``entries`` are the stack's jobs, to find the job (framework and target) a finding
    belongs to by its path; ``target`` overrides each job's own, as in ``run``.
    """
    out: list[Finding] = []
    for finding in findings:
        if finding.stage is not None:
            out.append(finding)
            continue
        entry = _owner(finding.path, entries)
        framework = entry.framework if entry else None
        chosen = (target or entry.target(default_target)) if entry else None
        stage, by = stage_of(finding, framework, chosen)
        out.append(finding.staged(stage, by))
    return out
