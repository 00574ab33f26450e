"""One sandbox per folder: a control plane that outlives the command that started it.

``Sandbox(folder).up()`` starts a :class:`~trainjobs.sandbox.control_plane.ControlPlane`
with detached programs in ``<folder>/.trainjobs/sandbox`` and records each program's
process id, start time and ports in ``state.json`` there; ``down()`` — from any later
process — stops them from that record, checks that no port is still held, and removes
the folder. ``status()`` reads the record and asks each process and the API server.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import shlex
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from trainjobs.errors import TrainjobsError
from trainjobs.sandbox.api import Api
from trainjobs.sandbox.binaries import binaries
from trainjobs.sandbox.control_plane import ControlPlane
from trainjobs.sandbox.operators import Operators
from trainjobs.sandbox.programs import Pid, Program, StartupError, port_free, stop_group, tail

__all__ = [
    "CONTEXT",
    "STATE_DIR",
    "AlreadyRunning",
    "NotRunning",
    "ProgramState",
    "Sandbox",
    "SandboxState",
    "Status",
]

STATE_DIR = Path(".trainjobs") / "sandbox"
"""Where a folder's sandbox lives, relative to the folder (gitignored: ``.trainjobs/``)."""
CONTEXT = "trainjobs-sandbox"
"""The kubeconfig context (and cluster) name of a sandbox."""


class AlreadyRunning(TrainjobsError):
    """``up`` while this folder's sandbox runs."""


class NotRunning(TrainjobsError):
    """A command that needs this folder's sandbox running, and it is not."""


@dataclass(frozen=True)
class ProgramState:
    """One program of a running sandbox, as recorded."""

    name: str
    pid: int
    started: int
    """Its start time (clock ticks since boot): a recycled pid is not taken for it."""
    log: str

    @property
    def process(self) -> Pid:
        return Pid(self.pid, self.started)


@dataclass(frozen=True)
class SandboxState:
    """``state.json``: what ``down`` and ``status`` need, written once ``up`` is done."""

    context: str
    kubeconfig: str
    started_at: str
    started_in: float
    ports: dict[str, int]
    programs: list[ProgramState]
    binaries: dict[str, str]
    notes: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> SandboxState:
        raw = json.loads(path.read_text())
        raw["programs"] = [ProgramState(**p) for p in raw["programs"]]
        return cls(**raw)

    def write(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2, sort_keys=True) + "\n")
        tmp.replace(path)


@dataclass(frozen=True)
class Status:
    """What ``status`` found."""

    state: Literal["running", "degraded", "stopped"]
    """running: every program and the API server answer; degraded: some program has
    exited (``exited`` names them); stopped: no sandbox in this folder."""
    recorded: SandboxState | None = None
    exited: tuple[str, ...] = ()


class Sandbox:
    """The sandbox of ``folder`` (default: the current folder)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = (folder or Path.cwd()).resolve()
        self.root = self.folder / STATE_DIR
        self.state_file = self.root / "state.json"

    @property
    def kubeconfig(self) -> Path:
        """The sandbox's kubeconfig (context :data:`CONTEXT`)."""
        return self.root / "kubeconfig"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        # Two `up`s (or an `up` and a `down`) in one folder at once: one waits.
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root.parent / "sandbox.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def recorded(self) -> SandboxState | None:
        """The recorded state, None when no sandbox was started here (or it is unreadable)."""
        try:
            return SandboxState.read(self.state_file)
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def status(self) -> Status:
        """Whether this folder's sandbox runs (every program, and the API server's /readyz)."""
        state = self.recorded()
        if state is None:
            return Status("stopped")
        exited = tuple(p.name for p in state.programs if not p.process.alive())
        if len(exited) == len(state.programs):
            return Status("stopped", state, exited)
        if not exited and not self._api_ready(state):
            exited = ("kube-apiserver (not ready)",)
        return Status("degraded" if exited else "running", state, exited)

    def _api_ready(self, state: SandboxState) -> bool:
        try:
            return self.api(state).ready()
        except OSError:
            return False

    def api(self, state: SandboxState | None = None) -> Api:
        """A client of the running sandbox's API server."""
        import ssl

        state = state or self.recorded()
        if state is None:
            raise NotRunning(f"no sandbox runs in {self.folder}; `trainjobs sandbox up` starts one")
        pki = self.root / "pki"
        context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        return Api(state.ports["kube-apiserver"], context)

    def up(
        self,
        *,
        nodes: Sequence[dict[str, Any]] = (),
        operators: Operators | None = None,
        from_path: bool = False,
        build: bool = True,
        progress: TextIO = sys.stderr,
    ) -> SandboxState:
        """Start the sandbox and create ``nodes`` (kwok Nodes) in it; ``operators``: which
        operators run and how (default the built-in ones; :mod:`trainjobs.sandbox.operators`).

        :class:`AlreadyRunning` when one runs here (or is degraded: ``down`` first). A
        stopped sandbox's leftovers (a reboot) are cleared first. On a failure everything
        started is stopped again and the logs stay in ``<root>/logs``.
        """
        with self._locked():
            current = self.status()
            if current.state != "stopped":
                assert current.recorded is not None
                raise AlreadyRunning(
                    f"a sandbox already runs in {self.folder} (since "
                    f"{current.recorded.started_at}, context {current.recorded.context}, "
                    f"kubeconfig {current.recorded.kubeconfig})"
                    + (f"; exited: {', '.join(current.exited)}" if current.exited else "")
                    + "; `trainjobs sandbox down` stops it"
                )
            self._clear(current.recorded)
            bins = binaries(from_path=from_path, build=build, progress=progress)
            plane = ControlPlane(
                self.root,
                bins=bins,
                context=CONTEXT,
                detached=True,
                mpi_operator="if-port-free",
                operators=operators or Operators(),
            )
            try:
                plane.start()
                for node in nodes:
                    plane.client.create("/api/v1/nodes", node)
            except BaseException:
                plane.stop()
                raise
            state = SandboxState(
                context=CONTEXT,
                kubeconfig=str(plane.kubeconfig),
                started_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                started_in=round(plane.started_in, 1),
                ports=plane.ports,
                programs=[_recorded(p) for p in plane.programs],
                binaries={name: str(path) for name, path in sorted(bins.items())},
                notes=plane.notes,
            )
            state.write(self.state_file)
            self._write_env(state)
            return state

    def _write_env(self, state: SandboxState) -> None:
        """``env.sh``: source it and kubectl (the sandbox's own) talks to the sandbox."""
        kubectl = Path(state.binaries["kubectl"]).parent
        (self.root / "env.sh").write_text(
            "# source this file: kubectl then talks to the sandbox\n"
            f"export KUBECONFIG={shlex.quote(state.kubeconfig)}\n"
            f'export PATH={shlex.quote(str(kubectl))}:"$PATH"\n'
        )

    def down(self, grace: float = 10.0) -> list[str]:
        """Stop every program (newest first), wait until no port of theirs is held, and
        remove the sandbox's folder. The names of the programs stopped; [] when none ran."""
        with self._locked():
            state = self.recorded()
            stopped = self._stop(state, grace)
            self._clear(None)
            return stopped

    def _stop(self, state: SandboxState | None, grace: float) -> list[str]:
        if state is None:
            return []
        stopped = []
        for program in reversed(state.programs):
            if program.process.alive():
                stop_group(program.process, grace)
                stopped.append(program.name)
        held = _wait_ports_free(state.ports.values(), 10)
        if held:
            raise StartupError(
                f"ports still held after the sandbox stopped: {', '.join(map(str, held))}"
            )
        return stopped

    def _clear(self, leftover: SandboxState | None) -> None:
        """Stop what a stale record still names; remove the folder (keep the lock)."""
        self._stop(leftover, 5)
        if self.root.is_dir():
            shutil.rmtree(self.root)

    def log_tails(self, lines: int = 20) -> str:
        """The end of each program's log (for a failed start)."""
        if not self.logs.is_dir():
            return ""
        return "\n".join(
            f"--- {log.name}\n{tail(log, lines)}" for log in sorted(self.logs.glob("*.log"))
        )


def _recorded(program: Program) -> ProgramState:
    assert program.pid is not None
    return ProgramState(program.name, program.pid.pid, program.pid.started, str(program.log))


def _wait_ports_free(ports: Sequence[int] | Any, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    held = [p for p in ports if not port_free(p)]
    while held and time.monotonic() < deadline:
        time.sleep(0.1)
        held = [p for p in held if not port_free(p)]
    return held
