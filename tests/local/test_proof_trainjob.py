"""A Kubeflow Trainer v2 TrainJob (torch-distributed, 2 nodes) under run-local: torchrun on
each node pod of JobSet's Indexed Job, gloo on loopback, one allreduce checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.local.proofs import require, results, run_example
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.proof
EXAMPLE = EXAMPLES / "local-trainjob"


def test_two_node_pods_rendezvous_through_torchrun_and_allreduce() -> None:
    require("torch")
    outcome, out, err = run_example(EXAMPLE / "trainjob.yaml", timeout=150)
    assert outcome.code == 0, err + out
    assert outcome.message == "job succeeded: every pod succeeds (JobSet successPolicy All)"
    found = results(out)
    # One replica per pod, named by its hostname <jobset>-<replicatedJob>-<job>-<index>.
    assert sorted(found) == ["local-tj-node-0-0", "local-tj-node-0-1"]
    # Trainer turned numProcPerNode auto into the CPU request (1): 2 nodes x 1 process.
    assert {name: (r["node_rank"], r["rank"]) for name, r in found.items()} == {
        "local-tj-node-0-0": (0, 0),
        "local-tj-node-0-1": (1, 1),
    }
    assert {(r["world"], r["nnodes"]) for r in found.values()} == {(2, 2)}
    # 1 + 2: what the two ranks' contributions sum to, on both.
    assert {(r["sum"], r["expected"]) for r in found.values()} == {(3.0, 3.0)}
    # PET_MASTER_ADDR=local-tj-node-0-0.local-tj reached node 0 on its loopback address.
    assert "local-tj-node-0-1 | rank 1 of 2 on node 1, master 127.0.0.2:29500" in out
    assert "local-tj-node-0-0  127.0.0.2  29500  OnFailure  torchrun train.py" in err


def test_a_wrong_node_count_fails_within_the_timeout(tmp_path: Path) -> None:
    require("torch")
    (tmp_path / "train.py").write_bytes((EXAMPLE / "train.py").read_bytes())
    text = (EXAMPLE / "trainjob.yaml").read_text()
    # A command that hard-codes torchrun's --nnodes=2 (over PET_NNODES) while the
    # TrainJob runs 1 node: node 0 waits for a node that never comes.
    text = text.replace("numNodes: 2", "numNodes: 1").replace(
        'command: ["torchrun", "train.py"]', 'command: ["torchrun", "--nnodes=2", "train.py"]'
    )
    assert "--nnodes=2" in text
    (tmp_path / "trainjob.yaml").write_text(text)
    outcome, out, err = run_example(tmp_path / "trainjob.yaml", timeout=20)
    assert outcome.code == 124, err + out
    assert outcome.message.startswith(
        "timed out after 20s and stopped every replica; still running: local-tj-node-0-0 (pid "
    )
    assert results(out) == {}
