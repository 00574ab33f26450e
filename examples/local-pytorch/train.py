"""DistributedDataParallel on the CPU with gloo: a tiny linear model, synthetic data.

Reads what the PyTorchJob operator injects (MASTER_ADDR, MASTER_PORT, WORLD_SIZE,
RANK) through ``init_method="env://"``. Each rank trains on its own shard of a
synthetic regression problem; gradients are averaged across ranks every step.
Prints one ``result`` line of JSON per rank: the global loss before and after,
and the final parameters (identical on every rank when DDP works).
"""

from __future__ import annotations

import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def global_loss(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        loss = torch.nn.functional.mse_loss(model(x), y)
    dist.all_reduce(loss)
    return loss.item() / dist.get_world_size()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    print(f"rank {rank} of {world}, master {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}")

    torch.manual_seed(1000 + rank)  # a different shard of data per rank
    true_w = torch.tensor([[2.0], [-3.0], [0.5], [1.0]])
    x = torch.randn(64, 4)
    y = x @ true_w + 0.7

    torch.manual_seed(rank)  # different initial weights; DDP broadcasts rank 0's
    model = DistributedDataParallel(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    before = global_loss(model, x, y)
    for _ in range(args.steps):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    after = global_loss(model, x, y)

    params = [p for t in model.parameters() for p in t.detach().flatten().tolist()]
    result = {"rank": rank, "world": world, "loss_before": before, "loss_after": after}
    print("result " + json.dumps({**result, "params": params}), flush=True)
    # Every rank reaches the end before any tears down: rank 0 holds the rendezvous
    # store, and tearing down while others still talk to it can abort the process.
    dist.barrier()
    del model
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
