"""The stack program: a stack's config → every component it declares, in dependency order."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pulumi

from trainjobs.check import run
from trainjobs.components.job import TrainingJob
from trainjobs.components.platform import PlatformComponent
from trainjobs.components.register import register_manifest
from trainjobs.errors import SpecError
from trainjobs.render import RenderedJob, UnitRef
from trainjobs.spec.entry import TARGETS, Target
from trainjobs.spec.load import CONFIG_NAMESPACE, STACK_KEYS, load_path, parse_stack
from trainjobs.spec.stack import StackSpec

__all__ = ["TrainingStack", "program", "stack_config", "stack_from_file"]


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
    """Every unit of a stack as a component, each created after what it depends on.

    The whole stack is rendered and checked first (names must be unique across
    it, references must resolve), then each unit registers its own objects:
    Namespaces as plain resources, jobs as :class:`TrainingJob`, backends, node
    pools, queues and operators as :class:`PlatformComponent`.
    """

    def __init__(self, stack: StackSpec, target: Target | None = None) -> None:
        try:
            rendering = run(stack, target=target)
        except SpecError as exc:
            raise pulumi.RunError(str(exc)) from None
        for finding in rendering.findings:
            pulumi.log.warn(finding.render())
        entries = {p.path: p for p in stack.platform}
        self.components: dict[UnitRef, pulumi.Resource] = {}
        self.jobs: list[TrainingJob] = []
        self.platform: list[PlatformComponent] = []
        for unit in rendering.units:
            deps = [self.components[d] for d in unit.depends_on if d in self.components]
            opts = pulumi.ResourceOptions(depends_on=deps) if deps else pulumi.ResourceOptions()
            if isinstance(unit, RenderedJob):
                name = f"{unit.job.namespace}/{unit.job.name}"
                job = TrainingJob(name, rendered=unit, opts=opts)
                pulumi.export(name, job.addresses)
                self.jobs.append(job)
                self.components[unit.ref] = job
            elif unit.ref.category == "namespace":
                (obj,) = unit.objects
                self.components[unit.ref] = register_manifest(obj.manifest, opts)
            else:
                entry = entries[unit.origin]
                # ``namespace/name``, as jobs are named: two backends called redis in
                # different namespaces are two URNs. The alias keeps stacks made when
                # components had the bare name.
                if entry.key != entry.resource.name:
                    alias = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=entry.resource.name)])
                    opts = pulumi.ResourceOptions.merge(opts, alias)
                component = PlatformComponent.for_kind(entry.plugin.kind)(
                    entry.key, rendered=(entry, unit), opts=opts
                )
                if unit.outputs:
                    pulumi.export(str(unit.ref), component.outputs)
                self.platform.append(component)
                self.components[unit.ref] = component


def stack_from_file(path: str | Path, *, target: Target | str | None = None) -> TrainingStack:
    """Every job and platform resource of a YAML file (or stack config) as components.

    ``target`` (``operator`` or ``pods``) overrides the jobs' own; the example
    programs pass their stack's ``target`` config here.
    """
    if target is not None and target not in TARGETS:
        raise pulumi.RunError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    try:
        stack = load_path(path)
    except SpecError as exc:
        raise pulumi.RunError(str(exc)) from None
    return TrainingStack(stack, target if target in TARGETS else None)


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
