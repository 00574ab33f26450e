"""A stack graph as Graphviz DOT, and as SVG laid out by Graphviz's ``dot``.

The SVG is Graphviz's own drawing of the DOT text; trainjobs adds one comment
naming the SHA-256 of that text, so a committed picture can be checked for being
current without depending on the Graphviz version that drew it.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess

from trainjobs.errors import TrainjobsError
from trainjobs.graph.model import StackGraph
from trainjobs.graph.style import style_of
from trainjobs.output import printable

__all__ = ["SOURCE_MARK", "GraphvizMissing", "source_digest", "to_dot", "to_svg"]

SOURCE_MARK = "trainjobs graph source sha256:"
"""Prefix of the comment in every SVG that names the digest of its DOT source."""

_FONT = "Helvetica"


class GraphvizMissing(TrainjobsError):
    """Graphviz's ``dot`` is not installed, or it failed."""


def _quote(text: str) -> str:
    """A DOT string: backslashes and quotes escaped, line breaks as ``\\n``, any other
    control character from the input shown escaped (never raw in the file or a terminal)."""
    lines = [printable(line).replace("\\", "\\\\").replace('"', '\\"') for line in text.split("\n")]
    return '"' + "\\n".join(lines) + '"'


def to_dot(graph: StackGraph) -> str:
    """The DOT text: one ``cluster_`` subgraph per unit, edges between their first nodes."""
    out = [f"digraph {_quote(graph.title or 'stack')} {{"]
    out.append(
        f"  graph [rankdir=LR, compound=true, fontname={_quote(_FONT)}, fontsize=12, "
        f"nodesep=0.25, ranksep=0.6, labelloc=t, label={_quote(graph.title)}];"
    )
    out.append(
        f'  node [shape=box, style="rounded,filled", fillcolor="#ffffff", '
        f"fontname={_quote(_FONT)}, fontsize=10];"
    )
    out.append('  edge [color="#555555", arrowsize=0.7];')
    anchor: dict[str, str] = {}
    for cluster in graph.clusters:
        style = style_of(cluster.category)
        label = _quote(f"{cluster.title}\n{cluster.subtitle}")
        colours = f"fillcolor={_quote(style.fill)}, color={_quote(style.stroke)}"
        if cluster.compact:
            out.append(f"  {cluster.id} [label={label}, {colours}];")
            continue
        out.append(f"  subgraph cluster_{cluster.id} {{")
        out.append(f'    graph [style="rounded,filled", {colours}, label={label}];')
        # An empty cluster is not drawn: a unit without objects gets a note of its own.
        nodes = cluster.nodes
        if not nodes:
            out.append(f'    {cluster.id}_none [shape=plaintext, style="", label="(no objects)"];')
        anchor[cluster.id] = nodes[0].id if nodes else f"{cluster.id}_none"
        for node in nodes:
            out.append(f"    {node.id} [label={_quote(chr(10).join(node.lines))}];")
        out.append("  }")
    for edge in graph.edges:
        ends = []
        if edge.source in anchor:
            ends.append(f"ltail=cluster_{edge.source}")
        if edge.target in anchor:
            ends.append(f"lhead=cluster_{edge.target}")
        attributes = f" [{', '.join(ends)}]" if ends else ""
        source, target = anchor.get(edge.source, edge.source), anchor.get(edge.target, edge.target)
        out.append(f"  {source} -> {target}{attributes};")
    out.append("}")
    return "\n".join(out) + "\n"


def source_digest(dot: str) -> str:
    """The SHA-256 of a DOT text, as the SVG's comment names it."""
    return hashlib.sha256(dot.encode()).hexdigest()


def to_svg(graph: StackGraph) -> str:
    """The graph drawn by Graphviz (``dot -Tsvg``), marked with its source's digest."""
    dot = to_dot(graph)
    program = shutil.which("dot")
    if program is None:
        raise GraphvizMissing(
            "drawing SVG needs Graphviz's dot: install it (apt-get install graphviz, "
            "brew install graphviz), or write Mermaid with -o FILE.mmd"
        )
    result = subprocess.run(
        [program, "-Tsvg"],
        input=dot,
        capture_output=True,
        encoding="utf-8",
        check=False,
        timeout=120,
    )
    if result.returncode != 0:
        raise GraphvizMissing(f"dot failed: {result.stderr.strip()}")
    svg = result.stdout
    mark = f"<!-- {SOURCE_MARK}{source_digest(dot)} -->\n"
    at = svg.find("<svg")
    return svg[:at] + mark + svg[at:] if at >= 0 else mark + svg
