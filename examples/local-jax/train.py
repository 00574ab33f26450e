"""jax.distributed on the CPU: processes meet at the coordinator, then a cross-process psum.

Reads what the JAXJob operator injects — COORDINATOR_ADDRESS (host only),
COORDINATOR_PORT, NUM_PROCESSES, PROCESS_ID — and calls
``jax.distributed.initialize``. Each process then contributes ``process_id + 1``
to a psum over every device of every process (gloo collectives on the CPU) and
prints one ``result`` line of JSON.
"""

from __future__ import annotations

import json
import os

import jax

# Cross-process collectives on the CPU go through gloo.
jax.config.update("jax_cpu_collectives_implementation", "gloo")

import jax.numpy as jnp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402


def main() -> None:
    coordinator = f"{os.environ['COORDINATOR_ADDRESS']}:{os.environ['COORDINATOR_PORT']}"
    jax.distributed.initialize(
        coordinator_address=coordinator,
        num_processes=int(os.environ["NUM_PROCESSES"]),
        process_id=int(os.environ["PROCESS_ID"]),
    )
    me = jax.process_index()
    summed = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(
        jnp.array([float(me + 1)] * jax.local_device_count())
    )
    ids = multihost_utils.process_allgather(jnp.array([me]))
    result = {
        "process": me,
        "processes": jax.process_count(),
        "devices": jax.device_count(),
        "psum": float(summed[0]),
        "seen": sorted(int(i) for i in ids.reshape(-1)),
        "coordinator": coordinator,
    }
    print("result " + json.dumps(result), flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
