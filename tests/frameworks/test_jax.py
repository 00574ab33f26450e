"""JAXJob: the reference's worked example (§4.5) literally, defaults, rules, properties."""

from __future__ import annotations

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
from trainjobs.frameworks.jax import FRAMEWORK as JAX
from trainjobs.frameworks.jax import JAXJob
from trainjobs.spec import load_path

WORKED_WORKER_1_ENV = [
    {"name": "PYTHONUNBUFFERED", "value": "1"},
    {"name": "COORDINATOR_PORT", "value": "6666"},
    {"name": "COORDINATOR_ADDRESS", "value": "jaxjob-simple-worker-0"},
    {"name": "NUM_PROCESSES", "value": "2"},
    {"name": "PROCESS_ID", "value": "1"},
]


def worked_example() -> JAXJob:
    jax = job(JAX, {"Worker": replica("jax", 2)}, "jaxjob-simple")
    assert isinstance(jax, JAXJob)
    return jax


def test_worked_example_worker_1_env_is_exact() -> None:
    pod = objects(JAX, worked_example())[("Pod", "jaxjob-simple-worker-1")]
    assert env(pod) == WORKED_WORKER_1_ENV


def test_worker_0_is_the_master_and_every_container_gets_the_env() -> None:
    jax = worked_example()
    jax.spec.jax_replica_specs["Worker"].template["spec"]["containers"].append(
        {"name": "sidecar", "image": "busybox:1.36"}
    )
    out = objects(JAX, jax)
    worker_0 = out[("Pod", "jaxjob-simple-worker-0")]
    assert worker_0["metadata"]["labels"] == {
        "training.kubeflow.org/operator-name": "jaxjob-controller",
        "training.kubeflow.org/job-name": "jaxjob-simple",
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "0",
        "training.kubeflow.org/job-role": "master",
    }
    assert env(worker_0, 1)[-1] == {"name": "PROCESS_ID", "value": "0"}
    worker_1 = out[("Pod", "jaxjob-simple-worker-1")]
    assert "training.kubeflow.org/job-role" not in worker_1["metadata"]["labels"]
    assert worker_1["spec"]["restartPolicy"] == "Never"
    assert out[("Service", "jaxjob-simple-worker-1")]["spec"]["ports"] == [
        {"name": "jaxjob-port", "port": 6666}
    ]


def test_defaults() -> None:
    spec = JAX.default(job(JAX, {"WORKER": replica("jax")}, "d")).to_manifest()["spec"]
    assert spec == {
        "runPolicy": {"cleanPodPolicy": "None"},
        "jaxReplicaSpecs": {
            "Worker": {
                "replicas": 1,
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "jax",
                                "image": "img:1",
                                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                                "ports": [{"name": "jaxjob-port", "containerPort": 6666}],
                            }
                        ]
                    }
                },
                "restartPolicy": "Never",
            }
        },
    }


def test_rules_with_exact_messages() -> None:
    bad = job(JAX, {"Master": replica("jax"), "Worker": replica("trainer")}, "j")
    assert lines(JAX, bad) == [
        "error: spec.jaxReplicaSpecs.Master: JAXJob has no replica type 'Master' (got "
        "'Master'); fix: use one of Worker",
        "error: spec.jaxReplicaSpecs.Worker.template.spec.containers: no container is named "
        "'jax'; the operator reads ports and exit codes from that container (got "
        "['trainer']); fix: name the training container 'jax'",
    ]
    assert lines(JAX, job(JAX, {}, "j")) == [
        "error: spec.jaxReplicaSpecs: JAXJob needs at least one replica type; fix: add e.g. "
        "jaxReplicaSpecs.Worker with a pod template"
    ]


def test_managed_by_is_not_checked_but_ignored() -> None:
    other = job(JAX, {"Worker": replica("jax")}, "j", runPolicy={"managedBy": "example.com/x"})
    assert lines(JAX, other) == [
        "warning: spec.runPolicy.managedBy: the JAXJob controller ignores managedBy and runs "
        "the job itself (got 'example.com/x'); fix: remove managedBy, or run the job with the "
        "controller it names only"
    ]
    ours = {"managedBy": "kubeflow.org/training-operator"}
    assert lines(JAX, job(JAX, {"Worker": replica("jax")}, "j", runPolicy=ours)) == []


def test_operator_output_validates_against_the_vendored_crd() -> None:
    assert JAX.crd_file == "training-operator-v1.9.4/kubeflow.org_jaxjobs.yaml"
    assert crd_problems(JAX, worked_example()) == []


def test_addresses_and_success_rule() -> None:
    assert JAX.addresses(JAX.default(worked_example())) == {
        "coordinator": "jaxjob-simple-worker-0:6666"
    }
    assert JAX.success_rule == "when every Worker succeeds"


def test_example_is_the_worked_example() -> None:
    rendering = run(load_path(EXAMPLES / "jax-simple" / "jaxjob.yaml"), target="pods")
    pods = {m["metadata"]["name"]: m for m in rendering.manifests if m["kind"] == "Pod"}
    assert sorted(pods) == ["jaxjob-simple-worker-0", "jaxjob-simple-worker-1"]
    assert env(pods["jaxjob-simple-worker-1"]) == WORKED_WORKER_1_ENV


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workers=st.integers(1, 10), target=st.sampled_from(["operator", "pods"]))
def test_any_worker_count_renders_clean_and_deterministic(workers: int, target: str) -> None:
    doc = document(JAX, {"Worker": replica("jax", workers)}, "prop")
    first, text = render_checked(doc, target)
    _, again = render_checked(doc, target)
    assert text == again
    assert not_advice(first.findings) == []
    pods = [m for m in first.manifests if m["kind"] == "Pod"]
    assert len(pods) == (workers if target == "pods" else 0)
    for pod in pods:
        index = pod["metadata"]["labels"]["training.kubeflow.org/replica-index"]
        assert env(pod)[3:] == [
            {"name": "NUM_PROCESSES", "value": str(workers)},
            {"name": "PROCESS_ID", "value": index},
        ]
