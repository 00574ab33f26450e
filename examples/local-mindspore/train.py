"""MindSpore's dynamic cluster on the CPU: a scheduler and 2 workers, then an AllReduce.

Every pod runs this script; what the 2022 MSJob controller injects decides the
role: MS_ROLE (MS_SCHED or MS_WORKER), MS_SCHED_HOST and MS_SCHED_PORT (where
the scheduler listens), MS_WORKER_NUM, MS_SERVER_NUM and MS_NODE_ID.
``init()`` registers with the scheduler (the scheduler's own call serves the
cluster until the workers leave). Each worker then all-reduces ``rank + 1`` and
prints one ``result`` line of JSON.
"""

from __future__ import annotations

import json
import os

import mindspore as ms
import numpy as np
from mindspore import ops
from mindspore.communication import get_group_size, get_rank, init


def main() -> None:
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    init()
    rank, size = get_rank(), get_group_size()
    total = ops.AllReduce()(ms.Tensor(np.array([float(rank + 1)], dtype=np.float32)))
    result = {
        "rank": rank,
        "size": size,
        "sum": float(total.asnumpy()[0]),
        "node": os.environ["MS_NODE_ID"],
        "scheduler": f"{os.environ['MS_SCHED_HOST']}:{os.environ['MS_SCHED_PORT']}",
    }
    print("result " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
