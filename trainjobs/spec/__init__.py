"""User-facing input: jobs and platform resources with their options, stacks, and loading."""

from trainjobs.spec.entry import JobEntry, JobOptions, PlatformEntry, Target
from trainjobs.spec.load import (
    load_path,
    parse_documents,
    parse_entry,
    parse_job,
    parse_stack,
)
from trainjobs.spec.stack import StackSpec

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
