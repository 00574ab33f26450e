"""The fixed choices a stack and the command line offer: Pod Security profiles, the
default Kubernetes version (the targets are in ``targets.names``). Kept free of imports so
the command line can build its parser (``trainjobs --help``) without loading frameworks
and schemas."""

from __future__ import annotations

from typing import Literal

__all__ = [
    "DEFAULT_K8S_VERSION",
    "DEFAULT_PROFILE",
    "PROFILES",
    "Profile",
]

DEFAULT_K8S_VERSION = "1.32"
"""Kubernetes version whose OpenAPI schema manifests are checked against by default."""

Profile = Literal["baseline", "restricted"]
"""A Pod Security Standards level the pods of a stack are checked against."""
PROFILES: tuple[Profile, ...] = ("baseline", "restricted")
DEFAULT_PROFILE: Profile = "baseline"
