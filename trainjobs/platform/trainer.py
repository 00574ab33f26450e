"""Trainer: the Kubeflow Trainer v2.3.0 install (TrainJob, TrainingRuntime, ClusterTrainingRuntime).

Objects, as ``manifests/overlays/manager`` of kubeflow/trainer v2.3.0 builds them
(kubeflow-operators.md §6.3): Namespace ``kubeflow-system``, the three CRDs,
ServiceAccount, ClusterRole and ClusterRoleBinding
``kubeflow-trainer-controller-manager``, the public Role/RoleBinding/ConfigMap
``kubeflow-trainer-public`` (the SDK reads the version from it), ConfigMap
``kubeflow-trainer-config`` (the controller's ``Configuration``), the empty webhook
certificate Secret, Service and Deployment ``kubeflow-trainer-controller-manager``,
MutatingWebhookConfiguration ``defaulter.trainer.kubeflow.org`` and
ValidatingWebhookConfiguration ``validator.trainer.kubeflow.org`` — and, unless
``installJobSet: false``, the JobSet v0.12.0 controller in the same namespace
(see ``platform.jobset``).

The controller configuration is written from typed data, so its text differs from
upstream's file (no licence header, no comments); its content is the same.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from trainjobs import errors
from trainjobs.errors import Finding, Severity
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.yamlio import dump_one
from trainjobs.platform import install
from trainjobs.platform.base import PlatformResource
from trainjobs.platform.install import PolicyRule, Webhook
from trainjobs.platform.jobset import DEFAULT_IMAGE as JOBSET_IMAGE
from trainjobs.platform.jobset import VERSION as JOBSET_VERSION
from trainjobs.platform.jobset import jobset_objects
from trainjobs.platform.operator import OperatorKind, OperatorSpec

__all__ = ["DEFAULT_IMAGE", "Trainer", "TrainerKind", "TrainerSpec"]

VERSION = "v2.3.0"
DEFAULT_IMAGE = f"ghcr.io/kubeflow/trainer/trainer-controller-manager:{VERSION}"
NAME = "kubeflow-trainer-controller-manager"
PUBLIC = "kubeflow-trainer-public"
CONFIG = "kubeflow-trainer-config"
CERT_SECRET = "kubeflow-trainer-webhook-cert"
LABELS = {
    "app.kubernetes.io/name": "trainer",
    "app.kubernetes.io/component": "manager",
    "app.kubernetes.io/part-of": "kubeflow",
}
CRD_FILES = tuple(
    f"trainer-{VERSION}/trainer.kubeflow.org_{plural}.yaml"
    for plural in ("clustertrainingruntimes", "trainingruntimes", "trainjobs")
)
API = "trainer.kubeflow.org"
WEBHOOK_OPT_OUT = {
    "matchExpressions": [
        {"key": f"{API}/webhook-validation", "operator": "NotIn", "values": ["disabled"]}
    ]
}


def controller_configuration() -> dict[str, Any]:
    """The controller's ``Configuration`` (upstream's controller_manager_config.yaml)."""
    return {
        "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
        "kind": "Configuration",
        "health": {
            "healthProbeBindAddress": ":8081",
            "readinessEndpointName": "readyz",
            "livenessEndpointName": "healthz",
        },
        "metrics": {"bindAddress": ":8443", "secureServing": True},
        "webhook": {"port": 9443, "host": ""},
        "leaderElection": {
            "leaderElect": True,
            "resourceName": API,
            "resourceNamespace": "",
            "leaseDuration": "15s",
            "renewDeadline": "10s",
            "retryPeriod": "2s",
        },
        "controller": {
            "groupKindConcurrency": {
                f"TrainJob.{API}": 5,
                f"TrainingRuntime.{API}": 1,
                f"ClusterTrainingRuntime.{API}": 1,
            }
        },
        "certManagement": {
            "enable": True,
            "webhookServiceName": NAME,
            "webhookSecretName": CERT_SECRET,
        },
        "clientConnection": {"qps": 50, "burst": 100},
        "statusServer": {"port": 10443, "qps": 5, "burst": 10},
    }


JOBSET_EXTERNAL = errors.Rule(
    "operator.jobset_external",
    f"Trainer runs every TrainJob as a JobSet; JobSet {JOBSET_VERSION} must be installed "
    "before Trainer starts",
    hint="add a JobSet operator to this stack, or install JobSet in the cluster",
    severity=Severity.ADVICE,
)


class TrainerSpec(OperatorSpec):
    """``spec`` of a Trainer."""

    install_jobset: bool = Field(
        default=True,
        alias="installJobSet",
        description=(
            f"true (default): install the JobSet {JOBSET_VERSION} controller beside Trainer, as "
            "the upstream manager overlay does. false: JobSet is installed already (a JobSet "
            "operator in this stack, or by the cluster's admins)."
        ),
    )
    install_runtimes: bool = Field(
        default=True,
        alias="installRuntimes",
        description=(
            f"true (default): install the ClusterTrainingRuntimes Trainer {VERSION} ships "
            "(torch-distributed, deepspeed-distributed, jax-distributed, mlx-distributed, "
            "xgboost-distributed, the torchtune ones), as upstream's runtimes overlay does. "
            "false: none (declare your own TrainingRuntimes beside the jobs)."
        ),
    )
    jobset_image: str = Field(
        default=JOBSET_IMAGE,
        alias="jobSetImage",
        description=f"JobSet controller image; default {JOBSET_IMAGE}.",
    )


class Trainer(PlatformResource):
    """A Trainer document."""

    kind: Literal["Trainer"] = "Trainer"
    spec: TrainerSpec = Field(default_factory=TrainerSpec)


class TrainerKind(OperatorKind[Trainer]):
    """Renders the Kubeflow Trainer v2.3.0 install."""

    title = f"Kubeflow Trainer {VERSION} (TrainJob, ClusterTrainingRuntime) with JobSet"
    default_namespace = "kubeflow-system"
    version = VERSION
    served = ((f"{API}/v1alpha1", "TrainJob"),)

    def validate(self, resource: PlatformResource) -> list[Finding]:
        if self.document(resource).spec.install_jobset:
            return []
        return [JOBSET_EXTERNAL.at("spec.installJobSet", False)]

    def rules(self) -> list[PolicyRule]:
        """The ClusterRole ``kubeflow-trainer-controller-manager`` (role.yaml)."""
        crud = ("create", "get", "list", "patch", "update", "watch")
        return [
            PolicyRule(("",), ("configmaps", "secrets"), crud),
            PolicyRule(("",), ("limitranges",), ("get", "list", "watch")),
            PolicyRule(("", "events.k8s.io"), ("events",), ("create", "patch", "update", "watch")),
            PolicyRule(
                ("admissionregistration.k8s.io",),
                ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"),
                ("get", "list", "update", "watch"),
            ),
            PolicyRule(("coordination.k8s.io",), ("leases",), ("create", "get", "list", "update")),
            PolicyRule(
                ("jobset.x-k8s.io",),
                ("jobsets",),
                ("create", "delete", "get", "list", "patch", "update", "watch"),
            ),
            PolicyRule(("node.k8s.io",), ("runtimeclasses",), ("get", "list", "watch")),
            PolicyRule(("scheduling.volcano.sh", "scheduling.x-k8s.io"), ("podgroups",), crud),
            PolicyRule(
                (API,),
                ("clustertrainingruntimes", "trainingruntimes", "trainjobs"),
                ("get", "list", "patch", "update", "watch"),
            ),
            PolicyRule(
                (API,),
                (
                    "clustertrainingruntimes/finalizers",
                    "trainingruntimes/finalizers",
                    "trainjobs/finalizers",
                    "trainjobs/status",
                ),
                ("get", "patch", "update"),
            ),
        ]

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        spec = self.document(resource).spec
        ns = self.required_namespace(resource)
        objects: list[Manifest] = [install.namespace(ns)] if spec.create_namespace else []
        objects += [install.crd(f) for f in CRD_FILES]
        public_rule = PolicyRule(("",), ("configmaps",), ("get", "list", "watch"), (PUBLIC,))
        objects += [
            install.service_account(NAME, ns),
            install.role(PUBLIC, ns, [public_rule]),
            install.cluster_role(NAME, self.rules()),
            install.group_role_binding(PUBLIC, ns, PUBLIC, "system:authenticated"),
            install.cluster_role_binding(NAME, NAME, NAME, ns),
            install.config_map(
                CONFIG, ns, {"controller_manager_config.yaml": dump_one(controller_configuration())}
            ),
            install.config_map(PUBLIC, ns, {"kubeflow_trainer_version": VERSION}),
            install.secret(CERT_SECRET, ns, empty_data=True),
            install.service(
                NAME,
                ns,
                [
                    {"name": "monitoring-port", "port": 8443, "targetPort": "metrics"},
                    {
                        "name": "webhook-server",
                        "port": 443,
                        "protocol": "TCP",
                        "targetPort": "webhook",
                    },
                    {
                        "name": "status-server",
                        "port": 10443,
                        "protocol": "TCP",
                        "targetPort": "status-server",
                    },
                ],
                {"app.kubernetes.io/component": "manager"},
            ),
            install.deployment(NAME, ns, LABELS, self._pod_spec(spec), replicas=None),
            *self._webhooks(ns),
        ]
        runtimes = REGISTRY.named("trainjob").definitions
        if spec.install_runtimes and runtimes is not None:
            objects += runtimes.shipped()
        if spec.install_jobset:
            objects += jobset_objects(ns, spec.jobset_image)
        return objects

    def _pod_spec(self, spec: TrainerSpec) -> dict[str, Any]:
        def probe(path: str, delay: int, period: int) -> dict[str, Any]:
            return {
                "httpGet": {"path": path, "port": "health"},
                "initialDelaySeconds": delay,
                "periodSeconds": period,
                "timeoutSeconds": 3,
            }

        ports = [("health", 8081), ("metrics", 8443), ("webhook", 9443), ("status-server", 10443)]
        container = {
            "args": ["--config=/controller_manager_config.yaml", "--zap-log-level=2"],
            "image": spec.image or DEFAULT_IMAGE,
            "livenessProbe": probe("/healthz", 15, 20),
            "name": "manager",
            "ports": [{"containerPort": p, "name": n, "protocol": "TCP"} for n, p in ports],
            "readinessProbe": probe("/readyz", 10, 15),
            "securityContext": {
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
                "readOnlyRootFilesystem": True,
                "runAsNonRoot": True,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "volumeMounts": [
                {
                    "mountPath": "/controller_manager_config.yaml",
                    "name": CONFIG,
                    "readOnly": True,
                    "subPath": "controller_manager_config.yaml",
                },
                install.webhook_cert_mount(),
            ],
        }
        spec.apply_resources(container)
        return {
            "containers": [container],
            "serviceAccountName": NAME,
            "volumes": [
                {"configMap": {"name": CONFIG}, "name": CONFIG},
                install.webhook_cert_volume(CERT_SECRET),
            ],
        }

    def _webhooks(self, ns: str) -> list[Manifest]:
        def hook(kind: str, verb: str, plural: str, opt_out: bool) -> Webhook:
            return Webhook(
                name=f"{verb}.{kind}.{API}",
                path=f"/{'mutate' if verb == 'defaulter' else 'validate'}-trainer-kubeflow-org-v1alpha1-{kind}",  # noqa: E501
                api_group=API,
                api_versions=("v1alpha1",),
                resources=(plural,),
                object_selector=WEBHOOK_OPT_OUT if opt_out else None,
            )

        return [
            install.webhook_configuration(
                "MutatingWebhookConfiguration",
                f"defaulter.{API}",
                NAME,
                ns,
                [hook("trainjob", "defaulter", "trainjobs", False)],
            ),
            install.webhook_configuration(
                "ValidatingWebhookConfiguration",
                f"validator.{API}",
                NAME,
                ns,
                [
                    hook("clustertrainingruntime", "validator", "clustertrainingruntimes", True),
                    hook("trainingruntime", "validator", "trainingruntimes", True),
                    hook("trainjob", "validator", "trainjobs", False),
                ],
            ),
        ]


KIND = TrainerKind()
