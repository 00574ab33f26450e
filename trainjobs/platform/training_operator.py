"""TrainingOperator: the Kubeflow Training Operator v1 install (standalone overlay).

Objects, as ``manifests/overlays/standalone`` of kubeflow/trainer at the chosen tag
builds them (kubeflow-operators.md §6.1): Namespace ``kubeflow``, one CRD per
enabled job kind, ServiceAccount, ClusterRole and ClusterRoleBinding
``training-operator``, the empty Secret the operator writes its webhook certificate
into, Service ``training-operator`` (metrics 8080, webhook 443→9443), Deployment
``training-operator`` and ValidatingWebhookConfiguration
``validator.training-operator.kubeflow.org``.

``version: v1.8.1`` is the last release with MXJob (its webhook replaces JAXJob's,
and it has no JAXJob at all); everything else is the same shape with v1.8.1's image
and CRDs.

RBAC: upstream's ClusterRole is the union of what every controller of the release
declares (the ``+kubebuilder:rbac`` markers of ``pkg/controller.v1/<kind>/`` and
``pkg/cert/cert.go``), cluster-wide. By default (``rbac: least-privilege``) trainjobs
grants what the enabled kinds' controllers declare and nothing else: MPIJob's launcher
Role, RoleBinding, ServiceAccount, hostfile ConfigMap and ``pods/exec`` only when MPIJob
is enabled, HPAs only with PyTorchJob, PodGroup writes only for the gang scheduler in
use; the certificate rotator's Secret access is a Role in the operator's namespace
(its cache watches only that namespace), and it may update only its own
ValidatingWebhookConfiguration. ``rbac: upstream`` installs upstream's ClusterRole
verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from trainjobs import errors
from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.images import KUBECTL_DELIVERY_IMAGE
from trainjobs.platform import install
from trainjobs.platform.base import PlatformResource
from trainjobs.platform.install import PolicyRule, Webhook
from trainjobs.platform.operator import (
    GangScheduler,
    OperatorKind,
    OperatorSpec,
    gang_prerequisite,
)

__all__ = ["IMAGES", "SCHEMES", "TrainingOperator", "TrainingOperatorKind", "TrainingOperatorSpec"]

Version = Literal["v1.9.4", "v1.8.1"]
NAME = "training-operator"
"""Name of the ServiceAccount, RBAC, Service and Deployment (fixed upstream: the
operator's certificate rotator looks its Service and Secret up by these names)."""
CERT_SECRET = "training-operator-webhook-cert"
WEBHOOK_CONFIG = "validator.training-operator.kubeflow.org"
SELECTOR = {"control-plane": "kubeflow-training-operator"}
APP = {"app": NAME}

IMAGES: dict[str, str] = {
    "v1.9.4": "ghcr.io/kubeflow/training-v1/training-operator:v1-93c5489",
    "v1.8.1": "kubeflow/training-operator:v1-04f9f13",
}
"""The image each release's standalone overlay pins."""


@dataclass(frozen=True)
class Scheme:
    """One job kind the operator can run (``--enable-scheme``)."""

    kind: str
    plural: str
    webhook: bool = True
    """Whether a validating webhook admits it (MPIJob v1 is checked in the controller)."""
    webhook_deletes: bool = False
    """Whether the webhook also sees DELETE (v1.8.1's MXJob webhook does)."""

    def crd_file(self, version: str) -> str:
        return f"training-operator-{version}/kubeflow.org_{self.plural}.yaml"


SCHEMES: dict[str, tuple[Scheme, ...]] = {
    "v1.9.4": (
        Scheme("TFJob", "tfjobs"),
        Scheme("PyTorchJob", "pytorchjobs"),
        Scheme("XGBoostJob", "xgboostjobs"),
        Scheme("MPIJob", "mpijobs", webhook=False),
        Scheme("PaddleJob", "paddlejobs"),
        Scheme("JAXJob", "jaxjobs"),
    ),
    "v1.8.1": (
        Scheme("TFJob", "tfjobs"),
        Scheme("MXJob", "mxjobs", webhook_deletes=True),
        Scheme("PyTorchJob", "pytorchjobs"),
        Scheme("XGBoostJob", "xgboostjobs"),
        Scheme("MPIJob", "mpijobs", webhook=False),
        Scheme("PaddleJob", "paddlejobs"),
    ),
}
"""The kinds each release runs, in the order its install lists their CRDs."""

ALL_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
READ = ("get", "list", "watch")

# What every v1 job controller declares (pkg/controller.v1/<kind>/*_controller.go,
# v1.9.4 and v1.8.1 alike): its pods and events.
CONTROLLER_RULES = (
    PolicyRule(("",), ("events",), ALL_VERBS),
    PolicyRule(("",), ("pods",), ALL_VERBS),
)
SERVICES = PolicyRule(("",), ("services",), ("create", "delete", "get", "list", "watch"))
# What one controller declares beyond that: the per-replica Services of every kind but
# MPIJob v1 (its launcher reaches workers through pods/exec); PyTorchJob's elastic HPA;
# MPIJob v1's launcher ServiceAccount, Role and RoleBinding (a Role can only grant what
# its creator holds, hence pods/exec) and its hostfile ConfigMap.
KIND_RULES: dict[str, tuple[PolicyRule, ...]] = {
    "TFJob": (SERVICES,),
    "PyTorchJob": (
        SERVICES,
        PolicyRule(("autoscaling",), ("horizontalpodautoscalers",), ALL_VERBS),
    ),
    "XGBoostJob": (SERVICES,),
    "PaddleJob": (SERVICES,),
    "JAXJob": (SERVICES,),
    "MXJob": (SERVICES,),
    "MPIJob": (
        PolicyRule(("",), ("configmaps",), ("create", "list", "update", "watch")),
        PolicyRule(("",), ("pods/exec",), ("create",)),
        PolicyRule(("",), ("serviceaccounts",), ("create", "get", "list", "watch")),
        PolicyRule(
            ("rbac.authorization.k8s.io",), ("rolebindings",), ("create", "list", "update", "watch")
        ),
        PolicyRule(
            ("rbac.authorization.k8s.io",), ("roles",), ("create", "list", "update", "watch")
        ),
    ),
}
PODGROUP_GROUPS = {"volcano": "scheduling.volcano.sh", "scheduler-plugins": "scheduling.x-k8s.io"}
"""The API group of the PodGroups each gang mechanism uses."""

SCHEMES_EMPTY = errors.Rule(
    "operator.schemes_empty",
    "an operator that runs no job kind installs nothing useful",
    hint="name at least one of {kinds}, or drop the field",
)
SCHEME_UNKNOWN = errors.Rule(
    "operator.scheme_unknown", "Training Operator {version} does not run {name}", hint="{hint}"
)


class TrainingOperatorSpec(OperatorSpec):
    """``spec`` of a TrainingOperator."""

    version: Version = Field(
        default="v1.9.4",
        description="Release to install: v1.9.4 (default) or v1.8.1 (the last with MXJob).",
    )
    enabled_schemes: list[str] | None = Field(
        default=None,
        description=(
            "Job kinds the operator runs (--enable-scheme), e.g. [TFJob, PyTorchJob]; only "
            "their CRDs, webhooks and RBAC are installed. Default every kind of the release "
            "(v1.9.4: TFJob, PyTorchJob, XGBoostJob, MPIJob, PaddleJob, JAXJob)."
        ),
    )
    gang_scheduler: str | None = Field(
        default=None,
        description=(
            "--gang-scheduler-name: 'volcano' for Volcano PodGroups, any other name for "
            "scheduler-plugins coscheduling with that scheduler (e.g. "
            "scheduler-plugins-scheduler). The PodGroup CRD must be installed. Default off."
        ),
    )
    rbac: Literal["least-privilege", "upstream"] = Field(
        default="least-privilege",
        description=(
            "least-privilege (default): only what the enabled kinds' controllers and the "
            "certificate rotator declare, the webhook Secret in a namespaced Role. "
            "upstream: the release's ClusterRole verbatim (every kind, pods/exec, Roles, "
            "Secrets cluster-wide)."
        ),
    )


class TrainingOperator(PlatformResource):
    """A TrainingOperator document."""

    kind: Literal["TrainingOperator"] = "TrainingOperator"
    spec: TrainingOperatorSpec = Field(default_factory=TrainingOperatorSpec)


class TrainingOperatorKind(OperatorKind[TrainingOperator]):
    """Renders the Training Operator v1 install."""

    title = "Kubeflow Training Operator v1 (TFJob, PyTorchJob, XGBoostJob, MPIJob v1 …)"
    default_namespace = "kubeflow"
    version = "v1.9.4 or v1.8.1"

    def describe(self, resource: PlatformResource) -> str:
        return f"{self.kind} {resource.name!r} ({self.document(resource).spec.version})"

    def schemes(self, resource: PlatformResource) -> tuple[Scheme, ...]:
        """The enabled schemes, in the release's order."""
        spec = self.document(resource).spec
        every = SCHEMES[spec.version]
        if spec.enabled_schemes is None:
            return every
        wanted = {s.lower() for s in spec.enabled_schemes}
        return tuple(s for s in every if s.kind.lower() in wanted)

    def validate(self, resource: PlatformResource) -> list[Finding]:
        spec = self.document(resource).spec
        if spec.enabled_schemes is None:
            return gang_prerequisite(spec.gang_scheduler)
        known = {s.kind.lower(): s.kind for s in SCHEMES[spec.version]}
        findings = []
        if not spec.enabled_schemes:
            findings.append(
                SCHEMES_EMPTY.at("spec.enabledSchemes", [], kinds=", ".join(known.values()))
            )
        for i, name in enumerate(spec.enabled_schemes):
            if name.lower() in known:
                continue
            other = next(v for v in SCHEMES if v != spec.version)
            elsewhere = any(s.kind.lower() == name.lower() for s in SCHEMES[other])
            hint = (
                f"{name} needs version: {other}"
                if elsewhere
                else f"use one of {', '.join(known.values())}"
            )
            findings.append(
                SCHEME_UNKNOWN.at(
                    f"spec.enabledSchemes[{i}]", name, version=spec.version, name=name, hint=hint
                )
            )
        return [*findings, *gang_prerequisite(spec.gang_scheduler)]

    def served_kinds(self, resource: PlatformResource) -> tuple[tuple[str, str], ...]:
        return tuple(("kubeflow.org/v1", s.kind) for s in self.schemes(resource))

    def gang(self, resource: PlatformResource) -> GangScheduler | None:
        flag = self.document(resource).spec.gang_scheduler
        return GangScheduler.from_flag(flag) if flag else None

    def rules(self, resource: PlatformResource) -> list[PolicyRule]:
        """The ClusterRole's rules: upstream's role.yaml, or what the enabled kinds need."""
        spec = self.document(resource).spec
        if spec.rbac == "upstream":
            return _upstream_rules(SCHEMES[spec.version])
        schemes = self.schemes(resource)
        needed = [*CONTROLLER_RULES]
        for scheme in schemes:
            needed += KIND_RULES.get(scheme.kind, ())
            needed += _job_rules(scheme.plural)
        gang = self.gang(resource)
        for group in sorted(PODGROUP_GROUPS.values()):
            # Every controller watches PodGroups whenever their CRD is installed (its
            # SetupWithManager asks the RESTMapper), gang scheduling on or not; only
            # the gang scheduler in use has its PodGroups written.
            writes = gang is not None and PODGROUP_GROUPS[gang.mechanism] == group
            needed.append(PolicyRule((group,), ("podgroups",), ALL_VERBS if writes else READ))
        needed += [
            PolicyRule(
                ("admissionregistration.k8s.io",),
                ("validatingwebhookconfigurations",),
                ("list", "watch"),
            ),
            PolicyRule(
                ("admissionregistration.k8s.io",),
                ("validatingwebhookconfigurations",),
                ("get", "update"),
                resource_names=(WEBHOOK_CONFIG,),
            ),
        ]
        return install.merge_rules(needed)

    def namespaced_rules(self, resource: PlatformResource) -> list[PolicyRule]:
        """The Role in the operator's namespace (least-privilege only): the certificate
        rotator reads Secrets there through a cache of that namespace and writes one."""
        if self.document(resource).spec.rbac == "upstream":
            return []
        return [
            PolicyRule(("",), ("secrets",), ("list", "watch")),
            PolicyRule(("",), ("secrets",), ("get", "update"), resource_names=(CERT_SECRET,)),
        ]

    def _args(self, resource: PlatformResource) -> list[str]:
        spec = self.document(resource).spec
        args = []
        if spec.enabled_schemes is not None and len(self.schemes(resource)) < len(
            SCHEMES[spec.version]
        ):
            args += [f"--enable-scheme={s.kind.lower()}" for s in self.schemes(resource)]
        if spec.gang_scheduler:
            args.append(f"--gang-scheduler-name={spec.gang_scheduler}")
        if any(s.kind == "MPIJob" for s in self.schemes(resource)):
            # Its default is :latest; pinned, the launcher is the pods target's.
            args.append(f"--mpi-kubectl-delivery-image={KUBECTL_DELIVERY_IMAGE}")
        return args

    def _pod_spec(self, resource: PlatformResource) -> dict[str, Any]:
        spec = self.document(resource).spec
        container: dict[str, Any] = {"command": ["/manager"]}
        args = self._args(resource)
        if args:
            container["args"] = args
        container.update(
            {
                "image": spec.image or IMAGES[spec.version],
                "name": NAME,
                "ports": [
                    {"containerPort": 8080},
                    {"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"},
                ],
                "env": [
                    {
                        "name": "MY_POD_NAMESPACE",
                        "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                    },
                    {
                        "name": "MY_POD_NAME",
                        "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                    },
                ],
                "securityContext": {"allowPrivilegeEscalation": False},
                "volumeMounts": [install.webhook_cert_mount()],
                "livenessProbe": _probe("/healthz", 15, 20),
                "readinessProbe": _probe("/readyz", 10, 15),
            }
        )
        spec.apply_resources(container)
        return spec.finish_pod_spec(
            {
                "containers": [container],
                "serviceAccountName": NAME,
                "terminationGracePeriodSeconds": 10,
                "volumes": [install.webhook_cert_volume(CERT_SECRET)],
            }
        )

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        spec = self.document(resource).spec
        ns = self.required_namespace(resource)
        objects: list[Manifest] = []
        if spec.create_namespace:
            objects.append(install.namespace(ns))
        schemes = self.schemes(resource)
        objects += [install.crd(s.crd_file(spec.version)) for s in schemes]
        objects += [
            install.service_account(NAME, ns, APP),
            install.cluster_role(NAME, self.rules(resource)),
            install.cluster_role_binding(NAME, NAME, NAME, ns, APP),
        ]
        namespaced = self.namespaced_rules(resource)
        if namespaced:
            objects += [
                install.role(NAME, ns, namespaced, APP),
                install.role_binding(NAME, ns, NAME, NAME, APP),
            ]
        objects += [
            install.secret(CERT_SECRET, ns, empty_data=True),
            install.service(
                NAME,
                ns,
                [
                    {"name": "monitoring-port", "port": 8080, "targetPort": 8080},
                    {"name": "webhook-server", "port": 443, "protocol": "TCP", "targetPort": 9443},
                ],
                SELECTOR,
                labels=APP,
                annotations={
                    "prometheus.io/path": "/metrics",
                    "prometheus.io/scrape": "true",
                    "prometheus.io/port": "8080",
                },
                service_type="ClusterIP",
            ),
            install.deployment(
                NAME,
                ns,
                SELECTOR,
                self._pod_spec(resource),
                pod_annotations={"sidecar.istio.io/inject": "false"},
            ),
        ]
        hooks = [
            Webhook(
                name=f"validator.{s.kind.lower()}.training-operator.kubeflow.org",
                path=f"/validate-kubeflow-org-v1-{s.kind.lower()}",
                api_group="kubeflow.org",
                api_versions=("v1",),
                resources=(s.plural,),
                operations=("CREATE", "UPDATE", "DELETE")
                if s.webhook_deletes
                else ("CREATE", "UPDATE"),
            )
            for s in sorted(schemes, key=lambda s: s.plural)
            if s.webhook
        ]
        if hooks:
            objects.append(
                install.webhook_configuration(
                    "ValidatingWebhookConfiguration", WEBHOOK_CONFIG, NAME, ns, hooks, SELECTOR
                )
            )
        return objects


def _job_rules(plural: str) -> list[PolicyRule]:
    return [
        PolicyRule(("kubeflow.org",), (plural,), ALL_VERBS),
        PolicyRule(("kubeflow.org",), (f"{plural}/finalizers",), ("update",)),
        PolicyRule(("kubeflow.org",), (f"{plural}/status",), ("get", "patch", "update")),
    ]


def _upstream_rules(schemes: tuple[Scheme, ...]) -> list[PolicyRule]:
    """manifests/base/rbac/role.yaml of the release, rule for rule."""
    core = [
        PolicyRule(("",), ("configmaps",), ("create", "list", "update", "watch")),
        PolicyRule(("",), ("events",), ALL_VERBS),
        PolicyRule(("",), ("pods",), ALL_VERBS),
        PolicyRule(("",), ("pods/exec",), ("create",)),
        PolicyRule(("",), ("secrets",), ("get", "list", "update", "watch")),
        PolicyRule(("",), ("serviceaccounts",), ("create", "get", "list", "watch")),
        PolicyRule(("",), ("services",), ("create", "delete", "get", "list", "watch")),
        PolicyRule(
            ("admissionregistration.k8s.io",),
            ("validatingwebhookconfigurations",),
            ("get", "list", "update", "watch"),
        ),
        PolicyRule(("autoscaling",), ("horizontalpodautoscalers",), ALL_VERBS),
    ]
    jobs = [rule for plural in sorted(s.plural for s in schemes) for rule in _job_rules(plural)]
    rest = [
        PolicyRule(
            ("rbac.authorization.k8s.io",), ("rolebindings",), ("create", "list", "update", "watch")
        ),
        PolicyRule(
            ("rbac.authorization.k8s.io",), ("roles",), ("create", "list", "update", "watch")
        ),
        PolicyRule(("scheduling.volcano.sh",), ("podgroups",), ALL_VERBS),
        PolicyRule(("scheduling.x-k8s.io",), ("podgroups",), ALL_VERBS),
    ]
    return [*core, *jobs, *rest]


def _probe(path: str, delay: int, period: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": 8081},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": 3,
    }


KIND = TrainingOperatorKind()
