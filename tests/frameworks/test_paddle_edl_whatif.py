"""What the EDL autoscaler would do: jobs + cluster objects → a report."""

from __future__ import annotations

from typing import Any

import pytest

from tests.frameworks.test_paddle_edl_inventory import container, example, node, objects, pod
from trainjobs.errors import SpecError
from trainjobs.frameworks.paddle_edl import FRAMEWORK as EDL
from trainjobs.frameworks.paddle_edl import TrainingJob
from trainjobs.frameworks.paddle_edl.whatif import format_report, what_if


def test_a_free_node_lets_the_job_grow_to_max_instance() -> None:
    result = what_if([example()], objects(node("n1", cpu="4", memory="8Gi")), max_load=0.9)
    assert result.simulated
    assert result.plan.targets() == {"default/example": 10}
    assert format_report(result) == (
        "cluster: 1 node; cpu 4000m, 1900m requested; memory 8590M, 2307M requested; "
        "gpu 0, 0 in limits; max load 0.9\n"
        "no pods given: the jobs' own pods are simulated, first fit by node name\n"
        "JOB              MIN  MAX  TRAINERS  TARGET  CHANGE  NOTE\n"
        "default/example  2    10   2         10      +8      current trainers from min-instance\n"
    )


def test_a_busy_cluster_shrinks_the_job_towards_min_instance() -> None:
    trainer = {"paddle-job": "example"}
    cluster = objects(
        node("n1", cpu="4", memory="8Gi"),
        pod("busy", "Running", "n1", containers=[container(cpu="3500m")]),
        *(
            pod(f"t{i}", "Running", "n1", labels=trainer, containers=[container(cpu="200m")])
            for i in range(4)
        ),
        {
            "kind": "Job",
            "metadata": {"name": "example-trainer", "namespace": "default"},
            "spec": {"parallelism": 4},
        },
    )
    result = what_if([example()], cluster, max_load=0.9)
    assert not result.simulated
    assert result.sources == {"default/example": "trainer Job"}
    # 4300m requested of 4000m: two trainers go, then min-instance stops it.
    assert result.plan.targets() == {"default/example": 2}


@pytest.mark.parametrize("key", ["example", "default/example"])
def test_parallelism_given_by_name_or_namespace_and_name(key: str) -> None:
    result = what_if(
        [example()],
        objects(node("n1", cpu="64", memory="64Gi")),
        max_load=0.9,
        parallelism={key: 7},
    )
    assert result.sources == {"default/example": "--parallelism"}
    assert result.plan.decisions[0].job.parallelism == 7
    assert result.plan.targets() == {"default/example": 10}


def test_no_nodes_and_negative_counts_are_findings() -> None:
    with pytest.raises(SpecError) as info:
        what_if([example()], [], max_load=0.9, parallelism={"example": -1})
    assert [f.render() for f in info.value.findings] == [
        "error: no Node among the cluster objects, so there is no capacity to plan with; "
        "fix: pass --cluster with `kubectl get nodes,pods,jobs -A -o yaml` output or "
        "--capacity cpu=8,memory=32Gi",
        "error: --parallelism example: a trainer count cannot be negative (got -1); "
        "fix: give the number of trainers the job runs now",
    ]


def test_a_count_for_a_job_not_in_the_input_is_a_finding() -> None:
    # A misspelt name used to be passed over: the plan then ran on min-instance, as if
    # the count had never been given.
    with pytest.raises(SpecError) as info:
        what_if(
            [example()],
            objects(node("n1", cpu="4", memory="8Gi")),
            max_load=0.9,
            parallelism={"exmaple": 3, "other/example": 2},
        )
    assert [f.render() for f in info.value.findings] == [
        "error: --parallelism exmaple: no TrainingJob of this name in the input "
        "(got 'exmaple'); fix: name one of: example, default/example",
        "error: --parallelism other/example: no TrainingJob of this name in the input "
        "(got 'other/example'); fix: name one of: example, default/example",
    ]


def _gpu_job() -> TrainingJob:
    doc: dict[str, Any] = example().model_dump(by_alias=True, exclude_none=True)
    doc["metadata"]["name"] = "gpu"
    doc["spec"]["trainer"]["resources"] = {"limits": {"nvidia.com/gpu": 1}, "requests": {"cpu": 1}}
    job = EDL.default(TrainingJob.model_validate(doc))
    assert isinstance(job, TrainingJob)
    return job


def test_an_oscillating_plan_is_reported() -> None:
    cluster = objects(
        node("n1", cpu="64", memory="256Gi", **{"nvidia.com/gpu": 10}),
        pod(
            "other",
            "Running",
            "n1",
            containers=[{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 7}}}],
        ),
    )
    # The job's 2 trainers hold 2 GPUs: 9 of 10 are taken, max load 0.9 allows 9.
    trainer = {"paddle-job": "gpu"}
    gpu_pod = {"name": "t", "resources": {"limits": {"nvidia.com/gpu": 1}}}
    cluster += objects(
        *(pod(f"t{i}", "Running", "n1", labels=trainer, containers=[gpu_pod]) for i in range(2))
    )
    result = what_if([_gpu_job()], cluster, max_load=0.9)
    assert result.plan.oscillating
    assert format_report(result).splitlines()[-1] == (
        "warning: the plan oscillates (a pass undoes the one before); the EDL controller would "
        "loop here forever. Lower max_load_desired or the jobs' max-instance."
    )
