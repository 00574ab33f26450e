"""PyTorch DDP (gloo, CPU) under run-local: 1 master and 2 workers really train together."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.local.proofs import require, results, run_example
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.proof
EXAMPLE = EXAMPLES / "local-pytorch"


def test_ddp_trains_and_every_rank_ends_with_the_same_parameters() -> None:
    require("torch")
    outcome, out, err = run_example(EXAMPLE / "pytorchjob.yaml", timeout=150)
    assert outcome.code == 0, err + out
    assert outcome.message == "job succeeded: the Master succeeds"
    found = results(out)
    assert sorted(found) == ["local-ddp-master-0", "local-ddp-worker-0", "local-ddp-worker-1"]
    assert sorted(r["rank"] for r in found.values()) == [0, 1, 2]
    assert {r["world"] for r in found.values()} == {3}
    master = found["local-ddp-master-0"]
    assert master["loss_after"] < master["loss_before"] / 100
    # DDP averages gradients, so every rank holds bit-identical parameters.
    assert all(r["params"] == master["params"] for r in found.values())
    # ... close to the weights the synthetic data was made from.
    assert master["params"] == pytest.approx([2.0, -3.0, 0.5, 1.0, 0.7], abs=0.05)
    assert "local-ddp-worker-1 | rank 2 of 3, master 127.0.0.2:23456" in out


def test_a_wrong_world_size_fails_within_the_timeout(tmp_path: Path) -> None:
    require("torch")
    shutil.copy(EXAMPLE / "train.py", tmp_path)
    text = (EXAMPLE / "pytorchjob.yaml").read_text()
    # The operator multiplies WORLD_SIZE by nprocPerNode: 2 pods x 2 = 4, but the
    # command starts one process per pod, so rank 0 waits for ranks that never come.
    text = text.replace('nprocPerNode: "1"', 'nprocPerNode: "2"').replace(
        "replicas: 2", "replicas: 1"
    )
    (tmp_path / "pytorchjob.yaml").write_text(text)
    outcome, out, err = run_example(tmp_path / "pytorchjob.yaml", timeout=20)
    assert outcome.code == 124, err + out
    assert outcome.message.startswith(
        "timed out after 20s and stopped every replica; still running: local-ddp-master-0 (pid "
    )
    assert "local-ddp-worker-0 (pid " in outcome.message
    assert "compare the rendezvous env (WORLD_SIZE, RANK" in outcome.message
    assert results(out) == {}
    assert err.rstrip().endswith(outcome.message)
