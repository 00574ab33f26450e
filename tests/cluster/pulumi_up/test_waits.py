"""``wait: running`` and ``wait: succeeded`` wait on the real conditions, and time out.

The stacks are tests/cluster/pulumi_up/stacks/Pulumi.waits*.yaml, copied into the project
copy's stacks/. kwok makes scheduled pods Running and Ready; no operator for MXJob
runs in the test cluster, so the test sets its Succeeded condition as the operator
would, while ``pulumi up`` waits.
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
        try:
            out, _ = up.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            up.kill()
            out, _ = up.communicate()
            pytest.fail(f"pulumi up still waits 120s after the MXJob succeeded:\n{out}")
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
