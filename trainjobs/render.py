"""spec → manifests: pick each job's framework and target, apply defaults, order for apply.

Pure: no I/O, no pulumi. The checks in ``trainjobs.check`` run over the result;
``trainjobs.check.run`` is render + every check, and is what the CLI and the
Pulumi components call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trainjobs.errors import Finding, Severity, SpecError
from trainjobs.frameworks.base import JobResource, Manifest
from trainjobs.k8s.order import apply_rank
from trainjobs.spec.entry import JobEntry, Target
from trainjobs.spec.stack import StackSpec
from trainjobs.targets import expand

__all__ = ["RenderedJob", "RenderedObject", "Rendering", "render", "render_job"]


@dataclass(frozen=True)
class RenderedObject:
    """One manifest and where it came from.

    Attributes:
        manifest: the plain Kubernetes object.
        origin: the path of the job in the input that produced it (``jobs[0]``).
        source: the input file.
        job: the name of that job.
    """

    manifest: Manifest
    origin: str
    source: str = ""
    job: str = ""

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """(apiVersion group, kind, namespace, name): what must be unique in a stack."""
        meta = self.manifest.get("metadata") or {}
        group = str(self.manifest.get("apiVersion", "")).rpartition("/")[0]
        return (
            group,
            str(self.manifest.get("kind")),
            str(meta.get("namespace", "")),
            str(meta.get("name")),
        )

    @property
    def title(self) -> str:
        """``Kind namespace/name`` for messages."""
        _, kind, ns, name = self.identity
        return f"{kind} {ns + '/' if ns else ''}{name}"


@dataclass(frozen=True)
class RenderedJob:
    """One job's defaulted spec, target and objects."""

    entry: JobEntry
    job: JobResource
    target: Target
    objects: tuple[RenderedObject, ...]

    @property
    def addresses(self) -> dict[str, str]:
        return self.entry.framework.addresses(self.job)


@dataclass(frozen=True)
class Rendering:
    """The result of rendering a stack: objects in apply order and non-fatal findings."""

    jobs: tuple[RenderedJob, ...]
    objects: tuple[RenderedObject, ...]
    findings: tuple[Finding, ...] = field(default=())
    k8s_version: str = ""

    @property
    def manifests(self) -> list[Manifest]:
        return [o.manifest for o in self.objects]


def render_job(
    entry: JobEntry, target: Target | None = None, default_target: Target = "operator"
) -> tuple[RenderedJob | None, list[Finding]]:
    """Default, validate and expand one job; findings carry the user's paths."""
    chosen: Target = target or entry.target(default_target)
    job = entry.framework.default(entry.job)
    findings = [f.located(entry.source, entry.path) for f in entry.framework.validate(job)]
    if any(f.severity is Severity.ERROR for f in findings):
        return None, findings
    manifests, problems = expand(entry, job, chosen)
    findings += [f.located(entry.source, entry.path) for f in problems]
    objects = tuple(
        RenderedObject(m, entry.path, entry.source, job.name)
        for m in sorted(manifests, key=apply_rank)
    )
    return RenderedJob(entry, job, chosen, objects), findings


def render(stack: StackSpec, target: Target | None = None) -> Rendering:
    """Render every job of ``stack``; ``target`` overrides each job's own.

    Raises SpecError listing every error found in any job.
    """
    jobs: list[RenderedJob] = []
    findings: list[Finding] = []
    for entry in stack.jobs:
        rendered, problems = render_job(entry, target, stack.target)
        findings += problems
        if rendered is not None:
            jobs.append(rendered)
    if any(f.severity is Severity.ERROR for f in findings):
        raise SpecError.from_findings(findings)
    namespaces = [
        RenderedObject(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
            f"namespaces[{i}]",
            stack.source,
        )
        for i, name in enumerate(stack.namespaces)
    ]
    objects = namespaces + [obj for job in jobs for obj in job.objects]
    ordered = sorted(objects, key=lambda o: apply_rank(o.manifest))
    return Rendering(tuple(jobs), tuple(ordered), tuple(findings), stack.k8s_version)
