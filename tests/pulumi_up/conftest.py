"""Fixtures of the ``pulumi up`` proofs: the real control plane, and the Pulumi programs.

``cluster`` is the session's control plane of tests/cluster (one per test session,
shared with the cluster proofs); ``pulumi_dirs`` builds the Pulumi CLI, the Python
language host and the Kubernetes provider on first use (tests/cluster/build.sh).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cluster.conftest import cluster, kwok_node, pytest_runtest_makereport
from tests.pulumi_up.pulumi_cli import PulumiError, bin_dirs

__all__ = ["cluster", "kwok_node", "pulumi_dirs", "pytest_runtest_makereport"]


@pytest.fixture(scope="session")
def pulumi_dirs() -> list[Path]:
    """The bin folders of the Pulumi programs (built once per machine)."""
    try:
        return bin_dirs(build=True)
    except PulumiError as exc:
        pytest.fail(str(exc), pytrace=False)
