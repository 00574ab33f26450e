"""``trainjobs simulate`` of a stack's own operator install, its Kueue queues and a gang
scheduler the sandbox does not have, on the real programs.

tests/sandbox/stacks/Pulumi.simulate-platform.yaml installs the Training Operator in
namespace ml-ops running TFJobs only, and two queues on one pool: the Training Operator
runs there (the TFJobs' pods are its), a PyTorchJob gets no pod (the stack's operator
does not run that kind), Kueue admits the job on the roomy queue and holds the one on
the tight queue with its own reason, a pods-target gang names scheduler-plugins' scheduler
(not built: its pods are reported unplaced and the gang not enforced).
stacks/Pulumi.gang-volcano.yaml: the operator waits for Volcano, which is not built, to
admit the PodGroup before it makes pods: reported as not enforced, never as placed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sandbox.processes import processes_mentioning
from tests.sandbox.test_simulate import _job
from trainjobs.sandbox import binaries
from trainjobs.sandbox.kueue import kueue_bin_dir
from trainjobs.sandbox.simulate import SimulationReport, simulate

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
PLATFORM = Path(__file__).parent / "stacks" / "Pulumi.simulate-platform.yaml"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> SimulationReport:
    binaries()
    kueue_bin_dir(build=False)  # built, or the test fails here (not skipped)
    folder = tmp_path_factory.mktemp("simulate-platform")
    done = simulate(PLATFORM, workdir=folder)
    # The throwaway sandbox's programs are gone with the command.
    assert processes_mentioning(str(folder)) == []
    return done


def test_the_stacks_training_operator_runs_where_the_stack_installs_it(
    report: SimulationReport,
) -> None:
    assert (
        "training-operator in namespace ml-ops (operators[0] TrainingOperator "
        "'training-operator')" in report.operators
    ), report.operators
    # Its webhook configuration is the stack's, registered by URL: nothing refused.
    assert report.not_applied == (), report.not_applied


def test_the_stacks_operator_runs_only_the_kinds_it_enables(report: SimulationReport) -> None:
    found = _job(report, "not-run")
    assert not found.started
    assert found.pods == ()
    assert found.why.startswith("no pod was made"), found.why
    assert found.differs == "check predicted it fits; the operator made no pod"


def test_kueue_admits_the_job_on_the_roomy_queue(report: SimulationReport) -> None:
    found = _job(report, "admitted")
    assert found.queue == "roomy"
    assert found.admitted is True, found
    assert found.admission == "admitted by ClusterQueue roomy"
    assert found.started, found
    # The Training Operator made both workers once Kueue let the TFJob run.
    assert sorted(p.name for p in found.pods) == ["admitted-worker-0", "admitted-worker-1"]
    assert all(p.node and p.node.startswith("pool-") for p in found.pods), found.pods


def test_kueue_holds_the_job_on_the_tight_queue_with_its_reason(report: SimulationReport) -> None:
    found = _job(report, "held")
    assert found.queue == "tight"
    assert found.admitted is False, found
    assert "insufficient" in found.admission or "quota" in found.admission, found.admission
    assert found.why == f"Kueue did not admit it: {found.admission}"
    assert found.pods == ()  # suspended: the operator made none
    assert not found.check_fits
    assert any(f.startswith("queue.") for f in found.check_findings), found.check_findings
    assert not found.differs


def test_a_gang_on_a_scheduler_that_is_not_built_is_reported_not_enforced(
    report: SimulationReport,
) -> None:
    """Pods target, scheduler-plugins: trainjobs made the PodGroup and the pods; nothing
    places them, and the report says why instead of pretending."""
    found = _job(report, "coscheduled")
    assert not found.started
    assert [p.name for p in found.pods] == ["coscheduled-worker-0", "coscheduled-worker-1"]
    for pod in found.pods:
        assert pod.node is None
        assert pod.reason.startswith(
            "its scheduler 'scheduler-plugins-scheduler' does not run in the sandbox (no gang "
            "scheduler is built): the gang is not enforced"
        ), pod.reason
    assert found.gang.startswith("PodGroup coscheduled (scheduling.x-k8s.io, minMember 2"), (
        found.gang
    )
    assert found.gang.endswith(
        "no gang scheduler is built for the sandbox, so the gang is not enforced"
    )


def test_an_operator_gang_on_volcano_is_reported_not_enforced(tmp_path: Path) -> None:
    """Operator target, Volcano: the Training Operator makes the PodGroup and waits for
    Volcano to admit it before it makes any pod; the report names the PodGroup."""
    done = simulate(REPO / "stacks" / "Pulumi.gang-volcano.yaml", workdir=tmp_path)
    (job,) = done.jobs
    assert not job.started
    assert job.pods == ()
    assert job.gang.startswith("PodGroup resnet-gang (scheduling.volcano.sh, minMember"), job.gang
    assert "the gang is not enforced" in job.gang
    waits = "no pod was made: the operator makes them once a gang scheduler admits the job's"
    assert job.why == f"{waits} {job.gang}"
