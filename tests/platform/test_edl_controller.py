"""EdlController: the EDL controller install, its least-privilege RBAC, jobs after it."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.frameworks.crds import crd_files
from trainjobs.k8s.yamlio import load_all
from trainjobs.render import UnitRef
from trainjobs.spec import parse_documents

CONTROLLER: dict[str, Any] = {
    "apiVersion": "trainjobs.dev/v1alpha1",
    "kind": "EdlController",
    "metadata": {"name": "training-job-controller"},
    "spec": {"createNamespace": True},
}
JOB: dict[str, Any] = {
    "apiVersion": "paddlepaddle.org/v1",
    "kind": "TrainingJob",
    "metadata": {"name": "example", "namespace": "team-a"},
    "spec": {
        "fault_tolerant": True,
        "trainer": {
            "entrypoint": "python train.py",
            "min-instance": 2,
            "max-instance": 4,
            "resources": {"requests": {"cpu": 1}},
        },
        "pserver": {"min-instance": 1},
    },
}


def _objects(*docs: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (m["kind"], m["metadata"]["name"]): m for m in run(parse_documents(list(docs))).manifests
    }


def test_install_objects_in_apply_order() -> None:
    manifests = run(parse_documents([CONTROLLER])).manifests
    assert [
        (m["kind"], m["metadata"].get("namespace", "-"), m["metadata"]["name"]) for m in manifests
    ] == [
        ("CustomResourceDefinition", "-", "trainingjobs.paddlepaddle.org"),
        ("Namespace", "-", "paddlecloud"),
        ("ServiceAccount", "paddlecloud", "training-job-controller"),
        ("ClusterRole", "-", "training-job-controller"),
        ("ClusterRoleBinding", "-", "training-job-controller"),
        ("Deployment", "paddlecloud", "training-job-controller"),
    ]


def test_the_crd_is_the_generated_one() -> None:
    crd = _objects(CONTROLLER)[("CustomResourceDefinition", "trainingjobs.paddlepaddle.org")]
    (generated,) = load_all(crd_files()["generated/trainingjobs.paddlepaddle.org.yaml"])
    assert crd["spec"] == generated["spec"]
    assert crd["metadata"]["labels"]["app.kubernetes.io/name"] == "edl-controller"


def test_rbac_is_exactly_the_calls_the_controller_makes() -> None:
    objects = _objects(CONTROLLER)
    assert objects[("ClusterRole", "training-job-controller")]["rules"] == [
        {
            "apiGroups": ["paddlepaddle.org"],
            "resources": ["trainingjobs"],
            "verbs": ["list", "watch"],
        },
        {"apiGroups": ["apps", "extensions"], "resources": ["replicasets"], "verbs": ["create"]},
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "get", "update"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
    ]
    binding = objects[("ClusterRoleBinding", "training-job-controller")]
    assert binding["roleRef"]["name"] == "training-job-controller"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "training-job-controller", "namespace": "paddlecloud"}
    ]


def test_the_deployment_runs_upstreams_command() -> None:
    deployment = _objects(CONTROLLER)[("Deployment", "training-job-controller")]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    # k8s/edl_controller.yaml at 37764f3: the same image, command and env.
    assert container["image"] == "yancey1989/edl-controller"
    assert container["command"] == [
        "/usr/local/bin/edl",
        "-logtostderr",
        "-log_level",
        "debug",
        "-max_load_desired",
        "0.9",
    ]
    assert container["env"] == [
        {"name": "https_proxy"},
        {"name": "http_proxy"},
    ]
    assert pod["serviceAccountName"] == "training-job-controller"
    assert pod["automountServiceAccountToken"] is True
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert deployment["spec"]["replicas"] == 1


def test_spec_settings() -> None:
    custom = {
        **CONTROLLER,
        "metadata": {"name": "edl", "namespace": "kube-system"},
        "spec": {
            "image": "registry.example.org/edl-controller:2018",
            "maxLoadDesired": 0.75,
            "logLevel": "info",
            "createNamespace": False,
        },
    }
    objects = _objects(custom)
    assert ("Namespace", "kube-system") not in objects
    (container,) = objects[("Deployment", "edl")]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.example.org/edl-controller:2018"
    assert container["command"][2:] == ["-log_level", "info", "-max_load_desired", "0.75"]


def test_max_load_must_be_a_share() -> None:
    with pytest.raises(SpecError) as info:
        run(parse_documents([{**CONTROLLER, "spec": {"maxLoadDesired": 1.5}}]))
    assert [f.render() for f in info.value.errors] == [
        "error: operators[0].spec.maxLoadDesired: input should be less than or equal to 1 "
        "(got 1.5); fix: change the number to fit the bound"
    ]


def test_a_training_job_on_the_operator_target_comes_after_the_controller() -> None:
    rendering = run(parse_documents([JOB, CONTROLLER]), target="operator")
    (job,) = rendering.jobs
    assert UnitRef("operator", "paddlecloud/training-job-controller") in job.depends_on
    assert [m["kind"] for m in rendering.manifests][-1] == "TrainingJob"
