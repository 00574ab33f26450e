"""The CLI's check rule options: --list-rules, --profile, warnings and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from trainjobs.check.rules import RULES
from trainjobs.cli import main

RDMA_JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: llm, namespace: training}
spec:
  runPolicy: {ttlSecondsAfterFinished: 600}
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: pytorch
              image: ghcr.io/example/llm:3.1
              resources: {requests: {cpu: 8, memory: 32Gi}, limits: {nvidia.com/gpu: 8}}
              securityContext: {capabilities: {add: [IPC_LOCK]}}
"""


def test_list_rules_prints_every_rule_and_where_to_silence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "--list-rules"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["RULE", "SEVERITY", "PROFILE", "CHECKS"]
    assert [line.split()[0] for line in out[1 : 1 + len(RULES)]] == RULES.codes()
    assert out[1 + RULES.codes().index("image.unpinned")].split()[:3] == [
        "image.unpinned",
        "warning",
        "any",
    ]
    assert out[-1].startswith("Silence a rule for one job with `trainjobs: {ignore: [CODE]}`")


def test_list_rules_in_json_and_never_in_place_of_a_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # --output json printed the text table; a PATH beside --list-rules was not checked,
    # and the command exited 0.
    assert main(["check", "--list-rules", "--output", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["code"] for r in listed["rules"]] == RULES.codes()
    unpinned = listed["rules"][RULES.codes().index("image.unpinned")]
    assert (unpinned["severity"], unpinned["profile"]) == ("warning", "any")
    assert unpinned["docs"]
    assert main(["check", "--list-rules", "stacks/Pulumi.unfit.yaml"]) == 2
    assert capsys.readouterr().err == (
        "error: --list-rules takes no PATH; fix: run check PATH... and check --list-rules apart\n"
    )


def test_check_without_a_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 2
    assert capsys.readouterr().err == "error: check needs a PATH (or --list-rules)\n"


def test_an_rdma_job_fails_check_and_render_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "llm.yaml"
    job.write_text(RDMA_JOB)
    for command in ("check", "render"):
        assert main([command, str(job)]) == 2
        err = capsys.readouterr().err.splitlines()
        assert err[0].startswith(
            f"error: {job}: jobs[0].spec.pytorchReplicaSpecs.Worker.template.spec.containers[0]"
            ".securityContext.capabilities.add[0]: container 'pytorch' adds capability IPC_LOCK"
        )
        assert "job training/llm needs the privileged Pod Security level" in err[0]
        assert err[-1] == {"check": "1 error", "render": "1 error; nothing was written"}[command]


def test_an_ignored_rule_passes_and_restricted_is_opt_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "llm.yaml"
    job.write_text(RDMA_JOB + "trainjobs: {ignore: [pss.baseline.capabilities]}\n")
    assert main(["check", str(job)]) == 0
    assert capsys.readouterr().out == "ok: 1 job, 1 object, 0 errors, 0 warnings\n"
    assert main(["check", str(job), "--profile", "restricted"]) == 2
    err = capsys.readouterr().err
    # four controls, one with two violations (no drop ALL, IPC_LOCK added)
    assert err.count("does not meet the restricted Pod Security level") == 5


def test_the_summary_counts_warnings_and_advice_apart(capsys: pytest.CaptureFixture[str]) -> None:
    # The Volcano gang stack draws advice only (the PodGroup CRD must be installed first):
    # it was counted as warnings, in the summary line and in --output json.
    stack = str(ROOT / "stacks" / "Pulumi.gang-volcano.yaml")
    assert main(["check", stack, "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    severities = [f["severity"] for f in report["findings"]]
    assert (
        (report["warnings"], report["advice"])
        == (0, 2)
        == (
            severities.count("warning"),
            severities.count("advice"),
        )
    )
    assert main(["check", stack]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith(" 0 errors, 0 warnings, 2 advice")
