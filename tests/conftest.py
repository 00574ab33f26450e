from __future__ import annotations

from collections.abc import Iterator

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.support.snapshots import YamlSnapshot


@pytest.fixture
def yaml_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """``assert text == yaml_snapshot``: one ``.yaml`` file per test case."""
    return snapshot.use_extension(YamlSnapshot)


@pytest.fixture(autouse=True, scope="session")
def _schema_cache_of_this_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The schema cache (``check.schema_cache``) in a folder of this session's, not the
    user's: every session starts cold, as a new user does, and leaves nothing behind."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        patch.delenv("TRAINJOBS_NO_CACHE", raising=False)
        yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``make test`` runs ``-n 2 --dist loadgroup``) the suite is two
    queues, each run in order on a worker of its own: the tests that start a control
    plane (the MPI Operator's fixed :8080 and a sandbox's programs cannot be shared), and
    every other test (run-local's replicas use fixed ports on 127.0.0.2 and up, so those
    tests must not overlap either). The two queues share nothing but the CPUs."""
    for item in items:
        path = item.path.as_posix()
        cluster = "/tests/cluster/" in path or "/tests/sandbox/" in path
        if cluster or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.xdist_group("control-plane"))
        else:
            item.add_marker(pytest.mark.xdist_group("the-rest"))
