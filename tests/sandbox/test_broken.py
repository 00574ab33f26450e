"""A control plane that can serve no more says why: etcd or the API server exited (with
the end of its log), or the disk is all but full (checked before anything starts)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trainjobs.sandbox import ControlPlane, StartupError
from trainjobs.sandbox.control_plane import MIN_FREE_BYTES
from trainjobs.sandbox.programs import Program


def _program(tmp_path: Path, name: str, script: str) -> Program:
    program = Program(name, ["sh", "-c", script], tmp_path / f"{name}.log")
    program.start()
    return program


def _stopped(program: Program) -> Program:
    assert program.process is not None
    program.process.wait(10)
    return program


def _disk_with(monkeypatch: pytest.MonkeyPatch, free_bytes: int) -> None:
    """Every disk reports ``free_bytes`` available (in 4 KiB blocks)."""
    stat = type("Stat", (), {"f_bavail": free_bytes // 4096, "f_frsize": 4096})()
    monkeypatch.setattr(os, "statvfs", lambda path: stat)


@pytest.fixture
def roomy_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    _disk_with(monkeypatch, MIN_FREE_BYTES)


def test_a_dead_etcd_is_named_with_its_last_words(tmp_path: Path, roomy_disk: None) -> None:
    plane = ControlPlane(tmp_path)
    etcd = _stopped(_program(tmp_path, "etcd", "echo 'write db: no space left on device'; exit 2"))
    apiserver = _program(tmp_path, "kube-apiserver", "exec sleep 30")
    try:
        plane.programs = [etcd, apiserver]
        reason = plane.broken()
        assert reason is not None
        assert reason.startswith("etcd exited with code 2")
        assert "no space left on device" in reason
    finally:
        apiserver.stop(grace=1)


def test_only_etcd_and_the_api_server_break_it(tmp_path: Path, roomy_disk: None) -> None:
    """An operator that exited fails its own tests (their reports carry its log); the
    API server still serves everything else."""
    plane = ControlPlane(tmp_path)
    etcd = _program(tmp_path, "etcd", "exec sleep 30")
    apiserver = _program(tmp_path, "kube-apiserver", "exec sleep 30")
    operator = _stopped(_program(tmp_path, "training-operator", "exit 1"))
    try:
        plane.programs = [etcd, apiserver, operator]
        assert plane.broken() is None
        apiserver.stop(grace=1)
        reason = plane.broken()
        assert reason is not None and reason.startswith("kube-apiserver exited")
    finally:
        etcd.stop(grace=1)


def test_a_full_disk_stops_the_start_before_any_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _disk_with(monkeypatch, 3 << 20)
    plane = ControlPlane(tmp_path)
    with pytest.raises(StartupError) as refused:
        plane.start()
    assert str(refused.value) == (
        f"only 3 MiB free on the disk of {tmp_path} (the control plane needs 1024 MiB: "
        "etcd exits at its first write to a full disk); free some space and start again"
    )
    assert plane.programs == []
    assert plane.broken() == str(refused.value)
