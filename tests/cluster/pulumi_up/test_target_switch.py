"""Changing one job's ``trainjobs.target`` between operator and pods across ``pulumi up``.

The pods target makes a Pod and a Service named as the Training Operator names its own
(``sw-worker-0``), and Pulumi creates the new resources before it deletes the old TFJob.
These tests pin what the real engine, provider, operator and stack program do with that:

- operator -> pods in one ``up`` is refused: the program reads its last outputs
  (``jobTargets``) before it declares anything and fails with the job, the two targets,
  why (the provider's apply would take over the operator's Pod and Service, which keep
  their ownerReference to the TFJob, and deleting the TFJob would garbage-collect them)
  and the fix. ``pulumi preview`` refuses the same way. Nothing changes: the TFJob, its
  Pod and its Service keep their uids and owner. Without the refusal (before
  ``jobTargets``, commit e62f534) that ``up`` exited 0 and left the job without pods.
  The provider here is tests/cluster/build.sh's, whose server-side-apply create is an
  upsert; pulumi/pulumi-kubernetes#4278 makes create fail with AlreadyExists unless
  ``upsertExistingObjects`` is set, which would fail such an update too, half-way.
- the two-step way (remove the job, ``up``; add it back as pods, ``up``) works, also
  right after a refusal (the stack sets ``allowNoJobs`` because the job is its only one).
- pods -> operator in one ``up`` works: Pulumi deletes its Pod and Service and the
  operator makes its own.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.jobs import small_tfjob_entry
from tests.cluster.pulumi_up.pulumi_cli import Project, Result

STACK = "switch"
NS = "switch"
NAME = "sw-worker-0"
"""The Pod and the Service both targets make for the TFJob's one worker."""
STACK_FILE = """\
config:
  trainjobs:k8sVersion: "1.32"
  trainjobs:namespaces: [switch]
  trainjobs:allowNoJobs: true
  trainjobs:jobs:
""" + small_tfjob_entry("sw", NS, "TARGET")
FAILED = tuple(range(1, 256))
"""Any nonzero exit: the program failed."""
NO_JOBS = STACK_FILE.split("  trainjobs:jobs:")[0] + "  trainjobs:jobs: []\n"


@pytest.fixture
def project(
    cluster: ControlPlane, kwok_node: str, pulumi_dirs: list[Path], tmp_path: Path
) -> Iterator[Project]:
    """A fresh stack (not yet up); destroyed after, with its namespace."""
    proj = Project(tmp_path, kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    proj.init(STACK)
    yield proj
    shutil.rmtree(tmp_path / "state" / ".pulumi" / "locks", ignore_errors=True)
    proj.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK, ok=(0, 255))
    cluster.kubectl("delete", "namespace", NS, "--wait=true", check=False)


def _up(project: Project, target: str | None) -> None:
    text = NO_JOBS if target is None else STACK_FILE.replace("TARGET", target)
    project.stack_file(STACK).write_text(text)
    project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)


def _get(cluster: ControlPlane, kind: str) -> dict[str, Any] | None:
    """The worker's ``pods`` or ``services`` object, or None when there is none."""
    path = f"/api/v1/namespaces/{NS}/{kind}/{NAME}"
    return cluster.client.get(path)


def _until(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting until {what}", pytrace=False)
        time.sleep(0.5)


def _owners(obj: dict[str, Any] | None) -> list[str]:
    assert obj is not None
    return [o["kind"] for o in obj["metadata"].get("ownerReferences", [])]


def _state(project: Project) -> dict[str, dict[str, Any]]:
    """The stack's Kubernetes resources by type (last segment), e.g. ``Pod``."""
    return {
        r["type"].rsplit(":", 1)[-1]: r
        for r in project.export(STACK)
        if r["type"].startswith("kubernetes:") and r["type"] != "kubernetes:core/v1:Namespace"
    }


def _operator_pods(cluster: ControlPlane) -> bool:
    """Whether the worker pod exists and the TFJob owns it."""
    pod = _get(cluster, "pods")
    return pod is not None and _owners(pod) == ["TFJob"]


def _uids(cluster: ControlPlane) -> dict[str, str]:
    """The uid of the TFJob and of the worker's Pod and Service (missing ones left out)."""
    found = {"tfjobs": cluster.client.get(f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/sw")}
    found.update((kind, _get(cluster, kind)) for kind in ("pods", "services"))
    return {kind: obj["metadata"]["uid"] for kind, obj in found.items() if obj is not None}


REFUSAL = "job switch/sw moves from target operator to pods in one update, which would lose"


def _refused(result: Result) -> str:
    """The program's refusal as the CLI printed it (the engine's diagnostics)."""
    output = result.stdout + result.stderr
    assert REFUSAL in output, str(result)
    assert "Traceback" not in output, str(result)  # a message for people, not a crash
    return output


def test_operator_to_pods_in_one_up_is_refused_and_changes_nothing(
    cluster: ControlPlane, project: Project
) -> None:
    _up(project, "operator")
    _until(lambda: _operator_pods(cluster), "the operator made its pod")
    before = _uids(cluster)
    assert sorted(before) == ["pods", "services", "tfjobs"]
    assert sorted(_state(project)) == ["TFJob"]

    project.stack_file(STACK).write_text(STACK_FILE.replace("TARGET", "pods"))
    preview = project.pulumi("preview", "--stack", STACK, ok=FAILED)
    _refused(preview)
    up = project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK, ok=FAILED)
    output = _refused(up)
    assert "Service switch/sw-worker-0, Pod switch/sw-worker-0" in output
    assert "deleting the TFJob then garbage-collects them" in output
    assert "take two updates: remove the job from trainjobs:jobs" in output
    # Nothing was planned: the state holds the TFJob, the cluster the operator's objects.
    assert sorted(_state(project)) == ["TFJob"]
    time.sleep(3)  # room for a deletion or garbage collection that must not come
    assert _uids(cluster) == before
    assert _owners(_get(cluster, "pods")) == ["TFJob"]
    assert _owners(_get(cluster, "services")) == ["TFJob"]

    # The way the message gives still works from here.
    _up(project, None)
    _until(lambda: _get(cluster, "pods") is None, "the operator's pod is gone")
    _until(lambda: _get(cluster, "services") is None, "the operator's service is gone")
    _up(project, "pods")
    assert _owners(_get(cluster, "pods")) == []
    assert _owners(_get(cluster, "services")) == []
    assert sorted(_state(project)) == ["Pod", "Service"]


def test_operator_to_pods_in_two_ups_works(cluster: ControlPlane, project: Project) -> None:
    _up(project, "operator")
    _until(lambda: _operator_pods(cluster), "the operator made its pod")
    _up(project, None)
    _until(lambda: _get(cluster, "pods") is None, "the operator's pod is gone")
    _until(lambda: _get(cluster, "services") is None, "the operator's service is gone")
    _up(project, "pods")
    pod = _get(cluster, "pods")
    assert _owners(pod) == []
    assert _owners(_get(cluster, "services")) == []
    assert sorted(_state(project)) == ["Pod", "Service"]
    time.sleep(3)  # room for a garbage collection that must not come
    refresh = project.pulumi("refresh", "--yes", "--skip-preview", "--stack", STACK)
    assert "deleted" not in refresh.stdout, str(refresh)
    assert sorted(_state(project)) == ["Pod", "Service"]
    assert _get(cluster, "pods") is not None


def test_pods_to_operator_in_one_up_works(cluster: ControlPlane, project: Project) -> None:
    _up(project, "pods")
    pulumi_pod = _get(cluster, "pods")
    assert _owners(pulumi_pod) == []
    assert pulumi_pod is not None

    _up(project, "operator")  # create TFJob, delete Pod, delete Service
    assert sorted(_state(project)) == ["TFJob"]
    old_uid = pulumi_pod["metadata"]["uid"]

    def operator_made_its_own() -> bool:
        pod = _get(cluster, "pods")
        return pod is not None and _owners(pod) == ["TFJob"] and pod["metadata"]["uid"] != old_uid

    _until(operator_made_its_own, "the operator made its own pod")
    assert _owners(_get(cluster, "services")) == ["TFJob"]
    refresh = project.pulumi("refresh", "--yes", "--skip-preview", "--stack", STACK)
    assert "deleted" not in refresh.stdout, str(refresh)
    assert sorted(_state(project)) == ["TFJob"]
