"""The Pulumi program registers exactly the rendered manifests, for every stack and example."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import example_job_files, example_programs, stack_files
from tests.support.pulumi_harness import as_registered, manifests_of, run_program
from trainjobs.check import run
from trainjobs.components import program
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import load_path


def _expected(
    path: Path, target: str | None = None, project: str = "trainjobs", stack: str = "test"
) -> list[dict[str, Any]]:
    """The rendered objects as the components must register them: generated values
    substituted, the lifecycle annotations the render decided and the stack's owner label
    added."""
    objects = run(load_path(path), target=target).objects  # type: ignore[arg-type]
    return _by_identity(
        [as_registered(o.manifest, o.lifecycle.annotations(), project, stack) for o in objects]
    )


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
    stack = path.stem.split(".", 1)[1]
    registered = manifests_of(run_program(program, config, stack=stack))
    assert _by_identity(registered) == _expected(path, stack=stack)


def _input_of(folder: Path) -> Path:
    (job_file,) = [p for p in folder.glob("*.yaml") if not p.name.startswith("Pulumi")]
    return job_file


def _program_cases() -> list[tuple[Path, str]]:
    """Every example program on every target all of its jobs support."""
    cases = []
    for folder in example_programs():
        stack = load_path(_input_of(folder))
        targets = set.intersection(*(set(e.framework.targets) for e in stack.jobs))
        cases += [(folder, t) for t in sorted(targets)]
    return cases


def job_files_outside_programs() -> list[tuple[Path, str]]:
    """Every example job file that is no Pulumi program (the run-local examples), on each
    target all of its jobs support; a stack config lists such a file under
    ``trainjobs:jobs`` to apply it."""
    programs = set(example_programs())
    cases = []
    for path in example_job_files():
        if path.parent in programs:
            continue
        stack = load_path(path)
        targets = set.intersection(*(set(e.framework.targets) for e in stack.jobs))
        cases += [(path, t) for t in sorted(targets)]
    return cases


def test_every_example_program_has_exactly_one_input_file() -> None:
    for folder in example_programs():
        inputs = [p.name for p in folder.glob("*.yaml") if not p.name.startswith("Pulumi")]
        assert len(inputs) == 1, f"{folder.name}: {inputs} (other YAML belongs under data/)"


@pytest.mark.parametrize(
    ("folder", "target"), _program_cases(), ids=lambda v: v.name if isinstance(v, Path) else v
)
def test_example_program_registers_the_rendered_manifests(folder: Path, target: str) -> None:
    job_file = _input_of(folder)
    project = f"trainjobs-example-{folder.name}"
    registered = manifests_of(
        run_program(
            lambda: runpy.run_path(str(folder / "__main__.py")),
            {f"{project}:target": target},
            project=project,
        )
    )
    assert _by_identity(registered) == _expected(job_file, target, project)
