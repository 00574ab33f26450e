"""The targets' names: the one list of what a job can render to.

Kept free of imports so the command line can build its parser (``trainjobs --help``)
without loading a target; each name is a plugin of ``targets.registry`` (one module
each), and ``tests/targets/test_jobset.py`` holds the two to each other.
"""

from __future__ import annotations

from typing import Final, Literal, TypeGuard, get_args

__all__ = ["DEFAULT_TARGET", "TARGETS", "Target", "is_target"]

Target = Literal["operator", "pods", "trainer", "jobset"]
"""What a job renders to: its operator's custom resource, the pods and services that
operator would create, a Kubeflow Trainer TrainJob, or (for a TrainJob) the JobSet the
Trainer controller would create."""
TARGETS: Final[tuple[Target, ...]] = get_args(Target)
"""Every target, in the order ``--help`` and the stack schema list them."""
DEFAULT_TARGET: Final[Target] = "operator"
"""The target of a job when neither it nor its stack names one."""


def is_target(value: object) -> TypeGuard[Target]:
    """Whether ``value`` names a target."""
    return value in TARGETS
