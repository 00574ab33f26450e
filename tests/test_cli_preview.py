"""`trainjobs diff` and `trainjobs preview` as users meet them: exit codes, words, JSON, colour."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.support.paths import EXAMPLES, ROOT
from trainjobs.cli import main
from trainjobs.preview.jsonout import schema


def trainjobs(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainjobs", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the tf-mnist example as its own Pulumi project."""
    (tmp_path / "Pulumi.yaml").write_text("name: mnist\nruntime: python\n")
    (tmp_path / "tfjob.yaml").write_text((EXAMPLES / "tf-mnist" / "tfjob.yaml").read_text())
    return tmp_path


def test_editing_the_image_then_preview_shows_the_replacements_in_words(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = project / "tfjob.yaml"
    assert main(["preview", str(job), "--target", "pods"]) == 1
    assert "job mnist is new: creates 4 Services and 4 Pods" in capsys.readouterr().out
    assert (project / ".trainjobs" / "tfjob" / "last.yaml").is_file()
    assert main(["preview", str(job), "--target", "pods"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "    no changes. 8 unchanged"
    job.write_text(job.read_text().replace("summaries:1.0", "summaries:1.1"))
    edited = trainjobs("preview", "tfjob.yaml", "--target", "pods", cwd=project)
    assert edited.returncode == 1, edited.stderr
    assert (
        "  changing the image of job mnist recreates 4 Pods; "
        "the job restarts from its last checkpoint\n"
    ) in edited.stdout
    assert "+-  Pod   kubeflow   mnist-worker-1  replace  spec.containers[0].image" in edited.stdout
    assert "-    image: kubeflow/tf-mnist-with-summaries:1.0\n" in edited.stdout
    assert "\x1b[" not in edited.stdout  # not a terminal: no colour


def test_colour_when_forced_and_never_with_no_color(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    job = project / "tfjob.yaml"
    assert main(["preview", str(job), "-q"]) == 1
    job.write_text(job.read_text().replace("replicas: 2", "replicas: 3"))
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert main(["preview", str(job), "--state-dir", str(project / "a")]) == 1
    assert "\x1b[" in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["preview", str(job), "--state-dir", str(project / "b")]) == 1
    assert "\x1b[" not in capsys.readouterr().out


def test_diff_of_identical_inputs_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "tf-mnist" / "tfjob.yaml")
    assert main(["diff", path, path]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "    no changes. 1 unchanged"


def test_diff_of_two_render_directories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "job.yaml"
    job.write_text((EXAMPLES / "tf-mnist" / "tfjob.yaml").read_text())
    assert main(["render", str(job), "--target", "pods", "-o", str(tmp_path / "old"), "-q"]) == 0
    job.write_text(job.read_text().replace("summaries:1.0", "summaries:1.1"))
    assert main(["render", str(job), "--target", "pods", "-o", str(tmp_path / "new"), "-q"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "new"), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(schema()).validate(document)
    assert document["plans"][0]["summary"]["replace"] == 4
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "new"), "-q"]) == 1
    assert capsys.readouterr().out == ""


def test_diff_against_a_git_ref(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "job.yaml"
    job.write_text((EXAMPLES / "pytorch-ddp" / "pytorchjob.yaml").read_text())
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=tmp_path, check=True)
    assert main(["diff", "--against", "HEAD", str(job), "--target", "pods"]) == 0
    job.write_text(job.read_text().replace("--epochs=10", "--epochs=20"))
    assert main(["diff", "--against", "HEAD", str(job), "--target", "pods", "--no-diff"]) == 1
    out = capsys.readouterr().out
    assert "changing the command of job pytorch-ddp recreates 4 Pods" in out
    assert "@@" not in out


def test_bad_input_exits_2_and_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: Bad_Name}\nspec: {}\n"
    )
    assert main(["preview", str(bad)]) == 2
    assert not (tmp_path / ".trainjobs").exists()
    assert main(["diff", str(bad)]) == 2
    err = capsys.readouterr().err
    assert (
        "error: diff takes two render outputs (OLD NEW), or stack files with --against REF" in err
    )
    stack = ROOT / "stacks" / "Pulumi.demo.yaml"
    assert main(["diff", str(stack), str(stack)]) == 2
    assert "not a Kubernetes object" in capsys.readouterr().err


def test_a_cluster_named_without_live_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without --live, "no changes" against the last preview read as "prod matches".
    job = str(project / "tfjob.yaml")
    assert main(["preview", job, "--context", "prod"]) == 2
    assert capsys.readouterr().err == (
        "error: --context chooses the cluster --live reads, and --live is not given; fix: add "
        "--live, or leave it out to compare with the last preview\n"
    )
    assert not (project / ".trainjobs").exists()
    assert main(["preview", job, "--kubeconfig", "k", "--context", "prod", "-q"]) == 2
    assert "--kubeconfig and --context choose the cluster" in capsys.readouterr().err


def test_check_and_render_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    stack = str(ROOT / "stacks" / "Pulumi.demo.yaml")
    assert main(["check", stack, "-q"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["check", stack, stack]) == 0
    assert capsys.readouterr().out.startswith("ok: 6 jobs")


@pytest.mark.parametrize("command", ["diff", "preview"])
def test_help_documents_the_exit_codes(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit codes: 0 no changes, 1 changes, 2 bad input" in text


def test_diff_reads_render_outputs_larger_than_an_input_file(tmp_path: Path) -> None:
    # Render outputs of large jobs are far bigger than the 4 MiB an input file may be
    # (a TFJob of 1,024 workers renders to 35 MB): diff holds them to RENDER_BYTES.
    from trainjobs.cli import main
    from trainjobs.limits import FILE_BYTES

    big = "x" * 1000
    docs = "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}, namespace: n}}\n"
        f"data: {{k: '{big}'}}\n"
        for i in range(FILE_BYTES.default // 1000 + 10)
    )
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(docs)
    new.write_text(docs)
    assert old.stat().st_size > FILE_BYTES.default
    assert main(["diff", str(old), str(new), "-q"]) == 0


def test_diff_of_changed_secrets_is_the_same_on_every_run(tmp_path: Path) -> None:
    # CI snapshot-tests and posts this output: a changed secret shows as changed, never
    # its value, and two runs over the same files print the same bytes.
    secret = (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns}\n"
        "data: {password: aHVudGVyMg==}\nstringData: {token: %s}\n"
    )
    (tmp_path / "old.yaml").write_text(secret % "tokOLD")
    (tmp_path / "new.yaml").write_text(secret % "tokNEW")
    runs = [
        trainjobs("diff", "old.yaml", "new.yaml", *flag, cwd=tmp_path)
        for flag in ([], [], ["--json"], ["--json"])
    ]
    assert [r.returncode for r in runs] == [1, 1, 1, 1]
    assert runs[0].stdout == runs[1].stdout and runs[2].stdout == runs[3].stdout
    for run in runs:
        assert "tokOLD" not in run.stdout and "tokNEW" not in run.stdout
        assert "aHVudGVyMg" not in run.stdout and "hunter2" not in run.stdout
    assert "-  token: <redacted:#2>\n+  token: <redacted:#3>\n" in runs[0].stdout
    assert "password: <redacted:#1>" in runs[0].stdout


def test_diff_of_redacted_renders_says_secrets_were_not_compared(tmp_path: Path) -> None:
    # `render -o` prints secrets as <redacted>: between two such renders a changed token
    # cannot be seen, and "no changes" alone would read as "the token is the same".
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\n"
        "spec:\n  containers:\n  - name: c\n    image: busybox:1.36\n"
        "    env: [{name: API_TOKEN, value: <redacted>}, {name: LR, value: '%s'}]\n"
    )
    (tmp_path / "old.yaml").write_text(pod % "0.1")
    (tmp_path / "new.yaml").write_text(pod % "0.1")
    text = trainjobs("diff", "old.yaml", "new.yaml", cwd=tmp_path)
    assert text.returncode == 0
    assert (
        "note: 1 secret value reads <redacted> (a render made without --show-secrets): "
        "a change to it cannot be seen; render both sides with --show-secrets to compare "
        "secrets (diff never prints them)"
    ) in text.stdout
    as_json = trainjobs("diff", "old.yaml", "new.yaml", "--json", cwd=tmp_path)
    document = json.loads(as_json.stdout)
    jsonschema.validate(document, schema())
    assert document["plans"][0]["uncomparedSecrets"] == 1
    (tmp_path / "new.yaml").write_text((pod % "0.1").replace("<redacted>", "tok"))
    shown = trainjobs("diff", "old.yaml", "new.yaml", "--json", cwd=tmp_path)
    assert json.loads(shown.stdout)["plans"][0]["uncomparedSecrets"] == 0
