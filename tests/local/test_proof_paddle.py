"""PaddlePaddle collective (CPU, gloo) under run-local: a PaddleJob of 2 workers, launched by
paddle.distributed.launch from PADDLE_MASTER/PADDLE_NNODES/PADDLE_JOB_ID and POD_IP."""

from __future__ import annotations

import pytest

from tests.local.proofs import require, results, run_example
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.proof


def test_two_trainers_train_one_model() -> None:
    require("paddle")
    outcome, out, err = run_example(EXAMPLES / "local-paddle" / "paddlejob.yaml", timeout=150)
    assert outcome.code == 0, err + out
    assert outcome.message == "job succeeded: every Worker succeeds"
    found = results(out)
    assert sorted(found) == ["local-paddle-worker-0", "local-paddle-worker-1"]
    assert [found[f"local-paddle-worker-{i}"]["rank"] for i in (0, 1)] == [0, 1]
    first = found["local-paddle-worker-0"]
    assert first["world"] == 2
    assert first["loss_after"] < first["loss_before"] / 100
    assert found["local-paddle-worker-1"]["params"] == first["params"]
    # Worker 0 served the rendezvous at PADDLE_MASTER=$(POD_IP_DUMMY):36543.
    assert "GET http://127.0.0.2:36543/local-paddle/info" in out
