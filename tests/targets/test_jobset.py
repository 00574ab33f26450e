"""The jobset target: what the Trainer controller makes of a TrainJob, through the render."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.spec import parse_documents
from trainjobs.targets.names import TARGETS
from trainjobs.targets.registry import PLUGINS

TRAINJOB: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "tj"},
    "spec": {
        "runtimeRef": {"name": "torch-distributed"},
        "trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 2}}},
    },
}


def _kinds(target: str) -> list[tuple[str, str]]:
    manifests = run(parse_documents([TRAINJOB]), target=target).manifests  # type: ignore[arg-type]
    return [(m["kind"], m["metadata"]["name"]) for m in manifests]


def test_every_target_name_has_its_plugin() -> None:
    assert set(TARGETS) == set(PLUGINS)


def test_a_plain_trainjob_renders_on_all_three_targets() -> None:
    assert _kinds("operator") == [("TrainJob", "tj")]
    assert _kinds("jobset") == [("JobSet", "tj")]
    assert _kinds("pods") == [("Service", "tj"), ("Job", "tj-node-0")]


def test_the_jobset_carries_the_trainers_env_and_resources() -> None:
    (jobset,) = run(parse_documents([TRAINJOB]), target="jobset").manifests
    assert jobset["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
    (rjob,) = jobset["spec"]["replicatedJobs"]
    assert rjob["template"]["spec"]["parallelism"] == 2
    (node,) = rjob["template"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in node["env"]}
    assert env["PET_NNODES"] == "2" and env["PET_MASTER_ADDR"] == "tj-node-0-0.tj"
    assert env["PET_NPROC_PER_NODE"] == "auto"
    assert node["resources"] == {"limits": {"nvidia.com/gpu": "2"}}


def test_a_kind_without_the_target_says_which_it_has() -> None:
    pytorchjob = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pt"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "pytorch", "image": "p:1"}]}},
                }
            }
        },
    }
    with pytest.raises(SpecError) as err:
        run(parse_documents([pytorchjob]), target="jobset")
    assert [f.render() for f in err.value.errors] == [
        "error: jobs[0]: PyTorchJob cannot be rendered to target 'jobset', which --target "
        "gives every job (got 'jobset'); fix: render this job without --target, or with "
        "one of: operator, pods, trainer"
    ]
