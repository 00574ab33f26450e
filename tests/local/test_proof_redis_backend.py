"""A RedisBackend under run-local: Debian's redis-server runs as the backend, and the
job's replicas meet through it with the REDIS_HOST/REDIS_PORT/REDIS_PASSWORD they get."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from tests.local.proofs import require, results, run_example

pytestmark = pytest.mark.proof

MEMBERS = """
import json, os, sys, time
import redis

me, expected = os.environ["POD_NAME"], int(sys.argv[1])
store = redis.Redis(
    host=os.environ["REDIS_HOST"], port=int(os.environ["REDIS_PORT"]),
    password=os.environ["REDIS_PASSWORD"], socket_timeout=5,
)
store.sadd("members", me)
deadline = time.monotonic() + 30
while store.scard("members") < expected and time.monotonic() < deadline:
    time.sleep(0.1)
members = sorted(m.decode() for m in store.smembers("members"))
print("result " + json.dumps({"me": me, "members": members, "host": os.environ["REDIS_HOST"]}))
print("password " + os.environ["REDIS_PASSWORD"])
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _stack(port: int) -> str:
    return f"""
apiVersion: trainjobs.dev/v1alpha1
kind: RedisBackend
metadata: {{name: rendezvous, namespace: training}}
spec: {{port: {port}, password: true}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: meet, namespace: training}}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 3
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: pytorch
              image: trainer:1
              command: [{json.dumps(sys.executable)}, members.py, "3"]
              env: [{{name: POD_NAME, valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}}}]
trainjobs: {{target: pods, backend: rendezvous}}
"""


def test_replicas_meet_through_a_real_redis_server(tmp_path: Path) -> None:
    require("redis")
    (tmp_path / "members.py").write_text(MEMBERS)
    (tmp_path / "stack.yaml").write_text(_stack(_free_port()))
    outcome, out, err = run_example(tmp_path / "stack.yaml", timeout=90, job="meet")
    assert outcome.code == 0, err + out
    found = results(out)
    names = ["meet-worker-0", "meet-worker-1", "meet-worker-2"]
    assert sorted(found) == names
    # Every replica saw every member, through the backend's loopback address.
    assert all(r["members"] == names for r in found.values())
    assert {r["host"] for r in found.values()} == {"127.0.0.5"}
    assert "run-local: backends ready: rendezvous" in err
    # The generated password never shows up in what run-local prints.
    assert "--requirepass <redacted>" in err
    assert out.count("password <redacted>") == 3
