"""examples/typescript-platform and examples/go-platform brought up by the Automation API.

No Node.js or Go language host is served by the Go module proxy; the Automation API's
inline programs serve the program's language runtime themselves (npm ``@pulumi/pulumi``
pinned by the TypeScript example's package-lock, ``make node-deps``; Go
``github.com/pulumi/pulumi/sdk/v3`` at the CLI's release from build.sh's module cache,
``make go-deps``: nothing is fetched here). Each program uses the SDK generated from the
provider's schema (sdk/nodejs, sdk/go); the engine finds the provider as
``pulumi-resource-trainjobs`` on PATH (this clone's root). For each: the cluster holds
what ``trainjobs render`` prints for the same resources, and a second run changes
nothing.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import REPO, Project
from tests.provider.inline import InlineProgram, bring_up, cluster_problems
from tests.provider.typescript import compile_copy, copy_example

GO_EXAMPLE = REPO / "examples" / "go-platform"
CACHE = Path(os.environ.get("TRAINJOBS_CACHE", Path.home() / ".cache" / "trainjobs"))
NAMESPACES = {"typescript": "ml-ts", "go": "ml-go"}
"""Each example's namespace (the test makes it)."""


def _typescript_runner(workdir: Path) -> list[str]:
    """automation.ts compiled with the example's tsc, beside the SDK it imports."""
    example = copy_example(workdir / "tree")
    proc = compile_copy(example)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return ["node", str(example / "bin" / "examples" / "typescript-platform" / "automation.js")]


def _go_runner(workdir: Path) -> list[str]:
    """automation/ compiled with build.sh's Go caches and no network."""
    env = {
        **os.environ,
        "GOMODCACHE": str(CACHE / "go" / "mod"),
        "GOCACHE": str(CACHE / "go" / "build"),
        "GOPATH": str(CACHE / "go" / "path"),
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "-mod=readonly",
        "GOPROXY": "off",
        "CGO_ENABLED": "0",
    }
    runner = workdir / "automation"
    proc = subprocess.run(
        ["go", "build", "-trimpath", "-o", str(runner), "./automation"],
        cwd=GO_EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, f"go build (run `make go-deps` first?)\n{proc.stderr}"
    return [str(runner)]


Brought = tuple[str, InlineProgram, list[dict[str, Any]]]


@pytest.fixture(scope="module", params=sorted(NAMESPACES))
def brought_up(
    request: pytest.FixtureRequest,
    cluster: ControlPlane,
    kwok_node: str,
    pulumi_dirs: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Brought]:
    """The example of one language brought up. The Redis Deployment is awaited by the
    provider: the kwok node runs its pod."""
    del kwok_node
    language: str = request.param
    workdir = tmp_path_factory.mktemp(f"pulumi-{language}")
    runner = _typescript_runner(workdir) if language == "typescript" else _go_runner(workdir)
    project = Project(workdir / "pulumi", kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    program = InlineProgram(project, runner, f"trainjobs-{language}-platform")
    for rendered in bring_up(cluster, program, NAMESPACES[language], language, workdir):
        yield language, program, rendered


def test_up_makes_exactly_what_render_prints(brought_up: Brought, cluster: ControlPlane) -> None:
    language, program, rendered = brought_up
    assert cluster_problems(program.export(language), rendered, cluster) == {}


def test_second_run_changes_nothing(brought_up: Brought) -> None:
    language, program, _ = brought_up
    summary = program.run("preview", language)
    assert set(summary) == {"same"}, summary
