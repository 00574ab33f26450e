"""The hostile-input harness measures what it claims: exit code, output, CPU, tree changes."""

from __future__ import annotations

from pathlib import Path

from tests.hostile.harness import TreeState, assert_refused, run_cli
from tests.support.paths import ROOT


def test_a_valid_job_renders_in_the_child(tmp_path: Path) -> None:
    outcome = run_cli(["render", str(ROOT / "examples/tf-mnist/tfjob.yaml"), "-q"], tmp_path)
    assert outcome.code == 0, outcome.stderr
    assert "kind: TFJob" in outcome.stdout
    assert 0 < outcome.cpu_seconds < 5


def test_a_bad_job_is_refused_with_its_field_path(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: x}\nspec: 3\n")
    outcome = run_cli(["render", "job.yaml"], tmp_path)
    assert_refused(outcome, "job.yaml", "spec")


def test_tree_state_sees_added_removed_and_changed_files(tmp_path: Path) -> None:
    (tmp_path / "keep").write_text("a")
    (tmp_path / "gone").write_text("b")
    (tmp_path / "edit").write_text("c")
    before = TreeState.of(tmp_path)
    (tmp_path / "gone").unlink()
    (tmp_path / "edit").write_text("C")
    (tmp_path / "new").write_text("d")
    assert before.changes(TreeState.of(tmp_path)) == ["edit", "gone", "new"]
