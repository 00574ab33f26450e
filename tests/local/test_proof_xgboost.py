"""Distributed XGBoost (CPU) under run-local: the master's tracker at MASTER_ADDR:MASTER_PORT,
3 replicas training one model together."""

from __future__ import annotations

import pytest

from tests.local.proofs import require, results, run_example
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.proof


def test_three_replicas_build_one_model_through_the_masters_tracker() -> None:
    require("xgboost")
    outcome, out, err = run_example(EXAMPLES / "local-xgboost" / "xgboostjob.yaml", timeout=120)
    assert outcome.code == 0, err + out
    assert outcome.message == "job succeeded: the Master succeeds"
    found = results(out)
    assert sorted(found) == ["local-xgb-master-0", "local-xgb-worker-0", "local-xgb-worker-1"]
    # RANK: master 0, worker i → i + 1, as the operator sets it.
    assert [found[n]["rank"] for n in sorted(found)] == [0, 1, 2]
    assert {r["world"] for r in found.values()} == {3}
    master = found["local-xgb-master-0"]
    assert master["rmse_last"] < master["rmse_first"] / 5
    # Histograms are all-reduced every round: every replica holds the same trees.
    assert all(r["grid"] == master["grid"] for r in found.values())
