"""Distributed XGBoost on the CPU: a tracker on the master, one data shard per replica.

Reads what the XGBoostJob operator injects — MASTER_ADDR, MASTER_PORT,
WORLD_SIZE, RANK. Rank 0 (the master) starts XGBoost's tracker on
MASTER_ADDR:MASTER_PORT; every replica joins the collective through it and
trains on its own shard, histograms all-reduced every round. Prints one
``result`` line of JSON per replica: the world size, the training error on its
shard before and after, and predictions on a fixed grid (identical everywhere
when the replicas built one model together).
"""

from __future__ import annotations

import json
import os

import numpy as np
import xgboost as xgb
from xgboost import collective
from xgboost.tracker import RabitTracker


def main() -> None:
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    address, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    tracker = None
    if rank == 0:
        tracker = RabitTracker(host_ip=address, n_workers=world, port=port, sortby="task")
        tracker.start()
    rng = np.random.default_rng(100 + rank)  # a different shard per replica
    x = rng.uniform(-1, 1, size=(200, 3))
    y = 3 * x[:, 0] - 2 * x[:, 1] ** 2 + 0.5 * x[:, 2]
    grid = np.linspace(-1, 1, 12).reshape(4, 3)
    context = {"dmlc_tracker_uri": address, "dmlc_tracker_port": port, "dmlc_task_id": str(rank)}
    with collective.CommunicatorContext(**context):
        train = xgb.DMatrix(x, label=y)
        history: dict[str, dict[str, list[float]]] = {}
        booster = xgb.train(
            {"objective": "reg:squarederror", "max_depth": 3, "eta": 0.3, "tree_method": "hist"},
            train,
            num_boost_round=20,
            evals=[(train, "shard")],
            evals_result=history,
            verbose_eval=False,
        )
        size = collective.get_world_size()
    rmse = history["shard"]["rmse"]
    result = {
        "rank": rank,
        "world": size,
        "rmse_first": rmse[0],
        "rmse_last": rmse[-1],
        "grid": [round(float(v), 6) for v in booster.predict(xgb.DMatrix(grid))],
    }
    print("result " + json.dumps(result), flush=True)
    if tracker is not None:
        tracker.wait_for()


if __name__ == "__main__":
    main()
