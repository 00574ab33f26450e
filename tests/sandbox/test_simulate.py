"""``trainjobs simulate``: each stack on a throwaway sandbox with the real scheduler and
operators, compared with what ``check`` predicts.

Cases: stacks/Pulumi.unfit.yaml (its 8-GPU pod stays Pending with the scheduler's
reason, its queued gang is held by Kueue with Kueue's reason; exit 1, JSON for CI); the
demo stack (every pod placed, exit 0);
tests/sandbox/stacks/Pulumi.simulate-pools.yaml: a job on a pool of each kind (static,
karpenter, gke, eks, aks) placed on that pool's node, a taint no pod tolerates, too few
GPUs per node, and a gang that cannot fit whole.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trainjobs.sandbox import binaries
from trainjobs.sandbox.simulate import JobReport, SimulationReport, simulate

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
POOLS = Path(__file__).parent / "stacks" / "Pulumi.simulate-pools.yaml"


@pytest.fixture(scope="module")
def pools_report(tmp_path_factory: pytest.TempPathFactory) -> SimulationReport:
    binaries()
    return simulate(POOLS, workdir=tmp_path_factory.mktemp("simulate"))


def _job(report: SimulationReport, name: str) -> JobReport:
    (job,) = [j for j in report.jobs if j.name == name]
    return job


@pytest.mark.parametrize(
    "job,pool",
    [
        ("on-static", "st"),
        ("on-karpenter", "ka"),
        ("on-gke", "gk"),
        ("on-eks", "ek"),
        ("on-aks", "ak"),
    ],
)
def test_a_job_on_each_pool_kind_runs_on_that_pools_node(
    pools_report: SimulationReport, job: str, pool: str
) -> None:
    """The pool's node carries what the job's placement selects and tolerates."""
    found = _job(pools_report, job)
    assert found.started, found
    assert [p.node for p in found.pods] == [f"{pool}-0"]
    assert found.check_fits and not found.differs


def test_a_taint_without_toleration(pools_report: SimulationReport) -> None:
    """No pool named: every node has the GPU taint; check cannot know, the scheduler says."""
    found = _job(pools_report, "untolerated")
    assert not found.started
    (pod,) = found.pods
    assert pod.node is None
    # Every node of the stack's pools has the GPU taint (the scheduler counts, not names, them).
    assert f"{len(pools_report.nodes)} node(s) had untolerated taint(s)" in pod.reason, pod.reason
    assert found.check_fits
    assert found.differs == "check predicted it fits; the scheduler did not place it"


def test_too_few_gpus(pools_report: SimulationReport) -> None:
    found = _job(pools_report, "too-few-gpus")
    assert not found.started
    (pod,) = found.pods
    assert "Insufficient nvidia.com/gpu" in pod.reason, pod.reason
    assert not found.check_fits
    assert any(f.startswith("schedule.gpus_per_node") for f in found.check_findings)
    assert not found.differs


def test_a_gang_that_cannot_fit_whole(pools_report: SimulationReport) -> None:
    """3 workers of 4 GPUs on 2 nodes of 4: two placed, one Pending; the job does not start."""
    found = _job(pools_report, "gang")
    assert not found.started
    placed = sorted(p.node for p in found.pods if p.node)
    assert placed == ["small-0", "small-1"]
    (pending,) = [p for p in found.pods if not p.node]
    assert "Insufficient nvidia.com/gpu" in pending.reason, pending.reason
    assert found.why == "2 of 3 pods placed; the job starts only when every pod runs"
    assert any(f.startswith("schedule.gang") for f in found.check_findings)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainjobs.cli", "simulate", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_unfit_stack_reports_the_unplaceable_job_with_the_schedulers_reason() -> None:
    done = _cli("stacks/Pulumi.unfit.yaml", "--json")
    assert done.returncode == 1, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["ok"] is False
    jobs = {j["name"]: j for j in report["jobs"]}
    big = jobs["big-worker"]
    assert big["started"] is False
    (pod,) = big["pods"]
    assert pod["node"] is None
    assert pod["reason"].startswith("0/2 nodes are available")
    assert "Insufficient nvidia.com/gpu" in pod["reason"]
    # tf-benchmarks (16 GPUs at once) is on queue team-a (8 GPUs): Kueue runs, because the
    # stack declares queues, and holds it with its own reason; the operator made no pod.
    gang = jobs["tf-benchmarks"]
    assert gang["started"] is False
    assert gang["queue"] == "team-a"
    assert gang["admitted"] is False
    assert "nvidia.com/gpu" in gang["admission"], gang["admission"]
    assert gang["why"] == f"Kueue did not admit it: {gang['admission']}"
    assert gang["pods"] == []
    assert big["queue"] == "" and big["admitted"] is None


def test_demo_stack_every_pod_placed() -> None:
    done = _cli("stacks/Pulumi.demo.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 of 3 jobs would start" in done.stdout
    assert "Pending" not in done.stdout
