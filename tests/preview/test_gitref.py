"""--against REF: a stack and the files it references, read with `git show` at a ref."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES
from trainjobs.errors import SpecError
from trainjobs.preview.compare import diff_against
from trainjobs.preview.gitref import GitError, referenced_files, render_at

STACK = """config:
  trainjobs:target: pods
  trainjobs:namespaces: [kubeflow]
  trainjobs:jobs:
    - file: ../jobs/mnist.yaml
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a stack that references a job file, committed once."""
    (tmp_path / "stacks").mkdir()
    (tmp_path / "jobs").mkdir()
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(STACK)
    (tmp_path / "jobs" / "mnist.yaml").write_text(
        (EXAMPLES / "tf-mnist" / "tfjob.yaml").read_text()
    )
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def test_a_change_in_a_referenced_file_shows_against_head(repo: Path) -> None:
    job = repo / "jobs" / "mnist.yaml"
    job.write_text(job.read_text().replace("summaries:1.0", "summaries:2.0"))
    plan = diff_against(repo / "stacks" / "Pulumi.dev.yaml", "HEAD")
    assert plan.old_label == "HEAD:stacks/Pulumi.dev.yaml"
    assert plan.counts() == {"create": 0, "update": 0, "replace": 4, "delete": 0, "same": 5}
    pod = next(o for o in plan.objects if o.action == "replace")
    assert pod.old is not None and pod.old.source == "HEAD:jobs/mnist.yaml"


def test_the_working_tree_is_untouched_and_nothing_changes_at_head(repo: Path) -> None:
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    plan = diff_against(repo / "stacks" / "Pulumi.dev.yaml", "HEAD")
    assert not plan.changed
    after = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before


def test_a_file_new_since_the_ref_is_all_creates(repo: Path) -> None:
    (repo / "stacks" / "Pulumi.new.yaml").write_text(STACK)
    plan = diff_against(repo / "stacks" / "Pulumi.new.yaml", "HEAD")
    assert plan.old_label == "HEAD:stacks/Pulumi.new.yaml (not in HEAD)"
    assert plan.counts()["create"] == 9


def test_a_broken_version_at_the_ref_names_the_ref(repo: Path) -> None:
    job = repo / "jobs" / "mnist.yaml"
    good = job.read_text()
    job.write_text("a: [\n")
    _git(repo, "commit", "-q", "-am", "broken")
    job.write_text(good)
    with pytest.raises(SpecError) as caught:
        render_at(repo / "stacks" / "Pulumi.dev.yaml", "HEAD")
    assert caught.value.findings[0].source == "HEAD:jobs/mnist.yaml"


def test_an_unknown_ref_and_a_folder_outside_git(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with pytest.raises(GitError, match="'nope' is not a commit, branch or tag"):
        render_at(repo / "stacks" / "Pulumi.dev.yaml", "nope")
    with pytest.raises(GitError, match="'--output=x' is not a commit"):
        render_at(repo / "stacks" / "Pulumi.dev.yaml", "--output=x")
    outside = tmp_path_factory.mktemp("plain") / "job.yaml"
    outside.write_text("a: 1\n")
    with pytest.raises(GitError, match="is not in a git repository"):
        render_at(outside, "HEAD")


def test_referenced_files_of_stacks_and_job_files() -> None:
    assert referenced_files(STACK, "stacks/Pulumi.dev.yaml") == ["jobs/mnist.yaml"]
    bare = "config:\n  jobs:\n    - file: a.yaml\n    - {apiVersion: v1, kind: X}\n"
    assert referenced_files(bare, "s/Pulumi.x.yaml") == ["s/a.yaml"]
    platform = "config:\n  trainjobs:backends: [{file: redis.yaml}]\n  queues: [{file: q.yaml}]\n"
    assert referenced_files(platform, "s/Pulumi.x.yaml") == ["s/redis.yaml", "s/q.yaml"]
    assert referenced_files("file: ../b.yaml\n---\nfile: c.yaml\n", "d/jobs.yaml") == [
        "b.yaml",
        "d/c.yaml",
    ]
    assert referenced_files("a: [\n", "x.yaml") == []
