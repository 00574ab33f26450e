"""``TrainingJob``: one training job as a Pulumi component."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pulumi
from pydantic import ValidationError

from trainjobs.check import run
from trainjobs.components.platform import PlatformComponent, register_objects
from trainjobs.errors import Finding, SpecError
from trainjobs.frameworks.base import JobResource
from trainjobs.frameworks.gang import GangMechanism
from trainjobs.render import RenderedJob
from trainjobs.spec._findings import findings_from_validation_error
from trainjobs.spec.entry import OPTIONS_KEY, TARGETS, JobEntry, JobOptions, Target, Wait
from trainjobs.spec.load import load_path, parse_job
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, StackSpec

__all__ = ["InvalidJobError", "TrainingJob", "jobs_from_file"]


class InvalidJobError(pulumi.RunError):
    """A job given to a component is invalid; ``findings`` lists every problem."""

    def __init__(self, message: str, findings: Sequence[Finding] = ()) -> None:
        super().__init__(message)
        self.findings = tuple(findings)


def _entry(job: JobResource | Mapping[str, Any], target: Target | None) -> JobEntry:
    if isinstance(job, JobResource):
        return JobEntry.of(job, target=target)
    entries, findings = parse_job(dict(job), path="job")
    if findings and not entries:
        raise SpecError.from_findings(findings)
    entry = entries[0]
    if target is not None:
        return JobEntry(
            entry.job,
            entry.framework,
            entry.options.model_copy(update={"target": target}),
            entry.path,
        )
    return entry


def _with_platform(
    entry: JobEntry,
    backend: PlatformComponent | None,
    node_pool: PlatformComponent | Mapping[str, PlatformComponent] | None,
    queue: PlatformComponent | None,
) -> tuple[JobEntry, list[PlatformComponent]]:
    """The entry with its options naming the given components, and those components."""
    update: dict[str, Any] = {}
    used: list[PlatformComponent] = []
    if backend is not None:
        update["backend"] = backend.reference
        used.append(backend)
    if isinstance(node_pool, PlatformComponent):
        update["node_pool"] = node_pool.reference
        used.append(node_pool)
    elif node_pool:
        update["node_pool"] = {role: pool.reference for role, pool in node_pool.items()}
        used += list(node_pool.values())
    if queue is not None:
        update["queue"] = queue.reference
        used.append(queue)
    if not update:
        return entry, used
    options = entry.options.model_copy(update=update)
    return JobEntry(entry.job, entry.framework, options, entry.path, entry.source), used


def _with_wait(entry: JobEntry, wait: Wait | None, timeout: str | None) -> JobEntry:
    options = entry.options.to_manifest()
    options.update({"wait": wait or entry.options.wait, "waitTimeout": timeout})
    try:
        validated = JobOptions.model_validate({k: v for k, v in options.items() if v is not None})
    except ValidationError as exc:
        found = findings_from_validation_error(exc, JobOptions)
        prefix = f"{entry.path}.{OPTIONS_KEY}"
        raise SpecError.from_findings(f.located("", prefix) for f in found) from None
    return replace(entry, options=validated)


class TrainingJob(pulumi.ComponentResource):
    """A distributed training job: its custom resource, or its Pods and Services.

    Args:
        name: the Pulumi name of the component.
        job: the job — a typed model (``TFJob(...)``) or the upstream YAML as a dict.
        target: ``operator`` (default) or ``pods``; overrides the job's ``trainjobs.target``.
        backend: a backend component (``RedisBackend`` …) the pods rendezvous through.
        node_pool: a node pool component for every GPU replica, or a map of replica
            type to pool.
        queue: a queue component the job is admitted through.
        gang: ``volcano`` or ``scheduler-plugins``: gang-schedule the job (on the pods
            target trainjobs creates the PodGroup); overrides the job's ``trainjobs.gang``.
        wait: how long ``pulumi up`` waits for the job: ``none`` (default), ``running``
            or ``succeeded`` (see ``JobOptions.wait``).
        wait_timeout: how long it waits when it does, e.g. ``90m``; default 60m.
        k8s_version: Kubernetes version to check against; default ``DEFAULT_K8S_VERSION``.
        rendered: an already rendered job (used by the stack program).
        opts: Pulumi resource options; children inherit the provider from it. The
            job also waits for every platform component it was given.

    Raises:
        InvalidJobError: the job is invalid; the message lists every finding. (The
            Python SDK has no ``pulumi.ResourceError``; ``RunError``, which this
            subclasses, is how a Python program fails with a message and no traceback.)

    Outputs:
        ``objects`` (``Kind namespace/name`` of each child), ``addresses`` (e.g.
        the master's ``host:port``) and ``target``.
    """

    objects: pulumi.Output[list[str]]
    addresses: pulumi.Output[dict[str, str]]

    def __init__(
        self,
        name: str,
        job: JobResource | Mapping[str, Any] | None = None,
        *,
        target: Target | None = None,
        backend: PlatformComponent | None = None,
        node_pool: PlatformComponent | Mapping[str, PlatformComponent] | None = None,
        queue: PlatformComponent | None = None,
        gang: GangMechanism | None = None,
        wait: Wait | None = None,
        wait_timeout: str | None = None,
        k8s_version: str = DEFAULT_K8S_VERSION,
        rendered: RenderedJob | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        used: list[PlatformComponent] = []
        if rendered is None:
            if job is None:
                raise InvalidJobError(f"{name}: TrainingJob needs a job")
            try:
                entry, used = _with_platform(_entry(job, target), backend, node_pool, queue)
                if wait is not None or wait_timeout is not None:
                    entry = _with_wait(entry, wait, wait_timeout)
                if gang is not None:
                    options = entry.options.model_copy(update={"gang": gang})
                    entry = JobEntry(entry.job, entry.framework, options, entry.path, entry.source)
                platform = tuple(c.entry for c in used)
                stack = StackSpec(jobs=(entry,), platform=platform)
                rendering = run(stack, target=target, k8s_version=k8s_version)
            except SpecError as exc:
                raise InvalidJobError(f"{name}: {exc}", exc.findings) from None
            rendered = rendering.jobs[0]
        if used:
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=used))
        super().__init__("trainjobs:index:TrainingJob", name, None, opts)
        self.resources = register_objects(self, rendered.objects)
        self.rendered = rendered
        titles = [o.title for o in rendered.objects]
        self.objects = pulumi.Output.from_input(titles)
        self.addresses = pulumi.Output.from_input(rendered.addresses)
        self.register_outputs(
            {"objects": titles, "addresses": rendered.addresses, "target": rendered.target}
        )


def jobs_from_file(path: str | Path, *, target: Target | str | None = None) -> list[TrainingJob]:
    """Every job in a YAML file as a :class:`TrainingJob`, outputs exported by job name.

    ``target`` (``operator`` or ``pods``) overrides the jobs' own; the example
    programs pass their stack's ``target`` config here. A file that also declares
    platform resources (a backend …) is a stack: use :func:`stack_from_file`.
    """
    if target is not None and target not in TARGETS:
        raise pulumi.RunError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    chosen_target: Target | None = target if target in TARGETS else None
    try:
        stack = load_path(path)
    except SpecError as exc:
        raise pulumi.RunError(str(exc)) from None
    jobs = []
    for entry in stack.jobs:
        chosen = chosen_target or entry.options.target
        name = f"{entry.job.namespace}/{entry.job.name}"
        # Named as the stack program names jobs, so a job moved between the two keeps
        # its URN; the alias keeps stacks made when this used the bare name.
        opts = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=entry.job.name)])
        options = entry.options
        job = TrainingJob(
            name,
            entry.job,
            target=chosen,
            gang=options.gang,
            wait=options.wait,
            wait_timeout=options.wait_timeout,
            opts=opts,
        )
        pulumi.export(f"{entry.job.name}.objects", job.objects)
        pulumi.export(f"{entry.job.name}.addresses", job.addresses)
        jobs.append(job)
    return jobs
