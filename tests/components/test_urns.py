"""URNs as the Pulumi engine sees them: unique per component, and stable for stacks.

The URNs here are the ones the mock monitor computes (type chain through the
parent, then the name), read from each registration; nothing is recomputed by hand.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from tests.support.paths import EXAMPLES, ROOT
from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import RedisBackend, TrainingJob, program
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import load_path

PINNED = Path(__file__).parents[1] / "data" / "demo_stack_urns.txt"


def _tfjob() -> Any:
    return load_path(EXAMPLES / "tf-mnist" / "tfjob.yaml").jobs[0].job


def _duplicates(resources: list[Registered]) -> list[str]:
    counts = collections.Counter(r.urn for r in resources)
    return sorted(urn for urn, n in counts.items() if n > 1)


def _alias_urns(resource: Registered) -> list[str]:
    """The URNs a resource's name aliases stand for (same type and parent, old name)."""
    head = resource.urn.rsplit("::", 1)[0]
    return [f"{head}::{name}" for name in resource.options["aliases"]]


def test_one_job_on_two_clusters_registers_no_duplicate_urn() -> None:
    def two_clusters() -> None:
        for cluster in ("east", "west"):
            provider = k8s.Provider(cluster, kubeconfig=f"/kube/{cluster}")
            TrainingJob(
                f"mnist-{cluster}",
                _tfjob(),
                target="pods",
                opts=pulumi.ResourceOptions(provider=provider),
            )

    resources = run_program(two_clusters)
    assert _duplicates(resources) == []
    components = {r.name: r for r in resources if r.type == "trainjobs:index:TrainingJob"}
    assert sorted(components) == ["mnist-east", "mnist-west"]
    for cluster in ("east", "west"):
        parent = components[f"mnist-{cluster}"].urn
        children = [r for r in resources if r.parent == parent]
        # 4 pods and their 4 services, each under its own component, on its own cluster.
        assert len(children) == 8
        # The provider reference is ``<provider URN>::<id>``; the URN ends in its name.
        providers = {r.options["provider"].split("::")[3] for r in children}
        assert providers == {cluster}
        chief = next(
            r for r in children if r.type == "kubernetes:core/v1:Pod" and "chief" in r.name
        )
        assert chief.urn == (
            "urn:pulumi:test::trainjobs::trainjobs:index:TrainingJob$kubernetes:core/v1:Pod"
            f"::mnist-{cluster}:kubeflow/mnist-chief-0"
        )
        # A stack made when children had unscoped names keeps its pods (no replacement).
        assert chief.options["aliases"] == ["kubeflow/mnist-chief-0"]


def test_a_blue_green_copy_of_a_backend_registers_no_duplicate_urn() -> None:
    def blue_green() -> None:
        for colour in ("blue", "green"):
            RedisBackend(
                colour,
                {
                    "apiVersion": "trainjobs.dev/v1alpha1",
                    "kind": "RedisBackend",
                    "metadata": {"name": "redis", "namespace": "training"},
                    "spec": {"password": True},
                },
            )

    resources = run_program(blue_green)
    assert _duplicates(resources) == []
    passwords = sorted(r.name for r in resources if r.type.endswith("GeneratedPassword"))
    assert passwords == ["blue:training/redis-auth", "green:training/redis-auth"]


def test_a_component_named_after_its_job_keeps_todays_child_names() -> None:
    resources = run_program(lambda: TrainingJob("mnist", _tfjob(), target="pods"))
    pods = sorted(r.name for r in resources if r.type == "kubernetes:core/v1:Pod")
    assert pods[0] == "kubeflow/mnist-chief-0"
    assert all(not r.options["aliases"] for r in resources if r.custom)


def test_the_demo_stack_keeps_every_urn_it_had(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every URN the demo stack had (pinned before names were scoped) is still registered,
    or aliased by the resource that replaces it, so `pulumi up` replaces nothing."""
    path = ROOT / "stacks" / "Pulumi.demo.yaml"
    monkeypatch.setenv("TRAINJOBS_STACK_DIR", str(path.parent))
    config = load_all(path.read_text())[0]["config"]
    resources = run_program(program, config, stack="demo")
    reachable = {r.urn for r in resources} | {u for r in resources for u in _alias_urns(r)}
    pinned = [line for line in PINNED.read_text().splitlines() if line.startswith("urn:")]
    assert len(pinned) == 22
    assert [urn for urn in pinned if urn not in reachable] == []
    assert _duplicates(resources) == []


def test_one_gke_pool_in_two_projects_registers_no_duplicate_urn() -> None:
    from tests.platform.pools.docs import pool_doc
    from trainjobs.components import GpuNodePool

    def two_projects() -> None:
        for project in ("prod", "staging"):
            doc = pool_doc(provider="gke")
            GpuNodePool(f"a100-{project}", doc)

    resources = run_program(two_projects)
    assert _duplicates(resources) == []
    pools = sorted(r.name for r in resources if r.type == "gcp:container/nodePool:NodePool")
    assert pools == ["a100-prod:a100", "a100-staging:a100"]
