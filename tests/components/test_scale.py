"""A big job's dependency graph under mocks: linear in its objects, same creation order.

Issue 35: every Pod depending on every Service made the engine's work and the state grow
with the square of the job. A tier with more than ``BARRIER_EDGES`` edges to what comes
before waits on one barrier instead; these tests count the edges and check that every Pod
still (transitively) waits for every Service.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.support.paths import EXAMPLES
from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import TrainingJob
from trainjobs.components.platform import BARRIER_EDGES
from trainjobs.k8s.yamlio import load_all

BARRIER = "kubernetes:yaml/v2:ConfigGroup"


def _tfjob(workers: int) -> dict[str, Any]:
    doc: dict[str, Any] = load_all((EXAMPLES / "tf-mnist" / "tfjob.yaml").read_text())[0]
    doc["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = workers
    return doc


def _registered(workers: int) -> list[Registered]:
    return run_program(lambda: TrainingJob("mnist", _tfjob(workers), target="pods"))


def _edges(resources: list[Registered]) -> int:
    return sum(len(r.options["dependencies"]) for r in resources)


def _closure(resources: list[Registered]) -> dict[str, set[str]]:
    """Every URN each resource waits for, directly or through what it waits for."""
    direct: Mapping[str, list[str]] = {r.urn: r.options["dependencies"] for r in resources}
    found: dict[str, set[str]] = {}

    def reach(urn: str) -> set[str]:
        if urn not in found:
            found[urn] = set()
            for dep in direct.get(urn, []):
                found[urn] |= {dep, *reach(dep)}
        return found[urn]

    for urn in direct:
        reach(urn)
    return found


def test_a_small_job_keeps_its_direct_edges_and_no_barrier() -> None:
    """Below ``BARRIER_EDGES`` (4 Pods on 4 Services) every Pod names every Service."""
    resources = _registered(2)
    assert BARRIER_EDGES >= 4 * 4
    assert [r for r in resources if r.type == BARRIER] == []
    pods = [r for r in resources if r.type == "kubernetes:core/v1:Pod"]
    services = {r.urn for r in resources if r.type == "kubernetes:core/v1:Service"}
    assert all(set(p.options["dependencies"]) == services for p in pods)


@pytest.mark.parametrize("workers", [64, 128])
def test_every_pod_still_waits_for_every_service(workers: int) -> None:
    resources = _registered(workers)
    pods = [r for r in resources if r.type == "kubernetes:core/v1:Pod"]
    services = {r.urn for r in resources if r.type == "kubernetes:core/v1:Service"}
    assert len(pods) == len(services) == workers + 2
    closure = _closure(resources)
    assert [p.name for p in pods if not services <= closure[p.urn]] == []
    # No Service waits for a Pod: the order is the one before, not stricter.
    assert all(not (closure[s] & {p.urn for p in pods}) for s in services)
    (barrier,) = [r for r in resources if r.type == BARRIER]
    assert barrier.name == "kubeflow/mnist-chief-0:after-tier-3"
    assert barrier.inputs.get("objs") == []
    assert set(barrier.options["dependencies"]) == services


def test_the_edges_grow_linearly_with_the_job() -> None:
    """Doubling the workers doubles the edges (plus a constant), where it quadrupled them."""
    small, big = (_edges(_registered(n)) for n in (64, 128))
    # Each Pod one edge (the barrier), the barrier one per Service.
    assert small == 2 * (64 + 2)
    assert big == 2 * (128 + 2)
