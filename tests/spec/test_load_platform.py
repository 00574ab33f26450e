"""Platform documents beside jobs: in files, in stack lists, and the references to them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.platform import PLATFORM
from trainjobs.spec import load_path, parse_documents, parse_stack

REDIS: dict[str, Any] = {
    "apiVersion": "trainjobs.dev/v1alpha1",
    "kind": "RedisBackend",
    "metadata": {"name": "redis", "namespace": "ml"},
}
JOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "tf", "namespace": "ml"},
    "spec": {
        "tfReplicaSpecs": {
            "Worker": {
                "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}}
            }
        }
    },
}


def _errors(call: Any) -> list[str]:
    with pytest.raises(SpecError) as err:
        call()
    return [f.render() for f in err.value.errors]


def test_a_file_may_hold_jobs_and_platform_documents() -> None:
    stack = parse_documents([REDIS, JOB, {**JOB, "metadata": {"name": "tf2"}}])
    assert [e.path for e in stack.jobs] == ["jobs[0]", "jobs[1]"]
    (backend,) = stack.platform
    assert (backend.path, backend.key, backend.plugin.kind) == (
        "backends[0]",
        "ml/redis",
        "RedisBackend",
    )


def test_apiversion_may_be_left_out_for_platform_kinds() -> None:
    doc = {k: v for k, v in REDIS.items() if k != "apiVersion"}
    assert parse_documents([doc]).platform[0].resource.api_version == "trainjobs.dev/v1alpha1"


def test_stack_lists_hold_their_own_category(tmp_path: Path) -> None:
    (tmp_path / "redis.yaml").write_text(
        "apiVersion: trainjobs.dev/v1alpha1\nkind: RedisBackend\nmetadata: {name: r}\n"
    )
    stack = parse_stack(
        {"trainjobs:backends": [{"file": "redis.yaml"}], "trainjobs:jobs": [JOB]},
        base_dir=tmp_path,
    )
    assert [p.key for p in stack.platform] == ["default/r"]
    assert _errors(lambda: parse_stack({"trainjobs:jobs": [REDIS]}, source="s.yaml")) == [
        "error: s.yaml: jobs[0]: a RedisBackend belongs under trainjobs:backends "
        "(got 'RedisBackend'); fix: move this entry to trainjobs:backends"
    ]
    assert _errors(lambda: parse_stack({"trainjobs:backends": [JOB]})) == [
        "error: backends[0]: a TFJob belongs under trainjobs:jobs (got 'TFJob'); "
        "fix: move this entry to trainjobs:jobs"
    ]


def test_misspelt_stack_keys_get_a_suggestion() -> None:
    assert _errors(lambda: parse_stack({"trainjobs:backend": []})) == [
        "error: trainjobs:backend: unknown stack setting; fix: did you mean trainjobs:backends?"
    ]


def test_platform_documents_report_field_paths() -> None:
    bad = {**REDIS, "spec": {"port": 0, "pasword": True}}
    assert _errors(lambda: parse_documents([bad])) == [
        "error: backends[0].spec.port: input should be greater than or equal to 1 (got 0); "
        "fix: change the number to fit the bound",
        "error: backends[0].spec.pasword: unknown field (got true); fix: did you mean 'password'?",
    ]
    wrong = {**REDIS, "kind": "RedisBakend"}
    # Every registered kind is offered; the list grows with the registry.
    kinds = ", ".join(f"trainjobs.dev/v1alpha1 {kind}" for kind in PLATFORM.kinds())
    assert kinds.startswith(
        "trainjobs.dev/v1alpha1 RedisBackend, trainjobs.dev/v1alpha1 NfsBackend"
    )
    assert _errors(lambda: parse_documents([wrong])) == [
        "error: jobs[0].kind: no platform kind handles this apiVersion and kind "
        "(got 'trainjobs.dev/v1alpha1 RedisBakend'); fix: did you mean 'RedisBackend' "
        "(trainjobs.dev/v1alpha1)?"
    ]
    # A kind close to none is answered with every registered kind.
    unknown = {**REDIS, "kind": "Cache"}
    assert _errors(lambda: parse_documents([unknown])) == [
        "error: jobs[0].kind: no platform kind handles this apiVersion and kind "
        f"(got 'trainjobs.dev/v1alpha1 Cache'); fix: use one of: {kinds}"
    ]


def test_unknown_and_ambiguous_references() -> None:
    job = {**JOB, "trainjobs": {"backend": "redsi"}}
    assert _errors(lambda: run(parse_documents([REDIS, job]))) == [
        "error: jobs[0].trainjobs.backend: no backend named 'redsi' in this stack "
        "(got 'redsi'); fix: use one of: ml/redis"
    ]
    # In another namespace than the job's: a backend without password and policy.
    other = {
        **REDIS,
        "metadata": {"name": "redis", "namespace": "other"},
        "spec": {"password": False, "networkPolicy": False},
    }
    elsewhere = {**JOB, "metadata": {"name": "tf", "namespace": "third"}}
    job = {**elsewhere, "trainjobs": {"backend": "redis"}}
    assert _errors(lambda: run(parse_documents([REDIS, other, job]))) == [
        "error: jobs[0].trainjobs.backend: 2 backends are named 'redis' (got 'redis'); "
        "fix: name one as namespace/name: ml/redis, other/redis"
    ]
    job = {**elsewhere, "trainjobs": {"backend": "other/redis"}}
    (rendered,) = run(parse_documents([REDIS, other, job])).jobs
    assert [str(d) for d in rendered.depends_on] == ["backend other/redis"]


def test_a_reference_prefers_the_jobs_namespace() -> None:
    other = {**REDIS, "metadata": {"name": "redis", "namespace": "other"}}
    job = {**JOB, "trainjobs": {"backend": "redis"}}
    (rendered,) = run(parse_documents([other, REDIS, job])).jobs
    assert [str(d) for d in rendered.depends_on] == ["backend ml/redis"]


def test_options_beside_a_file_apply_to_its_jobs(tmp_path: Path) -> None:
    (tmp_path / "jobs.yaml").write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: a}\n"
        "spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: "
        "[{name: tensorflow, image: 'tf:2'}]}}}}}\n"
        "trainjobs: {target: operator}\n"
    )
    stack = parse_stack(
        {
            "trainjobs:jobs": [
                {"file": "jobs.yaml", "trainjobs": {"target": "pods", "backend": "r"}}
            ]
        },
        base_dir=tmp_path,
    )
    (entry,) = stack.jobs
    # The job's own target wins; the backend comes from beside the file.
    assert (entry.options.target, entry.options.backend) == ("operator", "r")


def test_load_path_reads_a_mixed_file(tmp_path: Path) -> None:
    path = tmp_path / "all.yaml"
    path.write_text(
        "apiVersion: trainjobs.dev/v1alpha1\nkind: NfsBackend\nmetadata: {name: s}\n"
        "spec: {claimName: data}\n"
    )
    stack = load_path(path)
    assert [p.plugin.kind for p in stack.platform] == ["NfsBackend"]
