from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.support.snapshots import YamlSnapshot


@pytest.fixture
def yaml_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """``assert text == yaml_snapshot``: one ``.yaml`` file per test case."""
    return snapshot.use_extension(YamlSnapshot)
