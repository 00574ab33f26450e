"""Pulumi program: the job in xgboostjob.yaml as a TrainingJob component."""

from pathlib import Path

import pulumi

from trainjobs.components import jobs_from_file

jobs_from_file(Path(__file__).parent / "xgboostjob.yaml", target=pulumi.Config().get("target"))
