"""MSOperator (2020 Helm chart objects): least privilege, the chart's options, the image warning."""

from __future__ import annotations

from typing import Any

from tests.support.paths import DATA
from tests.support.rbac import assert_least_privilege
from trainjobs.check import run
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import parse_documents


def operator(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "MSOperator",
        "metadata": {"name": "ms-operator"},
        "spec": spec,
    }


def objects(*docs: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (m["kind"], m["metadata"]["name"]): m for m in run(parse_documents(list(docs))).manifests
    }


def test_the_charts_objects_with_rbac_always_installed() -> None:
    found = objects(operator(image="mindspore/ms-operator:0.1", createNamespace=True))
    assert sorted(found) == [
        ("ClusterRole", "ms-operator"),
        ("ClusterRoleBinding", "ms-operator"),
        ("CustomResourceDefinition", "msjobs.kubeflow.org"),
        ("Deployment", "ms-operator"),
        ("Namespace", "ms-operator"),
        ("Role", "ms-operator-leader-election"),
        ("RoleBinding", "ms-operator-leader-election"),
        ("ServiceAccount", "ms-operator"),
    ]
    assert found[("ClusterRole", "ms-operator")]["rules"] == [
        {"apiGroups": ["kubeflow.org"], "resources": ["msjobs"], "verbs": ["get", "list", "watch"]},
        {
            "apiGroups": [""],
            "resources": ["pods"],
            "verbs": ["get", "list", "create", "deletecollection"],
        },
        {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "create", "delete"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "delete"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
    ]
    assert found[("Role", "ms-operator-leader-election")]["rules"][1]["resourceNames"] == [
        "ms-operator"
    ]
    assert_least_privilege(found.values())


def test_the_deployment_is_the_charts_on_apps_v1() -> None:
    deployment = objects(operator(image="mindspore/ms-operator:0.1"))[("Deployment", "ms-operator")]
    assert deployment["apiVersion"] == "apps/v1"
    assert deployment["spec"]["selector"] == {"matchLabels": {"name": "ms-operator"}}
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["/ms-operator", "-alsologtostderr", "-v=1"]
    assert container["imagePullPolicy"] == "IfNotPresent"


def test_a_controller_config_map_is_mounted_and_passed() -> None:
    found = objects(operator(image="ms:1", controllerConfigMap="ms-accelerators"))
    pod = found[("Deployment", "ms-operator")]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == [
        "/ms-operator",
        "--controller-config-file=/etc/config/controller-config-file.yaml",
        "-alsologtostderr",
        "-v=1",
    ]
    assert container["volumeMounts"][-1] == {"name": "config-volume", "mountPath": "/etc/config"}
    assert pod["volumes"][-1] == {"name": "config-volume", "configMap": {"name": "ms-accelerators"}}


def test_the_default_floating_image_is_warned_about_in_the_render() -> None:
    rendering = run(parse_documents([operator()]))
    # The operator's own warning; the image.unpinned check rule says it too.
    assert [f.render() for f in rendering.findings if f.code != "image.unpinned"] == [
        "warning: operators[0].spec.image: the image tag floats: each node may pull a different "
        "build, or none (got 'mindspore/ms-operator:latest'); fix: build or mirror the operator "
        "and set spec.image to a fixed tag or digest"
    ]
    pinned = run(parse_documents([operator(image="registry.local/ms-operator@sha256:ab")]))
    assert pinned.findings == ()


def test_the_crd_has_the_charts_names() -> None:
    (upstream,) = load_all((DATA / "ms-operator" / "legacy-kubeflow-v1" / "crd.yaml").read_text())
    crd = objects(operator(image="ms:1"))[("CustomResourceDefinition", "msjobs.kubeflow.org")]
    assert crd["spec"]["group"] == upstream["spec"]["group"]
    assert {k: crd["spec"]["names"][k] for k in upstream["spec"]["names"]} == upstream["spec"][
        "names"
    ]
    assert [v["name"] for v in crd["spec"]["versions"]] == [upstream["spec"]["version"]]
