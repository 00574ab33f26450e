"""Caffe2Operator: its objects, least-privilege RBAC, the required image, jobs waiting for it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import DATA
from tests.support.rbac import assert_least_privilege
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.frameworks.caffe2 import FRAMEWORK as CAFFE2
from trainjobs.k8s.crds import load_crd
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import parse_documents

IMAGE = "registry.local/kubeflow/caffe2-operator:3773f5b"


def operator(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "Caffe2Operator",
        "metadata": {"name": "caffe2-operator"},
        "spec": {"image": IMAGE, **spec},
    }


def objects(*docs: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (m["kind"], m["metadata"]["name"]): m for m in run(parse_documents(list(docs))).manifests
    }


def test_the_install_is_the_objects_a_controller_needs() -> None:
    assert sorted(objects(operator(createNamespace=True))) == [
        ("ClusterRole", "caffe2-operator"),
        ("ClusterRoleBinding", "caffe2-operator"),
        ("CustomResourceDefinition", "caffe2jobs.kubeflow.org"),
        ("Deployment", "caffe2-operator"),
        ("Namespace", "caffe2-operator"),
        ("Role", "caffe2-operator-leader-election"),
        ("RoleBinding", "caffe2-operator-leader-election"),
        ("ServiceAccount", "caffe2-operator"),
    ]


def test_rbac_is_exactly_the_controllers_calls() -> None:
    found = objects(operator())
    assert found[("ClusterRole", "caffe2-operator")]["rules"] == [
        {
            "apiGroups": ["kubeflow.org"],
            "resources": ["caffe2jobs"],
            "verbs": ["get", "list", "watch", "update"],
        },
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch", "create", "patch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
    ]
    lock = found[("Role", "caffe2-operator-leader-election")]
    assert lock["metadata"]["namespace"] == "caffe2-operator"
    assert lock["rules"] == [
        {"apiGroups": [""], "resources": ["endpoints"], "verbs": ["create"]},
        {
            "apiGroups": [""],
            "resources": ["endpoints"],
            "resourceNames": ["caffe2-operator"],
            "verbs": ["get", "update"],
        },
    ]
    assert_least_privilege(found.values())


def test_the_deployment_runs_the_given_image_as_non_root() -> None:
    deployment = objects(operator(args=["-alsologtostderr", "-v=4"]))[
        ("Deployment", "caffe2-operator")
    ]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert (container["image"], container["command"], container["args"]) == (
        IMAGE,
        ["/caffe2-operator"],
        ["-alsologtostderr", "-v=4"],
    )
    assert container["env"] == [
        {
            "name": "KUBEFLOW_NAMESPACE",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
        }
    ]
    assert pod["serviceAccountName"] == "caffe2-operator"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]


def test_the_crd_has_upstreams_names() -> None:
    (upstream,) = load_all((DATA / "caffe2" / "crd.yaml").read_text())
    crd = objects(operator())[("CustomResourceDefinition", "caffe2jobs.kubeflow.org")]
    assert crd["metadata"]["name"] == upstream["metadata"]["name"]
    assert crd["spec"]["group"] == upstream["spec"]["group"]
    assert {k: crd["spec"]["names"][k] for k in upstream["spec"]["names"]} == upstream["spec"][
        "names"
    ]
    assert [v["name"] for v in crd["spec"]["versions"]] == [upstream["spec"]["version"]]
    # The controller updates whole objects, status included: no status subresource.
    assert "subresources" not in crd["spec"]["versions"][0]
    assert crd["spec"] == load_crd(CAFFE2.crd_file)["spec"]


def test_the_image_is_required() -> None:
    doc = operator()
    del doc["spec"]["image"]
    with pytest.raises(SpecError) as err:
        parse_documents([doc])
    assert [f.render() for f in err.value.findings] == [
        "error: operators[0].spec.image: the caffe2-operator has no published image, so "
        "spec.image is required; fix: build the binary from github.com/kubeflow/caffe2-operator "
        "(commit 3773f5b, make) into an image, push it, and set spec.image to it"
    ]


def test_an_existing_namespace_is_not_created() -> None:
    doc = operator(createNamespace=False)
    doc["metadata"]["namespace"] = "kubeflow"
    found = objects(doc)
    assert ("Namespace", "kubeflow") not in found
    assert found[("Deployment", "caffe2-operator")]["metadata"]["namespace"] == "kubeflow"


def test_a_caffe2job_on_the_operator_target_waits_for_the_install() -> None:
    job = {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "Caffe2Job",
        "metadata": {"name": "one"},
        "spec": {
            "replicaSpecs": {
                "template": {"spec": {"containers": [{"name": "caffe2", "image": "c2:1"}]}}
            }
        },
    }
    rendering = run(parse_documents([job, operator()]))
    (unit,) = rendering.jobs
    assert [str(d) for d in unit.depends_on] == ["operator caffe2-operator/caffe2-operator"]
