"""The CLI as a user meets it: subprocess runs, exit codes, stdout/stderr, files written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES, ROOT, STACKS
from trainjobs.cli import main
from trainjobs.frameworks import REGISTRY
from trainjobs.k8s.yamlio import load_all


def trainjobs(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainjobs", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _env_of(stream: str, pod: str) -> list[dict[str, str]]:
    for doc in load_all(stream):
        if doc["kind"] == "Pod" and doc["metadata"]["name"] == pod:
            env: list[dict[str, str]] = doc["spec"]["containers"][0]["env"]
            return env
    raise AssertionError(f"no pod {pod}")


def test_render_tf_worked_example_with_pods_target() -> None:
    result = trainjobs("render", "examples/tf-mnist/tfjob.yaml", "--target", "pods")
    assert result.returncode == 0, result.stderr
    assert _env_of(result.stdout, "mnist-worker-1") == [
        {
            "name": "TF_CONFIG",
            "value": '{"cluster":{"chief":["mnist-chief-0.kubeflow.svc:2222"],'
            '"ps":["mnist-ps-0.kubeflow.svc:2222"],"worker":["mnist-worker-0.kubeflow.svc:2222",'
            '"mnist-worker-1.kubeflow.svc:2222"]},"task":{"type":"worker","index":1},'
            '"environment":"cloud"}',
        }
    ]


def test_render_pytorch_worked_example_with_pods_target(tmp_path: Path) -> None:
    job = tmp_path / "mnist.yaml"
    job.write_text(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"
        "metadata: {name: mnist, namespace: kubeflow}\n"
        "spec:\n  pytorchReplicaSpecs:\n"
        "    Master: {replicas: 1, template: {spec: {containers: [{name: pytorch, image: a:1}]}}}\n"
        "    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: a:1}]}}}\n"
    )
    result = trainjobs("render", str(job), "--target", "pods")
    assert result.returncode == 0, result.stderr
    assert [f"{e['name']}={e['value']}" for e in _env_of(result.stdout, "mnist-worker-1")] == [
        "PYTHONUNBUFFERED=1",
        "MASTER_PORT=23456",
        "PET_MASTER_PORT=23456",
        "MASTER_ADDR=mnist-master-0",
        "PET_MASTER_ADDR=mnist-master-0",
        "WORLD_SIZE=3",
        "RANK=2",
        "PET_NODE_RANK=2",
        "PET_NPROC_PER_NODE=auto",
        "PET_NNODES=3",
    ]


def test_render_to_directory_prints_table(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = trainjobs("render", "stacks/Pulumi.demo.yaml", "-o", str(out))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["KIND", "NAMESPACE", "NAME"]
    assert lines[1].split() == ["Namespace", "-", "training"]
    assert lines[-1] == f"wrote {len(list(out.glob('*.yaml')))} objects to {out}/"
    assert sorted(p.name for p in out.iterdir())[:2] == [
        ".trainjobs-written",
        "0000-namespace-training.yaml",
    ]


def test_check_summary() -> None:
    result = trainjobs("check", "stacks/Pulumi.demo.yaml")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith("ok: 3 jobs, ")


def test_malformed_job_exits_2_with_paths_and_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: Mnist_1}\n"
        "spec:\n  tfReplicaSpecs:\n    Worker:\n      replicas: -2\n      template:\n"
        "        spec: {containers: [{name: tensorflow, image: 'tf:1'}]}\n"
    )
    out = tmp_path / "out"
    result = trainjobs("render", str(bad), "-o", str(out))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert not out.exists()
    assert result.stderr.splitlines() == [
        f"error: {bad}: jobs[0].spec.tfReplicaSpecs.Worker.replicas: input should be greater "
        "than or equal to 0 (got -2); fix: change the number to fit the bound "
        # The CRD has no minimum and the TFJob webhook no replica rule.
        "[the Training Operator v1.9.4 controller fails the job (no webhook checks this)]",
        "1 error; nothing was written",
    ]


def test_template_schema_and_name_errors_are_all_reported(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: Mnist_1}\n"
        "spec:\n  tfReplicaSpecs:\n    Worker:\n      template:\n"
        "        spec: {containers: [{name: tensorflow, image: 'tf:1', comand: [python]}]}\n"
    )
    result = trainjobs("check", str(bad))
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"error: {bad}: jobs[0].spec.tfReplicaSpecs.Worker.template.spec.containers[0]"
        ".comand: unknown field (did you mean 'command'?) (got ['python']); "
        "fix: see the Kubernetes PodSpec reference for this field "
        "[rejected by the CRD schema (openAPIV3Schema)]"
    )
    assert lines[1].startswith(
        f"error: {bad}: jobs[0].metadata.name: the job name must be a DNS-1035"
    )
    assert lines[-1] == "2 errors"  # check writes nothing, so it does not say so


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("a: [1\n", "invalid YAML at line 2"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", "no framework handles"),
        ("- 1\n- 2\n", "a job must be a mapping"),
        ("", "holds no YAML documents"),
    ],
)
def test_bad_input_kinds_exit_2(tmp_path: Path, content: str, fragment: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    result = trainjobs("render", str(bad))
    assert result.returncode == 2
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_failed_render_leaves_existing_directory_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.yaml").write_text("old\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {}\n")
    assert main(["render", str(bad), "-o", str(out)]) == 2
    assert [p.name for p in out.iterdir()] == ["keep.yaml"]
    assert (out / "keep.yaml").read_text() == "old\n"


def test_render_replaces_only_its_own_earlier_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["render", str(STACKS / "Pulumi.demo.yaml"), "-o", str(out), "-q"]) == 0
    assert main(["render", str(EXAMPLES / "tf-mnist" / "tfjob.yaml"), "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        ".trainjobs-written",
        "0000-tfjob-kubeflow-mnist.yaml",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_render_refuses_a_directory_holding_other_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.yaml").write_text("old\n")
    job = str(EXAMPLES / "tf-mnist" / "tfjob.yaml")
    assert main(["render", job, "-o", str(out)]) == 2
    assert "holds files trainjobs did not write: stale.yaml" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["stale.yaml"]
    assert main(["render", job, "-o", str(out), "--allow-other-files", "-q"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        ".trainjobs-written",
        "0000-tfjob-kubeflow-mnist.yaml",
        "stale.yaml",
    ]


def test_render_writes_an_object_several_paths_render_alike_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both stacks create Namespace training, alike (and the volcano stack kubeflow too):
    # in one output it was written twice, and `trainjobs diff` then refused that output.
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    demo, volcano = "stacks/Pulumi.demo.yaml", "stacks/Pulumi.gang-volcano.yaml"
    assert main(["render", demo, volcano, "-o", str(out), "-q"]) == 0
    written = [line.split()[-1] for line in (out / ".trainjobs-written").read_text().splitlines()]
    assert [n for n in written if "-namespace-" in n] == [
        "0000-namespace-training.yaml",
        "0019-namespace-kubeflow.yaml",
    ]
    assert main(["diff", str(out), str(out), "-q"]) == 0
    job = "examples/tf-mnist/tfjob.yaml"
    capsys.readouterr()
    assert main(["render", job]) == 0
    once = capsys.readouterr().out
    assert main(["render", job, job]) == 0
    assert capsys.readouterr().out == once


def test_render_refuses_paths_that_render_one_object_differently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The demo and gpu stacks both run job training/pytorch-ddp, with other options:
    # applied twice, the last version of each Pod would win.
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    demo, gpu = "stacks/Pulumi.demo.yaml", "stacks/Pulumi.gpu.yaml"
    assert main(["render", demo, gpu, "-o", str(out), "-q"]) == 2
    (error, summary) = capsys.readouterr().err.splitlines()
    assert error.startswith(
        f"error: {gpu}: renders 5 objects that {demo} renders otherwise; one output cannot "
        "hold two versions of an object (got ['Pod training/pytorch-ddp-master-0', "
    )
    assert error.endswith(
        "fix: render each PATH on its own (an output per stack), or declare the object "
        "alike in both, or in one of them [trainjobs (not a cluster rule)]"
    )
    assert summary == "1 error; nothing was written"
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "flag", "how"),
    [
        (["render", "JOB", "--allow-other-files"], "--allow-other-files", "without -o"),
        (["render", "JOB", "-o", "-", "--allow-other-files"], "--allow-other-files", "with -o -"),
        (["graph", "JOB", "--overwrite"], "--overwrite", "without -o"),
        (["crds", "--overwrite"], "--overwrite", "without -o"),
    ],
)
def test_an_option_about_written_files_is_refused_when_nothing_is_written(
    args: list[str], flag: str, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    job = str(EXAMPLES / "tf-mnist" / "tfjob.yaml")
    assert main([job if a == "JOB" else a for a in args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"error: {flag} is about the files -o writes; {how}," in captured.err
    assert f"leave {flag} out" in captured.err


def test_unknown_k8s_version(tmp_path: Path) -> None:
    result = trainjobs("check", str(STACKS / "Pulumi.demo.yaml"), "--k8s-version", "1.5")
    assert result.returncode == 2
    assert "no schema is bundled for this Kubernetes version (got '1.5')" in result.stderr
    # The option given is named, not the stack file's k8sVersion, which says "1.32".
    assert "argument --k8s-version: no schema is bundled" in result.stderr
    assert "Pulumi.demo.yaml: k8sVersion" not in result.stderr
    for command in ("graph", "edl-scale"):
        other = trainjobs(command, str(STACKS / "Pulumi.demo.yaml"), "--k8s-version", "1.5")
        assert other.returncode == 2
        assert "argument --k8s-version: no schema is bundled" in other.stderr, command


def test_frameworks_table_shows_targets_operator_and_legacy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["frameworks"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    # Columns are padded to the widest cell, so compare cells, not whole lines.
    table, _, rules = out.partition("\n\n")
    rows = [re.split(r"\s{2,}", line) for line in table.splitlines()]
    assert rows[0] == ["FRAMEWORK", "KIND", "TARGETS", "OPERATOR", "NOTE"]
    # The README promises each framework's success rule here.
    assert rules.startswith("When a job succeeds")
    assert "  xgboost" in rules and "when the Master succeeds" in rules
    by_name = {row[0]: row[1:] for row in rows[1:]}
    assert sorted(by_name) == sorted(fw.name for fw in REGISTRY)
    v194, v181 = "Training Operator v1.9.4", "Training Operator v1.8.1"
    assert by_name["tensorflow"] == ["kubeflow.org/v1 TFJob", "operator,pods", v194]
    assert by_name["pytorch"] == ["kubeflow.org/v1 PyTorchJob", "operator,pods,trainer", v194]
    assert by_name["xgboost"] == ["kubeflow.org/v1 XGBoostJob", "operator,pods", v194]
    assert by_name["paddle"] == ["kubeflow.org/v1 PaddleJob", "operator,pods", v194]
    assert by_name["jax"] == ["kubeflow.org/v1 JAXJob", "operator,pods", v194]
    assert by_name["mxnet"] == ["kubeflow.org/v1 MXJob", "operator,pods", v181, "legacy"]


def test_render_prints_the_operator_installs_of_a_stack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = ROOT / "stacks" / "Pulumi.training-operator.yaml"
    assert main(["render", str(stack), "-o", str(tmp_path / "out")]) == 0
    table = capsys.readouterr().out
    for row in [
        "CustomResourceDefinition        -          tfjobs.kubeflow.org",
        "Deployment                      kubeflow   training-operator",
        "ValidatingWebhookConfiguration  -          validator.training-operator.kubeflow.org",
        "TFJob                           kubeflow   mnist",
    ]:
        assert row in table.splitlines()


def test_render_to_dash_writes_the_stream_to_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `-o -` is stdout, as for most tools that write files: no folder named "-".
    monkeypatch.chdir(tmp_path)
    job = str(EXAMPLES / "tf-mnist" / "tfjob.yaml")
    assert main(["render", job, "-o", "-"]) == 0
    dashed = capsys.readouterr().out
    assert main(["render", job]) == 0
    assert dashed == capsys.readouterr().out
    assert "kind: TFJob" in dashed
    assert list(tmp_path.iterdir()) == []


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_help_lists_each_command_in_order_with_the_first_line_of_its_docstring(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # no wrapping (a long name still has its own line)
    listed = _help([], capsys).partition("COMMAND\n")[2].partition("\n\n")[0]
    rows = re.findall(r"^    (\S+)\s+(.+)$", listed, re.MULTILINE)
    assert [name for name, _ in rows] == [
        "render",
        "check",
        "graph",
        "run-local",
        "diff",
        "preview",
        "frameworks",
        "crds",
        "edl-scale",
        "sandbox",
        "simulate",
        "convert",
    ]
    assert rows[1] == ("check", "run every check; exit 0 when clean")
    assert rows[6] == ("frameworks", "list the frameworks and their targets")


def test_a_commands_description_is_the_rest_of_its_docstring_as_one_paragraph(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")
    assert (
        "\n\nRender and run every check: schemas, names, operator rules and the rule set "
        "(--list-rules). Errors exit 2; warnings and advice print and exit 0.\n\n"
    ) in _help(["check"], capsys)
    # edl-scale's raw formatter (for its epilog) too prints the docstring as one line.
    assert (
        "\n\nRun one round of the EDL autoscaler over the TrainingJobs in PATH and print each "
        "job's trainers now and the count EDL would set.\n\n"
    ) in _help(["edl-scale"], capsys)
    # A one-line docstring: no description at all.
    assert _help(["frameworks"], capsys).startswith("usage: trainjobs frameworks [-h]\n\noptions:")
