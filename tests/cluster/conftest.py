"""The ``cluster`` fixture: one real control plane for the whole test session.

Started on first use (a few seconds once the programs are built; the first run on a
machine builds them with tests/cluster/build.sh), stopped when the session ends —
also on a failure or Ctrl-C. Its programs' logs stay under pytest's temporary folder
(``<basetemp>/cluster0/logs``), and the end of each is attached to the report of any
failing test that used it.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

import pytest

from tests.cluster.control_plane import ControlPlane, StartupError


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """etcd, kube-apiserver, controller-manager, scheduler, kwok and the Kubeflow operators."""
    plane = ControlPlane(tmp_path_factory.mktemp("cluster"))
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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    plane = getattr(item, "funcargs", {}).get("cluster")
    if report.failed and isinstance(plane, ControlPlane):
        report.sections.append(("control plane logs (last lines)", plane.log_tails()))
    return report
