"""The Pulumi resource graph (type, name, parent) of every stack and example program.

A URN is type + name + parent chain; when it changes, Pulumi deletes the old
resource and creates a new one — for a Pod that is a restarted training job. So
every change to these snapshots must be read in review: a changed line for a
Pod or a custom resource means running jobs would be replaced (unless an alias
keeps the old URN).
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.support.paths import example_programs, stack_files
from tests.support.pulumi_harness import Registered, run_program
from tests.test_parity import _program_cases, job_files_outside_programs
from trainjobs.components import program, stack_from_file
from trainjobs.k8s.yamlio import load_all


def _graph(resources: list[Registered]) -> str:
    def parent(urn: str) -> str:
        type_ = urn.split("::")[2].rsplit("$", 1)[-1] if urn else ""
        if type_ in ("", "pulumi:pulumi:Stack"):
            return "(stack)"
        return f"{type_}::{urn.rsplit('::', 1)[-1]}"

    def aliases(r: Registered) -> str:
        names = r.options.get("aliases") or []
        return f"  (was: {', '.join(names)})" if names else ""

    lines = sorted(f"{r.type}::{r.name}  <-  {parent(r.parent)}{aliases(r)}" for r in resources)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("path", stack_files(), ids=lambda p: p.stem)
def test_stack_resource_graph(
    path: Path, monkeypatch: pytest.MonkeyPatch, yaml_snapshot: SnapshotAssertion
) -> None:
    monkeypatch.setenv("TRAINJOBS_STACK_DIR", str(path.parent))
    config = load_all(path.read_text())[0]["config"]
    resources = run_program(program, config, stack=path.stem.split(".", 1)[1])
    assert _graph(resources) == yaml_snapshot


@pytest.mark.parametrize(
    ("folder", "target"), _program_cases(), ids=lambda v: v.name if isinstance(v, Path) else v
)
def test_example_resource_graph(
    folder: Path, target: str, yaml_snapshot: SnapshotAssertion
) -> None:
    project = f"trainjobs-example-{folder.name}"
    resources = run_program(
        lambda: runpy.run_path(str(folder / "__main__.py")),
        {f"{project}:target": target},
        project=project,
    )
    assert _graph(resources) == yaml_snapshot


def test_every_example_program_has_a_graph() -> None:
    assert {f for f, _ in _program_cases()} == set(example_programs())


@pytest.mark.parametrize(
    ("path", "target"),
    job_files_outside_programs(),
    ids=lambda v: f"{v.parent.name}-{v.stem}" if isinstance(v, Path) else v,
)
def test_job_file_resource_graph(path: Path, target: str, yaml_snapshot: SnapshotAssertion) -> None:
    """A job file outside the programs, as a program registers it with ``stack_from_file``."""
    resources = run_program(
        lambda: stack_from_file(path, target=target), project=f"trainjobs-{path.parent.name}"
    )
    assert _graph(resources) == yaml_snapshot
