"""Pulumi program: Trainer v2 and the job in trainjob.yaml, the job after Trainer."""

from pathlib import Path

import pulumi

from trainjobs.components import stack_from_file

stack_from_file(Path(__file__).parent / "trainjob.yaml", target=pulumi.Config().get("target"))
