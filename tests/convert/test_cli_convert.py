"""``trainjobs convert`` on the command line: output, exit codes, --strict, --write."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.support.paths import EXAMPLES
from trainjobs.cli import main


def test_a_job_file_prints_its_trainjob(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / "pytorch-ddp" / "pytorchjob.yaml"
    before = path.read_text()
    assert main(["convert", str(path)]) == 0
    out = capsys.readouterr()
    kinds = [d["kind"] for d in yaml.safe_load_all(out.out)]
    assert kinds == ["TrainingRuntime", "TrainJob"]
    assert path.read_text() == before


def test_a_refused_kind_exits_2_and_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(EXAMPLES / "tf-mnist" / "tfjob.yaml")]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert "TF_CONFIG" in out.err and "fix:" in out.err and "Traceback" not in out.err


def test_strict_makes_a_field_not_carried_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "pytorch-elastic" / "pytorchjob.yaml")
    assert main(["convert", path]) == 0
    warned = capsys.readouterr()
    assert "spec.elasticPolicy.minReplicas" in warned.err and warned.out
    assert main(["convert", "--strict", path]) == 2
    failed = capsys.readouterr()
    assert failed.out == "" and "spec.elasticPolicy.minReplicas" in failed.err


STACK = """\
# a stack of two jobs
config:
  trainjobs:target: operator   # kept
  trainjobs:jobs:
    # the TFJob stays
    - apiVersion: kubeflow.org/v1
      kind: TFJob
      metadata: {name: tf, namespace: default}
      spec:
        tfReplicaSpecs:
          Worker:
            replicas: 1
            template:
              spec:
                containers: [{name: tensorflow, image: "tf:1"}]
    - apiVersion: kubeflow.org/v1
      kind: JAXJob
      metadata: {name: jax, namespace: default}
      spec:
        jaxReplicaSpecs:
          Worker:
            replicas: 2
            restartPolicy: OnFailure
            template:
              spec:
                containers: [{name: jax, image: "jax:1", command: [python, t.py]}]
    - file: job.yaml
  # after the jobs
"""


def test_a_stack_is_rewritten_only_with_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text(STACK)
    shutil.copy(EXAMPLES / "xgboost-dist" / "xgboostjob.yaml", tmp_path / "job.yaml")
    job_before = (tmp_path / "job.yaml").read_text()
    assert main(["convert", str(stack)]) == 0
    dry = capsys.readouterr()
    assert "+    - apiVersion: trainer.kubeflow.org/v1alpha1\n+      kind: TrainJob" in dry.out
    assert "not written" in dry.err and "kept as it is" in dry.err
    assert stack.read_text() == STACK and (tmp_path / "job.yaml").read_text() == job_before

    assert main(["convert", "--write", str(stack)]) == 0
    wrote = capsys.readouterr()
    assert wrote.out == dry.out
    new = stack.read_text()
    # Comments, settings and the TFJob are kept byte for byte.
    for line in [*STACK.splitlines()[:16], "    - file: job.yaml", "  # after the jobs"]:
        assert line in new.splitlines()
    jobs = yaml.safe_load(new)["config"]["trainjobs:jobs"]
    assert [j.get("kind", "file") for j in jobs] == ["TFJob", "TrainJob", "file"]
    assert jobs[1]["spec"]["runtimeRef"]["name"] == "jax-distributed"
    kinds = [d["kind"] for d in yaml.safe_load_all((tmp_path / "job.yaml").read_text())]
    assert kinds == ["TrainingRuntime", "TrainJob"]
    # Converted again: nothing left to convert.
    assert main(["convert", str(stack)]) == 0
    assert capsys.readouterr().out == ""
