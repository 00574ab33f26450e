"""Collective data-parallel training with PaddlePaddle on the CPU (gloo), a linear model.

Started by ``python -m paddle.distributed.launch``, which reads what the
PaddleJob operator injects (PADDLE_MASTER, PADDLE_NNODES, PADDLE_JOB_ID) and
POD_IP (this pod's address, from a fieldRef): worker 0 serves the rendezvous at
PADDLE_MASTER and every node starts one trainer. Each trainer trains on its own
shard with gradients all-reduced, and prints one ``result`` line of JSON.
"""

from __future__ import annotations

import json

import numpy as np
import paddle
import paddle.distributed as dist


def main() -> None:
    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    paddle.seed(rank)  # different initial weights; DataParallel broadcasts rank 0's
    rng = np.random.default_rng(100 + rank)  # a different shard per trainer
    x = paddle.to_tensor(rng.normal(size=(64, 4)).astype("float32"))
    y = x @ paddle.to_tensor([[2.0], [-3.0], [0.5], [1.0]]) + 0.7
    model = paddle.DataParallel(paddle.nn.Linear(4, 1))
    optimizer = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())

    def global_loss() -> float:
        loss = paddle.nn.functional.mse_loss(model(x), y).detach()
        dist.all_reduce(loss)
        return float(loss) / world

    before = global_loss()
    for _ in range(30):
        loss = paddle.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
    after = global_loss()
    params = [float(v) for p in model.parameters() for v in p.numpy().reshape(-1)]
    result = {"rank": rank, "world": world, "loss_before": before, "loss_after": after}
    print("result " + json.dumps({**result, "params": params}), flush=True)


if __name__ == "__main__":
    main()
