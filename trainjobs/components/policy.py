"""The CrossGuard policy pack: the check rules as Pulumi policies (``pulumi_policy``).

``pulumi preview --policy-pack policy`` runs ``policy/__main__.py``, which builds the
pack from :func:`policies`: one ``ResourceValidationPolicy`` per check rule, whose
validation turns the resource's arguments back into a Kubernetes manifest and calls
the rule's own function — the very code ``trainjobs check`` runs. Nothing is decided
here but how a Pulumi resource becomes a manifest and how a severity becomes an
enforcement level.

Each policy declares its configuration (:data:`CONFIG_SCHEMA`: ``profile``,
``ignore``, ``k8sVersion``), set with Pulumi's own ``--policy-pack-config`` file;
nothing is read from the environment. During a preview some arguments are not
known yet (an image a registry push outputs): the manifest holds
:data:`UNKNOWN` there, and a violation at such a field is not reported — the
same policy runs again on ``pulumi up``, when the value is known.

This module is the only one importing ``pulumi_policy`` (``pip install
'trainjobs[policy]'``); ``trainjobs.components`` does not import it by itself.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi_policy as policy
from pulumi_policy.proxy import UnknownValueError

from trainjobs.check.rules import RULES, Rule, RuleContext, ignored_by, silenced
from trainjobs.check.rules.engine import finding_for, policy_name
from trainjobs.check.rules.sites import carries_pods
from trainjobs.errors import Severity, format_path
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, DEFAULT_PROFILE, PROFILES, Profile

__all__ = [
    "ENFORCEMENT",
    "POD_SET_TYPES",
    "UNKNOWN",
    "PolicyConfig",
    "config_schema",
    "manifest_and_unknowns",
    "manifest_from_args",
    "objects_and_unknowns",
    "policies",
    "policy_name",
    "validation",
]

UNKNOWN = "<unknown until the update>"
"""What a manifest holds where the engine sent a value not known yet (a preview)."""

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


def _plain(value: Any, path: list[str | int], unknown: list[str]) -> Any:
    """Plain data from the engine's (proxied) arguments: whole numbers back to ints, and
    :data:`UNKNOWN` (its path noted in ``unknown``) where a value is not known yet."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key in value:
            out[str(key)] = _read(lambda k=key: value[k], [*path, str(key)], unknown)
        return out
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_read(lambda i=i: value[i], [*path, i], unknown) for i in range(len(value))]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _read(get: Any, path: list[str | int], unknown: list[str]) -> Any:
    try:
        item = get()
    except UnknownValueError:
        unknown.append(format_path(path))
        return UNKNOWN
    return _plain(item, path, unknown)


def manifest_and_unknowns(
    resource_type: str, props: Mapping[str, Any]
) -> tuple[dict[str, Any] | None, list[str]]:
    """The Kubernetes object a resource's arguments describe (None if no rule applies),
    and the paths in it whose values are not known yet.

    ``resource_type`` is the Pulumi type token: ``kubernetes:core/v1:Pod``,
    ``kubernetes:apps/v1:Deployment``, ``kubernetes:kubeflow.org/v1:TFJob`` (a
    CustomResource). Only objects that hold pods are converted, so the arguments of
    a Secret — whose generated value is unknown during a preview — are never read.
    """
    package, _, rest = resource_type.partition(":")
    token, _, kind = rest.rpartition(":")
    if package != "kubernetes" or not token:
        return None, []
    unknown: list[str] = []
    api_version = str(_read(lambda: props.get("apiVersion"), ["apiVersion"], unknown) or "")
    kind = str(_read(lambda: props.get("kind"), ["kind"], unknown) or kind)
    if not api_version or api_version == UNKNOWN:
        api_version = token.removeprefix("core/")
    if kind == UNKNOWN:
        kind = resource_type.rpartition(":")[2]
    unknown.clear()
    if not carries_pods(api_version, kind):
        return None, []
    manifest: dict[str, Any] = _plain(props, [], unknown)
    manifest["apiVersion"], manifest["kind"] = api_version, kind
    return manifest, unknown


POD_SET_TYPES = ("pulumi-python:dynamic/trainjobs:PodSet", "trainjobs:index:PodSet")
"""A pod set's type tokens: in a Python program (dynamic), and in the component provider."""


def objects_and_unknowns(
    resource_type: str, props: Mapping[str, Any]
) -> list[tuple[dict[str, Any], list[str]]]:
    """Each Kubernetes object a resource's arguments describe that a rule applies to, with
    the paths in it not known yet: the one object of a ``kubernetes:`` resource, or each
    Pod of a pod set (``registration: pod-set``), so a pod set is judged object by object
    as the same objects registered one by one would be."""
    if resource_type not in POD_SET_TYPES:
        manifest, unknown = manifest_and_unknowns(resource_type, props)
        return [] if manifest is None else [(manifest, unknown)]
    try:
        objects = props.get("objects")
    except UnknownValueError:
        return []  # not known until the update, when the same policy runs again
    if not isinstance(objects, Mapping):
        return []
    out = []
    for key in sorted(objects):
        missing: list[str] = []
        member = _read(lambda k=key: objects[k], [], missing)
        if not isinstance(member, dict):
            continue
        if carries_pods(str(member.get("apiVersion")), str(member.get("kind"))):
            out.append((member, missing))
    return out


def manifest_from_args(resource_type: str, props: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Kubernetes object a resource's arguments describe, or None if no rule applies
    (see :func:`manifest_and_unknowns`)."""
    return manifest_and_unknowns(resource_type, props)[0]


def _touches(path: str, unknown: Sequence[str]) -> bool:
    """Whether a violation at ``path`` reads a value that is not known yet."""
    return any(
        path == u or path.startswith((u + ".", u + "[")) or u.startswith((path + ".", path + "["))
        for u in unknown
    )


@dataclass(frozen=True)
class PolicyConfig:
    """One policy's configuration (its :func:`config_schema`).

    Attributes:
        profile: the Pod Security level the stack is held to: a rule of the
            ``restricted`` level reports only under ``restricted``. Default the pack's.
        ignore: objects the policy skips: ``namespace/name`` or ``name`` patterns
            (``*`` and ``?`` match), e.g. ``kube-system/*``. Default none.
        k8s_version: the Kubernetes version the objects are checked against.
    """

    profile: Profile
    ignore: tuple[str, ...]
    k8s_version: str

    @staticmethod
    def read(config: Mapping[str, Any] | None, default: PolicyConfig) -> PolicyConfig:
        """The config the engine passed (already checked against the schema), over defaults."""
        config = config or {}
        profile = config.get("profile", default.profile)
        ignore = config.get("ignore", default.ignore)
        version = config.get("k8sVersion", default.k8s_version)
        return PolicyConfig(
            profile=profile if profile in PROFILES else default.profile,
            ignore=tuple(str(i) for i in ignore) if isinstance(ignore, list | tuple) else (),
            k8s_version=str(version),
        )


def config_schema(default: PolicyConfig) -> policy.PolicyConfigSchema:
    """What each policy's configuration may hold (Pulumi checks a config file against it)."""
    return policy.PolicyConfigSchema(
        properties={
            "profile": {
                "type": "string",
                "enum": list(PROFILES),
                "default": default.profile,
                "description": "Pod Security level the stack is held to; rules of the "
                f"restricted level report only under restricted. Default {default.profile}.",
            },
            "ignore": {
                "type": "array",
                "items": {"type": "string"},
                "default": list(default.ignore),
                "description": "Objects this policy skips: namespace/name or name patterns "
                "(* and ? match), e.g. kube-system/*. Default none.",
            },
            "k8sVersion": {
                "type": "string",
                "pattern": r"^1\.\d+$",
                "default": default.k8s_version,
                "description": "Kubernetes version the objects are checked against. "
                f"Default {default.k8s_version}.",
            },
        }
    )


def _skipped(manifest: Mapping[str, Any], patterns: Sequence[str]) -> bool:
    meta = manifest.get("metadata") or {}
    name = str(meta.get("name", ""))
    full = f"{meta['namespace']}/{name}" if meta.get("namespace") else name
    return any(fnmatch.fnmatchcase(full, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def _owner(manifest: Mapping[str, Any]) -> str:
    meta = manifest.get("metadata") or {}
    namespace = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{manifest.get('kind')} {namespace}{meta.get('name')}"


def validation(rule: Rule, default: PolicyConfig) -> policy.ResourceValidation:
    """The policy's validation: arguments → manifest → the rule → one report per violation.

    ``default`` is the configuration when the policy's own config says nothing.
    """

    def validate(args: policy.ResourceValidationArgs, report: policy.ReportViolation) -> None:
        config = PolicyConfig.read(args.get_config(), default)
        if not rule.applies(config.profile):
            return
        ctx = RuleContext(profile=config.profile, k8s_version=config.k8s_version)
        for manifest, unknown in objects_and_unknowns(args.resource_type, args.props):
            if silenced(rule.code, ignored_by(manifest)) or _skipped(manifest, config.ignore):
                continue
            owner = _owner(manifest)
            try:
                violations = list(rule.check(manifest, ctx))
            except (TypeError, ValueError, AttributeError, KeyError):
                if unknown:
                    continue  # a value the rule needs is known only at the update: judged then
                raise
            for violation in violations:
                if _touches(violation.path, unknown):
                    continue
                finding = finding_for(rule, violation, owner, violation.path, silence="object")
                report(finding.render(), None)

    return validate


def policies(
    profile: Profile = DEFAULT_PROFILE,
    ignore: Iterable[str] = (),
    k8s_version: str = DEFAULT_K8S_VERSION,
) -> list[policy.Policy]:
    """One policy per check rule, enforced by its severity.

    ``profile`` and ``k8s_version`` are each policy's configuration defaults; rules
    in ``ignore`` (codes or groups) are listed but disabled, so a policy pack config
    can still turn one on. A rule of the restricted level is enabled but reports
    only where its ``profile`` config is ``restricted``.
    """
    default = PolicyConfig(profile=profile, ignore=(), k8s_version=k8s_version)
    schema = config_schema(default)
    ignored = list(ignore)
    out: list[policy.Policy] = []
    for rule in RULES:
        active = not silenced(rule.code, ignored)
        out.append(
            policy.ResourceValidationPolicy(
                name=policy_name(rule.code),
                description=f"{rule.title} ({rule.code}). {rule.docs}",
                validate=validation(rule, default),
                enforcement_level=ENFORCEMENT[rule.severity]
                if active
                else policy.EnforcementLevel.DISABLED,
                severity=_SEVERITY[rule.severity],
                tags=["trainjobs", rule.level or "training"],
                config_schema=schema,
            )
        )
    return out
