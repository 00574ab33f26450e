"""Shared shapes of the workloads platform kinds run: labels and secure defaults."""

from __future__ import annotations

from typing import Any

from trainjobs.platform.base import PlatformResource

__all__ = [
    "MANAGED_BY",
    "NONROOT_UID",
    "component_labels",
    "harden_pod_spec",
    "restricted_container",
    "restricted_pod",
]

MANAGED_BY = "trainjobs"
NONROOT_UID = 65532
"""The ``nonroot`` user of distroless images; any non-zero uid passes Pod Security."""


def component_labels(app: str, resource: PlatformResource, component: str) -> dict[str, str]:
    """The recommended ``app.kubernetes.io/*`` labels, then the resource's own labels."""
    labels = {
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/instance": resource.name,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }
    labels.update(resource.metadata.labels or {})
    return labels


def restricted_pod(user: int) -> dict[str, Any]:
    """Pod-level settings that pass the Pod Security Standard ``restricted``."""
    return {
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": user,
            "runAsGroup": user,
            "fsGroup": user,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "automountServiceAccountToken": False,
    }


def restricted_container() -> dict[str, Any]:
    """Container-level settings that pass the Pod Security Standard ``restricted``."""
    return {
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        }
    }


def harden_pod_spec(pod_spec: dict[str, Any]) -> dict[str, Any]:
    """``pod_spec`` raised to the ``restricted`` Pod Security level, in place: the pod
    runs as a non-root user (:data:`NONROOT_UID` unless it names one) under the runtime's
    seccomp profile, every container without privilege escalation or capabilities.

    Settings the spec already has are kept; images built to run as root and write to
    root-owned paths would need ``podSecurity: upstream``.
    """
    pod = pod_spec.setdefault("securityContext", {})
    pod["runAsNonRoot"] = True
    if "runAsUser" not in pod:
        pod["runAsUser"] = NONROOT_UID
        pod["runAsGroup"] = NONROOT_UID
    pod.setdefault("seccompProfile", {"type": "RuntimeDefault"})
    for container in [*pod_spec.get("initContainers", ()), *pod_spec.get("containers", ())]:
        context = container.setdefault("securityContext", {})
        context["allowPrivilegeEscalation"] = False
        context.setdefault("capabilities", {})["drop"] = ["ALL"]
    return pod_spec
