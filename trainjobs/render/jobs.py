"""One job → its unit: defaults, platform effects (backend, node pool, queue), rules, target."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from trainjobs import limits
from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks.base import Framework, operator_rules
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import JobResource
from trainjobs.k8s.names import dns1123_label_problem, labelled_name_problem
from trainjobs.k8s.order import apply_rank
from trainjobs.plan import JobPlan
from trainjobs.platform.network import listener_policy
from trainjobs.render.gang import apply_gang
from trainjobs.render.lifecycle import job_lifecycle
from trainjobs.render.model import RenderedJob, RenderedObject, UnitRef
from trainjobs.render.resolve import PlatformIndex
from trainjobs.spec.entry import OPTIONS_KEY, JobEntry, Target
from trainjobs.targets import expand, supports
from trainjobs.targets.base import Rendered

__all__ = [
    "IGNORE_ANNOTATION",
    "MAX_PODS_PER_JOB",
    "DefaultedJob",
    "base_plan",
    "expand_job",
    "job_ref",
    "name_findings",
    "pod_count_findings",
    "render_job",
    "with_ignored",
]

POD_SET_TARGET = Rule(
    "registration.target",
    "registration: pod-set records a job's Pods and Services as one resource, and this job "
    "renders to the {target} target, which emits no Pods of its own",
    "use target: pods, or leave registration at objects",
)
"""A job asks for ``registration: pod-set`` on a target other than ``pods``."""

MAX_PODS_PER_JOB = limits.POD_COUNT.default
"""The most pods one job may run by default (``TRAINJOBS_MAX_PODS_PER_JOB`` raises it).
More is a typo (``replicas: 100000000`` would otherwise be expanded pod by pod until
memory runs out), and a job of that size is better split."""


def name_findings(job: JobPlan, framework_findings: Sequence[Finding] = ()) -> list[Finding]:
    """Kubernetes' own rules for any job's name and namespace, unless the framework
    already reported on the field: the name is a DNS-1123 subdomain of at most 63
    characters (every object of the job carries it in a label), the namespace a
    DNS-1123 label."""
    reported = {f.path for f in framework_findings}
    rules = (
        (
            "name.invalid",
            "metadata.name",
            "the job name",
            job.name,
            labelled_name_problem,
            "rename the job; every object rendered from it carries its name",
        ),
        (
            "namespace.invalid",
            "metadata.namespace",
            "the namespace",
            job.namespace,
            dns1123_label_problem,
            "use the name of a Kubernetes namespace",
        ),
    )
    return [
        Finding(code=code, path=path, message=f"{what} {problem}", value=value, hint=hint)
        for code, path, what, value, rule, hint in rules
        if path not in reported and (problem := rule(value))
    ]


def pod_count_findings(plan: JobPlan) -> list[Finding]:
    """A finding when the job's replica counts add up to more than the pods-per-job
    limit; it names the largest count (``spec.tfReplicaSpecs.Worker.replicas``)."""
    templates = plan.pod_sets
    total = plan.pods
    if total <= limits.POD_COUNT.value():
        return []
    largest = max(templates, key=lambda t: t.replicas)
    return [
        Finding(
            code="replicas.too_many",
            path=f"{largest.path.removesuffix('.template')}.replicas",
            message=f"the job would run {total:,} pods; {limits.POD_COUNT.exceeded()}",
            value=largest.replicas,
            hint="check the replica counts for a typo, or split the job; if it is right, "
            f"raise the limit with {limits.POD_COUNT.env}=N",
        )
    ]


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


def _target_from_elsewhere(finding: Finding, entry: JobEntry, target: Target | None) -> Finding:
    """An unsupported target the job did not ask for itself (``--target``, or the stack's
    ``trainjobs:target``) is said to come from there, at the job's path: its own
    ``trainjobs.target``, which the user never wrote, would send them to the wrong place."""
    if finding.code != "target.unsupported" or (target is None and entry.options.target):
        return finding
    supported = finding.hint.removeprefix("use one of: ")
    if target is not None:
        where, hint = (
            "which --target gives every job",
            (f"render this job without --target, or with one of: {supported}"),
        )
    else:
        where, hint = (
            "the stack's trainjobs:target, as the job names none",
            (f"give the job its own trainjobs: {{target: …}}, one of: {supported}"),
        )
    return replace(finding, path="", message=f"{finding.message}, {where}", hint=hint)


def expand_job(framework: Framework[Any], written: Any, plan: JobPlan, target: Target) -> Rendered:
    """The job of ``plan`` on ``target``, ``written`` its custom resource with every
    capability's edit (``Framework.written``): its framework states what the target
    needs of it, once, and the target takes the plan."""
    if supports(plan, target):
        plan = plan.for_target(framework.target_input(written, target))
    return expand(plan, target)


@dataclass(frozen=True)
class DefaultedJob:
    """A job defaulted and planned, before any platform resource or target acts on it.

    Attributes:
        job: the defaulted custom resource (``Framework.default``); the finished plan
            is written back into it (``Framework.written``), never planned again.
        plan: its plan (``Framework.plan``), which the capabilities then edit.
    """

    job: JobResource
    plan: JobPlan


def base_plan(entry: JobEntry) -> DefaultedJob:
    """The job defaulted and planned. Raises SpecError for a job that cannot be defaulted."""
    job = entry.framework.default(entry.job)
    return DefaultedJob(job, entry.framework.plan(job))


def render_job(
    entry: JobEntry,
    target: Target | None = None,
    default_target: Target = "operator",
    platform: PlatformIndex | None = None,
    planned: DefaultedJob | None = None,
) -> tuple[RenderedJob | None, list[Finding]]:
    """Default, bind, validate and expand one job; findings carry the user's paths.

    The platform resources the job's options name act on the defaulted job in the
    order backend, node pools, queue; each becomes a dependency of the job's unit.
    The plan is then written back into the defaulted job and validated; the operator's
    rules are stated for the valid job. Gang scheduling comes last, so its PodGroup
    counts the pods as they will be.
    ``planned``: the job as ``base_plan`` gives it, when the caller has it.
    """
    chosen: Target = target or entry.target(default_target)
    framework = entry.framework
    defaulted = planned or base_plan(entry)
    plan = defaulted.plan
    findings: list[Finding] = []
    extra: list[Manifest] = []
    depends_on: list[UnitRef] = []
    index = platform or PlatformIndex(())
    references = entry.references()
    for ref in (replace(r, target=chosen, unresolved=index.unresolved) for r in references):
        found, problem = index.resolve(ref, plan.namespace, entry.source)
        if found is None:
            findings += [problem] if problem else []
            continue
        effect = found.plugin.apply_to_plan(found.resource, plan, ref)
        plan = effect.plan
        # Effects name the reference's own path, which already holds the job's.
        findings += [f.located(entry.source) for f in effect.findings]
        extra += effect.manifests
        unit = UnitRef(found.plugin.category, found.key)
        if unit not in depends_on:
            depends_on.append(unit)
    if chosen == "operator":
        # A declared definition it uses (a Trainer runtime) comes with another job.
        for key in entry.after:
            if UnitRef("job", key) not in depends_on:
                depends_on.append(UnitRef("job", key))
    # A plan no capability edited is the defaulted job's own: nothing to write back.
    unedited = plan is defaulted.plan
    written = defaulted.job if unedited else framework.written(defaulted.job, plan)
    own = framework.validate(written)
    findings += [f.located(entry.source, entry.path) for f in own]
    findings += [f.located(entry.source, entry.path) for f in name_findings(plan, own)]
    findings += [f.located(entry.source, entry.path) for f in pod_count_findings(plan)]
    if any(f.severity is Severity.ERROR for f in findings):
        return None, findings
    plan = plan.with_rules(operator_rules(framework, written, plan, chosen))
    gang = apply_gang(entry, plan, chosen, index)
    if gang.plan.pod_sets is not plan.pod_sets:
        # The gang decorates the pods of a valid job: the resource the target reads is
        # written again from the defaulted job, with the finished plan.
        written = framework.written(defaulted.job, gang.plan)
    plan = gang.plan
    findings += [f.located(entry.source, entry.path) for f in gang.findings]
    extra += gang.manifests
    if entry.options.network_policy:
        extra += [listener_policy(plan.name, plan.namespace, x) for x in framework.listeners]
    if any(f.severity is Severity.ERROR for f in findings):
        return None, findings
    manifests, problems = expand_job(framework, written, plan, chosen)
    problems = [_target_from_elsewhere(f, entry, target) for f in problems]
    findings += [f.located(entry.source, entry.path) for f in problems]
    options = entry.options
    ordered = sorted([*manifests, *extra], key=apply_rank)
    ordered = [with_ignored(m, options.ignore) for m in ordered]
    lifecycles, waits = job_lifecycle(
        ordered,
        plan,
        options.wait,
        options.wait_timeout,
        entry.path,
        lambda: framework.run_rules(written),
    )
    findings += [f.located(entry.source) for f in waits]
    if options.registration == "pod-set" and chosen != "pods":
        findings.append(
            POD_SET_TARGET.at(
                f"{entry.path}.{OPTIONS_KEY}.registration", options.registration, target=chosen
            ).located(entry.source)
        )
    if any(f.severity is Severity.ERROR for f in findings):
        return None, findings
    objects = tuple(
        RenderedObject(m, entry.path, entry.source, plan.name, lifecycle)
        for m, lifecycle in zip(ordered, lifecycles, strict=True)
    )
    rendered = RenderedJob(
        ref=job_ref(entry),
        kind=plan.kind.kind,
        objects=objects,
        depends_on=tuple(depends_on),
        outputs=dict(plan.addresses),
        origin=entry.path,
        source=entry.source,
        entry=entry,
        defaulted=defaulted.job,
        job=written,
        plan=plan,
        target=chosen,
    )
    return rendered, findings
