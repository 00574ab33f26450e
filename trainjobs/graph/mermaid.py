"""A stack graph as Mermaid flowchart text (renders on GitHub, in many wikis and editors)."""

from __future__ import annotations

import json
import re

from trainjobs.graph.model import StackGraph
from trainjobs.graph.style import style_of
from trainjobs.output import printable

__all__ = ["to_mermaid"]

_ENTITIES = str.maketrans(
    {
        "#": "#35;",
        "&": "#amp;",
        '"': "#quot;",
        "<": "#lt;",
        ">": "#gt;",
        "`": "#96;",
        "|": "#124;",
        "[": "#91;",
        "]": "#93;",
        "{": "#123;",
        "}": "#125;",
    }
)
"""Everything that could end a quoted label, open markup or a Markdown string, as an entity."""

_PLAIN_TITLE = re.compile(r"^[A-Za-z0-9 ._/-]*$")


def _text(*lines: str) -> str:
    """A quoted Mermaid label: lines joined by <br/>, markup as entities.

    A name from the input can never end the label, start a new statement (a line
    break, so no ``click`` or ``style`` of its own) or become HTML: control characters
    are escaped visibly, every quote, bracket and markup character is an entity.
    """
    escaped = [printable(line).translate(_ENTITIES) for line in lines]
    return '"' + "<br/>".join(escaped) + '"'


def to_mermaid(graph: StackGraph) -> str:
    """``flowchart LR`` with one subgraph per unit; an arrow points at what needs its source."""
    out = []
    if graph.title:
        title = printable(graph.title)
        # YAML front matter: a title that is not plain text is a JSON (so YAML) string.
        shown = title if _PLAIN_TITLE.match(title) else json.dumps(title)
        out += ["---", f"title: {shown}", "---"]
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
