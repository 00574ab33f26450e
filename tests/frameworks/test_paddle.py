"""PaddleJob: the reference's worked examples (§4.4) literally, PS mode, elasticPolicy, rules."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.paths import EXAMPLES
from tests.support.v1jobs import (
    crd_problems,
    document,
    env,
    job,
    lines,
    not_advice,
    objects,
    render_checked,
    replica,
)
from trainjobs.check import run
from trainjobs.frameworks.paddle import FRAMEWORK as PADDLE
from trainjobs.frameworks.paddle import PaddleJob
from trainjobs.spec import load_path

POD_IP_DUMMY = {"name": "POD_IP_DUMMY", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}

WORKED_WORKER_0_ENV = [
    {"name": "PYTHONUNBUFFERED", "value": "1"},
    {"name": "PADDLE_JOB_ID", "value": "paddle-simple"},
    {"name": "PADDLE_NNODES", "value": "2"},
    POD_IP_DUMMY,
    {"name": "PADDLE_MASTER", "value": "$(POD_IP_DUMMY):36543"},
]
WORKED_WORKER_1_ENV = [
    {"name": "PYTHONUNBUFFERED", "value": "1"},
    {"name": "PADDLE_JOB_ID", "value": "paddle-simple"},
    {"name": "PADDLE_NNODES", "value": "2"},
    {"name": "PADDLE_MASTER", "value": "paddle-simple-worker-0:36543"},
]


def collective(workers: int = 2, **spec: Any) -> PaddleJob:
    paddle = job(PADDLE, {"Worker": replica("paddle", workers)}, "paddle-simple", **spec)
    assert isinstance(paddle, PaddleJob)
    return paddle


def ps_mode() -> PaddleJob:
    paddle = job(PADDLE, {"Master": replica("paddle", 2), "Worker": replica("paddle", 2)}, "ps")
    assert isinstance(paddle, PaddleJob)
    return paddle


def test_worked_example_collective_env_is_exact() -> None:
    out = objects(PADDLE, collective())
    assert env(out[("Pod", "paddle-simple-worker-0")]) == WORKED_WORKER_0_ENV
    assert env(out[("Pod", "paddle-simple-worker-1")]) == WORKED_WORKER_1_ENV


def test_collective_labels_services_and_restart_policy() -> None:
    out = objects(PADDLE, collective())
    pod = out[("Pod", "paddle-simple-worker-0")]
    assert pod["metadata"]["labels"] == {
        "training.kubeflow.org/operator-name": "paddlejob-controller",
        "training.kubeflow.org/job-name": "paddle-simple",
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "0",
    }
    assert pod["spec"]["restartPolicy"] == "OnFailure"
    assert pod["spec"]["containers"][0]["ports"] == [{"name": "master", "containerPort": 36543}]
    assert out[("Service", "paddle-simple-worker-1")]["spec"]["ports"] == [
        {"name": "master", "port": 36543}
    ]


def test_ps_mode_env_is_exact() -> None:
    out = objects(PADDLE, ps_mode())
    head = [
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "PADDLE_JOB_ID", "value": "ps"},
        {"name": "PADDLE_NNODES", "value": "4"},
    ]
    assert env(out[("Pod", "ps-master-0")]) == [
        *head,
        POD_IP_DUMMY,
        {"name": "PADDLE_MASTER", "value": "$(POD_IP_DUMMY):36543"},
        {"name": "PADDLE_SERVER_NUM", "value": "1"},
    ]
    assert env(out[("Pod", "ps-master-1")]) == [
        *head,
        {"name": "PADDLE_MASTER", "value": "ps-master-0:36543"},
        {"name": "PADDLE_SERVER_NUM", "value": "1"},
    ]
    # worker 0 is not the endpoint in PS mode: it dials master 0 like every other pod
    assert env(out[("Pod", "ps-worker-0")]) == [
        *head,
        {"name": "PADDLE_MASTER", "value": "ps-master-0:36543"},
        {"name": "PADDLE_TRAINER_NUM", "value": "1"},
    ]


def test_ps_mode_masters_are_labelled_master() -> None:
    out = objects(PADDLE, ps_mode())
    role = "training.kubeflow.org/job-role"
    assert {
        name: pod["metadata"]["labels"].get(role)
        for (kind, name), pod in out.items()
        if kind == "Pod"
    } == {
        "ps-master-0": "master",
        "ps-master-1": "master",
        "ps-worker-0": None,
        "ps-worker-1": None,
    }


def test_the_endpoint_port_is_the_endpoint_types_port() -> None:
    spec = replica("paddle", 2)
    spec["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "master", "containerPort": 37777}
    ]
    out = objects(PADDLE, job(PADDLE, {"Worker": spec}, "p"))
    assert env(out[("Pod", "p-worker-1")])[-1] == {
        "name": "PADDLE_MASTER",
        "value": "p-worker-0:37777",
    }


def test_elastic_bounds_default_from_each_other_then_from_workers() -> None:
    def bounds(policy: dict[str, int]) -> tuple[int | None, int | None]:
        defaulted = PADDLE.default(collective(3, elasticPolicy=policy))
        assert isinstance(defaulted, PaddleJob)
        elastic = defaulted.spec.elastic_policy
        assert elastic is not None
        return elastic.min_replicas, elastic.max_replicas

    assert bounds({}) == (3, 3)
    assert bounds({"minReplicas": 2}) == (2, 2)
    assert bounds({"maxReplicas": 5}) == (5, 5)
    assert bounds({"minReplicas": 1, "maxReplicas": 5}) == (1, 5)


def test_elastic_policy_makes_no_env_and_no_autoscaler() -> None:
    metric = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}
    paddle = collective(elasticPolicy={"minReplicas": 1, "maxReplicas": 4, "metrics": [metric]})
    out = objects(PADDLE, paddle)
    assert sorted(kind for kind, _ in out) == ["Pod", "Pod", "Service", "Service"]
    assert env(out[("Pod", "paddle-simple-worker-1")]) == WORKED_WORKER_1_ENV
    assert lines(PADDLE, paddle) == [
        "advice: spec.elasticPolicy: the Training Operator stores a PaddleJob's elasticPolicy "
        "but acts on none of it: no env, no autoscaler; fix: scale through the PaddleJob's "
        "scale subresource, or drop elasticPolicy"
    ]


def test_defaults() -> None:
    defaulted = PADDLE.default(job(PADDLE, {"worker": replica("paddle")}, "d"))
    spec = defaulted.to_manifest()["spec"]
    assert spec["runPolicy"] == {"cleanPodPolicy": "None"}
    assert list(spec["paddleReplicaSpecs"]) == ["Worker"]
    worker = spec["paddleReplicaSpecs"]["Worker"]
    assert (worker["replicas"], worker["restartPolicy"]) == (1, "OnFailure")
    assert "elasticPolicy" not in spec


def test_rules_with_exact_messages() -> None:
    no_worker = job(
        PADDLE,
        {"Master": replica("paddle"), "Chief": replica("paddle", image="")},
        "p",
        elasticPolicy={},
    )
    assert lines(PADDLE, no_worker) == [
        "error: spec.paddleReplicaSpecs.Chief: PaddleJob has no replica type 'Chief' "
        "(got 'Chief'); fix: use one of Master, Worker",
        "error: spec.paddleReplicaSpecs.Chief.template.spec.containers[0].image: every "
        "container needs an image; fix: set image to a pinned tag, e.g. 'repo/trainer:1.0'",
        "error: spec.elasticPolicy: without minReplicas or maxReplicas the operator takes "
        "both from the Worker spec, but the job has none (its controller would crash); fix: "
        "add spec.paddleReplicaSpecs.Worker or set minReplicas/maxReplicas",
    ]
    assert lines(PADDLE, collective(runPolicy={"managedBy": "me"})) == [
        "error: spec.runPolicy.managedBy: the webhook accepts only kubeflow.org/training-operator "
        "or kueue.x-k8s.io/multikueue (got 'me'); fix: remove managedBy (default "
        "kubeflow.org/training-operator) or use one of these"
    ]


def test_operator_output_validates_against_the_vendored_crd() -> None:
    assert PADDLE.crd_file == "training-operator-v1.9.4/kubeflow.org_paddlejobs.yaml"
    assert crd_problems(PADDLE, ps_mode()) == []
    assert crd_problems(PADDLE, collective(elasticPolicy={"maxRestarts": 3})) == []


def test_addresses_and_success_rule() -> None:
    assert PADDLE.addresses(PADDLE.default(collective())) == {
        "master": "paddle-simple-worker-0:36543"
    }
    assert PADDLE.addresses(PADDLE.default(ps_mode())) == {"master": "ps-master-0:36543"}
    assert PADDLE.success_rule == (
        "with a Master: when every Master succeeds; otherwise when every Worker succeeds"
    )


def test_example_is_the_worked_example() -> None:
    rendering = run(load_path(EXAMPLES / "paddle-collective" / "paddlejob.yaml"), target="pods")
    pods = {m["metadata"]["name"]: m for m in rendering.manifests if m["kind"] == "Pod"}
    assert env(pods["paddle-simple-worker-0"]) == WORKED_WORKER_0_ENV
    assert env(pods["paddle-simple-worker-1"]) == WORKED_WORKER_1_ENV


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    masters=st.integers(0, 3),
    workers=st.integers(1, 6),
    target=st.sampled_from(["operator", "pods"]),
)
def test_any_replica_counts_render_clean_and_deterministic(
    masters: int, workers: int, target: str
) -> None:
    specs = {"Worker": replica("paddle", workers)}
    if masters:
        specs["Master"] = replica("paddle", masters)
    doc = document(PADDLE, specs, "prop")
    first, text = render_checked(doc, target)
    _, again = render_checked(doc, target)
    assert text == again
    assert not_advice(first.findings) == []
    pods = [m for m in first.manifests if m["kind"] == "Pod"]
    assert len(pods) == (masters + workers if target == "pods" else 0)
    announcing = [p["metadata"]["name"] for p in pods if env(p)[3]["name"] == "POD_IP_DUMMY"]
    assert announcing == (
        [] if target == "operator" else ["prop-master-0" if masters else "prop-worker-0"]
    )
