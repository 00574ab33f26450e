"""The limits module, the Safety page's table (docs/safety.md) and the variables that
raise them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.hostile.harness import assert_refused, run_cli
from tests.support.paths import ROOT
from trainjobs import limits
from trainjobs.spec.load import FILE_ROOTS_ENV


def _safety_section() -> str:
    return (ROOT / "docs" / "safety.md").read_text()


@pytest.mark.parametrize("limit", limits.ALL, ids=lambda limit: limit.env)
def test_the_safety_page_lists_each_limit_with_its_default(limit: limits.Limit) -> None:
    rows = [line for line in _safety_section().splitlines() if f"`{limit.env}`" in line]
    assert rows, f"docs/safety.md does not list {limit.env}"
    assert re.search(rf"\| {limit.default}\b", rows[0]), rows[0]


def test_the_safety_page_names_where_file_may_point() -> None:
    section = _safety_section()
    assert "## Where `file:` may point" in section
    assert FILE_ROOTS_ENV in section


def test_a_limit_is_read_when_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert limits.FILES.value() == limits.FILES.default
    monkeypatch.setenv(limits.FILES.env, "7")
    assert limits.FILES.value() == 7
    monkeypatch.setenv(limits.FILES.env, "-1")
    with pytest.raises(limits.LimitSettingError, match="positive whole number"):
        limits.FILES.value()


def test_raising_a_limit_lets_the_input_through(tmp_path: Path) -> None:
    job = (ROOT / "examples" / "tf-mnist" / "tfjob.yaml").read_text()
    (tmp_path / "job.yaml").write_text(job.replace("replicas: 2", "replicas: 300"))
    env = {limits.LOCAL_REPLICAS.env: "10"}
    refused = run_cli(["run-local", "--timeout", "1", "job.yaml"], tmp_path, env=env)
    assert_refused(refused, limits.LOCAL_REPLICAS.env, "at most 10 ")
    rendered = run_cli(["render", "-q", "job.yaml"], tmp_path, env={limits.POD_COUNT.env: "400"})
    assert rendered.code == 0, rendered.stderr


def test_file_roots_allow_a_folder_outside_the_repository(tmp_path: Path) -> None:
    job = (ROOT / "examples" / "tf-mnist" / "tfjob.yaml").read_text()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "job.yaml").write_text(job)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "Pulumi.s.yaml").write_text(
        "config:\n  trainjobs:jobs:\n    - file: ../shared/job.yaml\n"
    )
    argv = ["render", "-q", "Pulumi.s.yaml"]
    assert_refused(run_cli(argv, tmp_path / "repo"), "outside", FILE_ROOTS_ENV)
    allowed = run_cli(argv, tmp_path / "repo", env={FILE_ROOTS_ENV: str(tmp_path / "shared")})
    assert allowed.code == 0, allowed.stderr
    assert "name: mnist" in allowed.stdout


def test_a_stack_in_a_subfolder_reads_files_anywhere_in_its_repository(tmp_path: Path) -> None:
    job = (ROOT / "examples" / "tf-mnist" / "tfjob.yaml").read_text()
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "job.yml").write_text(job)
    (tmp_path / "stacks").mkdir()
    absolute = tmp_path / "examples" / "job.yml"
    (tmp_path / "stacks" / "Pulumi.s.yaml").write_text(
        f"config:\n  trainjobs:jobs:\n    - file: ../examples/job.yml\n    - file: {absolute}\n"
    )
    outcome = run_cli(["check", "-q", "stacks/Pulumi.s.yaml"], tmp_path)
    # Two copies of one job: the files were read (a duplicate name), none refused as outside.
    assert "outside" not in outcome.stderr
    assert "already renders" in outcome.stderr, outcome.stderr
