"""What ``run-local`` shows: the plan, each replica's output with its name in front, and a
status table (replica, pid, state, restarts) whenever a replica changes state.

Replica output goes to ``out``; the plan, status tables and the outcome go to
``err``, so a user can still pipe the training output alone. Thread-safe: the
log readers of all replicas write through one lock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from trainjobs.k8s.redact import REDACTED
from trainjobs.local.plan import RUNNER_ENV, LocalPlan
from trainjobs.output import format_table, printable_lines

__all__ = ["Console", "StatusRow"]

_COLORS = (36, 33, 35, 32, 34, 91, 96, 93, 95, 92, 94)
_MIN_SECRET = 4  # hiding "1" or "no" everywhere would hide the output instead


@dataclass(frozen=True)
class StatusRow:
    """One line of the status table."""

    replica: str
    pid: int | None
    state: str
    restarts: int
    exit_code: int | None = None


class Console:
    """Writes everything ``run-local`` prints; ``color`` adds ANSI colours to the prefixes."""

    def __init__(self, out: TextIO, err: TextIO, *, color: bool = False) -> None:
        self._out = out
        self._err = err
        self._color = color
        self._lock = threading.Lock()
        self._width = 0
        self._colors: dict[str, int] = {}
        self._secrets: list[str] = []

    def header(self, plan: LocalPlan) -> None:
        """The job, each replica's address, ports and command, and what the runner adds."""
        self._width = max((len(p.name) for p in plan.processes), default=0)
        # Longest first, so a secret that contains another is hidden whole.
        self._secrets = sorted(
            {v for p in plan.processes for v in p.secrets if len(v) >= _MIN_SECRET},
            key=len,
            reverse=True,
        )
        self._colors = {p.name: _COLORS[i % len(_COLORS)] for i, p in enumerate(plan.processes)}
        images = sorted({p.image for p in plan.processes if p.image})
        rule = plan.lifecycle.success
        replicas = sum(not p.backend for p in plan.processes)
        lines = [
            f"run-local: {plan.title}, {replicas} replicas; succeeds when {rule.summary}",
            f"  images (not pulled; commands run on this machine): {', '.join(images) or '-'}",
        ]
        rows = [("REPLICA", "ADDRESS", "PORTS", "RESTART", "COMMAND")]
        for p in plan.processes:
            ports = ",".join(
                str(local) if local == port else f"{port}->{local}" for port, local in p.ports
            )
            rows.append(
                (
                    p.name,
                    p.address,
                    ports or "-",
                    p.replica.restart_policy + (" (backend)" if p.backend else ""),
                    _short(self.redact(p.command_line), 80),
                )
            )
        lines += ["  " + line for line in format_table(rows).splitlines()]
        added = " ".join(f"{k}={v}" for k, v in RUNNER_ENV.items())
        lines.append(
            f"  runner env (the container's own env wins): {added}; "
            "TMPDIR a folder of each replica's own (a pod's /tmp)"
        )
        limit = plan.lifecycle.backoff_limit
        if limit is not None:
            lines.append(f"  backoffLimit: {limit} restarts in all")
        order: dict[str, tuple[tuple[str, str], ...]] = {}
        for p in plan.processes:
            if p.replica.depends_on:
                order.setdefault(p.replica.role, p.replica.depends_on)
        for role, needs in order.items():
            waits = ", ".join(f"{other} {status}" for other, status in needs)
            lines.append(f"  order: {role} starts once {waits} (dependsOn)")
        lines += [f"  note: {note}" for note in plan.notes]
        skipped = sorted({s for p in plan.processes for s in p.skipped})
        if skipped:
            lines.append(f"  not run (init and extra containers): {', '.join(skipped)}")
        self._write_err("\n".join(lines))

    def log(self, name: str, line: str) -> None:
        """One line of a replica's output, with its name in front."""
        prefix = name.ljust(self._width)
        if self._color:
            prefix = f"\x1b[{self._colors.get(name, 0)}m{prefix}\x1b[0m"
        with self._lock:
            self._out.write(f"{prefix} | {self.redact(line.rstrip())}\n")
            self._out.flush()

    def status(self, rows: Sequence[StatusRow]) -> None:
        """The status table of every replica."""
        table: list[tuple[str, str, str, str]] = [("REPLICA", "PID", "STATE", "RESTARTS")]
        for row in rows:
            state = row.state if row.exit_code is None else f"{row.state} (exit {row.exit_code})"
            table.append((row.replica, str(row.pid or "-"), state, str(row.restarts)))
        self._write_err(format_table(table))

    def message(self, text: str) -> None:
        """A line from the runner itself."""
        self._write_err(f"run-local: {text}")

    def redact(self, text: str) -> str:
        """``text`` with every value that came from a Secret replaced by ``<redacted>``."""
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text

    def _write_err(self, text: str) -> None:
        # The plan, tables and messages quote the job's names and commands: any control
        # character in them is shown escaped. Replica output (``log``) is the program's own.
        with self._lock:
            self._err.write(printable_lines(self.redact(text)) + "\n")
            self._err.flush()


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
