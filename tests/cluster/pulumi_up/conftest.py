"""Fixtures of the ``pulumi up`` proofs: the Pulumi programs.

The control plane (``cluster``, ``kwok_node``) is tests/cluster's, one per test session:
these proofs live below tests/cluster so that they share it (its MPI Operator's health
port is fixed, so a second control plane in the same session could not start).
``pulumi_dirs`` builds the Pulumi CLI, the Python language host and the Kubernetes
provider on first use (tests/cluster/build.sh).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cluster.pulumi_up.pulumi_cli import PulumiError, bin_dirs


@pytest.fixture(scope="session")
def pulumi_dirs() -> list[Path]:
    """The bin folders of the Pulumi programs (built once per machine)."""
    try:
        return bin_dirs(build=True)
    except PulumiError as exc:
        pytest.fail(str(exc), pytrace=False)
