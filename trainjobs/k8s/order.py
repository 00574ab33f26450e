"""The order in which objects are applied.

Definitions before what uses them: CRDs, then Namespaces, then the objects pods
mount or run as, then RBAC, then Services (so DNS names exist before the pods
that look them up), then workloads, and webhooks last (a webhook registered
before its server is running would reject everything after it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["DEFINITIONS_BELOW", "apply_rank", "apply_tier", "sort_for_apply"]

_RANKS: dict[str, int] = {
    "CustomResourceDefinition": 0,
    "Namespace": 10,
    "PriorityClass": 15,
    "ResourceQuota": 16,
    "LimitRange": 16,
    "ServiceAccount": 20,
    "Secret": 21,
    "ConfigMap": 22,
    "PersistentVolume": 23,
    "PersistentVolumeClaim": 24,
    "StorageClass": 19,
    "ClusterRole": 30,
    "ClusterRoleBinding": 31,
    "Role": 32,
    "RoleBinding": 33,
    # Who may reach a backend is settled before the backend's pods start listening.
    "NetworkPolicy": 34,
    # Training runtimes are definitions a TrainJob names; Trainer's webhook rejects a
    # TrainJob whose runtime does not exist yet.
    "ClusterTrainingRuntime": 35,
    "TrainingRuntime": 35,
    "Service": 40,
    # Gang-scheduling groups and queues must exist before their pods.
    "PodGroup": 45,
    "Queue": 44,
    "ResourceFlavor": 44,
    "ClusterQueue": 45,
    "LocalQueue": 46,
    "DaemonSet": 50,
    "Deployment": 50,
    "StatefulSet": 50,
    "ReplicaSet": 50,
    "Job": 55,
    "Pod": 55,
    "HorizontalPodAutoscaler": 70,
    "MutatingWebhookConfiguration": 90,
    "ValidatingWebhookConfiguration": 90,
}
_CUSTOM_RESOURCE_RANK = 60
DEFINITIONS_BELOW = 40
"""Ranks below this are definitions other objects use (CRDs … RBAC), not workloads."""
_NAMESPACED_FROM = 11
"""Ranks from here may live in a namespace; CRDs and Namespaces (below) come first."""
_TIER_STARTS = (_NAMESPACED_FROM, DEFINITIONS_BELOW, 50, 90)


def apply_tier(manifest: Mapping[str, Any]) -> int:
    """Which step of a unit's creation an object belongs to.

    0 CRDs and Namespaces, 1 the other definitions (ServiceAccounts … RBAC), 2 Services
    and gang groups, 3 workloads and custom resources, 4 what must come after a running
    workload (webhooks). Each step is created only when the ones before it exist: a Role
    in a namespace the same unit creates is refused until the Namespace exists, a pod
    gets its Service's link variables only if the Service exists when it starts, and a
    webhook registered before its server runs would reject everything.
    """
    rank = apply_rank(manifest)
    return sum(rank >= start for start in _TIER_STARTS)


def apply_rank(manifest: Mapping[str, Any]) -> int:
    """The apply rank of one manifest; custom resources come after built-in workloads."""
    return _RANKS.get(str(manifest.get("kind", "")), _CUSTOM_RESOURCE_RANK)


def sort_for_apply(manifests: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Stable sort by apply rank: objects of one rank keep the order they were rendered in."""
    return sorted(manifests, key=apply_rank)
