"""The rendezvous of Caffe2's redis backend, played with redis-py (Caffe2 has no wheel).

Caffe2's trainers meet through Redis with what the Caffe2Job controller
injects: REDIS_HOST and REDIS_PORT (the backend), RUN_ID (one key prefix per
run), NUM_SHARDS and SHARD_ID. Each shard writes its key under the run's
prefix and waits until every shard has written one, as Caffe2's
RedisStoreHandler-based rendezvous does; then it prints one ``result`` line of
JSON with the member list it agreed on.
"""

from __future__ import annotations

import json
import os
import time

import redis


def main() -> None:
    run_id, shards = os.environ["RUN_ID"], int(os.environ["NUM_SHARDS"])
    shard = int(os.environ["SHARD_ID"])
    store = redis.Redis(
        host=os.environ["REDIS_HOST"],
        port=int(os.environ["REDIS_PORT"]),
        password=os.environ.get("REDIS_PASSWORD") or None,
        socket_timeout=5,
    )
    store.set(f"{run_id}/shard/{shard}", os.environ.get("HOSTNAME_HINT", f"shard-{shard}"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        keys = store.keys(f"{run_id}/shard/*")
        if len(keys) >= shards:
            break
        time.sleep(0.1)
    members = {int(k.decode().rsplit("/", 1)[1]): store.get(k).decode() for k in keys}
    result = {
        "shard": shard,
        "shards": shards,
        "run_id": run_id,
        "members": [members[i] for i in sorted(members)],
    }
    print("result " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
