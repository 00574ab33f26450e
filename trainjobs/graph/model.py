"""A stack as a graph: one cluster per unit, its objects grouped, edges from depends_on.

A unit is what a stack declares — a job, a backend, a node pool, a queue, an
operator, a namespace. Inside a unit, objects of one kind whose names differ only
in a trailing index (``mnist-worker-0`` … ``mnist-worker-3``) are one node, so a
job of 64 workers stays readable. An edge goes from a unit to the units that need
it: the dependency is created first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trainjobs.render import RenderedJob, RenderedObject, RenderedUnit, Rendering, UnitCategory

__all__ = ["Cluster", "Edge", "Node", "StackGraph", "stack_graph"]

_INDEXED = re.compile(r"^(.*?)-(\d+)$")


@dataclass(frozen=True)
class Node:
    """Objects of one kind and name stem inside a unit.

    Attributes:
        id: unique in the graph (``u2_n0``).
        kind: the objects' kind.
        names: their names, in apply order.
    """

    id: str
    kind: str
    names: tuple[str, ...]

    @property
    def lines(self) -> tuple[str, ...]:
        """``Pod`` / ``mnist-chief-0``, or ``2 Pods`` / ``mnist-worker-0 … mnist-worker-1``."""
        if len(self.names) == 1:
            return (self.kind, self.names[0])
        return (f"{len(self.names)} {self.kind}s", f"{self.names[0]} … {self.names[-1]}")


@dataclass(frozen=True)
class Cluster:
    """One unit of the stack.

    Attributes:
        id: unique in the graph (``u2``).
        category: job, namespace, backend, nodePool, queue or operator.
        title: the unit, e.g. ``job kubeflow/mnist``.
        subtitle: its kind, and for a job the target, e.g. ``TFJob, pods target``.
        nodes: its objects, grouped; empty for a unit that creates none.
        kind: the unit's own kind (``Namespace``, ``TFJob``, ``GpuNodePool``); default
            empty.
    """

    id: str
    category: UnitCategory
    title: str
    subtitle: str
    nodes: tuple[Node, ...]
    kind: str = ""

    @property
    def compact(self) -> bool:
        """A unit whose one object is the unit itself (a Namespace, a job's custom
        resource) is drawn as one box; a unit of one other object (a static node pool's
        device plugin DaemonSet) still shows that object."""
        return (
            len(self.nodes) == 1
            and len(self.nodes[0].names) == 1
            and self.nodes[0].kind == self.kind
        )


@dataclass(frozen=True)
class Edge:
    """``source`` (a cluster id) is created before ``target``, which needs it."""

    source: str
    target: str


@dataclass(frozen=True)
class StackGraph:
    """Everything a picture of a stack shows."""

    title: str
    clusters: tuple[Cluster, ...]
    edges: tuple[Edge, ...]


def _stem(name: str) -> str:
    match = _INDEXED.match(name)
    return match.group(1) if match else name


def _nodes(cluster_id: str, objects: tuple[RenderedObject, ...]) -> tuple[Node, ...]:
    groups: dict[tuple[str, str], list[str]] = {}
    for obj in objects:
        _, kind, _, name = obj.identity
        groups.setdefault((kind, _stem(name)), []).append(name)
    return tuple(
        Node(f"{cluster_id}_n{i}", kind, tuple(names))
        for i, ((kind, _), names) in enumerate(groups.items())
    )


def _subtitle(unit: RenderedUnit) -> str:
    if isinstance(unit, RenderedJob):
        return f"{unit.kind}, {unit.target} target"
    return unit.kind


def stack_graph(rendering: Rendering, title: str = "") -> StackGraph:
    """The graph of a rendered stack, units in dependency order."""
    ids = {unit.ref: f"u{i}" for i, unit in enumerate(rendering.units)}
    clusters = tuple(
        Cluster(
            ids[unit.ref],
            unit.ref.category,
            str(unit.ref),
            _subtitle(unit),
            _nodes(ids[unit.ref], unit.objects),
            unit.kind,
        )
        for unit in rendering.units
    )
    edges = tuple(
        dict.fromkeys(
            Edge(ids[dep], ids[unit.ref])
            for unit in rendering.units
            for dep in unit.depends_on
            if dep in ids
        )
    )
    return StackGraph(title, clusters, edges)
