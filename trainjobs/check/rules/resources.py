"""Rules about what a pod runs and asks for: pinned images, device requests, resource requests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from trainjobs.check.rules.model import RuleContext, Violation
from trainjobs.check.rules.sites import PodSite, containers, quoted, split_path
from trainjobs.k8s.quantity import QuantityError, parse_quantity

__all__ = ["device_limits", "image_problem", "is_device", "requests", "unpinned_images"]


def image_problem(image: str) -> str | None:
    """Why ``image`` is not pinned, or None: a digest pins it, a tag other than latest does."""
    if "@" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "has no tag, so the node pulls :latest"
    if last.rsplit(":", 1)[1] == "latest":
        return "is tagged :latest"
    return None


def unpinned_images(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Images without a version tag or digest."""
    for path, container in containers(site.spec):
        image = container.get("image")
        if not isinstance(image, str) or not image:
            continue
        problem = image_problem(image)
        if problem:
            yield Violation(
                site.at(f"{path}.image"),
                f"image of container {container.get('name')!r} {problem}: what it runs "
                "changes when the tag moves, and replicas pulled at different times run "
                "different code",
                image,
                "pin a version tag (repo/trainer:1.4.2) or a digest (repo/trainer@sha256:…)",
            )


def is_device(resource: str) -> bool:
    """Whether ``resource`` is an extended resource (a GPU or other device), not cpu/memory.

    Extended resources are fully qualified names outside the ``kubernetes.io``
    domain (``nvidia.com/gpu``, ``amd.com/gpu``, ``rdma/hca``); hugepages are not.
    """
    domain, slash, _ = resource.partition("/")
    if not slash:
        return False
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def _amounts(resources: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    value = resources.get(field)
    return value if isinstance(value, Mapping) else {}


def _equal(a: Any, b: Any) -> bool:
    try:
        return parse_quantity(a) == parse_quantity(b)
    except QuantityError:
        return bool(a == b)


def device_limits(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """GPU (device) requests must have an equal limit."""
    for path, container in containers(site.spec):
        resources = container.get("resources")
        if not isinstance(resources, Mapping):
            continue
        asked, limits = _amounts(resources, "requests"), _amounts(resources, "limits")
        for name in sorted(str(n) for n in asked if is_device(str(n))):
            where = site.at(f"{path}.resources")
            if name not in limits:
                yield Violation(
                    quoted(*split_path(where), "limits", name),
                    f"container {container.get('name')!r} requests {name} without a limit; "
                    "devices are never shared, so Kubernetes refuses the pod",
                    asked[name],
                    f"set limits.{name} to {asked[name]} (a limit alone is enough: the "
                    "request defaults to it)",
                )
            elif not _equal(asked[name], limits[name]):
                yield Violation(
                    quoted(*split_path(where), "requests", name),
                    f"container {container.get('name')!r} requests {asked[name]} {name} but "
                    f"is limited to {limits[name]}; Kubernetes refuses a device request "
                    "that differs from its limit",
                    asked[name],
                    f"make requests.{name} equal limits.{name} (or set only the limit)",
                )


def requests(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Every container asks for cpu and memory."""
    for path, container in containers(site.spec):
        if not path.startswith("spec.containers["):
            continue  # init containers run before, ephemeral ones for debugging
        resources = container.get("resources")
        resources = resources if isinstance(resources, Mapping) else {}
        # A limit without a request makes the request equal to the limit.
        given = set(_amounts(resources, "requests")) | set(_amounts(resources, "limits"))
        missing = [r for r in ("cpu", "memory") if r not in given]
        if missing:
            # A job's own pods are replicas of one computation; anything else (an
            # operator, a backend) is set up through its kind's spec.resources.
            replica = site.framework is not None or site.owner == ("v1", "Pod")
            yield Violation(
                site.at(f"{path}.resources.requests"),
                f"container {container.get('name')!r} requests no {' or '.join(missing)}: the "
                "scheduler may pack it onto a full node, and it is evicted first when memory "
                "runs short" + (" — a lost replica stalls the whole job" if replica else ""),
                missing,
                "set resources.requests.cpu and .memory to what one replica needs"
                if replica
                else "set requests for cpu and memory (for a backend or operator of the stack: "
                "its spec.resources)",
            )
