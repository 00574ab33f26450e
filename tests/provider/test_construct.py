"""The provider's Construct under mocks: the components a Python program would make.

The engine hands the provider decoded inputs (numbers as floats, another component as
its URN); each test gives them so and compares every registration with the Python
component's, which the components' own tests prove equal to ``trainjobs render``.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
import yaml
from google.protobuf import struct_pb2  # type: ignore[import-untyped]
from pulumi.output import Unknown
from pulumi.runtime import rpc

from tests.support.paths import EXAMPLES
from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import GpuNodePool, InvalidJobError, RedisBackend, TrainingJob
from trainjobs.provider.host import TrainjobsProvider, _References, plain

JOB = "trainjobs:index:TrainingJob"


def _floats(value: Any) -> Any:
    """``value`` as the engine decodes it: every number a float."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return value


def _mnist() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((EXAMPLES / "tf-mnist" / "tfjob.yaml").read_text())
    return doc


def _seen(resources: list[Registered]) -> list[tuple[str, str, str, Any]]:
    """Each registration; in a stable order (those of one step register in any order)."""
    return sorted(((r.type, r.name, r.parent, r.inputs) for r in resources), key=repr)


def test_plain_gives_whole_numbers_back_as_ints() -> None:
    assert plain({"a": [2.0, 1.5, "2", True]}) == {"a": [2, 1.5, "2", True]}


def test_a_training_job_is_the_python_component() -> None:
    def by_provider() -> None:
        inputs = {"job": _floats(_mnist()), "target": "pods"}
        TrainjobsProvider().construct("mnist", JOB, inputs, pulumi.ResourceOptions())

    def by_python() -> None:
        TrainingJob("mnist", _mnist(), target="pods")

    served, native = run_program(by_provider), run_program(by_python)
    assert _seen(served) == _seen(native)
    pods = [r for r in served if r.type == "kubernetes:core/v1:Pod"]
    assert len(pods) == 4
    port = pods[0].inputs["spec"]["containers"][0]["ports"][0]["containerPort"]
    assert port == 2222 and isinstance(port, int)


def test_a_job_names_its_backend_by_the_reference_the_engine_sends() -> None:
    host = TrainjobsProvider()

    def by_provider() -> None:
        opts = pulumi.ResourceOptions()
        redis = host.construct(
            "redis", "trainjobs:index:RedisBackend", {"namespace": "kubeflow"}, opts
        )
        inputs = {"job": _floats(_mnist()), "target": "pods"}
        # The engine sends the reference once the backend is made: its URN.
        pulumi.Output.from_input(redis.urn).apply(
            lambda urn: host.construct("mnist", JOB, {**inputs, "backend": urn}, opts)
        )

    def by_python() -> None:
        redis = RedisBackend("redis", namespace="kubeflow")
        TrainingJob("mnist", _mnist(), target="pods", backend=redis)

    served, native = run_program(by_provider), run_program(by_python)
    assert _seen(served) == _seen(native)
    pod = next(r for r in served if r.name == "kubeflow/mnist-worker-0" and r.type.endswith("Pod"))
    env = pod.inputs["spec"]["containers"][0]["env"]
    assert env[0] == {"name": "REDIS_HOST", "value": "redis.kubeflow.svc"}


def test_a_platform_kind_is_its_python_component() -> None:
    spec = {"version": "v1.9.4"}

    def by_provider() -> None:
        inputs = {"spec": spec}
        TrainjobsProvider().construct(
            "training-operator", "trainjobs:index:TrainingOperator", inputs, None
        )

    def by_python() -> None:
        from trainjobs.components import TrainingOperator

        TrainingOperator("training-operator", spec)

    served, native = run_program(by_provider), run_program(by_python)
    assert _seen(served) == _seen(native)
    assert served[0].type == "trainjobs:index:TrainingOperator"
    assert any(r.type.endswith("CustomResourceDefinition") for r in served)


def test_a_wrong_field_is_refused_with_its_path() -> None:
    job = _mnist()
    job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = "two"

    def by_provider() -> None:
        TrainjobsProvider().construct("mnist", JOB, {"job": job}, None)

    with pytest.raises(InvalidJobError) as err:
        run_program(by_provider)
    assert "spec.tfReplicaSpecs.Worker.replicas" in str(err.value)


def test_an_unknown_reference_is_refused() -> None:
    def by_provider() -> None:
        inputs = {"job": _mnist(), "backend": "urn:pulumi:s::p::trainjobs:index:RedisBackend::x"}
        TrainjobsProvider().construct("mnist", JOB, inputs, None)

    with pytest.raises(pulumi.RunError, match="backend must be a trainjobs component"):
        run_program(by_provider)


def test_a_stack_makes_the_stack_programs_components_as_its_children() -> None:
    config = {
        "namespaces": ["ml"],
        "backends": [{"kind": "RedisBackend", "metadata": {"name": "redis", "namespace": "ml"}}],
        "jobs": [
            {
                **_mnist(),
                "metadata": {"name": "mnist", "namespace": "ml"},
                "trainjobs": {"target": "pods", "backend": "redis"},
            }
        ],
    }

    def by_provider() -> None:
        TrainjobsProvider().construct("platform", "trainjobs:index:Stack", _floats(config), None)

    served = run_program(by_provider)
    components = {(r.type, r.name): r.parent for r in served if not r.custom}
    stack = next(r for r in served if r.type == "trainjobs:index:Stack")
    assert components[("trainjobs:index:TrainingJob", "ml/mnist")] == stack.urn
    assert components[("trainjobs:index:RedisBackend", "ml/redis")] == stack.urn
    assert sum(r.type == "kubernetes:core/v1:Pod" for r in served) == 4


def test_a_job_names_its_pool_by_the_reference_pulumi_yaml_sends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pulumi YAML declares a component as a custom resource: its reference arrives as a
    custom resource reference with an empty ID, which the SDK decodes as an unknown value
    (the URN lost) unless the package's module (as ``serve`` registers it) decodes it."""
    resources = yaml.safe_load((EXAMPLES / "yaml-stack" / "Pulumi.yaml").read_text())["resources"]
    pool_spec, bert = resources["a100"]["properties"]["spec"], resources["bert"]["properties"]
    host = TrainjobsProvider()
    monkeypatch.setitem(rpc._RESOURCE_MODULES, "trainjobs:index", [_References(host)])

    def wire(urn: str) -> Any:
        ref = {rpc._special_sig_key: rpc._special_resource_sig, "urn": urn, "id": ""}
        struct = struct_pb2.Struct()
        struct.update({"nodePool": ref})
        return rpc.deserialize_properties(struct, keep_unknowns=True)["nodePool"]

    def by_provider() -> None:
        opts = pulumi.ResourceOptions()
        pool = host.construct("a100", "trainjobs:index:GpuNodePool", {"spec": pool_spec}, opts)
        inputs = {"job": _floats(bert["job"]), "target": "operator"}
        pulumi.Output.from_input(pool.urn).apply(
            lambda urn: host.construct("bert", JOB, {**inputs, "nodePool": wire(urn)}, opts)
        )

    def by_python() -> None:
        pool = GpuNodePool("a100", pool_spec)
        TrainingJob("bert", bert["job"], target="operator", node_pool=pool)

    served, native = run_program(by_provider), run_program(by_python)
    assert _seen(served) == _seen(native)
    job = next(r for r in served if r.type == "kubernetes:kubeflow.org/v1:PyTorchJob")
    template = job.inputs["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
    assert template["spec"]["nodeSelector"] == {"gpu-pool": "a100"}
    monkeypatch.setitem(rpc._RESOURCE_MODULES, "trainjobs:index", [])
    assert isinstance(wire("urn:pulumi:s::p::trainjobs:index:GpuNodePool::a100"), Unknown)
