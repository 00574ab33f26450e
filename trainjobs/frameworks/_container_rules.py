"""Findings every framework's pod templates share: an image per container, and the
container the operator looks for by name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trainjobs.errors import Finding, Severity

__all__ = [
    "PINNED_IMAGE_HINT",
    "default_container_findings",
    "image_findings",
    "no_containers",
    "template_restart_policy",
]

PINNED_IMAGE_HINT = "set image to a pinned tag, e.g. 'repo/trainer:1.0'"


def image_findings(
    containers: Sequence[Mapping[str, Any]], path: str, example: str
) -> list[Finding]:
    """``template.image`` for each container without an image; ``path`` is the
    template's, ``example`` the fix's example (``image: repo/trainer:1.0``)."""
    return [
        Finding(
            code="template.image",
            path=f"{path}.spec.containers[{i}].image",
            message="every container needs an image",
            hint=example,
        )
        for i, container in enumerate(containers)
        if not container.get("image")
    ]


def default_container_findings(
    containers: Sequence[Mapping[str, Any]], path: str, name: str, why: str
) -> list[Finding]:
    """``template.default_container`` when no container is called ``name``; ``why``
    says what the operator does with that container."""
    if any(c.get("name") == name for c in containers):
        return []
    return [
        Finding(
            code="template.default_container",
            path=f"{path}.spec.containers",
            message=f"no container is named {name!r}; {why}",
            value=[c.get("name") for c in containers],
            hint=f"name the training container {name!r}",
        )
    ]


def no_containers(path: str, hint: str, who: str = "every replica needs") -> Finding:
    """``template.containers``: the template at ``path`` has none."""
    return Finding(
        code="template.containers",
        path=f"{path}.spec.containers",
        message=f"{who} at least one container",
        hint=hint,
    )


def template_restart_policy(template: Mapping[str, Any], path: str) -> list[Finding]:
    """``template.restart_policy`` when the template sets the restartPolicy the operator
    replaces with the replica's."""
    policy = (template.get("spec") or {}).get("restartPolicy")
    if not policy:
        return []
    return [
        Finding(
            code="template.restart_policy",
            path=f"{path}.spec.restartPolicy",
            message="the replica's restartPolicy overrides the template's",
            value=policy,
            hint="set restartPolicy on the replica spec instead",
            severity=Severity.WARNING,
        )
    ]
