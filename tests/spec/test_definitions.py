"""Documents a job refers to by name, declared beside it: Trainer runtimes in a job file
or stack, resolved first, emitted once on the operator target; and the "did you mean"
hint that stays in the document's API group."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.spec import parse_documents, parse_stack

API = "trainer.kubeflow.org/v1alpha1"
RUNTIME: dict[str, Any] = {
    "apiVersion": API,
    "kind": "TrainingRuntime",
    "metadata": {"name": "torch-small", "namespace": "ml"},
    "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {}},
        "template": {
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "node",
                        "template": {
                            "metadata": {
                                "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
                            },
                            "spec": {
                                "template": {
                                    "spec": {"containers": [{"name": "node", "image": "t:1"}]}
                                }
                            },
                        },
                    }
                ]
            }
        },
    },
}


def _trainjob(name: str, runtime: str = "torch-small", kind: str = "TrainingRuntime") -> Any:
    return {
        "apiVersion": API,
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"runtimeRef": {"name": runtime, "kind": kind}, "trainer": {"numNodes": 2}},
    }


def _errors(docs: list[Any]) -> list[str]:
    with pytest.raises(SpecError) as err:
        parse_documents(docs)
    return [f.render() for f in err.value.errors]


def test_a_declared_runtime_resolves_and_is_emitted_once_for_two_jobs() -> None:
    docs = [_trainjob("a"), RUNTIME, _trainjob("b")]
    rendering = run(parse_documents(docs))
    kinds = [(m["kind"], m["metadata"]["name"]) for m in rendering.manifests]
    assert kinds.count(("TrainingRuntime", "torch-small")) == 1
    assert ("TrainJob", "a") in kinds and ("TrainJob", "b") in kinds
    (runtime,) = [m for m in rendering.manifests if m["kind"] == "TrainingRuntime"]
    assert runtime == RUNTIME
    # The runtime travels with the first TrainJob that uses it, applied before it.
    (first,) = [j for j in rendering.jobs if j.ref.name == "ml/a"]
    assert [o.manifest["kind"] for o in first.objects] == ["TrainingRuntime", "TrainJob"]
    # The second is applied after the first, whose unit brings the runtime.
    (second,) = [j for j in rendering.jobs if j.ref.name == "ml/b"]
    assert first.ref in second.depends_on and not first.depends_on


@pytest.mark.parametrize("target", ["jobset", "pods"])
def test_the_runtime_is_not_emitted_where_no_trainer_reads_it(target: str) -> None:
    rendering = run(parse_documents([RUNTIME, _trainjob("a")]), target=target)  # type: ignore[arg-type]
    assert "TrainingRuntime" not in [m["kind"] for m in rendering.manifests]
    jobs = [m for m in rendering.manifests if m["kind"] in ("JobSet", "Job")]
    image = jobs[-1]["spec"]["replicatedJobs"][0] if target == "jobset" else jobs[-1]["spec"]
    assert "'image': 't:1'" in str(image)


def test_a_declared_cluster_runtime_wins_over_the_built_in_of_its_name() -> None:
    own = copy.deepcopy(RUNTIME)
    own["kind"] = "ClusterTrainingRuntime"
    own["metadata"] = {"name": "torch-distributed"}
    job = _trainjob("a", "torch-distributed", "ClusterTrainingRuntime")
    (jobset,) = run(parse_documents([own, job]), target="jobset").manifests
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == "t:1"


def test_a_runtime_in_a_stack_list_of_jobs() -> None:
    stack = parse_stack({"trainjobs:jobs": [RUNTIME, _trainjob("a")]})
    assert [m["kind"] for m in run(stack).manifests] == ["TrainingRuntime", "TrainJob"]


def test_a_runtime_declared_twice_or_for_no_trainjob_is_refused() -> None:
    assert _errors([RUNTIME, RUNTIME, _trainjob("a")]) == [
        "error: jobs[1].metadata.name: a second TrainingRuntime named 'torch-small': jobs[0] "
        "declares it already (got 'torch-small'); fix: rename one, or remove the copy"
    ]
    assert _errors([RUNTIME]) == [
        "error: jobs[0].kind: a TrainingRuntime is rendered with the jobs that use it, and "
        "this render has no TrainJob (got 'TrainingRuntime'); fix: add the TrainJob that "
        "uses it, or apply it with kubectl"
    ]


def test_the_runtime_webhook_rules_are_findings_at_the_runtimes_path() -> None:
    bad = copy.deepcopy(RUNTIME)
    bad["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = 2
    (message,) = _errors([bad, _trainjob("a")])
    assert message.startswith(
        "error: jobs[0].spec.template.spec.replicatedJobs[0].replicas: a trainer job always "
        "must have replicas 1"
    )


def test_a_malformed_runtime_names_its_field() -> None:
    bad = copy.deepcopy(RUNTIME)
    bad["spec"]["mlPolicy"]["numNodez"] = 1
    (message,) = _errors([bad, _trainjob("a")])
    assert message.startswith("error: jobs[0].spec.mlPolicy.numNodez: unknown field")


def test_did_you_mean_stays_in_the_documents_api_group() -> None:
    # TrainingJob is paddlepaddle.org's (EDL): never offered for another group's kind.
    (other,) = _errors([{**_trainjob("a"), "apiVersion": "example.com/v1", "kind": "TrainJobs"}])
    assert "did you mean" not in other and "fix: use one of: " in other
    (same,) = _errors([{**_trainjob("a"), "kind": "TrainJobs"}])
    assert same.endswith("fix: did you mean 'TrainJob' (trainer.kubeflow.org/v1alpha1)?")
    (runtime,) = _errors([{**RUNTIME, "kind": "TrainingRuntimes"}])
    assert runtime.endswith("fix: did you mean 'TrainingRuntime' (trainer.kubeflow.org/v1alpha1)?")
