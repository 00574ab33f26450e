"""Pulumi program: the job in pytorchjob.yaml as a TrainingJob component."""

from pathlib import Path

import pulumi

from trainjobs.components import jobs_from_file

jobs_from_file(Path(__file__).parent / "pytorchjob.yaml", target=pulumi.Config().get("target"))
