"""Entry point of run-local's ssh stand-in (see ``trainjobs.local.rsh``).

``python -m trainjobs.local.agent agent FOLDER ARGS…`` is what MPI runs instead of
ssh; ``python -m trainjobs.local.agent serve NAME`` is what an MPI worker runs
instead of sshd. Kept apart from ``rsh`` so that running it as ``__main__`` does
not import it twice.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from trainjobs.local.rsh import remote_command

__all__ = ["main"]


def _agent(folder: Path, args: Sequence[str]) -> int:
    try:
        host, command = remote_command(args)
    except ValueError as exc:
        print(f"run-local agent: {exc}: {' '.join(args)}", file=sys.stderr)
        return 255
    path = folder / f"{host}.json"
    if not path.exists():
        known = sorted(p.stem for p in folder.glob("*.json"))
        print(
            f"run-local agent: no replica of this job has the address {host!r} "
            f"(workers: {', '.join(known) or 'none'}); is the hostfile right?",
            file=sys.stderr,
        )
        return 255
    worker = json.loads(path.read_text(encoding="utf-8"))
    env = {k: v for k, v in os.environ.items() if k not in set(worker["unset"])}
    env.update(worker["env"])
    os.chdir(worker["cwd"])
    os.execve("/bin/sh", ["/bin/sh", "-c", command or "true"], env)
    return 0  # pragma: no cover - execve does not return


def _serve(name: str) -> int:
    print(
        f"standing in for {name}'s remote shell (sshd, kubectl exec): "
        "the launcher's commands run here",
        flush=True,
    )

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    while True:
        time.sleep(3600)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m trainjobs.local.agent agent FOLDER ARGS…`` or ``… serve NAME``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) >= 2 and args[0] == "agent":
        return _agent(Path(args[1]), args[2:])
    if len(args) == 2 and args[0] == "serve":
        return _serve(args[1])
    print("usage: python -m trainjobs.local.agent agent FOLDER ARGS… | serve NAME", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
