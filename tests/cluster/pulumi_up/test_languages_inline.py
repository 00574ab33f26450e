"""examples/typescript-platform and examples/go-platform brought up by the Automation API.

No Node.js or Go language host is served by the Go module proxy; the Automation API's
inline programs serve the program's language runtime themselves (npm ``@pulumi/pulumi``
pinned by the TypeScript example's package-lock, ``make node-deps``; Go
``github.com/pulumi/pulumi/sdk/v3`` at the CLI's release from build.sh's module cache,
``make go-deps``: nothing is fetched here). Each program uses the SDK generated from the
provider's schema (sdk/nodejs, sdk/go); the engine finds the provider as
``pulumi-resource-trainjobs`` on PATH (this clone's root). The Python language host and
its ``pulumi-resource-pulumi-python`` plugin are left off PATH, as a TypeScript or Go
user has none: the generated Redis password must come from the provider itself. For
each language: the cluster holds what ``trainjobs render`` prints for the same
resources (by tests/provider/same_as_render.py's rule, Secret values included), the
components have the URNs the Python components register, and a second ``up`` changes
nothing and keeps the password.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import REPO, Project
from tests.provider.inline import YAML_PROGRAM, InlineProgram, bring_up
from tests.provider.same_as_render import (
    cluster_problems,
    python_urns,
    secret_values,
    without_python_host,
)
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


@dataclass
class Brought:
    """One language's example brought up twice."""

    language: str
    program: InlineProgram
    rendered: list[dict[str, Any]]
    state: list[dict[str, Any]]
    values: dict[str, str]
    second_up: Any
    values_after: dict[str, str]


@pytest.fixture(scope="module", params=sorted(NAMESPACES))
def brought_up(
    request: pytest.FixtureRequest,
    cluster: ControlPlane,
    kwok_node: str,
    pulumi_dirs: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Brought]:
    """The example of one language brought up, then up again. The Redis Deployment is
    awaited by the provider: the kwok node runs its pod."""
    del kwok_node
    language: str = request.param
    workdir = tmp_path_factory.mktemp(f"pulumi-{language}")
    runner = _typescript_runner(workdir) if language == "typescript" else _go_runner(workdir)
    dirs = without_python_host(pulumi_dirs)
    project = Project(workdir / "pulumi", kubeconfig=cluster.kubeconfig, dirs=dirs)
    program = InlineProgram(project, runner, f"trainjobs-{language}-platform")
    for rendered in bring_up(cluster, program, NAMESPACES[language], language, workdir):
        state, values = program.export(language), secret_values(rendered, cluster)
        again = program.run("up", language)
        yield Brought(
            language, program, rendered, state, values, again, secret_values(rendered, cluster)
        )


def test_up_makes_exactly_what_render_prints(brought_up: Brought, cluster: ControlPlane) -> None:
    assert cluster_problems(brought_up.state, brought_up.rendered, cluster) == {}
    assert list(brought_up.values) == [f"{NAMESPACES[brought_up.language]}/redis-auth password"]


def test_components_have_the_urns_of_the_python_components(brought_up: Brought) -> None:
    """The generated password's type is the provider's (same_as_render.PROVIDER_TYPES)."""
    urns = {
        r["urn"]
        for r in brought_up.state
        if "trainjobs:index:" in r["urn"] and not r["type"].startswith("pulumi:providers:")
    }
    namespace = NAMESPACES[brought_up.language]
    program = yaml.safe_load(YAML_PROGRAM.read_text().replace("ml-yaml", namespace))
    assert urns == python_urns(program, brought_up.program.project_name, brought_up.language)


def test_second_up_changes_nothing_and_keeps_the_password(brought_up: Brought) -> None:
    assert set(brought_up.second_up) == {"same"}, brought_up.second_up
    assert brought_up.values_after == brought_up.values


def test_the_state_never_shows_the_password(brought_up: Brought) -> None:
    exported = json.dumps(brought_up.program.export(brought_up.language))
    (password,) = brought_up.values.values()
    assert len(password) == 32
    assert password not in exported
    assert base64.b64encode(password.encode()).decode() not in exported
