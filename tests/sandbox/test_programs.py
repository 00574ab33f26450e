"""The sandbox's processes: a program's whole group stops; a recorded pid that now names
another process is never signalled."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from trainjobs.sandbox.programs import Pid, Program, port_free, stop_group


def _group(pgid: int) -> list[int]:
    out = subprocess.run(
        ["ps", "-o", "pid=,stat=", "-g", str(pgid)], capture_output=True, text=True
    )
    return [int(line.split()[0]) for line in out.stdout.splitlines() if "Z" not in line.split()[1]]


def test_stop_ends_the_whole_group(tmp_path: Path) -> None:
    """A detached program and the child it started (its own process group) are both gone
    after stop, and what it wrote is in its log."""
    program = Program(
        "two-sleeps",
        ["sh", "-c", "echo started; sleep 60 & exec sleep 61"],
        tmp_path / "p.log",
        detached=True,
    )
    program.start()
    assert program.pid is not None
    pgid = program.pid.pid
    assert os.getpgid(pgid) == pgid  # its own group, not ours
    for _ in range(50):
        if len(_group(pgid)) == 2:
            break
        subprocess.run(["sleep", "0.05"], check=True)
    assert len(_group(pgid)) == 2
    program.stop(grace=5)
    assert _group(pgid) == []
    assert not program.running()
    assert "started" in (tmp_path / "p.log").read_text()


def test_a_recycled_pid_is_left_alone() -> None:
    """A record whose start time is not the process's (the pid was reused) is not ours."""
    me = Pid.of(os.getpid())
    assert me is not None and me.alive()
    stranger = Pid(me.pid, me.started + 1)
    assert not stranger.alive()
    stop_group(stranger)  # must not signal this test process
    assert me.alive()


def test_port_free() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert not port_free(port)
    assert port_free(port)
