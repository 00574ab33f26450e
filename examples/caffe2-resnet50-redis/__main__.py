"""Pulumi program: every job and platform resource in caffe2job.yaml, in dependency order."""

from pathlib import Path

import pulumi

from trainjobs.components import stack_from_file

stack_from_file(Path(__file__).parent / "caffe2job.yaml", target=pulumi.Config().get("target"))
