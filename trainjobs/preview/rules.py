"""Which changes replace an object, and which the API server refuses.

The replace rules are the Pulumi Kubernetes provider's (:mod:`trainjobs.k8s.replace`,
where the components' pod sets read them too); here, in addition, the fields a job
kind's CRD forbids changing.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.changes import FieldChange
from trainjobs.k8s.crds import immutable_fields, load_crd
from trainjobs.k8s.replace import ANY_KIND, RULES, ReplaceRule, replacing_rule, rules_for

__all__ = ["ANY_KIND", "RULES", "ReplaceRule", "refusing_rule", "replacing_rule", "rules_for"]


@cache
def _immutable(api_version: str, kind: str) -> ReplaceRule | None:
    """The fields of a job kind's custom resource its CRD forbids changing, as a rule."""
    framework = REGISTRY.by_kind(api_version, kind)
    if framework is None or not framework.crd_file:
        return None
    group, _, version = api_version.rpartition("/")
    fields = immutable_fields(load_crd(framework.crd_file), version)
    if not fields:
        return None
    cites = f"crds/{framework.crd_file}: x-kubernetes-validations rule self == oldSelf"
    return ReplaceRule(group, (version,), kind, fields, cites)


def refusing_rule(old: Mapping[str, Any], change: FieldChange) -> tuple[ReplaceRule, str] | None:
    """The CRD rule (and its field) by which the API server refuses ``change`` to an
    existing job's custom resource, or None.

    The provider does not know these fields: it sends the update, the API server
    refuses it ("field is immutable") and ``pulumi up`` fails.
    """
    rule = _immutable(str(old.get("apiVersion", "")), str(old.get("kind", "")))
    field = rule.field_of(change) if rule is not None else None
    return None if rule is None or field is None else (rule, field)
