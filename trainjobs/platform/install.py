"""Builders for the objects an operator install consists of.

Every operator kind (Training Operator, MPI Operator, Trainer, the seed
controllers) is a Namespace, CRDs, a ServiceAccount, RBAC and a Deployment;
these functions build them the same way so each kind states only what differs.
RBAC rules are typed (:class:`PolicyRule`) so a check can prove no install grants a
wildcard.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trainjobs.k8s.crds import load_crd
from trainjobs.k8s.data import Manifest, deep_copy

__all__ = [
    "WILDCARD",
    "PolicyRule",
    "Webhook",
    "aggregated_cluster_role",
    "cluster_role",
    "cluster_role_binding",
    "config_map",
    "crd",
    "deployment",
    "group_role_binding",
    "merge_rules",
    "namespace",
    "role",
    "role_binding",
    "secret",
    "service",
    "service_account",
    "webhook_cert_mount",
    "webhook_cert_volume",
    "webhook_configuration",
]

WILDCARD = "*"
"""The RBAC wildcard; installs grant it only when a user asks for upstream fidelity."""


@dataclass(frozen=True)
class PolicyRule:
    """One RBAC policy rule: these verbs on these resources of these API groups."""

    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def urls(cls, urls: tuple[str, ...], verbs: tuple[str, ...]) -> PolicyRule:
        """A rule over non-resource URLs (``/metrics``) instead of API resources."""
        return cls((), (), verbs, non_resource_urls=urls)

    @property
    def is_wildcard(self) -> bool:
        """Whether the rule grants ``*`` verbs, resources or groups."""
        return WILDCARD in (*self.verbs, *self.resources, *self.api_groups)

    def to_manifest(self) -> dict[str, Any]:
        if self.non_resource_urls:
            return {"nonResourceURLs": list(self.non_resource_urls), "verbs": list(self.verbs)}
        out: dict[str, Any] = {
            "apiGroups": list(self.api_groups),
            "resources": list(self.resources),
        }
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        out["verbs"] = list(self.verbs)
        return out


def merge_rules(rules: Sequence[PolicyRule]) -> list[PolicyRule]:
    """One rule per (groups, resources, names): verbs unioned and sorted, rules sorted
    by group then resource, as controller-gen writes a role from its markers."""
    verbs: dict[tuple[tuple[str, ...], ...], set[str]] = {}
    for rule in rules:
        key = (rule.api_groups, rule.resources, rule.resource_names, rule.non_resource_urls)
        verbs.setdefault(key, set()).update(rule.verbs)
    return [
        PolicyRule(groups, resources, tuple(sorted(granted)), names, urls)
        for (groups, resources, names, urls), granted in sorted(verbs.items())
    ]


@dataclass(frozen=True)
class Webhook:
    """One admission webhook an operator serves through its Service.

    Attributes:
        name: the webhook's name, e.g. ``validator.tfjob.training-operator.kubeflow.org``.
        path: the URL path on the operator's webhook server.
        api_group: the API group of the resources it admits (``""`` for core).
        api_versions: their versions.
        resources: the resources it admits (``tfjobs``, ``pods`` …).
        operations: the operations it sees; default CREATE and UPDATE.
        object_selector: a label selector limiting it to some objects; default all.
    """

    name: str
    path: str
    api_group: str
    api_versions: tuple[str, ...]
    resources: tuple[str, ...]
    operations: tuple[str, ...] = ("CREATE", "UPDATE")
    object_selector: Mapping[str, Any] | None = None


def _meta(
    name: str,
    namespace: str | None,
    labels: Mapping[str, str],
    annotations: Mapping[str, str] = {},
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if annotations:
        meta["annotations"] = dict(annotations)
    if labels:
        meta["labels"] = dict(labels)
    return meta


def namespace(name: str, labels: Mapping[str, str] = {}) -> Manifest:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, None, labels)}


def service_account(name: str, ns: str, labels: Mapping[str, str] = {}) -> Manifest:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name, ns, labels)}


def _role(
    kind: str, name: str, ns: str | None, rules: Sequence[PolicyRule], labels: Mapping[str, str]
) -> Manifest:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": _meta(name, ns, labels),
        "rules": [r.to_manifest() for r in rules],
    }


def cluster_role(
    name: str, rules: Sequence[PolicyRule], labels: Mapping[str, str] = {}
) -> Manifest:
    return _role("ClusterRole", name, None, rules, labels)


def aggregated_cluster_role(
    name: str, selector_labels: Mapping[str, str], labels: Mapping[str, str] = {}
) -> Manifest:
    """A ClusterRole whose rules the API server collects from ClusterRoles carrying
    ``selector_labels`` (Kubernetes RBAC aggregation)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": _meta(name, None, labels),
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": dict(selector_labels)}]},
    }


def role(
    name: str, ns: str, rules: Sequence[PolicyRule], labels: Mapping[str, str] = {}
) -> Manifest:
    return _role("Role", name, ns, rules, labels)


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


def group_role_binding(
    name: str, ns: str, role_name: str, group: str, labels: Mapping[str, str] = {}
) -> Manifest:
    """Binds Role ``role_name`` of ``ns`` to a user group (``system:authenticated`` …)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": _meta(name, ns, labels),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role_name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}],
    }


def deployment(
    name: str,
    ns: str,
    selector: Mapping[str, str],
    pod_spec: Mapping[str, Any],
    *,
    labels: Mapping[str, str] = {},
    pod_labels: Mapping[str, str] | None = None,
    pod_annotations: Mapping[str, str] = {},
    replicas: int | None = 1,
) -> Manifest:
    """A Deployment whose pods carry ``selector`` (and ``labels``, unless ``pod_labels``
    names the pods' labels exactly). ``replicas=None`` leaves the API default (1)."""
    template_labels = {**labels, **selector} if pod_labels is None else dict(pod_labels)
    template_meta: dict[str, Any] = {"labels": template_labels}
    if pod_annotations:
        template_meta["annotations"] = dict(pod_annotations)
    spec: dict[str, Any] = {} if replicas is None else {"replicas": replicas}
    spec["selector"] = {"matchLabels": dict(selector)}
    spec["template"] = {"metadata": template_meta, "spec": deep_copy(pod_spec)}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(name, ns, {**labels, **selector}),
        "spec": spec,
    }


def service(
    name: str,
    ns: str,
    ports: Sequence[Mapping[str, Any]],
    selector: Mapping[str, str],
    *,
    labels: Mapping[str, str] = {},
    annotations: Mapping[str, str] = {},
    service_type: str | None = None,
) -> Manifest:
    """A Service in front of an operator's pods (metrics, webhook server)."""
    spec: dict[str, Any] = {"ports": [dict(p) for p in ports], "selector": dict(selector)}
    if service_type is not None:
        spec["type"] = service_type
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(name, ns, labels, annotations),
        "spec": spec,
    }


def secret(
    name: str,
    ns: str,
    *,
    labels: Mapping[str, str] = {},
    secret_type: str | None = "Opaque",
    empty_data: bool = False,
) -> Manifest:
    """An empty Secret an operator fills at run time (its webhook serving certificate).

    ``empty_data`` writes ``data: {}`` as some upstream generators do; the object is
    the same either way.
    """
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _meta(name, ns, labels),
    }
    if secret_type is not None:
        manifest["type"] = secret_type
    if empty_data:
        manifest["data"] = {}
    return manifest


def webhook_cert_volume(secret_name: str) -> dict[str, Any]:
    """The pod volume ``cert``: the Secret ``secret_name`` holding a controller-runtime
    manager's webhook serving certificate (mode 0644, as every upstream install sets it)."""
    return {"name": "cert", "secret": {"defaultMode": 420, "secretName": secret_name}}


def webhook_cert_mount() -> dict[str, Any]:
    """The read-only mount of volume ``cert`` where controller-runtime's webhook server
    looks for its certificate by default."""
    return {"mountPath": "/tmp/k8s-webhook-server/serving-certs", "name": "cert", "readOnly": True}


def config_map(
    name: str, ns: str, data: Mapping[str, str], labels: Mapping[str, str] = {}
) -> Manifest:
    """A ConfigMap of text entries (an operator's configuration file …)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(name, ns, labels),
        "data": dict(data),
    }


def webhook_configuration(
    kind: str,
    name: str,
    service_name: str,
    service_ns: str,
    webhooks: Sequence[Webhook],
    labels: Mapping[str, str] = {},
) -> Manifest:
    """A Validating- or MutatingWebhookConfiguration (``kind``) whose webhooks all call
    ``service_name`` in ``service_ns``; every webhook fails closed and has no side effects.

    The operator patches the CA bundle in at run time, so none is rendered.
    """
    entries = []
    for hook in webhooks:
        entry: dict[str, Any] = {
            "admissionReviewVersions": ["v1"],
            "clientConfig": {
                "service": {"name": service_name, "namespace": service_ns, "path": hook.path}
            },
            "failurePolicy": "Fail",
            "name": hook.name,
        }
        if hook.object_selector is not None:
            entry["objectSelector"] = deep_copy(hook.object_selector)
        entry["rules"] = [
            {
                "apiGroups": [hook.api_group],
                "apiVersions": list(hook.api_versions),
                "operations": list(hook.operations),
                "resources": list(hook.resources),
            }
        ]
        entry["sideEffects"] = "None"
        entries.append(entry)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": _meta(name, None, labels),
        "webhooks": entries,
    }


def crd(
    relative: str,
    labels: Mapping[str, str] = {},
    *,
    conversion: tuple[str, str, str] | None = None,
) -> Manifest:
    """The shipped CRD ``crds/<relative>`` as a manifest to install, with extra labels.

    ``conversion`` = (service, namespace, path) routes version conversion through the
    operator's webhook (JobSet does), as the upstream install patches it in.
    """
    manifest = deep_copy(load_crd(relative))
    manifest.pop("status", None)
    if labels:
        meta = manifest.setdefault("metadata", {})
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
    if conversion is not None:
        service_name, service_ns, path = conversion
        client = {"service": {"name": service_name, "namespace": service_ns, "path": path}}
        manifest["spec"] = {
            "conversion": {
                "strategy": "Webhook",
                "webhook": {"clientConfig": client, "conversionReviewVersions": ["v1"]},
            },
            **manifest["spec"],
        }
    return manifest
