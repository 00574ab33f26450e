"""Shared shapes of the workloads platform kinds run: labels, secure defaults, and the
settings every install takes (its namespace, its container resources)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from trainjobs.platform.base import PlatformResource

__all__ = [
    "MANAGED_BY",
    "NONROOT_UID",
    "component_labels",
    "container_resources",
    "create_namespace_field",
    "harden_pod_spec",
    "resources_field",
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


Resources = dict[str, dict[str, str | int]]
"""A container's ``resources``: ``requests`` and ``limits``, each resource to a quantity."""


def container_resources(requests: tuple[str, str], limits: tuple[str, str]) -> Resources:
    """``resources`` of (cpu, memory) requests and limits."""
    return {
        "requests": {"cpu": requests[0], "memory": requests[1]},
        "limits": {"cpu": limits[0], "memory": limits[1]},
    }


def resources_field(what: str, requests: tuple[str, str], limits: tuple[str, str]) -> Any:
    """A spec's ``resources`` setting for the container ``what`` names, defaulting to the
    (cpu, memory) ``requests`` and ``limits``, which its description states."""
    return Field(
        default_factory=lambda: container_resources(requests, limits),
        description=(
            f"{what} resources; default requests {'/'.join(requests)}, limits {'/'.join(limits)}."
        ),
    )


def create_namespace_field() -> Any:
    """A spec's ``createNamespace`` setting, the same for every install (default false)."""
    return Field(
        default=False,
        description=(
            "true: the install creates its Namespace and owns it (a destroy deletes it, "
            "with every job in it), as upstream's install does; false (default): the "
            "namespace exists already or the stack's namespaces list creates it. Only one "
            "stack should own a namespace."
        ),
    )
