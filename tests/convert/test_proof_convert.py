"""run-local of a PyTorchJob and of the TrainJob `trainjobs convert` made of it: both run
the same DDP training with gloo (`python train.py`, reading MASTER_ADDR, MASTER_PORT,
WORLD_SIZE and RANK as the v1 operator set them) and end with the same parameters."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.local.proofs import require, results, run_example
from tests.support.paths import EXAMPLES
from trainjobs.convert import convert_text

pytestmark = pytest.mark.proof
EXAMPLE = EXAMPLES / "local-pytorch"


def test_the_converted_job_trains_as_the_original(tmp_path: Path) -> None:
    require("torch")
    shutil.copy(EXAMPLE / "train.py", tmp_path)
    source = (EXAMPLE / "pytorchjob.yaml").read_text()
    conversion = convert_text(source, "pytorchjob.yaml", tmp_path)
    ((_, converted),) = conversion.texts.values()
    (tmp_path / "trainjob.yaml").write_text(converted)

    outcome, out, err = run_example(EXAMPLE / "pytorchjob.yaml", timeout=150)
    assert outcome.code == 0, err + out
    before = results(out)
    outcome, out, err = run_example(tmp_path / "trainjob.yaml", timeout=150)
    assert outcome.code == 0, err + out
    after = results(out)

    assert sorted(after) == ["local-ddp-node-0-0", "local-ddp-node-0-1", "local-ddp-node-0-2"]
    by_rank = {r["rank"]: r for r in before.values()}
    assert sorted(r["rank"] for r in after.values()) == sorted(by_rank) == [0, 1, 2]
    assert {r["world"] for r in after.values()} == {r["world"] for r in before.values()} == {3}
    for found in after.values():
        # Same data, same seeds, same allreduce: the same numbers, bit for bit.
        assert found["params"] == by_rank[found["rank"]]["params"]
        assert found["loss_after"] == by_rank[found["rank"]]["loss_after"]
    # MASTER_ADDR=local-ddp-node-0-0.local-ddp reached node 0 on its loopback address.
    assert "local-ddp-node-0-2 | rank 2 of 3, master 127.0.0.2:23456" in out
