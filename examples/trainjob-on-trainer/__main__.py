"""Pulumi program: the Trainer install and the TrainJob in trainjob.yaml, on the target
the stack's config names."""

from pathlib import Path

import pulumi

from trainjobs.components import stack_from_file

stack_from_file(Path(__file__).parent / "trainjob.yaml", target=pulumi.Config().get("target"))
