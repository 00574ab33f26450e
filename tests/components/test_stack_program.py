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

STACK_REFERENCE = "pulumi:pulumi:StackReference"


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
    previous = {STACK_REFERENCE: {"outputs": {"jobs": ["ml/tf"]}}}
    message, registered = _fails({"trainjobs:backends": [_backend()]}, live=previous)
    assert "declares no jobs, but its last update had 1 (ml/tf)" in message
    assert "pulumi config set trainjobs:allowNoJobs true" in message
    # Only the reference to the stack's own last outputs was read; nothing was declared.
    assert [r for r in registered if r.type != STACK_REFERENCE] == []


def test_a_stack_without_jobs_before_or_now_is_fine() -> None:
    resources = run_program(
        program, {"trainjobs:backends": [_backend()]}, live={STACK_REFERENCE: {"outputs": {}}}
    )
    assert any(r.type == "trainjobs:index:RedisBackend" for r in resources)


def test_allow_no_jobs_lets_a_stack_drop_its_jobs() -> None:
    resources = run_program(
        program, {"trainjobs:backends": [_backend()], "trainjobs:allowNoJobs": "true"}
    )
    assert any(r.type == "trainjobs:index:RedisBackend" for r in resources)
    assert not any(r.type == STACK_REFERENCE for r in resources)
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
