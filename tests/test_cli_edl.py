"""``trainjobs edl-scale`` as a user meets it: a cluster file or capacity in, a plan out."""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import EXAMPLES, STACKS
from tests.test_cli import trainjobs

JOB = str(EXAMPLES / "paddle-edl-fit-a-line" / "trainingjob.yaml")

CLUSTER = """\
apiVersion: v1
kind: List
items:
- kind: Node
  metadata: {name: node-1}
  status: {allocatable: {cpu: "4", memory: 8Gi}}
- kind: Pod
  metadata: {name: example-trainer-a, namespace: default, labels: {paddle-job: example}}
  spec:
    nodeName: node-1
    containers: [{name: trainer, resources: {requests: {cpu: 200m, memory: 200Mi}}}]
  status: {phase: Running}
- kind: Pod
  metadata: {name: example-trainer-b, namespace: default, labels: {paddle-job: example}}
  spec:
    nodeName: node-1
    containers: [{name: trainer, resources: {requests: {cpu: 200m, memory: 200Mi}}}]
  status: {phase: Running}
- kind: Pod
  metadata: {name: busy, namespace: other}
  spec: {nodeName: node-1, containers: [{name: c, resources: {requests: {cpu: "2", memory: 1Gi}}}]}
  status: {phase: Running}
- apiVersion: batch/v1
  kind: Job
  metadata: {name: example-trainer, namespace: default}
  spec: {parallelism: 2}
"""


def test_capacity_what_if() -> None:
    result = trainjobs("edl-scale", JOB, "--capacity", "cpu=4,memory=8Gi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].split() == [
        "default/example",
        "2",
        "10",
        "2",
        "10",
        "+8",
        "current",
        "trainers",
        "from",
        "min-instance",
    ]
    assert result.stderr == ""


def test_a_cluster_file_from_kubectl(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    result = trainjobs("edl-scale", JOB, "--cluster", str(cluster))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "cluster: 1 node; cpu 4000m, 2400m requested; memory 8590M, 1494M requested; "
        "gpu 0, 0 in limits; max load 0.9"
    )
    # 3600m allowed at max load 0.9: 6 more trainers of 200m fit (pods given: none simulated).
    assert lines[1].split()[:6] == ["JOB", "MIN", "MAX", "TRAINERS", "TARGET", "CHANGE"]
    assert lines[2].split()[:6] == ["default/example", "2", "10", "2", "8", "+6"]
    assert "from trainer Job" in lines[2]


def test_the_stack_controllers_max_load_is_used() -> None:
    result = trainjobs(
        "edl-scale",
        str(STACKS / "Pulumi.paddle-edl.yaml"),
        "--capacity",
        "cpu=4,memory=8Gi",
        "--max-load",
        "0.5",
    )
    assert result.returncode == 0, result.stderr
    assert "max load 0.5" in result.stdout.splitlines()[0]
    assert result.stdout.splitlines()[-1].split()[:6] == [
        "default/example",
        "2",
        "10",
        "2",
        "2",
        "+0",
    ]


def test_bad_input_exits_2_with_every_finding(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("kind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: many}}\n")
    result = trainjobs(
        "edl-scale", JOB, "--cluster", str(cluster), "--capacity", "cpu=1", "--parallelism", "x"
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: --capacity[0]: a node needs memory (got 'cpu=1'); "
        "fix: e.g. --capacity cpu=8,memory=32Gi",
        "error: --parallelism: expected NAME=N (or NAMESPACE/NAME=N) (got 'x'); "
        "fix: e.g. --parallelism example=4",
        "2 errors",
    ]
    result = trainjobs("edl-scale", JOB, "--cluster", str(cluster))
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == (
        f"error: {cluster}: [0].status.allocatable['cpu']: not a Kubernetes quantity (got 'many'); "
        "fix: write a quantity such as 8, 500m or 32Gi"
    )


def test_a_file_without_training_jobs(tmp_path: Path) -> None:
    result = trainjobs(
        "edl-scale", str(EXAMPLES / "tf-mnist" / "tfjob.yaml"), "--capacity", "cpu=1,memory=1Gi"
    )
    assert result.returncode == 2
    # The tf-mnist job's own advice (its ttl) may come first.
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors[0].startswith("error: no TrainingJob (paddlepaddle.org/v1) in the input")


def test_a_max_load_outside_the_controllers_bounds_is_bad_input() -> None:
    # The EdlController's maxLoadDesired is a share of the cluster: above 0, at most 1.
    # nan and inf reached the arithmetic and ended in an internal error (exit 3).
    for bad in ("nan", "inf", "0", "-3", "1.5"):
        result = trainjobs("edl-scale", JOB, "--capacity", "cpu=4,memory=8Gi", "--max-load", bad)
        assert result.returncode == 2, (bad, result.stderr)
        assert (
            f"argument --max-load: must be a number above 0 and at most 1 (got '{bad}'); "
            "fix: e.g. --max-load 0.9"
        ) in result.stderr
        assert "internal error" not in result.stderr
