"""Changing one job's ``trainjobs.target`` between operator and pods across ``pulumi up``.

The pods target makes a Pod and a Service named as the Training Operator names its own
(``sw-worker-0``), and Pulumi creates the new resources before it deletes the old TFJob.
These tests pin what the real engine, provider and operator do with that:

- operator -> pods in one ``up`` exits 0 but is wrong: the provider's apply takes over
  the operator's Pod and Service (same uid), which keep their ownerReference to the
  TFJob; deleting the TFJob then garbage-collects them. The cluster is left with no
  pods, the state still lists them (a plain ``up`` changes nothing), and ``pulumi
  refresh`` drops them; the ``up`` after that makes them again.
  This is the provider build of tests/cluster/build.sh, whose server-side-apply create
  is an upsert. pulumi/pulumi-kubernetes#4278 (merged 2026-04) makes create fail with
  AlreadyExists unless ``upsertExistingObjects`` is set: with such a provider (not
  tried here) this test fails, and the one-``up`` switch should fail, not lose pods.
- the two-step way (remove the job, ``up``; add it back as pods, ``up``) works (the
  stack sets ``allowNoJobs`` because the job is its only one).
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
from tests.cluster.pulumi_up.pulumi_cli import Project

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


def test_operator_to_pods_in_one_up_loses_the_pods(cluster: ControlPlane, project: Project) -> None:
    _up(project, "operator")
    _until(lambda: _operator_pods(cluster), "the operator made its pod")
    operator_pod = _get(cluster, "pods")
    assert operator_pod is not None

    _up(project, "pods")  # exits 0: create Service, create Pod, delete TFJob
    state = _state(project)
    assert sorted(state) == ["Pod", "Service"]
    # The "created" Pod is the operator's, taken over, still owned by the TFJob.
    pod_out = state["Pod"]["outputs"]["metadata"]
    assert pod_out["uid"] == operator_pod["metadata"]["uid"]
    assert [o["kind"] for o in pod_out.get("ownerReferences", [])] == ["TFJob"]
    # Deleting the TFJob garbage-collects them.
    _until(
        lambda: _get(cluster, "pods") is None and _get(cluster, "services") is None,
        "the TFJob's pod and service are garbage-collected",
    )
    # A plain `up` does not see it: the state still lists both, so nothing changes.
    again = project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)
    assert "unchanged" in again.stdout and "created" not in again.stdout, str(again)
    assert _get(cluster, "pods") is None
    refresh = project.pulumi("refresh", "--yes", "--skip-preview", "--stack", STACK)
    assert "2 deleted" in refresh.stdout, str(refresh)
    assert _state(project) == {}
    # After the refresh, the next `up` makes them again, owned by nobody.
    project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)
    assert _owners(_get(cluster, "pods")) == []
    assert _owners(_get(cluster, "services")) == []


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
