"""``pulumi up`` of examples/yaml-stack (Pulumi YAML) with the trainjobs component provider.

The real engine, the Pulumi YAML language host (built from the module proxy), the
provider (``pulumi-resource-trainjobs`` at the clone's root, running this tree's
trainjobs) and the Kubernetes provider, against the session's control plane. The
program is brought up once for the module; the proofs read it: the cluster holds what
``trainjobs render`` prints for a stack file declaring the same resources
(tests/provider/programs.py writes it), the components have the URNs the Python
components register, a second ``up`` changes nothing, and a wrong field is refused
with its path before anything is made.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import BUILD_SH, REPO, Project, render
from tests.provider.inline import cluster_problems
from tests.provider.programs import write_stack_file
from tests.support.pulumi_harness import run_program
from trainjobs.components import GpuNodePool, RedisBackend, TrainingJob

EXAMPLE = REPO / "examples" / "yaml-stack"
STACK = "yaml"
HOST = "pulumi-language-yaml"


def _host_dir() -> Path:
    """The YAML language host's bin folder; built by build.sh on first use (minutes)."""
    out = subprocess.run(
        [str(BUILD_SH), "--print-dir", HOST], check=True, capture_output=True, text=True
    )
    folder = Path(out.stdout.strip())
    if not (folder / HOST).is_file():
        subprocess.run([str(BUILD_SH), HOST], check=True, stdout=sys.stderr)
    return folder


def program_copy(root: Path, program: dict[str, Any]) -> Path:
    """Write ``program`` as ``root/Pulumi.yaml``, its trainjobs package this clone."""
    root.mkdir(parents=True, exist_ok=True)
    program = {**program, "packages": {"trainjobs": str(REPO)}}
    (root / "Pulumi.yaml").write_text(yaml.safe_dump(program, sort_keys=False))
    return root


def _example() -> dict[str, Any]:
    program: dict[str, Any] = yaml.safe_load((EXAMPLE / "Pulumi.yaml").read_text())
    return program


class YamlStack:
    """The example brought up: its project, and what render prints for the same."""

    def __init__(self, project: Project, rendered: list[dict[str, Any]]) -> None:
        self.project = project
        self.rendered = rendered


@pytest.fixture(scope="module")
def yaml_stack(
    cluster: ControlPlane,
    kwok_node: str,
    pulumi_dirs: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[YamlStack]:
    """The Redis Deployment is awaited by the provider: the kwok node runs its pod."""
    del kwok_node
    workdir = tmp_path_factory.mktemp("pulumi-yaml")
    project = Project(workdir, kubeconfig=cluster.kubeconfig, dirs=[*pulumi_dirs, _host_dir()])
    # The engine runs in the program's folder; the repository copy stays unused.
    project.root = program_copy(workdir / "yaml-stack", _example())
    stack_file = write_stack_file(EXAMPLE / "Pulumi.yaml", workdir / "same-resources.yaml")
    rendered = render(stack_file)
    project.init(STACK)
    project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)
    try:
        yield YamlStack(project, rendered)
    finally:
        project.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK, ok=(0, 255))


def test_up_makes_exactly_what_render_prints(yaml_stack: YamlStack, cluster: ControlPlane) -> None:
    """The stack's trainjobs objects and the cluster's copies are the rendered ones.

    Fails when the provider registers an object `trainjobs render` does not print (or
    misses one), or when an object in the cluster lacks or changes a rendered field (an
    int the engine sent as a float, a lost env var of the Redis backend). The program's
    own Namespace is left out: it is no trainjobs object.
    """
    state = [
        r for r in yaml_stack.project.export(STACK) if r["type"] != "kubernetes:core/v1:Namespace"
    ]
    assert cluster_problems(state, yaml_stack.rendered, cluster) == {}


def _python_urns() -> set[str]:
    """The URNs the Python components register for the example's resources (mocks)."""
    resources = _example()["resources"]

    def program() -> None:
        redis_props = resources["redis"]["properties"]
        redis = RedisBackend("redis", redis_props["spec"], namespace=redis_props["namespace"])
        pool = GpuNodePool("a100", resources["a100"]["properties"]["spec"])
        mnist, bert = resources["mnist"]["properties"], resources["bert"]["properties"]
        TrainingJob("mnist", mnist["job"], target=mnist["target"], backend=redis)
        TrainingJob("bert", bert["job"], target=bert["target"], node_pool=pool)

    registered = run_program(program, stack=STACK, project=_example()["name"])
    # The engine leaves the root Stack out of a top-level resource's type; the mocks keep it.
    return {r.urn.replace("::pulumi:pulumi:Stack$", "::") for r in registered if r.urn}


def test_components_have_the_urns_of_the_python_components(yaml_stack: YamlStack) -> None:
    """Each trainjobs component and child has the URN a Python program gives it."""
    urns = {
        r["urn"]
        for r in yaml_stack.project.export(STACK)
        if "trainjobs:index:" in r["urn"] and not r["type"].startswith("pulumi:providers:")
    }
    assert urns == _python_urns()


def test_second_up_changes_nothing(yaml_stack: YamlStack) -> None:
    result = yaml_stack.project.pulumi(
        "preview", "--expect-no-changes", "--diff", "--stack", STACK, ok=(0, 255)
    )
    assert result.returncode == 0, str(result)


def test_a_wrong_field_is_refused_with_its_path(yaml_stack: YamlStack, tmp_path: Path) -> None:
    """A misspelt field deep in a job (``replica`` for ``replicas``) fails the preview
    with the field's path, and nothing is made."""
    program = _example()
    worker = program["resources"]["mnist"]["properties"]["job"]["spec"]["tfReplicaSpecs"]["Worker"]
    worker["replica"] = worker.pop("replicas")
    project = Project(
        tmp_path, kubeconfig=yaml_stack.project.kubeconfig, dirs=yaml_stack.project.dirs
    )
    project.root = program_copy(tmp_path / "wrong", program)
    project.init("wrong")
    result = project.pulumi("preview", "--stack", "wrong", ok=range(1, 256))
    text = result.stdout + result.stderr
    # Pulumi YAML checks the program against the schema before anything runs: it follows
    # the job down to the replica spec and names the misspelt key and the type refusing it.
    assert "tfReplicaSpecs: Cannot assign" in text, str(result)
    assert "Worker: Cannot assign" in text, str(result)
    assert "replica: number}' to 'trainjobs:index:ReplicaSpec'" in text, str(result)
    assert "Existing properties are: replicas, template, restartPolicy" in text, str(result)
    assert project.export("wrong") == []
    shutil.rmtree(tmp_path / "wrong")
