"""A stack graph as Mermaid flowchart text (renders on GitHub, in many wikis and editors)."""

from __future__ import annotations

from trainjobs.graph.model import StackGraph
from trainjobs.graph.style import style_of

__all__ = ["to_mermaid"]


def _text(*lines: str) -> str:
    """A quoted Mermaid label: lines joined by <br/>, quotes and markup as entities."""
    escaped = [
        line.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
        for line in lines
    ]
    return '"' + "<br/>".join(escaped) + '"'


def to_mermaid(graph: StackGraph) -> str:
    """``flowchart LR`` with one subgraph per unit; an arrow points at what needs its source."""
    out = []
    if graph.title:
        out += ["---", f"title: {graph.title}", "---"]
    out.append("flowchart LR")
    for cluster in graph.clusters:
        if cluster.compact:
            out.append(f"  {cluster.id}[{_text(cluster.title, cluster.subtitle)}]")
            continue
        out.append(f"  subgraph {cluster.id}[{_text(cluster.title, cluster.subtitle)}]")
        out += [f"    {node.id}[{_text(*node.lines)}]" for node in cluster.nodes]
        out.append("  end")
    out += [f"  {edge.source} --> {edge.target}" for edge in graph.edges]
    for cluster in graph.clusters:
        style = style_of(cluster.category)
        out.append(f"  style {cluster.id} fill:{style.fill},stroke:{style.stroke}")
    return "\n".join(out) + "\n"
