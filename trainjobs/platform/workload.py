"""Shared shapes of the workloads platform kinds run: labels and secure defaults."""

from __future__ import annotations

from typing import Any

from trainjobs.platform.base import PlatformResource

__all__ = ["MANAGED_BY", "component_labels", "restricted_container", "restricted_pod"]

MANAGED_BY = "trainjobs"


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
