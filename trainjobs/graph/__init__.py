"""``trainjobs graph``: a picture of a stack — its units, their objects and dependencies —
as Mermaid text, Graphviz DOT, or SVG drawn by Graphviz."""

from trainjobs.graph.dot import SOURCE_MARK, GraphvizMissing, source_digest, to_dot, to_svg
from trainjobs.graph.mermaid import to_mermaid
from trainjobs.graph.model import Cluster, Edge, Node, StackGraph, stack_graph

__all__ = [
    "SOURCE_MARK",
    "Cluster",
    "Edge",
    "GraphvizMissing",
    "Node",
    "StackGraph",
    "source_digest",
    "stack_graph",
    "to_dot",
    "to_mermaid",
    "to_svg",
]
