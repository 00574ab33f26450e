"""One job → its unit: defaults, platform effects (backend, node pool, queue), rules, target."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from trainjobs.errors import Finding, Severity
from trainjobs.frameworks.base import Manifest
from trainjobs.k8s.order import apply_rank
from trainjobs.render.gang import apply_gang
from trainjobs.render.lifecycle import job_lifecycle
from trainjobs.render.model import RenderedJob, RenderedObject, UnitRef
from trainjobs.render.resolve import PlatformIndex
from trainjobs.spec.entry import JobEntry, Target
from trainjobs.targets import expand

__all__ = ["IGNORE_ANNOTATION", "job_ref", "render_job", "with_ignored"]

IGNORE_ANNOTATION = "trainjobs.dev/ignore-checks"
"""Annotation naming the check rules silenced for an object (comma-separated codes).

The render writes it from a job's ``trainjobs: {ignore: [...]}`` and from a platform
kind's ``check_exemptions``; ``trainjobs check`` and the policy pack both read it, so
a rule silenced for an object is silenced everywhere.
"""


def with_ignored(manifest: Manifest, codes: Sequence[str] | None) -> Manifest:
    """``manifest`` carrying ``codes`` in its ``IGNORE_ANNOTATION``, beside any it
    already names (unchanged when ``codes`` is empty)."""
    if not codes:
        return manifest
    meta = dict(manifest.get("metadata") or {})
    annotations = {**(meta.get("annotations") or {})}
    present = str(annotations.get(IGNORE_ANNOTATION, ""))
    known = [code.strip() for code in present.split(",") if code.strip()]
    annotations[IGNORE_ANNOTATION] = ",".join(sorted({*known, *codes}))
    meta["annotations"] = annotations
    return {**manifest, "metadata": meta}


def job_ref(entry: JobEntry) -> UnitRef:
    """``job <namespace>/<name>``."""
    return UnitRef("job", f"{entry.job.namespace}/{entry.job.name}")


def render_job(
    entry: JobEntry,
    target: Target | None = None,
    default_target: Target = "operator",
    platform: PlatformIndex | None = None,
) -> tuple[RenderedJob | None, list[Finding]]:
    """Default, bind, validate and expand one job; findings carry the user's paths.

    The platform resources the job's options name act on the defaulted job in the
    order backend, node pools, queue; each becomes a dependency of the job's unit.
    Gang scheduling comes last, so its PodGroup counts the pods as they will be.
    """
    chosen: Target = target or entry.target(default_target)
    framework = entry.framework
    job = framework.default(entry.job)
    findings: list[Finding] = []
    extra: list[Manifest] = []
    depends_on: list[UnitRef] = []
    index = platform or PlatformIndex(())
    for ref in (replace(r, target=chosen) for r in entry.references()):
        found, problem = index.resolve(ref, job.namespace, entry.source)
        if found is None:
            findings += [problem] if problem else []
            continue
        effect = found.plugin.apply_to_job(found.resource, framework, job, ref)
        job = effect.job
        # Effects name the reference's own path, which already holds the job's.
        findings += [f.located(entry.source) for f in effect.findings]
        extra += effect.manifests
        unit = UnitRef(found.plugin.category, found.key)
        if unit not in depends_on:
            depends_on.append(unit)
    findings += [f.located(entry.source, entry.path) for f in framework.validate(job)]
    if any(f.severity is Severity.ERROR for f in findings):
        return None, findings
    gang = apply_gang(entry, job, chosen, index)
    job = gang.job
    findings += [f.located(entry.source, entry.path) for f in gang.findings]
    extra += gang.manifests
    if any(f.severity is Severity.ERROR for f in findings):
        return None, findings
    manifests, problems = expand(entry, job, chosen)
    findings += [f.located(entry.source, entry.path) for f in problems]
    options = entry.options
    ordered = sorted([*manifests, *extra], key=apply_rank)
    ordered = [with_ignored(m, options.ignore) for m in ordered]
    lifecycles, waits = job_lifecycle(
        ordered, framework, options.wait, options.wait_timeout, entry.path
    )
    findings += [f.located(entry.source) for f in waits]
    if any(f.severity is Severity.ERROR for f in findings):
        return None, findings
    objects = tuple(
        RenderedObject(m, entry.path, entry.source, job.name, lifecycle)
        for m, lifecycle in zip(ordered, lifecycles, strict=True)
    )
    rendered = RenderedJob(
        ref=job_ref(entry),
        kind=job.kind,
        objects=objects,
        depends_on=tuple(depends_on),
        # Trainer v2 names its own pods; the operator's addresses do not hold there.
        outputs={} if chosen == "trainer" else framework.addresses(job),
        origin=entry.path,
        source=entry.source,
        entry=entry,
        job=job,
        target=chosen,
    )
    return rendered, findings
