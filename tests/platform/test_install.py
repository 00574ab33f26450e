"""The install builders every operator kind uses."""

from __future__ import annotations

from trainjobs.check.k8s_schema import problems
from trainjobs.platform.install import (
    PolicyRule,
    cluster_role,
    cluster_role_binding,
    crd,
    deployment,
    namespace,
    role,
    role_binding,
    service_account,
)

RULES = (
    PolicyRule(("",), ("pods",), ("get", "list", "watch")),
    PolicyRule(("",), ("pods/exec",), ("create",), resource_names=("pi-worker-0",)),
)


def test_every_builder_makes_a_schema_valid_object() -> None:
    labels = {"app": "op"}
    objects = [
        namespace("ops", labels),
        service_account("op", "ops", labels),
        cluster_role("op", RULES, labels),
        role("op", "ops", RULES),
        cluster_role_binding("op", "op", "op", "ops"),
        role_binding("op", "ops", "op", "op"),
        deployment(
            "op",
            "ops",
            {"app": "op"},
            {"containers": [{"name": "op", "image": "op:1"}]},
            pod_annotations={"sidecar.istio.io/inject": "false"},
        ),
    ]
    for obj in objects:
        assert problems(obj, "1.32") == [], obj["kind"]


def test_rules_keep_their_order_and_names() -> None:
    assert cluster_role("op", RULES)["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        {
            "apiGroups": [""],
            "resources": ["pods/exec"],
            "resourceNames": ["pi-worker-0"],
            "verbs": ["create"],
        },
    ]
    binding = cluster_role_binding("op", "op-role", "op-sa", "ops")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "op-role",
    }
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "op-sa", "namespace": "ops"}]


def test_a_shipped_crd_is_a_fresh_copy_with_extra_labels() -> None:
    first = crd("training-operator-v1.9.4/kubeflow.org_tfjobs.yaml", {"app": "op"})
    assert first["metadata"]["name"] == "tfjobs.kubeflow.org"
    assert first["metadata"]["labels"] == {"app": "op"}
    first["spec"]["group"] = "changed"
    again = crd("training-operator-v1.9.4/kubeflow.org_tfjobs.yaml")
    assert again["spec"]["group"] == "kubeflow.org"
    assert "labels" not in again["metadata"]
