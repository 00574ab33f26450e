"""User-facing input: jobs and platform resources with their options, stacks, and loading."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainjobs._lazy import lazy_exports

if TYPE_CHECKING:
    from trainjobs.spec.entry import JobEntry, JobOptions, PlatformEntry, Target
    from trainjobs.spec.load import (
        load_path,
        parse_documents,
        parse_entry,
        parse_job,
        parse_stack,
    )
    from trainjobs.spec.stack import StackSpec

_HOMES = {
    "JobEntry": "trainjobs.spec.entry",
    "JobOptions": "trainjobs.spec.entry",
    "PlatformEntry": "trainjobs.spec.entry",
    "Target": "trainjobs.spec.entry",
    "load_path": "trainjobs.spec.load",
    "parse_documents": "trainjobs.spec.load",
    "parse_entry": "trainjobs.spec.load",
    "parse_job": "trainjobs.spec.load",
    "parse_stack": "trainjobs.spec.load",
    "StackSpec": "trainjobs.spec.stack",
}

__all__ = [
    "JobEntry",
    "JobOptions",
    "PlatformEntry",
    "StackSpec",
    "Target",
    "load_path",
    "parse_documents",
    "parse_entry",
    "parse_job",
    "parse_stack",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _HOMES)
