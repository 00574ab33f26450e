"""The stack program (``__main__.py`` → ``trainjobs.components.program``) is fail-safe:
a misspelt setting or namespace, or a stack whose jobs vanished, fails before anything
is planned; secret settings stay secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest

from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import program
from trainjobs.components.stack import READ_STACK_OUTPUTS, TrainingStack


def _job(name: str = "tf", env: str = "x") -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "tf:2", "env": [{"name": "TOKEN", "value": env}]}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [container]}}}
            }
        },
        "trainjobs": {"target": "pods"},
    }


def _backend() -> dict[str, Any]:
    return {"kind": "RedisBackend", "metadata": {"name": "redis", "namespace": "ml"}}


def _fails(config: dict[str, Any], **kwargs: Any) -> tuple[str, list[Registered]]:
    registered: list[Registered] = []
    with pytest.raises(pulumi.RunError) as err:
        run_program(program, config, into=registered, **kwargs)
    return str(err.value), registered


def test_a_misspelt_setting_fails_the_program_with_the_fix() -> None:
    message, registered = _fails({"trainjobs:job": [_job()]})
    assert "trainjobs:job: unknown stack setting" in message
    assert "did you mean trainjobs:jobs?" in message
    assert registered == []


def test_a_misspelt_namespace_fails_the_program() -> None:
    message, registered = _fails({"trainjob:jobs": [_job()], "kubernetes:context": "kind"})
    assert "trainjob:jobs: config namespace 'trainjob' is not the project's" in message
    assert "rename it to trainjobs:jobs" in message
    assert "kubernetes" not in message  # another provider's settings are not ours
    assert registered == []


def test_the_namespace_follows_the_project_name() -> None:
    renamed = "ml-platform"
    resources = run_program(program, {f"{renamed}:jobs": [_job()]}, project=renamed)
    assert any(r.type == "kubernetes:core/v1:Pod" for r in resources)
    message, _ = _fails({"trainjobs:jobs": [_job()]}, project=renamed)
    assert "the project is named 'ml-platform'" in message
    assert "rename it to ml-platform:jobs" in message


def test_the_settings_the_language_host_passes_are_all_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`pulumi up` hands the program its config as PULUMI_CONFIG (JSON): a typo there
    fails too. (If the SDK stops passing config this way, this test says so.)"""
    monkeypatch.setenv(
        "PULUMI_CONFIG", json.dumps({"trainjobs:jobs": "[]", "trainjobs:nodepools": "[]"})
    )
    message, _ = _fails({})
    assert "trainjobs:nodepools: unknown stack setting" in message
    assert "did you mean trainjobs:nodePools?" in message


def test_a_stack_whose_jobs_vanished_fails_before_planning() -> None:
    previous = {READ_STACK_OUTPUTS: {"outputs": {"jobs": ["ml/tf"]}}}
    message, registered = _fails({"trainjobs:backends": [_backend()]}, live=previous)
    assert "declares no jobs, but its last update had 1 (ml/tf)" in message
    assert "pulumi config set trainjobs:allowNoJobs true" in message
    # Only the stack's own last outputs were read; nothing was declared.
    assert registered == []


def test_a_stack_without_jobs_before_or_now_is_fine() -> None:
    resources = run_program(
        program, {"trainjobs:backends": [_backend()]}, live={READ_STACK_OUTPUTS: {"outputs": {}}}
    )
    assert any(r.type == "trainjobs:index:RedisBackend" for r in resources)


def test_allow_no_jobs_lets_a_stack_drop_its_jobs() -> None:
    calls: list[str] = []
    resources = run_program(
        program,
        {"trainjobs:backends": [_backend()], "trainjobs:allowNoJobs": "true"},
        calls=calls,
    )
    assert any(r.type == "trainjobs:index:RedisBackend" for r in resources)
    assert READ_STACK_OUTPUTS not in calls
    message, _ = _fails({"trainjobs:jobs": [_job()], "trainjobs:allowNoJobs": "yes"})
    assert "allowNoJobs must be true or false" in message


def test_a_secret_setting_stays_secret() -> None:
    resources = run_program(
        program, {"trainjobs:jobs": [_job(env="hunter2")]}, secret_keys=["trainjobs:jobs"]
    )
    (pod,) = [r for r in resources if r.type == "kubernetes:core/v1:Pod"]
    assert pod.options["secret_inputs"] == ["spec"]
    assert "spec" in pod.options["secret_outputs"]
    assert pod.inputs["spec"]["containers"][0]["env"][0]["value"] == "hunter2"


@pytest.mark.parametrize("environment", [False, True])
def test_only_the_jobs_holding_a_secure_value_are_secret(
    environment: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pulumi marks all of ``jobs`` secret for one ``secure:`` value in it; the job the
    stack file shows in plain text is not encrypted (so ``preview --diff`` shows its
    changes). A stack whose config may come from elsewhere (an ESC ``environment``)
    keeps every job secret."""
    secret, plain = _job("secret", env="hunter2"), _job("plain")
    in_file = json.loads(json.dumps(secret))
    in_file["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["env"][0][
        "value"
    ] = {"secure": "v1:abc"}
    doc: dict[str, Any] = {"config": {"trainjobs:jobs": [in_file, plain]}}
    if environment:
        doc["environment"] = ["team/secrets"]
    (tmp_path / "Pulumi.test.yaml").write_text(json.dumps(doc))
    monkeypatch.setenv("TRAINJOBS_STACK_DIR", str(tmp_path))
    resources = run_program(
        program, {"trainjobs:jobs": [secret, plain]}, secret_keys=["trainjobs:jobs"]
    )
    pods = {r.name: r for r in resources if r.type == "kubernetes:core/v1:Pod"}
    assert pods["ml/secret-worker-0"].options["secret_inputs"] == ["spec"]
    assert pods["ml/plain-worker-0"].options["secret_inputs"] == (["spec"] if environment else [])


def test_a_secret_settings_value_never_reaches_an_error_message() -> None:
    job = _job()
    job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = "hunter2"
    message, _ = _fails({"trainjobs:jobs": [job]}, secret_keys=["trainjobs:jobs"])
    assert "jobs[0].spec.tfReplicaSpecs.Worker.replicas" in message
    assert "hunter2" not in message


@pytest.mark.parametrize("field", ["name", "namespace"])
def test_a_secret_settings_value_is_not_repeated_as_an_example_name(field: str) -> None:
    """A name finding offers a valid name made from the bad one (``e.g. 'hunter2-x'``):
    from a secret setting, that example is the secret lowercased, so it is left out too."""
    job = _job()
    job["metadata"][field] = "Hunter2_X"
    message, _ = _fails({"trainjobs:jobs": [job]}, secret_keys=["trainjobs:jobs"])
    assert f"jobs[0].metadata.{field}" in message
    assert "hunter2" not in message.lower(), message


def _previous(targets: dict[str, str] | None) -> dict[str, dict[str, Any]]:
    """The stack's last outputs as the engine returns them; ``targets`` None:
    a stack last updated by a version that exported no ``jobTargets``."""
    outputs: dict[str, Any] = {"jobs": sorted(targets or {"ml/tf": ""})}
    if targets is not None:
        outputs["jobTargets"] = targets
    return {READ_STACK_OUTPUTS: {"outputs": outputs}}


def _targeted(name: str, target: str) -> dict[str, Any]:
    job = _job(name)
    job["trainjobs"] = {"target": target}
    return job


def _exports(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    exported: dict[str, Any] = {}
    monkeypatch.setattr(pulumi, "export", lambda name, value: exported.__setitem__(name, value))
    return exported


def test_an_operator_to_pods_switch_in_one_update_fails_before_planning() -> None:
    message, registered = _fails(
        {"trainjobs:jobs": [_job()]}, live=_previous({"ml/tf": "operator"})
    )
    assert "trainjobs:jobs[0].trainjobs.target: job ml/tf moves from target operator to pods" in (
        message
    )
    assert "declares Service ml/tf-worker-0, Pod ml/tf-worker-0 under the names" in message
    assert "(still owned by the TFJob) and deleting the TFJob then garbage-collects" in message
    assert "fix: take two updates: remove the job from trainjobs:jobs (keep a copy)" in message
    assert "then add it back with target pods and `pulumi up`" in message
    # The job is the stack's only one: removing it needs allowNoJobs.
    assert "the stack's only job, the first update needs `pulumi config set " in message
    assert "trainjobs:allowNoJobs true`" in message
    assert registered == []


def test_every_switching_job_is_named_at_once() -> None:
    jobs = [_job("a"), _job("b"), _targeted("c", "operator")]
    previous = _previous({"ml/a": "operator", "ml/b": "operator", "ml/c": "operator"})
    message, registered = _fails({"trainjobs:jobs": jobs}, live=previous)
    assert message.startswith("2 errors in the input")
    assert "jobs[0].trainjobs.target: job ml/a moves from target operator to pods" in message
    assert "jobs[1].trainjobs.target: job ml/b moves from target operator to pods" in message
    assert "ml/c" not in message
    # ml/c stays: removing the others leaves a job, so allowNoJobs is not needed.
    assert "allowNoJobs" not in message
    assert registered == []


def test_switching_all_jobs_says_the_first_update_needs_allow_no_jobs() -> None:
    previous = _previous({"ml/a": "operator", "ml/b": "operator"})
    message, _ = _fails({"trainjobs:jobs": [_job("a"), _job("b")]}, live=previous)
    assert message.count("as that is all the stack's jobs, the first update needs") == 2
    with_allow = {"trainjobs:jobs": [_job("a"), _job("b")], "trainjobs:allowNoJobs": "true"}
    message, _ = _fails(with_allow, live=previous)
    assert "allowNoJobs" not in message


def test_the_stacks_default_target_is_named_when_the_job_names_none() -> None:
    job = _job()
    del job["trainjobs"]
    config = {"trainjobs:jobs": [job], "trainjobs:target": "pods"}
    message, _ = _fails(config, live=_previous({"ml/tf": "operator"}))
    assert "trainjobs:target: job ml/tf moves from target operator to pods" in message


def test_a_switch_message_never_holds_a_secret_settings_value() -> None:
    config = {"trainjobs:jobs": [_job(env="hunter2")]}
    message, _ = _fails(
        config, live=_previous({"ml/tf": "operator"}), secret_keys=["trainjobs:jobs"]
    )
    assert "moves from target operator to pods" in message
    assert "hunter2" not in message


@pytest.mark.parametrize(
    "previous",
    [
        pytest.param({"ml/tf": "pods"}, id="pods before"),
        pytest.param({"ml/other": "operator"}, id="a new job"),
        pytest.param(None, id="no jobTargets: a stack from an older version"),
    ],
)
def test_a_pods_job_with_nothing_to_take_over_is_declared(
    previous: dict[str, str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    exported = _exports(monkeypatch)
    calls: list[str] = []
    resources = run_program(
        program, {"trainjobs:jobs": [_job()]}, live=_previous(previous), calls=calls
    )
    assert any(r.type == "kubernetes:core/v1:Pod" for r in resources)
    assert calls == [READ_STACK_OUTPUTS]
    assert exported["jobs"] == ["ml/tf"]
    assert exported["jobTargets"] == {"ml/tf": "pods"}


def test_pods_to_operator_is_declared_without_reading_the_last_outputs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stack without a job on a target that could take objects over plans as before
    jobTargets: the last outputs are not read."""
    exported = _exports(monkeypatch)
    jobs = [_targeted("tf", "operator"), _targeted("b", "operator")]
    calls: list[str] = []
    resources = run_program(
        program,
        {"trainjobs:jobs": jobs},
        live=_previous({"ml/tf": "pods", "ml/b": "operator"}),
        calls=calls,
    )
    assert sum(r.type == "kubernetes:kubeflow.org/v1:TFJob" for r in resources) == 2
    assert READ_STACK_OUTPUTS not in calls
    assert exported["jobs"] == ["ml/b", "ml/tf"]
    assert exported["jobTargets"] == {"ml/b": "operator", "ml/tf": "operator"}


def test_a_job_that_reads_the_last_outputs_is_declared_before_the_program_returns() -> None:
    """The last outputs are read synchronously, so the components are declared by the
    program itself and not inside an ``apply``: the Python SDK waits for what an
    ``apply`` declares with a loop over every pending output at each completion, which
    cost a 256-worker pods-target ``pulumi up`` 20 s of the program's CPU, growing with
    the square of the job (issue 35). Fails on the StackReference-and-apply version,
    whose ``program()`` returned an Output."""
    returned: list[Any] = []
    resources = run_program(
        lambda: returned.append(program()),
        {"trainjobs:jobs": [_targeted("tf", "pods")]},
        live=_previous({"ml/tf": "pods"}),
    )
    assert [type(r) for r in returned] == [TrainingStack]
    assert any(r.type == "kubernetes:core/v1:Pod" for r in resources)
