"""Findings every framework's pod templates share: an image per container, and the
container the operator looks for by name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trainjobs.errors import Finding

__all__ = ["PINNED_IMAGE_HINT", "default_container_findings", "image_findings"]

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
