"""Pulumi components: the only package that imports pulumi or pulumi_kubernetes.

Each component renders through the same pipeline as ``trainjobs render`` and
registers every rendered manifest as a pulumi_kubernetes resource, so what
``pulumi up`` applies is exactly what the snapshots show.
"""

from trainjobs.components.backends import NfsBackend, RedisBackend, RedisBackendArgs
from trainjobs.components.edl import EdlController
from trainjobs.components.job import InvalidJobError, TrainingJob, TrainingJobArgs, jobs_from_file
from trainjobs.components.operators import JobSet, MPIOperator, Trainer, TrainingOperator
from trainjobs.components.platform import InvalidResourceError, PlatformArgs, PlatformComponent
from trainjobs.components.pools import GpuNodePool, GpuQueue
from trainjobs.components.seeds import Caffe2Operator, DatasetJob, MSOperator, MSOperatorV2
from trainjobs.components.stack import TrainingStack, program, stack_from_file

__all__ = [
    "Caffe2Operator",
    "DatasetJob",
    "EdlController",
    "GpuNodePool",
    "GpuQueue",
    "InvalidJobError",
    "InvalidResourceError",
    "JobSet",
    "MPIOperator",
    "MSOperator",
    "MSOperatorV2",
    "NfsBackend",
    "PlatformArgs",
    "PlatformComponent",
    "RedisBackend",
    "RedisBackendArgs",
    "Trainer",
    "TrainingJob",
    "TrainingJobArgs",
    "TrainingOperator",
    "TrainingStack",
    "jobs_from_file",
    "program",
    "stack_from_file",
]
