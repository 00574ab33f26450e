"""The ssh side of MPI jobs, played locally.

On a cluster an MPI launcher reaches its workers over ssh (MPI Operator v2) or
``kubectl exec`` (Training Operator v1): ``mpirun`` runs ``<agent> <host>
orted …`` for every host of the hostfile. Locally there is no sshd, so:

* a replica marked ``remote_shell`` (an MPI worker) runs ``agent.py serve``: it only
  waits, standing in for the ssh server, until run-local stops it;
* every replica of such a job gets ``OMPI_MCA_plm_rsh_agent`` (and the Intel MPI
  / MPICH equivalents) pointing at a script that runs ``agent.py agent``; it skips ssh's
  options, looks the host — a loopback address, since the hostfile was
  rewritten — up in ``<folder>/<address>.json`` and runs the remote command
  with ``/bin/sh -c`` in that worker's working directory and environment, as
  sshd would on the worker.

The remote command's output reaches ``mpirun`` (and so the launcher's log), as
it would through ssh.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["AGENT_ENV", "agent_env", "agent_script", "host_file", "remote_command"]

# ssh options that take a value (``ssh -o X -p 22 host cmd``).
_WITH_VALUE = frozenset("bcDEeFIiJLlmOopQRSWw")

AGENT_ENV = (
    "OMPI_MCA_plm_rsh_agent",  # Open MPI
    "I_MPI_HYDRA_BOOTSTRAP_EXEC",  # Intel MPI (with I_MPI_HYDRA_BOOTSTRAP=rsh)
    "HYDRA_LAUNCHER_EXEC",  # MPICH (with HYDRA_LAUNCHER=rsh)
)
"""Variables that name the remote-shell program; run-local points them at its agent."""


def agent_env(agent: str) -> dict[str, str]:
    """The env that makes Open MPI, Intel MPI and MPICH use ``agent`` instead of ssh."""
    env = dict.fromkeys(AGENT_ENV, agent)
    env["I_MPI_HYDRA_BOOTSTRAP"] = "rsh"
    env["HYDRA_LAUNCHER"] = "rsh"
    return env


def agent_script(python: str, folder: Path) -> str:
    """The agent: a shell script, since MPI runs the agent setting as one program path."""
    return f"#!/bin/sh\nexec '{python}' -m trainjobs.local.agent agent '{folder}' \"$@\"\n"


def host_file(name: str, cwd: Path, env: Mapping[str, str], unset: Sequence[str]) -> bytes:
    """What the agent needs to run a command "on" a worker: its env, folder and name.

    ``unset`` names variables the other replicas' containers set, which the
    agent (started by the launcher) must not pass on: sshd would not.
    """
    data = {"name": name, "cwd": str(cwd), "env": dict(env), "unset": sorted(unset)}
    return json.dumps(data, indent=1, sort_keys=True).encode()


def remote_command(args: Sequence[str]) -> tuple[str, str]:
    """(host, command) from an ssh-style argument list: ``-o X host orted -mca …``."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        option = args[i]
        i += 2 if len(option) == 2 and option[1] in _WITH_VALUE else 1
    if i >= len(args):
        raise ValueError("no host given")
    return args[i], " ".join(args[i + 1 :])
