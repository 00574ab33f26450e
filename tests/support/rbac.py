"""Assertions about the RBAC an operator install grants."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_BUILT_IN_ROLES = {"cluster-admin", "admin", "edit"}
_DANGEROUS_VERBS = {"*", "escalate", "bind", "impersonate"}


def assert_least_privilege(manifests: Iterable[dict[str, Any]]) -> None:
    """No wildcard, no escalation verbs, no secrets, no binding to a built-in broad role."""
    for manifest in manifests:
        kind = manifest["kind"]
        if kind in ("ClusterRole", "Role"):
            for rule in manifest["rules"]:
                for key in ("apiGroups", "resources", "verbs", "nonResourceURLs"):
                    assert "*" not in rule.get(key, []), (manifest["metadata"]["name"], rule)
                assert not _DANGEROUS_VERBS & set(rule["verbs"]), rule
                assert "secrets" not in rule.get("resources", []), rule
        if kind in ("ClusterRoleBinding", "RoleBinding"):
            assert manifest["roleRef"]["name"] not in _BUILT_IN_ROLES, manifest
