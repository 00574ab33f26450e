"""The fixed choices a stack and the command line offer: targets, Pod Security profiles,
the default Kubernetes version. Kept free of imports so the command line can build its
parser (``trainjobs --help``) without loading frameworks and schemas."""

from __future__ import annotations

from typing import Literal, TypeGuard

__all__ = [
    "DEFAULT_K8S_VERSION",
    "DEFAULT_PROFILE",
    "DEFAULT_TARGET",
    "PROFILES",
    "TARGETS",
    "Profile",
    "Target",
    "is_target",
]

Target = Literal["operator", "pods", "trainer", "jobset"]
"""What a job renders to: its operator's custom resource, the pods and services that
operator would create, a Kubeflow Trainer TrainJob, or (for a TrainJob) the JobSet the
Trainer controller would create."""
TARGETS: tuple[Target, ...] = ("operator", "pods", "trainer", "jobset")
DEFAULT_TARGET: Target = "operator"
"""The target of a job when neither it nor its stack names one."""


def is_target(value: object) -> TypeGuard[Target]:
    """Whether ``value`` names a target."""
    return value in TARGETS


DEFAULT_K8S_VERSION = "1.32"
"""Kubernetes version whose OpenAPI schema manifests are checked against by default."""

Profile = Literal["baseline", "restricted"]
"""A Pod Security Standards level the pods of a stack are checked against."""
PROFILES: tuple[Profile, ...] = ("baseline", "restricted")
DEFAULT_PROFILE: Profile = "baseline"
