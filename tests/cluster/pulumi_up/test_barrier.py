"""A job big enough for the apply-tier barrier keeps its order on the real engine.

Issue 35: a tier with more than ``BARRIER_EDGES`` edges to the tiers before waits on one
barrier (an empty ``kubernetes:yaml/v2:ConfigGroup``) instead of on every object. Read
from the engine's event log of a real ``pulumi up``: every Pod's create starts after
every Service's create has finished (a pod before its Service misses the Service's link
variables), the state holds edges linear in the objects, a second up changes nothing,
and destroy removes it all.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import REPO, Project
from trainjobs.components.platform import BARRIER_EDGES

STACK = "barrier"
NAMESPACE = "barrier"
WORKERS = 20
"""22 Pods on 22 Services: 484 edges without the barrier, above ``BARRIER_EDGES``."""


def _stack_text() -> str:
    doc: dict[str, Any] = next(
        d for d in yaml.safe_load_all((REPO / "examples/tf-mnist/tfjob.yaml").read_text()) if d
    )
    doc["metadata"] = {"name": "mnist", "namespace": NAMESPACE}
    doc["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = WORKERS
    doc["trainjobs"] = {"target": "pods"}
    config = {"trainjobs:namespaces": [NAMESPACE], "trainjobs:jobs": [doc]}
    return yaml.safe_dump({"config": config}, sort_keys=False)


@pytest.fixture
def project(cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path: Path) -> Iterator[Project]:
    proj = Project(tmp_path, kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    yield proj
    shutil.rmtree(tmp_path / "state" / ".pulumi" / "locks", ignore_errors=True)
    for stack in proj.stacks_made:
        proj.pulumi("destroy", "--yes", "--skip-preview", "--stack", stack, ok=(0, 255))


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_every_pod_is_created_after_every_service(
    project: Project, cluster: ControlPlane, tmp_path: Path
) -> None:
    assert (WORKERS + 2) ** 2 > BARRIER_EDGES, "the job must be big enough for a barrier"
    project.init(STACK, _stack_text())
    log = tmp_path / "events.jsonl"
    project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK, "--event-log", str(log))
    state = project.export(STACK)
    kinds = {r["urn"]: r["type"] for r in state}
    pods = {u for u, t in kinds.items() if t == "kubernetes:core/v1:Pod"}
    services = {u for u, t in kinds.items() if t == "kubernetes:core/v1:Service"}
    barriers = [r for r in state if r["type"] == "kubernetes:yaml/v2:ConfigGroup"]
    assert len(pods) == len(services) == WORKERS + 2
    assert len(barriers) == 1
    started: dict[str, int] = {}
    finished: dict[str, int] = {}
    for event in _events(log):
        for key, table in (("resourcePreEvent", started), ("resOutputsEvent", finished)):
            meta = (event.get(key) or {}).get("metadata") or {}
            if meta.get("op") == "create" and meta.get("urn") in kinds:
                table.setdefault(meta["urn"], event["sequence"])
    last_service = max(finished[s] for s in services)
    early = sorted(p for p in pods if started[p] < last_service)
    assert early == [], "Pods created before every Service existed"
    # The state holds the order as O(n) edges: each Pod names the barrier, which names
    # every Service.
    by_urn = {r["urn"]: r for r in state}
    (barrier,) = barriers
    assert set(barrier.get("dependencies") or []) >= services
    assert all(by_urn[p].get("dependencies") == [barrier["urn"]] for p in pods)
    assert len(cluster.client.items(f"/api/v1/namespaces/{NAMESPACE}/pods")) == WORKERS + 2
    again = project.pulumi("preview", "--expect-no-changes", "--stack", STACK, ok=(0, 255))
    assert again.returncode == 0, str(again)
