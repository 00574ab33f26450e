"""Pulumi program: the job in paddlejob.yaml as a TrainingJob component."""

from pathlib import Path

import pulumi

from trainjobs.components import jobs_from_file

jobs_from_file(Path(__file__).parent / "paddlejob.yaml", target=pulumi.Config().get("target"))
