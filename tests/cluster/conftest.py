"""The ``cluster`` fixture: one real control plane for the whole test session.

Started on first use (a few seconds once the programs are built; the first run on a
machine builds them with tests/cluster/build.sh), stopped when the session ends —
also on a failure or Ctrl-C. Its programs' logs stay under pytest's temporary folder
(``<basetemp>/cluster0/logs``), and the end of each is attached to the report of any
failing test that used it.
"""

from __future__ import annotations

import sys
from collections.abc import Generator, Iterator

import pytest

from tests.cluster.control_plane import KWOK_ANNOTATION, ControlPlane, running_for_tests


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """etcd, kube-apiserver, controller-manager, scheduler, kwok and the Kubeflow operators."""
    with running_for_tests(ControlPlane(tmp_path_factory.mktemp("cluster"))) as plane:
        _STARTED.append(plane.started_in)
        _PLANES.append(plane)
        yield plane


@pytest.fixture(scope="module")
def kwok_node(cluster: ControlPlane) -> Iterator[str]:
    """One large, untainted kwok node for a module's pods; removed (with its pods) after.

    Module-scoped on purpose: tests/cluster/test_scheduling.py needs a cluster with
    only the nodes of its pools.
    """
    name = "kwok-any"
    # Ephemeral storage as every real node reports it: the MPIJob v1 launcher's
    # kubectl-delivery init container requests 5Gi of it.
    capacity = {
        "cpu": "1000",
        "memory": "4Ti",
        "ephemeral-storage": "1Ti",
        "nvidia.com/gpu": "64",
        "pods": "500",
    }
    cluster.client.create(
        "/api/v1/nodes",
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "annotations": {KWOK_ANNOTATION: "fake"},
                "labels": {"kubernetes.io/hostname": name, "type": "kwok"},
            },
            "status": {"capacity": capacity, "allocatable": capacity},
        },
    )
    try:
        yield name
    finally:
        cluster.kubectl(
            "delete",
            "pods",
            "-A",
            f"--field-selector=spec.nodeName={name}",
            "--grace-period=0",
            "--force",
            check=False,
        )
        cluster.client.delete(f"/api/v1/nodes/{name}")


_STARTED: list[float] = []
"""How long the session's control plane took to start (for the summary line)."""

_PLANES: list[ControlPlane] = []
"""The session's control plane, once started."""


def pytest_runtest_setup(item: pytest.Item) -> None:
    # Every later test shares the one control plane: once etcd or the API server is gone
    # (a full disk kills etcd), each would fail only after its own timeouts, for hours.
    if "cluster" not in getattr(item, "fixturenames", ()):
        return
    for plane in _PLANES:
        if reason := plane.broken():
            pytest.exit(
                f"the tests' control plane can serve no more ({item.nodeid} and the rest "
                f"not run): {reason}\nevery program's log: {plane.logs}",
                returncode=1,
            )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for seconds in _STARTED:
        terminalreporter.write_line(f"tests/cluster: control plane started in {seconds:.1f}s")
    # The Kueue proof's agreement table, when it ran (a fixture's teardown output is lost).
    # (pytest imports test modules of this folder, which has no __init__.py, by basename.)
    for name, module in list(sys.modules.items()):
        if name.rsplit(".", 1)[-1] == "test_kueue_admission":
            for line in module.agreement():
                terminalreporter.write_line(line)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    plane = getattr(item, "funcargs", {}).get("cluster")
    if report.failed and isinstance(plane, ControlPlane):
        report.sections.append(("control plane logs (last lines)", plane.log_tails()))
    return report
