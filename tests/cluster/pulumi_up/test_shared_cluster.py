"""A cluster shared with other teams, with the real engine, provider and API server.

Another team's namespace (with their ConfigMap in it) exists before the stack. A stack
that declares that namespace as its own is refused before anything changes; one that
names it in ``trainjobs:adopt`` takes it over, said in ``pulumi preview``; one that lists
it in ``trainjobs:sharedNamespaces`` uses it, and ``pulumi destroy`` leaves it and the
neighbour's ConfigMap. The provider built here (4.25) creates with server-side apply,
which takes an existing object over without a word: without trainjobs' guard the first
case would succeed and its destroy delete the neighbour's namespace.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.control_plane import ApiError, ControlPlane
from tests.cluster.pulumi_up.jobs import small_tfjob_entry
from tests.cluster.pulumi_up.pulumi_cli import Project
from trainjobs.k8s.ownership import STACK_LABEL

pytestmark = pytest.mark.cluster


def _stack_file(namespace: str, *, owned: bool, adopt: bool = False, job_ns: str = "") -> str:
    key = "namespaces" if owned else "sharedNamespaces"
    lines = [
        "config:",
        '  trainjobs:k8sVersion: "1.32"',
        f"  trainjobs:{key}: [{namespace}]",
    ]
    if adopt:
        lines.append(f"  trainjobs:adopt: [Namespace/{namespace}]")
    lines.append("  trainjobs:jobs:")
    return "\n".join(lines) + "\n" + small_tfjob_entry("tf", job_ns or namespace, "pods")


@pytest.fixture
def neighbour(cluster: ControlPlane) -> Iterator[str]:
    """Another team's namespace holding their ConfigMap; removed after the test."""
    name = f"team-b-{uuid.uuid4().hex[:6]}"
    cluster.ensure_namespace(name, {"team": "b"})
    cluster.client.create(
        f"/api/v1/namespaces/{name}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "their-data"}},
    )
    yield name
    cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


def _their_data(cluster: ControlPlane, namespace: str) -> bool:
    try:
        return (
            cluster.client.get(f"/api/v1/namespaces/{namespace}/configmaps/their-data") is not None
        )
    except ApiError:
        return False


def _live_namespace(cluster: ControlPlane, name: str) -> dict[str, Any] | None:
    found = cluster.client.get(f"/api/v1/namespaces/{name}")
    if found is None or (found.get("status") or {}).get("phase") == "Terminating":
        return None
    return found


def _project(cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path: Path) -> Project:
    return Project(tmp_path, kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)


def test_a_namespace_someone_else_made_is_refused_and_left_untouched(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path: Path, neighbour: str
) -> None:
    """Fails without the guard: the provider upserts the namespace, and the later destroy
    (issue 31's measurement) deleted it with the neighbour's ConfigMap."""
    project = _project(cluster, pulumi_dirs, tmp_path)
    project.init("refused", _stack_file(neighbour, owned=True))
    preview = project.pulumi("preview", "--stack", "refused", ok=(255, 1))
    up = project.pulumi("up", "--yes", "--skip-preview", "--stack", "refused", ok=(255, 1))
    for result in (preview, up):
        text = result.stdout + result.stderr
        assert f"Namespace {neighbour} already exists in the cluster" in text, text
        assert f"add 'Namespace/{neighbour}' to trainjobs:adopt" in text
        assert "trainjobs:sharedNamespaces" in text
    live = _live_namespace(cluster, neighbour)
    assert live is not None
    assert STACK_LABEL not in (live["metadata"].get("labels") or {})
    assert cluster.client.get(f"/api/v1/namespaces/{neighbour}/pods/tf-worker-0") is None
    assert [r for r in project.export("refused") if r["type"].startswith("kubernetes:")] == []


def test_a_shared_namespace_outlives_the_stack_with_everything_in_it(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path: Path, neighbour: str, kwok_node: str
) -> None:
    """Fails while a stack owns the namespaces it puts jobs in: destroy deleted them."""
    project = _project(cluster, pulumi_dirs, tmp_path)
    project.init("shared", _stack_file(neighbour, owned=False))
    project.pulumi("up", "--yes", "--skip-preview", "--stack", "shared")
    pod = cluster.client.get(f"/api/v1/namespaces/{neighbour}/pods/tf-worker-0")
    assert pod is not None
    assert pod["metadata"]["labels"][STACK_LABEL] == "trainjobs.shared"
    again = project.pulumi("preview", "--diff", "--stack", "shared", "--expect-no-changes")
    assert again.returncode == 0
    project.pulumi("destroy", "--yes", "--skip-preview", "--stack", "shared")
    assert _live_namespace(cluster, neighbour) is not None
    assert _their_data(cluster, neighbour)
    assert cluster.client.get(f"/api/v1/namespaces/{neighbour}/pods/tf-worker-0") is None


def test_a_missing_shared_namespace_fails_the_preview(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path: Path
) -> None:
    project = _project(cluster, pulumi_dirs, tmp_path)
    project.init("missing", _stack_file("nowhere-ns", owned=False))
    result = project.pulumi("preview", "--stack", "missing", ok=(255, 1))
    assert "nowhere-ns" in result.stdout + result.stderr
    assert _live_namespace(cluster, "nowhere-ns") is None


def test_adopt_takes_the_namespace_over_said_in_preview_and_destroy_deletes_it(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path: Path, neighbour: str, kwok_node: str
) -> None:
    project = _project(cluster, pulumi_dirs, tmp_path)
    project.init("adopting", _stack_file(neighbour, owned=True, adopt=True))
    preview = project.pulumi("preview", "--stack", "adopting")
    assert f"adopting Namespace {neighbour}" in preview.stdout + preview.stderr
    project.pulumi("up", "--yes", "--skip-preview", "--stack", "adopting")
    live = _live_namespace(cluster, neighbour)
    assert live is not None
    assert live["metadata"]["labels"][STACK_LABEL] == "trainjobs.adopting"
    # Now the stack's own: the next preview says nothing of adopting, and changes nothing.
    again = project.pulumi("preview", "--stack", "adopting", "--expect-no-changes")
    assert "adopting Namespace" not in again.stdout + again.stderr
    project.pulumi("destroy", "--yes", "--skip-preview", "--stack", "adopting")
    assert _live_namespace(cluster, neighbour) is None
