"""One allreduce across a TrainJob's nodes, with torchrun and gloo on the CPU.

Trainer's torch policy gives each node PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK,
PET_MASTER_ADDR and PET_MASTER_PORT; torchrun reads them as its options and starts
the training processes with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, which
``init_method="env://"`` reads. Each rank contributes rank + 1; the sum must be
1 + 2 + … + world. Prints one ``result`` line of JSON per rank.
"""

from __future__ import annotations

import json
import os
import sys

import torch
import torch.distributed as dist


def main() -> int:
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    node = os.environ["PET_NODE_RANK"]
    master = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    print(f"rank {rank} of {world} on node {node}, master {master}", flush=True)

    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value)  # a sum by default
    expected = world * (world + 1) / 2
    result = {
        "rank": rank,
        "world": world,
        "node_rank": int(node),
        "nnodes": int(os.environ["PET_NNODES"]),
        "sum": value.item(),
        "expected": expected,
    }
    print("result " + json.dumps(result), flush=True)
    # Every rank reaches the end before any tears down: node 0's torchrun holds the
    # rendezvous store, and tearing down while others still talk to it can abort.
    dist.barrier()
    dist.destroy_process_group()
    return 0 if value.item() == expected else 1


if __name__ == "__main__":
    sys.exit(main())
