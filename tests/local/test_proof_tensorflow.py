"""TensorFlow MultiWorkerMirroredStrategy under run-local: 2 workers from TF_CONFIG."""

from __future__ import annotations

import pytest

from tests.local.proofs import require, results, run_example
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.proof


def test_both_workers_see_the_same_cluster_and_train_together() -> None:
    require("tensorflow")
    outcome, out, err = run_example(EXAMPLES / "local-tensorflow" / "tfjob.yaml", timeout=150)
    assert outcome.code == 0, err + out
    assert outcome.message == "job succeeded: Worker 0 succeeds"
    found = results(out)
    assert sorted(found) == ["local-mwms-worker-0", "local-mwms-worker-1"]
    # Each worker's gRPC server binds 0.0.0.0:<port>, so worker 1 got a port of its own.
    cluster = {"worker": ["127.0.0.2:2222", "127.0.0.3:2223"]}
    assert [r["cluster"] for r in found.values()] == [cluster, cluster]
    assert [found[f"local-mwms-worker-{i}"]["task"] for i in (0, 1)] == [
        {"type": "worker", "index": 0},
        {"type": "worker", "index": 1},
    ]
    first = found["local-mwms-worker-0"]
    assert first["loss_after"] < first["loss_before"] / 10
    assert found["local-mwms-worker-1"]["weights"] == first["weights"]
