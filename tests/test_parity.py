"""The Pulumi program registers exactly the rendered manifests, for every stack and example."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import example_programs, stack_files
from tests.support.pulumi_harness import manifests_of, run_program
from trainjobs.check import run
from trainjobs.components import program
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import load_path


def _expected(path: Path, target: str | None = None) -> list[dict[str, Any]]:
    return _by_identity(run(load_path(path), target=target).manifests)  # type: ignore[arg-type]


def _by_identity(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Registration order is Pulumi's business (dependencies decide apply order)."""

    def key(m: dict[str, Any]) -> tuple[str, str, str, str]:
        meta = m["metadata"]
        return (m["apiVersion"], m["kind"], meta.get("namespace", ""), meta["name"])

    return sorted(manifests, key=key)


@pytest.mark.parametrize("path", stack_files(), ids=lambda p: p.name)
def test_stack_program_registers_the_rendered_manifests(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAINJOBS_STACK_DIR", str(path.parent))
    config = load_all(path.read_text())[0]["config"]
    registered = manifests_of(run_program(program, config, stack=path.stem.split(".", 1)[1]))
    assert _by_identity(registered) == _expected(path)


@pytest.mark.parametrize("folder", example_programs(), ids=lambda p: p.name)
@pytest.mark.parametrize("target", ["operator", "pods"])
def test_example_program_registers_the_rendered_manifests(folder: Path, target: str) -> None:
    job_file = next(p for p in folder.glob("*.yaml") if not p.name.startswith("Pulumi"))
    stack = load_path(job_file)
    if not all(target in e.framework.targets for e in stack.jobs):
        pytest.skip(f"{folder.name} has no {target} target")  # not a result: no such output
    project = f"trainjobs-example-{folder.name}"
    registered = manifests_of(
        run_program(
            lambda: runpy.run_path(str(folder / "__main__.py")),
            {f"{project}:target": target},
            project=project,
        )
    )
    assert _by_identity(registered) == _expected(job_file, target)
