"""What one pod asks of a node: GPUs, CPU and memory, the way the scheduler counts them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from trainjobs.k8s.pods import containers
from trainjobs.k8s.quantity import quantity_or_zero

__all__ = ["GPU", "PodDemand", "pod_demand"]

GPU = "nvidia.com/gpu"
"""The extended resource the NVIDIA device plugin advertises."""


@dataclass(frozen=True)
class PodDemand:
    """The requests of one pod: GPUs (whole), CPU (cores) and memory (bytes)."""

    gpus: Fraction = Fraction(0)
    cpu: Fraction = Fraction(0)
    memory: Fraction = Fraction(0)

    def fits(self, free: PodDemand) -> bool:
        return self.gpus <= free.gpus and self.cpu <= free.cpu and self.memory <= free.memory

    def __add__(self, other: PodDemand) -> PodDemand:
        return PodDemand(self.gpus + other.gpus, self.cpu + other.cpu, self.memory + other.memory)

    def __sub__(self, other: PodDemand) -> PodDemand:
        return PodDemand(self.gpus - other.gpus, self.cpu - other.cpu, self.memory - other.memory)

    def times(self, count: int) -> PodDemand:
        return PodDemand(self.gpus * count, self.cpu * count, self.memory * count)


def _request(container: Mapping[str, Any], name: str) -> Fraction:
    """The request the scheduler counts: ``requests``, else ``limits`` (which then default it)."""
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    if name in requests:
        return quantity_or_zero(requests[name])
    return quantity_or_zero(limits.get(name))


def _demand(items: Iterable[Mapping[str, Any]]) -> list[PodDemand]:
    return [PodDemand(_request(c, GPU), _request(c, "cpu"), _request(c, "memory")) for c in items]


def pod_demand(template: Mapping[str, Any]) -> PodDemand:
    """What the scheduler reserves for a pod of ``template``.

    Per resource, the larger of the containers' sum and the largest init container
    (init containers run one at a time, before the others); sidecars (init containers
    with ``restartPolicy: Always``) keep running, so they count with the containers.
    """
    inits = containers(template, "initContainers")
    sidecars = [c for c in inits if c.get("restartPolicy") == "Always"]
    plain_inits = [c for c in inits if c.get("restartPolicy") != "Always"]
    total = sum(_demand([*containers(template), *sidecars]), PodDemand())
    for init in _demand(plain_inits):
        total = PodDemand(
            max(total.gpus, init.gpus), max(total.cpu, init.cpu), max(total.memory, init.memory)
        )
    return total
