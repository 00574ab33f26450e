"""The stack program: a stack's config → every component it declares."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pulumi

from trainjobs.check import run
from trainjobs.components.job import TrainingJob
from trainjobs.components.register import register_manifest
from trainjobs.errors import SpecError
from trainjobs.spec.load import CONFIG_NAMESPACE, STACK_KEYS, parse_stack
from trainjobs.spec.stack import StackSpec

__all__ = ["TrainingStack", "program", "stack_config"]


def stack_config() -> dict[str, Any]:
    """The stack's ``trainjobs:*`` settings as plain data."""
    config = pulumi.Config(CONFIG_NAMESPACE)
    values: dict[str, Any] = {}
    for key in sorted(STACK_KEYS):
        text = config.get(key)
        if text is None:
            continue
        # Pulumi hands every setting over as text; lists and maps arrive as JSON.
        values[key] = json.loads(text) if text[:1] in ("[", "{") else text
    return values


class TrainingStack:
    """Every job of a stack, each a :class:`TrainingJob` component.

    The whole stack is rendered and checked first (names must be unique across
    jobs), then each job registers its own objects.
    """

    def __init__(self, stack: StackSpec) -> None:
        try:
            rendering = run(stack)
        except SpecError as exc:
            raise pulumi.RunError(str(exc)) from None
        for finding in rendering.findings:
            pulumi.log.warn(finding.render())
        job_objects = {id(o) for job in rendering.jobs for o in job.objects}
        # Stack-level objects (Namespaces) come first; every job waits for them.
        self.shared = [
            register_manifest(o.manifest, pulumi.ResourceOptions())
            for o in rendering.objects
            if id(o) not in job_objects
        ]
        after_shared = pulumi.ResourceOptions(depends_on=self.shared)
        self.jobs = [
            TrainingJob(f"{job.job.namespace}/{job.job.name}", rendered=job, opts=after_shared)
            for job in rendering.jobs
        ]
        for job in self.jobs:
            pulumi.export(f"{job.rendered.job.namespace}/{job.rendered.job.name}", job.addresses)


def program() -> TrainingStack:
    """Run the stack program: read the stack's config and declare its components.

    ``file:`` paths in the config are relative to the stack config folder
    (``stacks/`` unless ``$TRAINJOBS_STACK_DIR`` says otherwise).
    """
    base = Path(os.environ.get("TRAINJOBS_STACK_DIR", "stacks"))
    source = f"{base}/Pulumi.{pulumi.get_stack()}.yaml"
    try:
        stack = parse_stack(stack_config(), source=source, base_dir=base)
    except SpecError as exc:
        raise pulumi.RunError(str(exc)) from None
    return TrainingStack(stack)
