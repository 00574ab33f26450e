"""The trainjob framework wired into the render: queues on each target, limits and the
user's own field paths."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import EXAMPLES
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import parse_documents

TORCH_GPU: Path = EXAMPLES / "trainjob-torch-gpu" / "trainjob.yaml"
TRAINJOB: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "tj"},
    "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2}},
}
QUEUE = "kueue.x-k8s.io/queue-name"
PRIORITY = "kueue.x-k8s.io/priority-class"


def _manifests(target: str) -> list[dict[str, Any]]:
    docs = load_all(TORCH_GPU.read_text())
    return run(parse_documents(docs), target=target).manifests  # type: ignore[arg-type]


def _one(manifests: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [m for m in manifests if m["kind"] == kind]
    return found


def test_the_queue_label_sits_where_kueue_admits_the_workload() -> None:
    trainjob = _one(_manifests("operator"), "TrainJob")
    assert trainjob["metadata"]["labels"][QUEUE] == "team-a"
    assert trainjob["spec"]["suspend"] is True
    jobset = _one(_manifests("jobset"), "JobSet")
    assert jobset["metadata"]["labels"][QUEUE] == "team-a"
    job = _one(_manifests("pods"), "Job")
    assert job["metadata"]["labels"][QUEUE] == "team-a" and job["spec"]["suspend"] is True
    pod_meta = job["spec"]["template"]["metadata"]
    assert not any(k.startswith("kueue.x-k8s.io/") for k in pod_meta["labels"])
    assert not any(k.startswith("kueue.x-k8s.io/") for k in pod_meta.get("annotations", {}))


def test_the_node_pool_survives_the_queue_in_one_runtime_patch() -> None:
    trainjob = _one(_manifests("operator"), "TrainJob")
    (patch,) = trainjob["spec"]["runtimePatches"]
    assert patch["manager"] == "trainjobs.dev/trainjobs"
    job = _one(_manifests("pods"), "Job")
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {"gpu-pool": "a100"}


def test_a_suspended_trainjob_without_a_queue_warns_on_the_pods_target() -> None:
    doc = copy.deepcopy(TRAINJOB)
    doc["spec"]["suspend"] = True
    rendering = run(parse_documents([doc]), target="pods")
    assert "trainjob.pods_suspended" in [f.code for f in rendering.findings]
    assert _one(rendering.manifests, "Job")["spec"]["suspend"] is True


def test_a_queue_label_written_on_the_trainjob_goes_where_kueue_admits_it() -> None:
    # No trainjobs queue: the user labelled the TrainJob for Kueue themselves. Without
    # the Trainer nothing would copy it, so the JobSet (jobset target) or the Jobs
    # (pods target) carry it, and a suspended job's Jobs are then resumed by Kueue.
    doc = copy.deepcopy(TRAINJOB)
    doc["metadata"]["labels"] = {QUEUE: "by-hand", PRIORITY: "low", "team": "ml"}
    doc["spec"]["suspend"] = True
    jobset = _one(run(parse_documents([doc]), target="jobset").manifests, "JobSet")
    assert {k: v for k, v in jobset["metadata"]["labels"].items() if "kueue" in k} == {
        QUEUE: "by-hand",
        PRIORITY: "low",
    }
    assert "team" not in jobset["metadata"]["labels"]
    rendering = run(parse_documents([doc]), target="pods")
    jobs = [m for m in rendering.manifests if m["kind"] == "Job"]
    assert jobs and all(j["metadata"]["labels"][QUEUE] == "by-hand" for j in jobs)
    assert "trainjob.pods_suspended" not in [f.code for f in rendering.findings]


def test_a_queue_resumes_a_suspended_trainjobs_jobs_so_nothing_warns() -> None:
    docs = load_all(TORCH_GPU.read_text())
    rendering = run(parse_documents(docs), target="pods")
    assert "trainjob.pods_suspended" not in [f.code for f in rendering.findings]


def _queued(target: str, labels: dict[str, str]) -> list[dict[str, Any]]:
    docs = load_all(TORCH_GPU.read_text())
    (trainjob,) = [d for d in docs if d["kind"] == "TrainJob"]
    trainjob["metadata"]["labels"] = labels
    return run(parse_documents(docs), target=target).manifests  # type: ignore[arg-type]


def test_the_priority_class_travels_with_the_queue_to_what_kueue_admits() -> None:
    labels = {"team": "ml", PRIORITY: "high", QUEUE: "ignored"}
    jobset = _one(_queued("jobset", labels), "JobSet")
    queue_labels = {k: v for k, v in jobset["metadata"]["labels"].items() if "kueue" in k}
    assert list(queue_labels.items()) == [(PRIORITY, "high"), (QUEUE, "team-a")]
    assert "team" not in jobset["metadata"]["labels"]  # Trainer copies no TrainJob label
    job = _one(_queued("pods", labels), "Job")
    assert job["metadata"]["labels"][PRIORITY] == "high"
    assert job["metadata"]["labels"][QUEUE] == "team-a"
    trainjob = _one(_queued("operator", labels), "TrainJob")
    assert trainjob["metadata"]["labels"] == {"team": "ml", PRIORITY: "high", QUEUE: "team-a"}


def _errors(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as err:
        run(parse_documents([doc]))
    return [f.render() for f in err.value.errors]


def test_too_many_nodes_is_refused_before_anything_is_built() -> None:
    doc = copy.deepcopy(TRAINJOB)
    doc["spec"]["trainer"]["numNodes"] = 10**12
    (message,) = [e for e in _errors(doc) if "numNodes" in e]
    assert message.startswith("error: jobs[0].spec.trainer.numNodes: the job would run ")


def test_unknown_and_mistyped_fields_are_named_where_the_user_wrote_them() -> None:
    doc = copy.deepcopy(TRAINJOB)
    doc["spec"]["trainer"]["resourcesPerNode"] = {"limitz": {"cpu": 1}, "requests": {"cpu": []}}
    errors = _errors(doc)
    assert any(
        e.startswith("error: jobs[0].spec.trainer.resourcesPerNode.limitz: unknown field")
        and "did you mean 'limits'?" in e
        for e in errors
    )
    assert any(
        e.startswith(
            "error: jobs[0].spec.trainer.resourcesPerNode.requests.cpu: must be a "
            "number or a string"
        )
        for e in errors
    )
