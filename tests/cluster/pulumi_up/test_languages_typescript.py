"""examples/typescript-platform brought up by the Automation API (an inline program).

The Node.js SDK (npm ``@pulumi/pulumi``, pinned by the example's package-lock) serves the
program's language runtime itself, so the real engine runs it with no Node.js language
host (the Go module proxy serves none). The program uses the SDK generated from the
provider's schema (sdk/nodejs); the engine finds the provider as
``pulumi-resource-trainjobs`` on PATH (this clone's root). The cluster holds what
``trainjobs render`` prints for the same resources, and a second run changes nothing.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import REPO, Project, render
from tests.cluster.pulumi_up.test_demo_stack import (
    ident,
    k8s_resources,
    missing_or_different,
    read_back,
)
from tests.provider.programs import stack_documents
from tests.provider.typescript import compile_copy, copy_example

STACK = "typescript"
NAMESPACE = "ml-ts"
YAML_PROGRAM = REPO / "examples" / "yaml-stack" / "Pulumi.yaml"


def _same_resources(out: Path) -> Path:
    """The stack file of the TypeScript program's resources: the YAML example's, in the
    TypeScript example's namespace (the two examples declare the same platform)."""
    program = yaml.safe_load(YAML_PROGRAM.read_text().replace("ml-yaml", NAMESPACE))
    out.write_text(yaml.safe_dump_all(stack_documents(program), sort_keys=False))
    return out


class Automation:
    """``node automation.js COMMAND STACK`` in the compiled copy, with the Project's env."""

    def __init__(self, project: Project, example: Path) -> None:
        self.project = project
        self.script = example / "bin" / "examples" / "typescript-platform" / "automation.js"
        # The provider: pulumi-resource-trainjobs at the clone's root, found on PATH.
        self.env = {**project.env, "PATH": f"{REPO}:{project.env['PATH']}"}

    def run(self, command: str) -> dict[str, Any]:
        proc = subprocess.run(
            ["node", str(self.script), command, STACK],
            cwd=self.script.parent,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        output = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"automation.js {command}: exit {proc.returncode}\n{output}"
        lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
        result: dict[str, Any] = json.loads(lines[-1].removeprefix("RESULT ")) if lines else {}
        return result


@pytest.fixture(scope="module")
def brought_up(
    cluster: ControlPlane,
    kwok_node: str,
    pulumi_dirs: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Automation, list[dict[str, Any]]]]:
    del kwok_node
    workdir = tmp_path_factory.mktemp("pulumi-typescript")
    example = copy_example(workdir / "tree")
    proc = compile_copy(example)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    project = Project(workdir / "pulumi", kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    cluster.kubectl("create", "namespace", NAMESPACE)
    automation = Automation(project, example)
    automation.run("up")
    rendered = render(_same_resources(workdir / "same-resources.yaml"))
    try:
        yield automation, rendered
    finally:
        automation.run("destroy")
        cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false")


def test_up_makes_exactly_what_render_prints(
    brought_up: tuple[Automation, list[dict[str, Any]]], cluster: ControlPlane
) -> None:
    automation, rendered = brought_up
    # The Automation API's workspace keeps the state in the Project's backend.
    state = k8s_resources(_export(automation))
    want = {ident(m): m for m in rendered}
    assert sorted(state, key=str) == sorted(want, key=str)
    live = read_back(cluster, rendered)
    problems = {
        f"{kind} {ns}/{name}": diff
        for (api, kind, ns, name), m in want.items()
        if (diff := missing_or_different(m, live[(api, kind, ns, name)]))
    }
    assert problems == {}


def _export(automation: Automation) -> list[dict[str, Any]]:
    proc = subprocess.run(
        ["pulumi", "stack", "export", "--stack", f"organization/trainjobs-typescript-platform/{STACK}"],
        cwd=automation.project.root,
        env=automation.env,
        capture_output=True,
        text=True,
        check=True,
    )
    resources: list[dict[str, Any]] = json.loads(proc.stdout)["deployment"].get("resources") or []
    return resources


def test_second_run_changes_nothing(brought_up: tuple[Automation, list[dict[str, Any]]]) -> None:
    automation, _ = brought_up
    summary = automation.run("preview")
    assert set(summary) == {"same"}, summary
