"""Which field changes replace an object instead of updating it in place.

The rules are the Pulumi Kubernetes provider's: ``pulumi up`` deletes and
recreates an object when one of these fields changes, because the API server
would reject the change (almost everything in a Pod's spec, a Job's template,
a Service's clusterIP …). Source: pulumi/pulumi-kubernetes
``provider/pkg/provider/diff.go`` (``forceNew``, ``forceNewProperties``) at
commit cafe8c4ac4de156415093291bffc63b6e1c97d1e (v4), with the provider's
default settings (``enableSecretMutable`` and ``enableConfigMapMutable`` off).
Each rule's ``cites`` names the entry it mirrors.

How a rule matches a change (as the provider matches a JSON merge patch): a
change at or below a listed field replaces; so does a change above one — a
whole list item or map added, removed or retyped — when the changed value
holds that field. Unlike the provider, trainjobs also counts a *removed*
subtree that holds such a field (a container taken out of a Pod): the
provider plans an update there, which the API server then rejects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trainjobs.errors import NO_VALUE
from trainjobs.k8s.changes import FieldChange

__all__ = ["ANY_KIND", "RULES", "ReplaceRule", "replacing_rule", "rules_for"]

ANY_KIND = "*"


@dataclass(frozen=True)
class ReplaceRule:
    """Fields of one kind whose change replaces the object.

    Attributes:
        group: API group, ``""`` for core; ``*`` for every group.
        versions: API versions the rule holds for (empty: every version).
        kind: the kind, or ``*`` for every kind.
        fields: JSONPath-like fields, ``.spec.containers[*].image``; ``[*]`` is any list item.
        cites: the provider entry this rule mirrors.
    """

    group: str
    versions: tuple[str, ...]
    kind: str
    fields: tuple[str, ...]
    cites: str

    def applies_to(self, api_version: str, kind: str) -> bool:
        group, _, version = api_version.rpartition("/")
        return (
            self.group in (ANY_KIND, group)
            and (not self.versions or version in self.versions)
            and self.kind in (ANY_KIND, kind)
        )

    def field_of(self, change: FieldChange) -> str | None:
        """The first of ``fields`` that ``change`` touches, or None."""
        for field in self.fields:
            if _touches(_tokens(field), change):
                return field
        return None


def _tokens(field: str) -> tuple[str, ...]:
    return tuple(p for p in field.replace("[*]", ".*").split(".") if p)


def _holds(value: Any, rest: Sequence[str]) -> bool:
    if not rest:
        return value is not NO_VALUE and value is not None
    head, tail = rest[0], rest[1:]
    if head == "*":
        return isinstance(value, list) and any(_holds(v, tail) for v in value)
    return isinstance(value, Mapping) and head in value and _holds(value[head], tail)


def _touches(pattern: tuple[str, ...], change: FieldChange) -> bool:
    for want, got in zip(pattern, change.path, strict=False):
        if want == "*" and not isinstance(got, int):
            return False
        if want != "*" and want != got:
            return False
    if len(change.path) >= len(pattern):
        return True
    rest = pattern[len(change.path) :]
    return _holds(change.old, rest) or _holds(change.new, rest)


def _containers(*lists: str) -> tuple[str, ...]:
    fields = (
        "args",
        "command",
        "env",
        "image",
        "imagePullPolicy",
        "lifecycle",
        "livenessProbe",
        "ports",
        "readinessProbe",
        "resources",
        "securityContext",
        "stdin",
        "stdinOnce",
        "terminationMessagePath",
        "terminationMessagePolicy",
        "tty",
        "volumeDevices",
        "volumeMounts",
        "workingDir",
    )
    return tuple(f".spec.{name}[*].{field}" for name in lists for field in fields)


_POD_FIELDS = (
    *(
        f".spec.{field}"
        for field in (
            "affinity",
            "automountServiceAccountToken",
            "dnsConfig",
            "dnsPolicy",
            "enableServiceLinks",
            "hostAliases",
            "hostIPC",
            "hostNetwork",
            "hostPID",
            "hostname",
            "imagePullSecrets",
            "nodeName",
            "nodeSelector",
            "overhead",
            "preemptionPolicy",
            "priority",
            "priorityClassName",
            "readinessGates",
            "restartPolicy",
            "runtimeClassName",
            "schedulerName",
            "securityContext",
            "serviceAccount",
            "serviceAccountName",
            "shareProcessNamespace",
            "subdomain",
            "terminationGracePeriodSeconds",
            "volumes",
        )
    ),
    *_containers("containers", "initContainers"),
)

_VOLUME_SOURCES = (
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "csi",
    "fc",
    "flexVolume",
    "flocker",
    "gcePersistentDisk",
    "glusterfs",
    "hostPath",
    "iscsi",
    "local",
    "nfs",
    "photonPersistentDisk",
    "portworxVolume",
    "quobyte",
    "rbd",
    "scaleIO",
    "storageos",
    "vsphereVolume",
)

# The label-selector sub-fields the provider lists (matchLabels, matchExpressions …)
# lie below `.spec.selector`, which every rule that has them lists too.
_SELECTOR = (".spec.selector",)
_STATEFUL_SET = (
    ".spec.podManagementPolicy",
    ".spec.revisionHistoryLimit",
    ".spec.selector",
    ".spec.serviceName",
    ".spec.volumeClaimTemplates",
)
_RBAC_VERSIONS = ("v1alpha1", "v1beta1", "v1")

RULES: tuple[ReplaceRule, ...] = (
    ReplaceRule(
        "*", (), "*", (".metadata.name", ".metadata.namespace"), "metadataForceNewProperties"
    ),
    ReplaceRule(
        "*",
        (),
        "*",
        (".apiVersion",),
        "the Pulumi resource type kubernetes:<group>/<version>:<kind> holds the version; "
        "another type is another resource",
    ),
    ReplaceRule("", ("v1",), "Pod", _POD_FIELDS, "core/v1 Pod + containerForceNewProperties"),
    ReplaceRule("", ("v1",), "Service", (".spec.clusterIP",), "core/v1 Service"),
    ReplaceRule(
        "",
        ("v1",),
        "Secret",
        (".type", ".stringData", ".data"),
        "core/v1 Secret; .data/.stringData while enableSecretMutable is off (the default)",
    ),
    ReplaceRule(
        "",
        ("v1",),
        "ConfigMap",
        (".binaryData", ".data"),
        "forceNewProperties: ConfigMap while enableConfigMapMutable is off (the default)",
    ),
    ReplaceRule(
        "",
        ("v1",),
        "PersistentVolume",
        tuple(f".spec.{s}" for s in _VOLUME_SOURCES),
        "core/v1 PersistentVolume",
    ),
    ReplaceRule(
        "",
        ("v1",),
        "PersistentVolumeClaim",
        (".spec.accessModes", ".spec.selector", ".spec.storageClassName", ".spec.volumeName"),
        "core/v1 PersistentVolumeClaim",
    ),
    ReplaceRule("", ("v1",), "ResourceQuota", (".spec.scopes",), "core/v1 ResourceQuota"),
    ReplaceRule(
        "batch",
        ("v1", "v1beta1", "v2alpha1"),
        "Job",
        (".spec.completions", ".spec.parallelism", ".spec.selector", ".spec.template"),
        "batch Job",
    ),
    ReplaceRule("apps", ("v1", "v1beta2"), "Deployment", _SELECTOR, "apps Deployment"),
    ReplaceRule("apps", ("v1", "v1beta2"), "DaemonSet", _SELECTOR, "apps DaemonSet"),
    ReplaceRule(
        "apps", ("v1", "v1beta1", "v1beta2"), "StatefulSet", _STATEFUL_SET, "apps StatefulSet"
    ),
    ReplaceRule("policy", ("v1beta1",), "PodDisruptionBudget", (".spec",), "policy/v1beta1 PDB"),
    ReplaceRule(
        "rbac.authorization.k8s.io",
        _RBAC_VERSIONS,
        "RoleBinding",
        (".roleRef",),
        "rbac RoleBinding",
    ),
    ReplaceRule(
        "rbac.authorization.k8s.io",
        _RBAC_VERSIONS,
        "ClusterRoleBinding",
        (".roleRef",),
        "rbac ClusterRoleBinding",
    ),
    ReplaceRule(
        "storage.k8s.io",
        ("v1",),
        "StorageClass",
        (".parameters", ".provisioner"),
        "storage.k8s.io/v1 StorageClass",
    ),
)
"""Every replace rule; custom resources (TFJob, PyTorchJob …) have none: they update in place."""


def rules_for(api_version: str, kind: str) -> list[ReplaceRule]:
    """The rules that hold for objects of this apiVersion and kind."""
    return [rule for rule in RULES if rule.applies_to(api_version, kind)]


def replacing_rule(old: Mapping[str, Any], change: FieldChange) -> tuple[ReplaceRule, str] | None:
    """The rule (and its field) by which ``change`` replaces the object, or None.

    The old object's type decides, as the provider keys the rules on the
    resource it already manages; an ``apiVersion`` change replaces anyway.
    """
    for rule in rules_for(str(old.get("apiVersion", "")), str(old.get("kind", ""))):
        field = rule.field_of(change)
        if field is not None:
            return rule, field
    return None
