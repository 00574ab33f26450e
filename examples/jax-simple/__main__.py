"""Pulumi program: the job in jaxjob.yaml as a TrainingJob component."""

from pathlib import Path

import pulumi

from trainjobs.components import jobs_from_file

jobs_from_file(Path(__file__).parent / "jaxjob.yaml", target=pulumi.Config().get("target"))
