"""Pulumi program: the GKE GPU node pool and the MPIJob placed on it."""

from pathlib import Path

import pulumi

from trainjobs.components import stack_from_file

stack_from_file(Path(__file__).parent / "mpijob-on-gke.yaml", target=pulumi.Config().get("target"))
