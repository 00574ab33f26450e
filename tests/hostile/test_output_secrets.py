"""Rule 3 of issue 14, output side: a secret never reaches output, found by structure.

A secret sits in a Secret's ``data``/``stringData`` (however malformed the Secret),
in the literal value of an env var whose name says so (``auth``, ``requirepass``,
``*_PASSWORD``, ``*_TOKEN``, ``*_SECRET``, ``*_KEY`` …) or after a password option in
``command``/``args``. Each case writes a job holding one, runs the real CLI and
asserts the value appears nowhere: not in ``render`` (stdout or ``-o`` files), not
in the state ``preview`` stores, not in ``diff``, not in a message — within bounds,
no traceback, nothing outside the command's own output changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.hostile.harness import Outcome, TreeState, assert_bounded, assert_refused, run_cli

SECRET = "hunter2-do-not-print"


def _job(env: list[dict[str, Any]] | None = None, args: list[str] | None = None) -> str:
    container: dict[str, Any] = {
        "name": "tensorflow",
        "image": "tf:2",
        "command": ["python", "train.py"],
    }
    if env is not None:
        container["env"] = env
    if args is not None:
        container["args"] = args
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": "training"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [container]}}}
            }
        },
    }
    return yaml.safe_dump(job)


def _ok(outcome: Outcome) -> Outcome:
    assert_bounded(outcome)
    assert outcome.code in (0, 1), outcome.stderr
    assert SECRET not in outcome.stdout + outcome.stderr
    return outcome


def _every_output_hides(home: Path) -> None:
    """render (stdout and -o), preview's stored state and diff of two renders."""
    before = TreeState.of(home, skip=["out", "out2", ".trainjobs"])
    _ok(run_cli(["render", "job.yaml"], home))
    _ok(run_cli(["render", "job.yaml", "-o", "out", "-q"], home))
    _ok(run_cli(["preview", "job.yaml"], home))
    _ok(run_cli(["preview", "job.yaml", "--json"], home))
    for path in [*(home / "out").iterdir(), *(home / ".trainjobs").rglob("*")]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    # A changed secret shows as a change, never as its value.
    (home / "job.yaml").write_text((home / "job.yaml").read_text().replace(SECRET, "x" + SECRET))
    _ok(run_cli(["render", "job.yaml", "-o", "out2", "-q", "--show-secrets"], home))
    shown = _ok(run_cli(["diff", "out", "out2"], home))
    assert "x" + SECRET not in shown.stdout
    assert before.changes(TreeState.of(home, skip=["out", "out2", ".trainjobs"])) == ["job.yaml"]


SECRET_ENV_NAMES = [
    "auth",
    "requirepass",
    "password",
    "DB_PASSWORD",
    "REDIS_PASSWD",
    "REDIS_AUTH",
    "HF_TOKEN",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "WANDB_API_KEY",
    "SSH_KEY",
    "CLIENT_SECRET",
    "db.password",
    "GPG_PASSPHRASE",
]


@pytest.mark.parametrize("name", SECRET_ENV_NAMES)
def test_a_literal_value_of_a_secret_env_var_is_never_output(tmp_path: Path, name: str) -> None:
    (tmp_path / "job.yaml").write_text(_job(env=[{"name": name, "value": SECRET}]))
    _every_output_hides(tmp_path)


@pytest.mark.parametrize(
    "args",
    [
        ["--requirepass", SECRET],
        ["--password=" + SECRET],
        ["--token", SECRET],
        ["--api-key=" + SECRET],
        ["--masterauth", SECRET],
        ["--epochs", "3", "--PASSWORD", SECRET],
    ],
    ids=["requirepass", "password=", "token", "api-key=", "masterauth", "upper-case"],
)
def test_the_value_of_a_password_option_is_never_output(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "job.yaml").write_text(_job(args=args))
    _every_output_hides(tmp_path)


def test_what_is_not_secret_is_shown_and_show_secrets_shows_all(tmp_path: Path) -> None:
    env = [
        {"name": "LOG_LEVEL", "value": "debug-visible"},
        {"name": "DB_PASSWORD", "value": SECRET},
        {"name": "REDIS_PASSWORD", "value": "$(FROM_ELSEWHERE)"},
    ]
    (tmp_path / "job.yaml").write_text(_job(env=env, args=["--epochs", "3"]))
    plain = run_cli(["render", "job.yaml"], tmp_path)
    assert "debug-visible" in plain.stdout and "--epochs" in plain.stdout
    assert "$(FROM_ELSEWHERE)" in plain.stdout  # a reference, not a value
    assert SECRET not in plain.stdout
    assert SECRET in run_cli(["render", "job.yaml", "--show-secrets"], tmp_path).stdout


OLD = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "s", "namespace": "n"},
    "stringData": {"p": "old-" + SECRET},
}

MALFORMED_SECRETS: dict[str, dict[str, Any]] = {
    "a number as a value": {**OLD, "data": {"p": 12345678}, "stringData": None},
    "a list for stringData": {**OLD, "stringData": [SECRET]},
    "a string for stringData": {**OLD, "stringData": SECRET},
    "apiVersion v2": {**OLD, "apiVersion": "v2", "stringData": {"p": SECRET}},
    "kind in lower case": {**OLD, "kind": "secret", "stringData": {"p": SECRET}},
    "a nested map as a value": {**OLD, "stringData": {"p": {"inner": SECRET}}},
    "data that is not base64": {**OLD, "data": {"p": SECRET}, "stringData": None},
    "a secret env var in a Pod": {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "s", "namespace": "n"},
        "spec": {
            "containers": [
                {"name": "c", "image": "i", "env": [{"name": "API_TOKEN", "value": SECRET}]}
            ]
        },
    },
}


@pytest.mark.parametrize("case", list(MALFORMED_SECRETS), ids=list(MALFORMED_SECRETS))
@pytest.mark.parametrize("json_output", [False, True], ids=["text", "json"])
def test_diff_of_a_malformed_secret_never_shows_its_values(
    tmp_path: Path, case: str, json_output: bool
) -> None:
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(OLD))
    (tmp_path / "new.yaml").write_text(yaml.safe_dump(MALFORMED_SECRETS[case]))
    before = TreeState.of(tmp_path)
    argv = ["diff", "old.yaml", "new.yaml", *(["--json"] if json_output else [])]
    outcome = run_cli(argv, tmp_path)
    assert_bounded(outcome)
    assert outcome.code in (1, 2), outcome.stderr
    assert SECRET not in outcome.stdout + outcome.stderr
    assert "12345678" not in outcome.stdout + outcome.stderr
    if json_output and outcome.code == 1:
        json.loads(outcome.stdout)
    assert before.changes(TreeState.of(tmp_path)) == []


def test_a_password_where_a_flag_belongs_is_not_echoed(tmp_path: Path) -> None:
    stack = (
        "apiVersion: trainjobs.dev/v1alpha1\nkind: RedisBackend\n"
        "metadata: {name: r, namespace: training}\n"
        f"spec: {{password: {SECRET}}}\n"
    )
    (tmp_path / "stack.yaml").write_text(stack)
    before = TreeState.of(tmp_path)
    outcome = run_cli(["render", "stack.yaml"], tmp_path)
    assert_refused(outcome, "password")
    assert SECRET not in outcome.stdout + outcome.stderr
    assert before.changes(TreeState.of(tmp_path)) == []


RUN_LOCAL = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: meet, namespace: training}}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: pytorch
              image: trainer:1
              command: {command}
              env: [{{name: {env}, value: {secret}}}]
trainjobs: {{target: pods}}
"""


@pytest.mark.parametrize(
    ("command", "env"),
    [
        (f"[echo, --requirepass, {SECRET}]", "LOG_LEVEL"),
        (f"[echo, '--password={SECRET}']", "LOG_LEVEL"),
        ("[echo, '$(API_TOKEN)']", "API_TOKEN"),
        ("[printenv, DB_PASSWORD]", "DB_PASSWORD"),
    ],
    ids=["option", "option=", "secret-env-in-args", "program-prints-it"],
)
def test_run_local_never_prints_a_secret(tmp_path: Path, command: str, env: str) -> None:
    (tmp_path / "job.yaml").write_text(RUN_LOCAL.format(command=command, env=env, secret=SECRET))
    before = TreeState.of(tmp_path)
    outcome = run_cli(["run-local", "job.yaml", "--timeout", "20"], tmp_path)
    assert_bounded(outcome)
    assert outcome.code == 0, outcome.stderr
    assert "<redacted>" in outcome.stdout + outcome.stderr
    assert SECRET not in outcome.stdout + outcome.stderr
    assert before.changes(TreeState.of(tmp_path)) == []
