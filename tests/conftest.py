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
def _caches_of_this_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The schema cache (``check.schema_cache``) and kubectl's discovery cache in folders
    of this session's, not the user's: every session starts cold, as a new user does,
    and leaves nothing behind (kubectl keeps a folder per API server address, and every
    control plane of a session has new ports: ~/.kube/cache grew by a GB a week)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        patch.setenv("KUBECACHEDIR", str(tmp_path_factory.mktemp("kube-cache")))
        patch.delenv("TRAINJOBS_NO_CACHE", raising=False)
        yield
