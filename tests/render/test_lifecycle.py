"""How long `pulumi up` waits for each object: decided in the render, applied by components."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import EXAMPLES
from tests.support.pulumi_harness import run_program
from trainjobs.check import run
from trainjobs.components import TrainingJob, program
from trainjobs.components.job import InvalidJobError
from trainjobs.errors import SpecError
from trainjobs.k8s.yamlio import load_all
from trainjobs.render.lifecycle import Lifecycle
from trainjobs.spec import parse_documents


def _job(**options: Any) -> dict[str, Any]:
    doc: dict[str, Any] = load_all((EXAMPLES / "tf-mnist" / "tfjob.yaml").read_text())[0]
    return {**doc, "trainjobs": options}


def _lifecycles(**options: Any) -> dict[str, Lifecycle]:
    rendering = run(parse_documents([_job(**options)]))
    return {o.title: o.lifecycle for o in rendering.objects}


def test_by_default_pulumi_does_not_wait_for_training_pods() -> None:
    found = _lifecycles(target="pods")
    assert found["Pod kubeflow/mnist-worker-0"] == Lifecycle(skip_await=True)
    # Services come before the pods they select, so they are never awaited.
    assert found["Service kubeflow/mnist-worker-0"] == Lifecycle(skip_await=True)
    assert _lifecycles()["TFJob kubeflow/mnist"] == Lifecycle()


def test_wait_running_awaits_pods_or_the_running_condition() -> None:
    pods = _lifecycles(target="pods", wait="running", waitTimeout="3h")
    assert pods["Pod kubeflow/mnist-ps-0"] == Lifecycle(timeout="3h")
    cr = _lifecycles(wait="running")["TFJob kubeflow/mnist"]
    assert cr == Lifecycle(wait_for="condition=Running", timeout="60m")
    assert cr.annotations() == {"pulumi.com/waitFor": "condition=Running"}


def test_wait_succeeded_needs_something_that_reports_success() -> None:
    cr = _lifecycles(wait="succeeded")["TFJob kubeflow/mnist"]
    assert cr == Lifecycle(wait_for="condition=Succeeded", timeout="60m")
    with pytest.raises(SpecError) as err:
        run(parse_documents([_job(target="pods", wait="succeeded")]))
    assert [f.render() for f in err.value.errors] == [
        "error: jobs[0].trainjobs.wait: nothing among this job's objects reports the job's "
        "success, so `pulumi up` cannot wait for it (got 'succeeded'); fix: use the operator "
        "target, whose custom resource reports success, or wait: running"
    ]


def test_a_bad_timeout_is_reported_with_its_path() -> None:
    with pytest.raises(SpecError) as err:
        run(parse_documents([_job(wait="running", waitTimeout="1 hour")]))
    assert [f.path for f in err.value.errors] == ["jobs[0].trainjobs.waitTimeout"]


def test_components_turn_the_decision_into_annotations_and_timeouts() -> None:
    job = parse_documents([_job()]).jobs[0].job

    def program() -> None:
        TrainingJob("a", job, target="pods")

    resources = run_program(program)
    pod = next(
        r for r in resources if r.name == "a:kubeflow/mnist-worker-0" and r.type.endswith("Pod")
    )
    assert pod.inputs["metadata"]["annotations"] == {
        "pulumi.com/skipAwait": "true",
        "trainjobs.dev/stack": "trainjobs/test",
    }
    assert pod.options["custom_timeouts"] == {}


def test_components_set_custom_timeouts_when_waiting() -> None:
    job = parse_documents([_job(wait="running", waitTimeout="2h")]).jobs[0]

    def program() -> None:
        TrainingJob("a", job.job, target="operator", wait="running", wait_timeout="2h")

    resources = run_program(program)
    (cr,) = [r for r in resources if r.type.endswith("TFJob")]
    assert cr.inputs["metadata"]["annotations"] == {
        "pulumi.com/waitFor": "condition=Running",
        "trainjobs.dev/stack": "trainjobs/test",
    }
    assert cr.options["custom_timeouts"] == {"create": "2h", "update": "2h"}


def test_the_python_api_checks_wait_options_like_yaml_does() -> None:
    job = parse_documents([_job()]).jobs[0].job
    with pytest.raises(InvalidJobError) as err:
        run_program(lambda: TrainingJob("a", job, wait="running", wait_timeout="soon"))
    assert [f.render() for f in err.value.findings] == [
        "error: jobs[0].trainjobs.waitTimeout: must be a whole number of s, m "
        "or h (got 'soon'); fix: write e.g. 90m or 2h"
    ]


def _trainer(**options: Any) -> dict[str, Lifecycle]:
    doc: dict[str, Any] = load_all((EXAMPLES / "pytorch-ddp" / "pytorchjob.yaml").read_text())[0]
    rendering = run(parse_documents([{**doc, "trainjobs": {"target": "trainer", **options}}]))
    return {o.title: o.lifecycle for o in rendering.objects}


def test_the_trainer_target_waits_on_the_trainjobs_own_conditions() -> None:
    found = _trainer(wait="succeeded", waitTimeout="2h")
    (trainjob,) = [v for k, v in found.items() if k.startswith("TrainJob ")]
    assert trainjob == Lifecycle(wait_for="condition=Complete", timeout="2h")
    (runtime,) = [v for k, v in found.items() if k.startswith("ClusterTrainingRuntime ")]
    assert runtime == Lifecycle()
    with pytest.raises(SpecError) as err:
        _trainer(wait="running")
    assert [f.code for f in err.value.errors] == ["wait.running"]


def _dataset_on_pods() -> list[dict[str, Any]]:
    """examples/trainjob-dataset (a runtime whose node job dependsOn its dataset
    initializer: Complete), its TrainJob on the pods target, without the Secret."""
    docs: list[dict[str, Any]] = load_all(
        (EXAMPLES / "trainjob-dataset" / "trainjob.yaml").read_text()
    )
    runtime, job = docs
    job["spec"]["initializer"]["dataset"].pop("secretRef")
    return [runtime, {**job, "trainjobs": {"target": "pods"}}]


def test_on_the_pods_target_a_job_is_created_after_those_it_depends_on() -> None:
    # JobSet's dependsOn (Complete), which no controller keeps on the pods target: the
    # initializer's Job is awaited until it completes, the node Job created after it.
    found = {o.title: o.lifecycle for o in run(parse_documents(_dataset_on_pods())).objects}
    initializer = "Job default/alpaca-sft-dataset-initializer-0"
    assert found[initializer] == Lifecycle(timeout="60m")
    assert found["Job default/alpaca-sft-node-0"] == Lifecycle(
        skip_await=True, after=("alpaca-sft-dataset-initializer-0",)
    )


def test_components_create_the_waiting_job_after_the_one_it_waits_for() -> None:
    config = {"trainjobs:jobs": _dataset_on_pods()}
    resources = run_program(program, config)
    jobs = {r.name: r for r in resources if r.type == "kubernetes:batch/v1:Job"}
    initializer = jobs["default/alpaca-sft-dataset-initializer-0"]
    node = jobs["default/alpaca-sft-node-0"]
    assert "pulumi.com/skipAwait" not in initializer.inputs["metadata"]["annotations"]
    assert initializer.options["custom_timeouts"] == {"create": "60m", "update": "60m"}
    assert initializer.urn in node.options["dependencies"]
    assert node.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
