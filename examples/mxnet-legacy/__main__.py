"""Pulumi program: the job in mxjob.yaml as a TrainingJob component."""

from pathlib import Path

import pulumi

from trainjobs.components import jobs_from_file

jobs_from_file(Path(__file__).parent / "mxjob.yaml", target=pulumi.Config().get("target"))
