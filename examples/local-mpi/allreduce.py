"""An MPI allreduce with mpi4py: every rank adds rank + 1, and a numpy vector.

mpirun (in the launcher) starts the ranks on the workers of the hostfile. Each
rank prints one ``result`` line of JSON: its rank, the world size, the sums it
received and the worker it ran on (from the worker's own env).
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
from mpi4py import MPI


def main() -> None:
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    total = comm.allreduce(rank + 1, op=MPI.SUM)
    vector = np.zeros(3)
    comm.Allreduce(np.array([float(rank), 1.0, 2.0 * rank]), vector, op=MPI.SUM)
    gathered = comm.gather(os.environ.get("WORKER_NAME", "?"), root=0)
    result = {
        "rank": rank,
        "size": size,
        "sum": total,
        "vector": vector.tolist(),
        "worker": os.environ.get("WORKER_NAME", "?"),
        "role": os.environ.get("K_MPI_JOB_ROLE", "?"),
    }
    if rank == 0:
        result["workers"] = gathered
    # One write per line: mpirun merges the ranks' output, and print() writes the text and
    # its newline separately, so two ranks' lines could interleave mid-line.
    os.write(sys.stdout.fileno(), f"result {json.dumps(result)}\n".encode())


if __name__ == "__main__":
    main()
