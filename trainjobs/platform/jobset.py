"""JobSet: the kubernetes-sigs/jobset v0.12.0 controller, which Kubeflow Trainer v2 needs.

Upstream Trainer installs JobSet from a remote release manifest
(``jobset/releases/download/v0.12.0/manifests.yaml``, kubeflow-operators.md §6.3).
trainjobs builds the same objects from typed code instead — the release manifest is
``kustomize build config/default`` of kubernetes-sigs/jobset at v0.12.0 — and ships the
JobSet CRD in ``crds/jobset-v0.12.0/``. Two ways to install it:

* inside a ``Trainer`` (its default, ``installJobSet: true``): in the Trainer's
  namespace, as Trainer's manager overlay does;
* as a ``JobSet`` operator of its own (namespace ``jobset-system``), for clusters that
  run JobSets without Trainer; the Trainer then says ``installJobSet: false``.

Two deviations from the release manifest, both inert: the CRD's
``cert-manager.io/inject-ca-from`` annotation (an unresolved kustomize variable,
``$(CERTIFICATE_NAMESPACE)/$(CERTIFICATE_NAME)``; JobSet injects its CA itself) is left
out, and the image is the promoted ``registry.k8s.io/jobset/jobset:v0.12.0`` that
Trainer's overlay substitutes for the release's staging image.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from trainjobs.k8s.data import Manifest, deep_copy
from trainjobs.platform import install
from trainjobs.platform.base import PlatformResource
from trainjobs.platform.install import PolicyRule, Webhook
from trainjobs.platform.operator import OperatorKind, OperatorSpec

__all__ = ["DEFAULT_IMAGE", "JobSet", "JobSetKind", "JobSetSpec", "jobset_objects"]

VERSION = "v0.12.0"
DEFAULT_IMAGE = f"registry.k8s.io/jobset/jobset:{VERSION}"
CRD_FILE = f"jobset-{VERSION}/jobset.x-k8s.io_jobsets.yaml"
MANAGER = "jobset-controller-manager"
WEBHOOK_SERVICE = "jobset-webhook-service"
CERT_SECRET = "jobset-webhook-server-cert"

COMMON = {
    "app.kubernetes.io/instance": "jobset",
    "app.kubernetes.io/managed-by": "kustomize",
    "app.kubernetes.io/name": "jobset",
}
"""The release's common labels (also the controller's selector: kept verbatim, since a
Deployment's selector cannot change once applied)."""
OWNED = {**COMMON, "app.kubernetes.io/created-by": "jobset", "app.kubernetes.io/part-of": "jobset"}
RBAC = {**OWNED, "app.kubernetes.io/component": "rbac"}
SELECTOR = {**COMMON, "control-plane": "controller-manager"}
CONFIG = (
    "apiVersion: config.jobset.x-k8s.io/v1alpha1\n"
    "kind: Configuration\n"
    "leaderElection:\n"
    "  leaderElect: true\n"
    "internalCertManagement:\n"
    "  enable: true\n"
)
ALL_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
ELECTION_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")
IN_JOBSET = {"matchExpressions": [{"key": "jobset.sigs.k8s.io/jobset-name", "operator": "Exists"}]}


def _manager_rules() -> list[PolicyRule]:
    return [
        PolicyRule(("",), ("nodes",), ("get", "list", "watch")),
        PolicyRule(("",), ("persistentvolumeclaims",), ("create", "get", "list", "watch")),
        PolicyRule(("",), ("pods",), ("delete", "get", "list", "patch", "update", "watch")),
        PolicyRule(("",), ("services",), ALL_VERBS),
        PolicyRule(("", "events.k8s.io"), ("events",), ("create", "patch", "update", "watch")),
        PolicyRule(
            ("admissionregistration.k8s.io",),
            ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"),
            ("get", "list", "update", "watch"),
        ),
        PolicyRule(("batch",), ("jobs",), ALL_VERBS),
        PolicyRule(("batch",), ("jobs/status",), ("get", "patch", "update")),
        PolicyRule(("jobset.x-k8s.io",), ("jobsets",), ALL_VERBS),
        PolicyRule(("jobset.x-k8s.io",), ("jobsets/finalizers",), ("update",)),
        PolicyRule(("jobset.x-k8s.io",), ("jobsets/status",), ("get", "patch", "update")),
    ]


UPSTREAM_RESOURCES: dict[str, dict[str, str | int]] = {
    "limits": {"memory": "4Gi"},
    "requests": {"cpu": "500m", "memory": "128Mi"},
}
"""The controller's resources in upstream's install."""


def _pod_spec(image: str, resources: dict[str, dict[str, str | int]]) -> dict[str, Any]:
    container = {
        "args": ["--config=/controller_manager_config.yaml", "--zap-log-level=2"],
        "command": ["/manager"],
        "image": image,
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": 8081},
            "initialDelaySeconds": 15,
            "periodSeconds": 20,
        },
        "name": "manager",
        "ports": [
            {"containerPort": 8443, "name": "metrics", "protocol": "TCP"},
            {"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"},
        ],
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": 8081},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
        },
        "resources": deep_copy(resources),
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
        "volumeMounts": [
            {
                "mountPath": "/controller_manager_config.yaml",
                "name": "manager-config",
                "subPath": "controller_manager_config.yaml",
            },
            install.webhook_cert_mount(),
        ],
    }
    return {
        "containers": [container],
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "serviceAccountName": MANAGER,
        "terminationGracePeriodSeconds": 10,
        "volumes": [
            {"configMap": {"name": "jobset-manager-config"}, "name": "manager-config"},
            install.webhook_cert_volume(CERT_SECRET),
        ],
    }


def _webhooks(ns: str) -> list[Manifest]:
    def pod_hook(name: str, path: str) -> Webhook:
        return Webhook(name, path, "", ("v1",), ("pods",), ("CREATE",), IN_JOBSET)

    def jobset_hook(name: str, path: str, operations: tuple[str, ...]) -> Webhook:
        return Webhook(name, path, "jobset.x-k8s.io", ("v1alpha2",), ("jobsets",), operations)

    mutating = [
        jobset_hook("mjobset.kb.io", "/mutate-jobset-x-k8s-io-v1alpha2-jobset", ("CREATE",)),
        pod_hook("mpod.kb.io", "/mutate--v1-pod"),
    ]
    validating = [
        jobset_hook(
            "vjobset.kb.io", "/validate-jobset-x-k8s-io-v1alpha2-jobset", ("CREATE", "UPDATE")
        ),
        pod_hook("vpod.kb.io", "/validate--v1-pod"),
    ]
    return [
        install.webhook_configuration(
            "MutatingWebhookConfiguration",
            "jobset-mutating-webhook-configuration",
            WEBHOOK_SERVICE,
            ns,
            mutating,
            COMMON,
        ),
        install.webhook_configuration(
            "ValidatingWebhookConfiguration",
            "jobset-validating-webhook-configuration",
            WEBHOOK_SERVICE,
            ns,
            validating,
            COMMON,
        ),
    ]


def jobset_objects(
    ns: str,
    image: str = DEFAULT_IMAGE,
    resources: dict[str, dict[str, str | int]] | None = None,
) -> list[Manifest]:
    """Every object of the JobSet v0.12.0 install in namespace ``ns`` (no Namespace);
    ``resources`` None: the controller gets upstream's."""
    election = [
        PolicyRule(("",), ("configmaps",), ELECTION_VERBS),
        PolicyRule(("coordination.k8s.io",), ("leases",), ELECTION_VERBS),
        PolicyRule(("",), ("events",), ("create", "patch")),
    ]
    secrets = [PolicyRule(("",), ("secrets",), ("get", "list", "update", "watch"))]
    proxy = [
        PolicyRule(("authentication.k8s.io",), ("tokenreviews",), ("create",)),
        PolicyRule(("authorization.k8s.io",), ("subjectaccessreviews",), ("create",)),
    ]
    return [
        install.crd(CRD_FILE, COMMON, conversion=(WEBHOOK_SERVICE, ns, "/convert")),
        install.service_account(MANAGER, ns, RBAC),
        install.role("jobset-leader-election-role", ns, election, RBAC),
        install.role("jobset-manager-secrets-role", ns, secrets, RBAC),
        install.cluster_role("jobset-manager-role", _manager_rules(), COMMON),
        install.cluster_role(
            "jobset-metrics-reader", [PolicyRule.urls(("/metrics",), ("get",))], OWNED
        ),
        install.cluster_role("jobset-proxy-role", proxy, OWNED),
        install.role_binding(
            "jobset-leader-election-rolebinding", ns, "jobset-leader-election-role", MANAGER, RBAC
        ),
        install.role_binding(
            "jobset-manager-secrets-rolebinding", ns, "jobset-manager-secrets-role", MANAGER, RBAC
        ),
        install.cluster_role_binding(
            "jobset-manager-rolebinding", "jobset-manager-role", MANAGER, ns, RBAC
        ),
        install.cluster_role_binding(
            "jobset-metrics-reader-rolebinding", "jobset-metrics-reader", MANAGER, ns, COMMON
        ),
        install.cluster_role_binding(
            "jobset-proxy-rolebinding", "jobset-proxy-role", MANAGER, ns, OWNED
        ),
        install.config_map(
            "jobset-manager-config", ns, {"controller_manager_config.yaml": CONFIG}, COMMON
        ),
        install.secret(CERT_SECRET, ns, labels=COMMON, secret_type=None),
        install.service(
            "jobset-controller-manager-metrics-service",
            ns,
            [{"name": "https", "port": 8443, "protocol": "TCP", "targetPort": 8443}],
            SELECTOR,
            labels=SELECTOR,
        ),
        install.service(
            WEBHOOK_SERVICE,
            ns,
            [{"port": 443, "protocol": "TCP", "targetPort": 9443}],
            SELECTOR,
            labels={**OWNED, "app.kubernetes.io/component": "webhook"},
        ),
        install.deployment(
            MANAGER,
            ns,
            SELECTOR,
            _pod_spec(image, UPSTREAM_RESOURCES if resources is None else resources),
            labels={**OWNED, "app.kubernetes.io/component": "manager"},
            pod_labels=SELECTOR,
            pod_annotations={"kubectl.kubernetes.io/default-container": "manager"},
        ),
        *_webhooks(ns),
    ]


class JobSetSpec(OperatorSpec):
    """``spec`` of a JobSet operator install."""


class JobSet(PlatformResource):
    """A JobSet (operator install) document."""

    kind: Literal["JobSet"] = "JobSet"
    spec: JobSetSpec = Field(default_factory=JobSetSpec)


class JobSetKind(OperatorKind[JobSet]):
    """Renders the JobSet v0.12.0 controller install on its own."""

    title = f"JobSet {VERSION} controller (needed by Kubeflow Trainer v2)"
    default_namespace = "jobset-system"
    version = VERSION
    served = (("jobset.x-k8s.io/v1alpha2", "JobSet"),)

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        spec = self.document(resource).spec
        ns = self.required_namespace(resource)
        head = [
            install.namespace(ns, {**OWNED, **SELECTOR, "app.kubernetes.io/component": "manager"})
        ]
        objects = jobset_objects(ns, spec.image or DEFAULT_IMAGE, spec.resources)
        return [*head, *objects] if spec.create_namespace else objects


KIND = JobSetKind()
