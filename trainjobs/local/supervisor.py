"""Run a plan's processes under the operator's rules until the job succeeds, fails or is stopped.

* Restarts follow each replica's policy: ``Never`` keeps a failure, ``OnFailure``
  restarts a failed replica, ``Always`` restarts on any exit, ``ExitCode``
  restarts on exit codes >= 128 and keeps 1-127 as a failure. Restarts are
  summed over the job and checked against ``backoffLimit``.
* The framework's success policy decides success; a failure that is not
  retried fails the job unless its replica type is tolerated.
* Backends the job uses (a RedisBackend's Deployment) start first; the job's
  replicas start once every backend port accepts connections.
* A replica that depends on others (JobSet ``dependsOn``: a Trainer initializer
  before the ``node`` pods) starts once they have completed (or started, for
  ``Ready``); it shows as pending until then.
* Once the outcome is known, or on the timeout (``--timeout`` or the job's
  ``activeDeadlineSeconds``), Ctrl-C or SIGTERM, every process group gets
  SIGTERM, then SIGKILL after its grace period.

Exit codes: 0 succeeded, 1 failed, 124 timed out, 130 interrupted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from trainjobs.local.plan import LocalPlan, ProcessSpec
from trainjobs.local.ui import Console, StatusRow

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_SUCCEEDED",
    "EXIT_TIMED_OUT",
    "Outcome",
    "Supervisor",
]

EXIT_SUCCEEDED = 0
EXIT_FAILED = 1
EXIT_TIMED_OUT = 124
EXIT_INTERRUPTED = 130

_POLL_SECONDS = 0.05
_NO_HANDLER = object()
_BACKEND_READY_SECONDS = 30


@dataclass(frozen=True)
class Outcome:
    """How the run ended: the exit code and why."""

    code: int
    message: str


@dataclass
class _Replica:
    spec: ProcessSpec
    state: str = "pending"
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    exit_code: int | None = None
    restart_at: float | None = None
    last_line: str = ""
    readers: list[threading.Thread] = field(default_factory=list)

    @property
    def alive(self) -> bool:
        return self.state in ("pending", "running", "restarting")


class _Stop(Exception):
    """Raised in the main thread by SIGTERM, like KeyboardInterrupt for Ctrl-C."""


class Supervisor:
    """Starts every replica of ``plan`` and enforces the job's rules.

    ``environ`` is the environment every process starts from (this machine's,
    plus the runner's additions); each replica's container env is laid over it.
    ``timeout`` (seconds) stops the run; ``restart_delay`` is the pause before a
    restart (the kubelet backs off for 10 s and more; locally a second is plenty).
    """

    def __init__(
        self,
        plan: LocalPlan,
        console: Console,
        environ: Mapping[str, str],
        *,
        timeout: float | None = None,
        restart_delay: float = 1.0,
    ) -> None:
        self._plan = plan
        self._console = console
        self._environ = dict(environ)
        self._timeout = timeout
        self._restart_delay = restart_delay
        self._replicas = [_Replica(spec) for spec in plan.processes]
        self._restarts = 0
        self._shown: list[StatusRow] = []

    # ----- public ----------------------------------------------------------

    def run(self) -> Outcome:
        """Run until the job's outcome is known; every process is stopped on return."""
        previous = self._install_sigterm()
        started = time.monotonic()
        try:
            backends = [r for r in self._replicas if r.spec.backend]
            for replica in backends:
                self._start(replica)
            outcome = self._await_backends(backends) if backends else None
            if outcome is None:
                self._start_ready()
                self._show()
                outcome = self._watch(started)
        except (KeyboardInterrupt, _Stop):
            outcome = Outcome(EXIT_INTERRUPTED, "interrupted; stopped every replica")
        finally:
            self._stop_all()
            if previous is not _NO_HANDLER:
                signal.signal(signal.SIGTERM, previous)
        self._show()
        return outcome

    # ----- processes -------------------------------------------------------

    def _start(self, replica: _Replica) -> None:
        spec = replica.spec
        env = {**self._environ, **spec.env}
        try:
            process = subprocess.Popen(
                list(spec.argv),
                cwd=spec.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                # A group of its own: stopping the replica stops what it started
                # (torchrun's workers, mpirun's daemons), and Ctrl-C reaches only us.
                start_new_session=True,
            )
        except OSError as exc:
            replica.state, replica.exit_code = "failed", 127
            replica.last_line = f"cannot start {spec.argv[0]!r}: {exc.strerror or exc}"
            self._console.message(f"{spec.name}: {replica.last_line}")
            return
        replica.process, replica.state, replica.exit_code = process, "running", None
        reader = threading.Thread(
            target=self._read, args=(replica, process), name=f"log-{spec.name}", daemon=True
        )
        reader.start()
        replica.readers.append(reader)

    def _waits(self, replica: _Replica) -> list[str]:
        """What ``replica`` still waits for (JobSet ``dependsOn``): ``role status`` each."""
        waiting = []
        for role, status in replica.spec.replica.depends_on:
            others = [r for r in self._replicas if r.spec.replica.role == role]
            done = ("succeeded",) if status == "Complete" else ("running", "succeeded")
            if not all(r.state in done for r in others):
                waiting.append(f"{role} {status}")
        return waiting

    def _start_ready(self) -> bool:
        """Start every pending replica that waits for nothing; whether one started."""
        started = False
        for replica in self._replicas:
            if replica.spec.backend or replica.state != "pending" or self._waits(replica):
                continue
            needs = replica.spec.replica.depends_on
            if needs and replica.spec.replica.index == 0:
                met = ", ".join(f"{role} {status}" for role, status in needs)
                self._console.message(f"{replica.spec.replica.role}: {met}; starting")
            self._start(replica)
            started = True
        return started

    def _read(self, replica: _Replica, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        for raw in iter(process.stdout.readline, b""):
            line = raw.decode(errors="replace").rstrip("\r\n")
            replica.last_line = line or replica.last_line
            self._console.log(replica.spec.name, line)
        process.stdout.close()

    def _await_backends(self, backends: list[_Replica]) -> Outcome | None:
        """Wait until every backend accepts connections on its ports, as a readiness probe."""
        deadline = time.monotonic() + _BACKEND_READY_SECONDS
        waiting = [(r, port) for r in backends for _, port in r.spec.ports]
        while waiting:
            replica, port = waiting[0]
            if replica.process is None or replica.process.poll() is not None:
                self._show()
                return Outcome(
                    EXIT_FAILED,
                    f"backend {replica.spec.name} ended before it was ready; "
                    f"last output: {replica.last_line!r}",
                )
            try:
                socket.create_connection((replica.spec.address, port), timeout=0.5).close()
                waiting.pop(0)
                continue
            except OSError:
                pass
            if time.monotonic() > deadline:
                return Outcome(
                    EXIT_FAILED,
                    f"backend {replica.spec.name} accepted no connection on "
                    f"{replica.spec.address}:{port} within {_BACKEND_READY_SECONDS}s; "
                    f"last output: {replica.last_line!r}",
                )
            time.sleep(_POLL_SECONDS)
        self._console.message(f"backends ready: {', '.join(r.spec.name for r in backends)}")
        return None

    def _stop_all(self) -> None:
        for replica in self._replicas:
            code = replica.process.poll() if replica.process is not None else None
            if replica.state == "running" and code is not None:  # ended before the verdict
                replica.state = "succeeded" if code == 0 else "failed"
                replica.exit_code = code
        running = [r for r in self._replicas if r.state == "running"]
        for replica in running:
            _signal_group(replica.process, signal.SIGTERM)
        deadline = time.monotonic() + max((r.spec.grace_seconds for r in running), default=0)
        for replica in running:
            assert replica.process is not None
            try:
                replica.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(replica.process, signal.SIGKILL)
                replica.process.wait()
            if replica.alive:
                replica.state, replica.exit_code = "stopped", replica.process.returncode
        for replica in self._replicas:
            if replica.process is not None:
                # Whatever the replica started may outlive it in its group.
                _signal_group(replica.process, signal.SIGKILL)
            if replica.state in ("pending", "restarting"):
                replica.state = "stopped"
            for reader in replica.readers:
                reader.join(timeout=2)

    # ----- rules -----------------------------------------------------------

    def _watch(self, started: float) -> Outcome:
        lifecycle = self._plan.lifecycle
        deadline_rule = lifecycle.active_deadline_seconds
        changed = True  # a replica may have failed to start
        while True:
            now = time.monotonic()
            for replica in self._replicas:
                if replica.state == "restarting" and (replica.restart_at or 0) <= now:
                    self._start(replica)
                    changed = True
                elif replica.state == "running" and replica.process is not None:
                    code = replica.process.poll()
                    if code is not None:
                        outcome = self._exited(replica, code)
                        changed = True
                        if outcome is not None:
                            self._show()
                            return outcome
            if changed:
                changed = self._start_ready()
                self._show()
                outcome = self._decide()
                if outcome is not None:
                    return outcome
            elapsed = time.monotonic() - started
            if deadline_rule is not None and elapsed >= deadline_rule:
                return Outcome(
                    EXIT_FAILED,
                    f"the job ran longer than its activeDeadlineSeconds ({deadline_rule}s); "
                    + self._still_running(),
                )
            if self._timeout is not None and elapsed >= self._timeout:
                return Outcome(EXIT_TIMED_OUT, self._timed_out_message())
            time.sleep(_POLL_SECONDS)

    def _exited(self, replica: _Replica, code: int) -> Outcome | None:
        """Apply the restart policy to an exit; an outcome when the job is over."""
        if replica.process is not None:
            for reader in replica.readers:
                reader.join(timeout=1)  # its last lines belong before the verdict
        replica.exit_code = code
        policy = replica.spec.replica.restart_policy
        retry = (
            policy == "Always"
            or (policy == "OnFailure" and code != 0)
            or (policy == "ExitCode" and code >= 128)
            or (policy == "ExitCode" and code < 0)  # killed by a signal: 128 + n in a pod
        )
        if not retry:
            replica.state = "succeeded" if code == 0 else "failed"
            return None
        limit = None if replica.spec.backend else self._plan.lifecycle.backoff_limit
        if limit is not None and self._restarts >= limit:
            replica.state = "failed"
            return Outcome(
                EXIT_FAILED,
                f"{replica.spec.name} exited with code {code} and the job's backoffLimit "
                f"({limit} restarts) is used up; last output: {replica.last_line!r}",
            )
        self._restarts += 0 if replica.spec.backend else 1  # a Deployment's are its own
        replica.restarts += 1
        replica.state = "restarting"
        replica.restart_at = time.monotonic() + self._restart_delay
        self._console.message(
            f"{replica.spec.name} exited with code {code}; restarting ({policy}, "
            f"restart {self._restarts}{f' of {limit}' if limit is not None else ''})"
        )
        return None

    def _decide(self) -> Outcome | None:
        lifecycle = self._plan.lifecycle
        rule = lifecycle.success
        succeeded = {r.spec.name for r in self._replicas if r.state == "succeeded"}
        if rule.satisfied(lifecycle.replicas, succeeded):
            return Outcome(EXIT_SUCCEEDED, f"job succeeded: {rule.summary}")
        for replica in self._replicas:
            role = replica.spec.replica.role
            if replica.state == "failed" and role not in rule.tolerated:
                return Outcome(
                    EXIT_FAILED,
                    f"job failed: {replica.spec.name} exited with code {replica.exit_code} "
                    f"(restartPolicy {replica.spec.replica.restart_policy}); "
                    f"last output: {replica.last_line!r}",
                )
        if not any(r.alive for r in self._replicas if not r.spec.backend):
            return Outcome(
                EXIT_FAILED,
                f"job failed: every replica has ended, but the job succeeds only when "
                f"{rule.summary}",
            )
        return None

    def _still_running(self) -> str:
        alive = [r for r in self._replicas if r.alive]
        if not alive:
            return "no replica is running"
        parts = [
            f"{r.spec.name} (pid {r.process.pid if r.process else '-'}, "
            f"last output: {r.last_line!r})"
            for r in alive
        ]
        return "still running: " + "; ".join(parts)

    def _timed_out_message(self) -> str:
        return (
            f"timed out after {self._timeout:g}s and stopped every replica; "
            f"{self._still_running()}. Replicas that wait without output usually wait "
            "for a peer that never comes: compare the rendezvous env (WORLD_SIZE, RANK, "
            "TF_CONFIG, NUM_PROCESSES …) with the replicas above"
        )

    def _show(self) -> None:
        rows = [
            StatusRow(
                r.spec.name,
                r.process.pid if r.process is not None else None,
                r.state,
                r.restarts,
                r.exit_code if r.state != "running" else None,
            )
            for r in self._replicas
        ]
        if rows != self._shown:
            self._console.status(rows)
            self._shown = rows

    def _install_sigterm(self) -> Any:
        """Make SIGTERM stop the run like Ctrl-C; only the main thread may set handlers."""
        if threading.current_thread() is not threading.main_thread():
            return _NO_HANDLER

        def stop(signum: int, frame: FrameType | None) -> None:
            raise _Stop

        return signal.signal(signal.SIGTERM, stop)


def _signal_group(process: subprocess.Popen[bytes] | None, sig: signal.Signals) -> None:
    if process is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)
