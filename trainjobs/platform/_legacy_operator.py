"""The install shared by the client-go-era seed controllers (caffe2-operator, ms-operator 2020).

Both are one binary with glog flags that watches its kind in every namespace and
takes an Endpoints leader lock of a fixed name in ``$KUBEFLOW_NAMESPACE``. Their
install is therefore the same set of objects: Namespace, the CRD, a ServiceAccount,
a ClusterRole for the calls the controller makes, a Role in its own namespace for
the lock, the bindings, and a Deployment of one replica.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import K8sModel
from trainjobs.platform import install
from trainjobs.platform.base import PlatformResource
from trainjobs.platform.install import PolicyRule
from trainjobs.platform.workload import (
    NONROOT_UID,
    Resources,
    component_labels,
    create_namespace_field,
    resources_field,
    restricted_container,
)

__all__ = ["LIMITS", "NONROOT_UID", "REQUESTS", "LegacyOperator", "LegacyOperatorSpec"]


REQUESTS = ("10m", "64Mi")
LIMITS = ("500m", "128Mi")
"""The operator container's default (cpu, memory) requests and limits."""


class LegacyOperatorSpec(K8sModel):
    """Settings every client-go-era seed operator takes."""

    create_namespace: bool = create_namespace_field()
    resources: Resources = resources_field("Operator container", REQUESTS, LIMITS)


@dataclass(frozen=True)
class LegacyOperator:
    """What differs between the seed controllers' installs.

    Attributes:
        app: ``app.kubernetes.io/name`` of every object.
        framework: the registry name of the framework whose CRD is installed.
        lock: the leader-election Endpoints name the binary hard-codes.
        rules: the ClusterRole rules (the controller's API calls, all namespaces).
    """

    app: str
    framework: str
    lock: str
    rules: tuple[PolicyRule, ...]

    def manifests(
        self,
        resource: PlatformResource,
        namespace: str,
        spec: LegacyOperatorSpec,
        container: dict[str, Any],
        selector: dict[str, str],
        volumes: Sequence[dict[str, Any]] = (),
        mounts: Sequence[dict[str, Any]] = (),
    ) -> list[Manifest]:
        """The install; ``container`` brings name, image, command and args, ``volumes``
        and ``mounts`` what it reads besides its own ``/tmp``."""
        name = resource.name
        labels = component_labels(self.app, resource, "operator")
        lock_rules = (
            # Create cannot be limited by name; reading and renewing the lock can.
            PolicyRule(("",), ("endpoints",), ("create",)),
            PolicyRule(("",), ("endpoints",), ("get", "update"), resource_names=(self.lock,)),
        )
        lock_role = f"{name}-leader-election"
        pod_container = {
            **container,
            "env": [
                {
                    "name": "KUBEFLOW_NAMESPACE",
                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                }
            ],
            "resources": spec.resources,
            # glog also writes log files to /tmp; with a read-only root it would exit.
            "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}, *mounts],
            **restricted_container(),
        }
        pod_spec: dict[str, Any] = {
            "serviceAccountName": name,
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": NONROOT_UID,
                "runAsGroup": NONROOT_UID,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [pod_container],
            "volumes": [{"name": "tmp", "emptyDir": {}}, *volumes],
        }
        objects: list[Manifest] = []
        if spec.create_namespace:
            objects.append(install.namespace(namespace, labels))
        objects += [
            install.crd(REGISTRY.named(self.framework).crd_file, labels),
            install.service_account(name, namespace, labels),
            install.cluster_role(name, self.rules, labels),
            install.cluster_role_binding(name, name, name, namespace, labels),
            install.role(lock_role, namespace, lock_rules, labels),
            install.role_binding(lock_role, namespace, lock_role, name, labels),
            install.deployment(name, namespace, selector, pod_spec, labels=labels),
        ]
        return objects
