"""JAX (CPU) under run-local: 2 workers initialise jax.distributed from the JAXJob env."""

from __future__ import annotations

import pytest

from tests.local.proofs import require, results, run_example
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.proof


def test_two_processes_meet_at_the_coordinator_and_psum() -> None:
    require("jax")
    outcome, out, err = run_example(EXAMPLES / "local-jax" / "jaxjob.yaml", timeout=120)
    assert outcome.code == 0, err + out
    assert outcome.message == "job succeeded: every Worker succeeds"
    found = results(out)
    assert sorted(found) == ["local-jax-worker-0", "local-jax-worker-1"]
    assert [found[f"local-jax-worker-{i}"]["process"] for i in (0, 1)] == [0, 1]
    for result in found.values():
        assert result["processes"] == 2
        assert result["seen"] == [0, 1]
        # 1 + 2 across the processes' devices: a real cross-process collective.
        assert result["psum"] == 3.0
        # COORDINATOR_ADDRESS=local-jax-worker-0 became worker 0's address.
        assert result["coordinator"] == "127.0.0.2:6666"
