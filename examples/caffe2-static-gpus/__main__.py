"""Pulumi program: the static T4 pool, the Redis backend and the Caffe2Job placed on the pool."""

from pathlib import Path

import pulumi

from trainjobs.components import stack_from_file

stack_from_file(
    Path(__file__).parent / "caffe2job-on-static-pool.yaml", target=pulumi.Config().get("target")
)
