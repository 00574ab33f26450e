"""Rule 6 of issue 14: what a newcomer trips over on a fresh machine.

``-q`` prints only errors; a reader that goes away (``trainjobs render … | head``)
ends the command quietly with exit 0, in a fresh interpreter as a shell runs it; a
clone folder named ``trainjobs`` does not shadow the command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.harness import TreeState, assert_bounded, run_cli
from tests.hostile.jobs import JOB
from tests.support.paths import ROOT, STACKS

"""A job that renders with warnings (no resource requests, no TTL)."""


@pytest.mark.parametrize(
    "argv",
    [
        ["render", "job.yaml", "-q"],
        ["render", "job.yaml", "-q", "-o", "out"],
        ["check", "job.yaml", "-q"],
        ["graph", "job.yaml", "-q", "-o", "g.mmd"],
    ],
    ids=["render", "render-o", "check", "graph-o"],
)
def test_quiet_prints_no_warnings(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    loud = run_cli([a for a in argv if a != "-q"], tmp_path)
    assert "warning:" in loud.stderr + loud.stdout  # the job does warn
    for leftover in ("out", "g.mmd"):
        path = tmp_path / leftover
        if path.is_dir():
            for child in path.iterdir():
                child.unlink()
            path.rmdir()
        path.unlink(missing_ok=True)
    outcome = run_cli(argv, tmp_path)
    assert_bounded(outcome)
    assert outcome.code == 0
    assert outcome.stderr == ""
    if "-o" in argv or argv[0] == "check":
        assert outcome.stdout == ""


DEMO = str(STACKS / "Pulumi.demo.yaml")


@pytest.mark.parametrize(
    "argv",
    [
        ["render", DEMO],
        ["check", DEMO],
        ["graph", DEMO],
        ["frameworks"],
        ["crds"],
        ["check", "--list-rules"],
        ["diff", DEMO + ".missing", DEMO + ".missing"],
    ],
    ids=["render", "check", "graph", "frameworks", "crds", "list-rules", "diff-error"],
)
def test_a_reader_that_went_away_ends_the_command_quietly(argv: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # `| head` that has already exited
    try:
        done = subprocess.run(
            [sys.executable, "-m", "trainjobs", *argv],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    if argv[0] == "diff":  # bad input still says so, on stderr, and exits 2
        assert done.returncode == 2 and "Traceback" not in done.stderr
        return
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_a_clone_folder_named_trainjobs_does_not_shadow_the_command(tmp_path: Path) -> None:
    clone = tmp_path / "trainjobs"
    clone.mkdir()
    # The clone's root as a user has it: the Pulumi program beside the package.
    (clone / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    (clone / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (clone / "trainjobs").symlink_to(ROOT / "trainjobs")
    before = TreeState.of(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "trainjobs", "frameworks"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("FRAMEWORK"), done.stdout + done.stderr
    assert before.changes(TreeState.of(tmp_path)) == []
