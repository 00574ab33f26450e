"""Where a pod's containers are, in a pod spec or template held as plain dicts.

Input is read as it comes: a list that is not a list, or an entry that is not a
mapping, is passed over here (the schema check reports it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["CONTAINER_LISTS", "containers", "each_container", "spec_containers"]

CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
"""Every list of containers a PodSpec holds."""


def containers(template: Mapping[str, Any], key: str = "containers") -> list[dict[str, Any]]:
    """The containers (or the ``key`` list: ``initContainers`` …) of a pod template."""
    spec = template.get("spec") or {}
    return [c for c in spec.get(key) or [] if isinstance(c, dict)]


def spec_containers(pod_spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The containers of a pod spec (not a template)."""
    return containers({"spec": pod_spec})


def each_container(
    pod_spec: Mapping[str, Any], fields: Sequence[str] = CONTAINER_LISTS
) -> Iterator[tuple[str, int, Mapping[str, Any]]]:
    """(list, index, container) for every container of a pod spec, the ``fields`` lists
    in their order."""
    for field in fields:
        items = pod_spec.get(field)
        if isinstance(items, list):
            for index, container in enumerate(items):
                if isinstance(container, Mapping):
                    yield field, index, container
