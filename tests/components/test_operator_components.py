"""Operator components under mocks: CRDs kept on delete, webhooks after their server."""

from __future__ import annotations

from tests.support.paths import EXAMPLES
from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import JobSet, MPIOperator, Trainer, TrainingJob, TrainingOperator
from trainjobs.spec import load_path


def _named(resources: list[Registered], kind: str) -> dict[str, Registered]:
    return {r.name: r for r in resources if r.type.endswith(f":{kind}")}


def _deps(resource: Registered) -> list[str]:
    return sorted(d.split("$", 2)[-1] for d in resource.options["dependencies"])


def test_every_crd_of_every_operator_is_retained_on_delete() -> None:
    def program() -> None:
        TrainingOperator("kubeflow", {"enabledSchemes": ["TFJob"]})
        MPIOperator("mpi")
        JobSet("jobset")
        Trainer("trainer", {"installJobSet": False, "createNamespace": False})

    resources = run_program(program)
    crds = [r for r in resources if r.type.endswith("CustomResourceDefinition")]
    assert sorted(r.name for r in crds) == [
        "clustertrainingruntimes.trainer.kubeflow.org",
        "jobsets.jobset.x-k8s.io",
        "mpijobs.kubeflow.org",
        "tfjobs.kubeflow.org",
        "trainingruntimes.trainer.kubeflow.org",
        "trainjobs.trainer.kubeflow.org",
    ]
    assert all(r.options["retain_on_delete"] for r in crds)
    others = [r for r in resources if r.custom and r not in crds]
    assert not any(r.options["retain_on_delete"] for r in others)


def test_webhooks_wait_for_the_deployment_that_serves_them() -> None:
    resources = run_program(lambda: TrainingOperator("kubeflow"))
    (hooks,) = _named(resources, "ValidatingWebhookConfiguration").values()
    assert "kubernetes:apps/v1:Deployment::kubeflow/training-operator" in _deps(hooks)
    assert "kubernetes:core/v1:Service::kubeflow/training-operator" in _deps(hooks)
    deployment = _named(resources, "Deployment")["kubeflow/training-operator"]
    assert "kubernetes:core/v1:Secret::kubeflow/training-operator-webhook-cert" in _deps(deployment)


def test_jobset_webhooks_and_conversion_wait_for_its_controller() -> None:
    resources = run_program(lambda: JobSet("jobset"))
    for hooks in [
        *_named(resources, "MutatingWebhookConfiguration").values(),
        *_named(resources, "ValidatingWebhookConfiguration").values(),
    ]:
        assert "kubernetes:apps/v1:Deployment::jobset-system/jobset-controller-manager" in _deps(
            hooks
        )
    assert (
        _named(resources, "CustomResourceDefinition")["jobsets.jobset.x-k8s.io"].inputs["spec"][
            "conversion"
        ]["webhook"]["clientConfig"]["service"]["namespace"]
        == "jobset-system"
    )


def test_a_training_job_component_can_be_gang_scheduled() -> None:
    (entry,) = load_path(EXAMPLES / "tf-mnist" / "tfjob.yaml").jobs
    resources = run_program(
        lambda: TrainingJob("mnist", entry.job, target="pods", gang="scheduler-plugins")
    )
    (group,) = _named(resources, "PodGroup").values()
    assert group.type == "kubernetes:scheduling.x-k8s.io/v1alpha1:PodGroup"
    assert group.inputs["spec"]["minMember"] == 4
    pod = _named(resources, "Pod")["kubeflow/mnist-worker-0"]
    assert pod.inputs["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "mnist"
    assert "kubernetes:scheduling.x-k8s.io/v1alpha1:PodGroup::kubeflow/mnist" in _deps(pod)


def test_an_operator_creates_its_namespace_only_when_asked() -> None:
    """A component never owns a namespace it was not asked to create: destroying it
    would delete every job in that namespace."""
    by_default = run_program(lambda: TrainingOperator("training-operator"))
    assert [r for r in by_default if r.type == "kubernetes:core/v1:Namespace"] == []
    asked = run_program(lambda: TrainingOperator("training-operator", {"createNamespace": True}))
    (namespace,) = [r for r in asked if r.type == "kubernetes:core/v1:Namespace"]
    assert namespace.name == "kubeflow"
    assert namespace.parent.endswith("trainjobs:index:TrainingOperator::training-operator")
