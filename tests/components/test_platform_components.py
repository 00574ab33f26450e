"""Platform components under mocks: generated secrets, dependencies, the stack program."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import EXAMPLES
from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import NfsBackend, RedisBackend, TrainingJob, program
from trainjobs.components.platform import InvalidResourceError
from trainjobs.platform.redis import RedisBackendSpec
from trainjobs.spec import load_path


def _by_type(resources: list[Registered], suffix: str) -> list[Registered]:
    return [r for r in resources if r.type.endswith(suffix)]


def test_a_password_is_generated_once_and_kept_secret() -> None:
    resources = run_program(
        lambda: RedisBackend("redis", RedisBackendSpec(password=True), namespace="training")
    )
    component = resources[0]
    assert (component.type, component.name) == ("trainjobs:index:RedisBackend", "redis")
    (password,) = _by_type(resources, "GeneratedPassword")
    assert password.name == "training/redis-auth"
    assert password.inputs["length"] == 32
    assert password.parent.endswith("trainjobs:index:RedisBackend::redis")
    (secret,) = _by_type(resources, "core/v1:Secret")
    assert secret.inputs["stringData"] == {"password": "mock-password:training/redis-auth"}
    assert secret.options["secret_inputs"] == ["stringData"]
    assert "stringData" in secret.options["secret_outputs"]
    assert {r.type for r in resources[1:]} == {
        "pulumi-python:dynamic/trainjobs:GeneratedPassword",
        "kubernetes:core/v1:Secret",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy",
        "kubernetes:core/v1:Service",
        "kubernetes:apps/v1:Deployment",
    }


def test_a_backend_asked_for_nothing_is_secure() -> None:
    """Fails before secure defaults: a RedisBackend of no options had no password (no
    generating resource, no Secret) and no NetworkPolicy."""
    resources = run_program(lambda: RedisBackend("redis", namespace="training"))
    (password,) = _by_type(resources, "GeneratedPassword")
    assert password.options["secret_outputs"] == ["result"]
    (secret,) = _by_type(resources, "core/v1:Secret")
    assert secret.options["secret_inputs"] == ["stringData"]
    (policy,) = _by_type(resources, "NetworkPolicy")
    assert policy.name == "training/redis"
    assert policy.inputs["spec"]["ingress"][0]["from"] == [
        {"podSelector": {"matchLabels": {"trainjobs.dev/backend": "redis"}}}
    ]


def test_a_backend_opted_out_explicitly_has_neither_password_nor_policy() -> None:
    resources = run_program(
        lambda: RedisBackend("redis", {"password": False, "networkPolicy": False})
    )
    assert {r.type for r in resources[1:]} == {
        "kubernetes:core/v1:Service",
        "kubernetes:apps/v1:Deployment",
    }


def test_no_placeholder_reaches_pulumi() -> None:
    resources = run_program(lambda: RedisBackend("redis", {"password": True}))
    assert "<generated:" not in repr([r.inputs for r in resources])


def test_a_job_given_a_backend_waits_for_it_and_gets_its_address() -> None:
    job = load_path(EXAMPLES / "tf-mnist" / "tfjob.yaml").jobs[0].job

    def program_() -> None:
        redis = RedisBackend("redis", namespace="kubeflow")
        TrainingJob("mnist", job, target="pods", backend=redis)

    resources = run_program(program_)
    (component,) = [r for r in resources if r.type == "trainjobs:index:TrainingJob"]
    # Depending on a component means depending on each of its children.
    assert sorted(d.split("$", 1)[1] for d in component.options["dependencies"]) == [
        "kubernetes:apps/v1:Deployment::kubeflow/redis",
        "kubernetes:core/v1:Secret::kubeflow/redis-auth",
        "kubernetes:core/v1:Service::kubeflow/redis",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy::kubeflow/redis",
        "pulumi-python:dynamic/trainjobs:GeneratedPassword::kubeflow/redis-auth",
    ]
    pod = next(r for r in _by_type(resources, "Pod") if r.name == "kubeflow/mnist-worker-0")
    env = pod.inputs["spec"]["containers"][0]["env"]
    assert env[:2] == [
        {"name": "REDIS_HOST", "value": "redis.kubeflow.svc"},
        {"name": "REDIS_PORT", "value": "6379"},
    ]


def test_invalid_platform_input_fails_with_its_findings() -> None:
    with pytest.raises(InvalidResourceError) as err:
        run_program(lambda: NfsBackend("share", {"server": "nfs.lab"}))
    assert [f.render() for f in err.value.findings] == [
        "error: share.spec.path: an NFS export needs both server and path; fix: add it, "
        "or name an existing PersistentVolumeClaim in claimName"
    ]


def test_the_stack_program_creates_units_after_their_dependencies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config: dict[str, Any] = {
        "trainjobs:namespaces": ["ml"],
        "trainjobs:backends": [
            {"kind": "RedisBackend", "metadata": {"name": "redis", "namespace": "ml"}}
        ],
        "trainjobs:jobs": [
            {
                "apiVersion": "kubeflow.org/v1",
                "kind": "TFJob",
                "metadata": {"name": "tf", "namespace": "ml"},
                "spec": {
                    "tfReplicaSpecs": {
                        "Worker": {
                            "replicas": 2,
                            "template": {
                                "spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}
                            },
                        }
                    }
                },
                "trainjobs": {"target": "pods", "backend": "redis"},
            }
        ],
    }
    resources = run_program(program, config)
    names = {r.name: r for r in resources if not r.custom}
    assert set(names) == {"ml/redis", "ml/tf"}
    assert names["ml/redis"].options["aliases"] == ["redis"]
    job_deps = sorted(d.split("$", 1)[1] for d in names["ml/tf"].options["dependencies"])
    assert job_deps == [
        "kubernetes:apps/v1:Deployment::ml/redis",
        "kubernetes:core/v1:Namespace::ml",
        "kubernetes:core/v1:Secret::ml/redis-auth",
        "kubernetes:core/v1:Service::ml/redis",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy::ml/redis",
        "pulumi-python:dynamic/trainjobs:GeneratedPassword::ml/redis-auth",
    ]
    backend_deps = [d.split("$", 1)[1] for d in names["ml/redis"].options["dependencies"]]
    assert backend_deps == ["kubernetes:core/v1:Namespace::ml"]


def test_a_unit_is_created_in_steps() -> None:
    resources = run_program(lambda: RedisBackend("redis", {"password": True}))
    (deployment,) = _by_type(resources, "apps/v1:Deployment")
    (service,) = _by_type(resources, "core/v1:Service")

    def deps(r: Registered) -> list[str]:
        return sorted(d.split("$", 2)[-1] for d in r.options["dependencies"])

    definitions = [
        "kubernetes:core/v1:Secret::default/redis-auth",
        # Who may connect is settled before the server listens.
        "kubernetes:networking.k8s.io/v1:NetworkPolicy::default/redis",
    ]
    assert deps(service) == definitions
    assert deps(deployment) == sorted([*definitions, "kubernetes:core/v1:Service::default/redis"])
    # The Service is created before the pods it selects, so waiting for it to select a
    # ready pod could only time out; the Deployment carries readiness instead.
    assert service.inputs["metadata"]["annotations"] == {
        "pulumi.com/skipAwait": "true",
        "trainjobs.dev/stack": "trainjobs/test",
    }
    # Only the stack's own mark: no readiness override on the Deployment.
    assert deployment.inputs["metadata"]["annotations"] == {"trainjobs.dev/stack": "trainjobs/test"}


def test_same_named_backends_in_two_namespaces_are_two_urns() -> None:
    backends = [
        {"kind": "RedisBackend", "metadata": {"name": "redis", "namespace": ns}}
        for ns in ("team-a", "team-b")
    ]
    resources = run_program(program, {"trainjobs:backends": backends})
    components = [r.name for r in resources if r.type == "trainjobs:index:RedisBackend"]
    assert sorted(components) == ["team-a/redis", "team-b/redis"]


def test_a_unit_creates_its_namespace_before_what_lives_in_it() -> None:
    # Found by `pulumi up` of stacks/Pulumi.seeds.yaml on the real engine: an operator's
    # Role was created in parallel with the Namespace it lives in (both definitions).
    from trainjobs.components.operators import TrainingOperator

    resources = run_program(
        lambda: TrainingOperator(
            "training-operator", {"createNamespace": True}, namespace="kubeflow-test"
        )
    )
    (namespace,) = _by_type(resources, "core/v1:Namespace")
    ns_urn = "kubernetes:core/v1:Namespace::kubeflow-test"
    namespaced = [
        r
        for r in resources
        if r.type.startswith("kubernetes:")
        and r is not namespace
        and (r.inputs.get("metadata") or {}).get("namespace") == "kubeflow-test"
    ]
    assert namespaced
    late = [
        r.name
        for r in namespaced
        if ns_urn not in [d.split("$", 2)[-1] for d in r.options["dependencies"]]
    ]
    assert late == []
