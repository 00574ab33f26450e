"""Caffe2's redis backend under run-local: Debian's redis-server, started on a free port
through the stack's RedisBackend, and 3 workers that meet through it with the Caffe2Job's
REDIS_HOST/REDIS_PORT/RUN_ID/NUM_SHARDS/SHARD_ID and agree on the member list."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from tests.local.proofs import require, results, run_example
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.proof
EXAMPLE = EXAMPLES / "local-caffe2"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_workers_agree_on_the_members_through_a_real_redis(tmp_path: Path) -> None:
    require("redis")
    assert shutil.which("redis-server"), "run `make proof-deps` (make test does)"
    shutil.copy(EXAMPLE / "rendezvous.py", tmp_path)
    port = _free_port()
    text = (EXAMPLE / "caffe2job.yaml").read_text().replace("port: 16379", f"port: {port}")
    (tmp_path / "caffe2job.yaml").write_text(text)
    outcome, out, err = run_example(tmp_path / "caffe2job.yaml", timeout=90, job="local-caffe2")
    assert outcome.code == 0, err + out
    assert outcome.message == "job succeeded: every worker succeeds"
    found = results(out)
    names = ["local-caffe2-worker-0", "local-caffe2-worker-1", "local-caffe2-worker-2"]
    assert sorted(found) == names
    assert [found[n]["shard"] for n in names] == [0, 1, 2]
    assert {r["shards"] for r in found.values()} == {3}
    # One RUN_ID for the whole job: the shards met under one key prefix.
    assert len({r["run_id"] for r in found.values()}) == 1
    assert all(r["members"] == names for r in found.values())
    # REDIS_HOST (the backend's Service name) became the backend's address.
    assert f"rendezvous             127.0.0.5  {port}" in err
    assert "--requirepass <redacted>" in err
