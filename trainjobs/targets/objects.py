"""The objects an operator makes beside a job's pods (``plan.objects``), written: the
only place their shapes are."""

from __future__ import annotations

from typing import Any, Final

from trainjobs.k8s.data import Manifest, deep_copy
from trainjobs.k8s.generated import placeholder
from trainjobs.plan.objects import (
    BatchJobPlan,
    ConfigMapPlan,
    ObjectPlan,
    ReplicaSetPlan,
    RoleBindingPlan,
    RolePlan,
    ServiceAccountPlan,
    SshKeySecretPlan,
)

__all__ = ["object_manifest"]

_RBAC: Final = "rbac.authorization.k8s.io"


def _metadata(name: str, namespace: str, labels: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    return metadata


def _secret(plan: SshKeySecretPlan, metadata: dict[str, Any], namespace: str) -> Manifest:
    # One placeholder group per Secret: both halves of one key pair.
    group = f"{namespace}/{plan.name}"
    secret: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret", "metadata": metadata}
    secret["type"] = "kubernetes.io/ssh-auth"
    if plan.immutable:
        secret["immutable"] = True
    secret["stringData"] = {
        "ssh-privatekey": placeholder("ecdsa-p521-private", group),
        "ssh-publickey": placeholder("ecdsa-p521-public", group),
    }
    return secret


def _role_binding(plan: RoleBindingPlan, metadata: dict[str, Any], namespace: str) -> Manifest:
    binding: dict[str, Any] = {"apiVersion": f"{_RBAC}/v1", "kind": "RoleBinding"}
    binding["metadata"] = metadata
    subjects = [{"kind": "ServiceAccount", "name": plan.service_account, "namespace": namespace}]
    if plan.subjects_first:
        binding["subjects"] = subjects
    binding["roleRef"] = {"apiGroup": _RBAC, "kind": "Role", "name": plan.name}
    if not plan.subjects_first:
        binding["subjects"] = subjects
    return binding


def object_manifest(plan: ObjectPlan, namespace: str) -> Manifest:
    """The object of ``plan`` in ``namespace``."""
    metadata = _metadata(plan.name, namespace, plan.labels)
    if isinstance(plan, ConfigMapPlan):
        data = dict(plan.data)
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}
    if isinstance(plan, SshKeySecretPlan):
        return _secret(plan, metadata, namespace)
    if isinstance(plan, BatchJobPlan):
        spec = deep_copy(plan.spec)
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}
    if isinstance(plan, ReplicaSetPlan):
        spec = deep_copy(plan.spec)
        return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": metadata, "spec": spec}
    if isinstance(plan, ServiceAccountPlan):
        return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata}
    if isinstance(plan, RolePlan):
        rules = [deep_copy(rule) for rule in plan.rules]
        return {"apiVersion": f"{_RBAC}/v1", "kind": "Role", "metadata": metadata, "rules": rules}
    return _role_binding(plan, metadata, namespace)
