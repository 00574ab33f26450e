"""The CrossGuard policy pack: the check rules as Pulumi policies (``pulumi_policy``).

``pulumi preview --policy-pack policy`` runs ``policy/__main__.py``, which builds the
pack from :func:`policies`: one ``ResourceValidationPolicy`` per check rule, whose
validation turns the resource's arguments back into a Kubernetes manifest and calls
the rule's own function — the very code ``trainjobs check`` runs. Nothing is decided
here but how a Pulumi resource becomes a manifest and how a severity becomes an
enforcement level.

This module is the only one importing ``pulumi_policy`` (``pip install
'trainjobs[policy]'``); ``trainjobs.components`` does not import it by itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pulumi_policy as policy

from trainjobs.check.rules import RULES, Rule, RuleContext, ignored_by, silenced
from trainjobs.check.rules.engine import finding_for
from trainjobs.check.rules.sites import carries_pods
from trainjobs.errors import Severity
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, DEFAULT_PROFILE, Profile

__all__ = ["ENFORCEMENT", "manifest_from_args", "policies", "policy_name", "validation"]

ENFORCEMENT: dict[Severity, policy.EnforcementLevel] = {
    Severity.ERROR: policy.EnforcementLevel.MANDATORY,
    Severity.WARNING: policy.EnforcementLevel.ADVISORY,
    Severity.ADVICE: policy.EnforcementLevel.ADVISORY,
}
"""Errors block ``pulumi up``; warnings and advice are reported."""

_SEVERITY = {
    Severity.ERROR: policy.Severity.HIGH,
    Severity.WARNING: policy.Severity.MEDIUM,
    Severity.ADVICE: policy.Severity.LOW,
}


def policy_name(code: str) -> str:
    """The policy of a rule: ``pss.baseline.host_path`` → ``pss-baseline-host-path``."""
    return code.replace(".", "-").replace("_", "-")


def _plain(value: Any) -> Any:
    """Plain data from the engine's (proxied) arguments: whole numbers back to ints."""
    if isinstance(value, Mapping):
        return {str(k): _plain(value[k]) for k in value}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def manifest_from_args(resource_type: str, props: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Kubernetes object a resource's arguments describe, or None if no rule applies.

    ``resource_type`` is the Pulumi type token: ``kubernetes:core/v1:Pod``,
    ``kubernetes:apps/v1:Deployment``, ``kubernetes:kubeflow.org/v1:TFJob`` (a
    CustomResource). Only objects that hold pods are converted, so the arguments of
    a Secret — whose generated value is unknown during a preview — are never read.
    """
    package, _, rest = resource_type.partition(":")
    token, _, kind = rest.rpartition(":")
    if package != "kubernetes" or not token:
        return None
    api_version = str(props.get("apiVersion") or token.removeprefix("core/"))
    kind = str(props.get("kind") or kind)
    if not carries_pods(api_version, kind):
        return None
    manifest: dict[str, Any] = _plain(props)
    manifest["apiVersion"], manifest["kind"] = api_version, kind
    return manifest


def _owner(manifest: Mapping[str, Any]) -> str:
    meta = manifest.get("metadata") or {}
    namespace = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{manifest.get('kind')} {namespace}{meta.get('name')}"


def validation(rule: Rule, ctx: RuleContext) -> policy.ResourceValidation:
    """The policy's validation: arguments → manifest → the rule → one report per violation."""

    def validate(args: policy.ResourceValidationArgs, report: policy.ReportViolation) -> None:
        manifest = manifest_from_args(args.resource_type, args.props)
        if manifest is None or silenced(rule.code, ignored_by(manifest)):
            return
        owner = _owner(manifest)
        for violation in rule.check(manifest, ctx):
            report(finding_for(rule, violation, owner, violation.path).render(), None)

    return validate


def policies(
    profile: Profile = DEFAULT_PROFILE,
    ignore: Iterable[str] = (),
    k8s_version: str = DEFAULT_K8S_VERSION,
) -> list[policy.Policy]:
    """One policy per check rule, enforced by its severity.

    Rules outside ``profile`` and rules in ``ignore`` (codes or groups) are listed
    but disabled, so a stack's policy configuration can still turn one on.
    """
    ctx = RuleContext(profile=profile, k8s_version=k8s_version)
    ignored = list(ignore)
    out: list[policy.Policy] = []
    for rule in RULES:
        active = rule.applies(profile) and not silenced(rule.code, ignored)
        out.append(
            policy.ResourceValidationPolicy(
                name=policy_name(rule.code),
                description=f"{rule.title} ({rule.code}). {rule.docs}",
                validate=validation(rule, ctx),
                enforcement_level=ENFORCEMENT[rule.severity]
                if active
                else policy.EnforcementLevel.DISABLED,
                severity=_SEVERITY[rule.severity],
                tags=["trainjobs", rule.level or "training"],
            )
        )
    return out
