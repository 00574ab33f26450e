"""Seed operators and DatasetJob as Pulumi components, under mocks."""

from __future__ import annotations

from tests.support.pulumi_harness import run_program
from trainjobs.components import (
    Caffe2Operator,
    DatasetJob,
    MSOperator,
    MSOperatorV2,
    TrainingJob,
)
from trainjobs.platform.caffe2_operator import Caffe2OperatorSpec


def test_every_seed_operator_keeps_its_crd_when_deleted() -> None:
    def program() -> None:
        Caffe2Operator("caffe2-operator", Caffe2OperatorSpec(image="registry.local/c2:1"))
        MSOperator("ms-operator", {"image": "registry.local/ms:1"})
        MSOperatorV2("ms-operator-v2")

    resources = run_program(program)
    crds = {r.name: r for r in resources if r.type.endswith("CustomResourceDefinition")}
    assert sorted(crds) == [
        "caffe2jobs.kubeflow.org",
        "msjobs.kubeflow.org",
        "msjobs.mindspore.gitee.com",
    ]
    assert all(r.options["retain_on_delete"] for r in crds.values())
    components = [(r.type, r.name) for r in resources if not r.custom]
    assert components == [
        ("trainjobs:index:Caffe2Operator", "caffe2-operator"),
        ("trainjobs:index:MSOperator", "ms-operator"),
        ("trainjobs:index:MSOperatorV2", "ms-operator-v2"),
    ]


def test_the_operator_deployment_waits_for_its_rbac_and_crd() -> None:
    resources = run_program(lambda: MSOperatorV2("ms-operator"))
    (deployment,) = [r for r in resources if r.type.endswith("apps/v1:Deployment")]
    waits_for = {d.split("::")[-1] for d in deployment.options["dependencies"]}
    assert {
        "msjobs.mindspore.gitee.com",
        "ms-operator-system/ms-operator-controller-manager",
        "ms-operator-manager-rolebinding",
    } <= waits_for


def test_a_caffe2job_given_a_dataset_job_waits_for_it() -> None:
    job = {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "Caffe2Job",
        "metadata": {"name": "train"},
        "spec": {
            "replicaSpecs": {
                "replicas": 2,
                "template": {"spec": {"containers": [{"name": "caffe2", "image": "c2:1"}]}},
            }
        },
    }

    def program() -> None:
        data = DatasetJob(
            "mnist",
            {"share": {"claimName": "data", "mountPath": "/data"}, "container": {"image": "p:1"}},
        )
        TrainingJob("train", job, target="pods", backend=data)

    resources = run_program(program)
    (prepare,) = [r for r in resources if r.type == "kubernetes:batch/v1:Job"]
    assert prepare.options["custom_timeouts"] == {"create": "30m", "update": "30m"}
    assert "pulumi.com/skipAwait" not in prepare.inputs["metadata"].get("annotations", {})
    (component,) = [r for r in resources if r.type == "trainjobs:index:TrainingJob"]
    assert [d.split("::")[-1] for d in component.options["dependencies"]] == ["default/mnist"]
    pod = next(
        r for r in resources if r.type.endswith("Pod") and r.name == "default/train-worker-1"
    )
    env = {e["name"]: e["value"] for e in pod.inputs["spec"]["containers"][0]["env"]}
    assert env["NFS_PATH"] == "/data"
