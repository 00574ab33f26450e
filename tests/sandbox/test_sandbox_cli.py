"""``trainjobs sandbox up|status|kubeconfig|down`` with the real programs, run as a user
runs them: each command a process of its own, in a folder of its own.

Proves: the programs outlive the ``up`` command (detached, each in its own process
group); the kubeconfig's context reaches an API server with the default kwok nodes
Ready; a second ``up`` says a sandbox runs (exit 2, no traceback); ``down`` leaves no
process and no port behind (listed before and after).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.processes import listening, processes_mentioning
from trainjobs.sandbox import CONTEXT, binaries
from trainjobs.sandbox.nodes import DEFAULT_NODES

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]


def trainjobs(folder: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``trainjobs ARGS`` in ``folder``, as its own process."""
    return subprocess.run(
        [sys.executable, "-m", "trainjobs.cli", *args],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder with a sandbox brought up by `trainjobs sandbox up`; down at the end
    whatever happened."""
    binaries()  # built before the clock of `up` starts (once per machine)
    here = tmp_path_factory.mktemp("sandbox-cli")
    up = trainjobs(here, "sandbox", "up")
    try:
        assert up.returncode == 0, up.stderr
        yield here
    finally:
        trainjobs(here, "sandbox", "down")


def _state(folder: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((folder / ".trainjobs/sandbox/state.json").read_text())
    return state


def test_programs_outlive_the_up_command(folder: Path) -> None:
    """`up` has exited; every program it started runs, each leading its own process
    group, none a child of this test process."""
    programs = _state(folder)["programs"]
    assert {p["name"] for p in programs} >= {
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kwok",
        "training-operator",
        "jobset",
        "trainer-controller-manager",
    }
    for program in programs:
        pid = program["pid"]
        assert Path(f"/proc/{pid}").exists(), program["name"]
        assert os.getpgid(pid) == pid, program["name"]
        stat = Path(f"/proc/{pid}/stat").read_text()
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        assert parent != os.getpid(), program["name"]


def test_status_and_kubeconfig_reach_the_cluster(folder: Path) -> None:
    status = trainjobs(folder, "sandbox", "status")
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith("running: since ")
    path = trainjobs(folder, "sandbox", "kubeconfig").stdout.strip()
    assert path == str(folder / ".trainjobs/sandbox/kubeconfig")
    kubectl = binaries()["kubectl"]
    out = subprocess.run(
        [str(kubectl), f"--kubeconfig={path}", "--context", CONTEXT, "get", "nodes", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    nodes = json.loads(out.stdout)["items"]
    assert len(nodes) == DEFAULT_NODES
    for node in nodes:
        ready = [c for c in node["status"].get("conditions", []) if c["type"] == "Ready"]
        assert ready and ready[0]["status"] == "True", node["metadata"]["name"]


def test_a_second_up_says_one_runs(folder: Path) -> None:
    again = trainjobs(folder, "sandbox", "up")
    assert again.returncode == 2
    assert "a sandbox already runs in" in again.stderr
    assert "Traceback" not in again.stderr
    reuse = trainjobs(folder, "sandbox", "up", "--reuse")
    assert reuse.returncode == 0, reuse.stderr
    assert "sandbox already running" in reuse.stdout


def test_down_leaves_no_process_and_no_port(folder: Path) -> None:
    """Runs last in this module (file order): lists the sandbox's processes and ports,
    stops it, lists them again."""
    state = _state(folder)
    root = str(folder / ".trainjobs" / "sandbox")
    before = processes_mentioning(root)
    assert len(before) >= len(state["programs"]), before
    ports = sorted(state["ports"].values())
    assert listening(ports) == ports
    down = trainjobs(folder, "sandbox", "down")
    assert down.returncode == 0, down.stderr
    assert down.stdout.startswith("sandbox down: stopped ")
    assert processes_mentioning(root) == []
    assert listening(ports) == []
    assert not (folder / ".trainjobs" / "sandbox").exists()
    status = trainjobs(folder, "sandbox", "status")
    assert status.returncode == 2
    assert status.stdout.startswith("stopped: ")
