"""A folder's sandbox record, without starting one: stopped when nothing was started or
every recorded process is gone; commands that need it running say how to start it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from trainjobs.cli import main
from trainjobs.sandbox import Sandbox, SandboxState
from trainjobs.sandbox.sandbox import ProgramState


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_nothing_started_is_stopped(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path)
    assert sandbox.status().state == "stopped"
    assert sandbox.down() == []


def test_a_record_of_dead_processes_is_stopped_and_down_clears_it(tmp_path: Path) -> None:
    """After a reboot the record names processes that are gone (or pids now another
    process's): stopped, and down removes the folder without signalling anything."""
    sandbox = Sandbox(tmp_path)
    sandbox.root.mkdir(parents=True)
    state = SandboxState(
        context="trainjobs-sandbox",
        kubeconfig=str(sandbox.kubeconfig),
        started_at="2026-01-01T00:00:00+00:00",
        started_in=1.0,
        ports={"kube-apiserver": 1},
        programs=[ProgramState("etcd", _dead_pid(), 1, "etcd.log")],
        binaries={},
    )
    state.write(sandbox.state_file)
    assert SandboxState.read(sandbox.state_file) == state
    status = sandbox.status()
    assert status.state == "stopped" and status.exited == ("etcd",)
    assert sandbox.down() == []
    assert not sandbox.root.exists()


def test_kubeconfig_of_no_sandbox_says_how_to_start_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["sandbox", "kubeconfig"]) == 2
    err = capsys.readouterr().err
    assert "no sandbox runs in" in err and "`trainjobs sandbox up` starts one" in err
    assert main(["sandbox", "status"]) == 2
    assert capsys.readouterr().out.startswith("stopped: no sandbox runs in")
    assert main(["sandbox", "down"]) == 0
    assert "nothing to stop" in capsys.readouterr().out


def test_nodes_from_a_stack_that_does_not_load_starts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stack is read before anything starts: its error, exit 2, no sandbox."""
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  trainjobs:nodePools:\n    - kind: GpuNodePool\n")
    assert main(["sandbox", "up", "--nodes-from", str(bad), "--no-build"]) == 2
    assert "error" in capsys.readouterr().err
    assert Sandbox(tmp_path).status().state == "stopped"
    assert not (tmp_path / ".trainjobs" / "sandbox" / "state.json").exists()
