"""Helpers of the proofs that bring up a language example as an Automation API inline
program (tests/cluster/pulumi_up/test_languages_inline.py).

Each example declares the resources of examples/yaml-stack in a namespace of its own;
its runner (``automation.js``, ``automation``) prints ``RESULT <json>`` last.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import REPO, Project, render
from tests.provider.programs import stack_documents

__all__ = ["InlineProgram", "bring_up", "same_resources"]

YAML_PROGRAM = REPO / "examples" / "yaml-stack" / "Pulumi.yaml"


def same_resources(namespace: str, out: Path) -> Path:
    """The stack file declaring the YAML example's resources in ``namespace``."""
    program = yaml.safe_load(YAML_PROGRAM.read_text().replace("ml-yaml", namespace))
    out.write_text(yaml.safe_dump_all(stack_documents(program), sort_keys=False))
    return out


class InlineProgram:
    """``RUNNER COMMAND STACK`` with a Project's environment, the provider on PATH."""

    def __init__(self, project: Project, runner: Sequence[str], project_name: str) -> None:
        self.project = project
        self.runner = list(runner)
        self.project_name = project_name
        # pulumi-resource-trainjobs at the clone's root: the engine finds it on PATH.
        self.env = {**project.env, "PATH": f"{REPO}:{project.env['PATH']}"}

    def run(self, command: str, stack: str) -> Any:
        """Run the runner; its RESULT (a change summary) parsed."""
        proc = subprocess.run(
            [*self.runner, command, stack],
            cwd=self.project.workdir,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        output = proc.stdout[-6000:] + proc.stderr[-4000:]
        assert proc.returncode == 0, f"{self.runner} {command}: exit {proc.returncode}\n{output}"
        lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
        assert lines, output
        return json.loads(lines[-1].removeprefix("RESULT "))

    def export(self, stack: str) -> list[dict[str, Any]]:
        """The stack's resources (the inline program's state is in the Project's backend)."""
        name = f"organization/{self.project_name}/{stack}"
        proc = subprocess.run(
            ["pulumi", "stack", "export", "--stack", name],
            cwd=self.project.root,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        resources: list[dict[str, Any]] = json.loads(proc.stdout)["deployment"].get("resources")
        return resources or []


def bring_up(
    cluster: ControlPlane, program: InlineProgram, namespace: str, stack: str, workdir: Path
) -> Iterator[list[dict[str, Any]]]:
    """Make ``namespace``, bring the program up, yield what render prints for the same
    resources; destroy it (every resource deleted) and the namespace after."""
    cluster.kubectl("create", "namespace", namespace)
    rendered = render(same_resources(namespace, workdir / "same-resources.yaml"))
    try:
        program.run("up", stack)
        yield rendered
    finally:
        destroyed = program.run("destroy", stack)
        cluster.kubectl("delete", "namespace", namespace, "--wait=false")
        assert set(destroyed) <= {"delete"}, destroyed
