"""Replace or update: the Pulumi Kubernetes provider's rules, field by field."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from trainjobs.k8s.changes import field_changes
from trainjobs.preview.rules import RULES, ReplaceRule, replacing_rule, rules_for


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "mnist-worker-0", "namespace": "kubeflow", "labels": {"a": "1"}},
        "spec": {
            "containers": [
                {
                    "name": "tensorflow",
                    "image": "tf:1",
                    "env": [{"name": "RANK", "value": "0"}],
                    "resources": {"limits": {"cpu": "1"}},
                }
            ],
            "restartPolicy": "Never",
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
        },
    }


def _decide(old: dict[str, Any], new: dict[str, Any]) -> str:
    """``replace`` if any change is replacing, ``update`` if some change, else ``same``."""
    changes = field_changes(old, new)
    if not changes:
        return "same"
    return "replace" if any(replacing_rule(old, c) for c in changes) else "update"


def _set(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    *parents, last = path.split(".")
    target: Any = out
    for part in parents:
        target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
    if last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return out


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("spec.containers.0.image", "tf:2", "replace"),
        ("spec.containers.0.env.0.value", "1", "replace"),
        ("spec.containers.0.resources", {"limits": {"cpu": "2"}}, "replace"),
        ("spec.containers.0.command", ["python"], "replace"),
        ("spec.restartPolicy", "OnFailure", "replace"),
        ("spec.nodeSelector", {"gpu": "a100"}, "replace"),
        ("spec.volumes", [{"name": "data", "emptyDir": {}}], "replace"),
        ("spec.schedulerName", "volcano", "replace"),
        # Fields Kubernetes lets a running Pod change: the provider updates in place.
        ("metadata.labels.a", "2", "update"),
        ("metadata.annotations", {"note": "x"}, "update"),
        ("spec.tolerations", [{"key": "gpu", "operator": "Exists"}, {"key": "b"}], "update"),
        ("spec.activeDeadlineSeconds", 600, "update"),
        # The provider lists no container name: it plans an update (the API server rejects it).
        ("spec.containers.0.name", "tf", "update"),
        ("spec.restartPolicy", "Never", "same"),
    ],
)
def test_pod_fields(path: str, value: Any, expected: str) -> None:
    assert _decide(_pod(), _set(_pod(), path, value)) == expected


def test_adding_or_removing_a_container_replaces_the_pod() -> None:
    pod = _pod()
    two = copy.deepcopy(pod)
    two["spec"]["containers"].append({"name": "sidecar", "image": "busybox"})
    assert _decide(pod, two) == "replace"
    assert _decide(two, pod) == "replace"


def test_removing_a_field_below_an_immutable_one_replaces() -> None:
    pod = _pod()
    bare = copy.deepcopy(pod)
    del bare["spec"]["containers"][0]["resources"]
    assert _decide(pod, bare) == "replace"


def _obj(api_version: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, **fields}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            _obj("v1", "Service", spec={"clusterIP": "None", "ports": [{"port": 1}]}),
            _obj("v1", "Service", spec={"clusterIP": "10.0.0.1", "ports": [{"port": 1}]}),
            "replace",
        ),
        (
            _obj("v1", "Service", spec={"clusterIP": "None", "ports": [{"port": 1}]}),
            _obj("v1", "Service", spec={"clusterIP": "None", "ports": [{"port": 2}]}),
            "update",
        ),
        (
            _obj("batch/v1", "Job", spec={"template": {"spec": {"x": 1}}, "backoffLimit": 1}),
            _obj("batch/v1", "Job", spec={"template": {"spec": {"x": 2}}, "backoffLimit": 1}),
            "replace",
        ),
        (
            _obj("batch/v1", "Job", spec={"completions": 1}),
            _obj("batch/v1", "Job", spec={"completions": 2}),
            "replace",
        ),
        (
            _obj("batch/v1", "Job", spec={"parallelism": 1}),
            _obj("batch/v1", "Job", spec={"parallelism": 2}),
            "replace",
        ),
        (
            _obj("batch/v1", "Job", spec={"backoffLimit": 1}),
            _obj("batch/v1", "Job", spec={"backoffLimit": 2}),
            "update",
        ),
        (
            _obj("v1", "Secret", data={"k": "YQ=="}),
            _obj("v1", "Secret", data={"k": "Yg=="}),
            "replace",
        ),
        (
            _obj("v1", "Secret", type="Opaque"),
            _obj("v1", "Secret", type="kubernetes.io/ssh-auth"),
            "replace",
        ),
        (
            _obj("v1", "ConfigMap", data={"k": "a"}),
            _obj("v1", "ConfigMap", data={"k": "b"}),
            "replace",
        ),
        (
            _obj("v1", "ConfigMap", data={"k": "a"}, metadata={"name": "x", "labels": {"l": "1"}}),
            _obj("v1", "ConfigMap", data={"k": "a"}, metadata={"name": "x", "labels": {"l": "2"}}),
            "update",
        ),
        (
            _obj("apps/v1", "StatefulSet", spec={"serviceName": "a", "replicas": 1}),
            _obj("apps/v1", "StatefulSet", spec={"serviceName": "b", "replicas": 1}),
            "replace",
        ),
        (
            _obj("apps/v1", "StatefulSet", spec={"serviceName": "a", "replicas": 1}),
            _obj("apps/v1", "StatefulSet", spec={"serviceName": "a", "replicas": 3}),
            "update",
        ),
        (
            _obj("apps/v1", "Deployment", spec={"selector": {"matchLabels": {"a": "1"}}}),
            _obj("apps/v1", "Deployment", spec={"selector": {"matchLabels": {"a": "2"}}}),
            "replace",
        ),
        (
            _obj("apps/v1", "Deployment", spec={"template": {"spec": {"x": 1}}}),
            _obj("apps/v1", "Deployment", spec={"template": {"spec": {"x": 2}}}),
            "update",
        ),
        (
            _obj("v1", "PersistentVolumeClaim", spec={"storageClassName": "a"}),
            _obj("v1", "PersistentVolumeClaim", spec={"storageClassName": "b"}),
            "replace",
        ),
        (
            _obj(
                "v1", "PersistentVolumeClaim", spec={"resources": {"requests": {"storage": "1Gi"}}}
            ),
            _obj(
                "v1", "PersistentVolumeClaim", spec={"resources": {"requests": {"storage": "2Gi"}}}
            ),
            "update",
        ),
        (
            _obj("rbac.authorization.k8s.io/v1", "RoleBinding", roleRef={"name": "a"}),
            _obj("rbac.authorization.k8s.io/v1", "RoleBinding", roleRef={"name": "b"}),
            "replace",
        ),
        (
            _obj("rbac.authorization.k8s.io/v1", "RoleBinding", subjects=[{"name": "a"}]),
            _obj("rbac.authorization.k8s.io/v1", "RoleBinding", subjects=[{"name": "b"}]),
            "update",
        ),
        (
            _obj("policy/v1beta1", "PodDisruptionBudget", spec={"minAvailable": 1}),
            _obj("policy/v1beta1", "PodDisruptionBudget", spec={"minAvailable": 2}),
            "replace",
        ),
        (
            _obj("policy/v1", "PodDisruptionBudget", spec={"minAvailable": 1}),
            _obj("policy/v1", "PodDisruptionBudget", spec={"minAvailable": 2}),
            "update",
        ),
        (
            _obj("storage.k8s.io/v1", "StorageClass", provisioner="a"),
            _obj("storage.k8s.io/v1", "StorageClass", provisioner="b"),
            "replace",
        ),
        (
            _obj("v1", "ResourceQuota", spec={"scopes": ["A"]}),
            _obj("v1", "ResourceQuota", spec={"scopes": ["B"]}),
            "replace",
        ),
        # Custom resources have no rule: a TFJob's template change is an update.
        (
            _obj("kubeflow.org/v1", "TFJob", spec={"tfReplicaSpecs": {"Worker": {"replicas": 1}}}),
            _obj("kubeflow.org/v1", "TFJob", spec={"tfReplicaSpecs": {"Worker": {"replicas": 2}}}),
            "update",
        ),
        # Another version is another Pulumi resource type.
        (_obj("kubeflow.org/v1", "TFJob"), _obj("kubeflow.org/v2", "TFJob"), "replace"),
    ],
)
def test_kinds(old: dict[str, Any], new: dict[str, Any], expected: str) -> None:
    assert _decide(old, new) == expected


def _holding(tokens: list[str], leaf: str) -> Any:
    """A value with ``leaf`` at the place ``tokens`` name (``*``: a one-item list)."""
    if not tokens:
        return leaf
    if tokens[0] == "*":
        return [_holding(tokens[1:], leaf)]
    return {tokens[0]: _holding(tokens[1:], leaf)}


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        both = isinstance(out.get(key), dict) and isinstance(value, dict)
        out[key] = _merge(out[key], value) if both else value
    return out


def _with_field(rule: ReplaceRule, field: str, leaf: str) -> dict[str, Any]:
    """An object of ``rule``'s kind whose ``field`` is ``leaf``."""
    version = rule.versions[0] if rule.versions else "v1"
    group = "" if rule.group in ("", "*") else rule.group
    base = {
        "apiVersion": f"{group}/{version}" if group else version,
        "kind": "Widget" if rule.kind == "*" else rule.kind,
        "metadata": {"name": "x", "namespace": "ns"},
    }
    tokens = field.replace("[*]", ".*").strip(".").split(".")
    return _merge(base, _holding(tokens, leaf))


@pytest.mark.parametrize(
    ("rule", "field"),
    [(rule, field) for rule in RULES for field in rule.fields],
    ids=[f"{rule.kind}{field}" for rule in RULES for field in rule.fields],
)
def test_every_listed_field_replaces(rule: ReplaceRule, field: str) -> None:
    old, new = _with_field(rule, field, "old"), _with_field(rule, field, "new")
    changes = field_changes(old, new)
    assert changes, field
    found = [replacing_rule(old, c) for c in changes]
    assert all(f is not None for f in found), (field, changes)


def test_rules_are_looked_up_by_group_version_and_kind() -> None:
    assert {r.cites for r in rules_for("v1", "Pod")} >= {
        "core/v1 Pod + containerForceNewProperties"
    }
    assert [r.kind for r in rules_for("kubeflow.org/v1", "TFJob")] == ["*", "*"]
    assert not any(r.kind == "StatefulSet" for r in rules_for("apps/v1beta1", "Deployment"))
    assert any(r.kind == "StatefulSet" for r in rules_for("apps/v1beta1", "StatefulSet"))


def test_a_rule_names_the_field_it_matched() -> None:
    old, new = _pod(), _set(_pod(), "spec.containers.0.image", "tf:2")
    (change,) = field_changes(old, new)
    found = replacing_rule(old, change)
    assert found is not None
    rule, field = found
    assert (rule.kind, field) == ("Pod", ".spec.containers[*].image")
