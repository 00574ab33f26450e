"""Run the rules over a rendering: violations → findings in the user's terms.

Silencing, in the order it applies: a rule outside the profile does not run; a
rule named in an object's ``trainjobs.dev/ignore-checks`` annotation (written by
the render from the job's ``trainjobs: {ignore: [...]}``) does not run on it; a
rule named in the stack's ``trainjobs:ignore`` is dropped from the findings.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from trainjobs.check.rules.locate import JobOrigins
from trainjobs.check.rules.model import RuleContext, Violation, silenced
from trainjobs.check.rules.registry import RULES, RuleRegistry
from trainjobs.check.rules.rule import Rule
from trainjobs.check.rules.sites import pod_sites
from trainjobs.errors import Finding
from trainjobs.render import IGNORE_ANNOTATION, RenderedJob, RenderedUnit, Rendering
from trainjobs.spec.entry import OPTIONS_KEY
from trainjobs.spec.load import CONFIG_NAMESPACE
from trainjobs.spec.stack import StackSpec

__all__ = [
    "Silence",
    "finding_for",
    "ignore_findings",
    "ignored_by",
    "object_violations",
    "owner_title",
    "policy_name",
    "rule_findings",
]


Silence = Literal["job", "stack", "object"]
"""Where a finding's hint says to silence its rule: ``job``, beside the job
(``trainjobs: {ignore: […]}``); ``stack``, for the stack (a backend, pool or operator
takes no ``trainjobs:`` options); ``object``, each way the policy pack honours (a job's
ignore, the object's annotation, the pack's config), as the pack cannot tell a job's
objects from others."""

_SILENCE = {
    "job": "silence it with `trainjobs: {{ignore: [{code}]}}`",
    "stack": "silence it for the stack with `trainjobs:ignore: [{code}]`",
    "object": "silence it for a job with `trainjobs: {{ignore: [{code}]}}`, for any object "
    "with its annotation `trainjobs.dev/ignore-checks: {code}`, or everywhere with "
    '`"{policy}": "disabled"` in the policy pack config',
}


def policy_name(code: str) -> str:
    """The policy of a rule in the policy pack: ``pss.baseline.host_path`` →
    ``pss-baseline-host-path``."""
    return code.replace(".", "-").replace("_", "-")


def ignored_by(manifest: Mapping[str, Any]) -> list[str]:
    """The rule codes an object's ``IGNORE_ANNOTATION`` silences."""
    annotations = (manifest.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(IGNORE_ANNOTATION, "") if isinstance(annotations, Mapping) else ""
    return [code.strip() for code in str(text).split(",") if code.strip()]


def object_violations(
    manifest: Mapping[str, Any], ctx: RuleContext, rules: RuleRegistry = RULES
) -> Iterator[tuple[Rule, Violation]]:
    """Every violation of one object, rule by rule, minus what the object itself silences."""
    ignored = ignored_by(manifest)
    sites = pod_sites(manifest)
    for rule in rules:
        if rule.pod_check is not None and not sites:
            continue  # a rule about pods has nothing to look at in a Service or Secret
        if rule.applies(ctx.profile) and not (ignored and silenced(rule.code, ignored)):
            for violation in rule.violations(manifest, ctx, sites):
                yield rule, violation


def owner_title(unit: RenderedUnit) -> str:
    """``job kubeflow/mnist``, ``backend training/redis`` — what a message names."""
    return str(unit.ref)


def rule_findings(
    rendering: Rendering,
    ctx: RuleContext,
    ignore: Sequence[str] = (),
    rules: RuleRegistry = RULES,
) -> list[Finding]:
    """Findings of every rule over every object of ``rendering``, in apply order.

    Replicas made from one template break a rule in the same written place; that
    place is reported once.
    """
    units = {id(obj): unit for unit in rendering.units for obj in unit.objects}
    origins: dict[int, JobOrigins] = {}
    findings: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    for obj in rendering.objects:
        unit = units.get(id(obj))
        for rule, violation in object_violations(obj.manifest, ctx, rules):
            if ignore and silenced(rule.code, ignore):
                continue
            where = f"{obj.origin} → {obj.title}: {violation.path or '(root)'}"
            if isinstance(unit, RenderedJob):
                origin = origins.setdefault(id(unit), JobOrigins(unit))
                found = origin.locate(obj.manifest, violation.path)
                where = f"{unit.entry.path}.{found}" if found else where
            owner = owner_title(unit) if unit is not None else obj.title
            key = (rule.code, where, repr(violation.value))
            if key in seen:
                continue
            seen.add(key)
            silence: Silence = "job" if isinstance(unit, RenderedJob) else "stack"
            findings.append(finding_for(rule, violation, owner, where, obj.source, silence))
    return findings


def finding_for(
    rule: Rule,
    violation: Violation,
    owner: str,
    path: str,
    source: str = "",
    silence: Silence = "job",
) -> Finding:
    """The finding of one violation: the rule's severity and message, at ``path``.

    ``owner`` names what breaks the rule (``job training/llm``); the hint names the
    rule's code and how to silence it if intended (see :data:`Silence`; default beside
    the job).
    """
    return Finding(
        code=rule.code,
        path=path,
        message=rule.message(violation, owner),
        value=violation.value,
        hint=_with_code(violation.hint, rule.code, silence),
        severity=rule.severity,
        source=source,
    )


def _with_code(hint: str, code: str, silence: Silence = "job") -> str:
    """The hint, naming the rule's code so the finding can be silenced if intended."""
    if code in hint:
        return hint
    how = _SILENCE[silence].format(code=code, policy=policy_name(code))
    return f"{hint} (rule {code}; {how})"


def _unknown(entry: str, path: str, source: str, rules: RuleRegistry) -> Finding:
    close = difflib.get_close_matches(entry, rules.codes(), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else "`trainjobs check --list-rules` lists them"
    return Finding(
        code="ignore.unknown",
        path=path,
        message="no check rule has this code",
        value=entry,
        hint=hint,
        source=source,
    )


def ignore_findings(stack: StackSpec, rules: RuleRegistry = RULES) -> list[Finding]:
    """An error for each ``ignore`` entry, of a job or of the stack, that names no rule."""
    findings = []
    for job in stack.jobs:
        for i, entry in enumerate(job.options.ignore or []):
            if not rules.matches(entry):
                path = f"{job.path}.{OPTIONS_KEY}.ignore[{i}]"
                findings.append(_unknown(entry, path, job.source, rules))
    for i, entry in enumerate(stack.ignore):
        if not rules.matches(entry):
            path = f"{CONFIG_NAMESPACE}:ignore[{i}]"
            findings.append(_unknown(entry, path, stack.source, rules))
    return findings
