"""The tests' control plane: :mod:`trainjobs.sandbox`'s, attached to the test session.

One implementation: the programs, certificates, kwok stages and operator installs are
the sandbox's (``trainjobs/sandbox/``). Here the control plane is *attached* (its
programs die with the test process, even when pytest is killed), named
``trainjobs-test``, and the MPI Operator is required. ``tests/cluster/conftest.py``
wraps it in a session fixture; ``python -m tests.cluster.control_plane`` starts one by
hand and prints its kubeconfig until Ctrl-C (``trainjobs sandbox up`` is the product's
way, one per folder).
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from trainjobs.sandbox import (
    BINARIES,
    KWOK_ANNOTATION,
    ApiError,
    ControlPlane,
    StartupError,
    binaries,
    free_ports,
)
from trainjobs.sandbox.control_plane import MPI_OPERATOR_HEALTH_PORT
from trainjobs.sandbox.installs import CRD_PREFERRED, shipped_runtimes
from trainjobs.sandbox.kwok import KWOK_STAGES
from trainjobs.sandbox.programs import port_free

__all__ = [
    "BINARIES",
    "CRD_PREFERRED",
    "KWOK_ANNOTATION",
    "KWOK_STAGES",
    "ApiError",
    "ControlPlane",
    "StartupError",
    "binaries",
    "free_ports",
    "running_for_tests",
    "shipped_runtimes",
    "started",
]


@contextlib.contextmanager
def started(workdir: Path) -> Iterator[ControlPlane]:
    """``with started(dir) as cp``: a running control plane, stopped on exit."""
    with ControlPlane(workdir) as cp:
        yield cp


@contextlib.contextmanager
def running_for_tests(plane: ControlPlane) -> Iterator[ControlPlane]:
    """``plane`` started for a fixture and stopped on exit; a start that fails stops what
    started and fails the test with the end of each program's log."""
    runs_mpi = plane.mpi_operator == "yes" and plane.operators.mpi_operator is not None
    if runs_mpi and not port_free(MPI_OPERATOR_HEALTH_PORT):
        pytest.fail(
            f"port {MPI_OPERATOR_HEALTH_PORT} is taken, and the MPI Operator the tests run "
            "always binds it (its health port is fixed in its code): a sandbox started "
            "without --no-mpi-operator holds it (`trainjobs sandbox status` in its folder; "
            "`make demo-down` or `trainjobs sandbox down` stops it)",
            pytrace=False,
        )
    try:
        plane.start()
    except (StartupError, OSError) as exc:
        tails = plane.log_tails()
        plane.stop()
        pytest.fail(f"the control plane did not start: {exc}\n{tails}", pytrace=False)
    try:
        yield plane
    finally:
        plane.stop()


def main() -> int:
    """Start a control plane in a temporary folder and keep it until Ctrl-C."""
    with tempfile.TemporaryDirectory(prefix="trainjobs-cluster-") as tmp, started(Path(tmp)) as cp:
        print(f"control plane ready in {cp.started_in:.1f}s", flush=True)
        print(f"export KUBECONFIG={cp.kubeconfig}", flush=True)
        print(f"logs: {cp.logs}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(1)
                cp.alive()
    return 0


if __name__ == "__main__":
    sys.exit(main())
