"""The components as a platform repo's own Pulumi program uses them: several of each,
Inputs and secrets in every field that takes one, and mistakes a person makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
import pytest

from tests.platform.pools.docs import pool_doc
from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import (
    GpuNodePool,
    GpuQueue,
    InvalidResourceError,
    PlatformArgs,
    RedisBackend,
    TrainingJob,
    jobs_from_file,
)
from trainjobs.components.job import InvalidJobError
from trainjobs.errors import Finding
from trainjobs.platform.redis import RedisBackendSpec


def _tfjob(name: str = "mnist", namespace: str = "training") -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "registry.local/mnist:1"}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [container]}}}
            }
        },
    }


def _duplicates(resources: list[Registered]) -> list[str]:
    urns = [r.urn for r in resources]
    return sorted({u for u in urns if urns.count(u) > 1})


@pytest.mark.parametrize("target", ["operator", "pods"])
def test_an_unknown_gang_mechanism_is_refused_with_its_path(target: Any) -> None:
    """``gang`` is checked as the job's own ``trainjobs.gang`` is: neither dropped
    without a word (operator target) nor a KeyError (pods target)."""
    mechanism: Any = "kueue"  # a str from a config file: not the Literal the hint asks for
    with pytest.raises(InvalidJobError) as err:
        run_program(lambda: TrainingJob("mnist", _tfjob(), target=target, gang=mechanism))
    (finding,) = err.value.findings
    assert finding.path == "job.trainjobs.gang"
    assert "'kueue'" in str(err.value)
    assert "volcano" in str(err.value)


def test_wait_given_to_the_component_keeps_the_jobs_own_wait_timeout() -> None:
    """``wait="running"`` alone changes how long nothing else: the ``waitTimeout`` beside
    the job (90m) stays, instead of falling back to the 60m default."""
    job = {**_tfjob(), "trainjobs": {"waitTimeout": "90m"}}
    resources = run_program(lambda: TrainingJob("mnist", job, wait="running"))
    (tfjob,) = [r for r in resources if r.type == "kubernetes:kubeflow.org/v1:TFJob"]
    assert tfjob.options["custom_timeouts"]["create"] == "90m"


SECRET = "Hunter2_Secret"
"""A value from a secret manager, also invalid where it is used (so a check prints it)."""


def _leaked(text: str) -> bool:
    """Whether ``text`` shows the secret in any form a finding writes it (as given,
    lowercased, or made into a valid name)."""
    lowered = text.lower()
    return "hunter2" in lowered


@pytest.mark.parametrize(
    "program",
    [
        lambda: TrainingJob(
            "mnist", _tfjob(), target="pods", namespace=pulumi.Output.secret(SECRET)
        ),
        lambda: RedisBackend("redis", namespace=pulumi.Output.secret(SECRET)),
    ],
    ids=["job namespace", "backend namespace"],
)
def test_a_secret_inputs_value_is_never_printed_when_it_is_invalid(
    program: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked once resolved, a secret's value is refused by its field's path, and
    neither the error nor Pulumi's log shows it."""
    logged: list[str] = []
    monkeypatch.setattr(pulumi.log, "error", lambda message, **_: logged.append(message))
    with pytest.raises((InvalidJobError, InvalidResourceError)) as err:
        run_program(program)
    findings: tuple[Finding, ...] = tuple(err.value.findings)  # type: ignore[attr-defined]
    text = str(err.value)
    assert "metadata.namespace" in text
    assert "secret Pulumi Input" in text
    assert not _leaked(text), text
    assert logged
    assert not any(_leaked(m) for m in logged), logged
    assert not any(_leaked(f.render()) for f in findings)


def test_a_warning_about_a_secret_inputs_value_does_not_print_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, **_: warned.append(message))
    image = pulumi.Output.secret(f"registry.local/{SECRET.lower()}")
    run_program(lambda: RedisBackend("redis", {"image": image}, namespace="training"))
    assert any("image.unpinned" in m for m in warned), warned
    assert not any(_leaked(m) for m in warned), warned


def _untyped(component: Any) -> Any:
    """``component`` as a program that is not type-checked calls it (mypy refuses these)."""
    return component


@pytest.mark.parametrize(
    ("program", "argument", "got"),
    [
        (lambda: _untyped(TrainingJob)("m", [_tfjob()]), "job", "list"),
        (lambda: _untyped(TrainingJob)("m", "tfjob.yaml"), "job", "str"),
        (
            lambda: _untyped(TrainingJob)("m", _tfjob(), backend={"name": "redis"}),
            "backend",
            "dict",
        ),
        (lambda: _untyped(TrainingJob)("m", _tfjob(), backend="redis"), "backend", "str"),
        (lambda: _untyped(TrainingJob)("m", _tfjob(), queue="gpus"), "queue", "str"),
        (lambda: _untyped(TrainingJob)("m", _tfjob(), node_pool="a100"), "node_pool", "str"),
        (
            lambda: _untyped(TrainingJob)("m", _tfjob(), node_pool={"Worker": "a100"}),
            "node_pool['Worker']",
            "str",
        ),
        (lambda: _untyped(RedisBackend)("r", "password"), "spec", "str"),
        (lambda: _untyped(RedisBackend)("r", [{"port": 6380}]), "spec", "list"),
        (lambda: _untyped(RedisBackend)("r", namespace=5), "namespace", "int"),
        (lambda: _untyped(GpuQueue)("q", {}, uses=["a100"]), "uses[0]", "str"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_an_argument_of_the_wrong_type_is_refused_with_what_it_takes(
    program: Any, argument: str, got: str
) -> None:
    """A mistake in a program (a name where a component belongs, a dict where a model or
    a component does) is a finding naming the argument, what it got and what it takes:
    no AttributeError or pydantic traceback from inside trainjobs."""
    with pytest.raises((InvalidJobError, InvalidResourceError)) as err:
        run_program(program)
    findings: tuple[Finding, ...] = tuple(err.value.findings)  # type: ignore[attr-defined]
    assert [f.path for f in findings] == [argument], str(err.value)
    assert f"not the {got} given" in str(err.value), str(err.value)
    assert "fix: " in str(err.value)


def test_a_typed_component_refuses_a_document_of_another_kind() -> None:
    """``RedisBackend(name, <a GpuNodePool document>)`` registered a GpuNodePool under a
    RedisBackend object (and, for a cloud pool, without the cloud node pool)."""
    pool = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "GpuNodePool",
        "metadata": {"name": "a100"},
        "spec": {"provider": "static", "gpu": "nvidia-a100", "gpusPerNode": 8},
    }
    with pytest.raises(InvalidResourceError) as err:
        run_program(lambda: RedisBackend("redis", pool))
    (finding,) = err.value.findings
    assert finding.path == "redis.kind"
    assert "'GpuNodePool'" in str(err.value)
    assert "GpuNodePool(...)" in finding.hint


def test_a_whole_document_and_a_given_password() -> None:
    """The document form the docstrings offer takes ``password=`` like the spec form."""
    document = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "RedisBackend",
        "metadata": {"name": "redis", "namespace": "training"},
        "spec": {"port": 6380},
    }
    password = pulumi.Output.secret("s3cret")
    resources = run_program(lambda: RedisBackend("redis", document, password=password))
    (secret,) = [r for r in resources if r.type == "kubernetes:core/v1:Secret"]
    assert secret.inputs["stringData"] == {"password": "s3cret"}
    assert secret.options["secret_inputs"] == ["stringData"]
    (service,) = [r for r in resources if r.type == "kubernetes:core/v1:Service"]
    assert service.inputs["spec"]["ports"][0]["port"] == 6380


def _warnings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, **_: warned.append(message))
    return warned


def test_components_log_the_warnings_of_their_render(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the README promises a warning for (an elastic PyTorchJob on the pods target
    gets no HPA) reaches a program's log, as the stack program's does; each component
    logs its own findings once (the job does not repeat its backend's)."""
    warned = _warnings(monkeypatch)
    container = {"name": "pytorch", "image": "registry.local/bert:1"}
    metric = {"type": "Resource", "resource": {"name": "cpu"}}
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "bert", "namespace": "training"},
        "spec": {
            "elasticPolicy": {"minReplicas": 1, "maxReplicas": 4, "metrics": [metric]},
            "pytorchReplicaSpecs": {
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [container]}}}
            },
        },
    }

    def program() -> None:
        redis = RedisBackend("redis", {"image": "redis"}, namespace="training")
        TrainingJob("bert", job, target="pods", backend=redis)

    run_program(program)
    hpa = [m for m in warned if "elasticPolicy.metrics" in m]
    assert len(hpa) == 1, warned
    assert "HPA" in hpa[0]
    unpinned = [m for m in warned if "image.unpinned" in m]
    assert len(unpinned) == 1, warned
    assert "redis → Deployment training/redis" in unpinned[0]


def test_with_inputs_the_warnings_come_once_with_the_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warned = _warnings(monkeypatch)
    image = pulumi.Output.from_input("redis")
    run_program(lambda: RedisBackend("redis", {"image": image}, namespace="training"))
    unpinned = [m for m in warned if "image.unpinned" in m]
    assert len(unpinned) == 1, warned
    assert "(got 'redis')" in unpinned[0]


def test_an_invalid_spec_with_inputs_names_them_as_inputs() -> None:
    """Refused before the values are known, the message shows ``<Pulumi Input #n>`` as a
    job's does, never the internal ``input-…`` token."""
    image = pulumi.Output.from_input("busybox:1.36")
    with pytest.raises(InvalidResourceError) as err:
        run_program(lambda: RedisBackend("redis", {"image": image, "port": "six"}))
    assert "input-" not in str(err.value), str(err.value)
    with pytest.raises(InvalidResourceError) as err:
        run_program(lambda: RedisBackend("redis", {"imag": image}))
    assert "(got '<Pulumi Input #1>')" in str(err.value), str(err.value)


def test_two_queues_on_one_pool_share_its_resource_flavor() -> None:
    """As in a stack, the first queue on a pool creates the pool's ResourceFlavor and
    the others use it: two queues each registering ResourceFlavor ``a100`` was one URN
    twice (and two owners of one cluster object)."""

    def program() -> None:
        pool = GpuNodePool("a100", pool_doc(provider="static"))
        for team in ("a", "b"):
            spec = {"nodePool": "a100", "gpus": 8, "namespaces": [team]}
            GpuQueue(f"team-{team}", spec, uses=[pool])

    resources = run_program(program)
    assert _duplicates(resources) == []
    (flavor,) = [r for r in resources if r.type.endswith(":ResourceFlavor")]
    assert flavor.parent.endswith("trainjobs:index:GpuQueue::team-a")
    queues = {r.name: r for r in resources if r.type == "trainjobs:index:GpuQueue"}
    # The second queue's ClusterQueue names the flavor: it is created after it.
    assert any(d == flavor.urn for d in queues["team-b"].options["dependencies"])
    cluster_queues = [r for r in resources if r.type.endswith(":ClusterQueue")]
    assert sorted(r.name for r in cluster_queues) == ["team-a", "team-b"]


def test_one_backend_name_in_two_namespaces_named_as_the_stack_program_names_them() -> None:
    """``RedisBackend("a/redis")`` is Redis ``redis`` in namespace ``a``, the name the
    stack program gives it (so it keeps its URNs moving between the two); as a bare name
    it was refused, so the same name in two namespaces needed whole documents."""

    def program() -> None:
        RedisBackend("a/redis", {"password": True})
        RedisBackend("b/redis", {"password": True}, namespace="b")

    resources = run_program(program)
    assert _duplicates(resources) == []
    services = sorted(
        (r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"], r.name)
        for r in resources
        if r.type == "kubernetes:core/v1:Service"
    )
    assert services == [("a", "redis", "a/redis"), ("b", "redis", "b/redis")]


def test_a_namespace_in_the_name_and_another_given_is_refused() -> None:
    with pytest.raises(InvalidResourceError) as err:
        run_program(lambda: RedisBackend("a/redis", namespace="b"))
    (finding,) = err.value.findings
    assert finding.path == "namespace"
    assert "'a/redis'" in str(err.value)


def test_the_type_hints_refuse_a_spec_of_the_wrong_type() -> None:
    """``spec`` was typed ``Any``, so mypy let any value through. mypy checks this file
    strictly (unused ignores are errors): each ignore below is needed only while the
    hints refuse the call; the typed forms the docstrings show pass without one."""
    with pytest.raises(InvalidResourceError):
        run_program(lambda: RedisBackend("r", "password"))  # type: ignore[arg-type]
    with pytest.raises(InvalidResourceError):
        run_program(lambda: GpuQueue("q", [{"gpus": 8}]))  # type: ignore[arg-type]
    run_program(lambda: RedisBackend("r", RedisBackendSpec(password=True)))
    run_program(lambda: RedisBackend("r", {"password": True}, namespace="training"))
    run_program(lambda: RedisBackend("r", PlatformArgs({"port": 6380})))


_PRIVILEGED_JOB = """\
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: mnist, namespace: %s}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: tensorflow
            image: registry.local/mnist:1
            securityContext: {privileged: true}
trainjobs:
  ignore: [pss.baseline.privileged]
"""


def test_jobs_from_file_keeps_each_jobs_own_options(tmp_path: Path) -> None:
    """A job's ``trainjobs: ignore`` (what ``trainjobs check`` of the same file honours)
    was dropped: the program refused the job, its fix naming the ignore already there."""
    path = tmp_path / "jobs.yaml"
    path.write_text(_PRIVILEGED_JOB % "training")
    resources = run_program(lambda: jobs_from_file(path, target="pods"))
    (pod,) = [r for r in resources if r.type == "kubernetes:core/v1:Pod"]
    assert pod.inputs["spec"]["containers"][0]["securityContext"] == {"privileged": True}


def test_jobs_from_file_refuses_a_file_with_platform_resources(tmp_path: Path) -> None:
    """Its jobs' references to them (a backend …) were dropped without a word."""
    path = tmp_path / "jobs.yaml"
    redis = "apiVersion: trainjobs.dev/v1alpha1\nkind: RedisBackend\nmetadata: {name: redis}\n"
    path.write_text(f"{redis}---\n" + (_PRIVILEGED_JOB % "default") + "  backend: redis\n")
    with pytest.raises(pulumi.RunError) as err:
        run_program(lambda: jobs_from_file(path, target="pods"))
    assert "stack_from_file" in str(err.value)
    assert "RedisBackend default/redis" in str(err.value)


def test_jobs_from_file_exports_one_name_in_two_namespaces_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both ``a/mnist`` and ``b/mnist`` exported ``mnist.objects``: the second hid the
    first. A name used once keeps its bare key (stacks' outputs stay)."""
    path = tmp_path / "jobs.yaml"
    path.write_text("---\n".join(_PRIVILEGED_JOB % ns for ns in ("a", "b")))
    exported: list[str] = []
    monkeypatch.setattr(pulumi, "export", lambda key, _value: exported.append(key))
    resources = run_program(lambda: jobs_from_file(path, target="pods"))
    in_a, in_b = ["a/mnist.objects", "a/mnist.addresses"], ["b/mnist.objects", "b/mnist.addresses"]
    assert exported == [*in_a, *in_b]
    assert _duplicates(resources) == []
    single = tmp_path / "one.yaml"
    single.write_text(_PRIVILEGED_JOB % "a")
    exported.clear()
    run_program(lambda: jobs_from_file(single, target="pods"))
    assert exported == ["mnist.objects", "mnist.addresses"]


def test_a_job_given_only_a_queue_renders_with_the_queues_pool() -> None:
    """The queue's pool is the queue's business: a job given ``queue=`` alone was refused
    with "no nodePool named 'a100' in this stack", a stack the program never declared."""

    def program() -> None:
        pool = GpuNodePool("a100", pool_doc(provider="static"))
        queue = GpuQueue(
            "gpus", {"nodePool": "a100", "gpus": 8, "namespaces": ["training"]}, uses=[pool]
        )
        TrainingJob("mnist", _tfjob(), target="pods", queue=queue)

    resources = run_program(program)
    pods = [r for r in resources if r.type == "kubernetes:core/v1:Pod"]
    assert pods
    assert {p.inputs["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] for p in pods} == {"gpus"}
