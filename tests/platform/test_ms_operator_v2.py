"""MSOperatorV2: upstream's deploy/v1 objects, with only the documented differences."""

from __future__ import annotations

from typing import Any

from tests.support.paths import DATA
from tests.support.rbac import assert_least_privilege
from trainjobs.check import run
from trainjobs.frameworks.mindspore_v2 import FRAMEWORK as MS2
from trainjobs.k8s.crds import load_crd
from trainjobs.k8s.yamlio import load_all
from trainjobs.platform.ms_operator_v2 import DEFAULT_IMAGE
from trainjobs.spec import parse_documents

UPSTREAM = DATA / "ms-operator" / "kubebuilder-v1" / "deploy" / "ms-operator.yaml"


def operator(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "MSOperatorV2",
        "metadata": {"name": "ms-operator"},
        "spec": spec,
    }


def objects(*docs: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (m["kind"], m["metadata"]["name"]): m for m in run(parse_documents(list(docs))).manifests
    }


def upstream() -> dict[tuple[str, str], dict[str, Any]]:
    return {(d["kind"], d["metadata"]["name"]): d for d in load_all(UPSTREAM.read_text())}


def test_the_same_objects_as_upstream() -> None:
    assert sorted(objects(operator(createNamespace=True))) == sorted(upstream())


def test_rules_are_upstreams_plus_events_for_the_manager() -> None:
    ours, theirs = objects(operator()), upstream()
    for key, manifest in theirs.items():
        if key[0] not in ("Role", "ClusterRole"):
            continue
        rules = ours[key]["rules"]
        if key == ("ClusterRole", "ms-operator-manager-role"):
            # Documented: the controller records events on every job.
            assert rules[0] == {
                "apiGroups": [""],
                "resources": ["events"],
                "verbs": ["create", "patch"],
            }
            rules = rules[1:]
        assert rules == manifest["rules"], key
    assert_least_privilege(ours.values())


def test_bindings_service_config_and_deployment_match_upstream() -> None:
    ours, theirs = objects(operator()), upstream()
    for key, manifest in theirs.items():
        if key[0] in ("RoleBinding", "ClusterRoleBinding"):
            assert (ours[key]["roleRef"], ours[key]["subjects"]) == (
                manifest["roleRef"],
                manifest["subjects"],
            )
    key = ("ConfigMap", "ms-operator-manager-config")
    assert ours[key]["data"] == theirs[key]["data"]
    key = ("Service", "ms-operator-controller-manager-metrics-service")
    assert ours[key]["spec"] == theirs[key]["spec"]
    key = ("Deployment", "ms-operator-controller-manager")
    ours_pod, their_pod = (d[key]["spec"]["template"] for d in (ours, theirs))
    assert ours[key]["spec"]["selector"] == theirs[key]["spec"]["selector"]
    assert ours_pod["metadata"]["annotations"] == their_pod["metadata"]["annotations"]
    for mine, upstream_container in zip(
        ours_pod["spec"]["containers"], their_pod["spec"]["containers"], strict=True
    ):
        differs = {"image", "securityContext"}
        assert {k: v for k, v in mine.items() if k not in differs} == {
            k: v for k, v in upstream_container.items() if k not in differs
        }
    assert ours_pod["spec"]["containers"][1]["image"] == DEFAULT_IMAGE


def test_without_the_metrics_proxy() -> None:
    found = objects(operator(metricsProxy=False))
    assert ("Service", "ms-operator-controller-manager-metrics-service") not in found
    assert ("ClusterRole", "ms-operator-proxy-role") not in found
    pod = found[("Deployment", "ms-operator-controller-manager")]["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["manager"]


def test_the_crd_is_the_generated_one_serving_status() -> None:
    crd = objects(operator())[("CustomResourceDefinition", "msjobs.mindspore.gitee.com")]
    (version,) = crd["spec"]["versions"]
    # The controller writes conditions through msjobs/status.
    assert version["subresources"] == {"status": {}}
    assert crd["spec"] == load_crd(MS2.crd_file)["spec"]
