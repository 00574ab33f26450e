"""``run``: render a stack and apply every check, collecting all findings at once."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from trainjobs.check import crd_schema, k8s_schema
from trainjobs.check.crd_claims import crd_claim_findings
from trainjobs.check.names import metadata_problems, name_findings
from trainjobs.check.placement import placement_findings
from trainjobs.check.pod_spec import pod_spec_problems
from trainjobs.check.quantities import HINT as QUANTITY_HINT
from trainjobs.check.quantities import pod_spec_paths, quantity_problems
from trainjobs.check.rules import RuleContext, ignore_findings, rule_findings
from trainjobs.check.stages import attribute
from trainjobs.errors import Finding, Rule, Severity, SpecError
from trainjobs.render import RenderedObject, Rendering, render
from trainjobs.spec.entry import JobEntry, Target
from trainjobs.spec.stack import Profile, StackSpec

__all__ = ["manifest_findings", "run", "template_findings"]


POD_TEMPLATE_SCHEMA = Rule(
    "schema.pod_template", "{message}", hint="see the Kubernetes PodSpec reference for this field"
)
TEMPLATE_LABEL = Rule(
    "label.invalid",
    "{message}",
    hint="label keys are [prefix/]name, values at most 63 letters, digits, '-', '_' or '.'",
)
UNKNOWN_KIND = Rule(
    "schema.unknown_kind",
    "no schema is known for this kind, so it was not checked",
    hint="add its CRD to crds/",
    severity=Severity.WARNING,
)
NO_SCHEMA_VERSION = Rule(
    "k8s_version",
    "no schema is bundled for this Kubernetes version",
    hint="use one of {versions}",
)


def _quantity_findings(pod_spec: object, where: str, prefix: str, source: str) -> list[Finding]:
    """``quantity.invalid`` for each bad quantity of ``pod_spec``, its path after ``prefix``."""
    return [
        Finding(
            code="quantity.invalid",
            path=f"{prefix}{path}",
            message=message,
            value=value,
            hint=QUANTITY_HINT,
            source=source,
        )
        for path, message, value in quantity_problems(pod_spec, where)
    ]


def _pod_findings(
    pod_spec: object,
    where: str,
    prefix: str,
    source: str,
    *,
    mounts: bool = True,
    version: str | None = None,
) -> list[Finding]:
    """``pod.invalid`` (and, given a ``version``, ``api.invalid``) for what the API server
    refuses in ``pod_spec``."""
    return [
        Finding(
            code=problem.code,
            path=f"{prefix}{problem.path}",
            message=problem.message,
            value=problem.value,
            hint=problem.hint,
            source=source,
        )
        for problem in pod_spec_problems(pod_spec, where, mounts=mounts, version=version)
    ]


def template_findings(entries: Sequence[JobEntry], version: str) -> list[Finding]:
    """Every pod template in the input against the Kubernetes PodTemplateSpec schema, its
    label and annotation keys, its resource quantities and the API server's Pod rules."""
    findings: list[Finding] = []
    for entry in entries:
        for ref in entry.framework.pod_templates(entry.job):
            for path, message, value in k8s_schema.template_problems(ref.template, version):
                field = f"{entry.path}.{ref.path}" + (f".{path}" if path else "")
                findings.append(
                    POD_TEMPLATE_SCHEMA.at(field, value, message=message).located(entry.source)
                )
            where = f"{ref.path}.metadata"
            for path, message, value in metadata_problems(ref.template.get("metadata"), where):
                findings.append(
                    TEMPLATE_LABEL.at(f"{entry.path}.{path}", value, message=message).located(
                        entry.source
                    )
                )
            pod_spec = ref.template.get("spec")
            findings += _quantity_findings(
                pod_spec, f"{ref.path}.spec", f"{entry.path}.", entry.source
            )
            findings += _pod_findings(
                pod_spec,
                f"{ref.path}.spec",
                f"{entry.path}.",
                entry.source,
                mounts=not entry.framework.reports_mounts,
                version=version,
            )
    return findings


def _schema_hint(message: str, own: bool) -> str:
    """A fix for a schema problem, from what the message says is wrong."""
    text = message.lower()
    if "required" in text:
        return "add the field the message names"
    if "additional properties" in text or "unknown field" in text or "not allowed" in text:
        return "remove the field, or check its spelling against the API reference"
    if "is not of type" in text or "is not valid under" in text:
        return "write a value of the type the message names"
    if "is not one of" in text:
        return "use one of the values the message lists"
    if own:
        return "change this field to what the message asks (kubectl explain describes it)"
    return "change the job field this value comes from to what the message asks"


def manifest_findings(
    objects: Sequence[RenderedObject],
    version: str,
    job_resources: Collection[tuple[str, str, str]] = (),
) -> list[Finding]:
    """Rendered objects against the Kubernetes schema or their CRD, plus name and
    quantity rules.

    ``job_resources`` are the (origin, apiVersion, kind) of objects that are the
    jobs themselves (a TFJob on the operator target): a problem in one of them is
    reported at the user's field path (``jobs[0].spec.runPolicy.backoffLimit``).
    """
    findings = name_findings(objects)
    checked: list[tuple[RenderedObject, str, list[k8s_schema.SchemaProblem]]] = []
    builtin: list[RenderedObject] = []
    for obj in objects:
        found = crd_schema.problems(obj.manifest)
        if found is not None:
            checked.append((obj, "schema.crd", found))
        elif k8s_schema.has_schema(obj.manifest, version):
            builtin.append(obj)
        else:
            kind = f"{obj.manifest.get('apiVersion')} {obj.manifest.get('kind')}"
            findings.append(
                UNKNOWN_KIND.at(f"{obj.origin} → {obj.title}", kind).located(obj.source)
            )
    for obj in objects:
        for where, pod_spec in pod_spec_paths(obj.manifest):
            prefix = f"{obj.origin} → {obj.title}: "
            findings += _quantity_findings(pod_spec, where, prefix, obj.source)
            findings += _pod_findings(pod_spec, where, prefix, obj.source)
    batch = k8s_schema.problems_many([o.manifest for o in builtin], version)
    checked += [(obj, "schema.k8s", found) for obj, found in zip(builtin, batch, strict=True)]
    for obj, code, found in checked:
        key = (obj.origin, str(obj.manifest.get("apiVersion")), str(obj.manifest.get("kind")))
        own = key in job_resources
        for path, message, value in found:
            hint = _schema_hint(message, own)
            if own:
                where = f"{obj.origin}.{path}" if path else obj.origin
            else:
                where = f"{obj.origin} → {obj.title}: {path or '(root)'}"
            findings.append(
                Finding(
                    code=code,
                    path=where,
                    message=message,
                    value=value,
                    hint=hint,
                    source=obj.source,
                )
            )
    return findings


def _rules_of_broken_jobs(stack: StackSpec, broken: set[str]) -> list[Finding]:
    """The framework's own rules (job name, containers …) for jobs not expanded.

    Their templates are malformed, so a rule may trip over them; the schema
    findings already say what to fix there, so such a rule is passed over.
    """
    findings: list[Finding] = []
    for entry in stack.jobs:
        if entry.path not in broken:
            continue
        try:
            problems = entry.framework.validate(entry.job)
        except (AttributeError, TypeError, KeyError, ValueError):
            continue
        findings += [f.located(entry.source, entry.path) for f in problems]
    return findings


def run(
    stack: StackSpec,
    *,
    target: Target | None = None,
    k8s_version: str | None = None,
    profile: Profile | None = None,
) -> Rendering:
    """Render ``stack`` and check everything; raise SpecError with every error found.

    ``target`` overrides every job's target; ``k8s_version`` the stack's version;
    ``profile`` the stack's Pod Security Standards level (``trainjobs:podSecurity``).
    Warnings and advice come back in ``Rendering.findings``. Every finding names the
    stage of a real cluster that would refuse it (:mod:`trainjobs.check.stages`).
    """
    try:
        rendering = _run(stack, target=target, k8s_version=k8s_version, profile=profile)
    except SpecError as exc:
        staged = attribute(
            _in_their_files(exc.findings, stack.jobs), stack.jobs, target, stack.target
        )
        raise SpecError.from_findings(staged) from None
    findings = _in_their_files(rendering.findings, stack.jobs)
    findings = attribute(findings, stack.jobs, target, stack.target)
    return replace(rendering, findings=tuple(findings))


def _in_their_files(findings: Sequence[Finding], jobs: Sequence[JobEntry]) -> list[Finding]:
    """``findings``, one about an option given beside a job's ``file:`` entry located in
    the file holding that entry (the stack) rather than in the job's file."""
    out = list(findings)
    for job in jobs:
        if not job.option_sources:
            continue
        for i, finding in enumerate(out):
            if finding.source == job.source and finding.path.startswith(job.path):
                out[i] = replace(finding, source=job.source_of(finding.path))
    return out


def _run(
    stack: StackSpec,
    *,
    target: Target | None,
    k8s_version: str | None,
    profile: Profile | None,
) -> Rendering:
    """``run`` before the findings are attributed to their stages."""
    version = k8s_version or stack.k8s_version
    try:
        k8s_schema.available_versions()
        if version not in k8s_schema.available_versions():
            raise ValueError(version)
    except ValueError:
        raise SpecError.from_findings(
            [
                NO_SCHEMA_VERSION.at(
                    "k8sVersion", version, versions=", ".join(k8s_schema.available_versions())
                ).located(stack.source)
            ]
        ) from None
    findings = template_findings(stack.jobs, version)
    # A job whose pod templates break the schema is not expanded: the engine
    # reads those templates, and the user must fix them first anyway. The other
    # jobs are still rendered so every finding comes out in one run.
    broken = {f.path.split(".spec.", 1)[0] for f in findings}
    renderable = replace(stack, jobs=tuple(e for e in stack.jobs if e.path not in broken))
    try:
        rendering = render(renderable, target, pod_security=profile, k8s_version=version)
    except SpecError as exc:
        raise SpecError.from_findings([*findings, *exc.findings]) from None
    if findings:
        findings += _rules_of_broken_jobs(stack, broken)
        raise SpecError.from_findings([*findings, *rendering.findings])
    findings += rendering.findings
    findings += crd_claim_findings(rendering.units)
    findings += placement_findings(stack, rendering)
    own = {(j.origin, j.job.api_version, j.job.kind) for j in rendering.jobs}
    findings += manifest_findings(rendering.objects, version, own)
    findings += ignore_findings(stack)
    context = RuleContext(profile=profile or stack.pod_security, k8s_version=version)
    findings += rule_findings(rendering, context, stack.ignore)
    if any(f.severity is Severity.ERROR for f in findings):
        raise SpecError.from_findings(findings)
    return replace(rendering, findings=tuple(findings), k8s_version=version)
