"""``pulumi up`` of examples/yaml-stack (Pulumi YAML) with the trainjobs component provider.

The real engine, the Pulumi YAML language host (built from the module proxy), the
provider (``pulumi-resource-trainjobs`` at the clone's root, running this tree's
trainjobs) and the Kubernetes provider, against the session's control plane. The
Python language host and its ``pulumi-resource-pulumi-python`` plugin are left off
PATH, as a YAML user has none: the generated Redis password must come from the
provider itself. The program is brought up twice for the module; the proofs read it:
the cluster holds what ``trainjobs render`` prints for a stack file declaring the same
resources (tests/provider/programs.py writes it; the rule for a Secret's generated
values is tests/provider/same_as_render.py's), the components have the URNs the Python
components register, the second ``up`` changes nothing and keeps the password, and a
wrong field is refused with its path before anything is made.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import BUILD_SH, REPO, Project, Result, render
from tests.provider.programs import write_stack_file
from tests.provider.same_as_render import (
    cluster_problems,
    python_urns,
    secret_values,
    without_python_host,
)

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


@dataclass
class YamlStack:
    """The example brought up twice: its project, what render prints for the same, the
    Secret values after each up, and the second up."""

    project: Project
    rendered: list[dict[str, Any]]
    state: list[dict[str, Any]]
    values: dict[str, str]
    second_up: Result
    values_after: dict[str, str]


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
    dirs = [*without_python_host(pulumi_dirs), _host_dir()]
    project = Project(workdir, kubeconfig=cluster.kubeconfig, dirs=dirs)
    # The engine runs in the program's folder; the repository copy stays unused.
    project.root = program_copy(workdir / "yaml-stack", _example())
    rendered = render(write_stack_file(EXAMPLE / "Pulumi.yaml", workdir / "same-resources.yaml"))
    project.init(STACK)
    try:
        project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)
        state, values = project.export(STACK), secret_values(rendered, cluster)
        again = project.pulumi(
            "up", "--yes", "--skip-preview", "--expect-no-changes", "--stack", STACK, ok=(0, 255)
        )
        yield YamlStack(project, rendered, state, values, again, secret_values(rendered, cluster))
    finally:
        project.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK, ok=(0, 255))


def test_up_makes_exactly_what_render_prints(yaml_stack: YamlStack, cluster: ControlPlane) -> None:
    """The stack's trainjobs objects and the cluster's copies are the rendered ones.

    Fails when the provider registers an object `trainjobs render` does not print (or
    misses one), or when an object in the cluster lacks or changes a rendered field (an
    int the engine sent as a float, a lost env var of the Redis backend), or a Secret
    lacks a value. The program's own Namespace is left out: it is no trainjobs object.
    """
    state = [r for r in yaml_stack.state if r["type"] != "kubernetes:core/v1:Namespace"]
    assert cluster_problems(state, yaml_stack.rendered, cluster) == {}
    assert list(yaml_stack.values) == ["ml-yaml/redis-auth password"]


def test_components_have_the_urns_of_the_python_components(yaml_stack: YamlStack) -> None:
    """Each trainjobs component and child has the URN a Python program gives it (the
    generated password's type is the provider's: same_as_render.PROVIDER_TYPES)."""
    urns = {
        r["urn"]
        for r in yaml_stack.state
        if "trainjobs:index:" in r["urn"] and not r["type"].startswith("pulumi:providers:")
    }
    program = _example()
    assert urns == python_urns(program, program["name"], STACK)


def test_the_provider_records_none_of_its_own_python_frames(yaml_stack: YamlStack) -> None:
    """The objects the provider registers carry no stack trace of its Python process (the
    engine may still give them the YAML program's position on the component).

    Fails if ``python -m trainjobs.provider`` stops calling ``lean_sdk.lighten`` (issue 35).
    """
    children = [r for r in yaml_stack.state if "trainjobs:index:" in r["urn"]]
    assert children
    python_frames = [
        (r["urn"], frame["sourcePosition"])
        for r in children
        for frame in r.get("stackTrace") or []
        if ".py#" in frame.get("sourcePosition", "")
    ]
    assert python_frames == []
    assert [r["urn"] for r in children if ".py#" in r.get("sourcePosition", "")] == []


def test_second_up_changes_nothing_and_keeps_the_password(yaml_stack: YamlStack) -> None:
    assert yaml_stack.second_up.returncode == 0, str(yaml_stack.second_up)
    assert yaml_stack.values_after == yaml_stack.values


def test_the_state_never_shows_the_password(yaml_stack: YamlStack) -> None:
    exported = yaml_stack.project.pulumi("stack", "export", "--stack", STACK).stdout
    (password,) = yaml_stack.values.values()
    assert len(password) == 32
    assert password not in exported
    assert base64.b64encode(password.encode()).decode() not in exported


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


POD_SET_PROGRAM: dict[str, Any] = {
    "name": "trainjobs-yaml-pod-set",
    "runtime": "yaml",
    "resources": {
        "ns": {
            "type": "kubernetes:core/v1:Namespace",
            "properties": {"metadata": {"name": "ml-yaml-podset"}},
        },
        "gamma": {
            "type": "trainjobs:index:TrainingJob",
            "properties": {
                "target": "pods",
                "registration": "pod-set",
                "job": {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "TFJob",
                    "metadata": {"name": "gamma", "namespace": "ml-yaml-podset"},
                    "spec": {
                        "tfReplicaSpecs": {
                            "Worker": {
                                "replicas": 3,
                                "template": {
                                    "spec": {
                                        "containers": [{"name": "tensorflow", "image": "ex/tf:1.0"}]
                                    }
                                },
                            }
                        }
                    },
                },
            },
            "options": {"dependsOn": ["${ns}"]},
        },
    },
}


def test_a_pod_set_is_served_by_the_provider(
    yaml_stack: YamlStack, cluster: ControlPlane, tmp_path: Path
) -> None:
    """``registration: pod-set`` from Pulumi YAML, with no Python language host on PATH:
    the provider serves ``trainjobs:index:PodSet`` itself. Its Pods and Services are one
    resource of the state, the cluster holds them, a second up changes nothing and the
    destroy deletes them (the pod set waits until they are gone)."""
    project = Project(
        tmp_path, kubeconfig=yaml_stack.project.kubeconfig, dirs=yaml_stack.project.dirs
    )
    project.root = program_copy(tmp_path / "pod-set", POD_SET_PROGRAM)
    project.init("podset")
    try:
        project.pulumi("up", "--yes", "--skip-preview", "--stack", "podset")
        state = project.export("podset")
        types = [r["type"] for r in state]
        assert types.count("trainjobs:index:PodSet") == 1
        assert "kubernetes:core/v1:Pod" not in types
        (pod_set,) = [r for r in state if r["type"] == "trainjobs:index:PodSet"]
        assert sorted(pod_set["outputs"]["objects"]) == [
            f"{kind} ml-yaml-podset/gamma-worker-{i}"
            for kind in ("Pod", "Service")
            for i in range(3)
        ]
        assert _pods(cluster, "ml-yaml-podset") == [f"gamma-worker-{i}" for i in range(3)]
        again = project.pulumi("preview", "--expect-no-changes", "--stack", "podset", ok=(0, 255))
        assert again.returncode == 0, str(again)
    finally:
        project.pulumi("destroy", "--yes", "--skip-preview", "--stack", "podset", ok=(0, 255))
    assert project.export("podset") == []
    assert _pods(cluster, "ml-yaml-podset") == []


def _pods(cluster: ControlPlane, namespace: str) -> list[str]:
    items = cluster.client.items(f"/api/v1/namespaces/{namespace}/pods")
    return sorted(p["metadata"]["name"] for p in items)
