"""RedisBackend: its objects, how jobs bind to it, and its rules."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import EXAMPLES
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.k8s.generated import parse
from trainjobs.k8s.redact import REDACTED, redact
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import parse_documents

REDIS = {
    "apiVersion": "trainjobs.dev/v1alpha1",
    "kind": "RedisBackend",
    "metadata": {"name": "redis", "namespace": "training"},
    "spec": {"password": True},
}
JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "ddp", "namespace": "training"},
    "spec": {
        "pytorchReplicaSpecs": {
            "Worker": {
                "replicas": 2,
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "pytorch",
                                "image": "trainer:1.0",
                                "env": [{"name": "USER_VAR", "value": "1"}],
                            }
                        ]
                    }
                },
            }
        }
    },
    "trainjobs": {"target": "pods", "backend": "redis"},
}


def _objects(*docs: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    rendering = run(parse_documents(list(docs)))
    return {(m["kind"], m["metadata"]["name"]): m for m in rendering.manifests}


def test_redis_renders_a_secret_service_and_deployment() -> None:
    objects = _objects(REDIS)
    assert sorted(objects) == [
        ("Deployment", "redis"),
        ("NetworkPolicy", "redis"),
        ("Secret", "redis-auth"),
        ("Service", "redis"),
    ]
    secret = objects[("Secret", "redis-auth")]
    generated = parse(secret["stringData"]["password"])
    assert generated is not None and generated.kind == "password"
    assert redact(secret)["stringData"] == {"password": REDACTED}
    service = objects[("Service", "redis")]
    assert service["spec"]["ports"] == [{"name": "redis", "port": 6379, "targetPort": "redis"}]
    pod = objects[("Deployment", "redis")]["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    assert container["image"] == "redis:7.4.2"
    assert container["args"] == [
        "--port",
        "6379",
        "--save",
        "",
        "--appendonly",
        "no",
        "--requirepass",
        "$(REDIS_PASSWORD)",
    ]
    assert [e["name"] for e in container["env"]] == ["REDIS_PASSWORD", "REDISCLI_AUTH"]
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert service["spec"]["selector"] == {
        "app.kubernetes.io/name": "redis",
        "app.kubernetes.io/instance": "redis",
    }


def test_an_unset_password_means_one_is_required() -> None:
    """Fails before secure defaults: ``password`` defaulted to false."""
    objects = _objects({**REDIS, "spec": {}})
    assert ("Secret", "redis-auth") in objects
    (container,) = objects[("Deployment", "redis")]["spec"]["template"]["spec"]["containers"]
    assert container["args"][-2:] == ["--requirepass", "$(REDIS_PASSWORD)"]


def test_without_a_password_there_is_no_secret() -> None:
    objects = _objects({**REDIS, "spec": {"password": False}})
    assert ("Secret", "redis-auth") not in objects
    (container,) = objects[("Deployment", "redis")]["spec"]["template"]["spec"]["containers"]
    assert "env" not in container
    assert "--requirepass" not in container["args"]


def test_a_job_gets_the_address_and_password_after_its_own_env() -> None:
    rendering = run(parse_documents([REDIS, JOB]))
    pod = next(
        m
        for m in rendering.manifests
        if m["kind"] == "Pod" and m["metadata"]["name"] == "ddp-worker-1"
    )
    env = pod["spec"]["containers"][0]["env"]
    assert env[:4] == [
        {"name": "USER_VAR", "value": "1"},
        {"name": "REDIS_HOST", "value": "redis.training.svc"},
        {"name": "REDIS_PORT", "value": "6379"},
        {
            "name": "REDIS_PASSWORD",
            "valueFrom": {"secretKeyRef": {"name": "redis-auth", "key": "password"}},
        },
    ]
    # The operator's own env still follows the backend's.
    assert env[4] == {"name": "PYTHONUNBUFFERED", "value": "1"}
    (job,) = rendering.jobs
    assert [str(d) for d in job.depends_on] == ["backend training/redis"]


def test_a_password_backend_in_another_namespace_is_refused() -> None:
    other = {**REDIS, "metadata": {"name": "redis", "namespace": "shared"}}
    with pytest.raises(SpecError) as err:
        run(parse_documents([other, JOB]))
    assert [f.render() for f in err.value.errors] == [
        "error: jobs[0].trainjobs.backend: backend 'redis' keeps its password in namespace "
        "'shared', but the job runs in 'training'; a pod reads secrets only from its own "
        "namespace (got 'redis'); fix: put the backend in namespace 'training'"
    ]


def test_the_operator_target_carries_the_binding_in_its_templates() -> None:
    job = {**JOB, "trainjobs": {"target": "operator", "backend": "redis"}}
    rendering = run(parse_documents([REDIS, job]))
    (cr,) = [m for m in rendering.manifests if m["kind"] == "PyTorchJob"]
    template = cr["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
    names = [e["name"] for e in template["spec"]["containers"][0]["env"]]
    assert names == ["USER_VAR", "REDIS_HOST", "REDIS_PORT", "REDIS_PASSWORD"]


@pytest.mark.parametrize("target", ["operator", "pods"])
def test_a_job_no_backend_can_reach_is_refused(target: str) -> None:
    # PaddlePaddle EDL's pods come from ReplicaSets and a Job its operator makes, with no
    # pod template trainjobs can add REDIS_HOST to: the backend used to be dropped
    # without a word.
    (edl,) = load_all((EXAMPLES / "paddle-edl-fit-a-line" / "trainingjob.yaml").read_text())
    edl["metadata"]["namespace"] = "training"
    edl["trainjobs"] = {"backend": "redis", "target": target}
    with pytest.raises(SpecError) as err:
        run(parse_documents([REDIS, edl]))
    assert [f.render() for f in err.value.findings if f.code == "backend.unbound"] == [
        "error: jobs[0].trainjobs.backend: TrainingJob exposes no pod templates to trainjobs "
        "and names no backend itself, so the backend would reach none of its pods (got "
        "'redis'); fix: remove trainjobs.backend; the job rendezvous by its own means"
    ]


# ----- the NetworkPolicy (secure by default) ------------------------------------------


def _pod_labels(manifests: list[dict[str, Any]], name: str) -> dict[str, str]:
    pod = next(m for m in manifests if m["kind"] == "Pod" and m["metadata"]["name"] == name)
    labels: dict[str, str] = pod["metadata"]["labels"]
    return labels


def test_a_network_policy_admits_only_labelled_pods_on_the_redis_port() -> None:
    """Fails before secure defaults: no NetworkPolicy was rendered."""
    objects = _objects({**REDIS, "spec": {"port": 6380}})
    policy = objects[("NetworkPolicy", "redis")]
    assert policy["metadata"]["namespace"] == "training"
    assert policy["spec"] == {
        "podSelector": {
            "matchLabels": {
                "app.kubernetes.io/name": "redis",
                "app.kubernetes.io/instance": "redis",
            }
        },
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [{"podSelector": {"matchLabels": {"trainjobs.dev/backend": "redis"}}}],
                "ports": [{"protocol": "TCP", "port": 6380}],
            }
        ],
    }
    # It selects exactly the backend's pods.
    template = objects[("Deployment", "redis")]["spec"]["template"]
    selected = policy["spec"]["podSelector"]["matchLabels"].items()
    assert selected <= template["metadata"]["labels"].items()


def test_the_pods_of_a_job_that_names_the_backend_carry_the_admitted_label() -> None:
    """Fails before secure defaults: the job's pods had no label the policy admits."""
    rendering = run(parse_documents([REDIS, JOB]))
    manifests = list(rendering.manifests)
    assert _pod_labels(manifests, "ddp-worker-0")["trainjobs.dev/backend"] == "redis"
    operator = {**JOB, "trainjobs": {"target": "operator", "backend": "redis"}}
    (cr,) = [
        m for m in run(parse_documents([REDIS, operator])).manifests if m["kind"] == "PyTorchJob"
    ]
    template = cr["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
    assert template["metadata"]["labels"] == {"trainjobs.dev/backend": "redis"}


def test_opting_out_is_explicit_and_drops_policy_and_label() -> None:
    redis = {**REDIS, "spec": {"networkPolicy": False}}
    rendering = run(parse_documents([redis, JOB]))
    kinds = [m["kind"] for m in rendering.manifests]
    assert "NetworkPolicy" not in kinds and "Secret" in kinds
    assert "trainjobs.dev/backend" not in _pod_labels(list(rendering.manifests), "ddp-worker-0")


def test_a_job_in_another_namespace_is_refused_when_the_policy_would_shut_it_out() -> None:
    """Fails before secure defaults: the job was bound to a backend it could not reach."""
    other = {
        **REDIS,
        "metadata": {"name": "redis", "namespace": "shared"},
        "spec": {"password": False},
    }
    with pytest.raises(SpecError) as err:
        run(parse_documents([other, JOB]))
    assert [f.render() for f in err.value.errors] == [
        "error: jobs[0].trainjobs.backend: backend 'redis' admits only pods of its own "
        "namespace 'shared' (its NetworkPolicy), but the job runs in 'training' (got "
        "'redis'); fix: put the backend in namespace 'training', or set networkPolicy: "
        "false on the backend to let any pod in the cluster connect"
    ]
    opted_out = {**other, "spec": {"password": False, "networkPolicy": False}}
    run(parse_documents([opted_out, JOB]))


def test_a_job_on_the_host_network_is_refused_when_the_policy_would_shut_it_out() -> None:
    """Fails before secure defaults: a host-network job was bound behind a policy that
    cannot tell its pods from the node."""
    job = {
        **JOB,
        "spec": {
            "pytorchReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "template": {
                        "spec": {
                            "hostNetwork": True,
                            "containers": [{"name": "pytorch", "image": "t:1"}],
                        }
                    },
                }
            }
        },
    }
    with pytest.raises(SpecError) as err:
        run(parse_documents([REDIS, job]))
    (finding,) = [f for f in err.value.errors if f.code == "backend.policy_unreachable"]
    assert "the job's pods use the host network" in finding.message
    assert "drop hostNetwork" in finding.hint


@pytest.mark.parametrize("target", ["operator", "pods"])
def test_a_job_whose_operator_drops_template_labels_is_refused(target: str) -> None:
    """Fails before secure defaults: the 2020 ms-operator creates pods with only its own
    labels, so the backend's policy would have refused them without a word."""
    container = {"name": "mindspore", "image": "mindspore/mindspore-cpu:0.1.0-alpha"}
    msjob: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MSJob",
        "metadata": {"name": "mnist", "namespace": "training"},
        "spec": {
            "replicaSpecs": [
                {
                    "replicas": 1,
                    "replicaType": role,
                    "template": {"spec": {"containers": [container]}},
                }
                for role in ("MASTER", "WORKER")
            ]
        },
        "trainjobs": {"backend": "redis", "target": target},
    }
    with pytest.raises(SpecError) as err:
        run(parse_documents([REDIS, msjob]))
    (finding,) = [f for f in err.value.errors if f.code == "backend.policy_unreachable"]
    assert "the MSJob operator does not copy the template's labels" in finding.message
