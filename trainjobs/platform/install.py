"""Builders for the objects an operator install consists of.

Every operator kind (Training Operator, MPI Operator, Trainer, the seed
controllers) is a Namespace, CRDs, a ServiceAccount, RBAC and a Deployment;
these functions build them the same way so each kind states only what differs.
RBAC rules are typed (:class:`Rule`) so a check can prove no install grants a
wildcard.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trainjobs.frameworks.base import Manifest, deep_copy
from trainjobs.k8s.crds import load_crd

__all__ = [
    "Rule",
    "cluster_role",
    "cluster_role_binding",
    "crd",
    "deployment",
    "namespace",
    "role",
    "role_binding",
    "service_account",
]


@dataclass(frozen=True)
class Rule:
    """One RBAC policy rule: these verbs on these resources of these API groups."""

    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    resource_names: tuple[str, ...] = ()

    def to_manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "apiGroups": list(self.api_groups),
            "resources": list(self.resources),
        }
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        out["verbs"] = list(self.verbs)
        return out


def _meta(name: str, namespace: str | None, labels: Mapping[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    return meta


def namespace(name: str, labels: Mapping[str, str] = {}) -> Manifest:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, None, labels)}


def service_account(name: str, ns: str, labels: Mapping[str, str] = {}) -> Manifest:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name, ns, labels)}


def cluster_role(
    name: str,
    rules: Sequence[Rule],
    labels: Mapping[str, str] = {},
) -> Manifest:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": _meta(name, None, labels),
        "rules": [r.to_manifest() for r in rules],
    }


def role(
    name: str,
    ns: str,
    rules: Sequence[Rule],
    labels: Mapping[str, str] = {},
) -> Manifest:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": _meta(name, ns, labels),
        "rules": [r.to_manifest() for r in rules],
    }


def _binding(
    kind: str,
    name: str,
    ns: str | None,
    role_kind: str,
    role_name: str,
    account: str,
    account_ns: str,
    labels: Mapping[str, str],
) -> Manifest:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": _meta(name, ns, labels),
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": role_kind,
            "name": role_name,
        },
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": account_ns}],
    }


def cluster_role_binding(
    name: str,
    role_name: str,
    account: str,
    account_ns: str,
    labels: Mapping[str, str] = {},
) -> Manifest:
    """Binds ClusterRole ``role_name`` to a ServiceAccount."""
    return _binding(
        "ClusterRoleBinding", name, None, "ClusterRole", role_name, account, account_ns, labels
    )


def role_binding(
    name: str,
    ns: str,
    role_name: str,
    account: str,
    labels: Mapping[str, str] = {},
) -> Manifest:
    """Binds Role ``role_name`` of ``ns`` to a ServiceAccount of ``ns``."""
    return _binding("RoleBinding", name, ns, "Role", role_name, account, ns, labels)


def deployment(
    name: str,
    ns: str,
    selector: Mapping[str, str],
    pod_spec: Mapping[str, Any],
    *,
    labels: Mapping[str, str] = {},
    pod_annotations: Mapping[str, str] = {},
    replicas: int = 1,
) -> Manifest:
    """A Deployment whose pods carry ``selector`` (and ``labels``)."""
    template_meta: dict[str, Any] = {"labels": {**labels, **selector}}
    if pod_annotations:
        template_meta["annotations"] = dict(pod_annotations)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(name, ns, {**labels, **selector}),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(selector)},
            "template": {"metadata": template_meta, "spec": deep_copy(pod_spec)},
        },
    }


def crd(relative: str, labels: Mapping[str, str] = {}) -> Manifest:
    """The shipped CRD ``crds/<relative>`` as a manifest to install, with extra labels."""
    manifest = deep_copy(load_crd(relative))
    manifest.pop("status", None)
    if labels:
        meta = manifest.setdefault("metadata", {})
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
    return manifest
