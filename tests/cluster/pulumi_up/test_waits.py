"""``wait: running`` and ``wait: succeeded`` wait on the real conditions, and time out.

The stacks are tests/cluster/pulumi_up/stacks/Pulumi.waits*.yaml, copied into the project
copy's stacks/. kwok makes scheduled pods Running and Ready; no operator for MXJob
runs in the test cluster, so the test sets its Succeeded condition as the operator
would, while ``pulumi up`` waits. A TrainJob's Complete condition comes from the real
Trainer and JobSet controllers once its pods succeed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import Project

HERE = Path(__file__).resolve().parent
KWOK_SUCCEED = "trainjobs.dev/kwok-succeed"
"""The annotation our kwok stages finish a running pod on (control_plane.KWOK_STAGES)."""


@pytest.fixture
def project(cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path: Path) -> Iterator[Project]:
    proj = Project(tmp_path, kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    for stack_file in (HERE / "stacks").glob("Pulumi.*.yaml"):
        shutil.copy2(stack_file, proj.root / "stacks" / stack_file.name)
    yield proj
    # An up killed by a failing test leaves its lock behind (the file backend has no
    # `pulumi cancel`).
    shutil.rmtree(tmp_path / "state" / ".pulumi" / "locks", ignore_errors=True)
    for stack in proj.stacks_made:
        proj.pulumi("destroy", "--yes", "--skip-preview", "--stack", stack, ok=(0, 255))


def _popen_up(project: Project, stack: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            "pulumi",
            "up",
            "--yes",
            "--skip-preview",
            "--stack",
            stack,
            "--non-interactive",
            "--color=never",
        ],
        cwd=project.root,
        env=project.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finished(up: subprocess.Popen[str], after: str) -> str:
    """The up's output once it returns, which it must within 120 s ``after`` what it
    waited for happened."""
    try:
        out, _ = up.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        up.kill()
        out, _ = up.communicate()
        pytest.fail(f"pulumi up still waits 120s after {after}:\n{out}")
    return out


def test_wait_running_and_succeeded_wait_for_the_conditions(
    project: Project, cluster: ControlPlane, kwok_node: str
) -> None:
    """The up does not return before the MXJob reports Succeeded, and then returns 0.

    The pod of job ``runs`` is Ready when the up returns (kwok ran it). Fails if the
    components stop adding ``pulumi.com/waitFor`` (the up would return at once, with
    the MXJob still without a condition) or the pods' await.
    """
    project.init("waits")
    up = _popen_up(project, "waits")
    try:
        deadline = time.monotonic() + 240
        mxjob = None
        while time.monotonic() < deadline and up.poll() is None:
            mxjob = cluster.client.get("/apis/kubeflow.org/v1/namespaces/waits/mxjobs/finishes")
            if mxjob is not None:
                break
            time.sleep(0.5)
        assert mxjob is not None, "the MXJob was never created"
        time.sleep(5)
        assert up.poll() is None, "pulumi up returned before the MXJob succeeded"
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        status = {
            "status": {
                "conditions": [
                    {
                        "type": "Created",
                        "status": "True",
                        "reason": "MXJobCreated",
                        "lastTransitionTime": now,
                        "lastUpdateTime": now,
                    },
                    {
                        "type": "Succeeded",
                        "status": "True",
                        "reason": "MXJobSucceeded",
                        "message": "set by tests/cluster/pulumi_up",
                        "lastTransitionTime": now,
                        "lastUpdateTime": now,
                    },
                ]
            }
        }
        cluster.kubectl(
            "patch",
            "mxjob",
            "finishes",
            "-n",
            "waits",
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps(status),
        )
        out = _finished(up, "the MXJob succeeded")
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert up.returncode == 0, out
    pod = cluster.client.get("/api/v1/namespaces/waits/pods/runs-master-0")
    assert pod is not None
    ready = {c["type"]: c["status"] for c in pod["status"].get("conditions", [])}
    assert ready.get("Ready") == "True"


def test_wait_running_times_out_after_wait_timeout(project: Project, kwok_node: str) -> None:
    """A pod that can never be scheduled fails the up after its waitTimeout (20s).

    Fails if the up succeeds (the wait was skipped) or takes the provider's default
    ten minutes (the custom timeout was lost).
    """
    project.init("waits-timeout")
    started = time.monotonic()
    result = project.pulumi(
        "up", "--yes", "--skip-preview", "--stack", "waits-timeout", ok=(1,), timeout=300
    )
    took = time.monotonic() - started
    assert took < 180, f"the up took {took:.0f}s"
    assert "'stuck-master-0' timed out waiting to be Ready" in result.stdout, str(result)


def test_wait_succeeded_of_a_trainjob_waits_for_the_trainer(
    project: Project, cluster: ControlPlane, kwok_node: str
) -> None:
    """`pulumi up` of a TrainJob with ``wait: succeeded`` returns once the real Trainer
    reports it Complete, and not before.

    Nothing is patched by hand: the real Trainer v2.3.0 creates the JobSet, the real
    JobSet v0.12.0 controller its Indexed Job, the job controller the pods; the test only
    lets the pods succeed on kwok, as a finished training would, and the Complete
    condition travels back up (Job → JobSet → TrainJob). Fails if the component waits on
    a condition the Trainer never sets, or does not wait at all.
    """
    project.init("waits-trainjob")
    up = _popen_up(project, "waits-trainjob")
    selector = "labelSelector=jobset.sigs.k8s.io/jobset-name%3Dtrains"
    pods = f"/api/v1/namespaces/waits-trainjob/pods?{selector}"
    try:
        deadline = time.monotonic() + 240
        running: list[dict[str, object]] = []
        while time.monotonic() < deadline and up.poll() is None:
            found = cluster.client.items(pods)
            running = [p for p in found if p.get("status", {}).get("phase") == "Running"]
            if len(running) == 2:
                break
            time.sleep(0.5)
        assert len(running) == 2, "the TrainJob's two node pods never ran"
        time.sleep(5)
        assert up.poll() is None, "pulumi up returned before the TrainJob completed"
        for pod in running:
            name = pod["metadata"]["name"]  # type: ignore[index]
            cluster.kubectl("annotate", "-n", "waits-trainjob", "pod", name, f"{KWOK_SUCCEED}=true")
        out = _finished(up, "the pods succeeded")
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert up.returncode == 0, out
    job = cluster.client.get(
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/waits-trainjob/trainjobs/trains"
    )
    assert job is not None
    conditions = {c["type"]: c["status"] for c in job["status"].get("conditions", [])}
    assert conditions.get("Complete") == "True", conditions


def test_on_the_pods_target_pulumi_up_keeps_jobsets_depends_on(
    project: Project, cluster: ControlPlane, kwok_node: str
) -> None:
    """The node Job of a TrainJob on the pods target is created only once the dataset
    initializer's Job has completed (JobSet dependsOn: Complete, which no controller
    keeps there), and the up then returns.

    Fails if the components create both Jobs at once (the node Job exists while the
    initializer still runs) or do not await the initializer (the up returns early).
    """
    namespace = "waits-order"
    cluster.client.create(
        "/api/v1/persistentvolumes",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "waits-order-initializer"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain",
                "hostPath": {"path": "/tmp/waits-order-initializer"},
                "claimRef": {"namespace": namespace, "name": "initializer-ordered"},
            },
        },
    )
    project.init(namespace)
    up = _popen_up(project, namespace)
    selector = "labelSelector=jobset.sigs.k8s.io/replicatedjob-name%3Ddataset-initializer"
    node_job = f"/apis/batch/v1/namespaces/{namespace}/jobs/ordered-node-0"
    try:
        deadline = time.monotonic() + 240
        running: list[dict[str, object]] = []
        while time.monotonic() < deadline and up.poll() is None and not running:
            found = cluster.client.items(f"/api/v1/namespaces/{namespace}/pods?{selector}")
            running = [p for p in found if p.get("status", {}).get("phase") == "Running"]
            time.sleep(0.5)
        assert running, "the dataset initializer's pod never ran"
        time.sleep(5)
        assert up.poll() is None, "pulumi up returned while the initializer still ran"
        assert cluster.client.get(node_job) is None, "the node Job did not wait"
        for pod in running:
            name = pod["metadata"]["name"]  # type: ignore[index]
            cluster.kubectl("annotate", "-n", namespace, "pod", name, f"{KWOK_SUCCEED}=true")
        out = _finished(up, "the initializer completed")
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
        cluster.kubectl("delete", "pv", "waits-order-initializer", "--wait=false", check=False)
    assert up.returncode == 0, out
    assert cluster.client.get(node_job) is not None
