"""User-facing input: jobs with their trainjobs options, stacks, and how they are loaded."""

from trainjobs.spec.entry import JobEntry, JobOptions, Target
from trainjobs.spec.load import load_path, parse_documents, parse_job, parse_stack
from trainjobs.spec.stack import StackSpec

__all__ = [
    "JobEntry",
    "JobOptions",
    "StackSpec",
    "Target",
    "load_path",
    "parse_documents",
    "parse_job",
    "parse_stack",
]
