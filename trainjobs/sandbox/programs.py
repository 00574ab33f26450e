"""The sandbox's processes: each in its own process group, its output in a log file.

A program is either *attached* (the kernel kills it when the process that started it
dies: a test session) or *detached* (it outlives the command that started it: ``trainjobs
sandbox up``). Either can be stopped later from its recorded process id and start time
(:class:`Pid`), by another process: the start time guards against a recycled pid.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from trainjobs.errors import TrainjobsError
from trainjobs.sandbox.api import ApiError

__all__ = [
    "Pid",
    "Program",
    "StartupError",
    "free_ports",
    "port_free",
    "stop_group",
    "tail",
    "wait_for",
]


class StartupError(TrainjobsError):
    """A program did not start or become ready; the message names it and its log."""


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (held open together while chosen)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether nothing listens on ``host:port`` (a connection is refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex((host, port)) != 0


def _die_with_parent() -> None:
    # Linux: the kernel kills the child when its parent dies, even by SIGKILL, so a
    # crashed or killed test session leaves no control plane behind.
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc), None when it is gone
    or a zombie (it holds no port and runs nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 2 (comm) may hold spaces and parentheses: split after its closing one.
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


@dataclass(frozen=True)
class Pid:
    """A process by id and start time: the same process, not a later one with its pid."""

    pid: int
    started: int

    @classmethod
    def of(cls, pid: int) -> Pid | None:
        started = _start_time(pid)
        return None if started is None else cls(pid, started)

    def alive(self) -> bool:
        return _start_time(self.pid) == self.started


def stop_group(leader: Pid, grace: float = 10.0) -> None:
    """SIGTERM the process group ``leader`` leads, SIGKILL what is left after ``grace``.

    Returns once the leader is gone. Its group may hold children it started; they are
    signalled with it. A leader that is no longer the recorded process is left alone.
    """
    if not leader.alive():
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(leader.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while leader.alive() and time.monotonic() < deadline:
        _reap(leader.pid)
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(leader.pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while leader.alive() and time.monotonic() < deadline:
        _reap(leader.pid)
        time.sleep(0.05)
    _reap(leader.pid)


def _reap(pid: int) -> None:
    # Our own child (the API started it in this process): collect its exit status, so
    # no zombie stays. Another process's child is reaped by its parent (or init).
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


@dataclass
class Program:
    """One program: its own process group, its output in ``log``."""

    name: str
    argv: list[str]
    log: Path
    env: dict[str, str] | None = None
    detached: bool = False
    """True: the program outlives the process that started it (see the module doc)."""
    process: subprocess.Popen[bytes] | None = None
    pid: Pid | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            log.write(f"$ {' '.join(self.argv)}\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
                close_fds=True,
                preexec_fn=(
                    _die_with_parent if sys.platform == "linux" and not self.detached else None
                ),
            )
        self.pid = Pid.of(self.process.pid) or Pid(self.process.pid, -1)

    def running(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        return self.pid is not None and self.pid.alive()

    def check_alive(self) -> None:
        if not self.running():
            code = self.process.returncode if self.process is not None else "?"
            raise StartupError(
                f"{self.name} exited with code {code}; its log ({self.log}) ends:\n{tail(self.log)}"
            )

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the whole process group, SIGKILL what is left after ``grace`` seconds."""
        if self.pid is not None:
            stop_group(self.pid, grace)
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(5)


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a log file (empty when there is none)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def wait_for(
    what: str,
    probe: Callable[[], bool],
    timeout: float,
    *,
    every: float = 0.1,
    alive: Callable[[], None] | None = None,
) -> None:
    """Poll ``probe`` until it is true; :class:`StartupError` naming ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if alive is not None:
            alive()
        try:
            if probe():
                return
        except (OSError, ApiError, http.client.HTTPException) as exc:
            last = exc
        time.sleep(every)
    raise StartupError(
        f"timed out after {timeout:.0f}s waiting for {what}" + (f" ({last})" if last else "")
    )
