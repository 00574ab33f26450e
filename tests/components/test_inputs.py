"""Pulumi Inputs in every component: Outputs for image, namespace, node pool and password
are registered resolved, their dependencies kept, and checked again once known."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from tests.platform.pools.docs import pool_doc
from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import (
    GpuNodePool,
    GpuQueue,
    PlatformArgs,
    RedisBackend,
    RedisBackendArgs,
    TrainingJob,
    TrainingJobArgs,
)
from trainjobs.components.job import InvalidJobError
from trainjobs.components.platform import InvalidResourceError
from trainjobs.spec.entry import Target


def _tfjob(image: Any = "registry.local/mnist:1") -> dict[str, Any]:
    container = {"name": "tensorflow", "image": image}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": "training"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "template": {"spec": {"containers": [container]}},
                }
            }
        },
    }


def _pushed(image: str) -> pulumi.Output[str]:
    """An image name known only after a (mock) registry push."""
    return pulumi.Output.from_input(image).apply(lambda name: f"{name}@sha256:{'a' * 64}")


def _of(resources: list[Registered], type_: str) -> list[Registered]:
    return [r for r in resources if r.type == type_]


@pytest.mark.parametrize(
    ("target", "type_"),
    [("pods", "kubernetes:core/v1:Pod"), ("operator", "kubernetes:kubeflow.org/v1:TFJob")],
)
def test_an_image_output_is_registered_resolved_on_every_target(target: Target, type_: str) -> None:
    image = f"registry.local/mnist@sha256:{'a' * 64}"
    resources = run_program(
        lambda: TrainingJob("mnist", _tfjob(_pushed("registry.local/mnist")), target=target)
    )
    objects = _of(resources, type_)
    assert objects
    text = repr([o.inputs for o in objects])
    assert image in text
    assert "input-" not in text  # no placeholder reaches Pulumi


def test_a_namespace_output_from_another_resource() -> None:
    def program() -> None:
        ns = k8s.core.v1.Namespace("team", metadata={"name": "team-a"})
        TrainingJob("mnist", TrainingJobArgs(_tfjob(), namespace=ns.metadata.name, target="pods"))

    resources = run_program(program)
    pods = _of(resources, "kubernetes:core/v1:Pod")
    assert sorted(p.inputs["metadata"]["namespace"] for p in pods) == ["team-a", "team-a"]
    # The URN cannot depend on a value known later: the name leaves the namespace out.
    assert sorted(p.name for p in pods) == ["mnist-worker-0", "mnist-worker-1"]
    # The value carries its resource: each pod is created after the Namespace.
    assert all(
        any(d.endswith("kubernetes:core/v1:Namespace::team") for d in p.options["dependencies"])
        for p in pods
    )
    # The address a client dials is the resolved one.
    services = _of(resources, "kubernetes:core/v1:Service")
    assert {s.inputs["metadata"]["namespace"] for s in services} == {"team-a"}


def test_a_node_pool_from_a_cloud_resource() -> None:
    seen: dict[str, Any] = {}

    def program() -> None:
        import pulumi_gcp as gcp

        cluster = gcp.container.Cluster("ml", name="ml-prod", location="us-central1")
        doc = pool_doc(provider="gke")
        doc["spec"]["gke"]["cluster"] = cluster.name
        # The pool's own name from the cloud resource too.
        doc["metadata"]["name"] = cluster.name.apply(lambda name: f"{name}-a100")
        doc["spec"]["labels"] = {"team": pulumi.Output.from_input("vision")}
        pool = GpuNodePool("a100", doc)
        job = _tfjob()
        job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
            "resources"
        ] = {"limits": {"nvidia.com/gpu": 4}}
        TrainingJob("mnist", job, target="pods", node_pool=pool).objects.apply(
            lambda v: seen.setdefault("objects", v)
        )

    resources = run_program(program)
    (node_pool,) = _of(resources, "gcp:container/nodePool:NodePool")
    assert node_pool.inputs["cluster"] == "ml-prod"
    assert node_pool.inputs["name"] == "ml-prod-a100"
    assert node_pool.inputs["nodeConfig"]["labels"]["team"] == "vision"
    assert any(
        d.endswith("gcp:container/cluster:Cluster::ml") for d in node_pool.options["dependencies"]
    )
    pods = _of(resources, "kubernetes:core/v1:Pod")
    assert pods
    assert all(p.inputs["spec"]["nodeSelector"]["team"] == "vision" for p in pods)
    assert {p.inputs["spec"]["nodeSelector"]["trainjobs.dev/node-pool"] for p in pods} == {
        "ml-prod-a100"
    }
    assert "input-" not in repr(seen["objects"])


def test_a_given_password_is_used_and_stays_secret() -> None:
    def program() -> None:
        RedisBackend("redis", namespace="training", password=pulumi.Output.secret("s3cret"))

    resources = run_program(program)
    assert _of(resources, "pulumi-python:dynamic/trainjobs:GeneratedPassword") == []
    (secret,) = _of(resources, "kubernetes:core/v1:Secret")
    assert secret.inputs["stringData"] == {"password": "s3cret"}
    assert secret.options["secret_inputs"] == ["stringData"]
    assert "stringData" in secret.options["secret_outputs"]


def test_a_namespace_output_for_a_backend_reaches_the_job_env() -> None:
    def program() -> None:
        # Another namespace than the job's: only a backend without password and policy.
        redis = RedisBackend(
            "redis",
            {"password": False, "networkPolicy": False},
            namespace=pulumi.Output.from_input("team-b"),
        )
        TrainingJob("mnist", _tfjob(), target="pods", backend=redis)

    resources = run_program(program)
    (service,) = [
        r for r in _of(resources, "kubernetes:core/v1:Service") if r.name.endswith("redis")
    ]
    assert service.inputs["metadata"]["namespace"] == "team-b"
    pod = _of(resources, "kubernetes:core/v1:Pod")[0]
    env = {e["name"]: e.get("value") for e in pod.inputs["spec"]["containers"][0]["env"]}
    assert env["REDIS_HOST"] == "redis.team-b.svc"


def test_an_invalid_value_is_found_when_it_resolves() -> None:
    """Known only at apply time, the values are checked then, with the user's field path."""
    with pytest.raises(InvalidJobError) as err:
        run_program(
            lambda: TrainingJob(
                "mnist",
                _tfjob(pulumi.Output.from_input("")),
                namespace=pulumi.Output.from_input("Team_A"),
                target="pods",
            )
        )
    assert "with its Pulumi Inputs resolved" in str(err.value)
    paths = {f.path for f in err.value.findings}
    assert "job.spec.tfReplicaSpecs.Worker.template.spec.containers[0].image" in paths
    assert "job.metadata.namespace" in paths


def test_typed_args_for_platform_components() -> None:
    def program() -> None:
        RedisBackend(
            "redis",
            RedisBackendArgs(
                {"port": 6380},
                namespace=pulumi.Output.from_input("team-c"),
                password=pulumi.Output.secret("s3cret"),
            ),
        )
        GpuNodePool("a100", PlatformArgs(pool_doc(provider="static")))

    resources = run_program(program)
    (secret,) = _of(resources, "kubernetes:core/v1:Secret")
    assert secret.inputs["metadata"]["namespace"] == "team-c"
    assert secret.inputs["stringData"] == {"password": "s3cret"}
    (service,) = _of(resources, "kubernetes:core/v1:Service")
    assert service.inputs["spec"]["ports"][0]["port"] == 6380
    assert _of(resources, "trainjobs:index:GpuNodePool")


def test_a_platform_value_is_checked_when_it_resolves() -> None:
    with pytest.raises(InvalidResourceError) as err:
        run_program(lambda: RedisBackend("redis", namespace=pulumi.Output.from_input("Bad_NS")))
    assert "with its Pulumi Inputs resolved" in str(err.value)
    assert "Bad_NS" in str(err.value)


def _queued(namespace: pulumi.Input[str], queue_namespace: pulumi.Input[str]) -> None:
    pool = GpuNodePool("a100", pool_doc(provider="static"))
    queue = GpuQueue("team-a", {"nodePool": "a100", "namespaces": [queue_namespace]}, uses=[pool])
    TrainingJob("mnist", _tfjob(), namespace=namespace, queue=queue)


@pytest.mark.parametrize(
    ("job_namespace", "queue_namespace"),
    [
        (lambda: pulumi.Output.from_input("training"), lambda: "training"),
        (lambda: "training", lambda: pulumi.Output.from_input("training")),
        (lambda: pulumi.Output.secret("training"), lambda: "training"),
    ],
)
def test_a_namespace_output_beside_a_plain_queue_namespace_is_compared_once_known(
    job_namespace: Any, queue_namespace: Any
) -> None:
    """A namespace a Pulumi resource outputs (``ns.metadata.name``) and a queue's plain
    ``namespaces`` agree once known; before, the Output's placeholder was compared with
    the plain name and the job refused at preview ("add '<Pulumi Input #1>' to …")."""
    resources = run_program(lambda: _queued(job_namespace(), queue_namespace()))
    (tfjob,) = _of(resources, "kubernetes:kubeflow.org/v1:TFJob")
    assert tfjob.inputs["metadata"]["namespace"] == "training"
    assert tfjob.inputs["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    (local,) = _of(resources, "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")
    assert local.inputs["metadata"]["namespace"] == "training"


def test_a_namespace_output_outside_the_queues_namespaces_fails_once_known() -> None:
    with pytest.raises(InvalidJobError) as err:
        run_program(lambda: _queued(pulumi.Output.from_input("elsewhere"), "training"))
    assert "with its Pulumi Inputs resolved" in str(err.value)
    assert [f.code for f in err.value.findings] == ["queue.namespace"]
    assert "the job runs in 'elsewhere'" in str(err.value)


def test_a_secret_namespace_outside_the_queues_namespaces_is_not_shown() -> None:
    with pytest.raises(InvalidJobError) as err:
        run_program(lambda: _queued(pulumi.Output.secret("hidden-team"), "training"))
    assert [f.code for f in err.value.findings] == ["queue.namespace"]
    assert "hidden-team" not in str(err.value)
    assert "<secret Pulumi Input #" in str(err.value)


@pytest.mark.parametrize(("namespace", "fails"), [("training", False), ("elsewhere", True)])
def test_a_password_backends_plain_namespace_and_a_jobs_output_one_are_compared_once_known(
    namespace: str, fails: bool
) -> None:
    def program() -> None:
        redis = RedisBackend("redis", namespace="training", password=pulumi.Output.secret("pw"))
        TrainingJob("mnist", _tfjob(), namespace=pulumi.Output.from_input(namespace), backend=redis)

    if not fails:
        resources = run_program(program)
        assert _of(resources, "kubernetes:kubeflow.org/v1:TFJob")
        return
    with pytest.raises(InvalidJobError) as err:
        run_program(program)
    assert "with its Pulumi Inputs resolved" in str(err.value)
    assert [f.code for f in err.value.findings] == ["backend.secret_namespace"]
