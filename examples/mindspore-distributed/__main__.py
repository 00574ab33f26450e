"""Pulumi program: every job and platform resource in msjob.yaml, in dependency order."""

from pathlib import Path

import pulumi

from trainjobs.components import stack_from_file

stack_from_file(Path(__file__).parent / "msjob.yaml", target=pulumi.Config().get("target"))
