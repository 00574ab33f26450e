"""spec → manifests: every job and platform resource of a stack, as units in dependency order.

Pure: no I/O, no pulumi. The checks in ``trainjobs.check`` run over the result;
``trainjobs.check.run`` is render + every check, and is what the CLI and the
Pulumi components call.
"""

from trainjobs.render.jobs import IGNORE_ANNOTATION, base_plan, job_ref, render_job, with_ignored
from trainjobs.render.model import (
    RenderedJob,
    RenderedObject,
    RenderedUnit,
    Rendering,
    UnitCategory,
    UnitRef,
)
from trainjobs.render.resolve import PlatformIndex
from trainjobs.render.stack import render, render_platform

__all__ = [
    "IGNORE_ANNOTATION",
    "PlatformIndex",
    "RenderedJob",
    "RenderedObject",
    "RenderedUnit",
    "Rendering",
    "UnitCategory",
    "UnitRef",
    "base_plan",
    "job_ref",
    "render",
    "render_job",
    "render_platform",
    "with_ignored",
]
