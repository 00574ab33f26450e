"""Pulumi program: the Karpenter GPU pool and the TFJob placed on it."""

from pathlib import Path

import pulumi

from trainjobs.components import stack_from_file

stack_from_file(
    Path(__file__).parent / "tfjob-on-karpenter.yaml", target=pulumi.Config().get("target")
)
