"""The Pulumi components under mocks: children, parents, outputs, errors, CRD retention."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from tests.support.paths import EXAMPLES
from tests.support.pulumi_harness import run_program
from trainjobs.components import TrainingJob
from trainjobs.components.job import InvalidJobError
from trainjobs.components.register import logical_name, register_manifest, resource_class
from trainjobs.spec import load_path


def _tfjob() -> Any:
    return load_path(EXAMPLES / "tf-mnist" / "tfjob.yaml").jobs[0].job


def test_training_job_registers_children_under_itself() -> None:
    def program() -> None:
        TrainingJob("mnist", _tfjob(), target="pods")

    resources = run_program(program)
    component = resources[0]
    assert (component.type, component.name, component.custom) == (
        "trainjobs:index:TrainingJob",
        "mnist",
        False,
    )
    children = resources[1:]
    assert {r.type for r in children} == {"kubernetes:core/v1:Service", "kubernetes:core/v1:Pod"}
    assert all(r.parent.endswith("trainjobs:index:TrainingJob::mnist") for r in children)
    assert sorted(r.name for r in children if r.type.endswith("Pod")) == [
        "kubeflow/mnist-chief-0",
        "kubeflow/mnist-ps-0",
        "kubeflow/mnist-worker-0",
        "kubeflow/mnist-worker-1",
    ]


def test_operator_target_registers_a_custom_resource() -> None:
    resources = run_program(lambda: TrainingJob("mnist", _tfjob()))
    assert [r.type for r in resources[1:]] == ["kubernetes:kubeflow.org/v1:TFJob"]


def test_outputs_name_objects_and_addresses() -> None:
    seen: dict[str, Any] = {}

    def program() -> None:
        job = TrainingJob("mnist", _tfjob(), target="pods")
        job.addresses.apply(lambda v: seen.setdefault("addresses", v))
        job.objects.apply(lambda v: seen.setdefault("objects", v))

    run_program(program)
    # Full service addresses: what a client in another namespace (or a peered cluster
    # with the same domain) dials.
    assert seen["addresses"] == {"chief": "mnist-chief-0.kubeflow.svc.cluster.local:2222"}
    assert "Pod kubeflow/mnist-worker-1" in seen["objects"]


def test_invalid_job_raises_with_every_finding() -> None:
    doc = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "Bad"},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": -1, "template": {}}}},
    }
    with pytest.raises(InvalidJobError) as err:
        TrainingJob("bad", doc)
    assert [f.path for f in err.value.findings] == ["job.spec.tfReplicaSpecs.Worker.replicas"]
    assert isinstance(err.value, pulumi.RunError)


def test_resource_classes() -> None:
    assert resource_class("v1", "Pod") is k8s.core.v1.Pod
    assert resource_class("batch/v1", "Job") is k8s.batch.v1.Job
    assert resource_class("rbac.authorization.k8s.io/v1", "ClusterRole") is k8s.rbac.v1.ClusterRole
    assert resource_class("kubeflow.org/v1", "TFJob") is None


def test_logical_names() -> None:
    assert logical_name({"metadata": {"name": "a", "namespace": "ns"}}) == "ns/a"
    assert logical_name({"metadata": {"name": "tfjobs.kubeflow.org"}}) == "tfjobs.kubeflow.org"


def test_crds_are_retained_on_delete() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Thing", "plural": "things"},
            "scope": "Namespaced",
            "versions": [],
        },
    }
    resources = run_program(lambda: register_manifest(crd, pulumi.ResourceOptions()))
    (registered,) = resources
    assert registered.type == "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
    assert registered.options["retain_on_delete"] is True


def test_status_is_the_live_custom_resource_status() -> None:
    seen: dict[str, Any] = {}
    conditions = [{"type": "Created", "status": "True"}, {"type": "Running", "status": "True"}]

    def program() -> None:
        TrainingJob("mnist", _tfjob()).status.apply(lambda v: seen.setdefault("status", v))

    run_program(
        program, live={"kubernetes:kubeflow.org/v1:TFJob": {"status": {"conditions": conditions}}}
    )
    assert seen["status"] == {"conditions": conditions}


def test_status_on_the_pods_target_is_each_pods_phase() -> None:
    seen: dict[str, Any] = {}

    def program() -> None:
        job = TrainingJob("mnist", _tfjob(), target="pods")
        job.status.apply(lambda v: seen.setdefault("status", v))

    run_program(program, live={"kubernetes:core/v1:Pod": {"status": {"phase": "Running"}}})
    assert seen["status"] == {
        "pods": {
            "mnist-chief-0": "Running",
            "mnist-ps-0": "Running",
            "mnist-worker-0": "Running",
            "mnist-worker-1": "Running",
        }
    }


def test_status_on_the_trainer_target_is_the_trainjobs() -> None:
    seen: dict[str, Any] = {}
    job = load_path(EXAMPLES / "pytorch-ddp" / "pytorchjob.yaml").jobs[0].job
    complete = {"conditions": [{"type": "Complete", "status": "True"}]}

    def program() -> None:
        trained = TrainingJob("ddp", job, target="trainer")
        trained.status.apply(lambda v: seen.setdefault("status", v))

    run_program(
        program, live={"kubernetes:trainer.kubeflow.org/v1alpha1:TrainJob": {"status": complete}}
    )
    assert seen["status"] == complete
