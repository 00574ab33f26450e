"""MultiWorkerMirroredStrategy from TF_CONFIG on the CPU: a linear model, a few steps.

The strategy reads TF_CONFIG (set by the TFJob operator), starts this worker's
gRPC server and all-reduces across workers. Prints one ``result`` line of JSON
per worker: the cluster the strategy saw, this worker's task, the global loss
before and after, and the final weights (identical on every worker).
"""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    resolver = strategy.cluster_resolver
    task = {"type": resolver.task_type, "index": resolver.task_id}
    print(f"task {task}, {strategy.num_replicas_in_sync} replicas in sync")

    tf.random.set_seed(7 + resolver.task_id)  # a different shard of data per worker
    true_w = tf.constant([[2.0], [-3.0], [0.5], [1.0]])
    x = tf.random.normal([32, 4])
    y = x @ true_w

    with strategy.scope():
        # MEAN: each worker's update is averaged across workers, as gradients are.
        w = tf.Variable(tf.zeros([4, 1]), aggregation=tf.VariableAggregation.MEAN)

    @tf.function
    def loss() -> tf.Tensor:
        def local() -> tf.Tensor:
            return tf.reduce_mean((x @ w - y) ** 2)

        return strategy.reduce("MEAN", strategy.run(local), axis=None)

    @tf.function
    def step() -> None:
        def local() -> None:
            with tf.GradientTape() as tape:
                value = tf.reduce_mean((x @ w - y) ** 2)
            w.assign_sub(0.1 * tape.gradient(value, w))

        strategy.run(local)

    before = float(loss())
    for _ in range(args.steps):
        step()
    after = float(loss())
    result = {
        "task": task,
        "cluster": resolver.cluster_spec().as_dict(),
        "loss_before": before,
        "loss_after": after,
        "weights": [float(v) for v in tf.reshape(w, [-1]).numpy()],
    }
    print("result " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
