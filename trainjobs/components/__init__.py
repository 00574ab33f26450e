"""Pulumi components: the only package that imports pulumi or pulumi_kubernetes.

Each component renders through the same pipeline as ``trainjobs render`` and
registers every rendered manifest as a pulumi_kubernetes resource, so what
``pulumi up`` applies is exactly what the snapshots show.
"""

from trainjobs.components.job import TrainingJob, jobs_from_file
from trainjobs.components.stack import TrainingStack, program

__all__ = ["TrainingJob", "TrainingStack", "jobs_from_file", "program"]
