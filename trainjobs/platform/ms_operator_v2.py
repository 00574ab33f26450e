"""MSOperatorV2: the 2022 ms-operator (MSJob mindspore.gitee.com/v1), its deploy/v1 objects.

Upstream's single-file installer ``deploy/v1/ms-operator.yaml`` (kubebuilder layout,
namespace ``ms-operator-system``, name prefix ``ms-operator-``), rebuilt from typed
code with the same names (the prefix is the resource's name):

Namespace; CRD ``msjobs.mindspore.gitee.com`` (kept on delete); ServiceAccount
``<p>-controller-manager``; Role + RoleBinding ``<p>-leader-election-role(binding)``
(configmaps and leases for the lock, events); ClusterRole + binding
``<p>-manager-role(binding)`` (pods, services, msjobs and their status/finalizers);
ClusterRole ``<p>-metrics-reader`` (``/metrics``, bound by whoever scrapes);
ClusterRole + binding ``<p>-proxy-role(binding)`` (token and access reviews for the
metrics proxy); ConfigMap ``<p>-manager-config``; Service
``<p>-controller-manager-metrics-service`` (8443); Deployment ``<p>-controller-manager``
with the ``kube-rbac-proxy`` and ``manager`` containers.

Differences from upstream: the manager image defaults to the ``v1.0.0`` release tag
instead of ``:latest``; the manager role may also create and patch events, which the
controller records on every job (upstream's role forgot them, so recording failed);
both containers drop every capability, use the runtime's seccomp profile and a
read-only root. ``metricsProxy: false`` leaves out the proxy, its role, binding and
Service (metrics then stay on 127.0.0.1:8080 inside the pod).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import K8sModel
from trainjobs.platform import install
from trainjobs.platform._legacy_operator import LIMITS, REQUESTS
from trainjobs.platform.base import Category, PlatformKind, PlatformResource
from trainjobs.platform.install import PolicyRule
from trainjobs.platform.workload import (
    Resources,
    component_labels,
    container_resources,
    create_namespace_field,
    resources_field,
    restricted_container,
)

__all__ = [
    "DEFAULT_IMAGE",
    "DEFAULT_PROXY_IMAGE",
    "KIND",
    "LEADER_ELECTION_RULES",
    "MANAGER_RULES",
    "PROXY_RULES",
    "MSOperatorV2",
    "MSOperatorV2Kind",
    "MSOperatorV2Spec",
]

DEFAULT_IMAGE = "swr.cn-south-1.myhuaweicloud.com/mindspore/ms-operator:v1.0.0"
DEFAULT_PROXY_IMAGE = "gcr.io/kubebuilder/kube-rbac-proxy:v0.8.0"
_ALL_BUT_DELETE_COLLECTION = ("create", "delete", "get", "list", "patch", "update", "watch")
_LOCK_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")

LEADER_ELECTION_RULES = (
    PolicyRule(("",), ("configmaps",), _LOCK_VERBS),
    PolicyRule(("coordination.k8s.io",), ("leases",), _LOCK_VERBS),
    PolicyRule(("",), ("events",), ("create", "patch")),
)
MANAGER_RULES = (
    PolicyRule(("",), ("events",), ("create", "patch")),
    PolicyRule(("",), ("pods",), _ALL_BUT_DELETE_COLLECTION),
    PolicyRule(("",), ("services",), ("create", "delete", "get", "list", "watch")),
    PolicyRule(("mindspore.gitee.com",), ("msjobs",), _ALL_BUT_DELETE_COLLECTION),
    PolicyRule(("mindspore.gitee.com",), ("msjobs/finalizers",), ("update",)),
    PolicyRule(("mindspore.gitee.com",), ("msjobs/status",), ("get", "patch", "update")),
)
PROXY_RULES = (
    PolicyRule(("authentication.k8s.io",), ("tokenreviews",), ("create",)),
    PolicyRule(("authorization.k8s.io",), ("subjectaccessreviews",), ("create",)),
)

# controller-runtime's ControllerManagerConfig, as upstream ships it.
_MANAGER_CONFIG = """\
apiVersion: controller-runtime.sigs.k8s.io/v1alpha1
kind: ControllerManagerConfig
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: 127.0.0.1:8080
webhook:
  port: 9443
leaderElection:
  leaderElect: true
  resourceName: 4725f7c4.gitee.com
"""


class MSOperatorV2Spec(K8sModel):
    """``spec`` of an MSOperatorV2."""

    image: str = Field(
        default=DEFAULT_IMAGE, description=f"Manager image; default {DEFAULT_IMAGE}."
    )
    create_namespace: bool = create_namespace_field()
    metrics_proxy: bool = Field(
        default=True,
        description="Serve metrics on 8443 through kube-rbac-proxy, as upstream; default true.",
    )
    metrics_proxy_image: str = Field(
        default=DEFAULT_PROXY_IMAGE, description=f"Proxy image; default {DEFAULT_PROXY_IMAGE}."
    )
    resources: Resources = resources_field("Manager", REQUESTS, LIMITS)


class MSOperatorV2(PlatformResource):
    """An MSOperatorV2 document."""

    kind: Literal["MSOperatorV2"] = "MSOperatorV2"
    spec: MSOperatorV2Spec = Field(default_factory=MSOperatorV2Spec)


class MSOperatorV2Kind(PlatformKind[MSOperatorV2]):
    """Installs the 2022 ms-operator."""

    category: ClassVar[Category] = "operator"
    title = "mindspore-ai/ms-operator v1.0.0 (MSJob mindspore.gitee.com/v1)"
    default_namespace = "ms-operator-system"

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        spec = self.document(resource).spec
        ns = self.required_namespace(resource)
        prefix = resource.name
        labels = component_labels("ms-operator", resource, "operator")
        plane = {"control-plane": "controller-manager"}
        account = f"{prefix}-controller-manager"
        election = f"{prefix}-leader-election-role"
        manager = f"{prefix}-manager-role"
        proxy = f"{prefix}-proxy-role"
        objects: list[Manifest] = []
        if spec.create_namespace:
            objects.append(install.namespace(ns, {**labels, **plane}))
        objects += [
            install.crd(REGISTRY.named("mindspore-v2").crd_file, labels),
            install.service_account(account, ns, labels),
            install.role(election, ns, LEADER_ELECTION_RULES, labels),
            install.cluster_role(manager, MANAGER_RULES, labels),
            _metrics_reader(f"{prefix}-metrics-reader", labels),
            install.role_binding(
                f"{prefix}-leader-election-rolebinding", ns, election, account, labels
            ),
            install.cluster_role_binding(
                f"{prefix}-manager-rolebinding", manager, account, ns, labels
            ),
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{prefix}-manager-config", "namespace": ns, "labels": labels},
                "data": {"controller_manager_config.yaml": _MANAGER_CONFIG},
            },
        ]
        containers = [self._manager(spec)]
        if spec.metrics_proxy:
            objects += [
                install.cluster_role(proxy, PROXY_RULES, labels),
                install.cluster_role_binding(
                    f"{prefix}-proxy-rolebinding", proxy, account, ns, labels
                ),
                _metrics_service(f"{account}-metrics-service", ns, {**labels, **plane}, plane),
            ]
            containers.insert(0, _proxy(spec))
        pod_spec: dict[str, Any] = {
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "serviceAccountName": account,
            "terminationGracePeriodSeconds": 10,
            "containers": containers,
        }
        objects.append(
            install.deployment(
                account,
                ns,
                plane,
                pod_spec,
                labels=labels,
                pod_annotations={"kubectl.kubernetes.io/default-container": "manager"},
            )
        )
        return objects

    def _manager(self, spec: MSOperatorV2Spec) -> dict[str, Any]:
        def probe(path: str, delay: int, period: int) -> dict[str, Any]:
            return {
                "httpGet": {"path": path, "port": 8081},
                "initialDelaySeconds": delay,
                "periodSeconds": period,
            }

        return {
            "name": "manager",
            "image": spec.image,
            "command": ["/manager"],
            "args": [
                "--health-probe-bind-address=:8081",
                "--metrics-bind-address=127.0.0.1:8080",
                "--leader-elect",
            ],
            "livenessProbe": probe("/healthz", 15, 20),
            "readinessProbe": probe("/readyz", 5, 10),
            "resources": spec.resources,
            **restricted_container(),
        }


def _proxy(spec: MSOperatorV2Spec) -> dict[str, Any]:
    return {
        "name": "kube-rbac-proxy",
        "image": spec.metrics_proxy_image,
        "args": [
            "--secure-listen-address=0.0.0.0:8443",
            "--upstream=http://127.0.0.1:8080/",
            "--logtostderr=true",
            "--v=0",
        ],
        "ports": [{"name": "https", "containerPort": 8443, "protocol": "TCP"}],
        "resources": container_resources(("5m", "64Mi"), ("500m", "128Mi")),
        **restricted_container(),
    }


def _metrics_reader(name: str, labels: dict[str, str]) -> Manifest:
    # A non-resource URL rule: not a PolicyRule (resources of API groups), written out here.
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": dict(labels)},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
    }


def _metrics_service(
    name: str, ns: str, labels: dict[str, str], selector: dict[str, str]
) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {
            "selector": dict(selector),
            "ports": [{"name": "https", "port": 8443, "protocol": "TCP", "targetPort": "https"}],
        },
    }


KIND = MSOperatorV2Kind()
